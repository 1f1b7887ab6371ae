"""Whole-log answers built from one streaming pass: inspect, messages, exact request."""
from __future__ import annotations

from typing import Optional
from collections.abc import Callable, Iterable

from .attempts import Attempt, AttemptTracker, embedded_stream
from .lazyrows import PackedBlock, iter_lazy
from .folds import HeaderFold, SurfaceFold, build_request
from .integrity import EventChecks, dsh_refusals
import msgspec

from .limits import ProblemList
from .model import Event, Problem, typed
from .payloads import JsonObj
from .reader import LogReader, TailState


_ROW_DEFECTS = frozenset({"malformed", "bad-utf8", "bad-envelope", "bad-packed", "corrupt-frame", "torn-row",
                          "seq-gap", "seq-order"})


class RequestError(Exception):
    pass


def load_checks(reader: LogReader, problems: list[Problem], st: TailState, sf: SurfaceFold, checks: EventChecks,
                inherited: Optional[int]) -> list[Problem]:
    """The checks of a whole-log pass, appended to ``problems`` (inspect and the outline share
    them): the seed marker against the header, fold violations, the tail's and the events'
    problems, and dsh's refusals (returned; the one that refuses the log is appended)."""
    h = reader.header
    if reader.version >= 2 and h is not None and h.isSeeded is not None and h.isSeeded != (inherited is not None):
        problems.append(Problem(code="seed-marker", message=(
            "header isSeeded but no session/end-seed {inherited:true}" if h.isSeeded else
            f"session/end-seed {{inherited:true}} at seq {inherited} but the header is not isSeeded")))
    problems.extend(sf.violations)
    problems.extend(st.problems)
    problems.extend(checks.problems)
    # the scanner's verdict needs a second (envelope-only) pass only when some row is defective
    defective = any(p.code in _ROW_DEFECTS for p in problems) or bool(st.dropped)
    refusals = (dsh_refusals(reader) if defective else []) + checks.refusing
    problems.extend(p for p in refusals if p.code == "dsh-would-refuse")
    return refusals


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str, Optional[int], Optional[int], Optional[int]]] = set()
    out: list[Problem] = []
    for p in problems:
        k = (p.code, p.message, p.line, p.offset, p.seq)
        if k not in seen:
            seen.add(k)
            out.append(p)
    return out


def inspect(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
            live: bool = False) -> JsonObj:
    """Summary facts of a log (spec: ``inspect`` face), one forward pass (packed rows not expanded).

    ``live``: a writer is alive, so an open turn is in flight, not crashed: no closure is
    synthesized (``closure`` is empty; :func:`app.log.inflight.in_flight` says what is open)."""
    problems = ProblemList(reader.problems)
    if reader.fatal:
        return {"id": reader.header.id if reader.header else None, "format": reader.source.kind,
                "problems": [str(p) for p in _dedupe(list(problems) + problems.summary())], "fatal": str(reader.fatal)}
    st = reader.tail_state()
    checks = EventChecks()
    sf = SurfaceFold(keep_events=False, keep_replaced=False)   # bounded by the current nodes, not the log
    at = AttemptTracker(keep_text=False)
    hf = HeaderFold(tools=False)
    turns = events = 0
    last_seq = -1
    expected = 0
    types: dict[str, int] = {}
    title: object = None
    inherited: Optional[int] = None                # v2+: seq of the last tagged session/end-seed (the inherited cut)
    for ev in iter_lazy(reader, problems=problems, progress=progress):
        if isinstance(ev, PackedBlock):        # packed deltas, counted and grouped without their events
            assert ev.n is not None            # a checked block (iter_lazy's default) counts its members
            if ev.seq0 != expected:
                problems.append(Problem(code="seq-gap" if ev.seq0 > expected else "seq-order",
                                        message=f"seq {ev.seq0} where {expected} was expected", seq=ev.seq0,
                                        line=ev.line, offset=ev.offset if ev.offset >= 0 else None))
            events += ev.n
            expected = ev.seq0 + ev.n
            last_seq = max(last_seq, expected - 1)
            types["assistant/chunk"] = types.get("assistant/chunk", 0) + ev.n
            at.apply_deltas(ev.turn, ev.step, ev.seq0, ev.n)
            continue
        events += 1
        if ev.seq != expected:
            problems.append(Problem(code="seq-gap" if ev.seq > expected else "seq-order",
                                    message=f"seq {ev.seq} where {expected} was expected", seq=ev.seq, line=ev.line,
                                    offset=ev.offset if ev.offset >= 0 else None))
        expected = ev.seq + 1
        last_seq = max(last_seq, ev.seq)
        types[ev.type] = types.get(ev.type, 0) + 1
        if ev.type == "turn/start":
            turns += 1
        elif ev.type == "session/title" and isinstance(ev.data, dict):
            title = ev.data.get("title", title)
        elif ev.type == "session/end-seed" and isinstance(ev.data, dict) and ev.data.get("inherited") is True:
            inherited = ev.seq
        try:
            typed(ev)
        except msgspec.ValidationError as e:
            problems.append(Problem(code="bad-payload", message=f"{ev.type} payload: {e}", seq=ev.seq, line=ev.line,
                                    offset=ev.offset if ev.offset >= 0 else None))
        sf.apply(ev)
        at.apply(ev)
        hf.apply(ev)
        checks.apply(ev)
        if ev.type == "turn/end":
            at.prune()
    closure: list[Event] = [] if live else st.closure
    for ev in closure:
        sf.apply(ev)
    refusals = load_checks(reader, problems, st, sf, checks, inherited)
    hidden = [a for a in at.attempts if a.hidden_by_default]
    h = reader.header
    return {
        "id": h.id if h else None,
        "format": reader.source.kind,
        "formatVersion": reader.version,
        "inheritedEvents": (inherited or 0) if reader.version >= 2 else ((h.seedLength or 0) if h else 0),
        "path": reader.path,
        "title": title,
        "header": h.to_dict() if h else None,
        "events": events,
        "lastSeq": last_seq,
        "turns": turns,
        "messages": len(sf.message_seqs()),
        "attempts": at.count,
        "hiddenAttempts": len(hidden),
        "failedAttempts": [a.to_dict() for a in hidden],
        "openTail": st.is_open,
        "closure": [e.type for e in closure],
        "tornRows": len([d for d in st.dropped]),
        "requestHeaders": [{"seq": s, "reason": r} for s, r in hf.history],
        "types": dict(sorted(types.items())),
        "problems": [str(p) for p in _dedupe(list(problems) + problems.summary())],
        "dshWouldRefuse": bool(refusals),
    }


def messages(reader: LogReader, through: Optional[int] = None, logical: bool = True,
             checks: Optional[EventChecks] = None) -> list[JsonObj]:
    """Derived model messages of the prefix through ``through`` (inclusive); ``checks`` (an
    :class:`~app.log.integrity.EventChecks`) sees every event read."""
    sf = SurfaceFold(version=reader.version)
    for ev in reader.iter_events(logical=logical):
        if through is not None and ev.seq > through:
            break
        sf.apply(ev)
        if checks is not None:
            checks.apply(ev)
        shadowed = sf.replaced.pop(ev.seq, None)
        if shadowed:                  # never looked up again: memory stays that of the surface, not the log
            for s in shadowed:
                sf.events.pop(s, None)
                sf.projected.pop(s, None)
                sf.replaced_by.pop(s, None)
    return sf.messages()


def _attempt_at(at: AttemptTracker, seq: int) -> Attempt:
    """The attempt holding ``seq`` (a chunk or settlement just applied to ``at``)."""
    a = at.attempt_of(seq)
    if a is None:
        raise RequestError(f"no attempt holds seq {seq}")
    return a


def dispatch_boundary(reader: LogReader, at_seq: int,
                      events: Optional[Iterable[Event]] = None) -> tuple[int, JsonObj]:
    """The seq ``b`` of the first chunk of the attempt that ``at_seq`` names.

    ``at_seq`` may be the attempt's first chunk, any of its chunks, the assistant/message
    citing it, or an earlier event of the same step (then the step's next attempt).
    """
    at = AttemptTracker(keep_text=False)
    target: Optional[Event] = None
    for ev in (reader.iter_events(logical=False) if events is None else events):   # (events: from a turn start)
        if target is None:
            at.apply(ev)
            if ev.seq == at_seq:
                target = ev
                if embedded_stream(ev) is not None:          # v2+: the settlement is the attempt
                    a = at.attempt_of(ev.seq)
                    return ev.seq, a.to_dict() if a else {}
                if ev.type == "assistant/chunk":
                    a = _attempt_at(at, ev.seq)
                    return a.first_seq, a.to_dict()
                if ev.type == "assistant/message":
                    cited = ev.source_event_seqs or []
                    if cited:
                        b = min(cited)
                        a = at.attempt_of(b)
                        return b, a.to_dict() if a else {}
            continue
        # look forward for the next attempt of the same turn/step (or the next attempt at all)
        tt, ts = target.turn_step()
        if ev.type == "assistant/chunk" or embedded_stream(ev) is not None:
            d = ev.data if isinstance(ev.data, dict) else {}
            if tt is None or (d.get("turn") == tt and (ts is None or d.get("step") == ts)):
                at.apply(ev)
                a = _attempt_at(at, ev.seq)
                return a.first_seq, a.to_dict()
        if ev.type == "turn/end" and tt is not None and isinstance(ev.data, dict) and ev.data.get("turn") == tt:
            break
        at.apply(ev)
    if target is None:
        raise RequestError(f"seq {at_seq} is not in the log")
    raise RequestError(f"no model dispatch at or after seq {at_seq} ({target.type}) in its turn")


def request_at(reader: LogReader, at_seq: int, checks: Optional[EventChecks] = None) -> JsonObj:
    """The exact request at the dispatch boundary named by ``at_seq`` (spec §3)."""
    b, attempt = dispatch_boundary(reader, at_seq)
    sf = SurfaceFold(version=reader.version)
    hf = HeaderFold()
    for ev in reader.iter_events(logical=False):
        if ev.seq >= b:
            break
        sf.apply(ev)
        hf.apply(ev)
        if checks is not None:
            checks.apply(ev)
    sid = reader.header.id if reader.header else ""
    return {"atSeq": at_seq, "boundary": b, "headerSeq": hf.seq, "attempt": attempt,
            "request": build_request(hf.header, sf.messages(), sid,
                                     hf.tool_history.snapshot() if reader.version >= 4 else None)}


def dispatches(events: Iterable[Event]) -> list[tuple[int, Attempt]]:
    """Every attempt's dispatch boundary in an event list: [(first_chunk_seq, attempt)]."""
    at = AttemptTracker(keep_text=False)
    for ev in events:
        at.apply(ev)
    return [(a.first_seq, a) for a in at.attempts]
