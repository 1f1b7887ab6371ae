"""The row window: every loaded history row, and the slice of them the list view holds.

Pure state machine (no Qt, no I/O, no clock), after the pattern of ``app.log.fold.stitch``:
the Qt list model (:mod:`app.ui.history.model`) calls it and applies the **change
records** each call returns to its own copy of the exposed rows, inside the matching
``begin*/end*`` calls.  Applying the records of every call, in order, to a list that
started equal to :attr:`RowWindow.rows` keeps it equal to :attr:`RowWindow.rows`
(tested without Qt in ``tests/test_row_window.py``).

* Pages (:class:`~app.ui.history.pages.LoadedPage`) are kept oldest first; their rows for
  the current face are concatenated into ``all_rows``.  Rows are addressed by *ordinal*,
  which does not move when an older page is prepended (index = ordinal - ``origin``).
* The view holds at most ``MAX_EXPOSED`` rows (QListView re-lays out all of them on every
  insert): ``hidden`` loaded rows sit above the window, ``bottom`` below it.  Older rows
  slide in by ``EXPOSE_CHUNK`` at the top, newer ones at the bottom; navigation to a row
  outside the window re-centres it (one reset).
* The live merge (:meth:`RowWindow.apply_live`) replaces the newest page's rows by the
  grown page's rows touching only what changed.
* The face switch (:meth:`RowWindow.set_face`) keeps the first visible seq at the top.
* Search: the exposed rows matching the term (``matches``) and the current match.
* Jumps (:meth:`RowWindow.install_range`): the loaded pages need not reach the end of the
  log.  A page read around any seq replaces them; the window then grows in both directions
  (:meth:`add_older_page`, :meth:`add_newer_page`) and the pages that end the log
  (``tail_pages``, kept for the live feed) join again once the newer pages reach them.
* Filters (:meth:`RowWindow.set_filter`): row categories hidden from the view (``FILTERS``),
  or errors only; every page's rows pass :func:`row_visible` before they are concatenated.
* Compactions (:meth:`RowWindow.toggle_compaction`): a bracket is one collapsed row; expanding
  it inserts its underlying rows after it (``app.ui.history.compaction``).
* The live face (:meth:`RowWindow.set_live`): while the writer is live the tail page's
  logical rows are the open turn in flight (no crash closure); when it is gone, the closure.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any, Optional

from .pages import LoadedPage, hidden_attempts, link_results
from .navigation import FILTER_LABELS, FILTERS, WindowNavigation, row_category, row_is_error, row_visible  # noqa: F401
from .rows import Row
from .window_truth import TruthWindow

FIRST_ROWS = 40          # rows of the tail page shown once it is installed; the rest follow
PAINT_ROWS = 16          # rows laid out for the very first paint (more are exposed right after it)
EXPOSE_CHUNK = 10        # rows exposed per event-loop turn when older/newer rows are wanted
MAX_EXPOSED = 150        # rows the view holds at once (QListView re-lays out all of them on
                         # every insert, ~14 µs a row here): a window sliding over loaded rows


# --------------------------------------------------------------------------- change records

@dataclass(frozen=True)
class Reset:
    """Everything may have changed: take :attr:`RowWindow.rows` again."""


@dataclass(frozen=True)
class Inserted:
    at: int          # exposed index of the first new row
    rows: tuple      # the rows inserted there


@dataclass(frozen=True)
class Removed:
    at: int
    count: int
    trim: bool = False   # the window slides: the rows stay loaded, only the view stops holding them


@dataclass(frozen=True)
class Changed:
    """Rows replaced in place (same keys) or updated: repaint them."""
    at: int
    rows: tuple


RESET = Reset()


def apply_changes(rows: list, changes: list, window: RowWindow) -> None:
    """Apply change records to a plain list (what the Qt model does between begin/end)."""
    for c in changes:
        if isinstance(c, Reset):
            rows[:] = window.rows
        elif isinstance(c, Inserted):
            rows[c.at:c.at] = c.rows
        elif isinstance(c, Removed):
            del rows[c.at:c.at + c.count]
        elif isinstance(c, Changed):
            rows[c.at:c.at + len(c.rows)] = c.rows


def _lo(r: Row) -> Optional[int]:
    return r.first_seq if r.first_seq is not None else r.seq


# --------------------------------------------------------------------------- the window

class RowWindow(TruthWindow, WindowNavigation):
    def __init__(self, physical: bool = False, show_attempts: bool = False):
        self.physical = physical
        self.show_attempts = show_attempts
        self.find_term = ""
        self.hidden_kinds: frozenset = frozenset()   # FILTERS hidden
        self.errors_only = False
        self.clear()

    def clear(self) -> list:
        self._clear_truth()                      # surface index, expanded compactions, live face
        self.pages: list[LoadedPage] = []        # oldest first
        self.tail_pages: list[LoadedPage] = []   # pages ending the log, kept aside after a jump
        self.rows: list[Row] = []                # exposed rows (what the view sees)
        self.all_rows: list[Row] = []            # every loaded row
        self.hidden = 0                          # loaded rows above the exposed window
        self.bottom = 0                          # loaded rows below the exposed window
        self.origin = 0                          # ordinal of all_rows[0]
        self.all_pos: dict = {}                 # id(row) -> ordinal
        self.all_key: dict = {}                 # row key -> ordinal
        self.seq_rows: list = []                # sorted [(first_seq, last_seq, row)]
        self.seq_firsts: list = []
        self.events: dict = {}                   # seq -> Event for every loaded event (both faces)
        self.trackers: list = []
        self.older_read = 0                      # older pages added since the log was opened (dropped ones too)
        self.find_term = ""
        self.matches: list[int] = []
        self.current_match_row: Optional[int] = None
        return [RESET]

    # ------------------------------------------------------------------ bookkeeping
    def set_window(self, top: int, bottom: int) -> None:
        self.hidden, self.bottom = top, bottom
        n = len(self.all_rows)
        self.rows = self.all_rows[top:n - bottom]

    def _recompute_matches(self) -> None:
        t = self.find_term
        self.matches = [i for i, r in enumerate(self.rows) if t in r.search_text()] if t else []

    def _apply_rows(self, hidden: int = 0, bottom: int = 0) -> None:
        """Concatenate the pages' rows for the current face (pages are oldest first)."""
        rows: list = []
        seq_rows: list = []
        trackers: list = []
        for lp in self.pages:
            pr = lp.rows_for(self.physical, self.show_attempts)
            rows.extend(self.rows_of(pr))
            seq_rows.extend(self.seq_rows_of(pr))
            trackers.append(pr.tracker)
        self.all_rows = rows
        hidden = min(hidden, len(rows))
        self.set_window(hidden, min(bottom, len(rows) - hidden))
        self.seq_rows = seq_rows
        self.seq_firsts = [x[0] for x in seq_rows]
        self.trackers = trackers
        self.origin = 0
        self.all_pos = {id(r): i for i, r in enumerate(rows)}
        self.all_key = {r.key: i for i, r in enumerate(rows)}
        self._recompute_matches()

    # ------------------------------------------------------------------ pages
    def install_tail(self, lp: LoadedPage, first: int = FIRST_ROWS) -> list:
        """The tail page opens the log: its newest ``first`` rows are exposed."""
        self.pages = [lp]
        self.tail_pages = []
        self.live = lp.live
        self._adopt(lp)
        self.events = dict(lp.events)
        n = len(self.rows_of(lp.rows_for(self.physical, self.show_attempts)))
        self._apply_rows(hidden=max(0, n - first))
        return [RESET]

    def add_older_page(self, lp: LoadedPage) -> list:
        """An older page's rows go above everything loaded (hidden: expose them with
        :meth:`expose_older`); results of the next newer page learn their call."""
        self._adopt(lp)
        pr = lp.rows_for(self.physical, self.show_attempts)
        rows = self.rows_of(pr)
        srows = self.seq_rows_of(pr)
        self.pages.insert(0, lp)
        self.older_read += 1
        self.events.update(lp.events)
        k = len(rows)
        self.origin -= k
        o = self.origin
        for i, r in enumerate(rows):
            self.all_pos[id(r)] = o + i
            self.all_key[r.key] = o + i
        self.all_rows = rows + self.all_rows
        self.seq_rows = srows + self.seq_rows
        self.seq_firsts = [x[0] for x in srows] + self.seq_firsts
        self.trackers.insert(0, pr.tracker)
        self.set_window(self.hidden + k, self.bottom)
        return self._link_calls(lp)

    def _link_calls(self, lp: LoadedPage) -> list:
        """Results on the next newer page whose tool/call just arrived learn the tool name
        (their presenter view stays generic: the host looks calls up in the same page only)."""
        if len(self.pages) < 2:
            return []
        out = []
        for r in link_results(lp, self.pages[1]):
            i = self.row_index(r)
            if i is not None:
                out.append(Changed(i, (r,)))
        return out

    # ------------------------------------------------------------------ sliding
    def expose_older(self, n: Optional[int] = None) -> tuple[int, list]:
        """Show up to ``n`` (``EXPOSE_CHUNK``) more older rows (prepended); trim the window's newest rows."""
        c = min(EXPOSE_CHUNK if n is None else n, self.hidden)
        out: list = []
        if c:
            # the newest rows are trimmed first: the insertion at the top, which the view follows
            # with one layout to keep its anchor, then comes last (one layout per step, not two)
            extra = len(self.rows) + c - MAX_EXPOSED
            if extra > 0:
                k = len(self.rows)
                out.append(Removed(k - extra, extra, trim=True))
                self.set_window(self.hidden, self.bottom + extra)
                if self.current_match_row is not None and self.current_match_row >= len(self.rows):
                    self.current_match_row = None
            out.append(Inserted(0, tuple(self.all_rows[self.hidden - c:self.hidden])))
            self.set_window(self.hidden - c, self.bottom)
            if self.current_match_row is not None:
                self.current_match_row += c
            self._recompute_matches()
        return c, out

    def expose_newer(self, n: Optional[int] = None) -> tuple[int, list]:
        """Show up to ``n`` (``EXPOSE_CHUNK``) newer loaded rows at the bottom (trim the top)."""
        c = min(EXPOSE_CHUNK if n is None else n, self.bottom)
        if not c:
            return 0, []
        n = len(self.all_rows)
        out: list = [Inserted(len(self.rows), tuple(self.all_rows[n - self.bottom:n - self.bottom + c]))]
        self.set_window(self.hidden, self.bottom - c)
        extra = len(self.rows) - MAX_EXPOSED
        if extra > 0:
            out.append(Removed(0, extra, trim=True))
            self.set_window(self.hidden + extra, self.bottom)
            if self.current_match_row is not None:
                self.current_match_row = self.current_match_row - extra if self.current_match_row >= extra else None
        self._recompute_matches()
        return c, out

    def show_around(self, i_all: int) -> list:
        """Re-centre the window on loaded row ``i_all`` (navigation to a row outside it)."""
        n = len(self.all_rows)
        top = max(0, min(i_all - MAX_EXPOSED // 2, n - MAX_EXPOSED))
        bottom = max(0, n - top - MAX_EXPOSED)
        if (top, bottom) == (self.hidden, self.bottom):
            return []
        self.set_window(top, bottom)
        self.current_match_row = None
        self._recompute_matches()
        return [RESET]

    def reveal(self, ordinal: int) -> list:
        """Bring the row at ``ordinal`` into the window (nothing when it is in it)."""
        if self.exposed_index(ordinal) is not None:
            return []
        return self.show_around(ordinal - self.origin)

    # ------------------------------------------------------------------ faces
    def set_face(self, physical: bool, show_attempts: bool) -> list:
        """Rows of another face; the first seq shown stays at the top of the window."""
        first = None
        for r in self.rows:
            if r.seq is not None:
                first = _lo(r)
                break
        keep = max(len(self.rows), FIRST_ROWS)
        self.physical, self.show_attempts = physical, show_attempts
        self._apply_rows(hidden=0)
        top = 0
        if first is not None:
            for r in self.all_rows:
                lo = _lo(r)
                if lo is None or lo >= first:
                    break
                top += 1
        n = len(self.all_rows)
        top = min(top, max(0, n - keep))
        self.set_window(top, max(0, n - top - min(keep, MAX_EXPOSED)))
        self._recompute_matches()
        return [RESET]

    # ------------------------------------------------------------------ live
    def apply_live(self, old: LoadedPage, new: list) -> tuple[int, list]:
        """Replace the newest page's rows by the grown page's rows, touching only what changed:
        rows equal by identity stay, rows with the same key are updated in place, the rest
        are removed and inserted at the end.  A window that does not reach the end of the
        log only grows its hidden bottom; one that does gets the new rows (trimmed at the
        top to MAX_EXPOSED).  Returns (rows added to the loaded rows, changes)."""
        face = (self.physical, self.show_attempts)
        for lp in new:
            self._adopt(lp)
        old_pr = old.rows_for(*face)
        new_prs = [lp.rows_for(*face) for lp in new]
        old_rows = self.rows_of(old_pr)
        new_rows = [r for pr in new_prs for r in self.rows_of(pr)]
        n = len(self.all_rows)
        base = n - len(old_rows)
        m = min(len(old_rows), len(new_rows))
        k = 0
        while k < m and old_rows[k] is new_rows[k]:
            k += 1
        k2 = k
        while k2 < m and old_rows[k2].key == new_rows[k2].key:
            k2 += 1
        c = base + k2                                  # first row removed / inserted (all-rows index)
        n2 = base + len(new_rows)
        h, b = self.hidden, self.bottom
        self._live_bookkeeping(old, old_pr, old_rows, new, new_prs, base, k)
        out: list = []
        exposed_end = n - b
        if c < h:
            # the change reaches above the window (a very long tail page): rebuild the window
            self.all_rows[base + k:] = new_rows[k:]
            if b == 0:                                 # the window keeps reaching the end
                nh, nb = max(h, n2 - MAX_EXPOSED), 0
            else:                                      # same top, same end (clipped)
                nh = min(h, n2)
                nb = n2 - max(nh, min(exposed_end, n2))
            self.set_window(nh, nb)
            self.current_match_row = None
            out.append(RESET)
        else:
            # in place: same keys at the same places
            self.all_rows[base + k:base + k2] = new_rows[k:k2]
            self.set_window(h, b)
            lo, hi = max(base + k, h), min(base + k2, exposed_end)
            if lo < hi:
                out.append(Changed(lo - h, tuple(self.all_rows[lo:hi])))
            if c >= exposed_end and b > 0:
                # everything that changes is below the window
                self.all_rows[c:] = new_rows[k2:]
                self.set_window(h, b + (n2 - n))
            else:
                if exposed_end > c:
                    out.append(Removed(c - h, exposed_end - c))
                    if self.current_match_row is not None and self.current_match_row >= c - h:
                        self.current_match_row = None
                del self.all_rows[c:]
                self.set_window(h, 0)
                add = new_rows[k2:]
                shown = len(add) if b == 0 else min(len(add), exposed_end - c)
                if shown:
                    out.append(Inserted(c - h, tuple(add[:shown])))
                self.all_rows.extend(add)
                self.set_window(h, len(add) - shown)
                extra = len(self.rows) - MAX_EXPOSED
                if extra > 0 and self.bottom == 0:
                    out.append(Removed(0, extra, trim=True))
                    self.set_window(self.hidden + extra, 0)
                    if self.current_match_row is not None:
                        self.current_match_row = (self.current_match_row - extra
                                                  if self.current_match_row >= extra else None)
        for i in range(base + k, len(self.all_rows)):
            r = self.all_rows[i]
            self.all_pos[id(r)] = i + self.origin
            self.all_key[r.key] = i + self.origin
        out.extend(self._refresh_surface(new))
        self._recompute_matches()
        return n2 - n, out

    def _live_bookkeeping(self, old, old_pr, old_rows, new, new_prs, base, k) -> None:
        """Positions, events, seq ranges and trackers of the replaced newest page."""
        for r in old_rows[k:]:
            self.all_pos.pop(id(r), None)
            if self.all_key.get(r.key, -1) >= base + k + self.origin:   # not a key an older page holds
                del self.all_key[r.key]
        self.pages[-1:] = new
        for ev in old.page.closure:
            seq = ev.seq
            if self.events.get(seq) is ev:
                del self.events[seq]
        for lp in new:
            for seq, ev in lp.events.items():
                if not ev.synthesized or seq not in self.events:
                    self.events[seq] = ev
        n_old_seq = len(self.seq_rows_of(old_pr))
        if n_old_seq:
            del self.seq_rows[-n_old_seq:]
            del self.seq_firsts[-n_old_seq:]
        for pr in new_prs:
            srows = self.seq_rows_of(pr)
            self.seq_rows.extend(srows)
            self.seq_firsts.extend(x[0] for x in srows)
        if self.trackers:
            self.trackers.pop()
        self.trackers.extend(pr.tracker for pr in new_prs)

    # ------------------------------------------------------------------ lookups
    @property
    def has_more(self) -> bool:
        """Older rows exist: hidden loaded rows, or pages not read yet."""
        return bool(self.pages) and (self.hidden > 0 or self.pages[0].page.has_more)

    @property
    def base_seq(self) -> Optional[int]:
        return self.pages[0].page.base_seq if self.pages else None

    def exposed_index(self, ordinal: Optional[int]) -> Optional[int]:
        """Exposed row index of ``ordinal``; None when it is outside the window."""
        if ordinal is None:
            return None
        i_all = ordinal - self.origin
        if i_all < self.hidden or i_all >= len(self.all_rows) - self.bottom:
            return None
        return i_all - self.hidden

    def row_ordinal(self, row: Row) -> Optional[int]:
        return self.all_pos.get(id(row))

    def key_ordinal(self, key) -> Optional[int]:
        return self.all_key.get(key)

    def row_index(self, row: Row) -> Optional[int]:
        return self.exposed_index(self.all_pos.get(id(row)))

    def seq_ordinal(self, seq: int) -> Optional[int]:
        """Ordinal of the row showing ``seq`` (a collapsed chunk maps to its attempt/message row)."""
        i = bisect.bisect_right(self.seq_firsts, seq) - 1
        best = None
        j = i
        while j >= 0 and j > i - 64:
            lo, hi, r = self.seq_rows[j]
            if lo <= seq <= hi:
                if r.seq == seq:
                    return self.all_pos.get(id(r))
                if best is None:
                    best = r
            j -= 1
        if best is not None:
            # an assistant row covers its chunks; prefer the row whose own range is tightest
            return self.all_pos.get(id(best))
        return None

    def hidden_attempt_of(self, seq: int) -> Any:
        for tr in self.trackers:
            a = tr.attempt_of(seq)
            if a is not None:
                return a if a.hidden_by_default else None
        return None

    def hidden_attempt_count(self) -> int:
        return sum(map(hidden_attempts, self.trackers))

    def stored_event_count(self) -> int:
        """Loaded events read from the log (the tail's synthesized closure rows not counted)."""
        tail = self.pages[-1].page if self.pages else None
        closure = tail.closure if tail is not None and tail.tail else ()
        return len(self.events) - sum(1 for ev in closure if self.events.get(ev.seq) is ev)

    # ------------------------------------------------------------------ search (find: WindowNavigation)
    def set_current_match(self, row: Optional[int]) -> list:
        """The current match moves: exposed rows to repaint (old and new)."""
        old = self.current_match_row
        self.current_match_row = row
        return [r for r in (old, row) if r is not None and 0 <= r < len(self.rows)]
