"""Folds over a log prefix (spec §3): surface, model messages, request header, exact request.

Each fold is incremental (``apply`` one event at a time) so that folding a prefix and
folding incrementally are the same computation; ``fold_*`` helpers reduce a list.
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Optional, Union
from collections.abc import Iterable, MutableMapping

import msgspec

from ..format.model import SURFACE_TYPES, Event, Problem, event_message
from ..format.payloads import JsonList, JsonObj, as_obj, blocks, items, obj
from ..format.versions import replace_bounds
from .v0chain import TYPES as V0_TYPES, V0Chain
from .v2heads import TYPES as V2_TYPES, V2Head

if TYPE_CHECKING:
    from .shadowmap import ShadowColumns

# surface types that only newer formats know (v3 system/message, v4 developer/message): an
# event of such a type is surface only where its version knows it (``Event.known``)
_NEWER_SURFACE = frozenset({"system/message", "developer/message"})
_EMPTY_DROPS = frozenset({"assistant/message", "system/message", "developer/message"})
_encode = msgspec.json.Encoder().encode


def is_surface_type(ev: Event) -> bool:
    return ev.type in SURFACE_TYPES or (ev.type in _NEWER_SURFACE and ev.known)


class SurfaceFold:
    """``foldSurface``: the ordered model-surface nodes (seqs) and who shadowed whom."""

    def __init__(self, keep_events: bool = True, version: int = 0, keep_replaced: bool = True,
                 columns: Optional[ShadowColumns] = None):
        self.version = version or 0
        # ``keep_replaced=False``: who shadowed whom is not recorded (``replaced_by``/``replaced``
        # stay empty), so a whole-log count (inspect) holds only the current nodes, not every
        # shadowed seq of the log; ``columns``: recorded there instead of in dicts, 16 bytes per
        # shadowed seq (:mod:`app.log.fold.shadowmap`; ``replaced_by``/``replaced`` are its read-only views)
        self.keep_replaced = keep_replaced
        self.nodes: list[int] = []
        self.projected: dict[int, JsonObj] = {}    # seq -> message after image/offload projections (v4)
        self.step_mark: Optional[tuple[str, int]] = None  # (type, seq) of the last step/start or step/end
        self.keep_events = keep_events
        self.events: dict[int, Event] = {}      # seq -> surface event (when keep_events)
        self.columns = columns
        self.replaced_by: MutableMapping[int, int] = {}   # shadowed seq -> replacing seq
        self.replaced: MutableMapping[int, list[int]] = {}     # replacing seq -> seqs it shadowed
        if columns is not None:
            self.replaced_by, self.replaced = columns.replaced_by, columns.replaced
        self.violations: list[Problem] = []
        self.empty_assistant: set[int] = set()
        # v3: messages in the shape today's dsh derives them (migrated to v4 first, app.log.fold.normalize);
        # True: the writer-era shape (``--as-written``, the Request tab's toggle)
        self.as_written = False
        # v2 (and v0/v1, which reach it through the chain): the v2 -> v3 edge's system head
        # (app.log.fold.v2heads), followed on every v2 fold and every v0/v1 fold that keeps events; the
        # messages take it (and the v4 shape) only when ``v2_session`` names the log (its header id: set by
        # :func:`app.log.fold.v2heads.derive_as` where dsh's migration accepts the log)
        legacy = self.version in (0, 1) and keep_events
        self.v2: Optional[V2Head] = V2Head() if self.version == 2 or legacy else None
        self.v2_session: Optional[str] = None
        # v0/v1: the v0 -> v1 edge's message rewrites (app.log.fold.v0chain)
        self.v0: Optional[V0Chain] = V0Chain() if legacy else None

    def apply(self, ev: Event) -> None:
        if ev.type in ("step/start", "step/end"):
            self.step_mark = (ev.type, ev.seq)
        if self.v2 is not None and ev.type in V2_TYPES:
            self.v2.apply(ev.type, ev.seq, ev.data, ev.time)
        if self.v0 is not None and ev.type in V0_TYPES:
            self.v0.apply(ev, self.events)
        if ev.type == "image/offload" and ev.known:
            self._offload(ev)
        if not is_surface_type(ev):
            if ev.surface_op is not None or (ev.source_event_seqs is not None and ev.known):
                self._violate(ev, f"{ev.type} carries surface keys")
            return
        op = ev.surface_op
        if op == "append":
            self.nodes.append(ev.seq)
        elif isinstance(op, dict) and op.get("op") == "replace":
            start, end = replace_bounds(op)
            try:
                i, j = self.nodes.index(start), self.nodes.index(end)
            except ValueError:
                self._violate(ev, f"replace {{start:{start}, end:{end}}} names a seq that is not a surface node")
                return
            if i > j:
                self._violate(ev, f"replace start {start} comes after end {end}")
                return
            slice_ = self.nodes[i:j + 1]
            cited = set(ev.source_event_seqs or ())
            missing = [s for s in slice_ if s not in cited]
            if missing:
                self._violate(ev, f"replace does not cite shadowed nodes {missing}")
                return
            if ev.type == "tool/result" and self.keep_events:
                olds = [self.events.get(s) for s in slice_]
                if len(olds) != 1 or olds[0] is None or olds[0].type != "tool/result":
                    self._violate(ev, "a tool/result replacement must shadow exactly one tool/result")
                    return
            self.nodes[i:j + 1] = [ev.seq]
            if self.columns is not None and self.keep_replaced:
                self.columns.record(ev.seq, slice_)          # (event seqs: 0 .. 2**53 - 1, see the codec)
            elif self.keep_replaced:
                for s in slice_:
                    self.replaced_by[s] = ev.seq
                self.replaced[ev.seq] = slice_
        else:
            self._violate(ev, f"surface event with invalid surfaceOp {op!r}")
            return
        if self.keep_events:
            self.events[ev.seq] = ev
        if ev.type in _EMPTY_DROPS:
            m = event_message(ev)
            if m is not None and not m.get("content"):
                self.empty_assistant.add(ev.seq)

    def append_node(self, seq: int, empty_message: bool = False) -> None:
        """What :meth:`apply` does with a well-formed ``append`` of a user/assistant/tool message when no
        events are kept (``keep_events=False``); ``empty_message``: an assistant message with no content."""
        self.nodes.append(seq)
        if empty_message:
            self.empty_assistant.add(seq)

    def _offload(self, ev: Event) -> None:
        """``image/offload`` (v4 message projection, spec-versions §6.2): the target nodes'
        selected image blocks get ``offloaded: true``; nodes and ids are unchanged."""
        d = ev.data if isinstance(ev.data, dict) else {}
        targets = d.get("targets")
        if not isinstance(targets, list) or not targets:
            self._violate(ev, "image/offload without targets")
            return
        for t in targets:
            seq = t.get("seq") if isinstance(t, dict) else None
            idxs = t.get("imageIndexes") if isinstance(t, dict) else None
            if seq not in self.nodes or not isinstance(idxs, list):
                self._violate(ev, f"image/offload target {t!r} is not a current surface node")
                continue
            if not self.keep_events:
                continue
            src = self.events.get(seq)
            if src is None or src.type not in ("user/message", "tool/result"):
                self._violate(ev, f"image/offload target {seq} is not a user/message or tool/result")
                continue
            base = self.projected.get(seq) or event_message(src)
            if not isinstance(base, dict):
                continue
            want = set(i for i in idxs if type(i) is int)
            content, k = [], 0
            for b in base.get("content") or []:
                if isinstance(b, dict) and b.get("type") == "image":
                    if k in want:
                        if b.get("offloaded") is True:
                            self._violate(ev, f"image/offload selects image {k} of seq {seq} twice")
                        b = dict(b, offloaded=True)
                        want.discard(k)
                    k += 1
                content.append(b)
            if want:
                self._violate(ev, f"image/offload selects images {sorted(want)} past the last image of seq {seq}")
            self.projected[seq] = dict(base, content=content)

    def _violate(self, ev: Event, msg: str) -> None:
        self.violations.append(Problem(code="fold-violation", message=msg, seq=ev.seq, line=ev.line,
                                       offset=ev.offset if ev.offset >= 0 else None))

    def message_seqs(self) -> list[int]:
        """Seqs of nodes that yield a model message (empty assistant messages excluded)."""
        return [s for s in self.nodes if s not in self.empty_assistant]

    def messages(self) -> list[JsonObj]:
        return [m for _s, m in self.linked()]

    def normalized(self) -> bool:
        """Are the messages derived on the v4 shape (v4; v3 and accepted v0-v2 unless ``as_written``)?"""
        return self.version >= 4 or (not self.as_written and (
            self.version == 3 or (self.version <= 2 and self.v2_session is not None)))

    def linked(self) -> list[tuple[int, JsonObj]]:
        """(seq, message) of each derived model message, in order: the surface node it came from (a v2
        log's system head: the stored row it is anchored at, see :mod:`app.log.fold.v2heads`)."""
        if not self.keep_events:
            raise RuntimeError("SurfaceFold(keep_events=False) cannot derive messages")
        out: list[tuple[int, JsonObj]] = []
        for s in self.message_seqs():
            m = self.projected.get(s) or self.node_message(self.events[s])
            if m is not None:
                out.append((s, m))
        return self.finish(out)

    def node_message(self, ev: Event) -> Optional[JsonObj]:
        """The message of surface node ``ev`` as the derivation reads it (a v0/v1 log in today's dsh's shape:
        as the chain's first edge rewrites it, :mod:`app.log.fold.v0chain`)."""
        if self.v0 is not None and self.v2_session is not None and self.normalized():
            return self.v0.message(ev, self.v2_session)
        return event_message(ev)

    def finish(self, out: list[tuple[int, JsonObj]]) -> list[tuple[int, JsonObj]]:
        """The (seq, message) of the nodes (:meth:`node_message`, in node order) as derived: on the v4 shape
        where :meth:`normalized` (a v0-v2 log's system head first, the v3 -> v4 rewrites, rule 4)."""
        if not self.normalized():
            return out
        if self.version <= 2 and self.v2 is not None and self.v2_session is not None:
            head = self.v2.message(self.v2_session)
            if head is not None and self.v2.anchor is not None:
                out.insert(0, (self.v2.anchor[0], head))
        if self.version <= 3:
            from .normalize import v4_message
            out = [(s, v4_message(m)) for s, m in out]
        return self._without_unanswerable(out)

    def _without_unanswerable(self, msgs: list[tuple[int, JsonObj]]) -> list[tuple[int, JsonObj]]:
        """v4 (spec-versions §6.1 rule 4): tool calls of a closed step that no tool message
        answers in time are removed from their assistant messages (the log is unchanged)."""
        open_: dict[Any, int] = {}       # open tool-call id -> seq of its assistant message
        cand: dict[Any, int] = {}
        for s, m in msgs:
            role = m.get("role")
            if role == "assistant":
                cand.update(open_)
                open_ = {}
                for b in m.get("content") or []:
                    if isinstance(b, dict) and b.get("type") == "tool-call" and b.get("id") is not None:
                        open_[b["id"]] = s
            elif role == "tool":
                open_.pop(m.get("toolCallId"), None)
        cand.update(open_)
        mark = self.step_mark

        def closed(aseq: int) -> bool:
            if mark is None:
                return False
            return mark[0] == "step/end" or aseq < mark[1]
        drop = {cid for cid, aseq in cand.items() if closed(aseq)}
        if not drop:
            return msgs
        out = []
        for s, m in msgs:
            if m.get("role") == "assistant" and any(isinstance(b, dict) and b.get("type") == "tool-call"
                                                    and b.get("id") in drop for b in m.get("content") or []):
                content = [b for b in m.get("content") or []
                           if not (isinstance(b, dict) and b.get("type") == "tool-call" and b.get("id") in drop)]
                if not content:
                    continue
                m = dict(m, content=content)
            out.append((s, m))
        return out

    def copy(self) -> SurfaceFold:
        c = SurfaceFold(self.keep_events, self.version, self.keep_replaced,
                        self.columns.copy() if self.columns is not None else None)
        c.nodes = list(self.nodes)
        c.projected = dict(self.projected)
        c.step_mark = self.step_mark
        c.events = dict(self.events)
        if self.columns is None:
            c.replaced_by = dict(self.replaced_by)
            c.replaced = {k: list(v) for k, v in self.replaced.items()}
        c.violations = list(self.violations)
        c.empty_assistant = set(self.empty_assistant)
        c.as_written, c.v2_session = self.as_written, self.v2_session
        c.v2 = self.v2.copy() if self.v2 is not None else None
        c.v0 = self.v0.copy() if self.v0 is not None else None
        return c


def fold_surface(events: Iterable[Event], keep_events: bool = True, version: int = 0) -> SurfaceFold:
    f = SurfaceFold(keep_events, version)
    for ev in events:
        f.apply(ev)
    return f


def derive_messages(events: Iterable[Event], version: int = 0) -> list[JsonObj]:
    """``deriveMessages``: the model messages of a log prefix."""
    return fold_surface(events, version=version).messages()


# --------------------------------------------------------------------------- request header

def canonical_header(header: Optional[JsonObj]) -> JsonObj:
    """Drop empty ``system``/``tools``, and ``adapterDefaults`` unless a marker is true."""
    h = dict(header or {})
    if h.get("system") in (None, "", []):
        h.pop("system", None)
    if h.get("tools") in (None, []):
        h.pop("tools", None)
    ad = h.get("adapterDefaults")
    if ad is not None and not (isinstance(ad, dict) and any(v is True for v in ad.values())):
        h.pop("adapterDefaults", None)
    return h


def _tool_name(tool: object) -> object:
    return tool.get("name") if isinstance(tool, dict) else tool


class ToolHistoryFold:
    """v4 ``toolHistory`` of a prefix (spec-versions §6.3): the tools of the header that
    started the current declaration series plus the additions that ``developer/message``
    tool updates made since; when the latest header's tools and the reconstructed names
    disagree (logs written before tool updates were logged), the latest header's tools."""

    def __init__(self) -> None:
        self.headers: dict[int, JsonList] = {}   # header seq -> tools list
        self.declared: dict[object, Any] = {}    # name -> definition in this series
        self.declared_json: dict[object, JsonKey] = {}   # name -> its definition's JSON key (:func:`json_key`), once
        # asked (a header compares every tool it lists with the declared one: once per header, not twice)
        self.active: JsonList = []
        self.available: set[object] = set()
        self.baseline: Optional[int] = None
        self.tools: JsonList = []
        self.updates: list[JsonObj] = []
        self.problems: list[Problem] = []

    def apply(self, ev: Event) -> None:
        d = as_obj(ev.data)
        if d is None:
            return
        if ev.type == "request/header":
            h = obj(d.get("header"))
            tools = items(h.get("tools"))
            self.headers[ev.seq] = tools
            redeclared = any(_tool_name(t) in self.declared and self._declared_json(_tool_name(t)) != json_key(t)
                             for t in tools)
            if self.baseline is None or d.get("reason") == "series" or d.get("startsSeries") or redeclared:
                self.baseline = ev.seq
                self.declared = {_tool_name(t): t for t in tools}
                self.declared_json = {}
                self.tools = tools
                self.updates = []
                self.available = {_tool_name(t) for t in tools}
            self.active = tools
        elif ev.type == "developer/message" and ev.known:
            msg = obj(d.get("message"))
            hseq: Any = d.get("headerSeq")
            if hseq is not None and hseq == self.baseline:
                return
            defs = self.headers.get(hseq, []) if hseq is not None else []
            additions: JsonList = []
            content = blocks(msg)
            for b in content:
                if b.get("type") == "tool-addition":
                    found = [t for t in defs if _tool_name(t) == b.get("toolName")]
                    if not found:
                        self.problems.append(Problem(code="tool-history", seq=ev.seq,
                                                     message=f"no definition for added tool {b.get('toolName')!r}"))
                        continue
                    additions.append(found[0])
            for t in additions:
                self.declared[_tool_name(t)] = t
                self.declared_json.pop(_tool_name(t), None)
            for b in content:
                if b.get("type") == "tool-addition":
                    self.available.add(b.get("toolName"))
                elif b.get("type") == "tool-removal":
                    self.available.discard(b.get("toolName"))
            self.updates = self.updates + [{"messageId": msg.get("id"), "additions": additions}]

    def _declared_json(self, name: object) -> JsonKey:
        got = self.declared_json.get(name)
        if got is None:
            got = self.declared_json[name] = json_key(self.declared[name])
        return got

    def snapshot(self) -> JsonObj:
        names = [_tool_name(t) for t in self.active]
        if len(names) != len(self.available) or any(n not in self.available for n in names):
            return {"tools": copy.deepcopy(self.active), "updates": []}
        return {"tools": copy.deepcopy(self.tools), "updates": copy.deepcopy(self.updates)}


def _json(v: object) -> str:
    import json
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


JsonKey = Union[bytes, str]


def json_key(v: object) -> JsonKey:
    """A key of the JSON value ``v`` (as JSON decoding gives it: string keys) such that two keys are equal exactly
    when the two values' :func:`_json` texts are (the redeclaration test of spec-versions §6.3), about ten times
    cheaper to make (issue 29: the background pass made a JSON text of every tool of every ``request/header``):
    msgspec's compact encoding, which maps equal values to equal texts and, like ``json.dumps``, tells every
    type, key order and float apart, except that it writes NaN and the infinities as ``null`` -- so a text
    holding a ``null`` that may be a value (after ``:``, ``,`` or ``[``, or alone), or a value msgspec cannot encode (a lone surrogate), is keyed by its
    :func:`_json` text instead (a str, never equal to a bytes key; the choice depends only on the value's
    structure, so two values with the same :func:`_json` text take the same branch)."""
    try:
        got = _encode(v)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError, msgspec.EncodeError):
        return _json(v)
    return _json(v) if got == b"null" or b":null" in got or b",null" in got or b"[null" in got else got


class HeaderFold:
    """``foldRequestHeader``: the canonical last ``request/header`` (last wins); for v4
    also the ``toolHistory`` (:attr:`tool_history`)."""

    def __init__(self, tools: bool = True) -> None:
        self.header: Optional[JsonObj] = None
        self.seq: Optional[int] = None
        self.reason: Optional[str] = None
        self.history: list[tuple[int, Optional[str]]] = []      # (seq, reason)
        # ``tools=False``: no ``toolHistory`` (it keeps the tools of every request/header of the
        # log; inspect does not show it)
        self.tools = tools
        self.tool_history = ToolHistoryFold()

    def apply(self, ev: Event) -> None:
        if self.tools and ev.type in ("request/header", "developer/message"):
            self.tool_history.apply(ev)
        if ev.type != "request/header" or not isinstance(ev.data, dict):
            return
        hdr = ev.data.get("header")
        if not isinstance(hdr, dict):
            return
        self.header = canonical_header(hdr)
        self.seq = ev.seq
        self.reason = ev.data.get("reason")
        self.history.append((ev.seq, self.reason))


def fold_request_header(events: Iterable[Event]) -> Optional[JsonObj]:
    f = HeaderFold()
    for ev in events:
        f.apply(ev)
    return f.header


def header_equals(a: Optional[JsonObj], b: Optional[JsonObj]) -> bool:
    return canonical_header(a or {}) == canonical_header(b or {})


def tool_history_of(hf: HeaderFold, version: Optional[int], as_written: bool = False) -> Optional[JsonObj]:
    """``toolHistory`` of a request: v4, and v3 in today's dsh's shape (it derives on the v4 shape)."""
    v = version or 0
    return hf.tool_history.snapshot() if v >= 4 or (v == 3 and not as_written) else None


def build_request(header: Optional[JsonObj], messages: list[JsonObj], session_id: str,
                  tool_history: Optional[JsonObj] = None) -> JsonObj:
    """``buildRequest``: ``{...config, messages, system?, tools?, sessionId}``; v3+ headers have
    no ``system`` (the prompt is a message); v4 adds ``toolHistory`` after ``messages``."""
    h = header or {}
    req = dict(h.get("config") or {})
    req["messages"] = copy.deepcopy(messages)
    if tool_history is not None:
        req["toolHistory"] = tool_history
    if "system" in h:
        req["system"] = h["system"]
    if "tools" in h:
        req["tools"] = h["tools"]
    req["sessionId"] = session_id
    return req


def request_from(sf: SurfaceFold, header: Optional[JsonObj], session_id: str,
                 tool_history: Optional[JsonObj]) -> JsonObj:
    """The request of the folds in the shape their messages take: on the v4 shape (``sf.normalized()``)
    without the header's ``system`` (a v2 prompt is a message there) and with ``tool_history``; as
    written, the writer-era request (a v0-v2 header's ``system``, no ``toolHistory``)."""
    if not sf.normalized():
        return build_request(header, sf.messages(), session_id)
    if header is not None and "system" in header:
        header = {k: v for k, v in header.items() if k != "system"}
    return build_request(header, sf.messages(), session_id, tool_history)


def fold_request(sf: SurfaceFold, hf: HeaderFold, session_id: str) -> JsonObj:
    """:func:`request_from` the surface and header folds of a prefix."""
    return request_from(sf, hf.header, session_id, hf.tool_history.snapshot() if sf.normalized() else None)


def exact_request(prefix: Iterable[Event], session_id: str, version: int = 0) -> JsonObj:
    """The request dispatched after ``prefix`` (= events[0..b-1], b the attempt's first chunk;
    v2+: the events before the attempt's settlement)."""
    sf = SurfaceFold(version=version)
    hf = HeaderFold()
    for ev in prefix:
        sf.apply(ev)
        hf.apply(ev)
    return fold_request(sf, hf, session_id)
