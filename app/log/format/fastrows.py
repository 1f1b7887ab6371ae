"""Rows decoded straight into lean typed records, for whole-log passes that only count and group (``inspect``).

The exact path of a row (:func:`app.log.format.lazyrows.lazy_row`: ``decode_json`` of the whole row into dicts,
:meth:`~app.log.format.codec.RowCodec.decode_row` with its envelope checks, legacy conversions and
:func:`~app.log.format.versions.field_problems`, then :func:`~app.log.format.model.typed`) builds every payload as
Python objects and walks it several times.  Most rows of a real log are well-formed rows of a dozen
event types, and a pass like ``inspect`` reads a few fields of them.  Here each such type has a
msgspec Struct per row shape (:func:`decoders`) that accepts a row only when the exact path would
read it **with no problem, no conversion and no dropped field**, and that keeps only the fields the
pass reads (the rest of the row is parsed, validated as JSON and skipped, never built):

* the envelope: exactly the envelope keys, a ``seq`` in 0..2^53-1, an integer ``time``, ``data``
  present; ``surfaceOp``/``sourceEventSeqs`` absent on non-surface events (else a fold violation), a
  surface event an ``append`` with a plain seq list (a replacement goes the exact way);
* ``data``: every field the hostile-type table of :mod:`app.log.format.versions` checks, with the type it
  allows (or a stricter one), intersected with the typed payload of :mod:`app.log.format.model` (required
  fields required); a legacy shape (v0/v1, spec §1.7) is refused by the Struct (a user message without
  ``id``, a ``turn/start`` with ``trigger``, a message row without ``message``) or by the caller (a
  ``turn/end`` reason to convert);
* packed chunk rows (``text-chunks``, ``reasoning-chunks``, ``tool-call-chunks`` written in the
  writer's key order): exactly the keys :func:`~app.log.format.codec.packed_extent` checks, with its types;
  its count checks are made by :func:`packed_members`.

What the Struct cannot see is checked per row before it is used (:func:`row_refused`, :func:`refused_rows`: the
screen of :mod:`app.log.format.rowscreen`): the row-size and nesting-depth limits of :mod:`app.log.format.limits`
(msgspec does not bound the depth of the values it skips), valid UTF-8 (msgspec does not validate the strings it
skips) and no number outside strings with an exponent or more than 18 digits (msgspec does not parse the numbers
it skips, where the exact decoder refuses ``1e999``).  A row refused anywhere goes
the exact way, in its place, so problems come out in the same order.  ``tests/test_fastrows.py``
checks that every fixture, generated log and hostile row gives the same answer both ways.
"""
from __future__ import annotations

import functools
from itertools import accumulate, compress, count, repeat
from operator import add, lt, not_
from typing import Annotated, Any, Literal, Optional, cast, get_args
from collections.abc import Callable

import msgspec

from . import rowscreen
from .limits import MAX_DEPTH, MAX_PACKED_MEMBERS, MAX_ROW_BYTES
from .model import MAX_SAFE_INT, TYPED
from .versions import DATA_TYPE, known_types

# kinds of record (class attribute ``K``; ``T``: its type): what a pass does with it; kinds from ``CHECKED`` on
# have checks the Struct cannot make (the caller's)
PACKED_TEXT, PACKED_CALL, CHUNK, STEP, PLAIN, TURN_START, RETRY, ATTEMPT, CHECKED, MESSAGE, SURFACE, TURN_END = range(12)

_REQ = msgspec.NODEFAULT
_Seq = Annotated[int, msgspec.Meta(ge=0, le=MAX_SAFE_INT)]


def _inner_struct(t: Any) -> Any:
    """The Struct inside an annotation of the generated data type (``Optional[S]``, ``list[Optional[S]]``,
    ``Union[S, str, None]``)."""
    for a in get_args(t) or (t,):
        if isinstance(a, type) and issubclass(a, msgspec.Struct):
            return a
        if get_args(a):
            s = _inner_struct(a)
            if s is not None:
                return s
    return None


def _lean(label: str, base: Any, **over: tuple[Any, Any]) -> Any:
    """A Struct with the fields of the generated ``base`` (each with the JSON types the hostile-type table
    allows there, absent = null) and the fields in ``over`` ((type, default); default ``_REQ``: required)."""
    fields: dict[str, tuple[Any, Any]] = {f.name: (f.type, f.default) for f in msgspec.structs.fields(base)}
    fields.update(over)
    spec = [(k, t) if d is _REQ else (k, t, d) for k, (t, d) in fields.items()]
    return msgspec.defstruct(label, spec, kw_only=True, gc=False)


_F = {f.name: f.type for f in msgspec.structs.fields(DATA_TYPE)}
_DataMessage = _inner_struct(_F["message"])
_MF = {f.name: f.type for f in msgspec.structs.fields(_DataMessage)}
_MessageBlock = _inner_struct(_MF["content"])
_MessageSource = _inner_struct(_MF["source"])
_DataBlock = _inner_struct(_F["content"])
_DataSource = _inner_struct(_F["source"])
_DataChunk = _inner_struct(_F["chunk"])
_DataStreamItem = _inner_struct(_F["stream"])



def _list_of(t: Any) -> Any:
    """``list[t]`` of a Struct made at run time (for msgspec; mypy sees Any)."""
    return cast(Any, list)[t]


def _opt(t: Any) -> Any:
    return cast(Any, Optional)[t]


# model.Message (role, content, id, source) with the table's message fields
_Message = _lean("_FastMessage", _DataMessage, role=(str, _REQ), content=(_list_of(_MessageBlock), _REQ),
                 id=(Optional[str], None), source=(Optional[_MessageSource], None))
# a chunk: the table's fields and what the attempt tracker reads
_Chunk = _lean("_FastChunk", _DataChunk, reason=(Any, None), usage=(Any, None))


class _StreamChunk(msgspec.Struct, kw_only=True, gc=False):
    """A stream record's chunk (any object): what :func:`~app.log.format.versions.stream_summary` reads."""
    type: Any = None
    reason: Any = None
    usage: Any = None


_StreamItem = _lean("_FastStreamItem", _DataStreamItem, chunk=(Optional[_StreamChunk], None), texts=(Any, None),
                    args=(Any, None))
_TurnStep = {"turn": (int, _REQ), "step": (int, _REQ)}


def _data(tag: str, **over: tuple[Any, Any]) -> Any:
    """The data Struct of event type ``tag``: the table's fields and ``over``; a core type's payload (``typed``)
    is a tagged Struct, which refuses a payload whose own ``type`` key is not the event's type."""
    if tag in TYPED:
        over["type"] = (cast(Any, Literal)[tag], tag)
    return _lean(f"_Fast_{tag}", DATA_TYPE, **over)


_STREAM = (_list_of(_StreamItem), _REQ)
# per event type: (kind, data Struct, surface event)
_EVENTS: dict[str, tuple[int, Any, bool]] = {
    # turn/start: a v0/v1 ``trigger`` is a legacy shape (never accepted here)
    "turn/start": (TURN_START, _data("turn/start", turn=(int, _REQ), trigger=(msgspec.UnsetType, msgspec.UNSET)), False),
    "turn/end": (TURN_END, _data("turn/end", turn=(int, _REQ), reason=(dict, _REQ)), False),
    "step/start": (STEP, _data("step/start", **_TurnStep), False),
    "step/end": (STEP, _data("step/end", **_TurnStep), False),
    "assistant/chunk": (CHUNK, _data("assistant/chunk", chunk=(_Chunk, _REQ), **_TurnStep), False),
    "assistant/message": (MESSAGE, _data("assistant/message", message=(_Message, _REQ), interrupted=(Optional[bool], None),
                                         stream=(_opt(_list_of(_StreamItem)), None), **_TurnStep), True),
    "assistant/attempt": (ATTEMPT, _data("assistant/attempt", stream=_STREAM), False),
    "tool/result": (SURFACE, _data("tool/result", message=(_Message, _REQ), error=(Optional[dict], None), **_TurnStep),
                    True),
    # user/message: no ``id`` is a legacy shape (v0/v1): required here
    "user/message": (SURFACE, _data("user/message", role=(str, _REQ), content=(_list_of(_DataBlock), _REQ),
                                    id=(Optional[str], _REQ), source=(Optional[_DataSource], None)), True),
    "tool/call": (PLAIN, _data("tool/call", callId=(str, _REQ), name=(str, _REQ), arguments=(str, _REQ), **_TurnStep),
                  False),
    "todo/write": (PLAIN, _data("todo/write", todos=(list, _REQ)), False),
    "agent/inbox/spliced": (PLAIN, _data("agent/inbox/spliced"), False),
    "llm/retry": (RETRY, _data("llm/retry", retry=(Any, None)), False),
    "llm/retry-started": (RETRY, _data("llm/retry-started", retry=(Any, None)), False),
}


def _row(tag: str, kind: int, data: Any, surface: bool) -> Any:
    """The envelope of one event type: exactly the envelope keys; ``surfaceOp``/``sourceEventSeqs`` only on
    a surface event (an append citing plain seqs)."""
    op: tuple[Any, ...] = ("surfaceOp", Literal["append"]) if surface else ("surfaceOp", None, None)
    ses: tuple[Any, ...] = ("sourceEventSeqs", Optional[list[int]], None) if surface else \
        ("sourceEventSeqs", None, None)
    return msgspec.defstruct(f"_Row_{tag}", [("seq", _Seq), ("data", data), ("time", int, 0), ("ignorable", Any, None),
                                             op, ses],
                             tag_field="type", tag=tag, forbid_unknown_fields=True, kw_only=True, gc=False,
                             namespace={"K": kind, "T": tag})


def _packed(tag: str, call: bool) -> Any:
    """A packed chunk row: exactly ``type, seq0, time0, data`` and exactly the data keys of its tag."""
    if call:
        data = msgspec.defstruct("_FastPackedCall", [("turn", int), ("step", int), ("index", int), ("dt", list[int]),
                                                     ("id", Any), ("args", list[str]), ("name", Any, None)],
                                 forbid_unknown_fields=True, kw_only=True, gc=False)
    else:
        data = msgspec.defstruct("_FastPackedText", [("turn", int), ("step", int), ("index", int), ("dt", list[int]),
                                                     ("texts", list[str])],
                                 forbid_unknown_fields=True, kw_only=True, gc=False)
    return msgspec.defstruct(f"_Row_{tag}", [("seq", Annotated[int, msgspec.Meta(ge=0)], msgspec.field(name="seq0")),
                                             ("time0", int), ("data", data)],
                             tag_field="type", tag=tag, forbid_unknown_fields=True, kw_only=True, gc=False,
                             namespace={"K": PACKED_CALL if call else PACKED_TEXT, "T": tag})


_PACKED = {tag: _packed(tag, tag == "tool-call-chunks") for tag in ("text-chunks", "reasoning-chunks",
                                                                      "tool-call-chunks")}
_ROWS = {tag: _row(tag, k, d, s) for tag, (k, d, s) in _EVENTS.items()}


@functools.cache
def decoders(version: int) -> dict[bytes, Callable[[bytes], Any]]:
    """Row type (as the bytes after ``{"type":"``) -> the decoder of its lean record, for the event types
    a log of ``version`` knows (a packed row: for any version, as :func:`~app.log.format.lazyrows.lazy_row`
    reads one)."""
    known = known_types(version)
    out: dict[bytes, Callable[[bytes], Any]] = {tag.encode(): msgspec.json.Decoder(t).decode for tag, t in _ROWS.items() if tag in known}
    out.update({tag.encode(): msgspec.json.Decoder(t).decode for tag, t in _PACKED.items()})
    return out


# the timeline's records (app/log/query/timeline_rows.py): the same Structs (so the same rows accepted) with the
# fields its spans read besides, each of any JSON type (never a reason to refuse a row)
_TlBlock = _lean("_TlBlock", _MessageBlock, isError=(Any, None))
_TlMessage = _lean("_TlMessage", _DataMessage, role=(str, _REQ), content=(_list_of(_TlBlock), _REQ),
                   id=(Optional[str], None), source=(Optional[_MessageSource], None), isError=(Any, None))
# (and a stream record's ``dt`` only of integers: one of other values is refused, and its row goes the exact way)
_TlStreamItem = _lean("_TlStreamItem", _DataStreamItem, chunk=(Optional[_StreamChunk], None), texts=(Any, None),
                      args=(Any, None), dt=(Optional[list[int]], None))
_TL_OVER: dict[str, dict[str, tuple[Any, Any]]] = {
    "tool/result": {"message": (_TlMessage, _REQ), "error": (Optional[dict], None), **_TurnStep},
    "llm/retry": {"retry": (Any, None), "delayMs": (Any, None), "failure": (Any, None)},
    "assistant/message": {"message": (_Message, _REQ), "interrupted": (Optional[bool], None),
                          "stream": (_opt(_list_of(_TlStreamItem)), None), **_TurnStep},
    "assistant/attempt": {"stream": (_list_of(_TlStreamItem), _REQ)},
}


@functools.cache
def timeline_decoders(version: int) -> dict[bytes, Callable[[bytes], Any]]:
    """:func:`decoders` with the records of :data:`_TL_OVER` widened by the fields the timeline reads."""
    out = dict(decoders(version))
    for tag, over in _TL_OVER.items():
        if tag.encode() in out:
            k, _d, surface = _EVENTS[tag]
            out[tag.encode()] = msgspec.json.Decoder(_row(tag, k, _data(tag, **over), surface)).decode
    return out


# the background pass's records of the settlement rows (issue 29: most of a v2+ log's bytes are their embedded
# streams' runs): the same rows accepted as :func:`decoders`' records accept, but each stream record's ``texts``,
# ``args`` and ``dt`` left as raw JSON (validated as JSON by msgspec, never built), counted in C by
# :func:`pass_stream`, which also makes the one check of theirs the Structs made (a ``dt`` null or an array)
_NULL = msgspec.Raw(b"null")
_PassStreamItem = _lean("_PassStreamItem", _DataStreamItem, chunk=(Optional[_StreamChunk], None),
                        texts=(msgspec.Raw, _NULL), args=(msgspec.Raw, _NULL), dt=(msgspec.Raw, _NULL))
_PASS_OVER: dict[str, dict[str, tuple[Any, Any]]] = {
    "assistant/message": {"message": (_Message, _REQ), "interrupted": (Optional[bool], None),
                          "stream": (_opt(_list_of(_PassStreamItem)), None), **_TurnStep},
    "assistant/attempt": {"stream": (_list_of(_PassStreamItem), _REQ)},
}


@functools.cache
def pass_decoders(version: int) -> dict[bytes, Callable[[bytes], Any]]:
    """:func:`decoders` with the settlement rows' records of :data:`_PASS_OVER` (read with :func:`pass_stream`)."""
    out = dict(decoders(version))
    for tag, over in _PASS_OVER.items():
        if tag.encode() in out:
            k, _d, surface = _EVENTS[tag]
            out[tag.encode()] = msgspec.json.Decoder(_row(tag, k, _data(tag, **over), surface)).decode
    return out


def count_py(raw: Any) -> int:
    """The elements of the JSON array ``raw`` (valid JSON), -1 when it is not an array (the C ``tl_count``)."""
    v = msgspec.json.decode(bytes(memoryview(raw)))
    return len(v) if isinstance(v, list) else -1


@functools.cache
def _count_fn() -> Callable[[Any], int]:
    from ..index.fastindex import load_rowscan_c      # (the row scanner's C module, where built; loaded on first use:
    # the index package imports this one)
    got: Optional[Callable[[Any], int]] = getattr(load_rowscan_c(), "tl_count", None)
    return got if got is not None else count_py


def pass_stream(stream: list[Any]) -> Optional[tuple[int, Optional[dict[str, Any]], Any]]:
    """:func:`stream_summary` of a stream of :func:`pass_decoders`' records, None when a record's ``dt`` is neither
    null nor an array (:func:`decoders`' record refuses that row)."""
    count = _count_fn()
    return _summed(stream, lambda rec, field: count(rec.args if field == "args" else rec.texts), True)


def packed_members(rec: Any) -> int:
    """Members of a decoded packed row, or 0 when :func:`~app.log.format.codec.packed_extent` would refuse it."""
    d = rec.data
    payload = d.args if rec.K == PACKED_CALL else d.texts
    n = len(payload)
    if not 0 < n <= MAX_PACKED_MEMBERS or len(d.dt) != n - 1 or rec.seq + n - 1 > MAX_SAFE_INT:
        return 0
    if rec.K == PACKED_TEXT and abs(rec.time0 + sum(d.dt)) > MAX_SAFE_INT:
        return 0
    return n


def usage_ok(u: Optional[dict[str, Any]]) -> bool:
    """``usage`` as :class:`app.log.format.model.Usage` accepts it (integers; the two counts never null)."""
    if u is None:
        return True
    for k in ("inputTokens", "outputTokens"):
        if k in u and type(u[k]) is not int:
            return False
    for k in ("cacheReadTokens", "cacheWriteTokens", "reasoningTokens"):
        v = u.get(k)
        if v is not None and type(v) is not int:
            return False
    return True


def turn_end_legacy(reason: dict[str, Any]) -> bool:
    """A v0/v1 ``turn/end`` reason object that the codec converts (spec §1.7)."""
    kind = reason.get("kind")
    return (kind == "aborted" and "reason" not in reason) or kind == "disposed" or \
        (kind == "error" and isinstance(reason.get("error"), str))


STREAM_RUNS = {"text-chunks": "texts", "reasoning-chunks": "texts", "tool-call-chunks": "args"}


def stream_summary(stream: list[Any]) -> tuple[int, Optional[dict[str, Any]], Any]:
    """(chunks, finish reason, usage) of a decoded embedded stream, as
    :func:`app.log.format.versions.stream_summary` sums them."""
    got = _summed(stream, _run_len, False)
    assert got is not None                     # (only a checked ``dt`` refuses)
    return got


def _run_len(rec: Any, field: str) -> int:
    payload = getattr(rec, field)
    return len(payload) if isinstance(payload, list) else 0


def _summed(stream: list[Any], run_len: Callable[[Any, str], int], check_dt: bool
            ) -> Optional[tuple[int, Optional[dict[str, Any]], Any]]:
    """:func:`stream_summary` with a run record's chunks counted by ``run_len(record, field)``; ``check_dt``: a
    record's raw ``dt`` must be null or an array (:func:`pass_stream`'s records), else None."""
    chunks = 0
    finish: Optional[dict[str, Any]] = None
    usage: Any = None
    for rec in stream:
        if check_dt:
            dt = rec.dt
            if dt is not _NULL and memoryview(dt)[0] != 91 and dt != _NULL:     # (91: "[", an array)
                return None
        rt = rec.type
        if rt == "chunk":
            c = rec.chunk
            if c is None:
                continue
            chunks += 1
            ct = c.type
            if ct == "finish":
                r = c.reason
                finish = r if isinstance(r, dict) else {"kind": str(r)}
            elif ct == "usage":
                usage = c.usage
            continue
        field = STREAM_RUNS.get(rt) if isinstance(rt, str) else None
        if field is None:
            continue
        n = run_len(rec, field)
        if n > 0:
            chunks += n
    return chunks, finish, usage


# ----------------------------------------------------------------------------- the row checks msgspec cannot make

_NOT_DEPTH = bytes(c for c in range(256) if c not in b'"[]{}')
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def json_depth(raw: bytes) -> int:
    """Deepest array/object nesting of ``raw``, exact when ``raw`` is valid JSON (the only rows this is
    asked about are then decoded, and refused when they are not JSON).  In JSON text a backslash occurs
    only in a string, starting an escape: with the escaped backslashes and then the escaped quotes cut
    out, every quote left opens or closes a string, so the text between quotes 1-2, 3-4, ... is string
    content and the rest is structure."""
    s = raw.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_DEPTH)
    steps = b"".join(s.split(b'"')[::2]).translate(_STEPS, _NOT_BRACKETS)
    return max(0, max(accumulate(memoryview(steps).cast("b")), default=0))


def refused_rows(rows: list[bytes], ascii_known: bool) -> set[int]:
    """Indexes of the rows the screen refuses (:func:`app.log.format.rowscreen.refused_py`: over the size or depth
    limit, not valid UTF-8, a number outside strings the exact decoder may refuse), in C where built; else
    (``ascii_known``: all rows are ASCII) each test one C-level loop over all rows."""
    screen = rowscreen.c_screens()[1]
    if screen is not None:
        return set(screen(rows, MAX_ROW_BYTES, MAX_DEPTH))
    out: set[int] = rowscreen.hinted(rows)
    if rows and max(map(len, rows)) > MAX_ROW_BYTES:
        out.update(i for i, r in enumerate(rows) if len(r) > MAX_ROW_BYTES)
    opens = map(add, map(bytes.count, rows, repeat(b"[")), map(bytes.count, rows, repeat(b"{")))
    for i in compress(count(), map(lt, repeat(MAX_DEPTH), opens)):
        if i not in out and json_depth(rows[i]) > MAX_DEPTH:
            out.add(i)
    if not ascii_known:
        for i in compress(count(), map(not_, map(bytes.isascii, rows))):
            try:
                rows[i].decode("utf-8")
            except UnicodeDecodeError:
                out.add(i)
    return out


_NOT_OPENS = bytes(c for c in range(256) if c not in b"[{\n")


def refused_split(data: bytes, rows: list[bytes]) -> set[int]:
    """:func:`refused_rows` of ``rows``, the rows of ``data`` (``data.split(b"\\n")`` less its last piece), each
    test one C-level pass over ``data``: the opening brackets of every row counted at once, the UTF-8 of the whole
    checked at once (a newline byte is never part of a multi-byte sequence: ``data`` is valid iff every row is);
    in C where built, row by row."""
    screen = rowscreen.c_screens()[1]
    if screen is not None:
        return set(screen(rows, MAX_ROW_BYTES, MAX_DEPTH))
    out: set[int] = rowscreen.hinted(rows)
    if len(data) > MAX_ROW_BYTES:
        out.update(i for i, r in enumerate(rows) if len(r) > MAX_ROW_BYTES)
    opens = data.translate(None, _NOT_OPENS).split(b"\n")
    for i in compress(count(), map(lt, repeat(MAX_DEPTH), map(len, opens))):
        if i < len(rows) and i not in out and json_depth(rows[i]) > MAX_DEPTH:
            out.add(i)
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            out |= refused_rows(rows, False)
    return out


def record_ok(rec: Any, legacy: bool) -> bool:
    """The checks of a decoded event record (kind ``CHECKED`` or above) that its Struct cannot make:
    its ``sourceEventSeqs`` point strictly backwards and repeat no seq (``EventChecks``), a message's
    usage is :class:`~app.log.format.model.Usage`, a v0/v1 (``legacy``) turn/end reason needs no conversion."""
    k = rec.K
    if k in (MESSAGE, SURFACE):
        ses = rec.sourceEventSeqs
        if ses and (max(ses) >= rec.seq or len(set(ses)) != len(ses)):
            return False
        return k != MESSAGE or usage_ok(rec.data.usage)
    if k == TURN_END and legacy:
        return not turn_end_legacy(rec.data.reason)
    return True


def row_refused(raw: bytes) -> bool:
    """``bool(refused_rows([raw], False))``: the screen of one row, the test every fast path makes before it reads a
    row from a lean record (in C where built)."""
    screen = rowscreen.c_screens()[0]
    if screen is not None:
        return screen(raw, MAX_ROW_BYTES, MAX_DEPTH)
    return bool(refused_rows([raw], False))


def record_of(decs: dict[bytes, Callable[[bytes], Any]], raw: bytes, legacy: bool) -> Any:
    """The lean record of one stored row, read by ``decs`` (row type -> lean decoder, some of
    :func:`decoders`), when the row passes the screen, decodes and passes :func:`record_ok`; else None (the
    row takes the exact way).  A packed row's members are the caller's to check (each pass has its rule)."""
    dec = decs.get(raw[9:raw.find(b'"', 9)]) if raw.startswith(b'{"type":"') else None
    if dec is None or row_refused(raw):
        return None
    try:
        rec = dec(raw)
    except DECODE_ERRORS:
        return None
    return rec if rec.K < CHECKED or record_ok(rec, legacy) else None


def accepts(raw: bytes, version: int) -> Any:
    """The lean record of one stored row when a pass may take it from it (the checks of the pass, for one
    row), else None (the row takes the exact way)."""
    rec = record_of(decoders(version), raw, version < 2)
    if rec is not None and rec.K <= PACKED_CALL and not packed_members(rec):
        return None
    return rec


DECODE_ERRORS = (msgspec.DecodeError, RecursionError)     # (msgspec.ValidationError is a DecodeError)
