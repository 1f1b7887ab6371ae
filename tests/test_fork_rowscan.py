"""The fork's legacy-row candidates by the index's row scanner (``forking._legacy_by_heads``).

Where set-up built the C row scanner, one pass of it per flagged segment names the rows that may be
in a legacy shape (the regex over the row heads runs only where the scanner is interpreted or refuses
the buffer).  The rows it lists must be exactly those of the previous regex scan (kept in
``scanners_util.old_legacy_by_heads``) on the shared fixtures, on the segments of a log with legacy
rows (the bench's shape, and the bench's own 1 GB log when it is there), on hostile mutants and under
hypothesis edits, whichever path runs: the C scanner, the same source interpreted, the regex.
A row nested deeper than the probe's decoder goes is a maybe (the codec decides), and the rows after
a fork's boundary in its segment are never looked at.
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scanners_util import SCANNERS, old_legacy_by_heads
from test_list_fork_speed import _legacy_log
from test_rowscan import _mutants

from app.log.index import fastindex
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.store import forking
from app.store.indexcache import cached_index
from app.tools.synth import SessionSynth, write_jsonl

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "fixtures"
BENCH_LEGACY = REPO / "bench" / "data" / "session-1GB-legacy.jsonl"
PATHS = [p for p in ("c", "interpreted", "regex") if p in SCANNERS or p in ("interpreted", "regex")]


@contextlib.contextmanager
def path(name: str):
    """``forking._legacy_by_heads`` runs the C row scanner, the same source interpreted (as if it were the C
    one: the scanner's path), or the regex over the heads (an interpreted scanner's path)."""
    old = fastindex.SCANNER, fastindex.scan_rows
    if name == "regex":
        fastindex.SCANNER = "python"
    else:
        fastindex.SCANNER = "c"
        fastindex.scan_rows = SCANNERS["python" if name == "interpreted" else name]
    try:
        yield
    finally:
        fastindex.SCANNER, fastindex.scan_rows = old


def check(data: bytes, upto: int):
    """The candidates of ``data[:upto]`` by every path, asserted equal to the previous scan's."""
    want = old_legacy_by_heads(data, upto)
    for name in PATHS:
        with path(name):
            assert forking._legacy_by_heads(data, upto) == want, (name, upto)
    return want


def bounds(data: bytes, most: int = 40) -> list[int]:
    """Up to ``most`` row ends of ``data`` (offsets just after a newline), the last one included."""
    ends = [i + 1 for i in range(len(data)) if data[i] == 10] if len(data) < 200_000 else \
        [m for m in _newlines(data)]
    if len(ends) > most:
        step = len(ends) / most
        ends = sorted({ends[int(k * step)] for k in range(most)} | {ends[-1]})
    return ends


def _newlines(data: bytes):
    i = data.find(b"\n")
    while i >= 0:
        yield i + 1
        i = data.find(b"\n", i + 1)


# --------------------------------------------------------------------------- equal to the previous scan

def test_shared_fixtures_list_the_rows_the_regex_scan_lists():
    files = sorted(SHARED.rglob("*.jsonl"))
    assert len(files) >= 100
    found = taken = 0
    for f in files:
        whole = f.read_bytes()
        check(whole, len(whole))                       # (the header row has no seq: the regex path, None)
        data = whole[whole.find(b"\n") + 1:]           # the rows, as a segment holds them
        for upto in bounds(data) + [len(data), len(data) - 1, 0]:
            got = check(data, upto)
            if got is not None:
                taken += 1
                found += len(got)
    assert taken >= 1000 and found >= 50           # (most fixtures are in the writer's shape; some rows probe)


def test_the_segments_of_a_log_with_legacy_rows(tmp_path):
    """Every segment the source cuts (as the fork reads a flagged one), whole and cut at row ends (the
    fork's boundary segment: the rows after the cut are in ``data`` but not looked at)."""
    p, n = _legacy_log(tmp_path, size=5 << 20)
    src = RawJsonlSource(str(p))
    whole = 0
    for seg in src.forward():
        got = check(seg.data, len(seg.data))
        assert got is not None
        whole += len(got)
        for upto in bounds(seg.data, 12):
            assert check(seg.data, upto) is not None
    assert whole >= n


def test_the_compiled_path_names_the_rows_without_the_regex(tmp_path, monkeypatch):
    """A segment the scanner takes whole is never handed to the regex; one it refuses (a seq gap) is."""
    p, n = _legacy_log(tmp_path, size=2 << 20)
    seg = next(iter(RawJsonlSource(str(p)).forward())).data
    calls = []
    real = forking._legacy_by_regex
    monkeypatch.setattr(forking, "_legacy_by_regex", lambda d, u: calls.append(u) or real(d, u))
    for name in PATHS[:-1]:
        with path(name):
            got = forking._legacy_by_heads(seg, len(seg))
    assert got and got == old_legacy_by_heads(seg, len(seg)) and calls == []
    rows = seg.split(b"\n")
    gap = b"\n".join(rows[:10] + rows[11:])               # (a seq gap: the scanner refuses the buffer)
    with path(PATHS[0]):
        assert forking._legacy_by_heads(gap, len(gap)) == old_legacy_by_heads(gap, len(gap))
    assert calls == [len(gap)]


@pytest.mark.skipif(not BENCH_LEGACY.exists(), reason="the bench's legacy log is not generated here")
def test_the_flagged_segments_of_the_bench_legacy_log():
    r = LogReader.open(str(BENCH_LEGACY))
    idx = fastindex.fast_index(r)
    assert idx is not None and idx.legacy is not None
    flagged = [i for i in range(len(idx)) if idx.legacy[i]]
    assert len(flagged) >= 100
    fd = os.open(BENCH_LEGACY, os.O_RDONLY)
    found = 0
    try:
        for i in flagged:
            data = os.pread(fd, idx.seg_end[i] - idx.seg_pos[i], idx.seg_pos[i])
            got = check(data, len(data))
            assert got
            found += len(got)
    finally:
        os.close(fd)
    assert found >= len(flagged)


@pytest.mark.parametrize("version", [0, 4])
def test_hostile_mutants(version):
    listed = set()
    for what, data in _mutants(version).items():
        for upto in bounds(data, 8) + [len(data)]:
            got = check(data, upto)
            if got and upto == len(data):
                listed.add(what)
    assert any(w.startswith("legacy edit of turn/end") for w in listed) and "deep nesting" in listed or version == 4


_BASE: list[bytes] = []


def _base_rows() -> list[bytes]:
    if not _BASE:
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "base.jsonl")
            write_jsonl(p, SessionSynth(seed=5), target_bytes=120_000)
            with open(p, "rb") as f:
                _BASE.extend(f.read().split(b"\n")[1:-1])
    return _BASE


def _edit(row: bytes, kind: int) -> list[bytes]:
    """One hostile or legacy-shape edit of a row (a list: an edit may drop the row or add one)."""
    try:
        obj = json.loads(row)
    except (ValueError, RecursionError):
        obj = None
    data = obj.get("data") if isinstance(obj, dict) else None
    if kind == 0 and isinstance(data, dict) and obj.get("type") == "turn/end":
        data["reason"] = "aborted"
    elif kind == 1 and isinstance(data, dict):
        data.pop("message", None)
    elif kind == 2 and isinstance(data, dict):
        data["trigger"] = "user"
    elif kind == 3 and isinstance(data, dict):
        data["reason"] = {"kind": "error-" + str(obj.get("type"))}
    elif kind == 4 and isinstance(obj, dict):
        obj = {"seq": obj.get("seq"), **obj}                  # another key order
    elif kind == 5:
        return []                                              # a seq gap
    elif kind == 6:
        return [row[:-1] + b',"deep":' + b"[" * 3000 + b"]" * 3000 + b"}"]
    elif kind == 7:
        return [row[:-1] + b",}"]                              # not JSON after a good head
    elif kind == 8:
        return [row, b""]                                      # a blank line
    elif kind == 9:
        return [row[:40] + b"\x00" + row[40:]]
    elif kind == 10:
        return [row + b"\r"]
    elif kind == 11:
        return [row.replace(b'"type":"', b'"type":"user/message\\"', 1)]
    elif kind == 12 and isinstance(data, dict):
        data["message"] = {"role": "x"}
        data.pop("id", None)
    else:
        return [row]
    return [json.dumps(obj, separators=(",", ":")).encode()]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edits=st.lists(st.tuples(st.integers(0, 10 ** 6), st.integers(0, 13)), max_size=8),
       cut=st.integers(0, 10 ** 6))
def test_hypothesis_edits_list_what_the_regex_scan_lists(edits, cut):
    rows = list(_base_rows())
    for at, kind in edits:
        i = at % len(rows)
        rows[i:i + 1] = _edit(rows[i], kind)
    data = b"".join(r + b"\n" for r in rows)
    ends = list(_newlines(data))
    check(data, len(data))
    if ends:
        check(data, ends[cut % len(ends)])


# --------------------------------------------------------------------------- a row nested too deep, the boundary

def _deep(rows: list[bytes], k: int) -> None:
    rows[k] = rows[k][:-1] + b',"deep":' + b"[" * 3000 + b"]" * 3000 + b"}"


def test_a_row_nested_too_deep_to_probe_is_left_to_the_codec(tmp_path):
    """A user message nested 3,000 deep: the probe's decoder gives up (``RecursionError``), so the row is a
    maybe on every path, and the codec decides (here: not legacy, nothing converted)."""
    p, _n = _legacy_log(tmp_path, size=1 << 20)
    rows = p.read_bytes().split(b"\n")[1:-1]
    k = next(i for i, r in enumerate(rows) if r.startswith(b'{"type":"user/message"') and i > 50)
    _deep(rows, k)
    data = b"".join(r + b"\n" for r in rows)
    at = sum(len(r) + 1 for r in rows[:k])
    for name in PATHS:
        with path(name):
            got = forking._legacy_by_heads(data, len(data))
            assert got is not None and (at, at + len(rows[k])) in got, name
    r = LogReader.open(str(p))
    conv = forking._converted_rows(r, data, len(data))
    assert at not in [a for a, _b, _row in conv]


@pytest.mark.parametrize("after", ["legacy row", "deep row"])
def test_a_fork_inside_a_flagged_segment_reads_nothing_after_its_boundary(tmp_path, after):
    """A fork whose boundary is inside a flagged segment, with a legacy-shape row (or a row nested too
    deep to probe) after the boundary in that segment: the child holds exactly the seed, every row
    before the boundary as stored or converted, nothing after it."""
    src = tmp_path / "a.jsonl"
    write_jsonl(str(src), SessionSynth(seed=3), target_bytes=3 << 20)
    lines = src.read_bytes().split(b"\n")
    mid = len(lines) // 2
    anchor_row = next(i for i in range(mid, len(lines)) if lines[i].startswith(b'{"type":"assistant/message"'))
    before = next(i for i in range(anchor_row - 1, 0, -1) if lines[i].startswith(b'{"type":"turn/end"'))
    ends = [i for i in range(anchor_row + 1, len(lines)) if lines[i].startswith(b'{"type":"turn/end"')]
    later = ends[1]                                            # (the seed runs through the anchor's turn)
    for i in (before, later):                                  # legacy-shape rows on both sides of the boundary
        obj = json.loads(lines[i])
        obj["data"]["reason"] = "aborted"
        lines[i] = json.dumps(obj, separators=(",", ":")).encode()
    if after == "deep row":
        _deep(lines, later)
    p = tmp_path / "store" / "s.jsonl"
    p.parent.mkdir()
    p.write_bytes(b"\n".join(lines))
    anchor = json.loads(lines[anchor_row])["seq"]
    r = LogReader.open(str(p))
    cached_index(r)
    seg = next(i for i in range(len(r.index)) if r.index.first_seq[i] <= anchor <= r.index.last_seq[i])
    assert r.index.legacy[seg] and r.index.seg_end[seg] > sum(len(x) + 1 for x in lines[:later])
    res = forking.fork(r, anchor, out_store=str(tmp_path / "out"), child_id="cut")
    child = LogReader.open(res["child"])
    evs = list(child.events())
    assert [e.seq for e in evs] == list(range(len(evs))) and len(evs) >= res["seedLength"]   # (seed, then the tail)
    assert not any(e.legacy for e in evs)
    seed = res["seedLength"]
    parent = [e for e in LogReader.open(str(p)).events() if e.seq < seed]
    assert [(e.type, e.seq) for e in evs[:seed]] == [(e.type, e.seq) for e in parent]
    assert res["boundary"] < int(lines[later].split(b'"seq":', 1)[1].split(b",", 1)[0])    # (after the boundary)
    body = Path(res["child"]).read_bytes()
    assert lines[later] not in body and b'"deep":[[' not in body
