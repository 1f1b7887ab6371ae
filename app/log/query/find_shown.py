"""The fields a user sees of the commonest rows of a whole-log find, read the short way (pure core, no Qt):
:func:`quick_shown` is :func:`app.log.query.textview.shown_fields` for an assistant message, a tool result or a
user message whose content is the plain shape dsh writes (a string, or blocks of text, reasoning and tool calls
with string texts), and None for anything else, which the caller reads with ``shown_fields`` itself.

``shown_fields`` reads an assistant message's blocks three times (reasoning, text, tool calls) through the general
content reader; here once.  ``tests/test_find_shown.py`` holds both equal on every fixture, generated and hostile
events and edited blocks; ``tests/test_find_text_fast.py`` holds the find's hits equal both ways.
"""
from __future__ import annotations

from typing import Any, Optional

from ..format.payloads import value_text
from .textview import (ASSISTANT, ERROR, REASONING, TOOL_CALL, TOOL_OUTPUT, USER, Field, Shown, answered_call,
                       arguments_text, error_text)


def _plain_parts(content: Any) -> Optional[str]:
    """``content_text(content)`` (its defaults) for a string or a list of text/reasoning blocks with string texts
    (empty ones left out, as it leaves them); None: another shape."""
    if type(content) is str:
        return content
    if type(content) is not list:
        return None
    parts = []
    for b in content:
        if type(b) is not dict or b.get("type") not in ("text", "reasoning"):
            return None
        t = b.get("text")
        if type(t) is not str:
            return None
        if t:
            parts.append(t)
    return "\n".join(parts)


def _assistant(d: dict[str, Any]) -> Optional[list[Shown]]:
    m = d.get("message")
    if type(m) is not dict:
        return None
    content = m.get("content")
    if type(content) is not list:
        return None
    reasons: list[str] = []
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    for b in content:
        if type(b) is not dict:
            return None
        t = b.get("type")
        if t == "tool-call":
            calls.append(b)
            continue
        x = b.get("text")
        if type(x) is not str:
            return None
        if t == "text":
            texts.append(x)
        elif t == "reasoning":
            reasons.append(x)
        else:
            return None
    out = []
    if any(reasons):
        out.append(Shown(Field(REASONING, "\n".join(reasons))))
    if any(texts):
        out.append(Shown(Field(ASSISTANT, "\n".join(texts))))
    for b in calls:
        name = value_text(b.get("name"))
        args = arguments_text(b.get("arguments"))
        cid = b.get("id")
        out.append(Shown(Field(TOOL_CALL, f"{name}\n{args}" if args else name, name or None),
                         cid if isinstance(cid, str) else None, True))
    return out


def quick_shown(typ: str, d: Any) -> Optional[list[Shown]]:
    """``shown_fields`` of an event of type ``typ`` with payload ``d`` (no tool names), or None: not read here."""
    if type(d) is not dict:
        return None
    if typ == "assistant/message":
        return _assistant(d)
    if typ == "tool/result":
        m = d.get("message")
        if type(m) is not dict:
            return None
        answered_call(m)                               # (as shown_fields reads it: an odd message raises alike)
        t = _plain_parts(m.get("content"))
        if t is None:
            return None
        out = [Shown(Field(TOOL_OUTPUT, t, None))] if t else []
        if d.get("error") is not None:
            out.append(Shown(Field(ERROR, error_text(d.get("error")), None)))
        return out
    if typ == "user/message":
        t = _plain_parts(d.get("content"))
        if t is None:
            return None
        return [Shown(Field(USER, t))] if t else []
    return None
