"""A v2 log as today's dsh reads it: through its v2 -> v3 migration (issue 27 item 1, spec-versions §4.3, §8).

Today's dsh opens a v2 generation only by migrating it (v2 -> v3 -> v4) and derives messages and
requests from the result.  The v2 -> v3 edge (dsh ``session-format-v2-to-v3/src/migration.ts``, one
streaming stage; described here, not copied) turns the request prompt into surface messages:

* it follows the open step (opened by ``step/start``, closed by ``step/end`` and ``turn/end``), the
  current system head and the current prompt (initially ``""``);
* right **after** the first ``step/start`` it inserts an empty head: a ``system/message`` appended to
  the surface, anchored at that ``step/start``;
* at each ``request/header`` whose ``header.system`` (absent or not a string: ``""``) differs from the
  current prompt it inserts, right **before** that header, a ``system/message`` that replaces the
  current head (``{op: "replace", startSeq: head, endSeq: head}``, ``sourceEventSeqs: [head]``) with
  the new prompt (content ``[]`` for ``""``, else one text block), anchored at that header;
* every ``request/header`` loses ``header.system``; every other event keeps its place, renumbered
  (each insertion shifts the later seqs by one), and the seqs it cites are renumbered with it
  (``sourceEventSeqs``, ``surfaceOp`` endpoints, ``command/done.sourceEventSeq``,
  ``compaction/summary|prune.shadowedRange|shadowedSeqs``, ``session/title[-llm-request].messageSeqs``);
* an inserted message is ``{turn, step, message: {id, role: "system", source: {kind: "plugin", plugin:
  "@deepseek-ai/dsh-system-prompt"}, content}}`` with the open step's turn and step and the anchor's
  time; its id is ``v2-to-v3-system-`` + the hex SHA-256 of the JSON text of
  ``["session-format-v2-to-v3", <header id>, <anchor's stored seq>, <anchor's type>]``;
* it refuses the log at a surface event (user/assistant message, tool result) before the first head,
  at a prompt change while no step is open, and at an event type outside its inventory
  (:data:`INVENTORY`; checked by the verdict, which reads every row's type).

:class:`V2Head` is that state machine, the one place the rule lives: the verdict
(:mod:`app.log.index.verdict`) asks it whether the migration refuses, the surface fold
(:class:`~app.log.fold.folds.SurfaceFold`) asks it for the head message of a prefix, and
:func:`migrate` gives the renumbered event stream with the seq map back to the stored rows.

Because the head is always the first surface node (nothing may come before it) and only prompt
changes replace it, the derived messages of a prefix are the head's message (when its prompt is not
empty) followed by the stored messages; the folds therefore keep the stored seqs and link the head
message to its anchor row, so a user who follows a message lands on a stored row.
"""
from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Iterable, Iterator

from ..format.payloads import JsonObj

if TYPE_CHECKING:
    from ..index.reader import LogReader
    from .folds import SurfaceFold

SYSTEM_PLUGIN = "@deepseek-ai/dsh-system-prompt"
# The event types the edge can transform (its admission: the released-v2 inventory of dsh's
# ``session-format-v1-to-v2/src/dispositions.ts`` = the frozen released-v0 inventory of
# ``session-format-v0-to-v1/src/dispositions.ts`` without ``assistant/chunk``, with ``assistant/attempt``,
# plus the two feedback events); any other type refuses the migration, ``ignorable`` or not.
INVENTORY = frozenset({
    "agent-preset/selected", "agent/inbox/spliced", "approval/asked", "approval/decided", "approval/policy",
    "assistant/attempt", "assistant/message", "command/done", "command/run", "compaction/end", "compaction/prune",
    "compaction/start", "compaction/summary", "feedback/record", "goal/change", "hook/invoked", "hook/result",
    "llm/retry", "llm/retry-started", "model/selection", "permission/preset", "plan/mode", "request/context",
    "request/header", "sandbox/mode", "schedule/change", "session-log-deepseek/delivery-accepted",
    "session/end-seed", "session/title", "session/title-llm-request", "step/end", "step/start",
    "subagent/descriptor", "subagent/model-selection-policy", "team/member", "team/message/delivered",
    "team/message/queued", "team/task", "todo/write", "tool-workflow/agent-end", "tool-workflow/agent-start",
    "tool-workflow/run-end", "tool-workflow/run-start", "tool/call", "tool/code-dispatch",
    "tool/code-dispatch-start", "tool/result", "turn/end", "turn/start", "user/message",
    "web/deepseek-search-llm-request", "feedback/message-put", "feedback/message-delete"})
SURFACE = frozenset({"user/message", "assistant/message", "tool/result"})
TYPES = SURFACE | {"request/header", "step/start", "step/end", "turn/end"}     # the types the state machine reads


def system_id(session_id: str, anchor_seq: int, anchor_type: str) -> str:
    """The id the edge gives an inserted system message (its anchor's stored seq and type)."""
    ident = json.dumps(["session-format-v2-to-v3", session_id, anchor_seq, anchor_type],
                       separators=(",", ":"), ensure_ascii=False)
    return "v2-to-v3-system-" + hashlib.sha256(ident.encode("utf-8")).hexdigest()


def header_prompt(data: Any) -> str:
    """The prompt of a v2 ``request/header`` payload as the edge reads it (absent or not a string: "")."""
    hdr = data.get("header") if isinstance(data, dict) else None
    system = hdr.get("system") if isinstance(hdr, dict) else None
    return system if isinstance(system, str) else ""


class V2Head:
    """The v2 -> v3 edge's state over the stored events in order (see the module doc)."""

    __slots__ = ("step", "anchor", "prompt", "inserted", "refusal")

    def __init__(self) -> None:
        self.step: Optional[tuple[Any, Any]] = None         # (turn, step) of the open step
        self.anchor: Optional[tuple[int, str, Any]] = None  # (stored seq, type, time) of the current head's anchor
        self.prompt = ""
        self.inserted = False       # the last :meth:`apply` inserted a system message (before a header, after a step)
        self.refusal: Optional[str] = None                  # why the edge refuses the log (the first reason)

    def apply(self, t: str, seq: int, data: Any = None, time: Any = None) -> None:
        """One stored event (``data``/``time``: needed for ``request/header`` and ``step/start`` only)."""
        self.inserted = False
        if t == "request/header":
            prompt = header_prompt(data)
            if prompt != self.prompt:
                if self.step is None:
                    self._refuse(f"request/header at seq {seq} changes the system prompt while no step is open")
                    return
                self.anchor, self.prompt, self.inserted = (seq, t, time), prompt, True
        elif t == "step/start":
            d = data if isinstance(data, dict) else {}
            self.step = (d.get("turn"), d.get("step"))
            if self.anchor is None:
                self.anchor, self.inserted = (seq, t, time), True
        elif t in ("step/end", "turn/end"):
            self.step = None
        elif t in SURFACE and self.anchor is None:
            self._refuse(f"{t} at seq {seq} comes before the first step/start (it cannot get a system head)")

    def _refuse(self, why: str) -> None:
        if self.refusal is None:
            self.refusal = why

    def message(self, session_id: str) -> Optional[JsonObj]:
        """The head's message as the edge writes it (v3 shape), None when it has none or its prompt is empty
        (an empty system message gives no model message)."""
        if self.anchor is None or self.prompt == "":
            return None
        return {"id": system_id(session_id, self.anchor[0], self.anchor[1]), "role": "system",
                "source": {"kind": "plugin", "plugin": SYSTEM_PLUGIN},
                "content": [{"type": "text", "text": self.prompt}]}

    def copy(self) -> V2Head:
        c = V2Head()
        c.step, c.anchor, c.prompt, c.refusal = self.step, self.anchor, self.prompt, self.refusal
        return c

    def state(self) -> list[Any]:
        """JSON-able state (fold checkpoints)."""
        return [list(self.step) if self.step is not None else None,
                list(self.anchor) if self.anchor is not None else None, self.prompt, self.refusal]

    @classmethod
    def from_state(cls, st: Any) -> V2Head:
        h = cls()
        if isinstance(st, list) and len(st) == 4:
            h.step = (st[0][0], st[0][1]) if isinstance(st[0], list) and len(st[0]) == 2 else None
            h.anchor = (st[1][0], st[1][1], st[1][2]) if isinstance(st[1], list) and len(st[1]) == 3 else None
            h.prompt = st[2] if isinstance(st[2], str) else ""
            h.refusal = st[3] if isinstance(st[3], str) else None
        return h


# --------------------------------------------------------------------------- the renumbered stream

def _row(ev: Any) -> JsonObj:
    out: JsonObj = {"type": ev.type, "seq": ev.seq, "time": ev.time, "data": ev.data}
    if ev.ignorable is not None:
        out["ignorable"] = ev.ignorable
    if ev.surface_op is not None:
        out["surfaceOp"] = ev.surface_op
    if ev.source_event_seqs is not None:
        out["sourceEventSeqs"] = list(ev.source_event_seqs)
    return out


def _remap(row: JsonObj, one: Any) -> JsonObj:
    """``row`` with the stored seqs it cites renumbered by ``one`` (the edge's reference inventory),
    the replace endpoints in the v3 spelling and an empty ``tools``/``adapterDefaults`` dropped."""
    d = row["data"] if isinstance(row["data"], dict) else {}
    t = row["type"]
    if t == "command/done" and "sourceEventSeq" in d:
        d = dict(d, sourceEventSeq=one(d["sourceEventSeq"]))
    elif t in ("compaction/summary", "compaction/prune"):
        rng: dict[str, Any] = d["shadowedRange"] if isinstance(d.get("shadowedRange"), dict) else {}
        d = dict(d, shadowedRange=dict(rng, start=one(rng.get("start")), end=one(rng.get("end"))),
                 shadowedSeqs=[one(s) for s in d.get("shadowedSeqs") or []])
    elif t in ("session/title", "session/title-llm-request"):
        d = dict(d, messageSeqs=[one(s) for s in d.get("messageSeqs") or []])
    elif t == "request/header" and isinstance(d.get("header"), dict):
        h = {k: v for k, v in d["header"].items() if k != "system" and not (k == "tools" and v == [])
             and not (k == "adapterDefaults" and v == {})}
        d = dict(d, header=h)
    out = dict(row, data=d) if row["data"] is not d else row
    if "sourceEventSeqs" in out:
        out["sourceEventSeqs"] = [one(s) for s in out["sourceEventSeqs"]]
    op = out.get("surfaceOp")
    if isinstance(op, dict):
        out["surfaceOp"] = {"op": "replace", "startSeq": one(op.get("start", op.get("startSeq"))),
                            "endSeq": one(op.get("end", op.get("endSeq")))}
    return out


def _system_row(h: V2Head, session_id: str, seq: int, head_seq: Optional[int]) -> JsonObj:
    anchor = h.anchor
    assert anchor is not None
    content: list[Any] = [] if h.prompt == "" else [{"type": "text", "text": h.prompt}]
    turn, step = h.step if h.step is not None else (None, None)
    row: JsonObj = {"type": "system/message", "seq": seq, "time": anchor[2], "data": {
        "turn": turn, "step": step, "message": {
            "id": system_id(session_id, anchor[0], anchor[1]), "role": "system",
            "source": {"kind": "plugin", "plugin": SYSTEM_PLUGIN}, "content": content}}}
    if head_seq is None:
        row["surfaceOp"] = "append"
    else:
        row["surfaceOp"] = {"op": "replace", "startSeq": head_seq, "endSeq": head_seq}
        row["sourceEventSeqs"] = [head_seq]
    return row


def migrate(events: Iterable[Any], session_id: str) -> Iterator[tuple[JsonObj, Optional[int], int]]:
    """The v2 -> v3 edge over stored v2 events (in seq order): ``(v3 event, stored seq, anchor)`` per
    migrated event, in order, renumbered densely from 0, where ``stored seq`` is the row it came from
    (None: inserted by the edge) and ``anchor`` the stored row to show for it (itself, or an inserted
    message's anchor).  Stops at the first refusal (``ValueError`` with the edge's reason)."""
    h = V2Head()
    mapping: dict[int, int] = {}          # stored seq -> migrated seq
    nxt = 0
    head_seq: Optional[int] = None

    def one(s: Any) -> Any:
        return mapping.get(s, s) if type(s) is int else s

    for ev in events:
        h.apply(ev.type, ev.seq, ev.data, ev.time)
        if h.refusal is not None:
            raise ValueError(h.refusal)
        before = h.inserted and ev.type == "request/header"
        if before:
            yield _system_row(h, session_id, nxt, head_seq), None, ev.seq
            head_seq, nxt = nxt, nxt + 1
        mapping[ev.seq] = nxt
        yield dict(_remap(_row(ev), one), seq=nxt), ev.seq, ev.seq
        nxt += 1
        if h.inserted and not before:                   # the first step/start: the empty head after it
            yield _system_row(h, session_id, nxt, None), None, ev.seq
            head_seq, nxt = nxt, nxt + 1


def derive_as(sf: SurfaceFold, reader: LogReader, as_written: bool = False) -> SurfaceFold:
    """``sf`` (a :class:`~app.log.fold.folds.SurfaceFold` of ``reader``'s log) set to derive as the faces do:
    in today's dsh's shape unless ``as_written``; for a v2 log (and a v0/v1 JSONL or zstd log, which dsh reads
    through its chain v0 -> v1 -> v2 -> ..., decision 0022) that shape is the migrated one only where dsh's
    migration accepts the log (:func:`app.log.index.verdict.migration_refuses`); where it refuses, the
    messages stay as written (and the verdict says dsh would refuse the log).  A SQLite store is read as
    written (dsh's v1+ trees read no SQLite store)."""
    sf.as_written = as_written
    sf.v2_session = None
    chain = sf.version == 2 or (sf.version in (0, 1) and reader.source.kind in ("jsonl", "zstd"))
    if chain and sf.v2 is not None and not as_written and reader.header is not None:
        from ..index.verdict import migration_refuses
        if not migration_refuses(reader):
            sf.v2_session = reader.header.id
    return sf
