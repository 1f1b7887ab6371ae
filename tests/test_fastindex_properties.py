"""The byte-level index equals the exact scan on generated logs with hostile edits (hypothesis).

Logs come from the session generator (v0 with packed chunk rows, v4 with one event per row);
hypothesis picks edits that a byte-level scan must not paper over: a dropped row (gap), a
duplicated row, two rows swapped, a seq rewritten, seqs shifted from a row on, a blank line, a
row with its keys in another order, packed rows merged, and a torn last row; and a block size
small enough that rows straddle blocks (and some are longer than a block).  Both ways of
feeding the builder (the source's segments, and the scan's own reads of a raw file) must
give the exact scan's index, problems and (v0) legacy flags, with either row scanner (C, interpreted).
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scanners_util import NAMES, SCANNERS, use

from app.log.index import fastindex

from app.log.source import sources
from app.log.index.fastindex import IndexBuilder, scan
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.tools.synth import SessionSynth, write_jsonl

@pytest.fixture(autouse=True, params=NAMES)
def scanner(request):
    """Every test here runs with the C row scanner (where set-up built it) and with its source interpreted."""
    if request.param not in SCANNERS:
        pytest.skip("set-up did not compile the row scanner here")
    with use(request.param):
        yield request.param


ARRAYS = ("seg_pos", "seg_end", "first_seq", "last_seq", "line0", "rows", "mark_seq", "mark_code")


@functools.cache
def _rows(version: int, seed: int) -> tuple[bytes, tuple[bytes, ...]]:
    """(header line, stored rows) of a generated ~60 KB log."""
    import os
    import tempfile
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        write_jsonl(path, SessionSynth(seed=seed, version=version), target_bytes=60_000)
        with open(path, "rb") as f:
            head, *rest = f.read().split(b"\n")
    finally:
        os.unlink(path)
    return head + b"\n", tuple(r for r in rest if r)


def _reorder(row: bytes) -> bytes:
    obj = json.loads(row)
    key = "seq0" if "seq0" in obj else "seq"
    return json.dumps({key: obj.pop(key), **obj}, separators=(",", ":")).encode()


def _merge_packed(rows: list, i: int) -> None:
    """Merge a packed row with the next one of the same kind (a packed row with more members,
    so the following seqs no longer follow)."""
    for j in range(i, len(rows) - 1):
        a, b = rows[j], rows[j + 1]
        if a.startswith(b'{"type":"text-chunks"') and b.startswith(b'{"type":"text-chunks"'):
            x, y = json.loads(a), json.loads(b)
            x["data"]["dt"] += [0] + y["data"]["dt"]
            x["data"]["texts"] += y["data"]["texts"]
            rows[j:j + 2] = [json.dumps(x, separators=(",", ":")).encode()]
            return


EDITS = ("none", "gap", "dup", "swap", "wrong-seq", "shift", "blank", "reorder", "merge-packed", "pack-dt-lies",
         "legacy")


def _apply(rows: list, edit: str, i: int, k: int) -> list:
    rows = list(rows)
    i %= len(rows) - 1
    if edit == "gap":
        del rows[i]
    elif edit == "dup":
        rows.insert(i, rows[i])
    elif edit == "swap":
        rows[i], rows[i + 1] = rows[i + 1], rows[i]
    elif edit in ("wrong-seq", "shift"):
        for j in range(i, len(rows) if edit == "shift" else i + 1):
            if not rows[j].strip():                # a blank line from an earlier edit has no seq
                continue
            obj = json.loads(rows[j])
            key = "seq0" if "seq0" in obj else "seq"
            obj[key] += k
            rows[j] = json.dumps(obj, separators=(",", ":")).encode()
    elif edit == "blank":
        rows.insert(i, b"")
    elif edit == "reorder":
        if rows[i].strip():                        # (a blank line from an earlier edit has no keys to reorder)
            rows[i] = _reorder(rows[i])
    elif edit == "merge-packed":
        _merge_packed(rows, i)
    elif edit == "legacy":                         # a row in a legacy shape (v0/v1), or one that looks near it
        kind = (b"user/message", b"turn/start", b"turn/end", b"turn/end", b"turn/end")[k - 1]
        for j in list(range(i, len(rows))) + list(range(i)):
            if rows[j].startswith(b'{"type":"' + kind + b'"'):
                obj = json.loads(rows[j])
                if k == 1:
                    obj["data"].pop("id", None)               # a user message without its id
                elif k == 2:
                    obj["data"]["trigger"] = "user"             # a turn start with a trigger
                elif k == 3:
                    obj["data"]["reason"] = {"kind": "aborted"}  # an abort without its own reason
                elif k == 4:
                    obj["data"]["reason"] = "completed"         # a reason that is a string
                else:
                    obj["data"]["reason"] = {"kind": "max-steps", "note": "x"}   # not legacy, another shape
                rows[j] = json.dumps(obj, separators=(",", ":")).encode()
                break
    elif edit == "pack-dt-lies":                   # a packed row's dt one member short or long
        for j in range(i, len(rows)):
            if rows[j].startswith(b'{"type":"text-chunks"'):
                obj = json.loads(rows[j])
                dt = obj["data"]["dt"]
                obj["data"]["dt"] = dt[:-1] if dt and k % 2 else dt + [1]
                rows[j] = json.dumps(obj, separators=(",", ":")).encode()
                break
    return rows


def _log(tmp_path, version, seed, edits, torn, extra=None) -> str:
    """A generated log with ``edits`` applied (``extra``: (index, row) inserted first) and ``torn`` bytes of
    a torn last row."""
    head, rows = _rows(version, seed)
    if extra is not None:
        rows = rows[:extra[0]] + (extra[1],) + rows[extra[0]:]
    out = list(rows)
    for edit, i, k in edits:
        out = _apply(out, edit, i, k)
    body = b"".join(r + b"\n" for r in out)
    if torn:                                       # a torn last row: part of one more row, no newline
        body += rows[torn % len(rows)][:torn]
    p = tmp_path / f"s-{version}-{seed}.jsonl"
    p.write_bytes(head + body)
    return str(p)


def _same(a, b) -> bool:
    return all(list(getattr(a, n)) == list(getattr(b, n)) for n in ARRAYS) and \
        (a.monotonic, a.events, a.last, a.contiguous_through) == (b.monotonic, b.events, b.last, b.contiguous_through)


@settings(max_examples=int(os.environ.get("FASTINDEX_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from([0, 4]), seed=st.integers(0, 3), edits=st.lists(
       st.tuples(st.sampled_from(EDITS), st.integers(0, 10_000), st.integers(1, 5)), max_size=3),
       torn=st.integers(0, 40), block=st.sampled_from([700, 2048, 8192, 1 << 20]))
def test_byte_level_index_equals_the_exact_scan_under_edits(tmp_path, version, seed, edits, torn, block):
    r = LogReader(RawJsonlSource(_log(tmp_path, version, seed, edits, torn), block=block))
    pa: list = []
    exact = r.build_index_exact(problems=pa)
    probe: list = []
    for seg in r.source.forward():
        r.scan_segment_rows(seg, [], probe)
    legacy = version < 2
    fed = [scan(r, IndexBuilder(problems=[], legacy=[] if legacy else None), r.source.forward()),
           scan(r, IndexBuilder(problems=[], legacy=[] if legacy else None))]
    for b in fed:
        assert _same(exact, b.idx)
        assert [str(x) for x in pa] == [str(x) for x in b.problems]
        if legacy:
            assert list(b.idx.legacy) == [bool(x) for x in probe]
    # both feeds route every segment alike (blank lines included: a segment's route depends on its own bytes)
    assert fed[0].fast_segments == fed[1].fast_segments
    if not edits and not torn:
        assert fed[1].exact_segments == 0          # a clean log is read at byte level throughout
    if any(e in ("gap", "dup", "swap", "wrong-seq", "shift", "merge-packed", "pack-dt-lies") for e, _, _ in edits) \
            and fed[1].exact_segments == 0:
        assert exact.contiguous_through == exact.last   # (an edit that left the seqs contiguous)


@settings(max_examples=int(os.environ.get("FASTINDEX_EXAMPLES", "60")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(version=st.sampled_from([0, 4]), seed=st.integers(0, 3), edits=st.lists(
       st.tuples(st.sampled_from(EDITS + ("long-row",)), st.integers(0, 10_000), st.integers(1, 5)), max_size=3),
       torn=st.integers(0, 40), block=st.sampled_from([700, 2048, 8192]),
       cuts=st.lists(st.integers(1, 120), min_size=1, max_size=4))
def test_ranges_scanned_by_workers_stitch_to_the_one_pass_index(tmp_path, monkeypatch, version, seed, edits, torn,
                                                                 block, cuts):
    """A raw file cut into ranges at any points of the read grid, the ranges after the first scanned in
    forked workers and stitched, gives exactly the one-pass index, problems, legacy flags and segments
    (also when a row over the row limit shifts the read grid, or an edit breaks the seqs in a range)."""
    monkeypatch.setattr(fastindex, "MAX_ROW_BYTES", 3000)     # (a "long-row" edit is over it)
    monkeypatch.setattr(sources, "MAX_ROW_BYTES", 3000)
    long = [e for e in edits if e[0] == "long-row"]
    edits = [e for e in edits if e[0] != "long-row"]
    big = (long[0][1] % 50, b'{"type":"custom/big","seq":1,"data":"' + b"x" * (3000 * long[0][2]) + b'"}') if long else None
    p = _log(tmp_path, version, seed, edits, torn, big)
    legacy = version < 2
    r = LogReader(RawJsonlSource(p, block=block))
    src = r.source
    one = IndexBuilder(problems=[], legacy=[] if legacy else None)
    one_fed = list(fastindex._feed_cuts(r, one, src, fastindex._At(src.header_end, src.header_end, 2), None))
    grid = sorted({src.header_end + k * block for k in cuts if src.header_end + k * block < src.size})
    if not grid:
        return
    two = IndexBuilder(problems=[], legacy=[] if legacy else None)
    two_fed = list(fastindex._parallel_feed(r, two, src, fastindex._At(src.header_end, src.header_end, 2), grid))
    assert two_fed == one_fed
    assert _same(one.idx, two.idx)
    assert [str(x) for x in one.problems] == [str(x) for x in two.problems]
    assert one.legacy == two.legacy
    assert (one.fast_segments, one.exact_segments) == (two.fast_segments, two.exact_segments)
    # and the one pass is the exact scan's index
    exact = r.build_index_exact(problems=[])
    assert _same(exact, one.idx)


def test_a_big_file_is_scanned_by_workers_and_equals_the_exact_scan(tmp_path, monkeypatch, request):
    """scan() itself cuts a file over PARALLEL_MIN into ranges for the workers (v0 and v4 generated logs).

    scan() forks only from a process with one thread. A pytest-xdist worker runs execnet's threads, so there
    the test runs itself again in a fresh single-threaded pytest (the same assertions, in that child)."""
    if threading.active_count() > 1:
        repo = Path(__file__).resolve().parents[1]
        child = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider",
                                request.node.nodeid], cwd=repo, capture_output=True, text=True, timeout=600)
        assert child.returncode == 0, child.stdout[-4000:] + child.stderr[-2000:]
        assert " passed" in child.stdout
        return
    monkeypatch.setattr(fastindex, "PARALLEL_MIN", 0)
    monkeypatch.setenv("SESSION_LENS_INDEX_WORKERS", "3")
    assert fastindex.index_workers() == 3
    calls = []
    real = fastindex._parallel_feed

    def spy(*a, **k):
        calls.append(a[-1])
        return real(*a, **k)
    monkeypatch.setattr(fastindex, "_parallel_feed", spy)
    for version in (0, 4):
        p = tmp_path / f"big-{version}.jsonl"
        write_jsonl(str(p), SessionSynth(seed=7, version=version), target_bytes=400_000)
        r = LogReader(RawJsonlSource(str(p), block=8192))
        calls.clear()
        b = scan(r, IndexBuilder(problems=[], legacy=[] if version < 2 else None))
        assert len(calls) == 1 and len(calls[0]) == 2          # two grid points: three ranges
        assert b.exact_segments == 0 and b.fast_segments > 40
        assert _same(r.build_index_exact(problems=[]), b.idx)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_legacy_flags_of_rows_near_a_legacy_shape(tmp_path, k):
    """Each legacy-shape edit (user message without id, turn start with a trigger, abort without a reason,
    string reason) flags its segment as the exact probe does; a turn end in another, non-legacy shape does
    not; both feeds agree (v0, every seed, small blocks so that each edit lands in its own segment)."""
    for seed in range(4):
        for i in (0, 40, 90):
            r = LogReader(RawJsonlSource(_log(tmp_path, 0, seed, [("legacy", i, k)], 0), block=2048))
            probe: list = []
            for seg in r.source.forward():
                r.scan_segment_rows(seg, [], probe)
            for b in (scan(r, IndexBuilder(problems=[], legacy=[]), r.source.forward()),
                      scan(r, IndexBuilder(problems=[], legacy=[]), workers=1)):
                assert list(b.idx.legacy) == [bool(x) for x in probe]
                assert b.exact_segments == 0
            assert any(probe) == (k != 5)
