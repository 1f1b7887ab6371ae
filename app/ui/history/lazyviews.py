"""Presenter views made when a row is first shown (issue 29: *Errors only*'s page of the whole log, thousands of
tool results, builds its rows without making each one's card first).

:func:`lazy_views` is :func:`~app.ui.history.pages.compute_views` with each view a :class:`LazyView`: the same
view (:func:`~app.presenters.registry.view_at` over the same page list), made on its first
:func:`shown_view`.  Pure Python, no Qt.
"""
from __future__ import annotations

from typing import Any, Optional

from ...presenters.registry import page_calls, view_at


class LazyView:
    """One event's presenter view in its page, made once, when first asked for (:meth:`get`)."""
    __slots__ = ("_evs", "_i", "_calls", "_view")

    def __init__(self, evs: list[Any], i: int, calls: dict) -> None:
        self._evs, self._i, self._calls = evs, i, calls
        self._view: Optional[dict] = None

    @property
    def made(self) -> bool:
        return self._view is not None

    def get(self) -> dict:
        if self._view is None:
            self._view = view_at(self._evs, self._i, self._calls)
        return self._view

    def __eq__(self, other: object) -> bool:
        """Equal to the same view, made or not (a comparison makes both)."""
        if type(other) is LazyView:
            other = other.get()
        return self.get() == other

    __hash__ = None  # type: ignore[assignment]


def lazy_views(events: list) -> dict:
    """seq -> :class:`LazyView` for the tool/call and tool/result events of one page: what
    :func:`~app.presenters.registry.views_for_page` gives (the last event of a seq wins), each made when shown."""
    evs = list(events or [])
    try:
        calls = page_calls(evs)
    except Exception:  # a presenter bug must not hide the page: generic cards instead (as compute_views)
        return {}
    return {ev.seq: LazyView(evs, i, calls) for i, ev in enumerate(evs)
            if getattr(ev, "type", None) in ("tool/call", "tool/result")}


def shown_view(row: Any) -> Any:
    """The row's presenter view (a :class:`LazyView` made now), else what the row holds."""
    v = row.view
    return v.get() if type(v) is LazyView else v
