"""Issue 29: ``page`` of the tail never waits for the whole-log fold.  On a cold cache (no saved surface
index) a log at or above the threshold (``SESSION_LENS_PAGE_PENDING_BYTES``; set small here, the product's
default is 64 MiB) gets its tail page at once, its row statuses pending, without reading the whole log;
``--wait`` (and ``--before``) fold as before; once the index is saved the page is as before; a log under the
threshold is folded as before."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from app.cli.main import main
from app.log.fold.surface import ScanEnd, SurfaceIndex, compaction_group, extend_index, row_surface
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.log.source.zstdframes import encode_frame
from app.log.source.zstdsource import ZstdSource
from app.tools.synth import SessionSynth, write_jsonl


@pytest.fixture
def log(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))    # (nothing cached: a first page)
    path = tmp_path / "session.v4.jsonl"
    write_jsonl(str(path), SessionSynth(seed=29, version=4, context_window=12_000), target_bytes=600_000)
    monkeypatch.setenv("SESSION_LENS_PAGE_PENDING_BYTES", str(path.stat().st_size // 2))   # (a "big" log)
    return path


def _zstd(p: Path) -> Path:
    """The same log stored as zstd: one frame per 40 rows."""
    z = p.with_name(p.name + ".zstd")
    lines = [ln for ln in p.read_bytes().split(b"\n") if ln]
    with open(z, "wb") as f:
        for at in range(0, len(lines), 40):
            f.write(encode_frame(b"".join(ln + b"\n" for ln in lines[at:at + 40])))
    return z


@pytest.fixture
def whole_reads(monkeypatch) -> list:
    """Forward reads of a log (JSONL or zstd) from its first row to its end, whoever makes them."""
    reads: list = []
    for cls in (RawJsonlSource, ZstdSource):
        def counted(self, start=None, *a, _fwd=cls.forward, **kw):
            first = start is None or start <= self.header_end
            seen = 0
            for seg in _fwd(self, start, *a, **kw):
                seen = max(seen, seg.end)
                yield seg
            if first and seen >= self.size:
                reads.append(self.path)
        monkeypatch.setattr(cls, "forward", counted)
    return reads


def _page(capsys, *argv) -> dict:
    capsys.readouterr()
    assert main(["page", *map(str, argv), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _without_statuses(obj: dict) -> dict:
    out = dict(obj, compactions="-", surfaceStatus="-")
    out["events"] = [{k: v for k, v in e.items() if k not in ("surface", "surfaceDetail")} for e in obj["events"]]
    return out


def _want(path: Path, obj: dict) -> tuple[list, list]:
    """Each event entry's status and the page's compaction groups from a fresh fold of the whole log."""
    r = LogReader.open(str(path))
    idx = extend_index(r, SurfaceIndex(r.version), None, ScanEnd())
    page = r.tail_page(50) if obj["tail"] else None
    assert page is not None
    by_seq = {e.seq: e for e in page.logical_items() if hasattr(e, "seq")}
    statuses = []
    for e in obj["events"]:
        st = row_surface(idx, by_seq[e["event"]["seq"]])
        statuses.append((st.pop("surface"), st or None))
    seqs = [e["event"]["seq"] for e in obj["events"]]
    groups = [compaction_group(idx, rec["compactionId"] if rec["compactionId"] is not None else rec["startSeq"])
              for rec in idx.compactions
              if rec["startSeq"] <= max(seqs) and (rec["endSeq"] is None or rec["endSeq"] >= min(seqs))]
    return statuses, json.loads(json.dumps(groups))


def _statuses(obj: dict) -> list:
    return [(e["surface"], e.get("surfaceDetail")) for e in obj["events"]]


@pytest.mark.parametrize("kind", ["jsonl", "zstd"])
def test_a_cold_tail_page_is_pending_and_reads_no_whole_log(log, whole_reads, capsys, kind):
    path = log if kind == "jsonl" else _zstd(log)
    cold = _page(capsys, path)
    assert whole_reads == [], f"the cold tail page read the whole log {len(whole_reads)} times"
    assert cold["surfaceStatus"] == "pending" and cold["compactions"] is None
    assert cold["events"] and all(e["surface"] == "pending" and "surfaceDetail" not in e for e in cold["events"])
    waited = _page(capsys, path, "--wait")
    assert len(whole_reads) == 1 and waited["surfaceStatus"] == "ready"
    assert _without_statuses(cold) == _without_statuses(waited)       # the same rows, only the statuses pending
    statuses, groups = _want(log, waited)
    assert _statuses(waited) == statuses and waited["compactions"] == groups
    assert any(s != "current" for s, _ in statuses) or groups, "the page shows statuses that need the fold"


def test_the_text_output_says_the_statuses_are_pending(log, capsys):
    capsys.readouterr()
    assert main(["page", str(log)]) == 0
    text = capsys.readouterr().out.splitlines()
    hint = (f"row statuses pending: the surface index of this log is not built yet; "
            f"run `session-lens index {shlex.quote(str(log))} --all` or pass --wait")
    assert text[-2] == hint
    assert main(["page", str(log), "--wait"]) == 0
    assert hint not in capsys.readouterr().out


def test_once_the_index_is_saved_the_page_is_as_before(log, whole_reads, capsys):
    capsys.readouterr()
    assert main(["index", str(log), "--all", "--quiet"]) == 0
    whole_reads.clear()
    warm = _page(capsys, log)
    assert whole_reads == []
    assert warm["surfaceStatus"] == "ready" and warm == _page(capsys, log, "--wait")
    statuses, groups = _want(log, warm)
    assert _statuses(warm) == statuses and warm["compactions"] == groups
    capsys.readouterr()
    assert main(["page", str(log)]) == 0
    assert "row statuses pending" not in capsys.readouterr().out


def test_a_log_under_the_threshold_and_an_older_page_fold_as_before(log, whole_reads, capsys, monkeypatch):
    mid = _page(capsys, log, "--wait", "--limit", "5")["baseSeq"]
    (log.parent / "cache").rename(log.parent / "cache.old")          # (cold again)
    whole_reads.clear()
    older = _page(capsys, log, "--before", mid)                      # an explicit older cursor: waits
    assert older["surfaceStatus"] == "ready" and whole_reads
    assert all(e["surface"] != "pending" for e in older["events"])
    (log.parent / "cache").rename(log.parent / "cache.older")
    monkeypatch.delenv("SESSION_LENS_PAGE_PENDING_BYTES")               # the default: 64 MiB, over this log
    small = _page(capsys, log)
    assert small["surfaceStatus"] == "ready" and _statuses(small) == _want(log, small)[0]
