"""Deterministic crash closure (spec §5, dsh ``repair.ts``), computed in memory.

Feed every stored event to :class:`RepairTracker`; :meth:`closure` returns the events a
repair would append when the last turn is open: unknown/not-started tool results for
pending calls, ``step/end`` if a step is open, ``turn/end {reason:{kind:"interrupted"}}``.
Each is marked ``synthesized``.  Reading never writes.
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterable

from ..format.codec import DecodeError, decode_json, encode_row
from ..index.integrity import holds_turn_end
from ..format.model import BadRow, Event, Item
from ..format.payloads import CallId, JsonObj, blocks, obj

UNKNOWN_TEXT = ("The tool call was interrupted after it was recorded, but no result was durably recorded. "
                "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
                "operation is read-only or idempotent; if it may have side effects, first verify external state "
                "or ask the user. Do not retry blindly.")
NOT_STARTED_TEXT = ("The tool call was interrupted before the Harness recorded it as started. "
                    "Retry it if it is still needed.")

_FORKED_ADVICE = ("Decide whether to retry from the tool semantics: retry only if the operation is read-only or "
                  "idempotent; if it may have side effects, first verify external state or ask the user. "
                  "Do not retry blindly.")
FORKED_TEXTS = ("The history inherited by this branch records this tool call starting but does not include its "
                "result. The parent session may have completed it after the fork point. " + _FORKED_ADVICE,
                "The history inherited by this branch has no record of this tool call starting. The parent "
                "session may have executed it after the fork point. " + _FORKED_ADVICE)


def _result_call_id(ev: Event) -> Optional[CallId]:
    d = obj(ev.data)
    m = obj(d.get("message"))
    src = obj(m.get("source"))
    if src.get("callId"):
        return src["callId"]
    if m.get("toolCallId") is not None:          # v4 role:"tool" result
        return m["toolCallId"]
    for b in blocks(m):
        if b.get("type") == "tool-result":
            return b.get("toolCallId")
    return d.get("callId")


def closer_message(version: int, cid: CallId, seq: int, text: str, cause: str = "interrupted") -> JsonObj:
    """The recovery tool-result message in the shape of format ``version`` (spec-versions §5.2)."""
    mid = f"{cause}-tool-result-{cid}-{seq}"
    if version >= 4:
        return {"id": mid, "role": "tool", "toolCallId": cid, "isError": True,
                "source": {"kind": "tool", "callId": cid}, "content": [{"type": "text", "text": text}]}
    block = {"type": "tool-result", "toolCallId": cid, "isError": True, "content": [{"type": "text", "text": text}]}
    return {"id": mid, "role": "user", "source": {"kind": "tool", "callId": cid}, "content": [block]}


class RepairTracker:
    """Crash closure of format ``version``: v0–v3 closers hold ``role:"user"`` tool-result
    wrappers; v4 closers are ``role:"tool"`` results, and a v4 result resolves a pending call
    only when it is appended in the call's own turn and step (dsh's v4 recovery)."""

    def __init__(self, version: int = 0):
        self.version = version or 0
        self.call_at: dict[CallId, tuple[Any, Any]] = {}   # callId -> (turn, step) of its assistant message
        self.open_turn: Optional[int] = None
        self.open_step: Optional[tuple[Any, Any]] = None   # (turn, step) as logged
        self.pending: dict[CallId, Optional[int]] = {}  # callId -> tool/call seq (insertion-ordered)
        self.last_seq: int = -1
        self.last_time: int = 0
        self.turn_start_seq: Optional[int] = None

    def apply(self, ev: Event) -> None:
        self.last_seq = max(self.last_seq, ev.seq)
        self.last_time = ev.time
        t = ev.type
        d = obj(ev.data)
        if t == "turn/start":
            self.open_turn = d.get("turn")
            self.turn_start_seq = ev.seq
            self.open_step = None
            self.pending.clear()
            self.call_at = {}
        elif t == "turn/end":
            self.open_turn = None
            self.open_step = None
            self.pending.clear()
            self.call_at = {}
        elif t == "step/start":
            self.open_step = (d.get("turn"), d.get("step"))
        elif t == "step/end":
            self.open_step = None
            self.pending.clear()
            self.call_at = {}
        elif t == "assistant/message":
            for b in blocks(d.get("message")):
                if b.get("type") == "tool-call" and b.get("id") is not None:
                    if self.version >= 4:
                        self.pending[b["id"]] = None
                        self.call_at[b["id"]] = (d.get("turn"), d.get("step"))
                    else:
                        self.pending.setdefault(b["id"], None)
        elif t == "tool/call":
            cid = d.get("callId")
            if self.version >= 4:
                if cid in self.pending:
                    self.pending[cid] = ev.seq
            elif cid is not None:
                self.pending[cid] = ev.seq
        elif t == "tool/result":
            cid = _result_call_id(ev)
            if self.version >= 4:
                if cid in self.pending and ev.surface_op == "append" and \
                        self.call_at.get(cid) == (d.get("turn"), d.get("step")):
                    self.pending.pop(cid, None)
            elif cid is not None:
                self.pending.pop(cid, None)

    @property
    def is_open(self) -> bool:
        return self.open_turn is not None

    def closure(self, cause: str = "interrupted") -> list[Event]:
        """The closers of an open last turn: ``interrupted`` (crash repair) or ``forked``
        (a fork seed cut inside a turn, v4 line; spec-versions §5)."""
        if self.open_turn is None:
            return []
        texts = FORKED_TEXTS if cause == "forked" else (UNKNOWN_TEXT, NOT_STARTED_TEXT)
        out: list[Event] = []
        seq = self.last_seq + 1
        turn = self.open_turn
        step = self.open_step[1] if self.open_step else None
        for cid, call_seq in self.pending.items():
            logged = call_seq is not None
            msg = closer_message(self.version, cid, seq, texts[0] if logged else texts[1], cause)
            c_turn, c_step = (self.call_at.get(cid, (turn, step)) if self.version >= 4 else (turn, step))
            data = {"turn": c_turn, "step": c_step, "message": msg,
                    "error": ({"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"} if logged
                              else {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"})}
            out.append(Event(seq=seq, type="tool/result", time=self.last_time, data=data, surface_op="append",
                             source_event_seqs=[call_seq] if logged else None, synthesized=True))
            seq += 1
        if self.open_step is not None:
            out.append(Event(seq=seq, type="step/end", time=self.last_time,
                             data={"turn": self.open_step[0], "step": self.open_step[1]}, synthesized=True))
            seq += 1
        out.append(Event(seq=seq, type="turn/end", time=self.last_time,
                         data={"turn": turn, "reason": {"kind": cause}}, synthesized=True))
        for ev in out:
            ev.raw = encode_row(ev.envelope())
        return out


def closure_of(events: Iterable[Event], version: int = 0) -> list[Event]:
    tr = RepairTracker(version)
    for ev in events:
        tr.apply(ev)
    return tr.closure()


class TailTracker:
    """The physical tail and the logical closure, kept up to date row by row (spec §5).

    Fed the stored rows in order from (at least) the last ``turn/end``: a ``turn/end``
    starts a fresh region; after it, the first row that is not a decodable event with
    seq = previous + 1 (torn, malformed, out of order) ends the kept prefix, and it and
    every later row are ``dropped`` (what a repair would truncate) until the next
    ``turn/end``.  :meth:`closure` is the repair of the kept rows.

    :class:`~app.log.index.reader.LogReader.tail_state` reads back to the last ``turn/end`` and
    feeds this; a live view keeps a :meth:`copy` of it and feeds appended rows, so the
    logical tail follows the log without re-reading it.  Items are Events or BadRows.
    """

    def __init__(self, version: int = 0):
        self.version = version or 0
        self.repair = RepairTracker(self.version)
        self.last_turn_end: Optional[Event] = None
        self.region: list[Item] = []    # rows after the last turn/end, stored order
        self.dropped: list[Item] = []   # rows of the region at and after the first defect
        self.defect: Optional[tuple[Item, str]] = None   # (item, "bad" | "order"): the first defect, for problems
        self.prev: Optional[int] = -1   # seq of the last kept event (or of the turn/end); None: unknown
        self.restart_row: Optional[Item] = None   # the row the region starts after (a turn/end, maybe a bad one)

    def apply(self, it: Item) -> None:
        if isinstance(it, Event) and it.type == "turn/end":
            self._restart(it)           # a defect before the last turn/end is not a tail defect
            return
        if not isinstance(it, Event) and holds_turn_end(it):
            self._restart_bad(it)       # so is one before a turn/end row with a bad envelope (corruption)
            return
        self.region.append(it)
        if self.dropped:
            self.dropped.append(it)
            return
        if not isinstance(it, Event) and it.kind == "over-limit":
            # a legal row over Session Lens's own limit (not a defect dsh sees): kept; its chunks do not
            # change the closure; the next seq follows its members when they are known
            self.prev = (it.seqs[0] + it.seqs[1] - 1) if it.seqs is not None and (
                self.prev is None or it.seqs[0] == self.prev + 1) else None
            return
        if not isinstance(it, Event):
            self.dropped.append(it)
            self.defect = (it, "bad")
            return
        if self.prev is not None and it.seq != self.prev + 1:
            self.dropped.append(it)
            self.defect = (it, "order")
            return
        self.prev = it.seq
        self.repair.apply(it)

    def _restart(self, turn_end: Event) -> None:
        self.repair = RepairTracker(self.version)
        self.repair.apply(turn_end)
        self.last_turn_end = turn_end
        self.restart_row = turn_end
        self.region = []
        self.dropped = []
        self.defect = None
        self.prev = turn_end.seq

    def _restart_bad(self, row: BadRow) -> None:
        """A stored row that holds a turn/end but is not a valid event: the turn is over, and
        the seq of the next kept event is the row's own seq + 1 when it has an integer one."""
        self.repair = RepairTracker(self.version)
        self.last_turn_end = None
        self.restart_row = row
        self.region = []
        self.dropped = []
        self.defect = None
        seq: Optional[int] = None
        try:
            obj, _ = decode_json(row.raw)
            seq = obj.get("seq") if isinstance(obj, dict) and type(obj.get("seq")) is int else None
        except DecodeError:
            pass
        self.prev = seq
        if seq is not None:
            self.repair.last_seq = seq

    def retract_trailing_bad(self) -> list[Item]:
        """Forget bad rows at the very end (a torn last line that a writer has since
        completed: the complete row arrives as an event).  Returns the rows removed."""
        k = len(self.region)
        while k and not isinstance(self.region[k - 1], Event):
            k -= 1
        if k == len(self.region):
            return []
        removed = self.region[k:]
        kept = self.region[:k]
        end = self.restart_row
        TailTracker.__init__(self, self.version)
        if end is not None:
            self.apply(end)
        for it in kept:
            self.apply(it)
        return removed

    def copy(self) -> TailTracker:
        c = TailTracker.__new__(TailTracker)
        r = RepairTracker.__new__(RepairTracker)
        r.__dict__.update(self.repair.__dict__)
        r.pending = dict(self.repair.pending)
        r.call_at = dict(self.repair.call_at)
        c.repair = r
        c.version = self.version
        c.last_turn_end = self.last_turn_end
        c.restart_row = self.restart_row
        c.region = list(self.region)
        c.dropped = list(self.dropped)
        c.defect = self.defect
        c.prev = self.prev
        return c

    @property
    def open_turn(self) -> Optional[int]:
        return self.repair.open_turn

    @property
    def last_seq(self) -> int:
        return self.repair.last_seq

    def closure(self) -> list[Event]:
        return self.repair.closure()
