"""Keeps the inspector's session summary (:mod:`app.ui.summary`) in step with what is loaded.

The history says when its figures change (``statsChanged``: older pages, a jump, the start or
the end of the log, live rows, a face switch); the seq index and the outline pass say when the
whole log's figures are known.  Each of these only schedules a refresh: one refresh runs at
most every ``INTERVAL_MS`` (a burst of older pages while scrolling is one refresh, not one per
page or row), reads memory only, and touches the inspector only when the text changed.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

INTERVAL_MS = 150


class SummaryRefresh(QObject):
    refreshed = Signal()             # the summary text was recomputed (changed or not)

    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self.count = 0               # refreshes run (tests: coalesced, not one per signal)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(INTERVAL_MS)
        self._timer.timeout.connect(self.refresh)
        h = win.history
        h.statsChanged.connect(self.schedule)
        h.indexReady.connect(self.schedule)
        go = getattr(win, "go_actions", None)
        if go is not None:
            go.outlineReady.connect(self.schedule)
        win.sessions.model.dataChanged.connect(self.schedule)     # the session's title arrived

    def schedule(self, *_) -> None:
        """A refresh within INTERVAL_MS (a pending one is not pushed back: a steady stream of
        changes still refreshes the summary every INTERVAL_MS)."""
        if not self._timer.isActive():
            self._timer.start()

    def pending(self) -> bool:
        return self._timer.isActive()

    def refresh(self) -> str:
        """Recompute the summary now (and drop a pending refresh)."""
        from .session_model import display_title
        from .summary import session_summary, whole_log
        self._timer.stop()
        win = self.win
        h = win.history
        title = display_title(win.session, win.sessions.model.titles) if win.session is not None else ""
        go = getattr(win, "go_actions", None)
        checking = go is not None and h.path is not None and win.jobs.group_busy(go.job_group("outline")) > 0
        whole = whole_log(go.outline if go is not None else None, h.seq_index, checking)
        text = session_summary(h, win.session, title, whole)
        if text != win.inspector.summary:
            win.inspector.set_summary(text)
        self.count += 1
        self.refreshed.emit()
        return text
