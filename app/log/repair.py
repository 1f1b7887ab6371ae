"""Deterministic crash closure (spec §5, dsh ``repair.ts``), computed in memory.

Feed every stored event to :class:`RepairTracker`; :meth:`closure` returns the events a
repair would append when the last turn is open: unknown/not-started tool results for
pending calls, ``step/end`` if a step is open, ``turn/end {reason:{kind:"interrupted"}}``.
Each is marked ``synthesized``.  Reading never writes.
"""
from __future__ import annotations

from typing import Iterable, Optional

from .codec import encode_row
from .model import Event

UNKNOWN_TEXT = ("The tool call was interrupted after it was recorded, but no result was durably recorded. "
                "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
                "operation is read-only or idempotent; if it may have side effects, first verify external state "
                "or ask the user. Do not retry blindly.")
NOT_STARTED_TEXT = ("The tool call was interrupted before it was recorded as started; it did not run. "
                    "It is safe to issue it again if it is still needed.")


def _result_call_id(ev: Event) -> Optional[str]:
    d = ev.data if isinstance(ev.data, dict) else {}
    m = d.get("message") if isinstance(d.get("message"), dict) else {}
    src = m.get("source") if isinstance(m.get("source"), dict) else {}
    if src.get("callId"):
        return src["callId"]
    for b in m.get("content") or []:
        if isinstance(b, dict) and b.get("type") == "tool-result":
            return b.get("toolCallId")
    return d.get("callId")


class RepairTracker:
    def __init__(self):
        self.open_turn: Optional[int] = None
        self.open_step: Optional[tuple] = None
        self.pending: dict[str, Optional[int]] = {}     # callId -> tool/call seq (insertion-ordered)
        self.last_seq: int = -1
        self.last_time: int = 0
        self.turn_start_seq: Optional[int] = None

    def apply(self, ev: Event) -> None:
        self.last_seq = max(self.last_seq, ev.seq)
        self.last_time = ev.time
        t = ev.type
        d = ev.data if isinstance(ev.data, dict) else {}
        if t == "turn/start":
            self.open_turn = d.get("turn")
            self.turn_start_seq = ev.seq
            self.open_step = None
            self.pending.clear()
        elif t == "turn/end":
            self.open_turn = None
            self.open_step = None
            self.pending.clear()
        elif t == "step/start":
            self.open_step = (d.get("turn"), d.get("step"))
        elif t == "step/end":
            self.open_step = None
            self.pending.clear()
        elif t == "assistant/message":
            m = d.get("message") if isinstance(d.get("message"), dict) else {}
            for b in m.get("content") or []:
                if isinstance(b, dict) and b.get("type") == "tool-call" and b.get("id") is not None:
                    self.pending.setdefault(b["id"], None)
        elif t == "tool/call":
            cid = d.get("callId")
            if cid is not None:
                self.pending[cid] = ev.seq
        elif t == "tool/result":
            cid = _result_call_id(ev)
            if cid is not None:
                self.pending.pop(cid, None)

    @property
    def is_open(self) -> bool:
        return self.open_turn is not None

    def closure(self) -> list[Event]:
        if self.open_turn is None:
            return []
        out: list[Event] = []
        seq = self.last_seq + 1
        turn = self.open_turn
        step = self.open_step[1] if self.open_step else None
        for cid, call_seq in self.pending.items():
            logged = call_seq is not None
            block = {"type": "tool-result", "toolCallId": cid, "isError": True,
                     "content": [{"type": "text", "text": UNKNOWN_TEXT if logged else NOT_STARTED_TEXT}]}
            msg = {"id": f"interrupted-tool-result-{cid}-{seq}", "role": "user",
                   "source": {"kind": "tool", "callId": cid}, "content": [block]}
            data = {"turn": turn, "step": step, "message": msg,
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
                         data={"turn": turn, "reason": {"kind": "interrupted"}}, synthesized=True))
        for ev in out:
            ev.raw = encode_row(ev.envelope())
        return out


def closure_of(events: Iterable[Event]) -> list[Event]:
    tr = RepairTracker()
    for ev in events:
        tr.apply(ev)
    return tr.closure()
