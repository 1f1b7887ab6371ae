"""Qt glue for live sessions: :class:`LiveFollower` turns a growing log into view-model signals.

All file I/O (the :class:`~app.store.watch.Follower` and every tail-page read) runs in one
background job (``app.ui.workers``: group ``live`` of the follower's own :class:`Jobs`, on a thread of
its own as it lasts as long as the session) with its **own** reader of the same log, never on the UI
thread and never on the caller's reader; the :class:`~app.log.fold.stitch.Stitcher` runs there too.
Stopping is cancelling the job (its token; the cancel wakes the follower's sleep).  Results reach the
UI thread as the job's partial results (queued; none of a cancelled job is delivered):

* ``tail_reinstalled(Page)``: replace the view with this tail page (first install, a refetch
  that does not touch the current view, or the log was replaced/repaired).  The page was
  read by the follower's reader; its rows are plain data and its ``token`` is a physical
  position valid for any reader of the same file: before ``reader.page_before(page)`` call
  ``reader.source.refresh()`` so the caller's snapshot covers it.
* ``rows_appended(list[Event])``: append these events at the end of the view, in order; the
  first one is always exactly ``last shown seq + 1`` (no duplicate, no gap).
* ``state_changed(str)``: ``waiting`` (file not there yet) · ``loading`` (tail page) · ``live``
  (growing) · ``idle`` (quiet with an open turn or torn tail) · ``complete`` (quiet, last turn
  closed) · ``crashed`` (open tail quiet for ``crash_after`` s: writer presumed dead; records a
  cold read recovers from a torn zstd frame are then appended) · ``changed`` (the file was
  replaced or shrank; a reinstall follows) · ``error: <message>`` · ``stopped``.

Typical wiring (history model ``model`` showing ``reader``'s tail page ``page``)::

    live = LiveFollower(reader, page=page, parent=model)   # page=None: it installs its own
    live.tail_reinstalled.connect(model.reset_to_page)
    live.rows_appended.connect(model.append_events)
    live.state_changed.connect(status_badge.set_state)
    live.start()            # ... live.stop() when the session closes (also on destroy)

With ``page`` given (the page the view already shows) nothing is reinstalled at start: the
follower subscribes, and rows written since that page was read arrive as ``rows_appended``
(spec §8: ``subscribed.lastSeq > tail`` -> refetch once, overlapping pages only extend).
"""
from __future__ import annotations

import time
import traceback
from typing import Any, Optional

from PySide6.QtCore import QObject, Signal

from ..log.index.reader import DEFAULT_MAX_MESSAGES, LogReader, Page
from ..log.source.sources import SourceChanged
from ..log.fold.stitch import Stitcher
from ..store.watch import CRASH_AFTER_S, IDLE_AFTER_S, Follower
from .workers import Cancelled, Job, Jobs


class LiveFollower(QObject):
    rows_appended = Signal(list)
    tail_reinstalled = Signal(object)
    state_changed = Signal(str)
    batch_noted = Signal(object)             # Follower.last_batch after a poll that brought rows
    facts_noted = Signal(object)             # Follower.facts(): what the state goes by (lock, growth, waits)

    def __init__(self, reader: LogReader, parent: Optional[QObject] = None, *, page: Optional[Page] = None,
                 session_id: Optional[str] = None, max_messages: int = DEFAULT_MAX_MESSAGES,
                 poll_interval: float = 0.1, idle_after: float = IDLE_AFTER_S, crash_after: float = CRASH_AFTER_S,
                 use_inotify: bool = True, tick: float = 0.25):
        super().__init__(parent)
        self.path = reader.path
        src = reader.source
        self.session_id = session_id or (getattr(src, "session_id", None) if src.kind == "sqlite" else None)
        self.max_messages = max_messages
        self.poll_interval = poll_interval
        self.idle_after = idle_after
        self.crash_after = crash_after
        self.use_inotify = use_inotify
        self.tick = tick
        self._initial = page
        self._jobs = Jobs(self)
        self.destroyed.connect(self._jobs.cancel_all)     # gone without stop(): the loop ends quietly
        self._job: Optional[Job] = None
        self.state = "stopped"
        self.last_seq: Optional[int] = page.last_seq if page is not None else None
        self.stats = {"appended": 0, "reinstalls": 0, "refetches": 0, "batches": 0}
        self.arrivals: Optional[list] = None      # set to [] to record (monotonic time, seqs) per batch
        self.facts: Optional[dict] = None         # the newest Follower.facts()

    # ------------------------------------------------------------------ control (UI thread)
    def start(self) -> None:
        if self._job is not None:
            return
        self._job = self._jobs.submit(self._run, name=f"live:{self.path}", group="live", own_thread=True,
                                      on_partial=lambda kp: self._on_posted(*kp),
                                      on_error=lambda m: self._set_state(f"error: {m}"))

    def stop(self, timeout: float = 5.0) -> None:
        job, self._job = self._job, None
        if job is None:
            return
        job.cancel()                            # (wakes the follower; nothing it posted is delivered now)
        job.wait(timeout)
        self._set_state("stopped")

    @property
    def running(self) -> bool:
        return self._job is not None

    def _set_state(self, s: str) -> None:
        if s != self.state:
            self.state = s
            self.state_changed.emit(s)

    def _on_posted(self, kind: str, payload: Any) -> None:
        if kind == "rows":
            if self.arrivals is not None:
                self.arrivals.append((time.monotonic(), [e.seq for e in payload]))
            self.last_seq = payload[-1].seq
            self.stats["appended"] += len(payload)
            self.stats["batches"] += 1
            self.rows_appended.emit(payload)
        elif kind == "page":
            self.last_seq = payload.last_seq
            self.stats["reinstalls"] += 1
            self.tail_reinstalled.emit(payload)
        elif kind == "state":
            self._set_state(payload)
        elif kind == "batch":
            self.batch_noted.emit(payload)
        elif kind == "facts":
            self.facts = payload
            self.facts_noted.emit(payload)

    # ------------------------------------------------------------------ the job (its own thread)
    def _run(self, job: Job) -> None:
        f = Follower(self.path, self.session_id, from_start=False, poll_interval=self.poll_interval,
                     use_inotify=self.use_inotify, idle_after=self.idle_after, crash_after=self.crash_after)
        job.on_cancel(f.wake)
        loop = _Loop(self, job, f)
        try:
            loop.run()
        except Cancelled:
            raise
        except Exception as e:  # reported, never raised into Qt
            loop.post("state", f"error: {type(e).__name__}: {e}")
            traceback.print_exc()
        finally:
            f.close()
            if loop.reader is not None:
                loop.reader.close()

    def _open_reader(self) -> LogReader:
        from ..store.faces import open_reader
        return open_reader(self.path, self.session_id)


class _Loop:
    """The live job's state: its follower, its own reader and the stitcher (see the module doc)."""

    def __init__(self, live: LiveFollower, job: Job, f: Follower) -> None:
        self.live, self.job, self.f = live, job, f
        self.reader: Optional[LogReader] = None
        self.state: Optional[str] = None
        self.stitcher = Stitcher()

    def post(self, kind: str, payload: Any) -> None:
        self.job.stream((kind, payload))      # (raises Cancelled once stopped: the loop ends)

    def set_state(self, s: str) -> None:
        if s != self.state:
            self.state = s
            self.post("state", s)

    def load(self) -> None:
        """Tail pages until the stitcher needs no refetch."""
        self.set_state("loading")
        while True:
            if self.reader is None:
                self.reader = self.live._open_reader()
            try:
                self.reader.source.refresh()
                page = self.reader.tail_page(self.live.max_messages)
            except SourceChanged:
                self.reader.close()
                self.reader = None
                continue
            self.live.stats["refetches"] += 1
            st = self.stitcher.install(page.events)
            if st.reinstall is not None:
                self.post("page", page)
            if st.appended:
                self.post("rows", st.appended)
            if not st.refetch:
                return
            self.job.check()

    def offer(self, evs: list) -> bool:
        """Rows to append; whether a refetch is due."""
        st = self.stitcher.offer(evs)
        if st.appended:
            self.post("rows", st.appended)
        return bool(st.refetch)

    def run(self) -> None:
        f, job, live = self.f, self.job, self.live
        self.set_state("waiting")
        while not f.open():
            job.check()
            f.wait(live.tick)
        job.check()
        initial = live._initial
        if initial is not None:
            self.stitcher.install(initial.events)       # the view already shows it
        sub_last = f.subscribed_last if f.subscribed_last is not None else -1   # (set once open)
        self.stitcher.subscribed(sub_last)
        if initial is None or self.stitcher.loading or sub_last > self.stitcher.tail_seq:
            self.stitcher.begin_load()
            self.load()
        resets, released, last_facts = 0, False, None
        while True:
            job.check()
            evs = f.poll()
            if f.resets != resets:
                resets = f.resets
                self.set_state("changed")
                self.stitcher.reset()
                self.stitcher.begin_load()
                if self.reader is not None:
                    self.reader.close()
                    self.reader = None
                self.load()
            if evs:
                if f.last_batch is not None:
                    self.post("batch", dict(f.last_batch))
                if self.offer(evs):
                    self.load()
            s = f.state()
            if s == "crashed" and not released:
                released = True
                tail = f.finish()
                if tail:
                    self.offer(tail)
            elif s == "live":
                released = False
            facts = dict(f.facts())
            if facts != last_facts:
                last_facts = facts
                self.post("facts", facts)
            self.set_state(s)
            if not evs:
                f.wait(min(live.tick, live.poll_interval * 4))
