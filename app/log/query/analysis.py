"""Whole-log answers built from one streaming pass: inspect, messages, exact request."""
from __future__ import annotations

from itertools import accumulate, repeat
from operator import add
from typing import Any, Optional
from collections.abc import Callable, Iterable

from ..gcpause import collector_paused
from ..fold.attempts import Attempt, AttemptTracker, cited_ints, embedded_stream
from ..format.lazyrows import Lazy, PackedBlock, iter_lazy, lazy_row
from ..format import fastrows as fr
from ..fold.folds import HeaderFold, SurfaceFold, fold_request
from ..fold.v2heads import derive_as
from ..index.integrity import EventChecks
from ..index.verdict import ReadPath, dsh_verdict
import msgspec

from ..format.limits import ProblemList
from ..format.model import Event, Problem, typed
from ..format.payloads import JsonObj
from ..index.reader import LogReader, TailState
from ..source.sources import RowPos, Segment


_ROW_DEFECTS = frozenset({"malformed", "bad-utf8", "bad-envelope", "bad-packed", "corrupt-frame", "torn-row",
                          "seq-gap", "seq-order"})


class RequestError(Exception):
    pass


def require_header(hf: HeaderFold, at_seq: int, boundary: int) -> None:
    """dsh builds a request only from a folded ``request/header``: a boundary whose prefix holds none
    has no request (issue 27 item 3), never one without provider or model."""
    if hf.seq is None:
        raise RequestError(f"no request at seq {at_seq}: no request/header comes before its dispatch boundary "
                           f"(seq {boundary}), so dsh built no request there")


def load_checks(reader: LogReader, problems: list[Problem], st: TailState, sf: SurfaceFold, checks: EventChecks,
                inherited: Optional[int], path: Optional[ReadPath] = None) -> list[Problem]:
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
    # dsh's verdict: one function for every face (corruption, unknown required types, the migration
    # an older generation goes through, native v4 admission); its problems are the log's problems
    defective = any(p.code in _ROW_DEFECTS for p in problems) or bool(st.dropped)
    refusals = dsh_verdict(reader, checks, defective, path)      # (path: fed by the caller's read)
    problems.extend(refusals)
    return refusals


def dedupe_problems(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[str, str, Optional[int], Optional[int], Optional[int]]] = set()
    out: list[Problem] = []
    for p in problems:
        k = (p.code, p.message, p.line, p.offset, p.seq)
        if k not in seen:
            seen.add(k)
            out.append(p)
    return out


class _InspectPass:
    """The state of one ``inspect`` pass: counts, folds, checks; :meth:`event` and :meth:`block` are the
    exact steps, :meth:`fast` reads rows as lean records (:mod:`app.log.format.fastrows`) where it can."""

    def __init__(self, problems: ProblemList) -> None:
        self.problems = problems
        self.checks = EventChecks()
        self.sf = SurfaceFold(keep_events=False, keep_replaced=False)   # bounded by the current nodes, not the log
        self.at = AttemptTracker(keep_text=False)
        self.hf = HeaderFold(tools=False)
        self.turns = self.events = 0
        self.last_seq = -1
        self.expected = 0
        self.types: dict[str, int] = {}
        self.title: object = None
        self.inherited: Optional[int] = None     # v2+: seq of the last tagged session/end-seed (the inherited cut)

    def seq_problem(self, seq: int, line: Optional[int], offset: int) -> None:
        self.problems.append(Problem(code="seq-gap" if seq > self.expected else "seq-order",
                                     message=f"seq {seq} where {self.expected} was expected", seq=seq, line=line,
                                     offset=offset if offset >= 0 else None))

    def block(self, ev: PackedBlock) -> None:
        """Packed deltas, counted and grouped without their events."""
        assert ev.n is not None            # a checked block (iter_lazy's default) counts its members
        if ev.seq0 != self.expected:
            self.seq_problem(ev.seq0, ev.line, ev.offset)
        self.events += ev.n
        self.expected = ev.seq0 + ev.n
        self.last_seq = max(self.last_seq, self.expected - 1)
        self.types["assistant/chunk"] = self.types.get("assistant/chunk", 0) + ev.n
        self.at.apply_deltas(ev.turn, ev.step, ev.seq0, ev.n)

    def event(self, ev: Event) -> None:
        self.events += 1
        if ev.seq != self.expected:
            self.seq_problem(ev.seq, ev.line, ev.offset)
        self.expected = ev.seq + 1
        self.last_seq = max(self.last_seq, ev.seq)
        self.types[ev.type] = self.types.get(ev.type, 0) + 1
        if ev.type == "turn/start":
            self.turns += 1
        elif ev.type == "session/title" and isinstance(ev.data, dict):
            self.title = ev.data.get("title", self.title)
        elif ev.type == "session/end-seed" and isinstance(ev.data, dict) and ev.data.get("inherited") is True:
            self.inherited = ev.seq
        try:
            typed(ev)
        except msgspec.ValidationError as e:
            self.problems.append(Problem(code="bad-payload", message=f"{ev.type} payload: {e}", seq=ev.seq,
                                         line=ev.line, offset=ev.offset if ev.offset >= 0 else None))
        self.sf.apply(ev)
        self.at.apply(ev)
        self.hf.apply(ev)
        self.checks.apply(ev)
        if ev.type == "turn/end":
            self.at.prune()

    def lazy(self, items: Iterable[Lazy]) -> None:
        for it in items:
            if isinstance(it, PackedBlock):
                self.block(it)
            else:
                self.event(it)

    def fast(self, reader: LogReader, progress: Optional[Callable[[int, int], None]] = None) -> None:
        """The pass over every stored row: a row that :mod:`app.log.format.fastrows` reads as a lean record is
        counted and folded from it; any other row (or one its checks refuse) takes the exact steps, in
        its place.  Same answer as ``lazy(iter_lazy(reader, ...))`` (``tests/test_fastrows.py``)."""
        with collector_paused():     # (records, lists and dicts by the million, no cycles)
            for seg in reader.source.forward():
                self._fast_segment(reader, seg)
                if progress:
                    progress(seg.end if isinstance(seg.end, int) else 0, max(1, reader.source.size))

    def _fast_segment(self, reader: LogReader, seg: Segment) -> None:
        problems = self.problems
        if seg.bad:
            reader.decode_segment(seg, problems)           # (the corrupt-frame problem)
            return
        if seg.rows is not None:
            rows = [raw for _p, raw in seg.rows]
            torn = b""
        else:
            rows = seg.data.split(b"\n")
            torn = rows.pop()                 # b"" when the segment ends with a newline
        refused = fr.refused_rows(rows, seg.rows is None and seg.data.isascii())
        starts: Optional[list[int]] = None

        def where(i: int) -> tuple[RowPos, int, Optional[int]]:
            """(pos, text offset, line) of row ``i`` of the segment."""
            nonlocal starts
            if seg.rows is not None:
                return seg.rows[i][0], -1, None
            if starts is None:
                starts = list(accumulate(map(add, map(len, rows), repeat(1)), initial=0))
            return seg.row_pos(starts[i]), seg.text_pos(starts[i]), (seg.line0 + i if seg.line0 is not None else None)

        decs = fr.decoders(reader.version)
        legacy = reader.version < 2
        at, sf, types = self.at, self.sf, self.types
        errors, members, summary, record_ok = fr.DECODE_ERRORS, fr.packed_members, fr.stream_summary, fr.record_ok
        add_chunk, boundary, cite, settle, deltas = at.add_chunk, at.boundary, at.cite, at.settle, at.apply_deltas
        append_node = sf.append_node
        events, expected, last_seq, turns = self.events, self.expected, self.last_seq, self.turns
        for i, raw in enumerate(rows):
            rec: Any = None
            if raw.startswith(b'{"type":"') and not (refused and i in refused):
                dec = decs.get(raw[9:raw.find(b'"', 9)])
                if dec is not None:
                    try:
                        rec = dec(raw)
                    except errors:
                        rec = None
            if rec is not None:
                k = rec.K
                seq = rec.seq
                d = rec.data
                if k <= fr.PACKED_CALL:                          # a packed chunk row
                    n = members(rec)
                    if n:
                        if seq != expected:
                            self.expected = expected
                            _pos, off, line = where(i)
                            self.seq_problem(seq, line, off)
                        events += n
                        expected = seq + n
                        if expected - 1 > last_seq:
                            last_seq = expected - 1
                        types["assistant/chunk"] = types.get("assistant/chunk", 0) + n
                        deltas(d.turn, d.step, seq, n)
                        continue
                elif k < fr.CHECKED or record_ok(rec, legacy):
                    if seq != expected:
                        self.expected = expected
                        _pos, off, line = where(i)
                        self.seq_problem(seq, line, off)
                    events += 1
                    expected = seq + 1
                    if seq > last_seq:
                        last_seq = seq
                    t = rec.T
                    types[t] = types.get(t, 0) + 1
                    if k == fr.CHUNK:
                        c = d.chunk
                        add_chunk(seq, (d.turn, d.step), c.type, c.reason, c.usage, None)
                    elif k == fr.STEP:
                        boundary(t, d.turn)
                    elif k == fr.PLAIN:
                        pass
                    elif k == fr.SURFACE:
                        append_node(seq)
                    elif k == fr.MESSAGE:
                        append_node(seq, not d.message.content)
                        if d.stream is not None:
                            chunks, finish, usage = summary(d.stream)
                            settle(t, seq, (d.turn, d.step), chunks, finish, usage if usage is not None else d.usage,
                                   d.interrupted)
                        else:
                            cite(seq, (d.turn, d.step), rec.sourceEventSeqs, d.interrupted)
                    elif k == fr.TURN_START:
                        turns += 1
                        boundary(t, d.turn)
                    elif k == fr.TURN_END:
                        boundary(t, d.turn)
                        at.prune()
                    elif k == fr.RETRY:
                        at.retry(t, seq, (d.turn, d.step), d.retry)
                    elif k == fr.ATTEMPT:
                        chunks, finish, usage = summary(d.stream)
                        settle(t, seq, (d.turn, d.step), chunks, finish, usage if usage is not None else d.usage, None)
                    continue
            self.events, self.expected, self.last_seq, self.turns = events, expected, last_seq, turns
            pos, off, line = where(i)
            self.lazy(lazy_row(reader, pos, off, line, raw, True, problems))
            events, expected, last_seq, turns = self.events, self.expected, self.last_seq, self.turns
        self.events, self.expected, self.last_seq, self.turns = events, expected, last_seq, turns
        if torn:
            pos, off, line = where(len(rows))
            self.lazy(lazy_row(reader, pos, off, line, torn, False, problems))


def inspect(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
            live: bool = False, fast: bool = True) -> JsonObj:
    """Summary facts of a log (spec: ``inspect`` face), one forward pass (packed rows not expanded).

    ``live``: a writer is alive, so an open turn is in flight, not crashed: no closure is
    synthesized (``closure`` is empty; :func:`app.log.fold.inflight.in_flight` says what is open).
    ``fast``: rows read as lean typed records where they can be (:mod:`app.log.format.fastrows`; the same
    answer as ``fast=False``, the exact decode of every row)."""
    problems = ProblemList(reader.problems)
    if reader.fatal:
        return {"id": reader.header.id if reader.header else None, "format": reader.source.kind,
                "problems": [str(p) for p in dedupe_problems(list(problems) + problems.summary())], "fatal": str(reader.fatal)}
    st = reader.tail_state()
    ip = _InspectPass(problems)
    if fast and getattr(reader.codec, "envelope_seqs", None) is None:
        ip.fast(reader, progress)
    else:
        ip.lazy(iter_lazy(reader, problems=problems, progress=progress))
    at, sf = ip.at, ip.sf
    closure: list[Event] = [] if live else st.closure
    for ev in closure:
        sf.apply(ev)
    refusals = load_checks(reader, problems, st, sf, ip.checks, ip.inherited)
    hidden = [a for a in at.attempts if a.hidden_by_default]
    h = reader.header
    return {
        "id": h.id if h else None,
        "format": reader.source.kind,
        "formatVersion": reader.version,
        "inheritedEvents": (ip.inherited or 0) if reader.version >= 2 else ((h.seedLength or 0) if h else 0),
        "path": reader.path,
        "title": ip.title,
        "header": h.to_dict() if h else None,
        "events": ip.events,
        "lastSeq": ip.last_seq,
        "turns": ip.turns,
        "messages": len(sf.message_seqs()),
        "attempts": at.count,
        "hiddenAttempts": len(hidden),
        "failedAttempts": [a.to_dict() for a in hidden],
        "openTail": st.is_open,
        "closure": [e.type for e in closure],
        "tornRows": len([d for d in st.dropped]),
        "requestHeaders": [{"seq": s, "reason": r} for s, r in ip.hf.history],
        "types": dict(sorted(ip.types.items())),
        "problems": [str(p) for p in dedupe_problems(list(problems) + problems.summary())],
        "dshWouldRefuse": bool(refusals),
    }


def messages(reader: LogReader, through: Optional[int] = None, logical: bool = True,
             checks: Optional[EventChecks] = None, as_written: bool = False) -> list[JsonObj]:
    """Derived model messages of the prefix through ``through`` (inclusive); ``checks`` (an
    :class:`~app.log.index.integrity.EventChecks`) sees every event read; ``as_written``: a v3 log's
    messages in the writer's shape (default: today's dsh's, :mod:`app.log.fold.normalize`)."""
    sf = derive_as(SurfaceFold(version=reader.version), reader, as_written)
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


def dispatch_boundary(reader: LogReader, at_seq: int, events: Optional[Iterable[Event]] = None,
                      checks: Optional[EventChecks] = None) -> tuple[int, JsonObj]:
    """The seq ``b`` of the first chunk of the attempt that ``at_seq`` names.

    ``at_seq`` may be the attempt's first chunk, any of its chunks, the assistant/message
    citing it, or an earlier event of the same step (then the step's next attempt).
    ``checks``: also given the named row when it lies at or after ``b`` (the fold up to ``b``
    does not see it), so a hostile citation there is reported.
    """
    at = AttemptTracker(keep_text=False)
    target: Optional[Event] = None
    for ev in (reader.iter_events(logical=False) if events is None else events):   # (events: from a turn start)
        if target is None:
            at.apply(ev)
            if ev.seq == at_seq:
                target = ev
                found: Optional[tuple[int, Optional[Attempt]]] = None
                if embedded_stream(ev) is not None:          # v2+: the settlement is the attempt
                    found = ev.seq, at.attempt_of(ev.seq)
                elif ev.type == "assistant/chunk":
                    a = _attempt_at(at, ev.seq)
                    found = a.first_seq, a
                elif ev.type == "assistant/message":
                    cited = cited_ints(ev.source_event_seqs)
                    if cited:
                        found = min(cited), at.attempt_of(min(cited))
                if found is not None:
                    if checks is not None:
                        checks.apply(ev)      # at or after the boundary: the fold up to it does not see it
                    return found[0], found[1].to_dict() if found[1] else {}
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


def request_at(reader: LogReader, at_seq: int, checks: Optional[EventChecks] = None,
               as_written: bool = False) -> JsonObj:
    """The exact request at the dispatch boundary named by ``at_seq`` (spec §3); ``as_written``: a v3
    log's request in the writer's shape (default: today's dsh's, ``toolHistory`` included)."""
    b, attempt = dispatch_boundary(reader, at_seq, checks=checks)
    sf = derive_as(SurfaceFold(version=reader.version), reader, as_written)
    hf = HeaderFold()
    for ev in reader.iter_events(logical=False):
        if ev.seq >= b:
            break
        sf.apply(ev)
        hf.apply(ev)
        if checks is not None:
            checks.apply(ev)
    require_header(hf, at_seq, b)
    sid = reader.header.id if reader.header else ""
    return {"atSeq": at_seq, "boundary": b, "headerSeq": hf.seq, "attempt": attempt,
            "request": fold_request(sf, hf, sid)}


def dispatches(events: Iterable[Event]) -> list[tuple[int, Attempt]]:
    """Every attempt's dispatch boundary in an event list: [(first_chunk_seq, attempt)]."""
    at = AttemptTracker(keep_text=False)
    for ev in events:
        at.apply(ev)
    return [(a.first_seq, a) for a in at.attempts]
