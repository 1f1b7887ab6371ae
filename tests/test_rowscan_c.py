"""The C row scanner (app/log/index/rowscan_c.c) returns exactly what its definition (app/log/index/rowscan.py,
interpreted) returns, as a raw tuple: the block, the marks and the rows listed to probe, for any
buffer, any range of it and any expected seq (decision 0017).

The other scanner tests compare blocks as the index uses them (``fastindex.scan_buffer``, which
probes the listed rows); here the raw results are compared, on buffers built from real rows cut,
spliced and edited anywhere (hypothesis), on bytes of any value, on ranges that start or stop
inside a row or past the buffer, and through every kind of buffer the C scanner accepts (bytes,
bytearray, memoryview, mmap).  A seq too long for 64 bits goes to the definition (NotImplemented
from C), which these tests see through ``fastindex.scan_c``.
"""
from __future__ import annotations

import mmap
import os
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scanners_util import C_SCANNER, INTERPRETED, apply_edit

from app.log.index import fastindex
from app.log.index.fastindex import SCAN_KINDS, SCAN_TYPES
from app.log.format.limits import MAX_PACKED_MEMBERS
from app.tools.synth import SessionSynth, write_jsonl

pytestmark = pytest.mark.skipif(C_SCANNER is None, reason="set-up did not build the C row scanner here")
EXAMPLES = int(os.environ.get("ROWSCAN_EXAMPLES", "300"))


def _rows(version: int) -> list[bytes]:
    fd, path = tempfile.mkstemp(suffix=".jsonl")
    os.close(fd)
    try:
        write_jsonl(path, SessionSynth(seed=11, version=version), target_bytes=120_000)
        with open(path, "rb") as f:
            return f.read().split(b"\n")[1:-1]          # (the header is no row)
    finally:
        os.unlink(path)


ROWS = {0: _rows(0), 4: _rows(4)}


def both(data, start: int, stop: int, expected: int, legacy: bool, max_members: int = MAX_PACKED_MEMBERS):
    """The C scanner's answer (with its fallback) and the definition's, asserted equal."""
    want = INTERPRETED.scan(bytes(data), start, stop, expected, SCAN_TYPES, SCAN_KINDS, max_members, legacy)
    got = fastindex.scan_c(data, start, stop, expected, SCAN_TYPES, SCAN_KINDS, max_members, legacy)
    assert got == want, (start, stop, expected, legacy)
    return got


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(version=st.sampled_from([0, 4]), first=st.integers(0, 400), n=st.integers(1, 60),
       edits=st.lists(st.tuples(st.sampled_from(["set", "insert", "delete"]), st.integers(0, 1 << 20),
                                st.sampled_from(list(b'{}[]",:-019az\n\x00\\ \xff'))), max_size=4),
       cut=st.integers(0, 1 << 20), expect=st.sampled_from(["first", "none", "off", "wide"]),
       legacy=st.booleans(), max_members=st.sampled_from([MAX_PACKED_MEMBERS, 2, 1]))
def test_the_c_scanner_returns_what_the_definition_returns(version, first, n, edits, cut, expect, legacy, max_members):
    rows = ROWS[version]
    first %= len(rows)
    data = bytearray(b"".join(r + b"\n" for r in rows[first:first + n]))
    for op, at, byte in edits:
        if data:
            apply_edit(data, op, at, byte)
    if not data:
        return
    seq0 = data[data.find(b'"seq') + 6:][:12]
    digits = bytes(c for c in seq0 if 48 <= c <= 57)
    expected = {"first": int(digits) if digits else 0, "none": -1, "off": (int(digits) + 1) if digits else 5,
                "wide": 10 ** 20}[expect]
    stop = len(data)
    both(bytes(data), 0, stop, expected, legacy, max_members)
    start = cut % len(data)                           # (a range from inside the buffer, to its end or a newline)
    nl = data.find(b"\n", start)
    both(bytes(data), start, stop, -1, legacy, max_members)
    if nl >= 0:
        both(bytes(data), start, nl + 1, -1, legacy, max_members)


@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.binary(max_size=400), start=st.integers(0, 450), stop=st.integers(0, 450), expected=st.integers(-1, 30),
       legacy=st.booleans())
def test_any_bytes_any_range(data, start, stop, expected, legacy):
    both(data, start, stop, expected, legacy)


@settings(max_examples=EXAMPLES, deadline=None)
@given(parts=st.lists(st.sampled_from([b'{"type":"', b'user/message', b'text-chunks', b'turn/end', b'","seq":',
                                       b'","seq0":', b'0', b'1', b'7', b'12', b',"time":', b',"time0":', b'5',
                                       b',"data":{"turn":', b',"step":', b',"index":', b',"dt":[', b']', b',', b'-',
                                       b',"message":{', b',"reason":{"kind":"', b'error', b'max-steps', b'"}}}',
                                       b'}}', b'}', b'\n', b'"', b'\\']), max_size=40),
       expected=st.sampled_from([-1, 0, 1, 7, 12]), legacy=st.booleans())
def test_row_like_bytes(parts, expected, legacy):
    """Buffers made of the pieces the scanner looks for, in any order: every check meets its edge."""
    data = b"".join(parts)
    both(data, 0, len(data), expected, legacy)


def test_every_kind_of_buffer_reads_alike(tmp_path):
    data = b"".join(r + b"\n" for r in ROWS[0][:200])
    want = both(data, 0, len(data), -1, True)
    assert want is not None and want[2] == 200 and want[3]          # (rows, and marks among them)
    p = tmp_path / "rows.jsonl"
    p.write_bytes(data)
    with open(p, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        assert fastindex.scan_c(mm, 0, len(data), -1, SCAN_TYPES, SCAN_KINDS, MAX_PACKED_MEMBERS, True) == want
    for buf in (bytearray(data), memoryview(data)):
        assert fastindex.scan_c(buf, 0, len(data), -1, SCAN_TYPES, SCAN_KINDS, MAX_PACKED_MEMBERS, True) == want


def test_wide_seqs_go_to_the_definition():
    """A seq of 19 digits or more: the C scanner hands the buffer over (NotImplemented), the answer is the
    definition's (Python ints), both for a log whose seqs are all that long and an expected seq that long."""
    wide = 10 ** 19
    rows = [b'{"type":"step/start","seq":%d,"time":1,"data":{"turn":1,"step":1}}' % (wide + i) for i in range(5)]
    data = b"".join(r + b"\n" for r in rows)
    args = (SCAN_TYPES, SCAN_KINDS, MAX_PACKED_MEMBERS, True)
    assert C_SCANNER.scan(data, 0, len(data), -1, *args) is NotImplemented
    assert C_SCANNER.scan(data, 0, len(data), wide * 10, *args) is NotImplemented
    got = both(data, 0, len(data), -1, True)
    assert got is not None and got[:3] == (wide, wide + 4, 5)
    assert both(data, 0, len(data), wide, True) == got
    assert both(data, 0, len(data), wide + 1, True) is None


@pytest.mark.parametrize("legacy", [False, True])
def test_heads_at_the_64_byte_edge(legacy):
    """A row's type and seq must lie in its first 64 bytes: types and seqs whose end falls just before,
    on and after that edge, with a comma or a brace after the seq, and types holding a quote or a
    backslash escape (the head stops there)."""
    for length in range(30, 56):
        for digits in (1, 2, 5, 9):
            for after in (b",", b"}"):
                for name in (b"x" * length, b"a\\" + b"x" * (length - 2), b"a/" + b"x" * (length - 2)):
                    seq = 10 ** (digits - 1)
                    row = b'{"type":"' + name + b'","seq":' + str(seq).encode() + after
                    row += b'"time":1}' if after == b"," else b""
                    if not row.endswith(b"}"):
                        row += b"}"
                    data = row + b"\n"
                    both(data, 0, len(data), -1, legacy)
                    both(data, 0, len(data), seq, legacy)


def test_seqs_of_nineteen_digits():
    """19 digits may or may not fit 64 bits: the C scanner hands every such seq to the definition."""
    for base in (10 ** 18, 9_223_372_036_854_775_800, 9_999_999_999_999_999_990):
        rows = [b'{"type":"step/start","seq":%d,"time":1,"data":{"turn":1,"step":1}}' % (base + i) for i in range(3)]
        data = b"".join(r + b"\n" for r in rows)
        got = both(data, 0, len(data), -1, True)
        assert got is not None and got[:3] == (base, base + 2, 3)
        assert both(data, 0, len(data), base + 1, True) is None
