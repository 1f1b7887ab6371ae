"""Lean reads for the one background pass (:mod:`app.log.query.ahead`): rows that none of its products needs
decoded whole, recognised without building their events.

A packed chunk row (v0/v1, spec §1.4) holds up to 1024 ``assistant/chunk`` deltas.  The pass needs only its
extent: the checkpoints fold it as one :class:`~app.log.format.lazyrows.PackedBlock`, the outline counts its
members (:meth:`~app.log.query.outline.OutlineBuilder.block`), and the surface index never folds a delta.
:func:`lean_block` reads such a row through a narrow msgspec record (C-level checks of every field the codec
checks) and gives its block only when the codec would expand it cleanly: no problem, no bad row, within
Session Lens's member limit, not one read as a stream.  Any other row -- a field of another type, a key
too many or too few, invalid UTF-8, a time or seq past 2^53-1 -- gives None and takes the exact decode
(:meth:`~app.log.format.codec.RowCodec.decode_row`), which then says what is wrong with it.  Pure core.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

import msgspec

from ..format.lazyrows import PackedBlock
from ..format.model import Event
from ..index.integrity import EventChecks
from ..format.limits import MAX_PACKED_MEMBERS
from ..format.model import MAX_SAFE_INT
from ..format.packedstream import STREAM_BYTES

if TYPE_CHECKING:
    from ..index.reader import LogReader

_INT = {int}


class _TextData(msgspec.Struct, forbid_unknown_fields=True):
    turn: int
    step: int
    index: int
    dt: list[int]
    texts: list[str]


class _CallData(msgspec.Struct, forbid_unknown_fields=True):
    turn: int
    step: int
    index: int
    dt: list[int]
    id: Any                    # (the codec takes any JSON value here, and a name or none)
    args: list[str]
    name: Any = msgspec.UNSET


class _Text(msgspec.Struct, tag="text-chunks", tag_field="type", forbid_unknown_fields=True):
    seq0: int
    time0: int
    data: _TextData


class _Reasoning(msgspec.Struct, tag="reasoning-chunks", tag_field="type", forbid_unknown_fields=True):
    seq0: int
    time0: int
    data: _TextData


class _Call(msgspec.Struct, tag="tool-call-chunks", tag_field="type", forbid_unknown_fields=True):
    seq0: int
    time0: int
    data: _CallData


_decode = msgspec.json.Decoder(Union[_Text, _Reasoning, _Call]).decode


def lean_block(reader: LogReader, raw: bytes, line: Optional[int], off: int) -> Optional[PackedBlock]:
    """The :class:`PackedBlock` of a stored packed row the codec would expand cleanly (see the module doc),
    else None.  (A row under 1 MiB that fits these records is 3 levels deep: the row limits cannot refuse it.)"""
    codec = reader.codec
    if codec.version >= 2 or codec.envelope_seqs is not None or len(raw) >= STREAM_BYTES:
        return None
    try:
        row = _decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    d = row.data
    payload = d.args if isinstance(d, _CallData) else d.texts
    n, seq0 = len(payload), row.seq0
    if not n or len(d.dt) != n - 1 or seq0 < 0 or seq0 + n - 1 > MAX_SAFE_INT or n > MAX_PACKED_MEMBERS:
        return None
    if not isinstance(d, _CallData) and abs(row.time0 + sum(d.dt)) > MAX_SAFE_INT:
        return None
    return PackedBlock(d.turn, d.step, seq0, n, line, off)


class LeanChecks(EventChecks):
    """:class:`~app.log.index.integrity.EventChecks` with the common case decided at C level: an event citing a
    plain list of distinct integer seqs, all below its own, that is not a ``request/header`` (nothing to report:
    the full checks find nothing there either); every other event takes the full checks."""

    def apply(self, ev: Event) -> None:
        ses = ev.source_event_seqs
        if type(ses) is list and ses and ev.type != "request/header" and not ev.synthesized \
                and set(map(type, ses)) == _INT and max(ses) < ev.seq and len(set(ses)) == len(ses):
            return
        super().apply(ev)
