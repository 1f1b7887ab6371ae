"""Presenter registry (spec §8 "Tool views"): plain functions of events, by tool name.

Views are computed on the fly and never stored.  A view is a JSON-able dict:
``{"for": "call"|"result", "card", "tool", "title", "summary", "status", "sections":
[{"label", "text", "mono", "lang"}], ...card fields}``; every text value is plain text.
"""
from __future__ import annotations

import json
from typing import Callable, Optional

MAX_SECTION = 64 * 1024

_CALL: dict = {}
_RESULT: dict = {}


def register(names, *, call: Optional[Callable] = None, result: Optional[Callable] = None):
    """Register presenters for one tool name or several."""
    for n in ([names] if isinstance(names, str) else names):
        if call is not None:
            _CALL[n] = call
        if result is not None:
            _RESULT[n] = result


def registered() -> list:
    return sorted(set(_CALL) | set(_RESULT))


def clip(text: str, limit: int = MAX_SECTION) -> str:
    text = "" if text is None else str(text)
    b = text.encode("utf-8", errors="replace")
    if len(b) <= limit:
        return text
    return b[:limit].decode("utf-8", errors="ignore") + f"\n… ({len(b) - limit} more bytes)"


def section(label: str, text, mono: bool = True, lang: Optional[str] = None) -> dict:
    return {"label": label, "text": clip(text), "mono": mono, "lang": lang}


def result_text(result: dict) -> str:
    out = []
    for b in result.get("content") or []:
        if isinstance(b, dict) and b.get("type") == "text":
            out.append(str(b.get("text", "")))
        elif isinstance(b, dict) and b.get("type") == "image":
            att = b.get("attachment") or {}
            out.append(f"[image {att.get('mediaType', '')} {att.get('width', '?')}x{att.get('height', '?')}]")
        else:
            out.append(json.dumps(b, ensure_ascii=False))
    return "\n".join(out)


def generic_view(for_: str, tool: str, payload: str, fallback: Optional[str], status=None, label=None) -> dict:
    return {"for": for_, "card": "generic", "tool": tool, "title": tool or "(unknown tool)",
            "summary": (payload or "").strip().splitlines()[0][:120] if (payload or "").strip() else "",
            "status": status, "sections": [section(label or ("arguments" if for_ == "call" else "content"), payload)],
            "fallback": fallback}


def _parse(arguments_json):
    if isinstance(arguments_json, dict):
        return arguments_json
    try:
        v = json.loads(arguments_json)
    except (TypeError, ValueError):
        return None
    return v if isinstance(v, dict) else None


def _pretty(arguments_json) -> str:
    try:
        return json.dumps(json.loads(arguments_json), indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(arguments_json)


def present_call(name: str, arguments_json) -> dict:
    args = _parse(arguments_json)
    if args is None:
        return generic_view("call", name, str(arguments_json), "bad-json")
    fn = _CALL.get(name)
    if fn is None:
        return generic_view("call", name, _pretty(arguments_json), "unknown-tool" if name not in _RESULT else "no-presenter")
    try:
        view = fn(args)
        view.setdefault("for", "call")
        view.setdefault("tool", name)
        view.setdefault("status", None)
        return view
    except Exception as e:  # a presenter must never break the history
        return generic_view("call", name, _pretty(arguments_json), f"presenter-error: {type(e).__name__}: {e}")


def tool_result_of(event) -> dict:
    d = event.data if isinstance(event.data, dict) else {}
    m = d.get("message") if isinstance(d.get("message"), dict) else {}
    for b in m.get("content") or []:
        if isinstance(b, dict) and b.get("type") == "tool-result":
            return {"content": b.get("content") or [], "isError": bool(b.get("isError")), "meta": d.get("meta"),
                    "error": d.get("error")}
    return {"content": [], "isError": bool(d.get("error")), "meta": d.get("meta"), "error": d.get("error")}


def present_result(name: str, arguments_json, event) -> dict:
    res = tool_result_of(event)
    status = "error" if res["isError"] else "ok"
    args = _parse(arguments_json)
    if args is None:
        return generic_view("result", name, result_text(res), "bad-json", status)
    fn = _RESULT.get(name)
    if fn is None:
        return generic_view("result", name, result_text(res), "unknown-tool" if name not in _CALL else "no-presenter",
                            status)
    try:
        view = fn(args, res)
        view.setdefault("for", "result")
        view.setdefault("tool", name)
        view.setdefault("status", status)
        return view
    except Exception as e:
        return generic_view("result", name, result_text(res), f"presenter-error: {type(e).__name__}: {e}", status)


def call_id_of_result(event) -> Optional[str]:
    d = event.data if isinstance(event.data, dict) else {}
    m = d.get("message") if isinstance(d.get("message"), dict) else {}
    src = m.get("source") if isinstance(m.get("source"), dict) else {}
    if src.get("callId"):
        return src["callId"]
    for b in m.get("content") or []:
        if isinstance(b, dict) and b.get("type") == "tool-result":
            return b.get("toolCallId")
    return d.get("callId")


def views_for_page(events, scope=None) -> dict:
    """seq -> view for the tool/call and tool/result events of one page (the host rule:
    a result's call is looked up by callId in the same page only)."""
    calls: dict = {}
    views: dict = {}
    for ev in events:
        if ev.type == "tool/call" and isinstance(ev.data, dict):
            calls[ev.data.get("callId")] = ev
            views[ev.seq] = present_call(str(ev.data.get("name")), ev.data.get("arguments"))
    for ev in events:
        if ev.type != "tool/result":
            continue
        call = calls.get(call_id_of_result(ev))
        if call is None:
            res = tool_result_of(ev)
            views[ev.seq] = generic_view("result", "", result_text(res), "call-not-on-page",
                                         "error" if res["isError"] else "ok")
            continue
        views[ev.seq] = present_result(str(call.data.get("name")), call.data.get("arguments"), ev)
    return views
