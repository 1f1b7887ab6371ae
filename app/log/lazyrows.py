"""Lazy decoding for whole-log passes: packed chunk rows stay packed.

A packed row (spec §1.4) holds up to 1024 ``assistant/chunk`` deltas.  Passes that only count
and group them (``inspect``: event counts, seq contiguity, attempts) need its extent, not its
events: :func:`iter_lazy` yields a :class:`PackedBlock` for each packed row, checked exactly as
the codec checks it (:func:`~app.log.codec.packed_extent`), and an :class:`~app.log.model.Event`
for every other row.  Rows that are not well-formed packed rows go through the codec as
before, so problems and bad rows are the same as with :meth:`LogReader.iter_events`.
"""
from __future__ import annotations

import re
from typing import Optional
from collections.abc import Callable, Iterator

from .codec import DecodeError, decode_json, packed_extent
from .model import Problem, is_event

_PACKED_PREFIXES = (b'{"type":"text-chunks"', b'{"type":"reasoning-chunks"', b'{"type":"tool-call-chunks"')
_SEQ0_RE = re.compile(rb'\{"type":"[a-z-]+-chunks","seq0":(\d+),')


class PackedBlock:
    """``n`` consecutive delta chunks of (turn, step) from seq ``seq0`` (one stored packed row)."""
    __slots__ = ("turn", "step", "seq0", "n", "line", "offset")

    def __init__(self, turn, step, seq0, n, line, offset):
        self.turn, self.step, self.seq0, self.n, self.line, self.offset = turn, step, seq0, n, line, offset


def iter_lazy(reader, problems: Optional[list] = None,
              progress: Optional[Callable[[int, int], None]] = None, cut=None, unchecked: bool = False) -> Iterator:
    """Every stored event oldest first, a packed row as one :class:`PackedBlock` (physical face;
    ``cut``: stop at the first row at or after that position, as the logical face does)."""
    total = max(1, reader.source.size)
    for seg in reader.source.forward():
        if seg.bad and cut is not None and seg.row_pos(0) >= cut:
            return
        for it in lazy_segment(reader, seg, problems, cut, unchecked):
            if it is _CUT:
                return
            yield it
        if progress:
            progress(seg.end if isinstance(seg.end, int) else 0, total)


_CUT = object()


def lazy_segment(reader, seg, problems: Optional[list] = None, cut=None, unchecked: bool = False) -> Iterator:
    """The events of one segment, a packed row as a :class:`PackedBlock` (``_CUT`` at ``cut``).

    ``unchecked``: for passes that ignore chunks and problems alike (``messages``), a packed row
    written in the writer's key order is not decoded at all: its block has ``seq0`` and ``n=None``."""
    codec = reader.codec
    if seg.bad:
        reader.decode_segment(seg, problems)           # (the corrupt-frame problem)
        return
    for pos, off, line, raw, complete in seg.split_rows():
        if cut is not None and pos >= cut:
            yield _CUT
            return
        if not complete:
            if raw and problems is not None:
                problems.append(Problem(code="torn-row", message="torn last row (no newline): an interrupted "
                                        "write", line=line, offset=off))
            continue
        if not raw.strip():
            if problems is not None:
                problems.append(Problem(code="malformed", message="empty line", line=line, offset=off))
            continue
        if raw.startswith(_PACKED_PREFIXES):
            if unchecked:
                m = _SEQ0_RE.match(raw)
                if m is not None:
                    yield PackedBlock(None, None, int(m.group(1)), None, line, off)
                    continue
            try:
                obj, replaced = decode_json(raw)
                if not replaced and isinstance(obj, dict):
                    turn, step, seq0, n = packed_extent(obj)
                    yield PackedBlock(turn, step, seq0, n, line, off)
                    continue
            except DecodeError:
                pass                                   # the codec says why, below
        items, probs = codec.decode_row(raw, pos=pos, offset=off, line=line)
        if problems is not None:
            problems.extend(probs)
        for it in items:
            if is_event(it):
                yield it


# --------------------------------------------------------------------------- messages, flat memory

class _Node:
    """What the surface fold keeps of an event it may have to show later: its type and where it is."""
    __slots__ = ("type", "seq", "pos")

    def __init__(self, type_, seq, pos):
        self.type, self.seq, self.pos = type_, seq, pos


class RowReader:
    """Random access to a stored row by its position (raw: file offset; zstd: (frame, offset))."""

    def __init__(self, reader):
        self.reader = reader
        self._frame = None                   # (frame pos, FrameSegment) of the last zstd frame decoded

    def raw_at(self, pos) -> bytes:
        src = self.reader.source
        if isinstance(pos, tuple):
            fpos, off = pos
            if self._frame is None or self._frame[0] != fpos:
                seg = next(iter(src.forward(fpos)))
                self._frame = (fpos, seg)
            seg = self._frame[1]
            start = off - getattr(seg, "base", 0)
            end = seg.data.find(b"\n", start)
            return seg.data[start:end if end >= 0 else len(seg.data)]
        want, buf = 1 << 16, b""
        while True:
            buf = src._pread(min(want, src.size - pos), pos) if pos < src.size else b""
            nl = buf.find(b"\n")
            if nl >= 0 or pos + len(buf) >= src.size:
                return buf[:nl] if nl >= 0 else buf
            want *= 4

    def event(self, node: _Node):
        raw = self.raw_at(node.pos)
        items, _ = self.reader.codec.decode_row(raw, pos=node.pos)
        for it in items:
            if is_event(it) and it.seq == node.seq:
                return it
        raise RuntimeError(f"seq {node.seq} is no longer at its stored position (the log changed)")


def iter_messages(reader, through: Optional[int] = None, logical: bool = True, checks=None) -> Iterator[dict]:
    """``analysis.messages`` as a stream, in flat memory: the surface fold keeps each node's type
    and position only (packed rows are not even decoded), and every message is read back from
    its row when it is produced.  ``checks`` (:class:`~app.log.integrity.EventChecks`) sees every
    event folded (packed deltas carry nothing it checks) and is complete before the first message."""
    from .folds import SurfaceFold
    from .model import SURFACE_TYPES, event_message
    if getattr(reader, "version", 0) != 0:        # v2+ folds project messages (v4): the whole fold
        from .analysis import messages
        yield from messages(reader, through, logical, checks=checks)
        return
    sf = SurfaceFold(keep_events=True)
    st = reader.tail_state() if logical else None
    cut = st.cut_pos if st is not None else None
    kept: dict = {}                          # synthesized closers: kept as they are (not on disk)

    def fold(ev):
        sf.apply(ev)
        if checks is not None:
            checks.apply(ev)
        if ev.seq in sf.events and ev.type in SURFACE_TYPES:
            if ev.synthesized:
                kept[ev.seq] = ev
            else:
                sf.events[ev.seq] = _Node(ev.type, ev.seq, ev.pos)
            for s in sf.replaced.get(ev.seq, ()):          # shadowed: never looked up again
                sf.events.pop(s, None)

    done = False
    for ev in iter_lazy(reader, cut=cut, unchecked=True):
        if type(ev) is PackedBlock:
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
    rows = RowReader(reader)
    for s in sf.message_seqs():
        node = sf.events[s]
        ev = kept.get(s) if type(node) is not _Node else rows.event(node)
        m = event_message(ev)
        if m is not None:
            yield m
