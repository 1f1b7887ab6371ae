"""Jumps and view filters of the row window (no Qt): the part of
:class:`~app.ui.history.window.RowWindow` that lets the loaded pages sit anywhere in the log.

* Jumps (:meth:`WindowNavigation.install_range`): the loaded pages need not reach the end of
  the log.  A page read around any seq (``pages.read_range``, bounds from the seq index)
  replaces them; the window then grows in both directions (``add_older_page``,
  :meth:`add_newer_page`) and the pages that end the log (``tail_pages``, kept for the live
  feed) join again once the newer pages reach them (:meth:`attach_tail`).
* Filters (:meth:`WindowNavigation.set_filter`): row categories hidden from the view
  (``FILTERS``), or errors only; every page's rows pass :func:`row_visible` before they are
  concatenated, so ordinals, seq lookups and the live merge only ever see visible rows.
"""
from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Optional

from ...log.format.lazyevent import lean_error
from ...log.query.textview import fold_case
from .pages import LoadedPage, link_results
from .rows import Row
from .row_kind import RowKind

# --------------------------------------------------------------------------- filters

FILTERS = ("user", "assistant", "reasoning", "tools", "turns", "log")   # what a view filter can hide
FILTER_LABELS = {"user": "User messages", "assistant": "Assistant text and attempts",
                 "reasoning": "Reasoning (inside assistant rows)",
                 "tools": "Tool calls and results", "turns": "Turn and step boundaries",
                 "log": "Log-only events and bad rows"}
_CATEGORY = {RowKind.USER: "user", RowKind.ASSISTANT: "assistant", RowKind.STREAMING: "assistant",
             RowKind.ATTEMPT_FAILED: "assistant", RowKind.ATTEMPT_OPEN: "assistant", RowKind.TOOL_CALL: "tools",
             RowKind.TOOL_RESULT: "tools", RowKind.TURN_START: "turns", RowKind.TURN_END: "turns",
             RowKind.STEP_START: "turns", RowKind.STEP_END: "turns"}


def neighbour_index(values: list, x, forward: bool, hi=None) -> Optional[int]:
    """Index in the sorted ``values`` of the first value after ``x`` (forward; after ``hi`` when
    given, the end of a range starting at ``x``) or of the last value before ``x``; None past the end."""
    if forward:
        i = bisect.bisect_right(values, x if hi is None else hi)
        return i if i < len(values) else None
    i = bisect.bisect_left(values, x) - 1
    return i if i >= 0 else None


# "reasoning" is no row category: hidden, it drops the reasoning blocks of the rows that have them
_REASONING_KINDS = frozenset({RowKind.ASSISTANT, RowKind.STREAMING, RowKind.ATTEMPT_FAILED, RowKind.ATTEMPT_OPEN})


def row_category(r: Row) -> str:
    """The filter category of a row (``FILTERS``); bad rows, notices, gaps and other events: ``log``."""
    return _CATEGORY.get(r.kind, "log")


def row_is_error(r: Row) -> bool:
    """A failed tool, a failed attempt, an error turn end, a bad stored row or a seq gap."""
    k = r.kind
    if k in (RowKind.ATTEMPT_FAILED, RowKind.BAD, RowKind.GAP):
        return True
    if k not in (RowKind.TOOL_RESULT, RowKind.TURN_END):
        return False
    ev = r.event
    lean = lean_error(ev)         # (a payload not decoded yet: the answer of its lean record, where it has one)
    if lean is not None:
        return lean
    d = ev.data if ev is not None and isinstance(ev.data, dict) else None
    if d is None:
        return False
    if k == RowKind.TOOL_RESULT:
        return d.get("error") is not None or d.get("isError") is True
    if k == RowKind.TURN_END:
        rs = d.get("reason")
        return (rs.get("kind") if isinstance(rs, dict) else rs) == "error"
    return False


def row_visible(r: Row, hidden: frozenset, errors_only: bool) -> bool:
    if errors_only:
        return row_is_error(r)
    return not hidden or row_category(r) not in hidden



class WindowNavigation:
    """Mixed into RowWindow (its state: pages, all_rows, hidden/bottom, ordinals, tail_pages)."""

    # the host's state (RowWindow)
    physical: bool
    show_attempts: bool
    pages: list
    tail_pages: list
    all_rows: list
    hidden: int
    bottom: int
    origin: int
    events: dict
    trackers: list
    current_match_row: Optional[int]
    hidden_kinds: frozenset
    find_term: str
    matches: list
    errors_only: bool
    all_pos: dict
    all_key: dict
    seq_rows: list
    seq_firsts: list

    if TYPE_CHECKING:
        def set_window(self, top: int, bottom: int) -> None: ...
        def _recompute_matches(self) -> None: ...
        def _apply_rows(self, hidden: int = 0, bottom: int = 0) -> None: ...
        def seq_ordinal(self, seq: int) -> Optional[int]: ...
        def row_index(self, row: Row) -> Optional[int]: ...
        def set_face(self, physical: bool, show_attempts: bool) -> list: ...
        def _adopt(self, lp: LoadedPage) -> None: ...

    @property
    def filtered(self) -> bool:
        return bool(self.hidden_kinds) or self.errors_only

    def rows_of(self, pr) -> list:
        """A page's rows for the current face that pass the view filters (reasoning blocks
        dropped from them while the reasoning filter hides it)."""
        hide_reasoning = "reasoning" in self.hidden_kinds
        for r in pr.rows:
            if r.hide_reasoning != hide_reasoning and r.kind in _REASONING_KINDS:
                r.hide_reasoning = hide_reasoning
                r.touch()
        if not self.filtered:
            return pr.rows
        h, e = self.hidden_kinds, self.errors_only
        return [r for r in pr.rows if row_visible(r, h, e)]

    def seq_rows_of(self, pr) -> list:
        if not self.filtered:
            return pr.seq_rows
        h, e = self.hidden_kinds, self.errors_only
        return [x for x in pr.seq_rows if row_visible(x[2], h, e)]

    # ------------------------------------------------------------------ jumps
    @property
    def attached(self) -> bool:
        """The loaded pages reach the end of the log."""
        return not self.tail_pages

    @property
    def has_newer(self) -> bool:
        """Newer rows exist that are not loaded (the window was moved by a jump)."""
        return bool(self.tail_pages)

    @property
    def whole_log(self) -> bool:
        """Every event of the log is loaded: no older page, no newer page kept aside after a jump, and not
        *Errors only*'s page (its rows are scattered over the whole log, with no older page to read)."""
        pages = self.pages
        return bool(pages) and not pages[0].page.has_more and not self.tail_pages and not any(p.sparse for p in pages)

    @property
    def newest_page(self) -> Optional[LoadedPage]:
        """The page ending the log (loaded, or kept aside for the live feed)."""
        if self.tail_pages:
            return self.tail_pages[-1]
        return self.pages[-1] if self.pages else None

    @property
    def tail_base_seq(self) -> Optional[int]:
        """First seq of the pages that end the log (loaded or kept aside)."""
        pages = self.tail_pages or self.pages
        for lp in pages:
            if lp.page.base_seq is not None:
                return lp.page.base_seq
        return None

    def loaded_range(self) -> tuple:
        """(first seq, last seq) of the loaded pages (None, None: nothing)."""
        first = last = None
        for lp in self.pages:
            b = lp.page.base_seq
            if b is not None:
                first = b if first is None else min(first, b)
        for lp in reversed(self.pages):
            e = lp.page.last_seq
            if e is not None:
                last = e
                break
        return first, last

    def install_range(self, lp: LoadedPage, at_seq: Optional[int] = None) -> list:
        from . import window as W
        """A page read around a far seq replaces the loaded pages (a jump).  The pages that
        end the log are kept aside (``tail_pages``) until newer pages reach them again; the
        window is centred on ``at_seq``'s row."""
        if self.attached and self.pages and self.pages[-1].page.tail:
            self.tail_pages = [self.pages[-1]]
        self._adopt(lp)
        self.pages = [lp]
        self.events = dict(lp.events)
        self.current_match_row = None
        self._apply_rows()
        o = self.seq_ordinal(at_seq) if at_seq is not None else None
        if o is None and at_seq is not None:
            o = self.near_ordinal(at_seq)
        n = len(self.all_rows)
        i = (o - self.origin) if o is not None else 0
        # a first paint as small as the tail's (W.PAINT_ROWS): the view lays out every exposed
        # row; more follow after the paint (jumps.fill), the rest as the user scrolls
        top = max(0, min(i - W.PAINT_ROWS // 2, n - W.PAINT_ROWS))
        self.set_window(top, max(0, n - top - W.PAINT_ROWS))
        self._recompute_matches()
        return [W.RESET]

    def attach_tail(self) -> list:
        """The window reached the pages that end the log: they join as newer pages."""
        out: list = []
        pages, self.tail_pages = self.tail_pages, []
        for lp in pages:
            out += self.add_newer_page(lp)
        return out

    def jump_to_tail(self) -> list:
        """The window on the pages that end the log again (go to end after a jump)."""
        from . import window as W
        if self.attached:
            return []
        pages, self.tail_pages = self.tail_pages, []
        self.pages = list(pages)
        self.events = {}
        for lp in pages:
            self._adopt(lp)
            self.events.update(lp.events)
        self.current_match_row = None
        self._apply_rows()
        n = len(self.all_rows)
        self.set_window(max(0, n - W.FIRST_ROWS), 0)
        self._recompute_matches()
        return [W.RESET]

    def add_newer_page(self, lp: LoadedPage) -> list:
        """A newer page's rows go below everything loaded (hidden at the bottom: expose them
        with :meth:`expose_newer`); its results learn their calls from the page before."""
        from . import window as W
        self._adopt(lp)
        pr = lp.rows_for(self.physical, self.show_attempts)
        rows = self.rows_of(pr)
        prev = self.pages[-1] if self.pages else None
        self.pages.append(lp)
        self.events.update(lp.events)
        o = self.origin + len(self.all_rows)
        for i, r in enumerate(rows):
            self.all_pos[id(r)] = o + i
            self.all_key[r.key] = o + i
        self.all_rows = self.all_rows + rows
        srows = self.seq_rows_of(pr)
        self.seq_rows = self.seq_rows + srows
        self.seq_firsts = self.seq_firsts + [x[0] for x in srows]
        self.trackers.append(pr.tracker)
        self.set_window(self.hidden, self.bottom + len(rows))
        if prev is None:
            return []
        out = []
        for r in link_results(prev, lp):
            at = self.row_index(r)
            if at is not None:
                out.append(W.Changed(at, (r,)))
        return out

    # ------------------------------------------------------------------ filters
    def set_filter(self, hidden_kinds=frozenset(), errors_only: bool = False) -> list:
        """Hide row categories (``FILTERS``) or show errors only; the first seq shown stays
        at the top of the window."""
        hidden_kinds = frozenset(hidden_kinds)
        if (hidden_kinds, bool(errors_only)) == (self.hidden_kinds, self.errors_only):
            return []
        self.hidden_kinds, self.errors_only = hidden_kinds, bool(errors_only)
        return self.set_face(self.physical, self.show_attempts)

    def apply_live_detached(self, old: LoadedPage, new: list) -> bool:
        """Live rows grew the log's end while the window is elsewhere (after a jump): the
        kept-aside tail pages follow; nothing on screen changes.  False: ``old`` is not it."""
        if not self.tail_pages or self.tail_pages[-1] is not old:
            return False
        self.tail_pages[-1:] = new
        return True

    def near_ordinal(self, seq: int) -> Optional[int]:
        """Ordinal of the first loaded row starting after ``seq``, else of the last one."""
        if not self.seq_rows:
            return None
        i = bisect.bisect_right(self.seq_firsts, seq)
        r = self.seq_rows[min(i, len(self.seq_rows) - 1)][2]
        return self.all_pos.get(id(r))

    # ------------------------------------------------------------------ search
    def set_find(self, term: str) -> bool:
        """A new term (folded as the whole-log search folds it: :func:`fold_case`); False when it
        is the current one."""
        term = fold_case(term or "")
        if term == self.find_term:
            return False
        self.find_term = term
        self.current_match_row = None
        self._recompute_matches()
        return True

    def find(self, from_row: Optional[int], forward: bool) -> tuple[Optional[int], Optional[int]]:
        """Next match after (forward) or before ``from_row``: (exposed row, None) in the
        window, else (None, ordinal) of the nearest loaded match outside it, else (None, None).
        No wrap."""
        m = self.matches
        r = None
        if m:
            if from_row is None:
                r = m[-1] if not forward else m[0]
            else:
                i = neighbour_index(m, from_row, forward)
                r = m[i] if i is not None else None
        if r is not None or not self.find_term:
            return r, None
        t = self.find_term
        return None, self._beyond(forward, lambda row: t in row.search_text())

    def turn_beyond(self, forward: bool) -> Optional[int]:
        """Ordinal of the nearest turn start outside the window."""
        return self._beyond(forward, lambda row: row.kind == RowKind.TURN_START)

    def _beyond(self, forward: bool, pred) -> Optional[int]:
        n = len(self.all_rows)
        span = range(n - self.bottom, n) if forward else range(self.hidden - 1, -1, -1)
        for i_all in span:
            if pred(self.all_rows[i_all]):
                return i_all + self.origin
        return None
