"""Lazy decoding for whole-log passes: packed chunk rows stay packed.

A packed row (spec §1.4) holds up to 1024 ``assistant/chunk`` deltas.  Passes that only count
and group them (``inspect``: event counts, seq contiguity, attempts) need its extent, not its
events: :func:`iter_lazy` yields a :class:`PackedBlock` for each packed row, checked exactly as
the codec checks it (:func:`~app.log.codec.packed_extent`), and an :class:`~app.log.model.Event`
for every other row.  Rows that are not well-formed packed rows go through the codec as
before, so problems and bad rows are the same as with :meth:`LogReader.iter_events`.
"""
from __future__ import annotations

from typing import Callable, Iterator, Optional

from .codec import DecodeError, decode_json, packed_extent
from .model import Problem, is_event

_PACKED_PREFIXES = (b'{"type":"text-chunks"', b'{"type":"reasoning-chunks"', b'{"type":"tool-call-chunks"')


class PackedBlock:
    """``n`` consecutive delta chunks of (turn, step) from seq ``seq0`` (one stored packed row)."""
    __slots__ = ("turn", "step", "seq0", "n", "line", "offset")

    def __init__(self, turn, step, seq0, n, line, offset):
        self.turn, self.step, self.seq0, self.n, self.line, self.offset = turn, step, seq0, n, line, offset


def iter_lazy(reader, problems: Optional[list] = None,
              progress: Optional[Callable[[int, int], None]] = None) -> Iterator:
    """Every stored event oldest first, a packed row as one :class:`PackedBlock` (physical face)."""
    codec = reader.codec
    total = max(1, reader.source.size)
    for seg in reader.source.forward():
        if seg.bad:
            reader.decode_segment(seg, problems)       # (the corrupt-frame problem)
            continue
        for pos, off, line, raw, complete in seg.split_rows():
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
        if progress:
            progress(seg.end if isinstance(seg.end, int) else 0, total)
