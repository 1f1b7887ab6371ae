"""Keeps the inspector's session summary (:mod:`app.ui.summary`) in step with what is loaded.

The history says when its figures change (``statsChanged``: older pages, a jump, the start or
the end of the log, live rows, a face switch); the seq index and the outline pass say when the
whole log's figures are known.  Each of these only schedules a refresh: one refresh runs at
most every ``INTERVAL_MS`` (a burst of older pages while scrolling is one refresh, not one per
page or row), reads memory only, and touches the inspector only when the text changed.

The whole log's turns, tool calls and problems of a complete outline (``summary.outline_figures``)
walk every turn, so their cost grows with the log (about 0.1 s of UI-thread time a refresh at
1 GB, issue 29): they are computed once per outline, in a worker (the ``figures`` job group,
cancelled when another session opens), and every refresh reuses them.  Until they are known the
summary says the whole log is still being checked.
"""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject, QTimer, Signal

from .workers import Job

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
        self.group = f"summary-{id(self)}-figures"
        self._figures: Optional[tuple[object, Optional[dict]]] = None   # (outline, its figures; None: failed)
        self._job: Optional[tuple[object, Job]] = None                   # (outline, the job computing them)
        h = win.history
        h.opened.connect(self._drop)
        h.openFailed.connect(self._drop)
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
        """A refresh is scheduled, or the whole log's figures are being computed (a refresh follows)."""
        return self._timer.isActive() or (self._job is not None and not self._job[1].finished)

    def _drop(self, *_) -> None:
        """Another session: its figures are not this one's (a job still running is cancelled)."""
        self.win.jobs.cancel_group(self.group)
        self._figures = self._job = None

    def figures(self, ol) -> tuple[bool, Optional[dict]]:
        """(known, figures) of the complete outline ``ol``: (True, figures) once its worker answered
        (True, None if it failed); else (False, None) and the worker is started (once per outline)."""
        if self._figures is not None and self._figures[0] is ol:
            return True, self._figures[1]
        if self._job is not None and self._job[0] is ol and not self._job[1].finished:
            return False, None
        from .summary import outline_figures
        self._figures = None
        self._job = (ol, self.win.jobs.submit(lambda job: outline_figures(ol, job), name="summary-figures", group=self.group,
                                              on_done=lambda f: self._figured(ol, f),
                                              on_error=lambda _m: self._figured(ol, None)))
        return False, None

    def _figured(self, ol, figures: Optional[dict]) -> None:
        go = getattr(self.win, "go_actions", None)
        if go is not None and go.outline is ol:
            self._figures, self._job = (ol, figures), None
            self.refresh()

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
        ol = go.outline if go is not None else None
        figures = None
        if ol is not None and getattr(ol, "complete", False):
            known, figures = self.figures(ol)
            if not known:
                ol, checking = None, True          # (the whole log's figures: still being computed)
            elif figures is None:
                ol = None                          # (their worker failed: the seq index's figures only)
        whole = whole_log(ol, h.seq_index, checking, figures)
        text = session_summary(h, win.session, title, whole)
        if text != win.inspector.summary:
            win.inspector.set_summary(text)
        self.count += 1
        self.refreshed.emit()
        return text
