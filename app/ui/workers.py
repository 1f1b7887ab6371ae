"""Background work for the UI: every file read runs here, never on the UI thread.

``Jobs.submit(fn, *args)`` runs ``fn(job, *args)`` on a QThreadPool and delivers the
result, error or progress back on the UI thread through Qt signals (queued
connections: the :class:`Job` object lives on the UI thread, emission happens on the
worker).  ``serial=True`` jobs share one single-thread pool per ``Jobs`` instance so
that e.g. history pages of one reader arrive in request order.

A job can be cancelled: its callbacks are then never called, and long functions that
poll ``job.check()`` (or report progress) stop early by raising :class:`Cancelled`.

Named groups replace generation counters and "is this result still wanted?" checks:
``submit(..., group="face")`` cancels the jobs already in group ``face`` before starting
(a new request supersedes the old one; its result is never delivered), and
``cancel_group("face")`` drops them all (closing a session).  ``exclusive=False`` only
tracks the job in the group (several may run; ``cancel_group`` still drops them).
``on_end(job)`` is called on the UI thread when the job has ended, cancelled or not (after
``on_done``/``on_error``): the one way to learn that a cancelled job's work has stopped.

Work that blocks where it cannot poll (a pipe, a follower's sleep) registers how to interrupt itself
with ``job.on_cancel(fn)``: ``cancel()`` calls it at once.  ``own_thread=True`` runs a job that lasts
as long as a session (the live follower) on a daemon thread of its own instead of a pool thread, so it
never holds one of the pool's few threads nor blocks the pool's teardown; ``job.wait(timeout)`` waits
for any job's function to end.  ``submit_child`` runs a worker process as a job (see there).

Errors: a job without ``on_error`` does not fail silently; its error goes to the crash
handler's reporter (:func:`set_error_sink`, installed by ``app.ui.crash``), with the job's
name.  Cancelled jobs report nothing.
"""
from __future__ import annotations

import threading
import time
import traceback
from typing import Any, Optional, Union
from collections.abc import Callable

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from ..log.jobctl import JOB_INTERVAL, Cancelled, Throttle
from ..store.childproc import ChildSpec, run_spec

__all__ = ["Cancelled", "Job", "Jobs"]      # Cancelled: the one of app.log.jobctl, re-exported

TRIM_AFTER_MS = 250          # the pool idle this long: malloc_trim (Jobs._idle_trim)


def _emit(signal, *args) -> None:
    """Deliver a job's end from its worker thread.  The window (and the job object with it) may be
    gone by then - closed while a trace ran: Qt then raises "Signal source has been deleted"; with
    no receiver left there is nothing to deliver, and nothing to print on the way out."""
    try:
        signal.emit(*args)
    except RuntimeError:
        pass


class Job(QObject):
    done = Signal(object)
    failed = Signal(str)
    progress = Signal(int, int)
    partial = Signal(object)          # streamed intermediate results

    def __init__(self, name: str, parent: Optional[QObject] = None):
        super().__init__(parent)
        self.name = name
        self.cancelled = False
        self.finished = False
        self.throttle = Throttle(JOB_INTERVAL)     # the one progress throttle (app.log.jobctl)
        self.started_at = time.perf_counter()
        self.ended_at: Optional[float] = None     # when the worker left the job's function (perf_counter)
        self._ended = threading.Event()
        self._on_cancel: list[Callable[[], object]] = []

    # ---- worker side (a job is an app.log.jobctl.CancelToken: ``cancelled`` and ``check()``)
    def check(self) -> None:
        if self.cancelled:
            raise Cancelled(self.name)

    def report(self, done: int, total: int) -> bool:
        """Progress from the worker (throttled by :attr:`throttle`); also a cancellation point.
        Whether it went out (details of the same step may go with it on :attr:`partial`)."""
        self.check()
        if not self.throttle.due(done, total):
            return False
        self._send(self.progress, int(min(done, 2**31 - 1)), int(min(total, 2**31 - 1)))
        return True

    def stream(self, obj: Any) -> None:
        self.check()
        self._send(self.partial, obj)

    def _send(self, signal, *args) -> None:
        try:
            signal.emit(*args)
        except RuntimeError:          # the job object is gone (window closed): stop the work
            self.cancelled = True
            raise Cancelled(self.name) from None

    def on_cancel(self, fn: Callable[[], object]) -> None:
        """Call ``fn`` (on the cancelling thread) when the job is cancelled; at once if it already is."""
        self._on_cancel.append(fn)
        if self.cancelled:
            fn()

    def _end(self) -> None:
        self.ended_at = time.perf_counter()
        self._ended.set()

    # ---- UI side
    def cancel(self) -> None:
        self.cancelled = True
        for fn in list(self._on_cancel):
            fn()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait until the job's function has ended (True), at most ``timeout`` seconds."""
        return self._ended.wait(timeout)


class Jobs(QObject):
    """Submits jobs; keeps them alive until their result has been delivered."""

    def __init__(self, parent: Optional[QObject] = None, max_threads: int = 4):
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max_threads)
        self.serial_pool = QThreadPool(self)
        self.serial_pool.setMaxThreadCount(1)
        self._live: set[Job] = set()
        self._groups: dict[str, list[Job]] = {}
        self._own: set[Job] = set()            # own_thread jobs (waited for by shutdown)
        self._trim = QTimer(self)
        self._trim.setSingleShot(True)
        self._trim.setInterval(TRIM_AFTER_MS)
        self._trim.timeout.connect(self._idle_trim)

    def _idle_trim(self) -> None:
        """The pool's jobs have all ended (and stayed so for ``TRIM_AFTER_MS``): their freed heap goes
        back to the system (:func:`app.ui.memory.trim`).  A worker's peak (a page decoded, a cache
        file read, a result unpickled) leaves free pages in its malloc arena that no later step of
        the window gives back (issue 36: 14.7 MB of the workers' 15.6 MB arena free after the
        outline of a 4.5 GB log)."""
        if self._live <= self._own:
            from .memory import trim
            trim()

    def submit(self, fn: Callable, *args, on_done: Optional[Callable] = None,
               on_error: Optional[Callable] = None, on_progress: Optional[Callable] = None,
               on_partial: Optional[Callable] = None, serial: bool = False, name: str = "",
               group: Optional[str] = None, exclusive: bool = True, own_thread: bool = False,
               on_end: Optional[Callable[[Job], object]] = None) -> Job:
        job = Job(name or getattr(fn, "__name__", "job"))
        self._live.add(job)
        if group is not None:
            if exclusive:
                self.cancel_group(group)
            self._groups.setdefault(group, []).append(job)

        def settle(job=job):
            job.finished = True
            self._live.discard(job)
            self._own.discard(job)
            if not own_thread and self._live <= self._own:
                try:
                    self._trim.start()       # (the pool's work all done: its freed heap back, see _idle_trim)
                except RuntimeError:         # (the window that owned the pool is gone, and the timer with it: a job
                    pass                     # may end after it)
            if group is not None:
                members = self._groups.get(group)
                if members is not None and job in members:
                    members.remove(job)
                    if not members:
                        del self._groups[group]

        def deliver(result, job=job):
            settle()
            if not job.cancelled and on_done is not None:
                _to_ui(on_done, result)
            if on_end is not None:
                _to_ui(on_end, job)

        def deliver_error(msg, job=job):
            settle()
            if not job.cancelled:
                if on_error is not None:
                    _to_ui(on_error, msg)
                elif _error_sink is not None:
                    _error_sink(job.name, msg)
            if on_end is not None:
                _to_ui(on_end, job)

        job.done.connect(deliver)
        job.failed.connect(deliver_error)
        if on_progress is not None:
            job.progress.connect(lambda d, t, job=job: None if job.cancelled else on_progress(d, t))
        if on_partial is not None:
            job.partial.connect(lambda o, job=job: None if job.cancelled else on_partial(o))

        def body(job=job):
            try:
                if job.cancelled:
                    raise Cancelled(job.name)
                result = fn(job, *args)
            except Cancelled:
                job._end()
                _emit(job.failed, "cancelled")
            except Exception as e:  # delivered as one line; details for debugging
                msg = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
                if not msg.strip():
                    msg = traceback.format_exc(limit=3)
                job._end()
                _emit(job.failed, msg)
            else:
                job._end()
                _emit(job.done, result)

        if own_thread:
            self._own.add(job)
            threading.Thread(target=body, name=f"job:{job.name}", daemon=True).start()
        else:
            (self.serial_pool if serial else self.pool).start(body)
        return job

    def submit_child(self, spec: Union[str, ChildSpec], *args: str, request: object = None,
                     background: bool = False, **submit: Any) -> Job:
        """Run a worker of :data:`app.store.childproc.WORKERS` as a job: ``spec`` (a
        :class:`~app.store.childproc.ChildSpec`, or a kind with ``args``, ``request`` and ``background``)
        with the same groups, cancel and callbacks as :meth:`submit`.  The child's ``("progress", done,
        total)`` messages go to the job's one progress channel (``on_progress``, throttled), its other
        messages to ``on_partial`` (``("beat",)`` heartbeats only serve cancellation), its ``done``
        result to ``on_done``.  Cancelling the job kills the child at once; the child never
        outlives the job.  When no child can start, the spec's in-process fallback runs in the job."""
        if isinstance(spec, str):
            spec = ChildSpec(spec, tuple(args), request=request, background=background)
        child = spec

        def message(job: Job, msg: tuple[object, ...]) -> None:
            if msg[0] == "progress" and len(msg) >= 3:
                job.report(int(msg[1]), int(msg[2]))       # type: ignore[call-overload]
            elif msg[0] == "beat":
                job.check()
            else:
                job.stream(msg)

        def child_job(job: Job) -> object:
            try:
                return run_spec(child, lambda msg: message(job, msg), job)     # (its cancel kills the child)
            except InterruptedError:
                raise Cancelled(job.name) from None
        submit.setdefault("name", spec.what or spec.kind)
        return self.submit(child_job, **submit)

    @property
    def busy(self) -> int:
        return len(self._live)

    def cancel_group(self, group: str) -> int:
        """Cancel the unfinished jobs of ``group`` (their callbacks never run); how many."""
        members = self._groups.pop(group, [])
        for j in members:
            j.cancel()
        return len(members)

    def group_busy(self, group: str) -> int:
        return len(self._groups.get(group, ()))

    def cancel_all(self) -> None:
        for j in list(self._live):
            j.cancel()

    def shutdown(self, timeout_ms: int = 5000) -> bool:
        """Cancel everything and wait for the threads (window close, test teardown)."""
        self.cancel_all()
        a = self.pool.waitForDone(timeout_ms)
        b = self.serial_pool.waitForDone(timeout_ms)
        own, self._own = self._own, set()
        c = all(j.wait(timeout_ms / 1000) for j in own)
        return a and b and c


_error_sink: Optional[Callable[[str, str], None]] = None


def _to_ui(fn: Callable[..., object], *args: object) -> None:
    """A job's callback on the UI thread; an answer that arrives as its window closes (the callback's Qt
    objects already deleted) is dropped, as a cancelled job's is; any other error goes on."""
    try:
        fn(*args)
    except RuntimeError as e:
        if "already deleted" not in str(e):
            raise


def set_error_sink(sink: Optional[Callable[[str, str], None]]) -> None:
    """Where errors of jobs without ``on_error`` go: ``sink(job_name, message)`` on the UI
    thread (the crash handler installs its reporter; None: they are dropped)."""
    global _error_sink
    _error_sink = sink


def freeze_heap() -> None:
    """Move every live object out of the cyclic GC's reach (``gc.freeze``).

    Loaded pages hold hundreds of thousands of long-lived objects; a full (generation 2)
    collection then walks them all - over 100 ms measured here, on whichever thread
    allocates, with the GIL held - and frees nothing.  Those objects are acyclic and are
    still freed by reference counting; :func:`thaw_heap` undoes this when a session closes.
    """
    import gc
    gc.freeze()


def thaw_heap() -> None:
    import gc
    gc.unfreeze()

