"""A seq index that keeps up with the disk: byte-level scans, exact where it matters.

:func:`fast_index` builds the same :class:`~app.log.reader.SeqIndex` as the exact scan
(``LogReader.build_index_exact``) without decoding an envelope per row.  Per segment (the
same blocks of complete JSONL lines the source reads, or one zstd frame) it works on the
bytes at C speed, with a few Python steps per row and none per byte:

* row starts: a ``bytes.find`` (``memchr``) loop over the block, read straight into one
  reusable window of the file (no copy of the block, no split into row objects);
* every row's head (the previous row's ``}\\n`` and its first 64 bytes) is cut into one small
  string, and one compiled regex over it gives each row's ``seq`` (or a packed chunk row's
  type and ``seq0``) in the dsh writer's key order; a head that does not match, a NUL byte in a
  head, a row not ending in ``}`` all send the segment to the exact scan;
* the seq column is compared, as one string, with the column a contiguous log must have
  (``range``s joined at C level; a packed row's member count is its ``dt`` length, read from the
  row), so seqs stay exact: a gap, a duplicate, a swap, a wrong seq anywhere fails the check;
* turn boundaries, assistant messages and end-seeds come from one regex over the heads.

A segment that does not pass every check (another key order, a gap, a torn or malformed
row, a corrupt frame) is scanned exactly instead, row by row, exactly as before, so the
index and its problems equal the exact scan's.  Not checked at byte level: that a row whose
first and last bytes and seq are right is valid JSON in between (pages decode rows exactly
and show such a row as bad; the tail state is always exact).  Applies to every format
version (v0–v4 share the envelope's key order; v2+ simply has no packed rows).

The builder's state can be saved and resumed (:class:`IndexBuilder`), which is what the
persistent index cache (:mod:`app.store.indexcache`) extends when a log grows.
"""
from __future__ import annotations

import os
import re
from array import array
from itertools import accumulate
from typing import TYPE_CHECKING, NamedTuple, Optional, Union
from collections.abc import Callable, Iterable, Iterator

import msgspec

from .limits import MAX_PACKED_MEMBERS, MAX_ROW_BYTES
from .model import Problem
from .reader import MARK_CODES, SeqIndex, _maybe_legacy, _ProbeRow
from .sources import RawJsonlSource, Segment, SourceChanged

if TYPE_CHECKING:
    from .reader import LogReader

# (type, first seq, members) of one stored row, as LogReader.scan_segment_rows gives them
Row = tuple[Optional[str], Optional[int], int]
Buffer = Union[bytes, bytearray]

_HEAD = 64                     # bytes of a row's head looked at
_SLICE = _HEAD + 3             # per row in the heads string: NUL, the previous row's "}\n", the head
_PAD = b" " * _HEAD            # after the last row of the file (every head slice has its full length)
# every row's seq (a packed chunk row's seq0), in the writer's key order
_ROWS = re.compile(rb'\x00\}\n\{"type":"(?:(?:text-chunks|reasoning-chunks|tool-call-chunks)","seq0|[^"\\\n\x00]*","seq)'
                   rb'":(\d+)[,}]')
_PACKED = re.compile(rb'\x00\}\n\{"type":"(?:text-chunks|reasoning-chunks|tool-call-chunks)","seq0":\d+')
_MARKS = re.compile(rb'\x00\}\n\{"type":"(turn/start|turn/end|assistant/message|session/end-seed)","seq":(\d+)[,}]')
_LEGACY = re.compile(rb'\x00\}\n\{"type":"(?:steering/message|user/message|(assistant/message|tool/result)|'
                     rb'turn/start|turn/end)","seq":\d+')
# an assistant message or tool result whose data holds "message" (so not in a legacy shape)
_HAS_MESSAGE = re.compile(rb',"time":-?\d+,"data":\{"turn":-?\d+,"step":-?\d+,"message":\{')
_DT = re.compile(rb',"time0":-?\d+,"data":\{"turn":-?\d+,"step":-?\d+,"index":-?\d+,"dt":\[([-\d,]*)\]')
_MARK_CODE = {k.encode(): v for k, v in MARK_CODES.items()}
_probe = msgspec.json.Decoder(_ProbeRow).decode
_WINDOW = 8 << 20              # bytes read from the file at a time (whole segments are cut out of it)


class Fed(NamedTuple):
    """One segment as fed to the builder (what the index cache needs to resume after it)."""
    pos: int
    end: int
    line0: Optional[int]
    newlines: int              # newlines in the segment's text
    text_offset: int           # of its first byte in the decoded text (-1: unknown)
    text_len: int              # length of its decoded text
    torn: bool
    bad: bool


def _fed(seg: Segment) -> Fed:
    return Fed(seg.pos, seg.end, seg.line0, seg.data.count(b"\n"), seg.text_offset, len(seg.data), seg.torn,
               bool(seg.bad))


class _Block(NamedTuple):
    """What the byte-level scan found in one segment."""
    first: int
    last: int
    rows: int
    marks_s: list[int]
    marks_c: list[int]
    legacy: Optional[bool]


def scan_block(buf: Buffer, a: int, b: int, expected: int, legacy: bool) -> Optional[_Block]:
    """The rows of ``buf[a:b]`` (complete rows, ``buf[a-2:a]`` the previous row's ``}\\n``, at least
    ``_HEAD`` bytes after ``b``) when their seqs continue ``expected`` exactly; else None."""
    if b <= a or buf[b - 2:b] != b"}\n":
        return None
    starts: list[int] = []
    add = starts.append
    find = buf.find
    i = a
    while i < b:                                   # (buf[b-1] is a newline: find never fails here)
        add(i)
        i = find(b"\n", i, b) + 1
    n = len(starts)
    heads = b"\x00" + b"\x00".join([buf[s - 2:s + _HEAD] for s in starts])
    if heads.count(b"\x00") != n:                  # a NUL in a head: the slices would not line up
        return None
    seqs = _ROWS.findall(heads)
    if len(seqs) != n:
        return None                                # a row in another shape or key order, a blank line
    first = int(seqs[0])
    if first != expected:
        return None
    # each row's member count (1; a packed row: its dt length + 1, read from the row itself)
    counts = [1] * n
    top = 1
    for m in _PACKED.finditer(heads):
        k = m.start() // _SLICE
        d = _DT.match(buf, starts[k] + m.end() - m.start() - 3)
        if d is None:
            return None
        dt = d.group(1)
        counts[k] = c = dt.count(b",") + 2 if dt else 1
        top = max(top, c)
    if top > MAX_PACKED_MEMBERS:
        return None
    col = list(accumulate(counts, initial=first))
    last = col.pop() - 1
    # every row's seq, exactly: the stored seq column equals the one a contiguous log has
    if b",".join(seqs) != ",".join(map(str, col)).encode():
        return None
    marks = _MARKS.findall(heads)
    flag: Optional[bool] = None
    if legacy:                                     # the rows that may be in a legacy shape, probed exactly
        flag = False
        try:
            for m in _LEGACY.finditer(heads):
                k = m.start() // _SLICE
                if m.group(1) and _HAS_MESSAGE.match(buf, starts[k] + m.end() - m.start() - 3):
                    continue                       # data.message is there: not a legacy shape
                end = starts[k + 1] - 1 if k + 1 < n else b - 1
                if _maybe_legacy(_probe(buf[starts[k]:end])):
                    flag = True
                    break
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
    return _Block(first, last, n, [int(s) for _, s in marks], [_MARK_CODE[t] for t, _ in marks], flag)


class IndexBuilder:
    """Incremental index construction: feed segments oldest first; state can be saved/resumed."""

    def __init__(self, idx: Optional[SeqIndex] = None, expected: int = 0, broken: bool = False,
                 problems: Optional[list[Problem]] = None, legacy: Optional[list[int]] = None) -> None:
        self.idx = idx if idx is not None else SeqIndex()
        self.expected = expected
        self.broken = broken
        self.problems = problems if problems is not None else []
        # v0/v1: per segment, whether it may hold a legacy-shape row (a fork stores those converted
        # and copies the other segments as stored); None: not kept
        self.legacy = legacy
        self.fast_segments = 0
        self.exact_segments = 0

    # ------------------------------------------------------------------ exact (row by row)
    def add_exact(self, reader: LogReader, seg: Segment) -> None:
        """One segment by the exact envelope scan (with its legacy flag when kept)."""
        self.add_rows(seg, reader.scan_segment_rows(seg, self.problems, self.legacy))

    def add_rows(self, seg: Segment, rows: Iterable[Row]) -> None:
        """One segment from its exact rows [(type, first_seq, members)] (None seq: unreadable)."""
        idx = self.idx
        first, last, n_ev, n_rows = -1, -1, 0, 0
        for typ, s, n in rows:
            n_rows += 1
            if s is None:
                self.broken = True
                continue
            if first < 0:
                first = s
            if s != self.expected:
                self.problems.append(Problem(code="seq-gap" if s > self.expected else "seq-order",
                                             message=f"seq {s} where {self.expected} was expected", seq=s))
                self.broken = True
            if typ in MARK_CODES:
                idx.mark_seq.append(s)
                idx.mark_code.append(MARK_CODES[typ])
            last = s + n - 1
            self.expected = last + 1
            n_ev += n
            if not self.broken:
                idx.contiguous_through = last
        idx.add(seg.pos, seg.end, first, last, seg.line0, n_rows, n_ev)
        self.exact_segments += 1

    # ------------------------------------------------------------------ fast (byte level)
    def add_block(self, pos: int, end: int, line0: Optional[int], blk: _Block) -> None:
        idx = self.idx
        if blk.marks_s:
            idx.mark_seq.extend(blk.marks_s)
            idx.mark_code.extend(array("b", blk.marks_c))
        self.expected = blk.last + 1
        if not self.broken:
            idx.contiguous_through = blk.last
        idx.add(pos, end, blk.first, blk.last, line0, blk.rows, blk.last - blk.first + 1)
        if self.legacy is not None and blk.legacy is not None:
            self.legacy.append(blk.legacy)
        self.fast_segments += 1

    def try_fast(self, seg: Segment) -> bool:
        """Index ``seg`` from its bytes; False (nothing changed) when it needs the exact scan."""
        if seg.bad or seg.torn or seg.rows is not None or not seg.data.endswith(b"}\n"):
            return False
        buf = b"}\n" + seg.data + _PAD
        blk = scan_block(buf, 2, 2 + len(seg.data), self.expected, self.legacy is not None)
        if blk is None:
            return False
        self.add_block(seg.pos, seg.end, seg.line0, blk)
        return True

    # ------------------------------------------------------------------ state
    def state(self) -> dict[str, object]:
        return {"expected": self.expected, "broken": self.broken}


def fast_applicable(reader: LogReader) -> bool:
    """The byte-level scan knows the envelope of raw and zstd files (every format version)."""
    return reader.source.kind in ("jsonl", "zstd") and reader.header is not None \
        and not getattr(reader, "envelope_free", False)


class _Window:
    """One reusable read buffer (a fresh bytes object per read costs a page fault per 4 KiB)."""

    def __init__(self) -> None:
        self.buf = bytearray(_WINDOW + len(_PAD))


def _read_into(win: _Window, src: RawJsonlSource, at: int, n: int) -> int:
    """Read ``n`` bytes of the file at ``at`` into the window (then padding when that is the end
    of the file); -> n.  A file that shrank under the reader raises :class:`SourceChanged`."""
    if len(win.buf) < n + len(_PAD):
        win.buf = bytearray(n + len(_PAD))
    got = os.preadv(src._fd, [memoryview(win.buf)[:n]], at)
    if got < n:
        src._pread(n, at)                         # (raises SourceChanged when the file shrank)
        got = os.preadv(src._fd, [memoryview(win.buf)[:n]], at)
        if got < n:
            raise SourceChanged(f"{src.path}: short read at {at}")
    if at + n >= src.size:
        win.buf[n:n + len(_PAD)] = _PAD
    return n


def _jsonl_feed(reader: LogReader, builder: IndexBuilder, src: RawJsonlSource, start: Optional[int],
                line0: Optional[int]) -> Iterator[Fed]:
    """Feed a raw JSONL file from ``start`` (a segment start; None: the first row): exactly the
    segments ``src.forward(start, line0)`` cuts (reads of ``block`` bytes; a segment ends at the
    last newline of a read and the rest is carried into the next), cut out of one window read
    ahead; each at byte level where it passes, else exactly (the torn last one, a row over the
    row limit, one that fails a check)."""
    size = src.size
    block = src.block
    pos = at = src.header_end if start is None else start       # segment start; next read (the stride)
    if start is None:
        line0 = 2
    win = _Window()
    base, have, buf = pos, 0, win.buf          # buf[:have]: the file from ``base`` (2 bytes before a segment)
    want_legacy = builder.legacy is not None
    while pos < size:
        seg: Optional[Segment] = None
        while True:                            # read on until a read holds a newline (or the end)
            nxt = min(at + block, size)
            if pos - 2 < base or nxt + _HEAD > base + have:
                base = max(0, pos - 2)
                have = _read_into(win, src, base, min(max(_WINDOW, nxt + _HEAD - base), size - base))
                buf = win.buf
            if nxt >= size:
                end = size
                break
            nl = buf.rfind(b"\n", at - base, nxt - base)
            at = nxt
            if nl >= 0:
                end = base + nl + 1
                break
            if at - pos > MAX_ROW_BYTES:       # one row over the limit: skipped, as the source does
                stop = src._find_newline(at, size)
                torn = stop >= size and src._pread(1, size - 1) != b"\n"
                seg = src._oversized(pos, stop, line0, torn)
                at = end = stop
                break
        blk = None
        if seg is None and pos >= 2:
            blk = scan_block(buf, pos - base, end - base, builder.expected, want_legacy)
        if blk is not None:
            builder.add_block(pos, end, line0, blk)
            fed = Fed(pos, end, line0, blk.rows, pos, end - pos, False, False)
        else:                                  # row by row, exactly
            if seg is None:
                data = bytes(buf[pos - base:end - base])
                seg = Segment(pos=pos, end=end, data=data, text_offset=pos, line0=line0,
                              torn=end >= size and not data.endswith(b"\n"))
            builder.add_exact(reader, seg)
            fed = _fed(seg)
            if seg.bad:
                fed = fed._replace(newlines=1)      # (an over-limit row: one line, as the source counts it)
        yield fed
        pos = end
        if line0 is not None:
            line0 += fed.newlines


def scan(reader: LogReader, builder: IndexBuilder, segments: Optional[Iterable[Segment]] = None,
         progress: Optional[Callable[[int, int], None]] = None,
         on_segment: Optional[Callable[[Fed, IndexBuilder], None]] = None,
         start: Optional[int] = None, line0: Optional[int] = None) -> IndexBuilder:
    """Feed the log into ``builder``: fast where possible, exact otherwise.

    ``segments``: the segments to feed (None: a raw JSONL file is read from ``start``/``line0``
    by :func:`_jsonl_feed`, any other source from ``source.forward()``).  ``on_segment`` is told
    of each segment after it was fed."""
    total = max(1, reader.source.size)
    fast = fast_applicable(reader)
    src = reader.source
    fed: Iterator[Fed]
    if segments is None and fast and isinstance(src, RawJsonlSource):
        fed = _jsonl_feed(reader, builder, src, start, line0)
    else:
        if segments is None:
            segments = src.forward(start, line0=line0) if isinstance(src, RawJsonlSource) else src.forward(start)
        fed = _feed_segments(reader, builder, segments, fast)
    for f in fed:
        if on_segment is not None:
            on_segment(f, builder)
        if progress:
            progress(f.end if isinstance(f.end, int) else 0, total)
    if builder.legacy is not None and len(builder.legacy) == len(builder.idx):
        builder.idx.legacy = array("b", builder.legacy)
    return builder


def _feed_segments(reader: LogReader, builder: IndexBuilder, segments: Iterable[Segment], fast: bool) -> Iterator[Fed]:
    for seg in segments:
        if not (fast and builder.try_fast(seg)):
            builder.add_exact(reader, seg)
        yield _fed(seg)


def wants_legacy(reader: LogReader) -> bool:
    """v0/v1 logs keep per-segment legacy flags in their index (see :mod:`app.store.forking`)."""
    return (getattr(reader, "version", 0) or 0) < 2 and reader.source.kind in ("jsonl", "zstd")


def fast_index(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
               problems: Optional[list[Problem]] = None) -> Optional[SeqIndex]:
    """The reader's SeqIndex by the byte-level scan (None when it does not apply)."""
    if not fast_applicable(reader):
        return None
    b = scan(reader, IndexBuilder(problems=problems, legacy=[] if wants_legacy(reader) else None), None, progress)
    return b.idx
