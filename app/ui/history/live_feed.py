"""The live feed of the history model: rows written after the tail page.

A :class:`~app.ui.live.LiveFollower` (its own thread and reader) stitches them (no
duplicate, no gap); they are queued here and grow the tail page in the model's ``live`` job
group (``pages.live_job``), one batch at a time; the grown page goes to
``RowWindow.apply_live``, whose change records the model applies.  A log that was replaced
or shrank (repair, restore) is opened again from its tail.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from PySide6.QtCore import QObject

from ..workers import freeze_heap
from .pages import LoadedPage, live_job

if TYPE_CHECKING:                     # (imported when the first live tail is followed)
    from ..live import LiveFollower


class LiveFeed(QObject):
    def __init__(self, model, options: Optional[dict] = None):
        super().__init__(model)
        self.model = model
        self.options = dict(options or {})
        self.follower: Optional[LiveFollower] = None
        self.reset()

    def reset(self) -> None:
        self.state: Optional[str] = None     # waiting | loading | live | idle | complete | crashed | changed | error: …
        self.queue: list = []
        self.job = None
        self.stats = {"batches": 0, "events": 0, "splits": 0, "resets": 0}
        self.last_batch: Optional[dict] = None   # Follower.last_batch of the newest poll (events, bytes, at)
        self.facts: Optional[dict] = None        # Follower.facts(): the lock's verdict, growth seen, the waits

    def start(self, page) -> None:
        """Follow the open log from its installed tail page."""
        m = self.model
        if m.reader is None or page.tail_state is None:
            return
        from ..live import LiveFollower
        opts = {"poll_interval": 0.25, **self.options}
        live = LiveFollower(m.reader, parent=self, page=page, session_id=m.session_id,
                            max_messages=m.page_size, **opts)
        live.rows_appended.connect(self._on_rows)
        live.tail_reinstalled.connect(self._on_reinstall)
        live.state_changed.connect(self._on_state)
        live.batch_noted.connect(self._on_batch)
        live.facts_noted.connect(self._on_facts)
        self.follower = live
        live.start()

    def stop(self) -> None:
        live, self.follower = self.follower, None
        if live is not None:
            live.stop(timeout=0.2)      # not joined for long on the UI thread: a late row is dropped
            live.deleteLater()

    def _current(self) -> bool:
        return self.follower is not None and self.sender() is self.follower

    def _on_state(self, state: str) -> None:
        if not self._current() or state == "stopped":
            return
        self.state = state
        if state == "live" and self.last_batch is not None:
            self.model.set_live_face(True)          # growth seen: the open turn in flight, no closure
        elif state in ("crashed", "complete"):
            self.model.set_live_face(False)         # the writer is gone: the crash closure
        self.model.liveStateChanged.emit(state)
        self.model.statsChanged.emit()

    def _on_batch(self, batch) -> None:
        if self._current() and isinstance(batch, dict):
            self.last_batch = dict(batch)
            if self.state in ("live", "idle", "waiting", "loading", None):
                self.model.set_live_face(True)      # the writer is appending: the live face
            self.model.statsChanged.emit()

    def _on_facts(self, facts) -> None:
        if self._current() and isinstance(facts, dict):
            self.facts = dict(facts)
            self.model.statsChanged.emit()

    def _on_reinstall(self, page) -> None:
        """The log was replaced or shrank (repair, restore): read it again from its tail."""
        m = self.model
        if not self._current() or m.path is None:
            return
        self.stats["resets"] += 1
        m.open(m.path, m.session_id)

    def _on_rows(self, events: list) -> None:
        if not self._current():
            return
        self.queue.extend(events)
        self.stats["events"] += len(events)
        self._pump()

    def _pump(self) -> None:
        m = self.model
        if self.job is not None or not self.queue or not m.pages:
            return
        lp = m.window.newest_page          # after a jump: the pages kept aside for the log's end
        if not lp.page.tail or lp.page.tail_state is None:
            return
        rows, self.queue = self.queue, []
        prev = m.window.tail_pages[-2] if len(m.window.tail_pages) > 1 else (
            m.pages[-2] if lp is m.pages[-1] and len(m.pages) > 1 else None)
        prev_calls = [e for e in prev.events.values() if e.type == "tool/call"] if prev is not None else []
        self.job = m.jobs.submit(
            live_job, lp, rows, m.physical, m.show_attempts, prev_calls,
            serial=True, name="live", group=m.job_group("live"),
            on_done=lambda new, lp=lp: self._done(lp, new),
            on_error=self._failed)

    def _failed(self, msg: str) -> None:
        self.job = None
        self.model.pageFailed.emit(f"live rows: {msg}")

    def _done(self, old: LoadedPage, new: list) -> None:
        self.job = None
        m = self.model
        if m.window.apply_live_detached(old, new):   # the window is elsewhere (a jump)
            self.stats["batches"] += 1
            m.statsChanged.emit()
            self._pump()
            return
        if not m.pages or m.pages[-1] is not old:
            return                                   # reopened meanwhile
        m.liveAboutToAppend.emit()
        added, changes = m.window.apply_live(old, new)
        m.apply_changes(changes)
        self.stats["batches"] += 1
        if len(new) > 1:
            self.stats["splits"] += 1
        freeze_heap()
        m.liveAppended.emit(added)
        m.statsChanged.emit()
        self._pump()
