"""A row's searchable text straight from its bytes: the definition of the C ``text_row``
(``app/log/index/rowscan_c.c``, the ftsc section), and its loader.

:class:`app.log.query.extract.RowText` (the home index, the search scan) hands each row to the C
function first; it reads the rows written the plain dsh way without decoding them into Python
objects and gives the fields :func:`app.log.query.textview.shown_fields` gives, already
:func:`~app.log.query.textview.plain`. Anything unusual (not strict JSON, invalid UTF-8, an escaped
or repeated key, a float shown as text, a shape or type it does not read) is None, and the row is
decoded the exact way. :func:`text_row_py` is what the C computes, written with the one text
function; ``tests/test_textrow.py`` holds the C to it on every fixture, hostile logs and edited
rows, and the fast extraction to the exact one.

The answer (``op`` first; turn None where the row names none, time 0 where it is no integer):

* ``(NOTHING,)`` the row shows no text;
* ``(TURN, seq, time, turn)`` a turn start;
* ``(FIELDS, seq, time, turn, [(kind, text)], blocks)`` user and assistant messages, generic
  rows; ``blocks``: None or ``[(call id, tool, text)]``, an assistant message's tool-call blocks;
* ``(CALL, seq, time, turn, call id, name, text)`` a tool call;
* ``(RESULT, seq, time, turn, answered call id, text)`` a tool result;
* ``(TITLE, seq, time, turn, title)`` a session title (not plained: the caller keeps it).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional

import msgspec

from ..format.model import MAX_SAFE_INT
from ..format.payloads import value_text
from .textview import NO_PAYLOAD_TYPES, TEXT_TYPES, TOOL_OUTPUT, answered_call, event_turn, plain, shown_fields

NOTHING, TURN, FIELDS, CALL, RESULT, TITLE = range(6)
# the text types the C reads; every other text type, the types that show no payload and todo/write
# (its items are text too) are left to the exact decoder, the rest read as generic rows
READ_TYPES = frozenset({"user/message", "assistant/message", "tool/call", "tool/result", "session/title"})
SPECIAL = tuple(sorted(t.encode() for t in (TEXT_TYPES | NO_PAYLOAD_TYPES | {"todo/write"})))

TextRow = Callable[[bytes, bool], Optional[tuple[Any, ...]]]
# text_rows(data, start, end, most, max_row, legacy) -> (items, next, newlines): see rowscan_c.c
TextRows = Callable[[bytes, int, int, int, int, bool], tuple[list[tuple[Any, ...]], int, int]]


class _Ev:
    __slots__ = ("type", "data")

    def __init__(self, type: str, data: Any):
        self.type = type
        self.data = data


def legacy_shape(typ: str, d: Any) -> bool:
    """A v0/v1 row whose text the codec's §1.7 conversion changes (over-approximate)."""
    if typ in ("steering/message", "turn/end"):
        return True
    if isinstance(d, dict) and "message" not in d:
        return (typ == "assistant/message" and "content" in d) or (typ == "tool/result" and "callId" in d)
    return False


def decoded_row(raw: bytes) -> Optional[tuple[Any, int, dict[str, Any], dict[str, Any]]]:
    """(type, seq, data, the row) of a row that decodes to an object with a safe integer ``seq`` and an object
    ``data`` (the type as found: any JSON value), else None: what the interpreted definitions of the C row readers
    (:func:`text_row_py`, :func:`.find_more.more_text_py`) take from a row before reading its fields."""
    try:
        obj = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    if type(obj) is not dict:
        return None
    seq, d = obj.get("seq"), obj.get("data")
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INT or type(d) is not dict:
        return None
    return obj.get("type"), seq, d, obj


def text_row_py(raw: bytes, legacy: bool = False) -> Optional[tuple[Any, ...]]:
    """What the C ``text_row`` gives for ``raw`` where it gives anything (it may say None
    where this does not: the row is then decoded the exact way).  ``legacy``: a row of a v0/v1
    session, whose §1.7 shapes are read as the codec converts them."""
    got = decoded_row(raw)
    if got is None or type(got[0]) is not str:
        return None
    typ, seq, d, obj = got
    t = obj.get("time", 0)
    time = t if type(t) is int else 0
    ev: Any = _Ev(typ, d)
    if legacy and legacy_shape(typ, d):               # the exact reader's event, converted (spec §1.7)
        from ..format.codec import RowCodec
        from ..format.model import is_event
        items, _ = RowCodec("s", version=0).decode_row(raw)
        evs = [e for e in items if is_event(e)]
        if len(evs) != 1 or evs[0].seq != seq or evs[0].time != time:
            return None
        ev, d = evs[0], evs[0].data
    turn = event_turn(ev)
    if typ == "turn/start":
        return (TURN, seq, time, turn)
    if typ not in READ_TYPES and typ.encode() in SPECIAL:
        return None
    shown = shown_fields(ev, {})
    if not shown:
        return (NOTHING,)
    if typ == "tool/call":
        (f, call, _), = shown
        return (CALL, seq, time, turn, call, value_text(d.get("name")), plain(f.text))
    if typ == "tool/result":
        m = d.get("message") if isinstance(d, dict) else None
        if not isinstance(m, dict) or len(shown) != 1 or shown[0].field.kind != TOOL_OUTPUT:
            return None                               # (an error: left to the exact decoder)
        return (RESULT, seq, time, turn, answered_call(m), plain(shown[0].field.text))
    if typ == "session/title":
        return (TITLE, seq, time, turn, shown[0].field.text)
    fields = [(s.field.kind, plain(s.field.text)) for s in shown if not s.block]
    blocks = [(s.call, s.field.tool, plain(s.field.text)) for s in shown if s.block]
    return (FIELDS, seq, time, turn, fields, blocks or None)


_loaded = False
_text_row: Optional[TextRow] = None
_text_rows: Optional[TextRows] = None


def _load() -> None:
    global _loaded, _text_row, _text_rows
    _loaded = True
    from ..index.fastindex import load_rowscan_c
    from .extract import ERROR_ONLY_B, NO_TEXT_B
    mod = load_rowscan_c()
    if mod is not None and hasattr(mod, "text_rows"):
        mod.text_setup(SPECIAL, tuple(sorted(NO_TEXT_B)), tuple(sorted(ERROR_ONLY_B)))
        _text_row, _text_rows = mod.text_row, mod.text_rows


def text_row_c() -> Optional[TextRow]:
    """The C ``text_row`` (None where the row scanner in C is not built from this source, or
    ``SESSION_LENS_SCANNER=python``)."""
    if not _loaded:
        _load()
    return _text_row


def text_rows_c() -> Optional[TextRows]:
    """The C ``text_rows``: :func:`app.log.query.extract.candidate_rows` and ``text_row`` of each
    (None where the C is not there)."""
    if not _loaded:
        _load()
    return _text_rows

