"""Fork planning (spec §7): core boundary rules and the host's message-anchor promotion.

Pure decisions over a :class:`LogReader` (one fast row scan, payloads not decoded); the
store layer (:mod:`app.store.forking`) copies the rows and publishes the child.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from ..format.model import Event, is_event
from ..format.payloads import JsonObj, obj
from ..index.reader import LogReader

if TYPE_CHECKING:
    from .repair import RepairTracker


class ForkError(Exception):
    """A refused fork; ``code`` as dsh names it (INVALID_BOUNDARY, OPEN_TURN, FORK_UNAVAILABLE)."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.reason = message


@dataclass
class ForkPlan:
    source_id: str
    boundary: int                 # last seq of the seed, inclusive (-1: empty seed)
    stored_through: int           # last *stored* seq copied verbatim (< boundary when closers are added)
    anchor: Optional[int]
    closure: list[Event] = field(default_factory=list)     # synthesized closers copied into the seed
    turns: int = 0                # completed turns in the seed
    last_message_seq: Optional[int] = None
    ends_with_end_seed: bool = False
    note: str = ""
    cut_segment: Optional[tuple[Any, Any]] = None   # (pos, end) of the segment holding ``stored_through``
    open_tracker: Optional[RepairTracker] = None   # core fork cut inside a turn (v2+): RepairTracker fed the seed

    @property
    def seed_length(self) -> int:
        return self.boundary + 1

    @property
    def synthesized_seqs(self) -> list[int]:
        return [e.seq for e in self.closure]

    def to_dict(self) -> dict[str, Any]:
        return {"boundary": self.boundary, "storedThrough": self.stored_through, "anchor": self.anchor,
                "seedLength": self.seed_length, "synthesized": self.synthesized_seqs, "turns": self.turns,
                "lastMessageSeq": self.last_message_seq, "note": self.note}


def check_core_boundary(marks: list[tuple[int, str]], b: int, contiguous_through: int) -> None:
    """Core ``fork`` rules: ``events[b].seq == b`` and no open turn at ``b``."""
    if b < 0:
        return
    if b > contiguous_through:
        raise ForkError("INVALID_BOUNDARY", f"seq {b} is not a contiguous stored event (seqs are contiguous only "
                                            f"through {contiguous_through})")
    last = None
    for seq, typ in marks:
        if seq > b:
            break
        if typ in ("turn/start", "turn/end"):
            last = (seq, typ)
    if last and last[1] == "turn/start":
        raise ForkError("OPEN_TURN", f"seq {b} lies inside turn started at seq {last[0]}, which has no turn/end "
                                     "by then")


def plan_fork(reader: LogReader, at_seq: Optional[int] = None, live: bool = False,
              strict_anchor: bool = False) -> ForkPlan:
    """The host fork: promote the anchor to its whole completed turn (spec §7 Host).

    ``live``: the source is being written: an open turn refuses.  Otherwise a crashed
    source forks from its logical view, the closers copied into the seed.  Works from the
    reader's index (built here if missing): turn boundaries and messages are index marks,
    so no payload is decoded.  An anchor past the last event forks after the last turn, as
    dsh's host does; ``strict_anchor`` refuses it instead (the CLI: a seq that is not in the
    log is a mistake, not a request for the whole log).
    """
    sid = reader.header.id if reader.header else ""
    idx = reader.index or reader.build_index()
    st = reader.tail_state()
    limit = idx.last
    if not live and st.dropped:
        first_dropped = next((d.seq for d in st.dropped if is_event(d)), None)
        limit = st.last_seq if first_dropped is None else min(st.last_seq, first_dropped - 1)
    closure = [] if live else list(st.closure)
    marks = list(idx.marks(-1, limit))
    if limit < 0 and not closure:
        if idx.events or sum(idx.rows):
            raise ForkError("FORK_UNAVAILABLE", "the log has no completed turn to fork from (its stored rows do not "
                                                "form a valid prefix: see the physical view)")
        # as the dsh host: no turn/end, nothing to fork (never an empty child)
        raise ForkError("FORK_UNAVAILABLE", "the session has no completed turn to fork from (it holds no events)")
    last_seq = limit
    turn_ends = [s for s, t in marks if t == "turn/end"]
    if closure:
        turn_ends.append(closure[-1].seq)      # the logical view ends with the synthesized turn/end
    if at_seq is not None and at_seq < 0:
        raise ForkError("INVALID_BOUNDARY", f"anchor {at_seq} is negative")
    end = closure[-1].seq if closure else last_seq
    if strict_anchor and at_seq is not None and at_seq > end:
        raise ForkError("INVALID_BOUNDARY", f"anchor seq {at_seq} is past the last event of the log (seq {end}); "
                                            "give a seq in the log, or no anchor to fork after the last completed turn")
    if at_seq is None or at_seq > end:
        if not turn_ends:
            raise ForkError("FORK_UNAVAILABLE", "the log has no completed turn to fork from")
        b_end = turn_ends[-1]
    else:
        after = [s for s in turn_ends if s >= at_seq]
        if not after:
            turn_start = max((s for s, t in marks if t == "turn/start" and s <= at_seq), default=None)
            raise ForkError("OPEN_TURN", f"the anchor seq {at_seq} is in an open turn"
                                         f"{f' (started at seq {turn_start})' if turn_start is not None else ''}: "
                                         "it has no turn/end yet; wait until the turn completes")
        b_end = after[0]
    use_closure = bool(closure) and b_end == closure[-1].seq
    if use_closure:
        boundary = closure[-1].seq
        stored_through = closure[0].seq - 1
        if stored_through > idx.contiguous_through:
            raise ForkError("INVALID_BOUNDARY", f"the stored log is not contiguous through seq {stored_through}")
        check_core_boundary(marks + [(e.seq, e.type) for e in closure], boundary, boundary)
    else:
        # the newest dsh host cuts right after the boundary turn's turn/end, every source version
        # (docs/decisions/0018-fork-cut-newest-host.md; the retired rule copied the rows up to the next
        # turn/start): what follows the turn/end (an inbox splice for the next turn, a title, ...) is not inherited
        boundary = b_end
        stored_through = boundary
        closure = []
        check_core_boundary(marks, stored_through, idx.contiguous_through)
    turns = sum(1 for s, t in marks if t == "turn/end" and s <= stored_through) + (1 if use_closure else 0)
    last_msg = max((s for s, t in marks if t == "assistant/message" and s <= stored_through), default=None)
    i = idx.locate(stored_through) if stored_through >= 0 else None
    return ForkPlan(source_id=sid, boundary=boundary, stored_through=stored_through, anchor=at_seq,
                    closure=closure, turns=turns, last_message_seq=last_msg,
                    cut_segment=(idx.seg_pos[i], idx.seg_end[i]) if i is not None else None,
                    ends_with_end_seed=((stored_through, "session/end-seed") in marks and not use_closure),
                    note="forked from the logical view: closers of the crashed turn are copied" if use_closure else "")


def plan_core_fork(reader: LogReader, boundary: int) -> ForkPlan:
    """dsh's core ``fork(source, boundary)`` (spec-versions §7.1) on a v2+ log: the seed is the
    stored events ``0..boundary`` whatever turn is open there; the child then closes an open
    turn with ``forked`` closers after the tagged marker."""
    from .repair import RepairTracker
    version = getattr(reader, "version", 0) or 0
    if version < 2:
        raise ForkError("INVALID_BOUNDARY", "a core fork inside a turn is a v2+ operation (v0 refuses OPEN_TURN)")
    idx = reader.index or reader.build_index()
    if boundary < 0 or boundary > idx.contiguous_through:
        raise ForkError("INVALID_BOUNDARY", f"seq {boundary} is not a contiguous stored event")
    tracker = RepairTracker(version)
    for ev in reader.iter_events():
        if ev.seq > boundary:
            break
        tracker.apply(ev)
    i = idx.locate(boundary)
    if i is None:                     # not reached: a contiguous stored seq lies in a segment
        raise ForkError("INVALID_BOUNDARY", f"seq {boundary} is in no stored segment")
    marks = list(idx.marks(-1, boundary))
    return ForkPlan(source_id=reader.header.id if reader.header else "", boundary=boundary, stored_through=boundary,
                    anchor=boundary, turns=sum(1 for _s, t in marks if t == "turn/end"),
                    last_message_seq=max((s for s, t in marks if t == "assistant/message"), default=None),
                    cut_segment=(idx.seg_pos[i], idx.seg_end[i]),
                    open_tracker=tracker if tracker.is_open else None,
                    note="core fork: a turn open at the cut gets forked closers" if tracker.is_open else "")


def child_header(parent: JsonObj, child_id: str, seed_length: int, created_at: int, version: int = 0) -> JsonObj:
    """The child's header in the source's format: v0/v1 ``seedLength``; v2+ ``isSeeded`` (the
    inherited cut is the tagged end-seed).  Top level as dsh writes a fork: ``delegationDepth``
    0 and no ``origin``."""
    h: JsonObj = {"type": "session", "version": version or 0, "id": child_id, "createdAt": created_at}
    if parent.get("cwd") is not None:
        h["cwd"] = parent["cwd"]
    h["parentSession"] = parent["id"]
    if (version or 0) >= 2:
        h["isSeeded"] = True
    else:
        h["seedLength"] = seed_length
    h["delegationDepth"] = 0          # a fork is a top-level session (dsh writes no origin, depth 0)
    if parent.get("agentPreset") is not None:
        h["agentPreset"] = parent["agentPreset"]
    return h


def end_seed(seq: int, time_ms: int, inherited: bool = False) -> JsonObj:
    """``session/end-seed``: v0/v1 ``{}`` (the child's first lifecycle); v2+ the tagged inherited
    marker ``{inherited:true}`` at the inherited count, with the time of the last seed event."""
    return {"type": "session/end-seed", "seq": seq, "time": time_ms, "data": {"inherited": True} if inherited else {}}


def seed_tail(plan: ForkPlan, version: int, last_time: int,
              tracker: Optional[RepairTracker] = None) -> list[JsonObj]:
    """Rows after the seed's stored rows: the logical closers the plan copies, then the marker at
    ``boundary + 1`` with the time of event ``boundary``, as the newest dsh host writes it (v2+: the
    tagged ``{inherited: true}``; v0/v1: ``{}`` unless the seed already ends with one, their vocabulary),
    then for v2+ the ``forked`` closers of a turn still open at the cut (``tracker``: a RepairTracker
    fed the seed, spec-versions §7.1)."""
    rows = [e.envelope() for e in plan.closure]
    if (version or 0) >= 2:
        rows.append(end_seed(plan.boundary + 1, last_time, inherited=True))
        if tracker is not None:
            marker = Event(seq=plan.boundary + 1, type="session/end-seed", time=last_time, data={"inherited": True})
            tracker.apply(marker)
            rows.extend(e.envelope() for e in tracker.closure("forked"))
    elif not plan.ends_with_end_seed:
        rows.append(end_seed(plan.boundary + 1, last_time))
    return rows


def eligibility(events: list[Event], tail_closure: Optional[list[Event]] = None,
                live: bool = False) -> dict[int, tuple[bool, str]]:
    """For UI: seq -> (eligible, reason) for every assistant/message in ``events`` (stored order).

    Eligible: content-bearing and the last assistant message of a turn that has ended
    (a crashed turn counts as ended in the logical view unless the session is live).
    """
    out: dict[int, tuple[bool, str]] = {}
    turn_of_msg: dict[int, Any] = {}          # message seq -> its turn (as logged)
    ended: set[Any] = set()
    last_msg_of_turn: dict[Any, int] = {}
    for ev in list(events) + list(tail_closure or []):
        d = obj(ev.data)
        if ev.type == "assistant/message":
            turn_of_msg[ev.seq] = d.get("turn")
            content = (d.get("message") or {}).get("content") if isinstance(d.get("message"), dict) else None
            if content:
                last_msg_of_turn[d.get("turn")] = ev.seq
        elif ev.type == "turn/end":
            if not (live and ev.synthesized):
                ended.add(d.get("turn"))
    for ev in events:
        if ev.type != "assistant/message":
            continue
        d = obj(ev.data)
        content = (d.get("message") or {}).get("content") if isinstance(d.get("message"), dict) else None
        turn = turn_of_msg.get(ev.seq)
        if not content:
            out[ev.seq] = (False, "empty message: nothing to fork from")
        elif turn not in ended:
            out[ev.seq] = (False, f"turn {turn} is still open: fork once it completes")
        elif last_msg_of_turn.get(turn) != ev.seq:
            out[ev.seq] = (False, f"not the last reply of turn {turn}: fork from the turn's final message "
                                  f"(seq {last_msg_of_turn.get(turn)}) — a fork keeps whole turns")
        else:
            out[ev.seq] = (True, f"fork after turn {turn}")
    return out
