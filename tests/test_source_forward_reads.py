"""``RawJsonlSource.forward`` (each segment read in one ``pread`` once its end is known) gives exactly the
segments of the way it read before (:func:`forward_def` below: every read a new bytes object, the segment copied
out of it, the rest carried): the same ``pos``, ``end``, bytes, ``line0``, ``torn`` and over-limit segments, on
the shared fixtures and on generated files with rows shorter and longer than a read, a torn last row, no final
newline, blank lines, a row over the row limit (torn or not), from the header and from a row's start.  And
``newlines`` (the line count, in C where built) is ``bytes.count``."""
from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import pytest

from app.log.format import limits
from app.log.source import sources
from app.log.source.sources import RawJsonlSource, Segment, newlines

FIXTURES = Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "dsh"


def forward_def(src: RawJsonlSource, start: Optional[int] = None, line0: Optional[int] = None,
                max_row: int = limits.MAX_ROW_BYTES) -> Iterator[Segment]:
    """The definition: the segments as forward() cut them before (a new bytes per read, the segment sliced)."""
    at = src.header_end if start is None else start
    if start is None:
        line0 = 2
    end = src.size
    carry: list[bytes] = []
    carry_n = 0
    carry_at = at
    while at < end:
        n = min(src.block, end - at)
        chunk = src.pread(n, at)
        at += len(chunk)
        nl = chunk.rfind(b"\n")
        if nl < 0 and at < end:
            carry.append(chunk)
            carry_n += len(chunk)
            if carry_n > max_row:
                stop = src.find_newline(at, end)
                torn = stop >= end and src.pread(1, end - 1) != b"\n"
                yield src.oversized_segment(carry_at, stop, line0, torn)
                if line0 is not None:
                    line0 += 1
                carry, carry_n, carry_at, at = [], 0, stop, stop
            continue
        data = b"".join(carry) + chunk if carry else chunk
        nl = len(data) - len(chunk) + nl if nl >= 0 else -1
        carry, carry_n = [], 0
        cut = len(data) if at >= end else nl + 1
        seg = Segment(pos=carry_at, end=carry_at + cut, data=data[:cut], text_offset=carry_at, line0=line0,
                      torn=(at >= end and not data.endswith(b"\n")))
        if line0 is not None:
            line0 += seg.data.count(b"\n")
        yield seg
        if cut < len(data):
            carry, carry_n = [data[cut:]], len(data) - cut
        carry_at = carry_at + cut


def _same(src: RawJsonlSource, start: Optional[int] = None, line0: Optional[int] = None,
          max_row: int = limits.MAX_ROW_BYTES) -> int:
    got = [(s.pos, s.end, bytes(s.data), s.text_offset, s.line0, s.torn, s.bad, s.bad_kind)
           for s in src.forward(start, line0)]
    want = [(s.pos, s.end, bytes(s.data), s.text_offset, s.line0, s.torn, s.bad, s.bad_kind)
            for s in forward_def(src, start, line0, max_row)]
    assert got == want
    return len(got)


def _rows(rng: random.Random, n: int, long: int) -> list[bytes]:
    out = []
    for i in range(n):
        k = rng.choice([0, 1, 5, 40, 200, long])
        out.append(b'{"type":"x","seq":%d,"t":"%s"}' % (i, b"\xc3\xa9a" * rng.randint(0, k)))
    return out


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("block", [7, 64, 333, 4096])
def test_forward_equals_definition_generated(tmp_path, monkeypatch, seed, block):
    rng = random.Random(seed * 31 + block)
    monkeypatch.setattr(sources, "PEEK", rng.choice([1, 3, 16, 1 << 16]))
    rows = _rows(rng, rng.randint(0, 40), rng.choice([10, 100, 700]))
    if rows and rng.random() < 0.3:
        rows.insert(rng.randrange(len(rows)), b"")                    # a blank line
    body = b"\n".join(rows)
    tail = rng.choice([b"\n", b"", b'\n{"type":"x","se'])             # complete, no final newline, torn
    p = tmp_path / "session.jsonl"
    p.write_bytes(b'{"type":"session","version":4}\n' + body + (tail if rows else b""))
    src = RawJsonlSource(str(p), block=block)
    _same(src)
    starts = [src.header_end]
    data = p.read_bytes()
    starts += [i + 1 for i, c in enumerate(data) if c == 10 and i + 1 < len(data)][:: max(1, len(rows) // 3)]
    for s in starts:
        _same(src, s, None)
        _same(src, s, 7)


@pytest.mark.parametrize("torn", [False, True])
@pytest.mark.parametrize("block", [16, 100])
def test_forward_over_limit_row(tmp_path, monkeypatch, torn, block):
    """A row over the row limit is one bad segment, read no more than the old way did, the rows after it as before."""
    monkeypatch.setattr(sources, "MAX_ROW_BYTES", 250)
    monkeypatch.setattr(sources, "PEEK", 8)
    big = b'{"type":"x","t":"' + b"y" * 1000 + b'"}'
    p = tmp_path / "session.jsonl"
    rows = [b'{"type":"a"}', big, b'{"type":"b"}', big]
    p.write_bytes(b'{"type":"session"}\n' + b"\n".join(rows) + (b"" if torn else b"\n"))
    src = RawJsonlSource(str(p), block=block)
    assert _same(src, max_row=250) >= 3
    assert [s.bad_kind for s in src.forward() if s.bad] == ["over-limit", "over-limit"]


def test_forward_equals_definition_fixtures(monkeypatch):
    files = sorted(FIXTURES.rglob("*.jsonl"))
    assert len(files) > 20
    for i, f in enumerate(files):
        for block in (1 << 20, 97 + i % 50):
            monkeypatch.setattr(sources, "PEEK", 1 << 16 if block > 1000 else 1 + i % 40)
            src = RawJsonlSource(str(f), block=block)
            try:
                _same(src)
            finally:
                src.close()


def test_newlines_is_count():
    count = newlines()
    rng = random.Random(3)
    for n in (0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 129, 1000, 4099):
        b = bytes(rng.choice(b"\nab\x00\xff") for _ in range(n))
        assert count(b) == b.count(b"\n")
        assert count(bytearray(b)) == b.count(b"\n")
        assert count(memoryview(b)[1:]) == b[1:].count(b"\n")
    assert sources._count_py(b"a\nb\n") == 2
