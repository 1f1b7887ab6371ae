"""Shortening text and showing JSON: the one place for ``clip``, ``pretty_json`` and ``compact_json``.

Pure standard library; every layer may import it (the core, the store, presenters, view models, the CLI).

- :func:`clip` cuts by lines and characters for a list row, and says how much was left out;
- :func:`clip_bytes` cuts to a UTF-8 byte budget (presenter sections, long fields), idempotently;
- :func:`clip_line` cuts one line for side-by-side text (diffs);
- :func:`pretty_json` is indented JSON for reading, :func:`compact_json` one line for titles and summaries.
  Values JSON cannot encode come out as their ``repr``.
"""
from __future__ import annotations

import json
import math
import re
import threading
from typing import Any

CLIP_HINT = " (full text in the inspector)"
EXPANDED_LINES = 5000             # what :func:`clip` keeps inside :class:`unclipped` (an expanded list row)
EXPANDED_CHARS = 400_000
_expanded = threading.local()


def expanded() -> bool:
    """Inside :class:`unclipped` (this thread)."""
    return getattr(_expanded, "on", False)


class unclipped:
    """Context manager: :func:`clip` in this thread keeps up to EXPANDED_LINES / EXPANDED_CHARS
    (a list row the user expanded: "… N more lines" shown whole)."""

    def __enter__(self):
        self.prev = getattr(_expanded, "on", False)
        _expanded.on = True
        return self

    def __exit__(self, *exc):
        _expanded.on = self.prev
        return False
_CLIPPED_BYTES = re.compile(r"\n… \(\d+ more bytes\)\Z")


def clip(text: Any, max_lines: int = 18, max_chars: int = 2400, hint: str = CLIP_HINT) -> str:
    """At most ``max_chars`` characters and ``max_lines`` lines, then ``… N more lines`` (or characters) + ``hint``."""
    text = str(text)
    if getattr(_expanded, "on", False):
        max_lines, max_chars = max(max_lines, EXPANDED_LINES), max(max_chars, EXPANDED_CHARS)
    extra_chars = 0
    if len(text) > max_chars:
        extra_chars = len(text) - max_chars
        text = text[:max_chars]
    lines = text.split("\n")
    note = ""
    if len(lines) > max_lines:
        hidden = len(lines) - max_lines
        text = "\n".join(lines[:max_lines])
        note = f"… {hidden} more line{'s' if hidden != 1 else ''}"
    elif extra_chars:
        note = f"… {extra_chars} more characters"
    if note:
        text = text.rstrip("\n") + "\n" + note + hint
    return text


def clip_bytes(text: Any, limit: int) -> str:
    """``text`` as a str of at most ``limit`` UTF-8 bytes, with a ``… (N more bytes)`` marker (idempotent)."""
    text = "" if text is None else (text if isinstance(text, str) else str(text))
    if len(text) <= limit // 4:                      # cannot exceed the limit
        return text
    b = text.encode("utf-8", errors="surrogatepass")
    if len(b) <= limit:
        return text
    m = _CLIPPED_BYTES.search(text)
    if m and len(b) - len(m.group(0).encode("utf-8")) <= limit:
        return text                                  # already clipped
    head = b[:limit].decode("utf-8", errors="ignore")
    kept = len(head.encode("utf-8", errors="surrogatepass"))
    return head + f"\n… ({len(b) - kept} more bytes)"


def clip_line(text: Any, limit: int = 160) -> str:
    """One line's worth: carriage returns dropped, cut at ``limit`` characters with ``… (+N chars)``."""
    s = str(text).replace("\r", "")
    return s if len(s) <= limit else s[:limit] + f"… (+{len(s) - limit} chars)"


def pretty_json(value: Any) -> str:
    """Indented JSON (non-ASCII kept), or ``repr`` when it is not JSON."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def compact_json(value: Any, limit: int = 160) -> str:
    """One-line JSON of at most ``limit`` characters (``…`` when cut; runs of spaces folded)."""
    try:
        s = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    except (TypeError, ValueError):
        s = repr(value)
    s = " ".join(s.split())
    return s if len(s) <= limit else s[:limit - 1] + "…"


def fold(text: str, what: str, max_lines: int = 18) -> str:
    """Collapsed by default (reasoning, context injected by the runtime): the first line and
    how many lines are hidden; an expanded row shows the text (clipped as usual)."""
    if expanded():
        return clip(text, max_lines)
    lines = str(text).strip("\n").split("\n")
    first = lines[0] if len(lines[0]) <= 160 else lines[0][:159] + "…"
    n = len(lines) - 1
    if n <= 0:
        return first
    return f"{first}\n… {n} more line{'s' if n != 1 else ''} of {what} hidden{CLIP_HINT}"


def thousands(x) -> str:
    return f"{x:,}" if isinstance(x, int) else str(x)


def usage_text(u) -> str:
    if not isinstance(u, dict):
        return ""
    parts = [f"in {thousands(u.get('inputTokens', 0))}", f"out {thousands(u.get('outputTokens', 0))}"]
    for k, name in (("cacheReadTokens", "cache read"), ("cacheWriteTokens", "cache write"),
                    ("reasoningTokens", "reasoning")):
        if u.get(k):
            parts.append(f"{name} {thousands(u[k])}")
    return "tokens: " + " · ".join(parts)


def json_text(value: Any, **kw: Any) -> str:
    """``json.dumps(value, **kw)`` written as JavaScript's ``JSON.stringify`` writes a number JSON cannot hold
    (an event may hold +-inf where its row had ``1e999``: issue 27): null, never an ``Infinity``/``NaN`` token,
    so the text is always valid JSON.  The common case costs one ``json.dumps``."""
    try:
        return json.dumps(value, allow_nan=False, **kw)
    except ValueError as e:
        if "Out of range float" not in str(e):
            raise
        return json.dumps(_finite(value), allow_nan=False, **kw)


def _finite(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v
