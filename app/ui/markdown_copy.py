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


def row_markdown(row) -> str:
    c = row.content()
    head = f"**{c.badge}** {c.title}".strip()
    if c.meta:
        head += f" _({c.meta})_"
    if row.kind in (RowKind.USER, RowKind.ASSISTANT):
        body = row.copy_text().strip()
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
