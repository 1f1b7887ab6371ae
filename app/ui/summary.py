"""The inspector's session summary, shown while no row is selected: header, counts, tokens
and problems of the loaded part of the session.  Qt-free; reads only what is loaded."""
from __future__ import annotations

from .history.rows import fmt_datetime


def session_summary(history, info=None, title: str = "") -> str:
    r = history.reader
    if r is None:
        return ""
    h = r.header
    s = history.stats()
    lines = [title or "Session", ""]
    if h is not None:
        lines.append(f"id: {h.id}")
        when = fmt_datetime(h.createdAt)
        if when:
            lines.append(f"created: {when}")
        if h.cwd:
            lines.append(f"folder: {h.cwd}")
        lines.append(f"format: v{h.version or 0} · {s['format'] or '?'}")
        if h.parentSession:
            kind = "subagent" if h.origin == "subagent" else "fork"
            lines.append(f"{kind} of: {h.parentSession}" + (f" (seed {h.seedLength} events)" if h.seedLength else ""))
    lines.append("")
    total = s["indexedEvents"]
    lines.append(f"events: {s['storedEvents']:,} loaded" + (f" of {total:,}" if total is not None else "")
                 + ("" if s["hasMore"] else " (whole log)"))
    turns = set()
    calls = errors = 0
    tin = tout = tcache = 0
    for ev in history.window.events.values():
        d = ev.data if isinstance(ev.data, dict) else {}
        if isinstance(d.get("turn"), int):
            turns.add(d["turn"])
        if ev.type == "tool/call":
            calls += 1
        elif ev.type == "tool/result":
            m = d.get("message")
            msg = m if isinstance(m, dict) else {}
            if any(isinstance(b, dict) and b.get("isError") for b in msg.get("content") or []):
                errors += 1
        elif ev.type == "assistant/message" and isinstance(d.get("usage"), dict) and not ev.synthesized:
            u = d["usage"]
            tin += u.get("inputTokens") or 0
            tout += u.get("outputTokens") or 0
            tcache += u.get("cacheReadTokens") or 0
    lines.append(f"turns: {len(turns)} · tool calls: {calls}" + (f" ({errors} failed)" if errors else ""))
    if s["hiddenAttempts"]:
        lines.append(f"hidden attempts: {s['hiddenAttempts']}")
    if tin or tout:
        lines.append(f"tokens: in {tin:,} · out {tout:,}" + (f" · cache read {tcache:,}" if tcache else ""))
    if s["closure"]:
        lines.append(f"open last turn: {s['closure']} closure row(s) synthesized in the logical face")
    probs = list(r.problems or [])
    lines.append("")
    lines.append(f"problems: {len(probs)}" if probs else "problems: none")
    for p in probs[:8]:
        lines.append(f"  • {p}")
    lines += ["", "Select a row to see its event, links and stored JSON."]
    return "\n".join(lines)
