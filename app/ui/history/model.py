"""The history view model: a thin QAbstractListModel over a :class:`RowWindow`.

Files -> core (LogReader pages) -> :class:`~app.ui.history.window.RowWindow` (rows) -> this
model -> the list view + delegate.  No widgets are imported here.

This class owns what needs Qt: the page jobs (``app.ui.workers``), the live follower, the
signals, and the Qt model protocol.  Every row change is decided by the window, which
returns change records; :meth:`HistoryModel.apply_changes` turns them into
``beginInsertRows``/``endInsertRows`` (and remove/reset/dataChanged) around its own copy of
the exposed rows, so views never see the rows change outside a begin/end pair.

* ``open(path)`` reads the tail page in a worker and installs it (newest row last).
* Older pages come in through ``canFetchMore``/``fetchMore``: Qt's own automatic
  fetching is bottom-based, so the model only answers ``canFetchMore`` while the view
  asked for older rows (``request_older()``: the user scrolled to the top, a link or a
  search needs an older seq).  Prepended rows arrive through ``beginInsertRows(0, k)``
  so the view can keep its scroll anchor.
* The sparse seq index builds in a worker on its own reader (progress signals), so
  ``event_at`` for a row that is not loaded does not scan on the UI thread.
* A face switch that must build rows for many events runs in the ``face`` job group: a
  newer switch cancels the older one.
"""
from __future__ import annotations

import threading
import time
from typing import Optional
from collections.abc import Callable

from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt, QTimer, Signal

from ..plaintext import clean_line, tooltip
from ..workers import Jobs, freeze_heap, thaw_heap
from .live_feed import LiveFeed
from .match_pass import MatchPass
from .jumps import PageJumps
from .model_find import MATCH_ROLE, FindModel
from .model_truth import TruthModel
from .pages import LoadedPage, older_job, open_split_job
from .seq_index import SeqIndex
from .shed import shed_newer
from .rows import Row
from .row_kind import RowKind
from . import window as _window
from .window import FIRST_ROWS, PAINT_ROWS, Changed, Inserted, Removed, Reset, RowWindow

ROW_ROLE = Qt.ItemDataRole.UserRole + 1
KIND_ROLE = Qt.ItemDataRole.UserRole + 2
SEQ_ROLE = Qt.ItemDataRole.UserRole + 3

DEFAULT_PAGE_SIZE = 50
FACE_SYNC_EVENTS = 20_000  # a face toggle building rows for more loaded events runs in a worker
EXPOSE_BUDGET_S = 0.002    # documents built per loop turn for the older rows slid in (the view's hook)


class HistoryModel(TruthModel, FindModel, QAbstractListModel):
    opened = Signal()                    # reader ready and tail page installed
    openFailed = Signal(str)
    tailInstalled = Signal()
    olderInstalled = Signal(int)         # rows prepended
    newerInstalled = Signal(int)         # rows appended (window slid down)
    loadingChanged = Signal(bool)
    pageFailed = Signal(str)
    indexProgress = Signal(int, int)
    indexJob = Signal(object)            # the seq index build's Job (the window's progress pane follows it)
    indexReady = Signal()
    faceChanged = Signal()
    statsChanged = Signal()
    findChanged = Signal()
    eventFetched = Signal(int, object)   # seq, Event|None (event_at for a row not loaded)
    liveStateChanged = Signal(str)       # waiting | loading | live | idle | complete | crashed | changed | error: …
    liveAboutToAppend = Signal()         # live rows are about to change the newest rows
    liveAppended = Signal(int)           # live rows applied (rows added to the loaded rows)
    jumped = Signal(int)                 # a page read around this seq was installed (jumps.jump_to)
    surfaceReady = Signal()              # every loaded row has its surface status (the index is built)
    prependAhead = Signal()              # the change batch being applied prepends rows after other changes
    rowsLeaving = Signal(int, int)       # (first, count) exposed rows about to be trimmed (they stay loaded)
    changesApplied = Signal()            # a batch of row changes is applied (the rows equal the window's again)

    def __init__(self, jobs: Optional[Jobs] = None, page_size: int = DEFAULT_PAGE_SIZE, parent=None,
                 follow_live: bool = True, live_options: Optional[dict] = None):
        super().__init__(parent)
        self.jobs = jobs or Jobs(self)
        self.page_size = max(1, int(page_size))
        self.window = RowWindow()
        self.match_pass = MatchPass(self)        # the find bar's match check, in slices
        self.follow_live = follow_live           # follow the open log as it grows (LiveFollower)
        self.feed = LiveFeed(self, live_options)
        self.indexer = SeqIndex(self)
        self.jumps = PageJumps(self)
        self._want_face: Optional[tuple] = None
        self._painted = threading.Event()        # the open job's tail page is painted
        # set by the view: (rows, budget s) -> how many (nearest first) it made ready to show (documents)
        self.prepare_rows: Optional[Callable[[list, float], int]] = None
        # the view: True while a row is parked (selected, scrolled out): its page is not dropped
        self.keeps_rows: Optional[Callable[[], list]] = None      # the parked rows (their pages stay)
        self.after_paint: Callable[[Callable], None] = lambda fn: QTimer.singleShot(0, self, fn)   # the view's: once painted
        self._reset_state()

    def _reset_state(self):
        self.reader = None
        self.path: Optional[str] = None
        self.session_id: Optional[str] = None
        self.window.clear()
        self.rows: list[Row] = []                # exposed rows, kept equal to window.rows by apply_changes
        self.loading = False
        self._older_wanted = False
        self._expose_pending = False
        self.indexer.reset()
        self.open_error: Optional[str] = None
        self.opened_at = 0.0
        self.tail_elapsed = 0.0
        self.feed.reset()

    # ------------------------------------------------------------------ window state
    physical = property(lambda self: self.window.physical)
    show_attempts = property(lambda self: self.window.show_attempts)
    pages = property(lambda self: self.window.pages)
    find_term = property(lambda self: self.window.find_term)
    matches = property(lambda self: self.window.matches)
    current_match_row = property(lambda self: self.window.current_match_row)
    has_more = property(lambda self: self.window.has_more)
    hidden_rows = property(lambda self: self.window.hidden)
    newer_hidden = property(lambda self: self.window.bottom or int(self.window.has_newer))
    base_seq = property(lambda self: self.window.base_seq)
    trackers = property(lambda self: self.window.trackers)
    tail_painted = property(lambda self: self._painted.is_set())   # the open session's first rows are painted
    # the window's internals under their former names (tests and benchmarks read them)
    _all_rows = property(lambda self: self.window.all_rows)
    _hidden = property(lambda self: self.window.hidden)
    _bottom = property(lambda self: self.window.bottom)
    _events = property(lambda self: self.window.events)

    def apply_changes(self, changes: list) -> None:
        """Apply the window's change records to the exposed rows, each inside its begin/end."""
        root = QModelIndex()
        if len(changes) > 1 and isinstance(changes[0], Removed) and any(
                isinstance(c, Inserted) and c.at == 0 for c in changes):
            # trimmed, then prepended: the view takes its anchor now, its layout current (not twice)
            self.prependAhead.emit()
        for c in changes:
            if isinstance(c, Reset):
                self.beginResetModel()
                self.rows = list(self.window.rows)
                self.endResetModel()
            elif isinstance(c, Inserted):
                self.beginInsertRows(root, c.at, c.at + len(c.rows) - 1)
                self.rows[c.at:c.at] = c.rows
                self.endInsertRows()
            elif isinstance(c, Removed):
                if c.trim:
                    self.rowsLeaving.emit(c.at, c.count)     # (before Qt's selection model moves the current row)
                self.beginRemoveRows(root, c.at, c.at + c.count - 1)
                del self.rows[c.at:c.at + c.count]
                self.endRemoveRows()
            elif isinstance(c, Changed):
                self.rows[c.at:c.at + len(c.rows)] = c.rows
                self.dataChanged.emit(self.index(c.at, 0), self.index(c.at + len(c.rows) - 1, 0))
        if changes:
            self.changesApplied.emit()

    # ------------------------------------------------------------------ Qt model API
    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not (0 <= index.row() < len(self.rows)):
            return None
        row = self.rows[index.row()]
        if role == ROW_ROLE:
            return row
        if role == Qt.ItemDataRole.DisplayRole:
            c = row.content()
            return clean_line(f"{c.badge} {c.title}")
        if role == KIND_ROLE:
            return row.kind
        if role == SEQ_ROLE:
            return row.seq
        if role == MATCH_ROLE:
            return bool(self.find_term) and self.find_term in row.search_text()
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip(row.content().meta)
        return None

    def flags(self, index):
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def canFetchMore(self, parent=QModelIndex()):
        if parent.isValid():
            return False
        return self._older_wanted and self.has_more and not self.loading and self.reader is not None

    def fetchMore(self, parent=QModelIndex()):
        if parent.isValid() or not (self.has_more and not self.loading and self.reader is not None):
            return
        self._older_wanted = False
        self.set_loading(True)
        if self.window.hidden:
            # loaded rows not shown yet: expose a chunk on the next loop turn (bounded work)
            self._expose_pending = True
            QTimer.singleShot(0, self._expose_chunk)
            return
        oldest = self.pages[0].page
        self.jobs.submit(older_job, self.reader, oldest, self.page_size, self.physical, self.show_attempts,
                         self.window.expanded, self.window.sindex, serial=True, name="older-page", group=self.job_group("pages"),
                         on_done=self._install_older, on_error=self.page_error)

    def request_older(self) -> bool:
        """The view (or a navigation) wants older rows: fetch one page if there is one."""
        self._older_wanted = True
        if self.canFetchMore():
            self.fetchMore()
            return True
        return False

    # ------------------------------------------------------------------ opening
    def job_group(self, name: str) -> str:
        """Job groups of this model (several models may share one Jobs)."""
        return f"history-{id(self)}-{name}"

    def open(self, path: str, session_id: Optional[str] = None) -> None:
        self.close()
        self.path, self.session_id = path, session_id
        self.opened_at = time.perf_counter()
        self.set_loading(True)
        self._painted = threading.Event()
        self.jobs.submit(open_split_job, path, session_id, self.page_size, self.physical, self.show_attempts,
                         self.window.expanded, self._painted, serial=True, name="open", group=self.job_group("open"),
                         on_partial=self._install_first, on_done=self._install_tail, on_error=self._open_error)
        self.statsChanged.emit()

    def close(self) -> None:
        self.stop_live()
        for g in ("open", "pages", "index", "event-at", "face", "live", "surface"):
            self.jobs.cancel_group(self.job_group(g))
        self.beginResetModel()
        reader = self.reader
        self._reset_state()
        self.endResetModel()
        if reader is not None:
            try:
                reader.close()
            except Exception:
                pass
            thaw_heap()
        self.statsChanged.emit()

    def _open_error(self, msg: str):
        self.set_loading(False)
        self.open_error = msg
        self.openFailed.emit(msg)
        self.statsChanged.emit()

    def page_error(self, msg: str):
        self.set_loading(False)
        self.pageFailed.emit(msg)

    def _install_first(self, result, whole: bool = False) -> None:
        """The tail page, painted first (the rest of the first page is read after the paint);
        ``whole``: it is the whole first page (nothing follows: loading ends before tailInstalled)."""
        reader, lp = result
        self.reader = reader
        self.tail_elapsed = time.perf_counter() - self.opened_at
        self.apply_changes(self.window.install_tail(lp, FIRST_ROWS if whole else PAINT_ROWS))
        if whole:
            self.set_loading(False)
        self.tailInstalled.emit()
        self.statsChanged.emit()
        self.after_paint(self._painted.set)       # the rest of the first page is read after the paint

    def _install_tail(self, result):
        reader, lp, rest = result
        if self.reader is None:
            self._install_first((reader, lp), whole=rest is None)
        if rest is not None and rest.page.items:
            self.apply_changes(self.window.add_older_page(rest))
        elif rest is not None:
            self.pages[0].page.has_more = False
        if len(self.window.rows) < FIRST_ROWS and self.window.hidden:
            # painted with PAINT_ROWS rows: the rest of a first window now (above the viewport)
            self.apply_changes(self.window.expose_older(FIRST_ROWS - len(self.window.rows))[1])
        self.set_loading(False)
        freeze_heap()
        self.opened.emit()
        self.statsChanged.emit()
        self.indexer.start()
        self.start_surface()
        if self.follow_live:
            self.feed.start(lp.page)

    def _install_older(self, lp: LoadedPage):
        if not lp.page.items:
            self.set_loading(False)
            self.pages[0].page.has_more = False
            self.statsChanged.emit()
            return
        self.apply_changes(self.window.add_older_page(lp))
        self.shed_pages(shed_newer)
        freeze_heap()
        # (still loading) its rows are shown on the next loop turn: installing and exposing are two shorter ticks
        self._expose_pending = True
        QTimer.singleShot(0, self._expose_chunk)

    def _expose_chunk(self) -> int:
        """Show more older rows (prepended); the window trims its newest rows."""
        if not self._expose_pending:
            return 0                         # closed since it was scheduled
        self._expose_pending = False
        w = self.window
        c, changes = w.expose_older(self._ready(w.all_rows[max(0, w.hidden - _window.EXPOSE_CHUNK):w.hidden][::-1]))
        self.apply_changes(changes)
        self.shed_pages(shed_newer)               # the window slid up: pages now wholly below it can go
        self.set_loading(False)
        self.olderInstalled.emit(c)
        self.statsChanged.emit()
        return c

    def shed_pages(self, how) -> None:
        """Drop pages far from the exposed window (``app.ui.history.shed``) when they can be read again."""
        parked = {id(r) for r in self.keeps_rows()} if self.keeps_rows is not None else set()
        if self.jumps.can_jump() and how(self.window, pinned=lambda rows: any(id(r) in parked for r in rows)):
            self.statsChanged.emit()

    def _ready(self, rows: list) -> int:
        """How many of the rows about to slide in (nearest first) to show now: those the view
        prepared within EXPOSE_BUDGET_S (one at least; it asks again on the next loop turn)."""
        if self.prepare_rows is None or not rows:
            return _window.EXPOSE_CHUNK
        return max(1, self.prepare_rows(rows, EXPOSE_BUDGET_S))

    def request_newer(self) -> int:
        """Show newer loaded rows (trim the top), or after a jump read the next newer page."""
        w = self.window
        k = len(w.all_rows) - w.bottom
        c, changes = w.expose_newer(self._ready(w.all_rows[k:k + _window.EXPOSE_CHUNK]))
        if not c:
            self.jumps.fetch_newer()         # after a jump: the next newer page, if any
            return 0
        self.apply_changes(changes)
        self.newerInstalled.emit(c)
        self.statsChanged.emit()
        return c

    def show_around(self, i_all: int) -> None:
        """Re-centre the window on loaded row ``i_all`` (navigation to a row outside it)."""
        changes = self.window.show_around(i_all)
        if changes:
            self.apply_changes(changes)
            freeze_heap()
            self.statsChanged.emit()

    def show_tail(self) -> None:
        """Window on the newest rows (Ctrl+Down / end of log), also after a jump."""
        if not self.jumps.to_tail() and self.window.bottom:
            self.show_around(len(self.window.all_rows) - 1)

    def set_loading(self, on: bool):
        if self.loading != on:
            self.loading = on
            self.loadingChanged.emit(on)

    # ------------------------------------------------------------------ live (LiveFeed)
    live = property(lambda self: self.feed.follower)
    live_state = property(lambda self: self.feed.state)
    live_stats = property(lambda self: self.feed.stats)
    _live_job = property(lambda self: self.feed.job)
    _live_queue = property(lambda self: self.feed.queue)

    def stop_live(self) -> None:
        self.feed.stop()

    # ------------------------------------------------------------------ seq index (SeqIndex)
    seq_index = property(lambda self: self.indexer.index)
    index_state = property(lambda self: self.indexer.state)     # none | building | ready | failed
    index_elapsed = property(lambda self: self.indexer.elapsed)
    index_mode = property(lambda self: self.indexer.mode)       # "process" (child scan) | "thread" (fallback) | "cache" (saved)

    def fetch_event(self, seq: int) -> None:
        """event_at in a worker, for a seq that is not loaded (result: eventFetched)."""
        self.indexer.fetch_event(seq)

    # faces (wanted_face, set_physical, set_show_attempts): TruthModel; search (set_find, find, …): FindModel

    # ------------------------------------------------------------------ lookups
    def row_at(self, i: int) -> Optional[Row]:
        return self.rows[i] if 0 <= i < len(self.rows) else None

    def index_of_ordinal(self, ordinal: Optional[int], expose: bool) -> Optional[int]:
        """Exposed index of a loaded row; with ``expose`` the window moves to a row outside it."""
        if ordinal is None:
            return None
        i = self.window.exposed_index(ordinal)
        if i is None and expose:
            self.show_around(ordinal - self.window.origin)
            i = self.window.exposed_index(ordinal)
        return i

    def row_index(self, row: Row) -> Optional[int]:
        return self.window.row_index(row)

    def expose_row(self, row: Row) -> Optional[int]:
        """Exposed index of a loaded row, the window moved there if it is outside it (None: not loaded)."""
        return self.index_of_ordinal(self.window.row_ordinal(row), True)

    def is_loaded_row(self, row: Row) -> bool:
        return self.window.row_ordinal(row) is not None

    def row_for_key(self, key) -> Optional[int]:
        return self.index_of_ordinal(self.window.key_ordinal(key), False)

    def row_for_seq(self, seq: int, expose: bool = True) -> Optional[int]:
        """Row showing ``seq`` (a collapsed chunk maps to its attempt/message row).

        A loaded row that is not exposed yet is exposed (the window moves there)."""
        return self.index_of_ordinal(self.window.seq_ordinal(seq), expose)

    def event_for_seq(self, seq: int):
        return self.window.events.get(seq)

    def is_loaded(self, seq: int) -> bool:
        return seq in self.window.events

    def hidden_attempt_of(self, seq: int):
        return self.window.hidden_attempt_of(seq)

    def turn_rows(self) -> list:
        return [i for i, r in enumerate(self.rows) if r.kind == RowKind.TURN_START]

    def index_of(self, row: int) -> QModelIndex:
        return self.index(row, 0)

    # ------------------------------------------------------------------ status
    def stats(self) -> dict:
        w = self.window
        tail = self.pages[-1].page if self.pages else None
        last = tail.last_seq if tail is not None and tail.last_seq is not None else -1
        return {
            "storedEvents": w.stored_event_count(),
            "rows": len(self.rows), "hiddenRows": w.hidden + w.bottom, "events": len(w.events),
            "pages": len(self.pages), "hasMore": self.has_more, "wholeLog": w.whole_log, "baseSeq": self.base_seq,
            "face": "physical" if self.physical else "logical",
            "format": getattr(getattr(self.reader, "source", None), "kind", None),
            "hiddenAttempts": w.hidden_attempt_count(), "showAttempts": self.show_attempts,
            "closure": len(tail.closure) if tail is not None and tail.tail else 0,
            "dropped": len(tail.dropped) if tail is not None and tail.tail else 0,
            "index": self.index_state, "indexMode": self.index_mode,
            # the index is a snapshot: a log that grew since has at least its newest seq + 1 events
            "indexedEvents": max(self.seq_index.events, last + 1) if self.seq_index is not None else None,
            "loading": self.loading, "matches": len(self.matches),
            "live": self.live_state,
            "liveFace": self.window.live is True, "surface": "ready" if self.window.sindex is not None else "building",
        }
