"""The sparse seq index of the open log, built in the model's ``index`` job group (the scan
runs in a child process, ``pages.seq_index_job``), and ``event_at`` for a seq that is not
loaded (``event-at`` jobs, which use the index once it is ready)."""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject

from ..memory import trim
from .pages import event_at_job, seq_index_job


class SeqIndex(QObject):
    def __init__(self, model):
        super().__init__(model)
        self.model = model
        self.reset()

    def reset(self) -> None:
        self.index = None
        self.state = "none"               # none | building | ready | failed
        self.elapsed = 0.0
        self.mode: Optional[str] = None   # "process" (child scan) | "thread" (fallback)
        self.job = None                   # the build's Job (Cancel: its child scan is killed)

    def start(self) -> None:
        m = self.model
        if m.path is None:
            return
        self.state = "building"
        job = m.jobs.submit(seq_index_job, m.path, m.session_id, name="index", group=m.job_group("index"),
                            on_done=self._done, on_error=self._failed,
                            on_progress=lambda d, t: m.indexProgress.emit(d, t),
                            on_end=self._stopped)            # (also when it ended as Cancel was clicked)
        self.job = job
        m.indexJob.emit(job)
        m.statsChanged.emit()

    def _stopped(self, job) -> None:
        """The build was cancelled (its Cancel, or the session closed): the index is not there."""
        if job.cancelled and job is self.job:
            self.state = "cancelled"
            self.job = None
            self.model.statsChanged.emit()

    def _done(self, result) -> None:
        m = self.model
        self.index, self.elapsed, self.mode = result
        self.state = "ready"
        if m.reader is not None and m.reader.index is None:
            m.reader.index = self.index
        m.indexReady.emit()
        m.statsChanged.emit()
        trim()                            # the open's work is done: its freed heap back (issue 36)

    def _failed(self, msg: str) -> None:
        self.state = "failed"
        self.model.statsChanged.emit()

    def fetch_event(self, seq: int) -> None:
        """event_at in a worker, for a seq that is not loaded (result: model.eventFetched)."""
        m = self.model
        if m.path is None:
            return
        m.jobs.submit(event_at_job, m.path, m.session_id, self.index, seq, name="event-at",
                      group=m.job_group("event-at"), exclusive=False,
                      on_done=lambda ev: m.eventFetched.emit(seq, ev),
                      on_error=lambda msg: m.eventFetched.emit(seq, None))
