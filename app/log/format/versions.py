"""Session format versions v0–v4 read as one model (spec dsh-format-versions.md §3, §8).

Entry points (pure, no I/O besides :func:`file_version`):

* :func:`header_version` — the format version (0–4) of a header (raw line bytes or dict);
  a header without ``version`` is a pre-strict v0 header (0).  Versions this reader does not
  know (> :data:`LATEST`) are returned as stored; :func:`is_supported` says whether it reads them.
* :func:`file_version` — the same for a session file (raw JSONL or zstd), header line only.
* :func:`decode_row` — one stored row of a given version -> project events (``app.log.format.model.Event``),
  ``(items, problems)`` exactly like :meth:`app.log.format.codec.RowCodec.decode_row`.
* :func:`codec_for` — the :class:`~app.log.format.codec.RowCodec` of a version (reuse it for many rows).
* :func:`field_problems` — hostile field types of one decoded event (an array as a turn number, an
  object as a stream record type …): dropped in memory, one ``bad-field`` reason each (the codec
  reports them with the row's seq and line); the faces never see a type dsh does not write.

How newer rows map into the model (no seq is renumbered: one generation file is shown as stored):

* v1: the v0 physical language (packed rows, ``seedLength``) with ``version`` 1; range-encoded
  ``sourceEventSeqs`` accepted.
* v2+: one event per row; ``sourceEventSeqs`` range pairs ``[start, end]`` expanded in memory
  (``Event.source_event_seqs``; the stored bytes stay in ``Event.raw``); ``assistant/message`` and
  ``assistant/attempt`` carry their chunk stream in ``data.stream`` (see :func:`stream_chunks`).
* v3+: ``system/message`` is a surface type; replacements are ``{op, startSeq, endSeq}``;
  ``tool/ptc-dispatch*`` replace ``tool/code-dispatch*``.
* v4: ``tool/result`` messages are ``role:"tool"`` with a top-level ``toolCallId``;
  ``developer/message`` is surface.
* every version >= 1: one event vocabulary (the build's, spec-versions §3.5 correction; see
  :data:`ONE_VOCABULARY`), and ``image/offload`` projects earlier images wherever it occurs.
"""
from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any, Optional, Union
from collections.abc import Iterable, Iterator

import msgspec

from .model import (KNOWN_TYPES, MAX_SAFE_INT, Event, Header, Item, Problem)
from .payloads import JsonObj, as_obj, items

if TYPE_CHECKING:
    from .codec import RowCodec

LATEST = 4
SUPPORTED = (0, 1, 2, 3, 4)

# The event vocabulary is ONE set per dsh build, not one per format version (spec-versions §3.5
# correction, checked against real logs): a build writes its newer types into whatever generation it
# writes (real v3 logs carry ``agent/harness``, ``subagent/catalog`` and ``image/offload``).  So every
# version >= 1 is read against the same set: the newest build's known types (§3.5) plus the four the
# later line declares; the legacy spellings a version's physical language still has (v1:
# ``assistant/chunk``; v1/v2: ``tool/code-dispatch*``) are added for that version only, because its
# successor edge renames them.  v0 keeps the v0 store's frozen inventory (the v0 spec).
_V2_ADDED = frozenset({"assistant/attempt", "feedback/message-put", "feedback/message-delete",
                       "workspace/changes", "model/selection", "deliverables/presented",
                       "subagent/catalog-unknown", "subagent/model-selection-policy"})
_V3_ADDED = frozenset({"system/message", "tool/ptc-dispatch", "tool/ptc-dispatch-start",
                       "session-log-deepseek/delivery-accepted", "compaction/prune"})
_V4_ADDED = frozenset({"developer/message", "image/offload", "subagent/catalog", "agent/harness"})
_LATER_LINE = frozenset({"agent-acp/session", "agent-codex/thread", "agent-tool-bridge/exposed"})
_GONE_V2 = frozenset({"assistant/chunk"})
_GONE_V3 = frozenset({"tool/code-dispatch", "tool/code-dispatch-start"})

ONE_VOCABULARY = (KNOWN_TYPES - _GONE_V2 - _GONE_V3) | _V2_ADDED | _V3_ADDED | _V4_ADDED | _LATER_LINE
_V4_TYPES = ONE_VOCABULARY
KNOWN_BY_VERSION = {0: KNOWN_TYPES, 1: ONE_VOCABULARY | _GONE_V2 | _GONE_V3, 2: ONE_VOCABULARY | _GONE_V3,
                    3: ONE_VOCABULARY, 4: ONE_VOCABULARY}

SURFACE_BY_VERSION = {
    0: frozenset({"user/message", "assistant/message", "tool/result"}),
    1: frozenset({"user/message", "assistant/message", "tool/result"}),
    2: frozenset({"user/message", "assistant/message", "tool/result"}),
    3: frozenset({"system/message", "developer/message", "user/message", "assistant/message", "tool/result"}),
    4: frozenset({"system/message", "developer/message", "user/message", "assistant/message", "tool/result"}),
}
# every surface type of any version (the folds accept each only where its version has it)
ALL_SURFACE_TYPES = SURFACE_BY_VERSION[4]

STREAM_RUN_TYPES = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta",
                    "tool-call-chunks": "tool-call-delta"}


def known_types(version: Optional[int]) -> frozenset[str]:
    return KNOWN_BY_VERSION.get(version or 0, _V4_TYPES)


def is_supported(version: Optional[int]) -> bool:
    return version is None or version in SUPPORTED


def header_version(header: Union[bytes, str, JsonObj, Header, None]) -> Optional[int]:
    """The ``version`` of a header (raw first line or parsed dict); 0 when absent; None when
    the line is not a session header or the version is not an integer."""
    if header is None:
        return None
    obj: object = header
    if isinstance(header, (bytes, str)):
        from .codec import DecodeError, decode_json
        try:
            obj, _ = decode_json(header.encode() if isinstance(header, str) else header)
        except DecodeError:
            return None
    if hasattr(obj, "version") and not isinstance(obj, dict):      # a model Header
        hv: Optional[int] = obj.version
        return 0 if hv is None else hv
    if not isinstance(obj, dict) or obj.get("type") != "session":
        return None
    v = obj.get("version", 0)
    return v if type(v) is int else None


def file_version(path: str) -> Optional[int]:
    """The header version of a session file (reads only its header line / first frame)."""
    from ..source.sources import open_source
    src = open_source(os.fspath(path))
    try:
        return header_version(src.header_raw)
    finally:
        src.close()


def codec_for(version: Optional[int], session_id: str = "") -> RowCodec:
    from .codec import RowCodec
    return RowCodec(session_id, version=version or 0)


def decode_row(raw: bytes, version: Optional[int] = 0, session_id: str = "",
               **where: Any) -> tuple[list[Item], list[Problem]]:
    """One stored row of format ``version`` -> ``(items, problems)`` (see module doc)."""
    rows: list[Item]
    problems: list[Problem]
    rows, problems = codec_for(version, session_id).decode_row(raw, **where)
    return rows, problems


# --------------------------------------------------------------------------- helpers

def decode_seq_ranges(value: Any, seq: Optional[int] = None) -> tuple[Any, Optional[str]]:
    """Expand a stored ``sourceEventSeqs`` (numbers and inclusive ``[start, end]`` pairs).

    Returns (list, problem text or None).  A value that is not a list is returned as is (so the
    first item is the stored JSON value when it is not a range-encoded list)."""
    if not isinstance(value, list):
        return value, None
    if not any(isinstance(x, list) for x in value):
        return value, None
    out: list[Any] = []
    for x in value:
        if isinstance(x, list):
            if len(x) != 2 or not all(type(v) is int for v in x) or x[0] > x[1]:
                return value, f"bad seq range {x!r}"
            if x[1] - x[0] > MAX_SAFE_INT or x[1] - x[0] > 10_000_000:
                return value, f"seq range {x!r} too long"
            out.extend(range(x[0], x[1] + 1))
        else:
            out.append(x)
    if any(not (type(a) is int and type(b) is int and a < b) for a, b in zip(out, out[1:])):
        return out, "range-encoded sourceEventSeqs are not strictly increasing"
    return out, None


def replace_bounds(op: object) -> tuple[Any, Any]:
    """(start, end) of a replacement surfaceOp in either shape (v0–v2 ``start``/``end``,
    v3+ ``startSeq``/``endSeq``)."""
    if not isinstance(op, dict):
        return None, None
    if "startSeq" in op or "endSeq" in op:
        return op.get("startSeq"), op.get("endSeq")
    return op.get("start"), op.get("end")


def stream_chunks(stream: object) -> Iterator[tuple[Any, JsonObj]]:
    """Expand an embedded v2+ stream to ``(time, chunk)`` pairs in order (spec §3.4)."""
    if not isinstance(stream, list):
        return
    for rec in stream:
        if not isinstance(rec, dict):
            continue
        rt = rec.get("type")
        if not isinstance(rt, str):             # a hostile record type (list, object, number): skipped
            continue
        if rt == "chunk":
            chunk = as_obj(rec.get("chunk"))
            if chunk is not None:
                tc = rec.get("time", 0)
                yield (tc if type(tc) is int else 0), chunk
            continue
        delta = STREAM_RUN_TYPES.get(rt)
        if delta is None:
            continue
        t = rec.get("time0", 0) if type(rec.get("time0")) is int else 0
        dt = items(rec.get("dt"))
        index = rec.get("index")
        payload = rec.get("args") if rt == "tool-call-chunks" else rec.get("texts")
        for k, p in enumerate(payload if isinstance(payload, list) else []):
            if k and k - 1 < len(dt) and type(dt[k - 1]) is int:
                t += dt[k - 1]
            c: JsonObj
            if rt == "tool-call-chunks":
                c = {"type": delta, "index": index, "id": rec.get("id")}
                if "name" in rec:
                    c["name"] = rec.get("name")
                c["argumentsDelta"] = p
            else:
                c = {"type": delta, "index": index, "text": p}
            yield t, c


# --------------------------------------------------------------------------- hostile field types

# Fields the faces read, with the JSON types dsh writes there (``int``: an integer, not a bool;
# ``scalar``: a string, number, bool; ``obj``/``list``/``str`` as named; ``|`` joins; null is
# always accepted, as an absent field).  A path is read under ``data``; ``*`` is every item of
# a list.  A field of another type (a list where a string is expected, an object as a turn
# number, ...) is dropped from the event in memory (as if absent; the stored row is unchanged)
# and reported as a ``bad-field`` problem of that row: one hostile row never stops a face.
_ANY_TYPE = (
    (("turn",), "int"), (("step",), "int"), (("index",), "int"), (("compactionId",), "scalar"),
    (("callId",), "scalar"), (("toolCallId",), "scalar"), (("retryId",), "scalar"), (("id",), "scalar"),
    (("role",), "str"), (("source",), "obj|str"), (("source", "callId"), "scalar"), (("content",), "list|str"),
    (("message",), "obj"), (("message", "id"), "scalar"), (("message", "role"), "str"),
    (("message", "toolCallId"), "scalar"), (("message", "source"), "obj"), (("message", "source", "callId"), "scalar"),
    (("message", "content"), "list|str"), (("usage",), "obj"),
    (("content", "*", "type"), "str"), (("content", "*", "id"), "scalar"), (("content", "*", "toolCallId"), "scalar"),
    (("message", "content", "*", "type"), "str"), (("message", "content", "*", "id"), "scalar"),
    (("message", "content", "*", "toolCallId"), "scalar"), (("headerSeq",), "int"),
    (("sourceEventSeq",), "int"), (("title",), "str"), (("messageSeqs",), "list"), (("messageSeqs", "*"), "int"),
    (("shadowedRange",), "obj"), (("shadowedRange", "start"), "int"), (("shadowedRange", "end"), "int"),
    (("shadowedSeqs",), "list"), (("shadowedSeqs", "*"), "int"),
    (("stream",), "list"), (("stream", "*"), "obj"), (("stream", "*", "type"), "str"),
    (("stream", "*", "index"), "int"), (("stream", "*", "time"), "int"), (("stream", "*", "time0"), "int"),
    (("stream", "*", "dt"), "list"), (("stream", "*", "id"), "scalar"), (("stream", "*", "chunk"), "obj"),
    (("header",), "obj"), (("header", "config"), "obj"), (("header", "tools"), "list|str"),
    (("header", "tools", "*"), "obj|str"), (("header", "tools", "*", "name"), "scalar"),
    (("reason",), "obj|str"), (("name",), "scalar"), (("chunk",), "obj"), (("chunk", "type"), "str"),
    (("chunk", "index"), "int"), (("chunk", "id"), "scalar"),
)


_KIND_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "str": (str,), "obj": (dict,), "list": (list,),
                                            "scalar": (str, int, float, bool)}


@functools.cache
def _types(kinds: str) -> frozenset[type]:
    """The exact Python types of decoded JSON that ``kinds`` accepts (null always; a bool is no int)."""
    return frozenset(t for k in kinds.split("|") for t in _KIND_TYPES[k]) | {type(None)}


def _type_ok(v: object, kinds: str) -> bool:
    return type(v) in _types(kinds)


# the table as a tree: key -> (accepted types or None, kinds text, the tree under it); walked over the
# keys an event has (a few per row), not over the table
_Node = tuple[Optional[frozenset[type]], str, dict[str, Any]]


def _tree(rules: Iterable[tuple[tuple[str, ...], str]]) -> dict[str, _Node]:
    root: dict[str, _Node] = {}
    for path, kinds in rules:
        node = root
        for i, key in enumerate(path):
            t0, k0, sub = node.get(key, (None, "", {}))
            node[key] = (_types(kinds), kinds, sub) if i == len(path) - 1 else (t0, k0, sub)
            node = sub
    return root


def _checked(v: Any, spec: _Node, where: str, out: list[str]) -> tuple[bool, Any]:
    """(keep, value): whether ``v`` stays, and ``v`` with its own bad fields dropped."""
    types, kinds, sub = spec
    if types is not None and type(v) not in types:
        out.append(f"{where} is {_json_type(v)}, not {kinds.replace('|', ' or ')}: read as absent")
        return False, v
    return True, (_drop_bad(v, sub, where, out) if sub and isinstance(v, (dict, list)) else v)


def _drop_bad(node: Any, tree: dict[str, _Node], where: str, out: list[str]) -> Any:
    """``node`` with the values that ``tree`` says are of a wrong type dropped (copied on write)."""
    if isinstance(node, list):
        star = tree.get("*")
        if star is None:
            return node
        types, _k, sub = star
        if types is not None and not sub and all(type(v) in types for v in node):
            return node                                   # the common case: one pass, no copy
        new: list[Any] = []
        changed = False
        for i, v in enumerate(node):
            keep, nv = _checked(v, star, f"{where}[{i}]", out)
            changed = changed or not keep or nv is not v
            if keep:
                new.append(nv)
        return new if changed else node
    if not isinstance(node, dict):
        return node
    copy: Optional[dict[str, Any]] = None
    for key, v in node.items():
        spec = tree.get(key)
        if spec is None:
            continue
        types = spec[0]
        if not spec[2] and types is not None and type(v) in types:     # a well-typed leaf (most fields)
            continue
        keep, nv = _checked(v, spec, f"{where}.{key}", out)
        if not keep or nv is not v:
            if copy is None:
                copy = dict(node)
            if keep:
                copy[key] = nv
            else:
                del copy[key]
    return node if copy is None else copy


def _json_type(v: object) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(v), type(v).__name__)


_TREE = _tree(_ANY_TYPE)
_LIST_OR_NULL = _types("list")
_OP_TYPES = _types("str|obj")

_PY = {"int": (int,), "str": (str,), "scalar": (str, int, float, bool)}


def _annotation(kinds: str, sub: dict[str, _Node], name: str) -> Any:
    """The msgspec type that accepts exactly the values the rules under one key accept (a
    conservative copy of the tree: anything it accepts, the tree accepts unchanged)."""
    named = {k: v for k, v in sub.items() if k != "*"}
    star = sub.get("*")
    parts: list[Any] = []
    for k in (kinds.split("|") if kinds else ["obj" if named else "list" if star else ""]):
        if k == "obj":
            parts.append(_struct(named, name) if named else dict)
        elif k == "list":
            parts.append(list[_annotation(star[1], star[2], name + "_item")] if star is not None else list)  # type: ignore[misc]
        elif k:
            parts.extend(_PY[k])
    return Union[tuple(parts) + (type(None),)]


def _struct(tree: dict[str, _Node], name: str) -> Any:
    return msgspec.defstruct(name, [(k, _annotation(spec[1], spec[2], f"{name}_{k}"), None)
                                    for k, spec in tree.items() if k != "*"])


DATA_TYPE = _struct(_TREE, "_Data")  # one C-speed check for the common, well-typed row (lean rows, the export)
_OP_TREE = _tree(((("op",), "str"),) + tuple(((k,), "int") for k in ("start", "end", "startSeq", "endSeq")))


def field_problems(ev: Event) -> list[str]:
    """Drop the fields of ``ev.data`` whose JSON type dsh never writes there (see the table
    above; ``ev.data`` is replaced by a corrected copy, ``ev.raw`` keeps the stored bytes), and
    a ``sourceEventSeqs`` that is not an array or a ``surfaceOp`` that is neither a string nor an
    object (or has non-integer bounds); -> one reason per dropped field (empty when well-typed)."""
    out: list[str] = []
    ses = ev.source_event_seqs
    if type(ses) not in _LIST_OR_NULL:
        out.append(f"sourceEventSeqs is {_json_type(ses)}, not an array: read as absent")
        ev.source_event_seqs = None
    op = ev.surface_op
    if type(op) not in _OP_TYPES:
        out.append(f"surfaceOp is {_json_type(op)}, not a string or object: read as absent")
        ev.surface_op = None
    elif isinstance(op, dict):
        ev.surface_op = _drop_bad(op, _OP_TREE, "surfaceOp", out)
    d = ev.data
    if type(d) is dict and d:
        try:
            msgspec.convert(d, DATA_TYPE)
        except msgspec.ValidationError:
            ev.data = _drop_bad(d, _TREE, "data", out)
    return out


def stream_summary(stream: object) -> JsonObj:
    """Members, finish reason, usage and text of an embedded stream: what :func:`stream_chunks`
    yields, summed without building a chunk per member (a run's members are counted, its last
    time is ``time0`` plus its deltas)."""
    chunks = 0
    finish: Optional[JsonObj] = None
    usage: Any = None
    text: list[str] = []
    time0: Any = None
    time1: Any = None
    for rec in stream if isinstance(stream, list) else ():
        if not isinstance(rec, dict):
            continue
        rt = rec.get("type")
        if not isinstance(rt, str):             # skipped, as stream_chunks skips it
            continue
        if rt == "chunk":
            c = as_obj(rec.get("chunk"))
            if c is None:
                continue
            chunks += 1
            tc = rec.get("time", 0)
            time1 = tc if type(tc) is int else 0
            if time0 is None:
                time0 = time1
            ct = c.get("type")
            if ct == "finish":
                r = c.get("reason")
                finish = r if isinstance(r, dict) else {"kind": str(r)}
            elif ct == "usage":
                usage = c.get("usage")
            elif ct in ("text-delta", "reasoning-delta"):
                text.append(str(c.get("text", "")))
            continue
        delta = STREAM_RUN_TYPES.get(rt)
        payload = (rec.get("args") if rt == "tool-call-chunks" else rec.get("texts")) if delta is not None else None
        if not isinstance(payload, list) or not payload:
            continue
        t = rec.get("time0", 0) if type(rec.get("time0")) is int else 0
        if time0 is None:
            time0 = t
        n = len(payload)
        time1 = t + sum([x for x in items(rec.get("dt"))[:n - 1] if type(x) is int])
        chunks += n
        if delta != "tool-call-delta":
            text.extend(map(str, payload))
    return {"chunks": chunks, "finish": finish, "usage": usage, "text": text, "time0": time0, "time1": time1}


def inherited_count(events: Iterable[Event], header: Union[Header, JsonObj, None] = None) -> int:
    """Inherited event count: v0/v1 ``seedLength``; v2+ the seq of the last tagged
    ``session/end-seed {inherited:true}`` (spec §3.1, §7)."""
    v = header_version(header) if header is not None else 0
    if (v or 0) < 2:
        sl: Optional[int] = getattr(header, "seedLength", None) if header is not None and not isinstance(header, dict) \
            else (header or {}).get("seedLength")
        return sl or 0
    n = 0
    for ev in events:
        if ev.type == "session/end-seed" and isinstance(ev.data, dict) and ev.data.get("inherited") is True:
            n = ev.seq
    return n


def version_problem(version: object) -> Optional[Problem]:
    if version is None or version in SUPPORTED:
        return None
    direction = "newer than this reader: upgrade the harness / Session Lens" if (
        type(version) is int and version > LATEST) else "not a known format version"
    return Problem(code="format-unsupported", message=f"session format version {version!r} is {direction}",
                   line=1, fatal=True)
