"""A v0 (or v1) log's messages as today's dsh derives them: through its migration chain (issue 27, decision 0022).

Today's dsh reads a v0 ``session.jsonl`` only by migrating it v0 -> v1 -> v2 -> v3 -> v4 and derives
messages and requests from the result (spec-versions §4, §8).  What each edge does to the messages,
read in dsh's sources (described here, not copied):

* **v0 -> v1** (``session-format-v0-to-v1/src/migration.ts``, ``normalizeReleasedV0Event``), one rewrite
  per event, seqs unchanged; ``<sid>`` is the source header id and ``<seq>`` the event's own (v0) seq:

  - ``steering/message`` becomes ``user/message``: the wrapped form ``{turn, message}`` becomes the inner
    message as is; the bare form ``{turn, content, source}`` loses ``turn`` and gets
    ``id: "legacy-message:<sid>:<seq>"`` and ``role: "user"`` after its other keys;
  - the compaction groups: a ``compaction/start`` (or ``compact/start``) with a non-empty string
    ``compactionId`` makes it current; one without the key gets ``legacy-compaction:<sid>:<seq>``, which
    becomes current (one with another value changes nothing); ``compaction/end`` and any
    ``session/end-seed`` clear it; while one is current, a ``user/message`` whose source is
    ``{kind: "plugin", plugin: "compact"}`` without ``compactionId`` gets ``source.compactionId``;
  - the legacy wrappers: a ``user/message`` with ``content`` and ``source`` and none of ``id``, ``role``,
    ``message`` gets ``id`` and ``role: "user"`` after its keys; an ``assistant/message`` with ``content``
    and ``provenance`` and no ``message`` keeps its other keys and gets ``message: {id, role:
    "assistant", content, source: {...provenance, kind: "model"}}``; a ``tool/result`` with a string
    ``callId``, ``content`` and a boolean ``isError`` and no ``message`` keeps its other keys and gets
    ``message: {id, role: "user", content: [{type: "tool-result", toolCallId, content, isError}],
    source: {kind: "tool", callId}}``, where a replacement (``surfaceOp {op: "replace", start}``) takes
    the id of the message at ``start`` (the replaced result keeps its identity);
  - ``request/header.header.messagePrefix`` is dropped (no face builds anything from it).

* **v1 -> v2** (``session-format-v1-to-v2``) folds the chunk rows into attempts; no message changes
  (its README: "the migration adds no model-visible content").  Its two legacy repairs (the restart
  closer, a ``turn/end`` that gives no message, and the round-zero goal rewrite, which no corpus log
  has) are not modelled.
* **v2 -> v3** inserts the system head (:class:`~app.log.fold.v2heads.V2Head`, the same state machine as
  for v2 logs) and drops ``header.system``; **v3 -> v4** lifts tool results and renames sources
  (:mod:`app.log.fold.normalize`).

:class:`V0Chain` holds the state the first edge needs (the current compaction and, per surface node,
what the edge adds that its own row cannot say: an inherited id, a compaction id); the surface fold
(:class:`~app.log.fold.folds.SurfaceFold`) feeds it every event and asks it for a node's message.
Only rows the codec converted (``Event.legacy``) are read again from their stored bytes; every other
row's data is already what v0 -> v1 writes.
"""
from __future__ import annotations

from typing import Any, Optional, Union
from collections.abc import Callable, Mapping

import msgspec

from ..format.model import Event, event_message
from ..format.payloads import JsonObj

_STARTS = frozenset({"compaction/start", "compact/start"})
_ENDS = frozenset({"compaction/end", "compact/end"})
_MESSAGE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
TYPES = _STARTS | _ENDS | {"session/end-seed", "user/message", "tool/result"}   # the types :meth:`V0Chain.apply` reads
Ident = Union[str, int]            # a message or compaction id: a string, or a v0 seq (a minted ``legacy-*`` id)
Mint = Callable[[int], Any]


def _is_obj(v: Any) -> bool:
    return isinstance(v, dict)


def _stored(ev: Event) -> Optional[tuple[str, Any]]:
    """(type, data) of the stored row of a converted event (None: not readable again)."""
    if not ev.raw:
        return None
    try:
        obj = msgspec.json.decode(ev.raw)
    except msgspec.DecodeError:
        return None
    if not _is_obj(obj) or not isinstance(obj.get("type"), str) or not _is_obj(obj.get("data")):
        return None
    return obj["type"], obj["data"]


def v1_data(ev: Event, mint: Mint, inherited: Optional[Any] = None) -> Any:
    """The event's data as the v0 -> v1 edge writes it (its message rewrites, see the module doc); ``mint``
    makes the ``legacy-message`` id of a seq, ``inherited``: the id a replacing legacy tool result takes."""
    if ev.legacy is None or ev.type not in _MESSAGE_TYPES:
        return ev.data
    got = _stored(ev)
    if got is None:
        return ev.data
    t, d = got
    if t == "steering/message":
        if "message" in d:
            return d["message"]
        return {**{k: v for k, v in d.items() if k != "turn"}, "id": mint(ev.seq), "role": "user"}
    if t == "user/message":
        if any(k in d for k in ("id", "role", "message")) or "content" not in d or "source" not in d:
            return d
        return {**d, "id": mint(ev.seq), "role": "user"}
    if t == "assistant/message":
        if "message" in d or "content" not in d or "provenance" not in d:
            return d
        prov = d["provenance"] if _is_obj(d["provenance"]) else {}
        rest = {k: v for k, v in d.items() if k not in ("content", "provenance")}
        return {**rest, "message": {"id": mint(ev.seq), "role": "assistant", "content": d["content"],
                                    "source": {**prov, "kind": "model"}}}
    if t == "tool/result":
        cid, err = d.get("callId"), d.get("isError")
        if "message" in d or "content" not in d or not isinstance(cid, str) or not isinstance(err, bool):
            return d
        rest = {k: v for k, v in d.items() if k not in ("callId", "content", "isError")}
        return {**rest, "message": {
            "id": inherited if inherited is not None else mint(ev.seq), "role": "user",
            "content": [{"type": "tool-result", "toolCallId": cid, "content": d["content"], "isError": err}],
            "source": {"kind": "tool", "callId": cid}}}
    return d


def _message_of(t: str, data: Any) -> Optional[JsonObj]:
    if not _is_obj(data):
        return None
    if t == "user/message":
        return data                             # type: ignore[no-any-return]
    m = data.get("message")
    return m if _is_obj(m) else None


def _seq_ident(s: int) -> int:
    return s


class V0Chain:
    """The v0 -> v1 edge's state over a v0/v1 log's events in order (see the module doc)."""

    __slots__ = ("compaction", "notes", "load")

    def __init__(self) -> None:
        # reads a surface event back whole when the fold kept only its place (a stand-in without data: the
        # flat-memory message stream, app.log.format.lazyrows); None: the fold keeps whole events
        self.load: Optional[Callable[[Event], Event]] = None
        self.compaction: Optional[Ident] = None     # the current compaction's id (an int: minted from that seq)
        # surface seq -> ("id", inherited message id) | ("compactionId", compaction id): what the edge adds
        self.notes: dict[int, tuple[str, Ident]] = {}

    def apply(self, ev: Event, events: Mapping[int, Event]) -> None:
        """One event (``events``: the surface events folded so far, by seq: a replacement's target)."""
        t = ev.type
        if t == "session/end-seed":
            self.compaction = None
            return
        d = ev.data
        if not _is_obj(d):
            return
        if t in _STARTS:
            cid = d.get("compactionId")
            if isinstance(cid, str) and cid:
                self.compaction = cid
            elif "compactionId" not in d:
                self.compaction = ev.seq
        elif t in _ENDS:
            self.compaction = None
        elif t == "user/message" and self.compaction is not None:
            m = v1_data(ev, _seq_ident)
            src = m.get("source") if _is_obj(m) else None
            if isinstance(src, dict) and src.get("kind") == "plugin" and src.get("plugin") == "compact" \
                    and "compactionId" not in src:
                self.notes[ev.seq] = ("compactionId", self.compaction)
        elif t == "tool/result" and ev.legacy is not None and _is_obj(ev.surface_op) \
                and ev.surface_op.get("op") == "replace":
            start = ev.surface_op.get("start")
            target = events.get(start) if type(start) is int else None
            if target is not None and target.data is None and self.load is not None:
                target = self.load(target)
            if target is not None:
                ident = self.ident(target)
                if ident is not None:
                    self.notes[ev.seq] = ("id", ident)

    def ident(self, ev: Event) -> Optional[Ident]:
        """The id the edge gives ``ev``'s message (an int: minted from that seq)."""
        note = self.notes.get(ev.seq)
        if note is not None and note[0] == "id":
            return note[1]
        m = _message_of(ev.type, v1_data(ev, _seq_ident))
        i = m.get("id") if m is not None else None
        return i if isinstance(i, (str, int)) else None

    def message(self, ev: Event, session_id: str) -> Optional[JsonObj]:
        """``ev``'s message as the v0 -> v1 edge leaves it (v1 shape; later edges: the fold)."""
        if ev.legacy is None and ev.seq not in self.notes:
            return event_message(ev)

        def mint(s: int) -> str:
            return f"legacy-message:{session_id}:{s}"
        note = self.notes.get(ev.seq)
        inherited = None
        if note is not None and note[0] == "id":
            inherited = mint(note[1]) if type(note[1]) is int else note[1]
        m = _message_of(ev.type, v1_data(ev, mint, inherited))
        if m is not None and note is not None and note[0] == "compactionId" and _is_obj(m.get("source")):
            cid = note[1] if isinstance(note[1], str) else f"legacy-compaction:{session_id}:{note[1]}"
            m = dict(m, source=dict(m["source"], compactionId=cid))
        return m

    def copy(self) -> V0Chain:
        c = V0Chain()
        c.compaction, c.notes, c.load = self.compaction, dict(self.notes), self.load
        return c

    def state(self, nodes: Optional[set[int]] = None) -> list[Any]:
        """JSON-able state (fold checkpoints); ``nodes``: keep only these seqs' notes (the current nodes)."""
        return [self.compaction, [[s, k, v] for s, (k, v) in self.notes.items() if nodes is None or s in nodes]]

    @classmethod
    def from_state(cls, st: Any) -> V0Chain:
        c = cls()
        if isinstance(st, list) and len(st) == 2:
            c.compaction = st[0] if isinstance(st[0], (str, int)) else None
            for n in st[1] if isinstance(st[1], list) else ():
                if isinstance(n, list) and len(n) == 3 and type(n[0]) is int and n[1] in ("id", "compactionId"):
                    c.notes[n[0]] = (n[1], n[2])
        return c
