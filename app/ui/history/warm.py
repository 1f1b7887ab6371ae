"""Idle-time work of the history view (issue 15: scrolling without stalls): pixmaps of the rows on
and near the screen, and documents of the hidden rows next to the window, a slice at a time.

A :class:`RowWarmer` belongs to one :class:`~app.ui.history.view.HistoryView`; its timer fires every
``WARM_EVERY_MS`` and each step works about ``WARM_BUDGET_S``, never right after a paint or a layout
(``BUSY_S``: that loop turn has had its share).  What a step does first is what the next scroll step
or layout repaints: rows on screen drawn without a pixmap (clipped to what was exposed), then the
rows within a viewport above and below, the scroll direction's side first, as far as the delegate's
pixmap budget goes (``paintcache.py``: nothing past it is rendered, so nothing rendered is
evicted).  Then the documents and heights of up to ``WARM_ROWS`` hidden rows on each side of the
window, so that sliding them in lays out cached rows.  A pixmap too long to render in a slice is left to the paint (drawn clipped, or
whole once it is on screen).
"""
from __future__ import annotations

import time
from itertools import zip_longest

from PySide6.QtCore import QObject, QPoint, QTimer

from .delegate import row_of

WARM_ROWS = 30         # hidden rows on each side of the window whose documents are built in idle time
WARM_EVERY_MS = 12     # ... a step every this many ms
WARM_BUDGET_S = 0.002  # ... of at most about this long (one document more)
BUSY_S = 0.004         # no warm step this soon after a paint or a layout


class RowWarmer(QObject):
    def __init__(self, view):
        super().__init__(view)
        self.view = view
        self.timer = QTimer(self)
        self.timer.setInterval(WARM_EVERY_MS)       # not every loop turn: input and paints first
        self.timer.timeout.connect(self.step)
        self.busy_until = 0.0                # perf_counter time before which a step waits
        self.scroll_dir = 0                  # the last scroll step's direction (its side first)

    def start(self) -> None:
        if not self.timer.isActive():
            self.timer.start()

    def busy(self) -> None:
        """The view painted or laid out: the next step waits a little."""
        self.busy_until = time.perf_counter() + BUSY_S

    def step(self):
        """Idle time, a slice of at most about WARM_BUDGET_S every WARM_EVERY_MS: the pixmaps of
        the rows on screen and within a viewport of it (what the next scroll step or layout
        repaints is then blitted), then the documents of the hidden rows above and below the
        window (exposing them lays out cached rows).  A step right after a paint or a layout
        waits for the next one: the loop turn has had its share."""
        v = self.view
        m = v.hmodel()
        w = m.window if m is not None else None
        if m is None or w is None or (m.loading and not m.rows):
            self.timer.stop()
            return
        now = time.perf_counter()
        if now < self.busy_until:
            return
        end = now + WARM_BUDGET_S
        d = v.delegate
        done = band = 0
        for ix, rect, selected in self.near_rows():
            band += d.pixmap_bytes(rect)
            if not d.pixmaps.fits(band):
                break                        # past the pixmap budget: rendering it would evict the band's own
            row = row_of(ix)
            if row is None or d.has_pixmap(row, rect, selected):
                continue
            cost = d.px_cost * rect.height()
            if cost > 2 * WARM_BUDGET_S:
                continue                     # too long for a slice: drawn clipped, or whole once on screen
            if done and time.perf_counter() + cost > end:
                return                       # the next one would overrun the slice
            d.render_pixmap(row, rect, selected)
            done += 1
        n = len(w.all_rows)
        near = w.all_rows[max(0, w.hidden - WARM_ROWS):w.hidden][::-1] + \
            w.all_rows[n - w.bottom:n - w.bottom + WARM_ROWS]
        todo = [r for r in near if not d.has_size(r)]
        if todo and d.warm(todo, max(0.0, end - time.perf_counter())) < len(todo):
            return
        if not done:
            self.timer.stop()

    def near_rows(self) -> list:
        """(index, rect, selected) of the rows on screen first, then those within a viewport
        above and below it, nearest first (alternating, the scroll direction's side first)."""
        v = self.view
        m = v.hmodel()
        vh = v.viewport().height()
        top = v.indexAt(QPoint(8, 2))
        if m is None or not top.isValid():
            return []
        sel = v.selectionModel()
        count = m.rowCount()

        def item(r):
            ix = m.index(r, 0)
            return ix, v.visualRect(ix), sel is not None and sel.isSelected(ix)

        def walk(r, step, beyond):
            out = []
            while 0 <= r < count:
                it = item(r)
                if beyond(it[1]):
                    break
                out.append(it)
                r += step
            return out
        on = walk(top.row(), 1, lambda rc: rc.top() >= vh)
        below = walk(top.row() + len(on), 1, lambda rc: rc.top() > 2 * vh)
        above = walk(top.row() - 1, -1, lambda rc: rc.bottom() < -vh)
        first, second = (above, below) if self.scroll_dir <= 0 else (below, above)
        out = on
        for a, b in zip_longest(first, second):
            out += [x for x in (a, b) if x is not None]
        return out
