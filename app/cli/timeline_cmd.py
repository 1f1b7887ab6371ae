"""``session-lens timeline PATH [--turn N] [--json]``: where the time and the tokens of a session went.

JSON: ``{"spans": [...], "turns": [...], "totals": {...}, "cache": ...}`` (see :mod:`app.log.query.timeline`);
the cost in ``totals`` and ``turns`` is an estimate from the price table in the settings
(:mod:`app.store.timeline_cache`).  Plain output: one line per turn, then the totals; with ``--turn``
the spans of that turn.  Log text (tool names, labels) is neutralised for the terminal by :func:`emit`.
"""
from __future__ import annotations

import itertools
from typing import Any, Optional

from .main import COMMANDS, cfg_session_path, session_reader, emit


def _ms(v: Optional[int]) -> str:
    if v is None:
        return "?"
    return f"{v / 1000:.2f}s" if v >= 1000 else f"{v}ms"


def _tok(t: dict[str, int]) -> str:
    return f"in {t['input']:,} cache {t['cacheRead']:,} out {t['output']:,}"


def _span_line(s: dict[str, Any]) -> str:
    extra = []
    if s["kind"] == "attempt":
        extra.append(f"ttft {_ms(s.get('ttftMs'))} decode {_ms(s.get('decodeMs'))} {_tok(s['tokens'])}")
        if s.get("tps"):
            extra.append(f"{s['tps']} tok/s")
        extra.append(f"finish {s.get('finish')}")
    if s["kind"] == "retry-wait":
        extra.append(f"logged delay {_ms(s.get('delayMs'))} after {s.get('failure')}")
    if s["kind"] in ("tool", "subagent") and s.get("status") not in (None, "ok"):
        extra.append(str(s.get("status")))
    if s["kind"] == "tool" and s.get("overlaps"):
        extra.append(f"overlaps {len(s['overlaps'])}")
    if s["kind"] == "subagent" and s.get("childSession"):
        extra.append(f"child {s['childSession'].get('id')}")
    if s["kind"] == "compaction":
        extra.append(f"context {s.get('tokensBefore')} -> {s.get('tokensAfter')} tokens")
    if s.get("error"):
        extra.append(f"error {s['error']}")
    if s.get("note") and s.get("durationMs") is None:
        extra.append(f"({s['note']})")
    seqs = f"{s['seq']}-{s['endSeq']}" if s.get("endSeq") is not None else f"{s['seq']}-"
    return f"  {s['kind']:>10} {seqs:>13} {_ms(s.get('durationMs')):>9}  {s['label']}  {'  '.join(extra)}"


def _text(obj: dict[str, Any], one_turn: bool) -> str:
    t = obj["totals"]
    lines = []
    if one_turn:
        lines += [_span_line(s) for s in obj["spans"]]
    else:
        lines.append(f"{'turn':>6} {'wall':>9} {'model':>9} {'tools':>9} {'steps':>5} {'tries':>5}  tokens / cost")
        for tr in obj["turns"]:
            lines.append(f"{tr['turn']!s:>6} {_ms(tr['durationMs']):>9} {_ms(tr['modelMs']):>9} {_ms(tr['toolMs']):>9} "
                         f"{tr['steps']:>5} {tr['attempts']:>5}  {_tok(tr['tokens'])}  ~${tr['cost']:.4f}")
    c = t["cost"]
    wall = t["wallMs"] if any(tr["durationMs"] is not None for tr in obj["turns"]) else None   # (none measured: ?)
    lines.append(f"total: wall {_ms(wall)}, model {_ms(t['modelMs'])}, tools {_ms(t['toolMs'])}, "
                 f"waiting for the user {_ms(t['userWaitMs'])}, retry waits {_ms(t['retryWaitMs'])}")
    hit = f"{t['cacheHitRate'] * 100:.1f} %" if t["cacheHitRate"] is not None else "?"
    lines.append(f"tokens: {_tok(t['tokens'])} reasoning {t['tokens']['reasoning']:,}; cache hit rate {hit}")
    lines.append(f"estimated cost: ~${c['amount']:.4f} (an estimate from the price table in settings"
                 + (f"; {c['unpricedTokens']:,} tokens of models without a price" if c["unpricedTokens"] else "")
                 + ")")
    if not t["timesKnown"]:
        lines.append("no times: an envelope-free snapshot (every time is 0); no duration is shown")
    elif t["unknownDurations"]:
        lines.append(f"{t['unknownDurations']} spans without a duration (times missing, negative or implausible)")
    return "\n".join(lines)


def _cfg_timeline(p):
    cfg_session_path(p)
    p.add_argument("--turn", type=int, help="only this turn (its spans, in the plain output)")


BATCH = 4096                  # spans written at a time by --json


def _stream_json(obj: dict[str, Any]) -> None:
    """``--json`` of a whole session, the spans made and written a batch at a time (the bytes of ``emit``'s one
    ``json.dumps`` of the object: its separators, its key order ``spans``, ``turns``, ``totals``, ``cache``)."""
    from ..textutil import json_text
    from .termtext import json_safe, write_out
    spans = obj["spans"]
    it = spans.iter_dicts() if hasattr(spans, "iter_dicts") else iter(spans)
    head = '{"spans": ['
    while True:
        batch = [json_text(s, ensure_ascii=False) for s in itertools.islice(it, BATCH)]
        if not batch:
            break
        write_out(json_safe(head + ", ".join(batch)))
        head = ", "
    rest = {k: (list(v) if k == "turns" else v) for k, v in obj.items() if k != "spans"}
    tail = json_text(rest, ensure_ascii=False)           # '{"turns": …}' -> '], "turns": …}'
    write_out(json_safe(("]" if head == ", " else '{"spans": []') + ", " + tail[1:]) + "\n")


def _run_timeline(args):
    from ..store.timeline_cache import session_timeline
    r = session_reader(args)
    obj = session_timeline(r, path=r.path if r.source.kind != "sqlite" else None, turn=args.turn)
    if args.json and args.turn is None and list(obj)[0] == "spans":
        _stream_json(obj)
        return
    emit(args, obj, lambda: _text(obj, args.turn is not None))


COMMANDS["timeline"] = ("spans of a session: turns, steps, model attempts, retries, tools, compactions, approvals, "
                        "subagents; tokens and an estimated cost", _cfg_timeline, _run_timeline)
