"""bench/bigfile.py: a log extended by re-sequenced copies of a synth base's body is a valid log."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from app.log.query.analysis import inspect
from app.log.index.reader import LogReader

_spec = importlib.util.spec_from_file_location("bigfile", Path(__file__).resolve().parents[1] / "bench" / "bigfile.py")
assert _spec is not None and _spec.loader is not None
bigfile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bigfile)


@pytest.mark.parametrize("version", [0, 4])
def test_extended_log_is_valid(tmp_path, version):
    base = tmp_path / "base.jsonl"
    meta = bigfile.make_base(base, 5 << 20, version)
    out = tmp_path / "big.jsonl"
    st = bigfile.extend(base, out, 14 << 20)
    assert st["copies"] >= 2 and out.stat().st_size >= 14 << 20
    raw = out.read_bytes()
    assert raw.startswith(base.read_bytes())
    assert raw.endswith(b"\n") and b'"type":"turn/end"' in raw[raw.rstrip(b"\n").rfind(b"\n"):]

    base_info = inspect(LogReader.open(str(base)))
    info = inspect(LogReader.open(str(out)))
    assert base_info["problems"] == [] and info["problems"] == []
    assert info["events"] == info["lastSeq"] + 1 > 2 * base_info["events"] - meta["start"]
    assert info["turns"] > base_info["turns"] + meta["endTurn"] - meta["startTurn"]
    assert not info["openTail"] and info["tornRows"] == 0
    assert LogReader.open(str(out)).build_index().events == info["events"]

    # the first copy starts where the base ends: the seq after its last, a later time, the next turn
    first = json.loads(raw[len(base.read_bytes()):].split(b"\n", 1)[0])
    assert first["seq"] == meta["end"] and first["time"] == meta["endTime"]
    turns = [int(t) for t in re.findall(rb'"type":"turn/start","seq":\d+,"time":\d+,"data":\{"turn":(\d+)', raw)]
    assert turns == list(range(1, len(turns) + 1))
    # ids stay unique: tool calls and user messages
    calls = re.findall(rb'"type":"tool/call","seq":\d+,"time":\d+,"data":\{[^\n]*?"callId":"([^"]+)"', raw)
    assert len(calls) > 100 and len(set(calls)) == len(calls)
    msgs = re.findall(rb'"type":"user/message"[^\n]*"role":"user","id":"([^"]+)"', raw)
    assert len(msgs) > 10 and len(set(msgs)) == len(msgs)


def test_messages_memory_does_not_grow_with_the_log(tmp_path):
    """v4 ``messages`` (the whole surface fold) keeps only the surface: four times the log, not four
    times the memory (before: every surface event ever folded was kept, 515 MB for a 100 MB log)."""
    import tracemalloc

    from app.log.query.analysis import messages
    base = tmp_path / "base.jsonl"
    bigfile.make_base(base, 5 << 20, 4)
    big = tmp_path / "big.jsonl"
    bigfile.extend(base, big, 20 << 20)
    peaks = {}
    for p in (base, big):
        tracemalloc.start()
        got = messages(LogReader.open(str(p)))
        peaks[p.name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert got and got[0]["role"] == "system"
    assert big.stat().st_size > 4 * base.stat().st_size
    assert peaks["big.jsonl"] < 1.5 * peaks["base.jsonl"], peaks


def _page_peaks(path: Path, capsys, monkeypatch) -> tuple[int, int]:
    """Traced peaks of ``page PATH --before MIDDLE --json`` in this process, its index and surface index
    saved (a first call builds and saves them, a second one warms the imports; the third is measured):
    the whole command's, and from the page's rows read on (``page_json``: the surface labels, attempts,
    JSON; the row decode before it peaks the same at any size and would hide what the log's length adds)."""
    import tracemalloc

    from app.cli import main as cli
    from app.store.indexcache import cached_index
    events = cached_index(LogReader.open(str(path)))[0].events
    argv = ["page", str(path), "--before", str(events // 2), "--json"]
    page_json = cli.page_json
    labels = []

    def measured(*a, **k):
        tracemalloc.reset_peak()
        try:
            return page_json(*a, **k)
        finally:
            labels.append(tracemalloc.get_traced_memory()[1])
    monkeypatch.setattr(cli, "page_json", measured)
    capsys.readouterr()
    outs = []
    for i in range(3):
        if i == 2:
            labels.clear()
            tracemalloc.start()
        assert cli.main(argv) == 0
        outs.append(capsys.readouterr().out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert outs[0] == outs[1] == outs[2] and json.loads(outs[2])["events"]
    return peak, labels[-1]


@pytest.mark.slow
def test_page_memory_does_not_grow_with_the_log(tmp_path, monkeypatch, capsys):
    """``page --before`` the middle seq with the index saved holds the page, not the log's replacement
    history: the same peak for a log twelve times longer (before: the saved surface index was read into
    dicts and lists of Python ints, ~150 bytes per shadowed seq, 242 MB for 4 GB of v4)."""
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SESSION_LENS_INDEX_CACHE", raising=False)
    base = tmp_path / "base.jsonl"
    bigfile.make_base(base, 5 << 20, 4)
    big = tmp_path / "x12.jsonl"
    bigfile.extend(base, big, 60 << 20)
    small, large = _page_peaks(base, capsys, monkeypatch), _page_peaks(big, capsys, monkeypatch)
    assert large[0] < 1.3 * small[0], (small, large)          # (before: 6.6 -> 9.3 MB)
    assert large[1] < 1.3 * small[1], (small, large)          # (before: 2.7 -> 5.7 MB)
