"""Pure lineage helpers (no store, no Qt).

* :func:`child_title` — dsh's rule for a fork child's title: ``"X"`` → ``"X (1)"`` → ``"X (2)"``:
  the parent's title without a trailing `` (N)`` counter, then the next counter after the
  highest one already taken by a session titled that way (forking ``"X (1)"`` gives the next
  ``"X (N)"`` too, never ``"X (1) (1)"``).
"""
from __future__ import annotations

import re
from typing import Optional
from collections.abc import Iterable

_COUNTER = re.compile(r"^(?P<base>.*?) \((?P<n>[1-9][0-9]*)\)$", re.S)


def title_base(title: str) -> str:
    t = (title or "").strip()
    m = _COUNTER.match(t)
    return m.group("base") if m else t


def child_title(parent_title: Optional[str], taken: Iterable[Optional[str]] = ()) -> Optional[str]:
    """The fork child's title from its parent's and the titles already in the store."""
    if parent_title is None or not parent_title.strip():
        return None
    base = title_base(parent_title)
    top = 0
    for t in list(taken) + [parent_title]:
        if not t:
            continue
        t = t.strip()
        m = _COUNTER.match(t)
        if m and m.group("base") == base:
            top = max(top, int(m.group("n")))
    return f"{base} ({top + 1})"
