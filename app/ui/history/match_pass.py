"""The find bar's match check over the exposed rows, in slices (QtCore only, no widgets).

A new find-bar term used to be checked against every exposed row in one go
(:meth:`~app.ui.history.navigation.WindowNavigation.set_find`): each row's searchable text is
built and folded (:func:`app.log.query.textview.fold_case`, cached per row by ``Row.search_text``
until the row changes) and the term looked for.  :class:`MatchPass` does the same check a few
rows at a time on zero-delay timer turns, so the event loop runs between slices:

* a slice checks at most ``ROWS_PER_SLICE`` rows and stops early once ``SLICE_BUDGET_S`` is
  spent (a row whose text is not built yet costs more than a cached one);
* rows are checked from the current row upwards, then from the newest row down to it: the
  first match found is the one the find bar shows first (the newest at or above the current
  row, else the newest), so the caller can select it after that slice (``firstMatch``);
* the window's ``matches`` grow as the pass goes (kept sorted), ``progress`` says how many;
* a new term (or :meth:`cancel`) stops the pass where it is; a window that recomputed its
  matches itself meanwhile (rows installed or removed: ``RowWindow._recompute_matches``)
  ends it too (``finished``), since those matches are complete;
* :meth:`finish` does the rest at once (a navigation that needs every match now).

The final ``matches`` are exactly what the one-go check gives (tests compare them).
"""
from __future__ import annotations

import bisect
import time
from typing import Optional

from PySide6.QtCore import QObject, QTimer, Signal

ROWS_PER_SLICE = 24           # rows checked per event-loop turn at most
SLICE_BUDGET_S = 0.004        # and a slice stops once this much time is spent


class MatchPass(QObject):
    firstMatch = Signal(int)          # the first match found (the one to show first), after its slice
    progress = Signal(int, int)       # matches so far, rows checked so far
    finished = Signal(int)            # the pass is complete: number of matches

    def __init__(self, parent=None):
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._slice)
        self.window = None
        self.term = ""
        self._order: list = []
        self._pos = 0
        self._found: list = []
        self._rows: Optional[list] = None
        self._first_sent = False
        self.slices: list = []            # rows checked in each slice of the current pass (tests, bench)

    @property
    def running(self) -> bool:
        return self.window is not None

    @property
    def checked(self) -> int:
        return self._pos

    def start(self, window, term: str, start_row: Optional[int]) -> None:
        """Check ``window.rows`` for ``term`` (folded already): ``window.matches`` starts empty and
        grows; ``start_row`` is the current row (None: the newest row)."""
        self.cancel()
        n = len(window.rows)
        s = n if start_row is None else max(0, min(n, start_row + 1))
        self.window, self.term = window, term
        self._rows = window.rows
        self._order = list(range(s - 1, -1, -1)) + list(range(n - 1, s - 1, -1))
        self._pos = 0
        self._found = []
        self._first_sent = False
        self.slices = []
        window.matches = self._found
        self._timer.start()

    def cancel(self) -> None:
        """Stop where it is (the window keeps the matches found so far)."""
        self._timer.stop()
        self.window = None
        self._rows = None

    def _stale(self) -> bool:
        """The pass cannot go on: a new term, or the window's rows changed (it then recomputed its
        matches for this term itself: they are complete, ``finished`` says so)."""
        w = self.window
        if w is None:
            return True
        if w.find_term != self.term:
            self.cancel()
            return True
        if w.rows is not self._rows or w.matches is not self._found:
            self.cancel()
            self.finished.emit(len(w.matches))
            return True
        return False

    def _check(self, limit: int, deadline: Optional[float]) -> int:
        rows, order, term, found = self._rows, self._order, self.term, self._found
        assert rows is not None
        end = min(len(order), self._pos + limit)
        k = self._pos
        first = None
        while k < end:
            i = order[k]
            k += 1
            if term in rows[i].search_text():
                bisect.insort(found, i)
                if first is None and not self._first_sent:
                    first = i
            if deadline is not None and time.perf_counter() > deadline:
                break
        done = k - self._pos
        self._pos = k
        if first is not None:
            self._first_sent = True
            self.firstMatch.emit(first)
        return done

    def _slice(self) -> None:
        if self._stale():
            return
        done = self._check(ROWS_PER_SLICE, time.perf_counter() + SLICE_BUDGET_S)
        self.slices.append(done)
        if self.window is None:          # a firstMatch handler started another pass or cancelled
            return
        self._after()

    def _after(self) -> None:
        self.progress.emit(len(self._found), self._pos)
        if self._pos >= len(self._order):
            self.window = None
            self._rows = None
            self.finished.emit(len(self._found))
        elif self.window is not None and not self._timer.isActive():
            self._timer.start()

    def finish(self) -> None:
        """Check the rest now (a navigation that needs every match)."""
        if self.window is None or self._stale():
            return
        self._timer.stop()
        self._check(len(self._order), None)
        if self.window is not None:
            self._after()
