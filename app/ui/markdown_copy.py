"""Copy as Markdown: history rows as a Markdown transcript (pure Python, no Qt).

Message text is kept as written (it usually is Markdown already); tool cards, boundaries
and other rows become short headed sections with their text in fenced code blocks whose
fence is longer than any backtick run inside, so a transcript cannot close the fence.
"""
from __future__ import annotations

import re

from .history.row_kind import RowKind


def fence(text: str, lang: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    f = "`" * max(3, longest + 1)
    return f"{f}{lang}\n{text.rstrip()}\n{f}"


def quote_reasoning(text: str) -> str:
    """Reasoning labelled and quoted, as the Markdown export writes it: never taken for the reply."""
    return "*reasoning:*\n\n" + "\n".join(f"> {ln}" if ln else ">" for ln in (text.splitlines() or [""]))


def _message_markdown(row) -> str:
    """A message's blocks in order, its reasoning labelled ("" when the row has no message)."""
    from .history.rows import block_plain, message_of
    msg = message_of(row.event) if row.event is not None else None
    if msg is None:
        return ""
    parts = []
    for b in msg.get("content") or []:
        if isinstance(b, dict) and b.get("type") == "reasoning":
            text = str(b.get("text", ""))
            if text.strip() and not row.hide_reasoning:
                parts.append(quote_reasoning(text))
        elif (text := block_plain(b, full=True)):
            parts.append(text)
    return "\n\n".join(parts)


def row_markdown(row) -> str:
    c = row.content()
    head = f"**{c.badge}** {c.title}".strip()
    if c.meta:
        head += f" _({c.meta})_"
    if row.kind in (RowKind.USER, RowKind.ASSISTANT):
        body = (_message_markdown(row) or row.copy_text()).strip()
        return f"### {c.badge.capitalize()} · {c.title}\n\n{body}" if body else f"### {c.badge.capitalize()} · {c.title}"
    if row.kind in (RowKind.TURN_START,):
        return f"## {c.title}"
    if row.is_boundary:
        return f"_{c.title}_"
    parts = [head]
    for b in c.blocks:
        label = f"{b.label}:\n" if b.label else ""
        if b.style in ("mono", "diff", "error"):
            parts.append(label + fence(b.text, "diff" if b.style == "diff" else ""))
        else:
            parts.append(label + b.text)
    return "\n\n".join(p for p in parts if p)


def rows_markdown(rows) -> str:
    return "\n\n".join(row_markdown(r) for r in rows if r is not None).rstrip() + "\n"
