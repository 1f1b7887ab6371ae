"""The work done ahead of an opened session, in ONE streaming read (issue 29): the fold checkpoints
(:mod:`app.log.fold.checkpoints`), the surface index (:mod:`app.log.fold.surface`) and the outline (turns,
errors, problems: :mod:`app.log.query.outline`).

Each segment of the log is read once and split into rows once; each row is decoded once
(:meth:`LogReader.decode_segment`'s rule) and its events handed to the three builders, which then equal
their own separate passes (the tests compare them on every fixture face):

* the outline sees every event, and every problem of the decode;
* the checkpoints see the same events, a packed chunk row as one :class:`PackedBlock` (as
  :func:`~app.log.format.lazyrows.lazy_segment` gives it), and stop at the first break in the seq order;
* the surface index sees the events of the rows that can change the surface (the same byte test as
  :func:`app.log.fold.surface._surface_rows`), up to the repair cut.

A segment of bytes is first classified in one C call (:mod:`app.log.query.ahead_scan`: each row's type, row
screen, surface needles; a canonical step or turn boundary read without any decode), and its rows then go the
lean way or, uncommon ones, :meth:`AheadPass.row`'s exact way; ``fast=False`` and row-split sources (SQLite) read
row by row.

Pure core: no store, no Qt.  ``cancel()`` is checked between rows; a pass cut short says so
(``complete`` False) and its checkpoints and surface index must not be kept.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, cast

from ..fold.checkpoints import EVERY, Checkpoint, CheckpointBuilder, Checkpoints
from ..fold.surface import SURFACE_NEEDLES, ScanEnd, SurfaceIndex
from ..index.fastindex import steady_heap
from ..index.verdict import ReadPath
from ..format.lazyrows import PACKED_PREFIXES, lazy_row
from ..format.fastrows import MESSAGE
from ..format.model import is_event
from .ahead_lean import LeanChecks, lean_block
from .ahead_rows import SURFACE_TYPES, LeanRows, Row
from .ahead_scan import batch_rows
from .outline import Outline, OutlineBuilder, TurnEntry
from .outline_packed import TurnSpool

if TYPE_CHECKING:
    from ..index.reader import LogReader
    from ..source.sources import Segment

_N0, _N1, _N2, _N3, _N4 = SURFACE_NEEDLES          # (the byte test of ``_surface_rows``, unrolled)
CANCEL_ROWS = 64        # rows between two looks at ``cancel()``


@dataclass
class Ahead:
    checkpoints: Checkpoints
    surface: SurfaceIndex
    surface_end: ScanEnd          # where the surface scan stopped (the surface cache's ``upto``)
    outline: Outline
    complete: bool                # False: cancelled before the end (only the outline says how far it got)


def hit(raw: bytes) -> bool:
    """The row's bytes hold one of the surface needles (``_surface_rows``'s byte test)."""
    return _N0 in raw or _N1 in raw or _N2 in raw or _N3 in raw or _N4 in raw


class _Surface:
    """The surface index's share of the pass (``_surface_rows`` + ``extend_index``, a row at a time)."""

    def __init__(self, reader: LogReader) -> None:
        st = reader.tail_state()
        self.cut, self.last_seq = st.cut_pos, st.last_seq
        self.idx = SurfaceIndex(reader.version or 0)
        self.end = ScanEnd()
        self.stopped = False

    def row(self, pos: Any, line: Optional[int], raw: bytes, complete: bool,
            got: Callable[[], list[Any]]) -> None:
        """One row (``got()``: its items, asked for only when the row can change the surface)."""
        end = self.end
        if self.cut is not None and pos >= self.cut:
            end.pos, end.line = pos, line
            self.stopped = True
            return
        if not complete:
            end.pos, end.line = pos, line
            return
        if hit(raw):
            for ev in got():
                if is_event(ev):
                    self.idx.apply(ev)

    def lean(self, pos: Any, line: Optional[int], hit: bool, nbytes: int, typ: str, seq: int,
             empty: bool = False) -> None:
        """:meth:`row` of a complete row of ``ahead_rows.LEAN_TYPES`` (a non-surface event: only counted, a step
        boundary marks the fold) or ``ahead_rows.SURFACE_TYPES`` (an append of ``nbytes`` stored; ``empty``: an
        assistant message with no content) without its event; ``hit``: its bytes hold one of the needles."""
        if self.cut is not None and pos >= self.cut:
            self.end.pos, self.end.line = pos, line
            self.stopped = True
        elif hit:
            idx = self.idx
            if typ in ("step/start", "step/end"):
                idx.lean_step(typ, seq)
            elif typ in SURFACE_TYPES:          # (an append: ``ahead_rows``; an assistant message with no content
                idx.lean_append(seq, empty, nbytes)       # is an empty one)
            else:
                idx.events += 1
                if seq > idx.last_seq:
                    idx.last_seq = seq

    def segment_end(self, seg: Segment, rows: int) -> None:
        """``rows``: the segment's complete rows (as many as its newlines)."""
        if not seg.torn:
            self.end.pos = seg.end
            self.end.line = seg.line0 + rows if seg.line0 is not None else None

    def finish(self) -> SurfaceIndex:
        self.idx.last_seq = max(self.idx.last_seq, self.last_seq)
        return self.idx


class AheadPass:
    """The state of one pass: the three builders, whether the checkpoints still run, the rows read so far."""

    def __init__(self, reader: LogReader, cancel: Optional[Callable[[], bool]], every: int,
                 sink: Optional[Callable[[Checkpoint], None]], fast: bool) -> None:
        self.reader, self.cancel, self.fast = reader, cancel, fast
        self.ob = ob = OutlineBuilder(reader)
        ob.turns = cast(list[TurnEntry], TurnSpool())     # (each turn packed once final: issue 36)
        ob.checks = LeanChecks()            # (the same load checks, the common case at C level)
        self.cb = cb = CheckpointBuilder(reader, every, ob.checks)   # (the load checks: the outline applies them first)
        cb.sink = sink
        self.su = _Surface(reader)
        self.lean = LeanRows(reader, ob, cb)     # (plain rows from their lean records, when they are well-formed)
        if not fast:
            self.lean.decs = {}
        self.types = tuple(self.lean.decs)      # (the row types :func:`ahead_scan.batch_rows` reads lean)
        self.cp_on = True
        self.n = 0

    def rows(self, seg: Segment) -> Optional[int]:
        """The rows of ``seg``, one at a time; -> its complete rows, None: cancelled."""
        nl = 0
        cancel = self.cancel
        for row in seg.split_rows():
            self.n += 1
            nl += row[4]
            if cancel is not None and self.n % CANCEL_ROWS == 0 and cancel():
                return None
            self.row(row)
        return nl

    def row(self, row: Row) -> None:
        """One row: a clean packed row as its block, a plain row from its lean record, any other decoded whole."""
        reader, ob, cb, su, lean = self.reader, self.ob, self.cb, self.su, self.lean
        pos, off, line, raw, complete = row
        blk = lean_block(reader, raw, line, off) if self.fast and complete and raw.startswith(PACKED_PREFIXES) \
            else None
        if blk is not None:             # (a clean packed row: its members only count, nothing decodes them)
            assert blk.n is not None
            ob.block(blk.seq0, blk.n, line, off)
            self.cp_on = self.cp_on and cb.item(blk)
            if not su.stopped:
                su.row(pos, line, raw, complete, lambda: reader.decode_split_row(row))
            return
        rec = lean.record(raw) if complete and lean.decs else None
        if rec is not None:
            self.cp_on = lean.take(rec, pos, off, line, row, self.cp_on)
            if not su.stopped:
                su.lean(pos, line, hit(raw), len(raw), rec.T, rec.seq, rec.K == MESSAGE and not rec.data.message.content)
            return
        got = reader.decode_split_row(row, ob.problems)
        for it in got:
            if is_event(it):
                ob.event(it)
        if self.cp_on:
            if complete and raw.startswith(PACKED_PREFIXES):
                lazy = lazy_row(reader, pos, off, line, raw, complete)
            else:
                lazy = [it for it in got if is_event(it)] if complete and raw.strip() else []
            self.cp_on = all(cb.item(it) for it in lazy)
        if not su.stopped:
            su.row(pos, line, raw, complete, lambda: got)


def build_ahead(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
                cancel: Optional[Callable[[], bool]] = None, every: int = EVERY,
                sink: Optional[Callable[[Checkpoint], None]] = None, fast: bool = True) -> Ahead:
    """The checkpoints, the surface index and the outline of ``reader``'s log from one forward read.
    ``sink``: where each checkpoint goes once final (the product then holds only the points not yet given);
    ``fast=False``: every row decoded whole, none read lean (the tests compare the two ways)."""
    p = AheadPass(reader, cancel, every, sink, fast)
    ob, cb, su = p.ob, p.cb, p.su
    if reader.fatal:
        return Ahead(cb.cps, su.finish(), su.end, ob.finish(True), True)
    total = max(1, reader.physical_total())
    vp = ReadPath(reader)               # dsh's read-path rules (the outline's refusals) see the same segments
    with steady_heap(reader.source.size):       # (freed segments reused, not mapped afresh: see steady_heap)
        return _segments(p, reader, vp, total, progress, cancel)


def _segments(p: AheadPass, reader: LogReader, vp: ReadPath, total: int,
              progress: Optional[Callable[[int, int], None]], cancel: Optional[Callable[[], bool]]) -> Ahead:
    """:func:`build_ahead`'s forward read of every segment."""
    ob, cb, su = p.ob, p.cb, p.su
    for seg in reader.source.forward():
        vp.segment(seg)
        if seg.bad:
            for it in reader.decode_segment(seg, ob.problems):      # (the corrupt-frame problem; no events)
                if is_event(it):
                    ob.event(it)
            p.cp_on = p.cp_on and cb.segment(seg, ())
            continue
        if p.cp_on:
            cb.segment(seg, ())                # (a checkpoint at this segment's start, if one is due)
        nl = batch_rows(p, seg) if p.types and seg.rows is None else p.rows(seg)
        if nl is None:
            return Ahead(cb.cps, su.idx, su.end, ob.finish(False), False)
        if not su.stopped:
            su.segment_end(seg, nl)
        if progress:
            progress(reader.progress_of(seg.end), total)
    if cancel is not None and cancel():
        return Ahead(cb.cps, su.idx, su.end, ob.finish(False), False)
    return Ahead(cb.cps, su.finish(), su.end, ob.finish(True, vp), True)
