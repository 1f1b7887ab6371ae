"""Qt glue for live sessions: :class:`LiveFollower` turns a growing log into view-model signals.

All file I/O (the :class:`~app.store.watch.Follower` and every tail-page read) runs on one
background thread with its **own** reader of the same log, never on the UI thread and never
on the caller's reader; the :class:`~app.log.fold.stitch.Stitcher` runs there too.  Results reach
the UI thread through queued signals:

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

import threading
import time
import traceback
from typing import Optional

from PySide6.QtCore import QObject, Qt, Signal, Slot

from ..log.index.reader import DEFAULT_MAX_MESSAGES, LogReader, Page
from ..log.source.sources import SourceChanged
from ..log.fold.stitch import Stitcher
from ..store.watch import CRASH_AFTER_S, IDLE_AFTER_S, Follower


class _Bridge(QObject):
    posted = Signal(int, str, object)        # generation, kind, payload


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
        self._bridge = _Bridge()
        self._bridge.posted.connect(self._on_posted, Qt.ConnectionType.QueuedConnection)
        self._gen = 0
        self._thread: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self._follower: Optional[Follower] = None
        self.state = "stopped"
        self.last_seq: Optional[int] = page.last_seq if page is not None else None
        self.stats = {"appended": 0, "reinstalls": 0, "refetches": 0, "batches": 0}
        self.arrivals: Optional[list] = None      # set to [] to record (monotonic time, seqs) per batch
        self.facts: Optional[dict] = None         # the newest Follower.facts()

    # ------------------------------------------------------------------ control (UI thread)
    def start(self) -> None:
        if self._thread is not None:
            return
        self._gen += 1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(self._gen, self._stop), daemon=True,
                                        name=f"live:{self.path}")
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        t, self._thread = self._thread, None
        if t is None:
            return
        self._stop.set()
        f = self._follower
        if f is not None:
            f.wake()
        t.join(timeout)
        self._gen += 1                          # drop anything still queued from that thread
        self._set_state("stopped")

    @property
    def running(self) -> bool:
        return self._thread is not None

    def _set_state(self, s: str) -> None:
        if s != self.state:
            self.state = s
            self.state_changed.emit(s)

    @Slot(int, str, object)
    def _on_posted(self, gen: int, kind: str, payload) -> None:
        if gen != self._gen:
            return
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

    # ------------------------------------------------------------------ worker thread
    def _run(self, gen: int, stop: threading.Event) -> None:
        bridge = self._bridge

        def post(kind, payload):
            try:
                bridge.posted.emit(gen, kind, payload)
            except RuntimeError:            # the Qt side was destroyed without stop(): end quietly
                stop.set()
        f = Follower(self.path, self.session_id, from_start=False, poll_interval=self.poll_interval,
                     use_inotify=self.use_inotify, idle_after=self.idle_after, crash_after=self.crash_after)
        self._follower = f
        reader: Optional[LogReader] = None
        try:
            state = None

            def set_state(s):
                nonlocal state
                if s != state:
                    state = s
                    post("state", s)

            set_state("waiting")
            while not stop.is_set() and not f.open():
                f.wait(self.tick)
            if stop.is_set():
                return
            stitcher = Stitcher()
            if self._initial is not None:
                stitcher.install(self._initial.events)       # the view already shows it
            sub_last = f.subscribed_last if f.subscribed_last is not None else -1   # (set once open)
            stitcher.subscribed(sub_last)
            resets = 0
            released = False
            last_facts: Optional[dict] = None

            def load():
                nonlocal reader
                set_state("loading")
                while True:
                    if reader is None:
                        reader = self._open_reader()
                    try:
                        reader.source.refresh()
                        page = reader.tail_page(self.max_messages)
                    except SourceChanged:
                        reader.close()
                        reader = None
                        continue
                    self.stats["refetches"] += 1
                    st = stitcher.install(page.events)
                    if st.reinstall is not None:
                        post("page", page)
                    if st.appended:
                        post("rows", st.appended)
                    if not st.refetch or stop.is_set():
                        return

            if self._initial is None or stitcher.loading or sub_last > stitcher.tail_seq:
                stitcher.begin_load()
                load()
            while not stop.is_set():
                evs = f.poll()
                if f.resets != resets:
                    resets = f.resets
                    set_state("changed")
                    stitcher.reset()
                    stitcher.begin_load()
                    if reader is not None:
                        reader.close()
                        reader = None
                    load()
                if evs:
                    if f.last_batch is not None:
                        post("batch", dict(f.last_batch))
                    st = stitcher.offer(evs)
                    if st.appended:
                        post("rows", st.appended)
                    if st.refetch:
                        load()
                s = f.state()
                if s == "crashed" and not released:
                    released = True
                    tail = f.finish()
                    if tail:
                        st = stitcher.offer(tail)
                        if st.appended:
                            post("rows", st.appended)
                elif s == "live":
                    released = False
                facts = dict(f.facts())
                if facts != last_facts:
                    last_facts = facts
                    post("facts", facts)
                set_state(s)
                if not evs:
                    f.wait(min(self.tick, self.poll_interval * 4))
        except Exception as e:  # reported, never raised into Qt
            post("state", f"error: {type(e).__name__}: {e}")
            traceback.print_exc()
        finally:
            self._follower = None
            f.close()
            if reader is not None:
                reader.close()

    def _open_reader(self) -> LogReader:
        from ..store.faces import open_reader
        return open_reader(self.path, self.session_id)
