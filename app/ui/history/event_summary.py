"""One line saying what an event without a card of its own holds (pure Python, no Qt).

A generic row (``feedback/record``, ``command/done``, ``agent/inbox/spliced`` …) showed its data as
JSON, clipped after three lines.  It shows ``key value`` pairs now, short strings quoted, lists as
their count, nested objects by their scalar fields; the JSON itself is in the inspector.
"""
from __future__ import annotations

from typing import Any

from ...log.query.textview import payload_pairs

MAX_LINE = 200        # characters of the whole line
MAX_TEXT = 70         # characters of one string value


def _scalar(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return "yes" if v is True else ("no" if v is False else "null")
    if isinstance(v, (int, float)):
        return str(v)
    s = " ".join(str(v).split())
    return f"“{s[:MAX_TEXT - 1]}…”" if len(s) > MAX_TEXT else f"“{s}”"


def _parts(d: dict) -> list:
    """The summary's parts, one per pair the whole-log find also reads
    (:func:`app.log.query.textview.payload_pairs`; find has :func:`~app.log.query.textview.payload_text`)."""
    out = []
    for key, v in payload_pairs(d):
        if isinstance(v, dict):
            out.append(f"{key} {{{len(v)} field{'s' if len(v) != 1 else ''}}}")
        elif isinstance(v, list):
            out.append(f"{key} [{len(v)} item{'s' if len(v) != 1 else ''}]" if v else f"{key} []")
        else:
            out.append(f"{key} {_scalar(v)}")
    return out


def data_summary(data: Any) -> str:
    """``text “The session needs …” · category “other”`` for a dict; a scalar or list briefly."""
    if isinstance(data, dict):
        parts = _parts(data)
    elif isinstance(data, list):
        parts = [f"[{len(data)} item{'s' if len(data) != 1 else ''}]"]
    else:
        parts = [_scalar(data)]
    line = ""
    for k, p in enumerate(parts):
        nxt = p if not line else f"{line} · {p}"
        if len(nxt) > MAX_LINE:
            return f"{line} · … (+{len(parts) - k} more)" if line else p[:MAX_LINE - 1] + "…"
        line = nxt
    return line
