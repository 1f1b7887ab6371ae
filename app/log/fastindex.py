"""A seq index that keeps up with the disk: byte-level scans, exact where it matters.

:func:`fast_index` builds the same :class:`~app.log.reader.SeqIndex` as the exact scan
(``LogReader.build_index``) without decoding an envelope per row.  Per segment (a block of
complete JSONL lines, or one zstd frame) it works on the bytes at C speed:

* rows: ``bytes.count(b"\\n")``; every row must start ``{"type":"`` and end ``}``;
* the seq of every row: one ``re.findall`` of the ``"seq":N`` / ``"seq0":N`` that directly
  follows the row's ``type`` (the dsh writer's key order), joined and compared with the seqs a
  contiguous log must have (a C-level ``str.join`` over ``range``s), so seqs stay exact;
* rows that matter by type (turn boundaries, assistant messages, end-seeds, packed chunk
  rows) are found by one regex anchored at row starts; only a packed row's ``dt`` length
  (its member count) is read from it.

A segment that does not pass every check (another key order, a gap, a torn or malformed
row, a corrupt frame) is scanned exactly instead, row by row, exactly as before, so the
index and its problems equal the exact scan's.  Not checked at byte level: that a row whose
first and last bytes and seq are right is valid JSON in between (pages decode rows exactly
and show such a row as bad; the tail state is always exact).

The builder's state can be saved and resumed (:class:`IndexBuilder`), which is what the
persistent index cache (:mod:`app.store.indexcache`) extends when a log grows.
"""
from __future__ import annotations

import re
from array import array
from itertools import chain
from typing import TYPE_CHECKING, Optional
from collections.abc import Callable, Iterable

import msgspec

from .model import Problem
from .reader import _LEGACY_TYPES, MARK_CODES, SeqIndex, _maybe_legacy, _ProbeRow

if TYPE_CHECKING:
    from .reader import LogReader
    from .sources import Segment

# (type, first seq, members) of one stored row, as LogReader.scan_segment_rows gives them
Row = tuple[Optional[str], Optional[int], int]

# rows are split at C speed; the head of each row (its first bytes) says its type and seq in the
# writer's key order, and a packed row's dt length (read from the row itself) its member count
_HEAD = 64
_HEAD_RE = re.compile(rb'^\{"type":"([^"\\\n]*)","seq(0?)":(\d+)[,}]', re.M)
_DT_RE = re.compile(rb',"time0":-?\d+,"data":\{"turn":-?\d+,"step":-?\d+,"index":-?\d+,"dt":\[([-\d,]*)\]')
_KINDS = frozenset({b"turn/start", b"turn/end", b"assistant/message", b"session/end-seed", b"text-chunks",
                    b"reasoning-chunks", b"tool-call-chunks"})
_PACKED = frozenset({b"text-chunks", b"reasoning-chunks", b"tool-call-chunks"})
_LEGACY_HEADS = frozenset(t.encode() for t in _LEGACY_TYPES)
_probe = msgspec.json.Decoder(_ProbeRow).decode


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
    def try_fast(self, seg: Segment) -> bool:
        """Index ``seg`` from its bytes; False (nothing changed) when it needs the exact scan."""
        if seg.bad or seg.torn or seg.rows is not None:
            return False
        data = seg.data
        if not data.endswith(b"}\n"):
            return False
        rows = data.split(b"\n")
        rows.pop()                                     # after the last newline: nothing
        n_rows = len(rows)
        if b"".join([r[-1:] for r in rows]).count(b"}") != n_rows:
            return False                               # a row that does not end with "}"
        heads = _HEAD_RE.findall(b"\n".join([r[:_HEAD] for r in rows]))
        if len(heads) != n_rows:
            return False                               # a row in another key order (or no seq)
        first = int(heads[0][2])
        if first != self.expected:
            return False
        marks_s: list[int] = []
        marks_c: list[int] = []
        ranges: list[range] = []
        cur = first
        done_rows = 0                                  # rows accounted for by ``ranges``
        for i in [i for i, h in enumerate(heads) if h[0] in _KINDS]:
            kind, zero, s_raw = heads[i]
            s = int(s_raw)
            if kind in _PACKED:
                d = _DT_RE.match(rows[i], len(kind) + len(heads[i][2]) + 18) if zero else None
                if d is None:
                    return False
                dt = d.group(1)
                members = (dt.count(b",") + 1 if dt else 0) + 1
                if s < cur:
                    return False
                ranges.append(range(cur, s + 1))        # scalar rows up to it, then the packed row
                done_rows += s + 1 - cur
                cur = s + members
            else:
                if zero:
                    return False
                marks_s.append(s)
                marks_c.append(MARK_CODES[kind.decode()])
        rest = n_rows - done_rows
        if rest < 0:
            return False
        ranges.append(range(cur, cur + rest))
        last = cur + rest - 1
        # every row's seq, exactly: the stored seq column equals the one a contiguous log has
        if b"\n".join([h[2] for h in heads]) != "\n".join(map(str, chain.from_iterable(ranges))).encode():
            return False
        flag = None
        if self.legacy is not None:          # the rows that may be in a legacy shape, probed exactly
            try:
                flag = any(_maybe_legacy(_probe(rows[i])) for i, h in enumerate(heads) if h[0] in _LEGACY_HEADS)
            except (msgspec.DecodeError, msgspec.ValidationError):
                return False
        # marks must sit where the contiguous seqs put them (they are rows of the seq column)
        idx = self.idx
        if marks_s:
            idx.mark_seq.extend(marks_s)
            idx.mark_code.extend(array("b", marks_c))
        self.expected = last + 1
        if not self.broken:
            idx.contiguous_through = last
        idx.add(seg.pos, seg.end, first, last, seg.line0, n_rows, last - first + 1)
        if flag is not None and self.legacy is not None:
            self.legacy.append(flag)
        self.fast_segments += 1
        return True

    # ------------------------------------------------------------------ state
    def state(self) -> dict[str, object]:
        return {"expected": self.expected, "broken": self.broken}


def fast_applicable(reader: LogReader) -> bool:
    """The byte-level scan knows the v0 row shapes of raw and zstd files only."""
    h = reader.header
    return reader.source.kind in ("jsonl", "zstd") and h is not None and h.version in (0, None) \
        and not getattr(reader, "envelope_free", False)


def scan(reader: LogReader, builder: IndexBuilder, segments: Iterable[Segment],
         progress: Optional[Callable[[int, int], None]] = None,
         on_segment: Optional[Callable[[Segment, IndexBuilder], None]] = None) -> IndexBuilder:
    """Feed ``segments`` into ``builder``: fast where possible, exact otherwise."""
    total = max(1, reader.source.size)
    fast = fast_applicable(reader)
    for seg in segments:
        if on_segment is not None:
            on_segment(seg, builder)
        if not (fast and builder.try_fast(seg)):
            builder.add_exact(reader, seg)
        if progress:
            progress(seg.end if isinstance(seg.end, int) else 0, total)
    if builder.legacy is not None and len(builder.legacy) == len(builder.idx):
        builder.idx.legacy = array("b", builder.legacy)
    return builder


def wants_legacy(reader: LogReader) -> bool:
    """v0/v1 logs keep per-segment legacy flags in their index (see :mod:`app.store.forking`)."""
    return (getattr(reader, "version", 0) or 0) < 2 and reader.source.kind in ("jsonl", "zstd")


def fast_index(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
               problems: Optional[list[Problem]] = None) -> Optional[SeqIndex]:
    """The reader's SeqIndex by the byte-level scan (None when it does not apply)."""
    if not fast_applicable(reader):
        return None
    b = scan(reader, IndexBuilder(problems=problems, legacy=[] if wants_legacy(reader) else None),
             reader.source.forward(), progress)
    return b.idx
