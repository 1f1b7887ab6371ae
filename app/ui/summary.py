"""The inspector's session summary, shown while no row is selected: header, counts, tokens
and problems.  Qt-free; reads only what is in memory (no I/O).

Two sets of figures, never mixed up:

* **loaded**: the events the history holds now (``RowWindow.events``: the pages loaded, after
  older pages, a jump, or the start of the log); counted per loaded page once and cached on
  the page (:func:`page_tally`), so a refresh after the 40th older page costs the sum of 40
  small records, not a walk over every loaded event;
* **whole log**: the events of the seq index and the turns, tool calls and problems of the
  outline pass (``app.log.query.outline``), once they are known.
"""
from __future__ import annotations

from typing import Any, Optional

from .history.rows import fmt_datetime

_TALLY = "_summary_tally"


def _tally_events(events) -> dict[str, Any]:
    turns: set = set()
    calls = errors = tin = tout = tcache = 0
    for ev in events:
        d = ev.data if isinstance(ev.data, dict) else {}
        t = d.get("turn")
        if isinstance(t, int):
            turns.add(t)
        typ = ev.type
        if typ == "tool/call":
            calls += 1
        elif typ == "tool/result":
            m = d.get("message")
            msg = m if isinstance(m, dict) else {}
            if any(isinstance(b, dict) and b.get("isError") for b in msg.get("content") or []):
                errors += 1
        elif typ == "assistant/message" and isinstance(d.get("usage"), dict) and not ev.synthesized:
            u = d["usage"]
            tin += u.get("inputTokens") or 0
            tout += u.get("outputTokens") or 0
            tcache += u.get("cacheReadTokens") or 0
    return {"turns": frozenset(turns), "calls": calls, "errors": errors, "in": tin, "out": tout, "cache": tcache}


def page_tally(lp) -> dict[str, Any]:
    """Counts of one loaded page's events, computed once (a live tail page that grew, or whose
    events were replaced, is counted again: the key is its events dict and their number)."""
    events = lp.events
    key = (id(events), len(events))
    got = getattr(lp, _TALLY, None)
    if got is not None and got[0] == key:
        return got[1]
    t = _tally_events(events.values())
    setattr(lp, _TALLY, (key, t))
    return t


def seed_tally(lp, events, turns: set, calls: int, errors: int) -> dict[str, Any]:
    """:func:`page_tally` of one loaded page counted from ``events`` and the ``turns``, ``calls`` and ``errors`` of
    the others, counted without their payloads (*Errors only*'s page: ``app.ui.history.sparse.lean_tally``)."""
    t = _tally_events(events)
    t.update(turns=t["turns"] | turns, calls=t["calls"] + calls, errors=t["errors"] + errors)
    setattr(lp, _TALLY, ((id(lp.events), len(lp.events)), t))
    return t


def loaded_tally(window) -> dict[str, Any]:
    """Counts over every loaded event of ``window`` (a RowWindow): the pages' tallies summed.

    The window's events are the union of its pages' events (the pages hold disjoint seq
    ranges), so this equals counting ``window.events`` itself."""
    turns: set = set()
    out = {"calls": 0, "errors": 0, "in": 0, "out": 0, "cache": 0}
    for lp in window.pages:
        t = page_tally(lp)
        turns |= t["turns"]
        for k in out:
            out[k] += t[k]
    out["turns"] = len(turns)
    return out


def _of(loaded: int, whole: Optional[int], everything: bool) -> str:
    """"40 loaded of 1,200" / "40" (everything is loaded) / "40 loaded" (whole unknown)."""
    if everything:
        return f"{loaded:,}"
    if whole is not None and whole >= loaded:
        return f"{loaded:,} loaded of {whole:,}"
    return f"{loaded:,} loaded"


def outline_figures(ol, job=None) -> dict[str, Any]:
    """The whole log's turns, tool calls and problems from a complete outline pass.  It walks every
    turn (a packed outline unpacks each one: about 4 µs a turn), so it grows with the log: the
    window computes it once per outline, in a worker (``summary_refresh``); ``job``: its cancel token."""
    calls = 0
    for i, e in enumerate(ol.turns):
        if job is not None and not i % 2048:
            job.check()
        calls += sum(e.tools.values())
    return {"turns": len(ol.turns), "calls": calls, "problems": [str(p) for p in ol.problems]}


def whole_log(outline=None, seq_index=None, checking: bool = False, figures: Optional[dict] = None) -> dict[str, Any]:
    """The whole log's figures known so far: events and turns from the seq index, turns, tool
    calls and problems from a complete outline pass; ``checking``: the outline pass is running;
    ``figures``: :func:`outline_figures` of ``outline``, computed already (else computed here)."""
    ol = outline if outline is not None and getattr(outline, "complete", False) else None
    out: dict[str, Any] = {"events": None, "turns": None, "calls": None, "problems": None, "checking": checking}
    if seq_index is not None:
        out["events"] = seq_index.events
        mc = getattr(seq_index, "mark_code", None)
        if mc is not None:
            out["turns"] = mc.count(0)          # MARK_CODES: 0 is turn/start (array.count: no Python loop)
    if ol is not None:
        out["events"] = out["events"] if out["events"] is not None else ol.events
        f = figures if figures is not None else outline_figures(ol)
        out["turns"], out["calls"], out["problems"] = f["turns"], f["calls"], f["problems"]
    return out


def session_summary(history, info=None, title: str = "", whole: Optional[dict] = None) -> str:
    """The summary text; ``whole``: :func:`whole_log` (the whole log's figures known so far)."""
    r = history.reader
    if r is None:
        return ""
    w = whole or {}
    h = r.header
    s = history.stats()
    from .plaintext import clean_line as o     # (one-line fields: a line break in an id cannot forge a line)
    lines = [o(title) or "Session", ""]
    if h is not None:
        lines.append(f"id: {o(h.id)}")
        when = fmt_datetime(h.createdAt)
        if when:
            lines.append(f"created: {when}")
        if h.cwd:
            lines.append(f"folder: {o(h.cwd)}")
        lines.append(f"format: v{h.version or 0} · {s['format'] or '?'}")
        if h.parentSession:
            kind = "subagent" if h.origin == "subagent" else "fork"
            lines.append(f"{kind} of: {o(h.parentSession)}" + (f" (seed {h.seedLength} events)" if h.seedLength else ""))
    lines.append("")
    stored = s["storedEvents"]
    total = s["indexedEvents"] if s["indexedEvents"] is not None else w.get("events")
    win = history.window
    everything = win.whole_log
    lines.append(f"events: {stored:,} (the whole log)" if everything else f"events: {_of(stored, total, False)}")
    t = loaded_tally(win)
    lines.append(f"turns: {_of(t['turns'], w.get('turns'), everything)}")
    lines.append(f"tool calls: {_of(t['calls'], w.get('calls'), everything)}"
                 + (f" ({t['errors']:,} failed{'' if everything else ' among the loaded'})" if t["errors"] else ""))
    if s["hiddenAttempts"]:
        lines.append(f"hidden attempts: {s['hiddenAttempts']:,}" + ("" if everything else " (loaded)"))
    if t["in"] or t["out"]:
        lines.append(("tokens: " if everything else "tokens (loaded): ") + f"in {t['in']:,} · out {t['out']:,}"
                     + (f" · cache read {t['cache']:,}" if t["cache"] else ""))
    if s["closure"] and not s.get("liveFace"):           # (the live face closes nothing)
        n = s["closure"]
        lines.append(f"open last turn: {n} closure row{'' if n == 1 else 's'} synthesized in the logical face")
    lines.append("")
    probs = w.get("problems")
    if probs is not None:        # every problem of the log (the banner and the Problems panel count the same)
        lines.append(f"problems: {len(probs):,} in the whole log (Problems panel: Ctrl+Shift+R)" if probs
                     else "problems: none in the whole log")
    else:
        probs = [str(p) for p in (r.problems or [])]
        still = " so far (the whole log is still being checked)" if w.get("checking") else ""
        lines.append(f"problems: {len(probs):,}{still}" if probs else f"problems: none{still}")
    for p in probs[:8]:
        lines.append(f"  • {p}")
    if len(probs) > 8:
        lines.append(f"  … and {len(probs) - 8:,} more")
    lines += ["", "Select a row to see its event, links and stored JSON."]
    return "\n".join(lines)
