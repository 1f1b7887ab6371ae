"""The light decode of a row of a v2+ log for whole-log find (pure core, no Qt): only the payload keys
:func:`~app.log.query.textview.shown_fields` reads of a text type, and only the turn of a ``turn/start`` row
(:func:`light_turn`), each held to what the codec would make of the row (:func:`light_event`).  Used by
:mod:`.find_fast` (the candidate rows) and :func:`.find_rows.turn_of_row` (the turn a hit belongs to)."""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Callable, Collection

import msgspec

from ..format.limits import MAX_DEPTH, MAX_ROW_BYTES
from ..format.model import MAX_SAFE_INT
from ..format.versions import DATA_TYPE
from ..index.fastindex import load_rowscan_c
from .textview import event_turn

# the text types whose fields shown_fields reads from the keys of _Data only
LIGHT_TYPES = frozenset({"user/message", "assistant/message", "tool/call", "tool/result", "session/title",
                         "system/message", "developer/message", "compaction/summary"})
LIGHT_B = frozenset(t.encode() for t in LIGHT_TYPES)
TYPE_FIRST = b'{"type":"'              # how dsh writes a row: its type first (any other row: decoded to see)
_UNSET: Any = msgspec.UNSET


def brackets_py(raw: bytes) -> int:
    """The definition of ``rowscan_c.brackets``: the ``[`` and ``{`` of ``raw`` (an upper bound of its nesting)."""
    return raw.count(b"[") + raw.count(b"{")


brackets: Callable[[bytes], int] = getattr(load_rowscan_c(), "brackets", None) or brackets_py


class _Data(msgspec.Struct):
    """The keys of a text type's payload :func:`~app.log.query.textview.shown_fields` reads (others skipped)."""
    turn: Any = _UNSET
    message: Any = _UNSET
    content: Any = _UNSET
    name: Any = _UNSET
    callId: Any = _UNSET
    arguments: Any = _UNSET
    error: Any = _UNSET
    title: Any = _UNSET
    summary: Any = _UNSET


class _Row(msgspec.Struct):
    type: str
    data: _Data
    seq: Any = _UNSET
    seq0: Any = _UNSET


_DECODE_ROW = msgspec.json.Decoder(_Row).decode
_KEYS = _Data.__struct_fields__


class _Ev:
    """What ``shown_fields`` and ``event_turn`` read of an event: its type and payload."""
    __slots__ = ("type", "data")

    def __init__(self, typ: str, data: dict[str, Any]):
        self.type, self.data = typ, data


def light_event(raw: bytes, envelope_seqs: Optional[dict[object, int]] = None,
                pos: object = None, types: Collection[str] = LIGHT_TYPES,
                types_b: Collection[bytes] = LIGHT_B) -> Optional[tuple[int, Any]]:
    """(seq, event) of a row of a v2+ log whose fields the exact decoder reads alike, decoded only as far as
    ``shown_fields`` reads a text type (:class:`_Data`); None where the exact way is needed: a row over the
    limits, not JSON (or invalid UTF-8), no valid seq or payload object, a packed row, a type shown as a
    generic row (its whole payload), or a payload key of a type the codec drops (``field_problems``).
    ``envelope_seqs``: the codec's, for a row written without its seq (at ``pos``); ``types`` (and their bytes
    ``types_b``): the types read this way."""
    if raw.startswith(TYPE_FIRST) and raw[9:raw.find(b'"', 9)] not in types_b:
        return None                                # (another type: no payload decoded in vain)
    if len(raw) > MAX_ROW_BYTES or (len(raw) > MAX_DEPTH and brackets(raw) > MAX_DEPTH):
        return None                                # (the codec's limits: check_row)
    try:
        row = _DECODE_ROW(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    seq, typ = row.seq, row.type
    if envelope_seqs is not None and seq is _UNSET and row.seq0 is _UNSET and pos in envelope_seqs:
        seq = envelope_seqs[pos]                   # (an envelope-free snapshot: the seq the codec restores)
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INT or typ not in types:
        return None
    d = row.data
    data = {k: v for k in _KEYS if (v := getattr(d, k)) is not _UNSET}
    try:
        msgspec.convert(data, DATA_TYPE)
    except msgspec.ValidationError:
        return None
    return seq, _Ev(typ, data)


TURN_TYPES = frozenset({"turn/start"})
TURN_B = frozenset({b"turn/start"})
NO_TURN: Any = object()            # :func:`light_turn`: the row is left to the codec


def light_turn(raw: bytes, envelope_seqs: Optional[dict[object, int]] = None, pos: object = None) -> Any:
    """The turn a ``turn/start`` row names as the codec's event would (None: it names none), read the light way
    (:func:`light_event`); :data:`NO_TURN` where the codec must decode it (any other row, or one the light way
    refuses)."""
    le = light_event(raw, envelope_seqs, pos, TURN_TYPES, TURN_B)
    return NO_TURN if le is None else event_turn(le[1])
