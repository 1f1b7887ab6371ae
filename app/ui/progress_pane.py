"""Progress and Cancel for long jobs, in the pane that waits (not only a status-bar line).

:class:`ProgressPane` shows one job: what it does, a bar with the percent (from bytes), the bytes done
and the time left (:class:`app.store.eta.Eta`, the same estimate the command line prints), and a
Cancel button.  :class:`TaskStrip` is a column of them (hidden when empty): ``strip.track(job, title)``
follows a :class:`app.ui.workers.Job` (its ``progress`` signal) and removes the pane when the job ends.
Cancel cancels the job at once: the worker stops at its next progress report (every job here reports
at least every few hundred rows) and whatever it was writing is removed, never published.
"""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QTimer, Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from ..store.eta import Eta, fmt_bytes, fmt_left
from .workers import Job


class ProgressPane(QFrame):
    """One job's progress: title, bar (percent), detail (bytes, time left), Cancel."""
    cancelRequested = Signal()

    def __init__(self, title: str, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("progressPane")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.eta = Eta()
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 4, 8, 4)
        col = QVBoxLayout()
        col.setSpacing(2)
        self.title = QLabel(title)
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setWordWrap(True)                 # a long title wraps: it never widens the pane's dock
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)                      # busy until the job says how far it is
        self.bar.setValue(0)
        self.bar.setFormat("%p %")
        self.bar.setTextVisible(True)
        self.detail = QLabel("starting …")
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setObjectName("progressDetail")
        self.detail.setWordWrap(True)
        col.addWidget(self.title)
        col.addWidget(self.bar)
        col.addWidget(self.detail)
        lay.addLayout(col, 1)
        self.cancel = QPushButton("Cancel")
        self.cancel.setObjectName("progressCancel")
        self.cancel.clicked.connect(self.cancelRequested.emit)
        lay.addWidget(self.cancel, 0, Qt.AlignmentFlag.AlignVCenter)

    def update_progress(self, done: int, total: int) -> None:
        e = self.eta
        e.update(done, total)
        if self.bar.maximum() == 0:
            self.bar.setRange(0, 100)
            self.bar.setValue(0)
        if e.percent > self.bar.value():             # (never goes back)
            self.bar.setValue(e.percent)
        left = fmt_left(e.seconds_left())
        self.detail.setText(f"{fmt_bytes(e.done)} of {fmt_bytes(e.total)}" + (f" — {left}" if left else ""))

    def finish(self) -> None:
        self.bar.setRange(0, 100)
        self.bar.setValue(100)


class TaskStrip(QWidget):
    """A column of :class:`ProgressPane` (hidden when no job runs)."""
    cancelled = Signal(str)          # a job's title, after its Cancel

    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setObjectName("taskStrip")
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)
        self._lay.setSpacing(2)
        self.panes: dict[Job, ProgressPane] = {}
        self.hide()

    def track(self, job: Job, title: str, delay_ms: int = 0) -> ProgressPane:
        """A pane for ``job``; with ``delay_ms`` it appears only if the job still runs by then (a job that
        is usually quick never flashes one)."""
        pane = ProgressPane(title, self)
        self.panes[job] = pane
        self._lay.addWidget(pane)
        if delay_ms > 0:
            pane.hide()
            QTimer.singleShot(delay_ms, lambda job=job: self._reveal(job))
        else:
            self.show()
        job.progress.connect(lambda d, t, job=job: None if job.cancelled else pane.update_progress(d, t))
        job.done.connect(lambda _r, job=job: self._ended(job, True))
        job.failed.connect(lambda _m, job=job: self._ended(job, False))
        pane.cancelRequested.connect(lambda job=job: self.cancel(job))
        if job.finished:              # (handed over after it ended: its signals are gone, no pane stays)
            self._drop(job)
        return pane

    def _reveal(self, job: Job) -> None:
        pane = self.panes.get(job)
        if pane is not None and not job.finished:
            pane.show()
            self.show()

    def cancel(self, job: Job) -> None:
        job.cancel()
        pane = self.panes.get(job)
        self._drop(job)
        if pane is not None:
            self.cancelled.emit(pane.title.text())

    def _ended(self, job: Job, ok: bool) -> None:
        pane = self.panes.get(job)
        if pane is not None and ok:
            pane.finish()
        self._drop(job)

    def _drop(self, job: Job) -> None:
        pane = self.panes.pop(job, None)
        if pane is not None:
            pane.hide()
            self._lay.removeWidget(pane)
            pane.deleteLater()
        if not self.panes:
            self.hide()
