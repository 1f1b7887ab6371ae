"""Lazy decoding for whole-log passes: packed chunk rows stay packed.

A packed row (spec §1.4) holds up to 1024 ``assistant/chunk`` deltas.  Passes that only count
and group them (``inspect``: event counts, seq contiguity, attempts) need its extent, not its
events: :func:`iter_lazy` yields a :class:`PackedBlock` for each packed row, checked exactly as
the codec checks it (:func:`~app.log.format.codec.packed_extent`), and an :class:`~app.log.format.model.Event`
for every other row.  Rows that are not well-formed packed rows go through the codec as
before, so problems and bad rows are the same as with :meth:`LogReader.iter_events`.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional, Union
from collections.abc import Callable, Iterator

from .codec import DecodeError, OverLimit, decode_json, packed_extent
from .limits import MAX_PACKED_MEMBERS, LimitError
from .packedstream import STREAM_BYTES, PackedError, open_stream
from .model import Event, Problem, is_event
from ..source.sources import RowPos

if TYPE_CHECKING:
    from ..index.integrity import EventChecks
    from ..index.reader import LogReader
    from ..source.sources import Segment


PACKED_PREFIXES = (b'{"type":"text-chunks"', b'{"type":"reasoning-chunks"', b'{"type":"tool-call-chunks"')
_PACKED_PREFIXES = PACKED_PREFIXES
_SEQ0_RE = re.compile(rb'\{"type":"[a-z-]+-chunks","seq0":(\d+),')


class PackedBlock:
    """``n`` consecutive delta chunks of (turn, step) from seq ``seq0`` (one stored packed row)."""
    __slots__ = ("turn", "step", "seq0", "n", "line", "offset")

    def __init__(self, turn: Optional[int], step: Optional[int], seq0: int, n: Optional[int],
                 line: Optional[int], offset: int) -> None:
        self.turn, self.step, self.seq0, self.n, self.line, self.offset = turn, step, seq0, n, line, offset


Lazy = Union[Event, PackedBlock]


class Cut:
    """Where a logical pass stops: the first row at or after ``pos``; ``hit`` once it is reached."""
    __slots__ = ("pos", "hit")

    def __init__(self, pos: RowPos) -> None:
        self.pos = pos
        self.hit = False

    def reached_by(self, pos: RowPos) -> bool:
        """``pos`` is at or after the cut (positions of one source are all offsets or all (frame, offset))."""
        if isinstance(pos, tuple):
            return isinstance(self.pos, tuple) and pos >= self.pos
        return isinstance(self.pos, int) and pos >= self.pos


def iter_lazy(reader: LogReader, problems: Optional[list[Problem]] = None,
              progress: Optional[Callable[[int, int], None]] = None, cut: Optional[RowPos] = None,
              unchecked: bool = False) -> Iterator[Lazy]:
    """Every stored event oldest first, a packed row as one :class:`PackedBlock` (physical face;
    ``cut``: stop at the first row at or after that position, as the logical face does)."""
    total = max(1, reader.source.size)
    stop = Cut(cut) if cut is not None else None
    for seg in reader.source.forward():
        if seg.bad and stop is not None and stop.reached_by(seg.row_pos(0)):
            return
        yield from lazy_segment(reader, seg, problems, stop, unchecked)
        if stop is not None and stop.hit:
            return
        if progress:
            progress(seg.end if isinstance(seg.end, int) else 0, total)


def lazy_segment(reader: LogReader, seg: Segment, problems: Optional[list[Problem]] = None,
                 cut: Optional[Cut] = None, unchecked: bool = False) -> Iterator[Lazy]:
    """The events of one segment, a packed row as a :class:`PackedBlock` (ends at ``cut``, setting ``cut.hit``).

    ``unchecked``: for passes that ignore chunks and problems alike (``messages``), a packed row
    written in the writer's key order is not decoded at all: its block has ``seq0`` and ``n=None``."""
    if seg.bad:
        reader.decode_segment(seg, problems)           # (the corrupt-frame problem)
        return
    for pos, off, line, raw, complete in seg.split_rows():
        if cut is not None and cut.reached_by(pos):
            cut.hit = True
            return
        yield from lazy_row(reader, pos, off, line, raw, complete, problems, unchecked)


def lazy_row(reader: LogReader, pos: RowPos, off: int, line: Optional[int], raw: bytes, complete: bool,
             problems: Optional[list[Problem]] = None, unchecked: bool = False) -> list[Lazy]:
    """The events of one stored row (as :meth:`Segment.split_rows` gives it), a packed row as one
    :class:`PackedBlock`; its problems are appended to ``problems`` (see :func:`lazy_segment`)."""
    if not complete:
        if raw and problems is not None:
            problems.append(Problem(code="torn-row", message="torn last row (no newline): an interrupted "
                                    "write", line=line, offset=off))
        return []
    if not raw.strip():
        if problems is not None:
            problems.append(Problem(code="malformed", message="empty line", line=line, offset=off))
        return []
    if raw.startswith(_PACKED_PREFIXES):
        if unchecked:
            m = _SEQ0_RE.match(raw)
            if m is not None:
                return [PackedBlock(None, None, int(m.group(1)), None, line, off)]
        try:
            big = open_stream(raw) if len(raw) >= STREAM_BYTES and reader.codec.envelope_seqs is None else None
            extent: Optional[tuple[int, int, int, int]] = (big.turn, big.step, big.seq0, big.n) if big else None
            if extent is None:                        # (a big row is read from its bytes, in bounded memory)
                obj, replaced = decode_json(raw)
                extent = packed_extent(obj) if not replaced and isinstance(obj, dict) else None
            if extent is not None:
                turn, step, seq0, n = extent
                if n > MAX_PACKED_MEMBERS and problems is not None:     # counted; Session Lens's limit, said so
                    problems.append(Problem(code="over-limit", message=str(OverLimit(seq0, n)), line=line,
                                            offset=off if off >= 0 else None, seq=seq0))
                return [PackedBlock(turn, step, seq0, n, line, off)]
        except (DecodeError, PackedError, LimitError):
            pass                                   # the codec says why, below
    items, probs = reader.codec.decode_row(raw, pos=pos, offset=off, line=line)
    if problems is not None:
        problems.extend(probs)
    return [it for it in items if is_event(it)]


# --------------------------------------------------------------------------- messages, flat memory

def _stand_in(ev: Event) -> Event:
    """What the surface fold keeps of an event it may have to show later: its type and where it
    is, no payload (:meth:`RowReader.event` reads it back from its row)."""
    return Event(seq=ev.seq, type=ev.type, time=ev.time, data=None, pos=ev.pos, line=ev.line, offset=ev.offset)


class RowReader:
    """Random access to a stored row by its position (raw: file offset; zstd: (frame, offset))."""

    def __init__(self, reader: LogReader) -> None:
        self.reader = reader
        self._frame: Optional[tuple[int, Segment]] = None   # (frame pos, FrameSegment) of the last zstd frame decoded

    def raw_at(self, pos: RowPos) -> bytes:
        from ..source.sources import RawJsonlSource
        src = self.reader.source
        if isinstance(pos, tuple):
            fpos, off = pos
            if self._frame is None or self._frame[0] != fpos:
                self._frame = (fpos, next(iter(src.forward(fpos))))
            seg = self._frame[1]
            start = off - getattr(seg, "base", 0)
            end = seg.data.find(b"\n", start)
            return seg.data[start:end if end >= 0 else len(seg.data)]
        if not isinstance(src, RawJsonlSource):
            raise TypeError(f"rows of a {src.kind} source are not read by file offset")
        want, buf = 1 << 16, b""
        while True:
            buf = src.pread(min(want, src.size - pos), pos) if pos < src.size else b""
            nl = buf.find(b"\n")
            if nl >= 0 or pos + len(buf) >= src.size:
                return buf[:nl] if nl >= 0 else buf
            want *= 4

    def event(self, node: Event) -> Event:
        raw = self.raw_at(node.pos)
        items, _ = self.reader.codec.decode_row(raw, pos=node.pos)
        for it in items:
            if isinstance(it, Event) and it.seq == node.seq:
                return it
        raise RuntimeError(f"seq {node.seq} is no longer at its stored position (the log changed)")


def iter_messages(reader: LogReader, through: Optional[int] = None, logical: bool = True,
                  checks: Optional[EventChecks] = None, as_written: bool = False) -> Iterator[dict[str, object]]:
    """``analysis.messages`` as a stream, in flat memory: the surface fold keeps each node's type
    and position only (packed rows are not even decoded), and every message is read back from
    its row when it is produced.  ``checks`` (:class:`~app.log.index.integrity.EventChecks`) sees every
    event folded (packed deltas carry nothing it checks) and is complete before the first message."""
    from ..fold.folds import SurfaceFold
    from .model import SURFACE_TYPES, event_message
    # v2+ folds project messages (v4), and a SQLite store's rows are not read back by file offset: the whole fold
    if getattr(reader, "version", 0) != 0 or reader.source.kind == "sqlite":
        from ..query.analysis import messages
        yield from messages(reader, through, logical, checks=checks, as_written=as_written)
        return
    from ..fold.v2heads import derive_as
    # a v0 log dsh reads through its migration chain: derived as the chain derives it (app.log.fold.v0chain)
    sf = derive_as(SurfaceFold(keep_events=True), reader, as_written)
    rows = RowReader(reader)
    if sf.v0 is not None:
        sf.v0.load = rows.event                 # (a replacement's target, kept as a stand-in, read back whole)
    st = reader.tail_state() if logical else None
    cut = st.cut_pos if st is not None else None
    on_disk: set[int] = set()                # nodes kept as stand-ins (read back from their rows)

    def fold(ev: Event) -> None:
        sf.apply(ev)
        if checks is not None:
            checks.apply(ev)
        if ev.seq in sf.events and ev.type in SURFACE_TYPES:
            if not ev.synthesized:           # (synthesized closers are not on disk: kept as they are)
                sf.events[ev.seq] = _stand_in(ev)
                on_disk.add(ev.seq)
            for s in sf.replaced.get(ev.seq, ()):          # shadowed: never looked up again
                sf.events.pop(s, None)
                on_disk.discard(s)

    done = False
    for ev in iter_lazy(reader, cut=cut, unchecked=True):
        if isinstance(ev, PackedBlock):
            if through is not None and ev.seq0 > through:
                done = True
                break
            continue
        if through is not None and ev.seq > through:
            done = True
            break
        fold(ev)
    if st is not None and not done:
        for ev in st.closure:
            if through is not None and ev.seq > through:
                break
            fold(ev)
    if sf.normalized():     # (the head first and rule 4 need every message: read back, then finished)
        got = [(s, sf.node_message(rows.event(sf.events[s]) if s in on_disk else sf.events[s]))
               for s in sf.message_seqs()]
        yield from (m for _s, m in sf.finish([(s, m) for s, m in got if m is not None]))
        return
    for s in sf.message_seqs():
        node = sf.events[s]
        m = event_message(rows.event(node) if s in on_disk else node)
        if m is not None:
            yield m
