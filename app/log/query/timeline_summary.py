"""The timeline's turns and totals (issue 31): :func:`summarize` groups the spans of
:func:`app.log.query.timeline.timeline` per turn and totals them (wall, model, tool, waiting-for-user time, tokens,
cache hit rate, an *estimated* cost from a price table); :func:`context_points` is the context meter's data;
:func:`in_log_order` the order the spans are saved and shown in.  Pure, no Qt."""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Optional, cast

from ..format.payloads import JsonObj
from ..gcpause import collector_paused
from ..index.fastindex import load_rowscan_c
from .stats import zero_tokens
from .timeline_prices import Prices

KINDS = ("turn", "step", "attempt", "retry-wait", "tool", "compaction", "approval", "subagent")
_RANK = {k: i for i, k in enumerate(KINDS)}
_order_c = getattr(load_rowscan_c(), "tl_order", None)
NO_TIMES = "no times: an envelope-free snapshot (every time is 0)"


def _union_ms(pairs: Iterable[tuple[Optional[int], Optional[int]]]) -> int:
    """Wall time covered by the known [start, start + durationMs] of ``pairs`` (start, durationMs; overlaps counted
    once)."""
    iv = sorted((a, a + d) for a, d in pairs if d is not None and a is not None)
    total, cur_s, cur_e = 0, None, None
    for a, z in iv:
        if cur_e is None or a > cur_e:
            if cur_e is not None and cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e = a, z
        else:
            cur_e = max(cur_e, z)
    if cur_e is not None and cur_s is not None:
        total += cur_e - cur_s
    return total


_SUMMARY_KEYS = ("kind", "turn", "durationMs", "start", "seq", "endSeq", "reason", "model", "tokens", "note")


def _totals(idx: Iterable[int], c: dict[str, Sequence[Any]], prices: Prices) -> JsonObj:
    """Figures of the spans ``idx`` (of the columns ``c``) in one pass: times per kind, tokens, the estimated cost,
    counts."""
    acc = _Acc()
    counts, ms, tools, tokens = acc.counts, acc.ms, acc.tools, acc.tokens
    kind, dur, toks, model = c["kind"], c["durationMs"], c["tokens"], c["model"]
    for i in idx:
        k = kind[i]
        counts[k] += 1
        d = dur[i]
        if d is None:
            acc.unknown += 1
        else:
            ms[k] += d
        if k == "tool":
            tools.append(i)
        elif k == "attempt":
            tk = toks[i]
            for key in tokens:
                tokens[key] += tk[key]
            x = prices.cost(tk, model[i])
            if x is None:
                acc.unpriced += tk["input"] + tk["output"]
            else:
                acc.cost += x
    return _finish_totals(acc, c)


ONE_PASS = True     # summarize: every turn's totals and the whole's in one pass over the spans (False: a pass per
                    # turn with _totals, the definition; tests/test_timeline_tlc.py holds the two equal)


class _Acc:
    """The figures :func:`_totals` and :func:`_one_pass` sum, of one group of spans, summed as they come."""
    __slots__ = ("counts", "ms", "tools", "tokens", "cost", "unpriced", "unknown")

    def __init__(self) -> None:
        self.counts = dict.fromkeys(KINDS, 0)
        self.ms = dict.fromkeys(KINDS, 0)
        self.tools: list[int] = []
        self.tokens = zero_tokens()
        self.cost, self.unpriced, self.unknown = 0.0, 0, 0


def _one_pass(c: dict[str, Sequence[Any]], prices: Prices) -> tuple[dict[Any, _Acc], _Acc]:
    """:func:`_totals` of the spans of every turn that has a ``turn`` span (by its turn, as grouping them in a dict
    does) and of all of them, summed in one pass in log order (the same additions in the same order: the same
    floats)."""
    kind, dur, toks, model, turn = c["kind"], c["durationMs"], c["tokens"], c["model"], c["turn"]
    per: dict[Any, _Acc] = {}
    for k, t in zip(kind, turn):
        if k == "turn" and t is not None and type(t) is not list and type(t) is not dict and t not in per:
            per[t] = _Acc()
    whole = _Acc()
    w_counts, w_ms, w_tools, w_tokens = whole.counts, whole.ms, whole.tools, whole.tokens
    keys = list(w_tokens)
    for i, k in enumerate(kind):
        t = turn[i]
        acc = per.get(t) if t is not None and type(t) is not list and type(t) is not dict else None
        d = dur[i]
        w_counts[k] += 1
        if d is None:
            whole.unknown += 1
        else:
            w_ms[k] += d
        if acc is not None:
            acc.counts[k] += 1
            if d is None:
                acc.unknown += 1
            else:
                acc.ms[k] += d
        if k == "tool":
            w_tools.append(i)
            if acc is not None:
                acc.tools.append(i)
        elif k == "attempt":
            tk = toks[i]
            x = prices.cost(tk, model[i])
            for a in (whole, acc) if acc is not None else (whole,):
                at = a.tokens
                for key in keys:
                    at[key] += tk[key]
                if x is None:
                    a.unpriced += tk["input"] + tk["output"]
                else:
                    a.cost += x
    del w_counts, w_ms, w_tools, w_tokens
    return per, whole


def _finish_totals(acc: Optional[_Acc], c: dict[str, Sequence[Any]]) -> JsonObj:
    """The figures of the spans summed in ``acc`` (None: of no span)."""
    if acc is None:
        acc = _Acc()
    tokens = dict(acc.tokens)
    prompt = prompt_tokens(tokens)
    start, dur = c["start"], c["durationMs"]
    ms = acc.ms
    return {"wallMs": ms["turn"], "modelMs": ms["attempt"],
            "toolMs": _union_ms((start[i], dur[i]) for i in acc.tools),
            "userWaitMs": ms["approval"], "retryWaitMs": ms["retry-wait"], "tokens": tokens,
            "cacheHitRate": round(tokens["cacheRead"] / prompt, 4) if prompt else None,
            "cost": {"estimate": True, "amount": round(acc.cost, 6), "currency": "USD",
                     "unpricedTokens": acc.unpriced,
                     "note": "estimated from the price table in settings (per million tokens); not a bill"},
            "counts": dict(acc.counts), "unknownDurations": acc.unknown}


def in_log_order(spans: Iterable[JsonObj]) -> list[JsonObj]:
    """Spans by seq, a turn before its step before its attempt … at the same seq (the order of :data:`KINDS`); sorted
    by ``tl_order`` of the row scanner where built (:func:`in_log_order_py`, the definition, where it declines)."""
    if _order_c is not None:
        with collector_paused():        # (``spans`` may be a generator of the pass: its dicts, no cycles)
            listed = spans if type(spans) is list else list(spans)
            got = _order_c(listed, _RANK)
        if got is not None:
            return cast(list[JsonObj], got)
        spans = listed
    return in_log_order_py(spans)


def in_log_order_py(spans: Iterable[JsonObj]) -> list[JsonObj]:
    """The definition of :func:`in_log_order`."""
    order = _RANK
    with collector_paused():            # (a key tuple per span, no cycles: no collection walking every span)
        return sorted(spans, key=lambda s: (s["seq"] if s["seq"] is not None else -1, order[s["kind"]]))


def summarize(spans: Iterable[JsonObj], prices: Optional[Mapping[str, Any]] = None,
              turn: Optional[int] = None, ordered: bool = False) -> JsonObj:
    """``{"spans", "turns", "totals"}`` (spans in log order; ``turn``: only that turn's spans and totals;
    ``ordered``: ``spans`` is already :func:`in_log_order`, e.g. read from the cache).  Read by column: the
    spans of a :class:`~app.log.query.timeline_table.SpanTable` are not made dicts (``spans`` is then the table)."""
    with collector_paused():            # (columns, figures and a dict per turn, no cycles)
        return _summarize(spans, prices, turn, ordered)


def _summarize(spans: Iterable[JsonObj], prices: Optional[Mapping[str, Any]], turn: Optional[int],
               ordered: bool) -> JsonObj:
    table = Prices(prices or {})
    columns_of = getattr(spans, "columns_of", None) if ordered and turn is None else None
    ss: Sequence[JsonObj]
    if columns_of is not None:
        ss = spans                                                  # type: ignore[assignment]
        c = columns_of(_SUMMARY_KEYS)
    else:
        ss = list(spans) if ordered else in_log_order(spans)
        if turn is not None:
            ss = [s for s in ss if s.get("turn") == turn]
        c = {k: [s.get(k) for s in ss] for k in _SUMMARY_KEYS}
    turns: list[JsonObj] = []
    if ONE_PASS:
        per, whole = _one_pass(c, table)
    else:
        by_turn: dict[Any, list[int]] = {}
        for i, t in enumerate(c["turn"]):
            if t is not None and type(t) is not list and type(t) is not dict:      # (hashable as logged)
                by_turn.setdefault(t, []).append(i)
    for i in [i for i, k in enumerate(c["kind"]) if k == "turn"]:
        t = c["turn"][i]
        key = t if t is not None and type(t) is not list and type(t) is not dict else None   # (hashable as logged)
        if ONE_PASS:
            tot = _finish_totals(per.get(key) if key is not None else None, c)
        else:
            tot = _totals(by_turn.get(key, []) if key is not None else [], c, table)
        turns.append({"turn": t, "seq": c["seq"][i], "endSeq": c["endSeq"][i], "durationMs": c["durationMs"][i],
                      "reason": c["reason"][i], "steps": tot["counts"]["step"],
                      "attempts": tot["counts"]["attempt"], "tools": tot["counts"]["tool"],
                      "retries": tot["counts"]["retry-wait"], "modelMs": tot["modelMs"], "toolMs": tot["toolMs"],
                      "userWaitMs": tot["userWaitMs"], "tokens": tot["tokens"], "cost": tot["cost"]["amount"],
                      "costEstimate": True})
    totals = _finish_totals(whole, c) if ONE_PASS else _totals(range(len(c["kind"])), c, table)
    totals["timesKnown"] = NO_TIMES not in c["note"]
    return {"spans": ss, "turns": turns, "totals": totals}


def prompt_tokens(tokens: Mapping[str, int]) -> int:
    """The size of a request's prompt: the disjoint input, cache-read and cache-write counts."""
    return tokens.get("input", 0) + tokens.get("cacheRead", 0) + tokens.get("cacheWrite", 0)


def context_points(spans: Iterable[JsonObj], prices: Optional[Mapping[str, Any]] = None) -> list[JsonObj]:
    """The context meter: each attempt with usage -> {seq, time, prompt (input + cache read + cache write),
    cacheRead, contextWindow, windowFrom, model, turn}.  The window is the logged one (``request/context``);
    where none is logged, a ``contextWindow`` of the model's entry in ``prices`` (``windowFrom``: "settings")."""
    table = Prices(prices or {})
    out = []
    for s in spans:
        if s["kind"] != "attempt" or not prompt_tokens(s["tokens"]):
            continue
        cw = s.get("contextWindow")
        src: Optional[str] = "log"
        if cw is None:
            p = table.of(s.get("model"))
            v = p.get("contextWindow") if p is not None else None
            cw, src = (v, "settings") if type(v) is int and v > 0 else (None, None)
        out.append({"seq": s["seq"], "time": s["start"], "prompt": prompt_tokens(s["tokens"]),
                    "cacheRead": s["tokens"]["cacheRead"], "contextWindow": cw, "windowFrom": src,
                    "model": s.get("model"), "turn": s.get("turn")})
    return out


__all__ = ["KINDS", "NO_TIMES", "context_points", "in_log_order", "in_log_order_py", "prompt_tokens", "summarize"]
