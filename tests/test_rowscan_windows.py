"""The row scanner reads a buffer a window at a time (app/log/index/rowscan.py: ``WINDOW`` bytes decoded as
Latin-1, then the next window from the first row that ran past it).

The other rowscan tests use buffers shorter than one window; here the buffers are several windows long
and the rows that matter sit on window boundaries: a row longer than a window and short rows after it
(no byte of an earlier window may stand in for a later one), a NUL in any window and in a row that
crosses into the next one, legacy-shape rows whose checks look at the window's text (their offsets are
the buffer's, not the window's), and ranges that start and stop inside a window.  Every scanner must
give the previous bulk scan's block, and the rows listed to probe must be exactly the ones whose shape
is not the not-legacy pattern (``fastindex.NOT_LEGACY``).
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scanners_util import INTERPRETED, SCANNERS, apply_edit, bulk_block

from app.log.index import fastindex
from app.log.index.fastindex import LEGACY_TYPE_BYTES, NOT_LEGACY, SCAN_KINDS, SCAN_TYPES
from app.log.format.limits import MAX_PACKED_MEMBERS
from app.tools.synth import SessionSynth, write_jsonl

WINDOW = INTERPRETED.WINDOW
_HEAD = re.compile(rb'\{"type":"([^"\\\n]*)","seq0?":(0|[1-9][0-9]*)')


def _body(version: int, size: int) -> list[bytes]:
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        write_jsonl(path, SessionSynth(seed=7, version=version), target_bytes=size)
        data = Path(path).read_bytes()
    finally:
        os.unlink(path)
    return data[data.index(b"\n") + 1:].split(b"\n")[:-1]


ROWS0 = _body(0, 5 * WINDOW)


def _join(rows: list[bytes]) -> bytes:
    return b"".join(r + b"\n" for r in rows)


def _probes(data: bytes, start: int, stop: int) -> list[int]:
    """The [start, end) of each row of a may-be-legacy type not in its not-legacy shape (the oracle)."""
    out = []
    p = start
    while p < stop:
        nl = data.index(b"\n", p)
        m = _HEAD.match(data, p)
        assert m is not None
        t = m.group(1)
        if t in LEGACY_TYPE_BYTES:
            pat = NOT_LEGACY.get(t)
            if pat is None or pat.match(data, m.end(), nl + 1) is None:
                out += [p, nl + 1]
        p = nl + 1
    return out


def _check(data: bytes, start: int = 0, stop: int | None = None, probes: bool = True):
    """Every scanner's block of ``data[start:stop]``: all equal, the bulk scan's (from 0), the probes the oracle's."""
    stop = len(data) if stop is None else stop
    got = {name: scan(data, start, stop, -1, SCAN_TYPES, SCAN_KINDS, MAX_PACKED_MEMBERS, True)
           for name, scan in SCANNERS.items()}
    first = next(iter(got.values()))
    assert all(g == first for g in got.values()), {k: None if v is None else v[:3] for k, v in got.items()}
    if start == 0:                             # (the bulk scan reads the buffer to its end: cut at stop)
        for legacy in (False, True):
            want = bulk_block(data[:stop], stop, None, legacy)
            assert fastindex.scan_buffer(data, 0, stop, None, legacy) == want
    if first is not None and probes:
        assert first[5] == _probes(data, start, stop)
    return first


def _with_text(row: bytes, n: int) -> bytes:
    """``row`` (a user message) with its text ``n`` bytes long."""
    obj = json.loads(row)
    obj["data"]["content"] = [{"type": "text", "text": "w" * n}]
    return json.dumps(obj, separators=(",", ":")).encode()


def _user(rows: list[bytes]) -> int:
    return next(i for i, r in enumerate(rows) if r.startswith(b'{"type":"user/message"'))


def test_the_buffers_here_span_several_windows():
    assert len(_join(ROWS0)) > 4 * WINDOW and len(ROWS0) > 1000


def test_a_log_of_several_windows_scans_as_the_bulk_scan():
    data = _join(ROWS0)
    blk = _check(data)
    assert blk is not None and blk[2] == len(ROWS0) and blk[5]


def test_short_rows_after_a_row_longer_than_a_window():
    """A row longer than a window is read in a window of its own (the rest of the range); the short rows
    after it, and a damage among them, are seen in their own bytes, never an earlier window's."""
    rows = list(ROWS0)
    k = _user(rows)
    rows[k] = _with_text(rows[k], WINDOW + 5000)
    data = _join(rows)
    blk = _check(data)
    assert blk is not None and blk[2] == len(rows)
    # a NUL in the long row past its first window's worth of bytes, and in the short rows after it
    at = data.index(rows[k])
    for off in (10, WINDOW - 1, WINDOW + 100, len(rows[k]) - 2, len(rows[k]) + 30):
        assert _check(data[:at + off] + b"\x00" + data[at + off + 1:]) is None, off
    # the first short rows after the long one, each damaged in turn: a blank line, a gap, a missing brace
    for j in range(k + 1, k + 6):
        bad = rows[:j] + [b""] + rows[j:]
        assert _check(_join(bad)) is None, j
        assert _check(_join(rows[:j] + rows[j + 1:])) is None, j
        assert _check(_join(rows[:j] + [rows[j][:-1] + b" "] + rows[j + 1:])) is None, j
    # a long row that is the last one of the range, and one that is the first
    assert _check(_join(rows[: k + 1])) is not None
    assert _check(_join(rows[k:]), probes=True) is not None


def test_a_nul_in_any_window_and_across_a_window_boundary():
    data = _join(ROWS0)
    ends = [i + 1 for i, c in enumerate(data) if c == 10]
    places = []
    for w in range(1, len(data) // WINDOW + 1):
        edge = w * WINDOW
        places += [edge - 1, edge, edge + 1, edge + 40]
        # the row that holds the boundary of a window started at 0 (the windows start at rows: near there)
        row_end = next(e for e in ends if e > edge)
        places += [row_end - 3]
    places += [5, len(data) - 3]
    for at in places:
        if data[at] == 10:
            continue
        bad = data[:at] + b"\x00" + data[at + 1:]
        assert _check(bad) is None, at
        assert bulk_block(bad, len(bad), None, True) is None


def test_legacy_shapes_are_checked_in_every_window():
    """turn/end rows whose kind names an error (a legacy shape: probed) and one that does not (no probe),
    placed in later windows: the kind is looked for at the row's own place in the window's text."""
    rows = list(ROWS0)
    ends = [i for i, r in enumerate(rows) if r.startswith(b'{"type":"turn/end"')]
    assert len(ends) >= 6
    for n, i in enumerate(ends):
        obj = json.loads(rows[i])
        obj["data"] = {"turn": obj["data"]["turn"],
                       "reason": {"kind": ("model-error", "completed", "user-aborted", "max-steps")[n % 4]}}
        rows[i] = json.dumps(obj, separators=(",", ":")).encode()
    data = _join(rows)
    blk = _check(data)
    assert blk is not None
    probed = {data[blk[5][k]:blk[5][k + 1]] for k in range(0, len(blk[5]), 2)}
    late = [rows[i] for i in ends if data.index(rows[i]) > WINDOW]
    assert any(b"model-error" in r for r in late) and any(b"completed" in r for r in late)
    for r in late:
        assert ((r + b"\n") in probed) == (b"error" in r or b"aborted" in r), r


def test_ranges_that_start_and_stop_inside_windows():
    data = _join(ROWS0)
    ends = [0] + [i + 1 for i, c in enumerate(data) if c == 10]
    picks = ends[:: max(1, len(ends) // 12)]
    for a in picks:
        for b in picks:
            if b <= a:
                continue
            blk = _check(data, a, b)
            assert blk is not None and blk[2] == data.count(b"\n", a, b), (a, b)
            # the range read on into the next row (not a row end): refused
            if b < len(data):
                assert _check(data, a, b + 1) is None
    # a range ending in a row with no newline before its stop
    assert _check(data, 0, ends[3] - 1) is None


@pytest.mark.parametrize("size", [WINDOW - 7, WINDOW, WINDOW + 1, 2 * WINDOW + 3])
def test_a_row_of_about_a_window(size):
    rows = list(ROWS0[:40])
    k = _user(rows)
    rows[k] = _with_text(rows[k], size - len(_with_text(rows[k], 0)) - 1)
    data = _join(rows)
    assert _check(data) is not None
    if rows[k + 1:]:
        assert _check(_join(rows[:k + 1] + [b""] + rows[k + 1:])) is None


_ALPHABET = b'{}[]",:-0123456789seqdt\\\n\x00 \xff'


@settings(max_examples=int(os.environ.get("ROWSCAN_EXAMPLES", "300")) // 3, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(first=st.integers(0, 400), span=st.integers(2 * WINDOW, 4 * WINDOW), long=st.booleans(),
       edits=st.lists(st.tuples(st.sampled_from(["set", "insert", "delete"]), st.integers(0, 1 << 22),
                                st.sampled_from(list(_ALPHABET))), max_size=3),
       near_edge=st.booleans())
def test_edited_buffers_of_several_windows_scan_as_the_bulk_scan(first, span, long, edits, near_edge):
    """Rows from anywhere in a log, two to four windows of them (with a row longer than a window or not),
    a few bytes set, inserted or deleted (near a window edge or anywhere): every scanner gives the bulk
    scan's block, and the oracle's probes."""
    rows = list(ROWS0[first:])
    if long:
        k = _user(rows)
        rows[k] = _with_text(rows[k], WINDOW + 999)
    data = bytearray(_join(rows))
    cut = data.rfind(b"\n", 0, span) + 1
    data = data[:cut]
    for op, at, byte in edits:
        if near_edge:                          # (within a few bytes of a multiple of the window)
            at = (at % (len(data) // WINDOW + 1)) * WINDOW + (at % 7) - 3
        apply_edit(data, op, at, byte)
    buf = bytes(data)
    if len(buf) < 2:
        return
    _check(buf)
    n = buf.rfind(b"\n", 0, len(buf) - 1) + 1          # a range short of the buffer's end
    if n > 0:
        _check(buf, 0, n)
