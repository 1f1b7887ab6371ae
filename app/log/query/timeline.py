"""Where the time and the tokens went: spans from a session log (pure, no Qt, no store).

:func:`timeline` yields one span (a JSON-ready dict) per

* ``turn``: ``turn/start`` -> ``turn/end`` (its reason);
* ``step``: ``step/start`` -> ``step/end``;
* ``attempt``: one model call (spec §4, grouped by :class:`~app.log.fold.attempts.AttemptTracker`): from its
  *dispatch* (the last ``request/header``, ``llm/retry-started`` or ``step/start`` of its step before its first
  chunk: ``dispatchSeq``) to its last chunk; ``ttftMs`` = first chunk time - dispatch time, ``decodeMs`` = last
  chunk - first chunk, tokens (its ``usage`` chunk, else its message's), tokens per second, finish reason;
  v2+ attempts are one settlement row whose embedded stream carries the chunk times;
* ``retry-wait``: ``llm/retry`` -> ``llm/retry-started`` (``delayMs`` and ``failure`` as logged);
* ``tool``: ``tool/call`` -> its appended ``tool/result`` (``overlaps``: the other calls of the step running
  at the same time; ``status`` ``not-started`` / ``interrupted`` / ``no-result`` from the result's error code or
  its absence);
* ``compaction``: ``compaction/start`` -> ``compaction/end`` (``shadowedTokens``, ``summaryTokens`` as logged;
  ``tokensBefore`` / ``tokensAfter``: input tokens of the request before and after it);
* ``approval``: ``approval/asked`` -> ``approval/decided`` (time the user took);
* ``subagent``: a ``subagent*`` tool call -> its result (``childSession``: filled in by the store, which knows
  the other files; see :mod:`app.store.timeline_cache`).

Times: a duration is the difference of two logged times, reported only when both are known (an integer > 0)
and the difference is neither negative nor implausible (:func:`app.log.query.stats.span_ms`, shared with the
per-step statistics); otherwise it is ``None`` and ``note`` says why.  An envelope-free snapshot (dsh test
fixtures: every ``time`` is 0) has no duration at all.  A span closed by the crash repair (a synthesized row)
ends at an unknown time: ``durationMs`` is ``None``, ``atLeastMs`` what the last logged row shows.

:func:`~.timeline_summary.summarize` groups spans per turn and totals them (wall, model, tool, waiting-for-user
time, tokens, cache hit rate, an *estimated* cost from a price table).  :func:`~.timeline_summary.context_points` is
the context meter's data.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Optional

import msgspec

from ..fold.attempts import FAILED_FINISH, Attempt, AttemptTracker, embedded_stream
from ..format.model import Event
from ..format.payloads import JsonObj, as_obj, obj
from ..format.versions import stream_summary
from .stats import TOKEN_KEYS, add_usage, span_ms, tool_outcome, zero_tokens
from .timeline_prices import cost_of
from .timeline_summary import NO_TIMES, prompt_tokens

_ANY = msgspec.json.Decoder().decode

_ZERO = zero_tokens()
NOT_STARTED = frozenset({"ABORTED_BEFORE_DISPATCH", "NOT_STARTED"})
INTERRUPTED = frozenset({"ABORTED", "TOOL_OUTCOME_UNKNOWN", "INTERRUPTED", "CANCELLED"})


def is_subagent_tool(name: object) -> bool:
    return isinstance(name, str) and name.startswith("subagent")


def _t(v: object) -> Optional[int]:
    """A logged time when known (an int > 0), else None."""
    return v if type(v) is int and v > 0 else None


class Block:
    """``n`` packed delta chunks of (turn, step) from ``seq0``: first and last member times (``t0``, ``t1``)."""
    __slots__ = ("turn", "step", "seq0", "n", "t0", "t1")

    def __init__(self, turn: Any, step: Any, seq0: int, n: int, t0: int, t1: int) -> None:
        self.turn, self.step, self.seq0, self.n, self.t0, self.t1 = turn, step, seq0, n, t0, t1


class Chunk:
    """One ``assistant/chunk`` row read lean (:mod:`app.log.query.timeline_rows`): what the attempts need."""
    __slots__ = ("seq", "time", "turn", "step", "ctype", "reason", "usage")

    def __init__(self, seq: int, time: int, turn: Any, step: Any, ctype: Any, reason: Any, usage: Any) -> None:
        self.seq, self.time, self.turn, self.step = seq, time, turn, step
        self.ctype, self.reason, self.usage = ctype, reason, usage


class Settlement:
    """A v2+ settlement row read lean (:mod:`app.log.query.timeline_rows`): the event (its data holding the
    fields the spans read) and its stream's summary (what :func:`~app.log.format.versions.stream_summary`
    gives: ``chunks``, ``finish``, ``usage``, ``time0``, ``time1``)."""
    __slots__ = ("ev", "summ")

    def __init__(self, ev: Event, summ: JsonObj) -> None:
        self.ev, self.summ = ev, summ


class _Times:
    """First and last chunk of one attempt (seq, time)."""
    __slots__ = ("first_seq", "first_time", "last_seq", "last_time", "dispatch")

    def __init__(self, seq: int, time: int, dispatch: Optional[tuple[int, int, str]]) -> None:
        self.first_seq, self.first_time, self.last_seq, self.last_time = seq, time, seq, time
        self.dispatch = dispatch


class Builder:
    """The span state of one pass; :meth:`event` / :meth:`block` per item, then :meth:`finish`."""

    def __init__(self, timed: bool = True) -> None:
        self.timed = timed
        self.at = AttemptTracker(keep_text=False)
        self.times: dict[int, _Times] = {}               # attempt first seq -> its chunk times
        self.done: set[int] = set()                      # attempts already emitted
        self.dispatch: dict[Any, tuple[int, int, str]] = {}   # turn -> (seq, time, type) of the last dispatch mark
        self.open: dict[tuple[str, Any], Event] = {}     # (kind, key) -> opening event
        self.calls: dict[Any, tuple[Event, str]] = {}    # callId -> (tool/call, name)
        self.step_tools: dict[tuple[Any, Any], list[JsonObj]] = {}
        self.compactions: list[JsonObj] = []             # waiting for the next request's input tokens
        self.summaries: dict[Any, JsonObj] = {}
        self.last_input: Optional[int] = None
        self.model: Optional[str] = None
        self.window: Optional[int] = None
        self.last_time: Optional[int] = None
        self.turn: Any = None                            # the open turn (approvals and compactions belong to it)
        self.undone: list[Attempt] = []                  # attempts kept by the last prune and not given out
        self.n_kept = 0                                  # the tracker's attempts after the last prune
        self.out: list[JsonObj] = []

    # ------------------------------------------------------------------ spans
    def span(self, kind: str, label: str, start_ev: Optional[Event], end_ev: Optional[Event], held: bool = False,
             **extra: Any) -> JsonObj:
        """A span from ``start_ev`` to ``end_ev``; ``held``: not given out yet (a tool span waits for the end
        of its step, which tells its overlaps)."""
        s = start_ev
        e = end_ev
        sp: JsonObj = {"kind": kind, "seq": s.seq if s is not None else (e.seq if e is not None else None),
                       "endSeq": e.seq if e is not None else None,
                       "start": _t(s.time) if s is not None else None,
                       "end": _t(e.time) if e is not None and not e.synthesized else None,
                       "durationMs": None, "label": label}
        sp.update(extra)
        self.measure(sp, s.time if s is not None else None, e)
        if not held:
            self.out.append(sp)
        return sp

    def measure(self, sp: JsonObj, start: Optional[int], e: Optional[Event]) -> None:
        if not self.timed:
            sp["note"] = NO_TIMES
            return
        if e is None:
            sp["note"] = "no end in the log"
            return
        if e.synthesized:
            sp["note"] = "closed by crash repair: the end time is unknown"
            at_least, _ = span_ms(start, self.last_time)
            if at_least is not None:
                sp["atLeastMs"] = at_least
            return
        sp["durationMs"], note = span_ms(start, e.time)
        if note:
            sp["note"] = note

    # ------------------------------------------------------------------ items
    def block(self, b: Block) -> None:
        self.at.apply_deltas(b.turn, b.step, b.seq0, b.n)
        self._chunk_times(b.turn, b.seq0, b.t0, b.seq0 + b.n - 1, b.t1)
        if _t(b.t1):
            self.last_time = b.t1

    def chunk(self, c: Chunk) -> None:
        """The steps of :meth:`event` for an ``assistant/chunk``, from a lean record."""
        self.at.add_chunk(c.seq, (c.turn, c.step), c.ctype, c.reason, c.usage, None)
        if _t(c.time):
            self.last_time = c.time
        self._chunk_times(c.turn, c.seq, c.time, c.seq, c.time)

    def _chunk_times(self, turn: Any, seq: int, time: int, last_seq: int, last_time: int) -> None:
        a = self.at.attempt_of(seq)
        if a is None:
            return
        tm = self.times.get(a.first_seq)
        if tm is None:
            self.times[a.first_seq] = _Times(seq, time, self.dispatch.get(turn))
            tm = self.times[a.first_seq]
        tm.last_seq, tm.last_time = last_seq, last_time

    def event(self, ev: Event) -> None:
        d = obj(ev.data)
        typ = ev.type
        stream = embedded_stream(ev) if typ in ("assistant/message", "assistant/attempt") else None
        if stream is not None:
            self._settle(ev, d, stream_summary(stream))
        else:
            self.at.apply(ev)
        if not ev.synthesized and _t(ev.time):
            self.last_time = ev.time
        if typ == "assistant/chunk":
            self._chunk_times(d.get("turn"), ev.seq, ev.time, ev.seq, ev.time)
            return
        handler = _HANDLERS.get(typ)
        if handler is not None:
            handler(self, ev, d)

    def small(self, x: tuple[int, int, int, int, Optional[int]]) -> None:
        """The steps of :meth:`event` for a ``step/start``, ``step/end`` or ``turn/start`` row the row scan read
        (``(code, seq, time, turn, step)``, :mod:`app.log.query.timeline_scan`: integers, code 0, 1, 2)."""
        code, seq, time, turn, step = x
        if code == 2:
            ev = Event(seq=seq, type="turn/start", time=time, data={"turn": turn})
            self.at.boundary("turn/start", turn)
            if time > 0:
                self.last_time = time
            _on_turn_start(self, ev, ev.data)
            return
        typ = "step/start" if code == 0 else "step/end"
        if self.at.open_attempts:
            self.at.boundary(typ, turn)
        if time > 0:
            self.last_time = time
        if code == 0:
            ev = Event(seq=seq, type=typ, time=time, data={"turn": turn, "step": step})
            _on_step_start(self, ev, ev.data)
            return
        # _on_step_end, its span made here (no event: a step/end row the scan read is never synthesized)
        key = (turn, step)
        s = self.open.pop(("step", key), None)
        t0 = s.time if s is not None else None
        sp: JsonObj = {"kind": "step", "seq": s.seq if s is not None else seq, "endSeq": seq,
                       "start": t0 if type(t0) is int and t0 > 0 else None, "end": time if time > 0 else None,
                       "durationMs": None, "label": f"step {turn}.{step}", "turn": turn, "step": step}
        if not self.timed:
            sp["note"] = NO_TIMES
        else:
            sp["durationMs"], note = span_ms(t0, time)
            if note:
                sp["note"] = note
        self.out.append(sp)
        tools = self.step_tools.pop(key, None)
        if tools:
            self.release(tools)

    def settlement(self, st: Settlement) -> None:
        """The steps of :meth:`event` for a v2+ settlement, from a lean record and its stream's summary."""
        ev = st.ev
        self._settle(ev, ev.data, st.summ)
        if _t(ev.time):
            self.last_time = ev.time
        if ev.type == "assistant/message":
            self._message(ev, True)

    def _settle(self, ev: Event, d: JsonObj, summ: JsonObj) -> None:
        """A v2+ settlement: the attempt is this row (what ``AttemptTracker.apply`` does, from one
        :func:`~app.log.format.versions.stream_summary`), timed by its stream's first and last chunk."""
        self.at.settle(ev.type, ev.seq, (d.get("turn"), d.get("step")), summ["chunks"], summ["finish"],
                       summ["usage"] if summ["usage"] is not None else d.get("usage"), d.get("interrupted"))
        if summ["chunks"]:
            tm = _Times(ev.seq, summ["time0"], self.dispatch.get(d.get("turn")))
            tm.last_time = summ["time1"]
            self.times[ev.seq] = tm

    def settled_c(self, x: tuple[Any, ...], data: bytes) -> None:
        """The steps of :meth:`settlement` for a settlement the C row scan read (``tl_scan``'s SETTLE tuple, its
        ranges in ``data``), without its lean record: what :meth:`settlement` does with
        :func:`~app.log.query.timeline_lean.settled`'s (``tests/test_timeline_tlc.py`` holds them equal)."""
        code, seq, time, turn, step, inter, use, _ses, st, _ign = x
        if st is None:                                  # (no stream: read as its event)
            from .timeline_lean import settled
            self.event(settled(x, data))                # type: ignore[arg-type]
            return
        usage = _ANY(memoryview(data)[use[0]:use[1]]) if use is not None else None
        chunks, time0, time1, fin, suse = st
        finish: Optional[JsonObj] = None
        if fin is not None:
            r = _ANY(memoryview(data)[fin[0]:fin[1]]) if fin else None
            finish = r if isinstance(r, dict) else {"kind": str(r)}
        summ_usage = _ANY(memoryview(data)[suse[0]:suse[1]]) if suse is not None else None
        msg = code == 3
        self.at.settle("assistant/message" if msg else "assistant/attempt", seq, (turn, step), chunks, finish,
                       summ_usage if summ_usage is not None else usage, inter if msg else None)
        if chunks:
            tm = _Times(seq, time0, self.dispatch.get(turn))
            tm.last_time = time1
            self.times[seq] = tm
        if time > 0:
            self.last_time = time
        if msg:
            self._message_of(seq, True, usage)

    def turn_c(self, x: tuple[Any, ...], data: bytes) -> bool:
        """A whole turn the C row scan read and built (``timeline_scan.TURN``: its spans, and what its rows leave
        in this state), taken when this state is the one the C scan assumes: nothing open (turn, step, call, held
        tool span, attempt, chunk times), the attempt tracker as a turn end leaves it, and none of its attempts given
        out already; else False (its rows are read one by one).  Its attempts made before a request row of the turn
        set the model (the context window) get this state's (the rest the turn's, which this state then takes), its
        first prompt size the waiting compactions' ``tokensAfter``; its compactions made before any prompt of the turn
        this state's last input as ``tokensBefore``, those with no prompt after them wait (see :meth:`emit_attempt`)."""
        spans, atts, rows, turn, last_time, disp, seqs, prompts, ops = x
        at = self.at
        part = at.misses is not None    # (a later part of a log: timeline_split.part's probes, which the turn needs not)
        if self.open or self.calls or self.step_tools or self.times or self.undone or self.turn is not None \
                or not at.at_rest(part) or (type(self.dispatch) is not dict and not part) \
                or self.n_kept != len(at.attempts) \
                or not self.done.isdisjoint(seqs) or self.summaries:
            return False
        model, window = self.model, self.window
        cfg = rows[4]       # (the turn's request and compaction rows: None, or (km, model | None, kw, window | None,
        km = kw = len(atts)     # compactions before a prompt | None, compactions waiting | None))
        wait = None
        if cfg is not None:
            km, m2, kw, w2, before, wait = cfg
            if m2 is not None:
                self.model = m2
            if w2 is not None:
                self.window = w2
            if before:
                for c in before:
                    c["tokensBefore"] = self.last_input
        for sp in atts[:km]:
            sp["model"] = model
        for sp in atts[:kw]:
            sp["contextWindow"] = window
        if ops is None:
            at.committed([(turn, sp["step"]) for sp in atts])     # (each settled, then pruned at the turn's end)
        else:
            self._replay(turn, ops, data)
        self.done.update(seqs)
        if disp is None:
            self.dispatch.pop(turn, None)
        else:
            self.dispatch[turn] = disp
        if last_time:
            self.last_time = last_time
        if prompts is not None:
            for c in self.compactions:
                c["tokensAfter"] = prompts[0]
            self.compactions = []
            self.last_input = prompts[1]
        if wait:
            self.compactions += wait
        self.out += spans
        if ops is not None:
            self._close_turn(turn)
        return True

    def _replay(self, turn: Any, ops: list[tuple[Any, ...]], data: bytes) -> None:
        """The attempt tracker's steps of a whole turn that held log-only attempts or retries (``tl_turn``'s ops:
        0 a message settled, 1 an attempt settled (its stream's figures, ranges in ``data``), 2 ``llm/retry``,
        3 ``llm/retry-started``), as :meth:`settled_c` and :meth:`event` make them."""
        at = self.at
        for op in ops:
            code, seq, step = op[0], op[1], op[2]
            if code == 0:
                at.settle("assistant/message", seq, (turn, step), 0, None, None, None)
            elif code == 1:
                chunks, fin, use, times, disp = op[3:]
                finish: Optional[JsonObj] = None
                if fin is not None:
                    r = _ANY(memoryview(data)[fin[0]:fin[1]]) if fin else None
                    finish = r if isinstance(r, dict) else {"kind": str(r)}
                usage = _ANY(memoryview(data)[use[0]:use[1]]) if use is not None else None
                at.settle("assistant/attempt", seq, (turn, step), chunks, finish, usage, None)
                if chunks:
                    tm = _Times(seq, times[0] if times else None, disp)     # type: ignore[arg-type]
                    tm.last_time = times[1] if times else None            # type: ignore[assignment]
                    self.times[seq] = tm
            else:
                at.retry("llm/retry" if code == 2 else "llm/retry-started", seq, (turn, step), op[3])

    def _close_turn(self, t: Any) -> None:
        """The end of turn ``t`` after its span: its attempts not given out yet (failed, closed by the boundary,
        finished uncited), in the tracker's order, before prune drops them: those left after the last turn end and
        those added since (not a walk over every failed attempt the tracker keeps, which grows with the log)."""
        cands = self.undone + self.at.attempts[self.n_kept:]
        for a in cands:
            if a.first_seq not in self.done and a.turn == t:
                self.emit_attempt(a)
        self.turn = None
        self.at.prune()
        op = self.at.open_attempts
        self.undone = [a for a in cands if a.first_seq not in self.done and _kept(a, op)]
        self.n_kept = len(self.at.attempts)

    def _settled(self, ev: Event, d: JsonObj) -> None:
        if ev.type == "assistant/message":
            self._message(ev, embedded_stream(ev) is not None)

    def _message(self, ev: Event, streamed: bool) -> None:
        """An ``assistant/message`` (``streamed``: a v2+ settlement) gives out its attempt."""
        self._message_of(ev.seq, streamed, obj(ev.data).get("usage"))

    def _message_of(self, seq: int, streamed: bool, usage: Any) -> None:
        """:meth:`_message` of the message at ``seq`` (its data's ``usage``)."""
        a = self.at.attempt_of(seq) if streamed else None
        if a is None:
            for x in reversed(self.at.attempts):
                if x.message_seq == seq:
                    a = x
                    break
        if a is not None:
            self.emit_attempt(a, usage)

    def emit_attempt(self, a: Attempt, msg_usage: Any = None) -> None:
        """The span of attempt ``a`` (``msg_usage``: the ``usage`` of the message giving it out, if any)."""
        if a.first_seq in self.done:
            return
        self.done.add(a.first_seq)
        tm = self.times.pop(a.first_seq, None)
        tokens = _ZERO.copy()
        usage = a.usage
        if usage is None:
            usage = msg_usage
        if type(usage) is dict:                         # (add_usage, inline: once per attempt)
            for k, src in TOKEN_KEYS:
                v = usage.get(src)
                if type(v) is int:
                    tokens[k] += v
                elif isinstance(v, float):
                    tokens[k] += int(v)
        else:
            add_usage(tokens, usage)
        dispatch = tm.dispatch if tm is not None else None
        first_t = tm.first_time if tm is not None else None
        last_t = tm.last_time if tm is not None else None
        sp: JsonObj = {"kind": "attempt", "seq": a.first_seq, "endSeq": a.last_seq,
                       "start": _t(dispatch[1]) if dispatch else _t(first_t), "end": _t(last_t),
                       "durationMs": None, "label": f"attempt {a.turn}.{a.step}", "turn": a.turn, "step": a.step,
                       "dispatchSeq": dispatch[0] if dispatch else None,
                       "dispatchType": dispatch[2] if dispatch else None,
                       "firstChunkSeq": tm.first_seq if tm is not None else None,
                       "ttftMs": None, "decodeMs": None, "tokens": tokens, "tps": None,
                       "finish": a.finish_kind, "status": a.status, "messageSeq": a.message_seq,
                       "model": self.model, "contextWindow": self.window}
        if a.failed:
            f = a.failure or {}
            sp["error"] = f.get("code") or a.finish_kind or "error"
        if not self.timed:
            sp["note"] = NO_TIMES
        else:
            sp["ttftMs"], n1 = span_ms(dispatch[1] if dispatch else None, first_t)
            sp["decodeMs"], n2 = span_ms(first_t, last_t)
            sp["durationMs"], n3 = span_ms(dispatch[1] if dispatch else None, last_t)
            if sp["durationMs"] is None:
                sp["durationMs"] = sp["decodeMs"]
            note = n3 or n1 or n2
            if note and sp["ttftMs"] is None:
                sp["note"] = note
            if sp["decodeMs"] and tokens["output"]:
                sp["tps"] = round(tokens["output"] * 1000 / sp["decodeMs"], 1)
        if usage is not None and prompt_tokens(tokens):
            self.last_input = prompt_tokens(tokens)
            for c in self.compactions:
                c["tokensAfter"] = self.last_input
            self.compactions = []
        self.out.append(sp)

    def finish(self) -> list[JsonObj]:
        for a in self.at.attempts:                          # failed, in-flight and unsettled attempts
            if a.first_seq not in self.done:
                self.emit_attempt(a)
        for (kind, _key), ev in list(self.open.items()):
            d = obj(ev.data)
            if kind == "retry":
                self.span("retry-wait", f"retry {d.get('retry')} (cancelled while waiting?)", ev, None,
                          **_retry_fields(ev, d))
            elif kind in ("turn", "step", "compaction", "approval"):
                label = {"turn": f"turn {d.get('turn')}", "step": f"step {d.get('turn')}.{d.get('step')}",
                         "compaction": "compaction", "approval": f"approval {d.get('toolName') or ''}".strip()}[kind]
                extra: JsonObj = {"turn": d.get("turn")} if kind != "approval" else {}
                self.span(kind, label, ev, None, **extra)
        for cid, (call, name) in list(self.calls.items()):
            self._tool(call, None, name, "no-result")
            del self.calls[cid]
        for tools in self.step_tools.values():
            self.release(tools)
        self.step_tools = {}
        return self.out

    def release(self, tools: list[JsonObj]) -> None:
        """A step's tool spans (and their subagent spans), with their overlaps."""
        _overlaps([s for s in tools if s["kind"] == "tool"])
        self.out.extend(tools)

    def _tool(self, call: Event, res: Optional[Event], name: str, status: str, error: Any = None) -> None:
        d = obj(call.data)
        extra: JsonObj = {"turn": d.get("turn"), "step": d.get("step"), "name": name, "callId": d.get("callId"),
                          "status": status}
        if error is not None:
            extra["error"] = error
        held = self.step_tools.setdefault((d.get("turn"), d.get("step")), [])
        held.append(self.span("tool", f"{name}", call, res, held=True, **extra))
        if is_subagent_tool(name):
            held.append(self.span("subagent", f"subagent via {name}", call, res, held=True, turn=d.get("turn"),
                                  step=d.get("step"), callId=d.get("callId"), childSession=None, status=status))


def _retry_fields(ev: Event, d: JsonObj) -> JsonObj:
    f = as_obj(d.get("failure")) or {}
    delay = d.get("delayMs")
    return {"turn": d.get("turn"), "step": d.get("step"), "retry": d.get("retry"),
            "delayMs": delay if type(delay) is int else None, "failure": f.get("code") or f.get("message")}


def _overlaps(tools: list[JsonObj]) -> None:
    """Each tool span of a step: the seqs of the others whose [start, end] intersects its own."""
    known = [s for s in tools if s["start"] is not None and s["end"] is not None]
    for s in tools:
        s["overlaps"] = [o["seq"] for o in known if o is not s and s in known
                         and o["start"] < s["end"] and s["start"] < o["end"]]


# ---------------------------------------------------------------------- event handlers

def _on_turn_start(b: Builder, ev: Event, d: JsonObj) -> None:
    b.open[("turn", d.get("turn"))] = ev
    b.turn = d.get("turn")
    b.dispatch.pop(d.get("turn"), None)


def _on_turn_end(b: Builder, ev: Event, d: JsonObj) -> None:
    t = d.get("turn")
    start = b.open.pop(("turn", t), None)
    reason = obj(d.get("reason"))
    extra: JsonObj = {"turn": t, "reason": reason.get("kind")}
    err = reason.get("error")
    if err:
        extra["error"] = err.get("code") if isinstance(err, dict) else str(err)
    b.span("turn", f"turn {t}", start, ev, **extra)
    b._close_turn(t)


def _kept(a: Attempt, open_attempts: Mapping[Any, Attempt]) -> bool:
    """:meth:`~app.log.fold.attempts.AttemptTracker.prune` keeps ``a`` (a failed attempt, or one of an open step)."""
    return (a.message_seq is None and (a.log_only or (a.finish is not None and a.finish.get("kind") in FAILED_FINISH))) \
        or (a.turn, a.step) in open_attempts


def _on_step_start(b: Builder, ev: Event, d: JsonObj) -> None:
    b.open[("step", (d.get("turn"), d.get("step")))] = ev
    b.dispatch[d.get("turn")] = (ev.seq, ev.time, ev.type)


def _on_step_end(b: Builder, ev: Event, d: JsonObj) -> None:
    key = (d.get("turn"), d.get("step"))
    start = b.open.pop(("step", key), None)
    b.span("step", f"step {key[0]}.{key[1]}", start, ev, turn=key[0], step=key[1])
    tools = b.step_tools.pop(key, None)
    if tools:
        b.release(tools)


def _on_dispatch(b: Builder, ev: Event, d: JsonObj) -> None:
    """``request/header`` (inside a turn: that turn's) and ``llm/retry-started``: the next request goes out."""
    if ev.type == "request/header":
        cfg = obj(obj(d.get("header")).get("config"))
        if isinstance(cfg.get("model"), str):
            b.model = cfg["model"]
        for t in [t for (k, t) in b.open if k == "turn"] or [None]:
            b.dispatch[t] = (ev.seq, ev.time, ev.type)
        return
    b.dispatch[d.get("turn")] = (ev.seq, ev.time, ev.type)
    start = b.open.pop(("retry", d.get("retryId") or (d.get("turn"), d.get("step"))), None)
    if start is not None:
        b.span("retry-wait", f"retry {d.get('retry')}", start, ev, **_retry_fields(start, obj(start.data)))


def _on_context(b: Builder, ev: Event, d: JsonObj) -> None:
    if isinstance(d.get("model"), str):
        b.model = d["model"]
    w = d.get("contextWindow")
    if type(w) is int and w > 0:
        b.window = w


def _on_retry(b: Builder, ev: Event, d: JsonObj) -> None:
    b.open[("retry", d.get("retryId") or (d.get("turn"), d.get("step")))] = ev


def _on_call(b: Builder, ev: Event, d: JsonObj) -> None:
    b.calls[d.get("callId")] = (ev, str(d.get("name") or "?"))


def _on_result(b: Builder, ev: Event, d: JsonObj) -> None:
    if not ev.is_append:
        return
    m = obj(d.get("message"))
    src = m.get("source")
    cid = src.get("callId") if isinstance(src, dict) else None
    if cid is None:
        cid = m.get("toolCallId")
    got = b.calls.pop(cid, None)
    if got is None:
        return
    call, name = got
    outcome = tool_outcome(d)
    err = as_obj(d.get("error")) or {}
    code = err.get("code")
    status = "not-started" if code in NOT_STARTED else "interrupted" if (code in INTERRUPTED or ev.synthesized) \
        else ("error" if outcome != "ok" else "ok")
    b._tool(call, ev, name, status, code if code is not None else (None if outcome == "ok" else outcome))


def _on_compaction(b: Builder, ev: Event, d: JsonObj) -> None:
    cid = d.get("compactionId")
    if ev.type == "compaction/start":
        b.open[("compaction", cid)] = ev
    elif ev.type == "compaction/summary":
        b.summaries[cid] = d
    else:
        start = b.open.pop(("compaction", cid), None)
        s = b.summaries.pop(cid, {})
        usage = obj(s.get("usage"))
        sp = b.span("compaction", "compaction", start, ev, turn=d.get("turn") if d.get("turn") is not None else b.turn,
                    shadowedTokens=s.get("shadowedTokenCount"), summaryTokens=usage.get("outputTokens"),
                    tokensBefore=b.last_input, tokensAfter=None)
        if d.get("error"):
            e = d.get("error")
            sp["error"] = e.get("code") if isinstance(e, dict) else str(e)
        b.compactions.append(sp)


def _on_approval(b: Builder, ev: Event, d: JsonObj) -> None:
    if ev.type == "approval/asked":
        b.open[("approval", d.get("id"))] = ev
        return
    start = b.open.pop(("approval", d.get("id")), None)
    sd = obj(start.data) if start is not None else {}
    b.span("approval", f"approval {sd.get('toolName') or ''}".strip(), start, ev, outcome=d.get("outcome"),
           toolName=sd.get("toolName"), callId=sd.get("callId"), turn=b.turn)


_HANDLERS = {
    "turn/start": _on_turn_start, "turn/end": _on_turn_end, "step/start": _on_step_start, "step/end": _on_step_end,
    "request/header": _on_dispatch, "llm/retry-started": _on_dispatch, "request/context": _on_context,
    "llm/retry": _on_retry, "tool/call": _on_call, "tool/result": _on_result,
    "assistant/message": Builder._settled, "assistant/attempt": Builder._settled,
    "compaction/start": _on_compaction, "compaction/summary": _on_compaction, "compaction/end": _on_compaction,
    "approval/asked": _on_approval, "approval/decided": _on_approval,
}


# ---------------------------------------------------------------------- entry points

def timeline(src: Any) -> Iterator[JsonObj]:
    """The spans of a log: ``src`` a LogReader (logical face; packed rows read as blocks, see
    :func:`app.log.query.timeline_rows.timeline_items`) or an iterable of events (and :class:`Block`\\ s)."""
    timed = not getattr(src, "envelope_free", False)
    if hasattr(src, "iter_events"):
        from .timeline_rows import timeline_items
        items: Iterable[Any] = timeline_items(src)
    else:
        items = src
    b = Builder(timed)
    yield from feed(b, items)
    yield from b.finish()


def feed(b: Builder, items: Iterable[Any]) -> Iterator[JsonObj]:
    """The spans ``b`` gives out while it reads ``items`` (events, :class:`Block`, :class:`Chunk`,
    :class:`Settlement`, small-row tuples and (settlement tuple, its segment's bytes) of the C row scan; those of its
    :meth:`~Builder.finish` apart)."""
    for it in items:
        t = type(it)
        if t is tuple:
            n = len(it)
            if n == 5:
                b.small(it)
            elif n == 2:
                b.settled_c(*it)
            elif not b.turn_c(it[0], it[1]):        # (a whole turn the C scan read, else its rows one by one)
                yield from feed(b, it[2]())
                continue
        elif t is Block:
            b.block(it)
        elif t is Chunk:
            b.chunk(it)
        elif t is Settlement:
            b.settlement(it)
        else:
            b.event(it)
        if b.out:
            yield from b.out
            b.out = []


__all__ = ["Block", "Chunk", "Settlement", "timeline", "cost_of", "TOKEN_KEYS"]
