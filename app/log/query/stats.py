"""Per-step and per-turn statistics (pure, no Qt): tokens, latency, tool calls, retries, errors.

Tokens: each attempt's ``usage`` chunk (the only accounting of a failed attempt, spec §4);
an attempt without one falls back to its ``assistant/message`` ``usage``.  Latency: from
``step/start`` to the step's last ``finish`` chunk (else its ``assistant/message``, else
``step/end``).  Fixture times are not monotonic (and sometimes 0): a latency is reported
only when both times are positive and the difference is not negative; otherwise it is
``None`` and counted in ``latencyUnknown`` (so is a span over 6 h, a clock mix-up).
"""
from __future__ import annotations

from typing import Any, Optional, TypedDict, Union
from collections.abc import Callable, Iterable, Mapping

from ..fold.attempts import AttemptTracker, embedded_stream
from ..format.model import Event
from ..format.payloads import JsonObj, as_obj, blocks, obj
from .trace import EventSource
from ..format.versions import stream_chunks

MAX_PLAUSIBLE_LATENCY_MS = 6 * 3600 * 1000   # longer spans are clock mix-ups in recorded fixtures
TOKEN_KEYS = (("input", "inputTokens"), ("output", "outputTokens"), ("cacheRead", "cacheReadTokens"),
              ("cacheWrite", "cacheWriteTokens"), ("reasoning", "reasoningTokens"))


StepKey = tuple[Any, Any]      # (turn, step) as logged (JSON values, normally ints)


class StepStats(TypedDict):
    """One step's figures (the ``steps`` list of :func:`compute_stats`)."""
    turn: Any
    step: Any
    startSeq: Optional[int]
    startTime: Optional[int]
    finishTime: Optional[int]
    latencyMs: Optional[int]
    latencyNote: Optional[str]
    tokens: dict[str, int]                     # input, output, cacheRead, cacheWrite, reasoning
    attempts: int
    failedAttempts: int
    retries: int
    errors: list[Any]                          # error codes (else finish kinds)
    toolCalls: dict[str, int]                  # tool name -> calls
    toolOutcomes: dict[str, dict[str, int]]    # tool name -> outcome (ok | error | error:CODE) -> results


class _TurnInfo(TypedDict, total=False):
    turn: Any
    startTime: Optional[int]
    endReason: Any
    error: Any


def span_ms(start: object, end: object) -> tuple[Optional[int], Optional[str]]:
    """``end - start`` in ms when both are logged times (ints > 0) and the difference is neither negative
    nor implausible (> 6 h: clocks mixed up); else ``(None, why)``.  Used by the step latencies here
    and every span of :mod:`app.log.query.timeline`: a duration is never invented."""
    if type(start) is int and type(end) is int and start > 0 and end > 0:
        dt = end - start
        if dt > MAX_PLAUSIBLE_LATENCY_MS:
            return None, f"implausible ({dt} ms): times come from different clocks"
        if dt >= 0:
            return dt, None
        return None, f"negative ({dt} ms): times are not monotonic"
    return None, "time missing (0)"


def zero_tokens() -> dict[str, int]:
    return {k: 0 for k, _ in TOKEN_KEYS}


def add_usage(acc: dict[str, int], usage: object) -> None:
    if not isinstance(usage, dict):
        return
    for k, src in TOKEN_KEYS:
        v = usage.get(src)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            acc[k] += int(v)


def tool_outcome(data: JsonObj) -> str:
    err = data.get("error")
    if isinstance(err, dict):
        return f"error:{err.get('code') or err.get('kind') or 'ERROR'}"
    if err:
        return "error"
    m = obj(data.get("message"))
    if m.get("role") == "tool" and m.get("isError") is True:      # v4 result shape
        return "error"
    for b in blocks(m):
        if b.get("type") == "tool-result" and b.get("isError"):
            return "error"
    return "ok"


def _new_step(turn: Any, step: Any) -> StepStats:
    return {"turn": turn, "step": step, "startSeq": None, "startTime": None, "finishTime": None, "latencyMs": None,
            "latencyNote": None, "tokens": zero_tokens(), "attempts": 0, "failedAttempts": 0, "retries": 0,
            "errors": [], "toolCalls": {}, "toolOutcomes": {}}


def compute_stats(src: Union[EventSource, Iterable[Event]]) -> JsonObj:
    """``src``: a LogReader (logical events) or an event iterable."""
    events: Iterable[Event] = src.iter_events(logical=True) if hasattr(src, "iter_events") else src
    at = AttemptTracker(keep_text=False)
    steps: dict[StepKey, StepStats] = {}
    order: list[StepKey] = []
    turns: dict[Any, _TurnInfo] = {}
    call_names: dict[Any, str] = {}      # callId -> name
    message_usage: dict[int, JsonObj] = {}   # message seq -> usage
    finish_time: dict[StepKey, Any] = {}  # (turn, step) -> time of last finish chunk
    msg_time: dict[StepKey, int] = {}
    end_time: dict[StepKey, int] = {}

    def step_of(t: Any, s: Any) -> StepStats:
        k = (t, s)
        if k not in steps:
            steps[k] = _new_step(t, s)
            order.append(k)
        return steps[k]

    for ev in events:
        at.apply(ev)
        d = obj(ev.data)
        t, s = d.get("turn"), d.get("step")
        typ = ev.type
        if typ == "turn/start":
            turns.setdefault(t, {"turn": t, "startTime": ev.time, "endReason": None})
        elif typ == "turn/end":
            tr = turns.setdefault(t, {"turn": t, "startTime": None, "endReason": None})
            reason = obj(d.get("reason"))
            tr["endReason"] = reason.get("kind")
            if reason.get("error"):
                e = reason.get("error")
                tr["error"] = e.get("code") if isinstance(e, dict) else str(e)
        elif typ == "step/start":
            st = step_of(t, s)
            st["startSeq"], st["startTime"] = ev.seq, ev.time
        elif typ == "step/end":
            end_time[(t, s)] = ev.time
        elif typ == "assistant/chunk":
            c = obj(d.get("chunk"))
            if c.get("type") == "finish":
                finish_time[(t, s)] = ev.time
        elif typ in ("assistant/message", "assistant/attempt"):
            for ct, c in stream_chunks(embedded_stream(ev)):          # v2+: chunks embedded, timed
                if c.get("type") == "finish":
                    finish_time[(t, s)] = ct
            if typ == "assistant/attempt":
                step_of(t, s)
                continue
            step_of(t, s)
            if (u := as_obj(d.get("usage"))) is not None:
                message_usage[ev.seq] = u
            msg_time[(t, s)] = ev.time
        elif typ == "tool/call":
            st = step_of(t, s)
            name = str(d.get("name") or "?")
            call_names[d.get("callId")] = name
            st["toolCalls"][name] = st["toolCalls"].get(name, 0) + 1
        elif typ == "tool/result" and ev.is_append:
            st = step_of(t, s)
            m = obj(d.get("message"))
            cid = (m.get("source") or {}).get("callId") if isinstance(m.get("source"), dict) else None
            if cid is None:
                cid = m.get("toolCallId")
            name = call_names.get(cid, "?")
            oc = tool_outcome(d)
            st["toolOutcomes"].setdefault(name, {})
            st["toolOutcomes"][name][oc] = st["toolOutcomes"][name].get(oc, 0) + 1
        elif typ == "llm/retry":
            step_of(t, s)["retries"] += 1

    _add_attempts(at, step_of, message_usage)
    for k in order:
        st = steps[k]
        fin = finish_time.get(k) or msg_time.get(k) or end_time.get(k)
        st["finishTime"] = fin
        st["latencyMs"], st["latencyNote"] = span_ms(st["startTime"], fin)

    return _summary([steps[k] for k in order], order, turns, at)


def _add_attempts(at: AttemptTracker, step_of: Callable[[Any, Any], StepStats],
                  message_usage: dict[int, JsonObj]) -> None:
    """Each attempt's count, tokens (its own usage, else its message's) and failure, into its step."""
    for a in at.attempts:
        st = step_of(a.turn, a.step)
        st["attempts"] += 1
        if a.usage is not None:
            add_usage(st["tokens"], a.usage)
        elif a.message_seq is not None:
            add_usage(st["tokens"], message_usage.get(a.message_seq))
        if a.failed:
            st["failedAttempts"] += 1
            f = a.failure or {}
            st["errors"].append(f.get("code") or a.finish_kind or "error")


def _summary(step_list: list[StepStats], order: list[StepKey], turns: dict[Any, _TurnInfo],
             at: AttemptTracker) -> JsonObj:
    """The stats object: the steps, each turn's sums over its steps, and the session's totals."""
    turn_list: list[JsonObj] = []
    for t in sorted({k[0] for k in order if k[0] is not None} | {t for t in turns if t is not None}):
        ss = [x for x in step_list if x["turn"] == t]
        tk = zero_tokens()
        for x in ss:
            for kk in tk:
                tk[kk] += x["tokens"][kk]
        lat = [x["latencyMs"] for x in ss if x["latencyMs"] is not None]
        tools: dict[str, int] = {}
        for x in ss:
            for n, cnt in x["toolCalls"].items():
                tools[n] = tools.get(n, 0) + cnt
        info: _TurnInfo = turns.get(t, {})
        turn_list.append({"turn": t, "steps": len([x for x in ss if x["step"] is not None]), "tokens": tk,
                          "latencyMs": sum(lat) if lat else None,
                          "toolCalls": tools, "retries": sum(x["retries"] for x in ss),
                          "failedAttempts": sum(x["failedAttempts"] for x in ss),
                          "errors": [e for x in ss for e in x["errors"]] + ([info["error"]] if info.get("error") else []),
                          "endReason": info.get("endReason")})
    total = zero_tokens()
    for x in step_list:
        for kk in total:
            total[kk] += x["tokens"][kk]
    tools_total: dict[str, int] = {}
    outcomes_total: dict[str, dict[str, int]] = {}
    for x in step_list:
        for n, cnt in x["toolCalls"].items():
            tools_total[n] = tools_total.get(n, 0) + cnt
        for n, ocs in x["toolOutcomes"].items():
            for oc, cnt in ocs.items():
                outcomes_total.setdefault(n, {})
                outcomes_total[n][oc] = outcomes_total[n].get(oc, 0) + cnt
    return {"steps": step_list, "turns": turn_list,
            "totals": {"tokens": total, "steps": len(step_list), "turns": len(turn_list),
                       "attempts": len(at.attempts), "failedAttempts": len(at.failed),
                       "retries": sum(x["retries"] for x in step_list),
                       "toolCalls": tools_total, "toolOutcomes": outcomes_total,
                       "errors": sum(len(x["errors"]) for x in step_list),
                       "latencyUnknown": sum(1 for x in step_list if x["latencyMs"] is None)}}


def step_label(st: Mapping[str, object]) -> str:
    return f"{st.get('turn')}.{st.get('step')}"
