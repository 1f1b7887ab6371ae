"""The two sides of each audit comparison, as plain text (no Qt: safe on a worker thread).

:func:`attempt_sides`, :func:`request_sides` and :func:`fork_sides` turn the plain dicts of
:mod:`app.log.query.diff` into ``(left title, left text, right title, right text, summary)`` for
:class:`.diff_view.DiffView`; :func:`event_lines` lists events near a seq.
"""
from __future__ import annotations

import json
from typing import Optional

from ...textutil import clip_line


def _content_text(c: dict) -> str:
    out = []
    if c.get("reasoning"):
        out += ["[reasoning]", c["reasoning"], ""]
    out += ["[text]", c.get("text") or "(none)"]
    for tc in c.get("toolCalls") or []:
        out += ["", f"[tool call {tc.get('name')} {tc.get('id')}]", str(tc.get("arguments", ""))]
    return "\n".join(out)


def attempt_sides(step: dict, index: int = 0) -> tuple:
    """(left title, left, right title, right, summary) for a failed attempt vs the committed message."""
    failed = step.get("failed") or []
    f = failed[index] if failed else {}
    com = step.get("committed") or {}
    fail = f.get("failure") or {}
    left = _content_text(f) + "\n\n" + "\n".join([
        "[finish]", json.dumps(f.get("finish"), ensure_ascii=False),
        "[usage]", json.dumps(f.get("usage"), ensure_ascii=False)])
    right = _content_text(com) + "\n\n" + "\n".join([
        "[finish]", json.dumps((com.get("streamed") or {}).get("finish"), ensure_ascii=False),
        "[usage]", json.dumps(com.get("usage") or (com.get("streamed") or {}).get("usage"), ensure_ascii=False)])
    summary = (f"step {step.get('turn')}.{step.get('step')}: {len(failed)} failed attempt{'' if len(failed) == 1 else 's'}; "
               f"failed {f.get('firstSeq')}–{f.get('lastSeq')} {fail.get('code') or f.get('finishKind')}"
               + (f" (retry scheduled at {f.get('retrySeq')}, started {f.get('retryStartedSeq')})"
                  if f.get("retrySeq") is not None else "")
               + (f"; committed attempt {com.get('attemptFirstSeq')}–{com.get('attemptLastSeq')} → message "
                  f"{com.get('messageSeq')}" if com else "; no committed message"))
    return (f"failed attempt {f.get('firstSeq')}–{f.get('lastSeq')}: {fail.get('code', '')} {fail.get('message', '')}",
            left, f"committed message {com.get('messageSeq', '—')}", right if com else "(no committed message)",
            summary)


def _request_text(req: dict, seqs: list) -> str:
    out = []
    cfg = {k: v for k, v in req.items() if k not in ("messages", "system", "tools", "sessionId")}
    out.append("config: " + json.dumps(cfg, ensure_ascii=False, sort_keys=True))
    sysv = req.get("system")
    out.append("system: " + (clip_line(sysv, 120) if isinstance(sysv, str) else clip_line(json.dumps(sysv), 120)))
    tools = req.get("tools")
    if isinstance(tools, list):
        out.append("tools: " + ", ".join(str(t.get("name") if isinstance(t, dict) else t) for t in tools))
    else:
        out.append("tools: " + str(tools))
    out.append("")
    for i, m in enumerate(req.get("messages") or []):
        seq = seqs[i] if i < len(seqs) else "?"
        parts = []
        for b in m.get("content") or []:
            if isinstance(b, dict):
                t = b.get("type")
                if t in ("text", "reasoning"):
                    parts.append(("" if t == "text" else "[reasoning] ") + str(b.get("text", "")))
                elif t == "tool-call":
                    parts.append(f"[tool-call {b.get('name')}] {b.get('arguments', '')}")
                elif t == "tool-result":
                    inner = " ".join(str(c.get("text", "")) for c in b.get("content") or [] if isinstance(c, dict))
                    parts.append(f"[tool-result{' error' if b.get('isError') else ''}] {inner}")
                else:
                    parts.append(f"[{t}]")
        role = m.get("role") or (m.get("source") or {}).get("kind") or "?"
        out.append(f"#{i} {role} (seq {seq}): " + clip_line(" ".join(parts).replace("\n", " ")))
    return "\n".join(out)


def request_sides(d: dict) -> tuple:
    a, b = d["a"], d["b"]
    reqs = d.get("requests") or {}
    m = d["messages"]
    bits = [f"messages {m['countA']} → {m['countB']}: common prefix {m['commonPrefix']}"]
    if m["added"]:
        bits.append(f"added #{', #'.join(map(str, m['added']))}")
    if m["removed"]:
        bits.append(f"removed #{', #'.join(map(str, m['removed']))}")
    if m["changed"]:
        bits.append(f"changed #{', #'.join(map(str, m['changed']))}")
    bits.append("system changed" if d["system"]["changed"] else "system same")
    t = d["tools"]
    bits.append("tools changed" + (f" (+{t['added']} -{t['removed']})" if t["added"] or t["removed"] else "")
                if t["changed"] else "tools same")
    c = d["config"]
    if c["added"] or c["removed"] or c["changed"]:
        bits.append("config: " + ", ".join([f"+{k}" for k in c["added"]] + [f"-{k}" for k in c["removed"]]
                                             + [f"~{k}" for k in c["changed"]]))
    else:
        bits.append("config same")
    return (f"request at {a['boundary']} (step {a['turn']}.{a['step']})",
            _request_text(reqs.get("a", {}), a.get("messageSeqs", [])),
            f"request at {b['boundary']} (step {b['turn']}.{b['step']})",
            _request_text(reqs.get("b", {}), b.get("messageSeqs", [])), "; ".join(bits))


def fork_sides(d: dict, parent_lines: list, child_lines: list) -> tuple:
    ok = "ok" if d.get("seedLengthOk") and d.get("endSeedOk") else "MISMATCH"
    summary = (f"common prefix {d['commonPrefix']} events; diverge at seq {d.get('divergenceSeq')} "
               f"(parent {d.get('parentAtDivergence')}, child {d.get('childAtDivergence')}); seedLength "
               f"{d.get('seedLength')}, end-seed at {d.get('endSeedSeq')}: {ok}")
    if d.get("problems"):
        summary += " — " + "; ".join(d["problems"])
    return (f"parent {d['parent'].get('id')}", "\n".join(parent_lines),
            f"fork child {d['child'].get('id')}", "\n".join(child_lines), summary)


def event_lines(events: list, around: Optional[int] = None, before: int = 6, after: int = 14) -> list:
    """``seq  type  short payload`` lines near ``around`` (all when None)."""
    out = []
    for ev in events:
        if around is not None and not (around - before <= ev.seq <= around + after):
            continue
        d = ev.data if isinstance(ev.data, dict) else {}
        extra = ""
        if ev.type == "assistant/chunk" and isinstance(d.get("chunk"), dict):
            c = d["chunk"]
            extra = c.get("type", "") + (" " + clip_line(str(c.get("text", "")), 40) if c.get("text") else "")
        elif ev.type in ("turn/start", "turn/end", "step/start", "step/end"):
            extra = " ".join(f"{k}={d[k]}" for k in ("turn", "step") if k in d)
        out.append(f"{ev.seq:>5}  {ev.type:<22} {extra}".rstrip())
    return out
