"""The time scrubber's view model (issue 30): which position is wanted, the answers from the workers.

Qt-free but for QtCore.  :class:`ReplayModel` asks for the state at a position in a worker
(:class:`~app.ui.workers.Jobs`) and never on the UI thread:

* the first request of a session starts its replay process (:class:`app.store.replay_child.ReplayClient`:
  the saved seq index, fold checkpoints and surface index, built by the index child when missing,
  then the side index's background pass, all in that process, so the window's interpreter only waits
  on a pipe); where no child can be started, the same context runs in-process
  (:func:`app.store.replay_child.open_context`, its background pass a worker job);
* positions are coalesced: while one answer is being computed, newer positions only replace the
  wanted one, and when the answer arrives for a position no longer wanted it is dropped and the
  latest wanted position is asked for instead (dragging the slider never queues work);
* ``diff_from``: the answer also holds what changed since that position (:mod:`app.log.query.asofdiff`).
"""
from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QObject, QTimer, Signal

from .workers import Job, Jobs


class _Backend:
    """What the model asks: the replay child, or the in-process context."""

    def __init__(self, impl: Any, child: bool) -> None:
        self.impl, self.child = impl, child
        info = impl.info
        self.last: int = info["last"]
        self.turns: list[int] = info["turns"]
        self.steps: list[int] = info["steps"]

    @property
    def filled(self) -> bool:
        return bool(self.impl.filled)

    def answer(self, seq: int, diff_from: Optional[int]) -> dict[str, Any]:
        st: dict[str, Any] = self.impl.answer(seq, diff_from)
        return st

    def cancel(self) -> None:
        """Stop the answer in flight (the child only; an in-process answer runs to its end)."""
        if self.child:
            self.impl.cancel()

    def close(self) -> None:
        self.impl.close()


def open_job(job: Any, path: str, session_id: Optional[str]) -> _Backend:
    """The session's replay backend (in a worker): its child process, else an in-process context."""
    from ..store.childproc import NoChild
    from ..store.replay_child import ReplayClient, open_context
    try:
        client = ReplayClient(path, session_id, cancel=job)      # (its cancel kills a child still opening)
        if job.cancelled:                    # (another session meanwhile: nobody will use it)
            client.close()
        job.check()
        return _Backend(client, True)
    except NoChild:
        return _Backend(open_context(path, session_id, cancelled=job), False)


def fill_job(job: Any, backend: _Backend) -> bool:
    """The in-process context's background pass (the child runs its own)."""
    while not backend.impl.fill_some(job.check):
        job.check()
    return True


def status_job(job: Any, backend: _Backend) -> bool:
    return bool(backend.impl.ask("status"))


def answer_job(job: Any, backend: _Backend, seq: int, diff_from: Optional[int]) -> dict[str, Any]:
    job.check()
    job.on_cancel(backend.cancel)          # cancelling the job stops the answer in the child at once
    return backend.answer(seq, diff_from)


class ReplayModel(QObject):
    """The wanted position and the latest answer (see the module doc)."""

    ready = Signal()                   # the context is loaded (ticks, last seq known)
    answered = Signal(object)          # the state dict of the wanted position
    failed = Signal(str)

    def __init__(self, jobs: Jobs, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.ctx: Optional[_Backend] = None
        self.key: Optional[tuple[str, Optional[str]]] = None
        self.wanted: Optional[int] = None
        self.diff_from: Optional[int] = None
        self.busy = False
        self.loading = False
        self.filled = False                # the side index's background pass is done
        self.answer: Optional[dict[str, Any]] = None
        self.dropped = 0                   # answers that arrived for a position no longer wanted
        self.asked = 0                     # answers asked of the workers
        self._flight: Optional[tuple[int, Optional[int]]] = None    # the position being answered
        self._answer_job: Optional[Job] = None                       # ... and its job
        self.cancelled = 0                 # answers stopped in the child because a newer position came
        self._poll = QTimer(self)
        self._poll.setInterval(500)
        self._poll.timeout.connect(self._status)

    def open(self, path: Optional[str], session_id: Optional[str]) -> None:
        """The session to scrub (None: none); loads its context in a worker."""
        key = (path, session_id) if path else None
        if key == self.key:
            return
        self.reset()
        self.key = key
        if key is None:
            return
        self.loading = True
        self.jobs.submit(open_job, path, session_id, name="replay context", group="replay-context",
                         on_done=lambda ctx, k=key: self._opened(k, ctx), on_error=self._failed)

    def reset(self) -> None:
        self.jobs.cancel_group("replay-context")
        self.jobs.cancel_group("replay-fill")
        self.jobs.cancel_group("replay")
        self._answer_job = None
        self._poll.stop()
        if self.ctx is not None:
            self.ctx.close()
        self.ctx, self.key, self.wanted, self.answer = None, None, None, None
        self.busy = self.loading = self.filled = False

    def _opened(self, key: tuple, ctx: _Backend) -> None:
        if key != self.key:
            ctx.close()
            return
        self.ctx, self.loading, self.filled = ctx, False, ctx.filled
        self.ready.emit()
        self._next()
        if ctx.child:
            self._poll.start()
        else:
            self.jobs.submit(fill_job, ctx, name="replay side index", group="replay-fill",
                             on_done=lambda _r, c=ctx: self._set_filled(c), on_error=self._failed)

    def _status(self) -> None:
        """(the child's background pass) asked now and then, never while an answer is computed."""
        ctx = self.ctx
        if ctx is None or self.filled:
            self._poll.stop()
            return
        if ctx.impl.filled:
            self._set_filled(ctx)
        elif not self.busy and not self.jobs.group_busy("replay-status"):
            self.jobs.submit(status_job, ctx, name="replay status", group="replay-status",
                             on_done=lambda done, c=ctx: self._set_filled(c) if done else None,
                             on_error=lambda _m: None)

    def _set_filled(self, ctx: _Backend) -> None:
        if ctx is self.ctx:
            self.filled = True
            self._poll.stop()

    def _failed(self, msg: str) -> None:
        self.loading = self.busy = False
        if msg != "cancelled":
            self.failed.emit(msg)

    def request(self, seq: int, diff_from: Optional[int] = None) -> None:
        """Want the state at ``seq``: asked now, or as soon as the answer being computed arrives."""
        self.wanted, self.diff_from = seq, diff_from
        job = self._answer_job
        if self.busy and job is not None and not job.cancelled and self._flight != (seq, diff_from) \
                and self.ctx is not None and self.ctx.child:
            job.cancel()                 # the answer in flight is stale already: its job's cancel stops it
            self.cancelled += 1          # (the next is asked when it has ended: one answer at a time)
        self._next()

    def _next(self) -> None:
        if self.ctx is None or self.busy or self.wanted is None:
            return
        if self.answer is not None and self.answer["seq"] == self.wanted and \
                self.answer.get("diffFrom") == self.diff_from:
            return
        self.busy = True
        self.asked += 1
        seq, diff_from = self.wanted, self.diff_from
        self._flight = (seq, diff_from)
        self._answer_job = self.jobs.submit(answer_job, self.ctx, seq, diff_from, name="replay", group="replay",
                                            on_done=lambda st, s=seq, d=diff_from: self._done(s, d, st),
                                            on_error=self._error, on_end=self._stopped)

    def _stopped(self, job: Job) -> None:
        """A cancelled answer has ended (it delivers nothing): ask for the wanted position."""
        if job.cancelled and job is self._answer_job:
            self._answer_job = None
            self.busy = False
            self._next()

    def _done(self, seq: int, diff_from: Optional[int], st: dict[str, Any]) -> None:
        self.busy = False
        self._answer_job = None
        st["diffFrom"] = diff_from
        if st.get("filled") and self.ctx is not None:
            self._set_filled(self.ctx)
        if seq != self.wanted or diff_from != self.diff_from:      # stale: the slider moved on
            self.dropped += 1
            self._next()
            return
        self.answer = st
        self.answered.emit(st)

    def _error(self, msg: str) -> None:
        self.busy = False
        self._answer_job = None
        if msg != "cancelled":
            self.failed.emit(msg)
