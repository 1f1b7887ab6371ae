"""The history view model: a virtualized QAbstractListModel over raw history pages.

Files -> core (LogReader pages) -> this model (rows) -> the list view + delegate.
No widgets are imported here.

* ``open(path)`` reads the tail page in a worker and installs it (newest row last).
* Older pages come in through ``canFetchMore``/``fetchMore``: Qt's own automatic
  fetching is bottom-based, so the model only answers ``canFetchMore`` while the view
  asked for older rows (``request_older()``: the user scrolled to the top, a link or a
  search needs an older seq).  Prepended rows arrive through ``beginInsertRows(0, k)``
  so the view can keep its scroll anchor.
* The sparse seq index builds in a worker on its own reader (progress signals), so
  ``event_at`` for a row that is not loaded does not scan on the UI thread.
* Faces: logical (``Page.logical_items``: closure rows appended, tail rows a repair
  would drop removed) or physical (``Page.items``: exactly the stored rows, bad rows
  included).  Hidden (failed) attempts appear only when ``show_attempts`` is on.
"""
from __future__ import annotations

import bisect
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from .plaintext import tooltip
from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt, QTimer, Signal

from ..log.attempts import find_attempts
from ..log.reader import extend_tail_page, row_key, split_page
from ..store.faces import open_reader
from ..store.indexer import build_index_isolated

try:  # presenters are optional: without them every tool row gets the generic card
    from ..presenters import views_for_page
except ImportError:  # pragma: no cover
    views_for_page = None
from ..log.model import is_event
from .rows import Row, build_rows, result_call_id
from .workers import Cancelled, Jobs, freeze_heap, thaw_heap

ROW_ROLE = Qt.ItemDataRole.UserRole + 1
KIND_ROLE = Qt.ItemDataRole.UserRole + 2
SEQ_ROLE = Qt.ItemDataRole.UserRole + 3
MATCH_ROLE = Qt.ItemDataRole.UserRole + 4

DEFAULT_PAGE_SIZE = 50
FIRST_ROWS = 40          # rows of the tail page shown for the first paint; the rest follow
EXPOSE_CHUNK = 10        # rows exposed per event-loop turn when older/newer rows are wanted
FACE_SYNC_EVENTS = 20_000  # a face toggle building rows for more loaded events runs in a worker
LIVE_SPLIT = 24          # a live tail page holding more messages than this is cut ...
LIVE_KEEP = 12           # ... keeping this many in the newest page
MAX_EXPOSED = 300        # rows the view holds at once (QListView re-lays out all of them on
                         # every insert, ~14 µs a row here): a window sliding over loaded rows


def compute_views(events: list) -> dict:
    """Presenter views for one page ({seq: view}); a missing or failing presenter -> {}."""
    if views_for_page is None:
        return {}
    try:
        return dict(views_for_page(events) or {})
    except Exception:  # a presenter bug must not hide the page: generic cards instead
        return {}


def hidden_attempts(tracker) -> int:
    """Failed attempts a page hides by default (a page's tracker never changes once built:
    counted once, not at every status update)."""
    n = getattr(tracker, "_hidden_count", None)
    if n is None:
        n = tracker._hidden_count = sum(1 for a in tracker.attempts if a.hidden_by_default)
    return n


@dataclass
class LoadedPage:
    page: Any                 # app.log.reader.Page
    views: dict
    elapsed: float            # seconds in the worker
    faces: dict = field(default_factory=dict)    # (physical, show_attempts) -> PageRows
    events: dict = field(default_factory=dict)   # seq -> Event (stored events and closure rows)
    trackers: dict = field(default_factory=dict)  # physical -> AttemptTracker (same for both attempt settings)
    row_cache: dict = field(default_factory=dict)  # rows shared between faces (documents stay cached)

    @property
    def face_neutral(self) -> bool:
        """Physical and logical rows are the same (no closure, no dropped or bad rows)."""
        p = self.page
        if p.tail and (p.closure or p.dropped):
            return False
        return all(is_event(it) for it in p.items)

    def rows_for(self, physical: bool, show_attempts: bool) -> "PageRows":
        key = (physical, show_attempts)
        pr = self.faces.get(key)
        if pr is not None:
            return pr
        # reuse an equivalent face (same Row objects, so painted documents stay cached)
        neutral = self.face_neutral
        other_face = self.faces.get((not physical, show_attempts)) if neutral else None
        if other_face is not None:
            pr = other_face
        else:
            for k in ((physical, not show_attempts), (not physical, not show_attempts) if neutral else None):
                o = self.faces.get(k) if k else None
                if o is not None and not hidden_attempts(o.tracker):
                    pr = o
                    break
        if pr is None:
            pr = build_page_rows(self, physical, show_attempts)
        self.faces[key] = pr
        return pr


@dataclass
class PageRows:
    rows: list
    tracker: Any
    seq_rows: list            # [(first_seq, last_seq, row)] sorted


def page_items(page, physical: bool) -> list:
    if physical:
        return list(page.items)
    if page.tail:
        return page.logical_items()
    return [it for it in page.items if is_event(it)]


def build_page_rows(lp: LoadedPage, physical: bool, show_attempts: bool) -> PageRows:
    """Rows of one page in one face (pure; runs in the page worker for the current face).

    Attempts never straddle pages (a page starts at a message's first cited chunk), so
    per-page attempt tracking equals whole-log tracking for the rows shown."""
    p = lp.page
    items = page_items(p, physical)
    tracker = lp.trackers.get(physical)
    if tracker is None:
        tracker = lp.trackers[physical] = find_attempts([it for it in items if is_event(it)])
    dropped = set()
    if physical and p.tail:
        dropped = {row_key(d) for d in p.dropped if is_event(d)}
    rows = build_rows(items, tracker, lp.views, show_attempts, dropped, lp.row_cache)
    seq_rows = []
    for r in rows:
        if r.seq is None:
            continue
        lo = r.first_seq if r.first_seq is not None else r.seq
        hi = max(r.seq, r.last_seq if r.last_seq is not None else r.seq)
        seq_rows.append((lo, hi, r))
    seq_rows.sort(key=lambda x: (x[0], x[1] - x[0]))
    return PageRows(rows, tracker, seq_rows)


def _loaded(page, views, elapsed, physical, show_attempts, row_cache: Optional[dict] = None) -> LoadedPage:
    lp = LoadedPage(page, views, elapsed)
    if row_cache is not None:
        lp.row_cache = row_cache
    for it in page.items:
        if is_event(it):
            lp.events.setdefault(it.seq, it)
    if page.tail:
        for ev in page.closure:
            lp.events.setdefault(ev.seq, ev)
    lp.rows_for(physical, show_attempts)
    return lp


# --------------------------------------------------------------------------- worker bodies

def _open_job(job, path: str, session_id: Optional[str], page_size: int, physical: bool, show_attempts: bool):
    t0 = time.perf_counter()
    reader = open_reader(path, session_id)
    job.check()
    page = reader.tail_page(page_size)
    evs = [it for it in page.items if is_event(it)] + list(page.closure)
    views = compute_views(evs)
    return reader, _loaded(page, views, time.perf_counter() - t0, physical, show_attempts)


def _older_job(job, reader, page, page_size: int, physical: bool, show_attempts: bool):
    t0 = time.perf_counter()
    older = reader.page_before(page, page_size)
    views = compute_views([it for it in older.items if is_event(it)])
    return _loaded(older, views, time.perf_counter() - t0, physical, show_attempts)


def _index_job(job, path: str, session_id: Optional[str]):
    """The seq index, scanned in a child process (app.store.indexer) so the scan does not
    compete with the UI thread for the GIL; this worker thread only waits on a pipe."""
    t0 = time.perf_counter()
    try:
        idx, mode = build_index_isolated(path, session_id,
                                         progress=lambda done, total: job.report(done, total),
                                         cancelled=lambda: job.cancelled)
    except InterruptedError:
        raise Cancelled(job.name)
    return idx, time.perf_counter() - t0, mode


def _event_at_job(job, path: str, session_id: Optional[str], index, seq: int):
    r = open_reader(path, session_id)
    try:
        if index is not None:
            r.index = index
        return r.event_at(seq)
    finally:
        r.close()


def _stale_live_row(key: tuple, row, region_start: int) -> bool:
    """Rows a live append may change: synthesized closers, and attempt/assistant rows of
    the turn still being written (their attempt gains chunks, a finish, a retry)."""
    if key[0] == "s":
        return True
    if key[0] == "a" or (key[0] == "e" and len(key) > 2 and key[2] == "assistant"):
        return row.seq is None or row.seq >= region_start or (row.first_seq or 0) >= region_start
    return False


def _live_job(job, lp: LoadedPage, rows: list, physical: bool, show_attempts: bool, prev_calls: list):
    """The tail page grown by live rows: one LoadedPage, or two once it holds more than
    LIVE_SPLIT messages (cut like the host pages, the newer part keeping LIVE_KEEP): each
    batch rebuilds only a short page, so its cost does not grow with the session.  Rows of
    settled events are the same Row objects as before, so the model only touches what
    changed.  Presenter views of new results see the calls of this page and the previous
    one (live rows get their view, as the host sends one with each live event)."""
    t0 = time.perf_counter()
    p = lp.page
    old_tt = p.tail_state.tracker
    region_start = old_tt.last_turn_end.seq if old_tt.last_turn_end is not None else -1
    newp = extend_tail_page(p, old_tt.copy(), rows)
    job.check()
    old_closure = {e.seq for e in p.closure}
    views = {s: v for s, v in lp.views.items() if s not in old_closure}
    calls = prev_calls + [e for e in p.items if is_event(e) and e.type == "tool/call"]
    for s, v in compute_views(calls + [e for e in rows if is_event(e)] + list(newp.closure)).items():
        views.setdefault(s, v)
    cache = {k: r for k, r in lp.row_cache.items() if not _stale_live_row(k, r, region_start)}
    parts = [newp]
    if newp.messages > LIVE_SPLIT:
        sp = split_page(newp, LIVE_KEEP)
        if sp is not None:
            parts = list(sp)
    elapsed = time.perf_counter() - t0
    return [_loaded(part, views, elapsed, physical, show_attempts, cache) for part in parts]


# --------------------------------------------------------------------------- the model

class HistoryModel(QAbstractListModel):
    opened = Signal()                    # reader ready and tail page installed
    openFailed = Signal(str)
    tailInstalled = Signal()
    olderInstalled = Signal(int)         # rows prepended
    newerInstalled = Signal(int)         # rows appended (window slid down)
    loadingChanged = Signal(bool)
    pageFailed = Signal(str)
    indexProgress = Signal(int, int)
    indexReady = Signal()
    faceChanged = Signal()
    statsChanged = Signal()
    searchChanged = Signal()
    eventFetched = Signal(int, object)   # seq, Event|None (event_at for a row not loaded)
    liveStateChanged = Signal(str)       # waiting | loading | live | idle | complete | crashed | changed | error: …
    liveAboutToAppend = Signal()         # live rows are about to change the newest rows
    liveAppended = Signal(int)           # live rows applied (rows added to the loaded rows)

    def __init__(self, jobs: Optional[Jobs] = None, page_size: int = DEFAULT_PAGE_SIZE, parent=None,
                 follow_live: bool = True, live_options: Optional[dict] = None):
        super().__init__(parent)
        self.jobs = jobs or Jobs(self)
        self.page_size = max(1, int(page_size))
        self.physical = False
        self.show_attempts = False
        self.follow_live = follow_live           # follow the open log as it grows (LiveFollower)
        self.live_options = dict(live_options or {})
        self.live = None
        self._reset_state()

    def _reset_state(self):
        self.reader = None
        self.path: Optional[str] = None
        self.session_id: Optional[str] = None
        self.pages: list[LoadedPage] = []        # oldest first
        self.rows: list[Row] = []                # exposed rows (what the view sees)
        self._all_rows: list = []               # every loaded row
        self._hidden = 0                        # loaded rows above the exposed window
        self._bottom = 0                        # loaded rows below the exposed window
        self._all_pos: dict = {}                # id(row) -> ordinal (index = ordinal - _origin)
        self._all_key: dict = {}                # row key -> ordinal
        self._origin = 0
        self._expose_pending = False
        self._seq_rows: list = []               # sorted [(first_seq, last_seq, row)]
        self._seq_firsts: list = []
        self._events: dict = {}                 # seq -> Event for every loaded event (both faces)
        self._trackers: list = []
        self.loading = False
        self._older_wanted = False
        self._jobs_open = []
        self.seq_index = None
        self.index_state = "none"               # none | building | ready | failed
        self.index_elapsed = 0.0
        self.index_mode = None                  # "process" (child scan) | "thread" (fallback)
        self.open_error: Optional[str] = None
        self.search_term = ""
        self._matches: list = []
        self.current_match_row: Optional[int] = None
        self.opened_at = 0.0
        self.tail_elapsed = 0.0
        self.live_state: Optional[str] = None
        self._live_queue: list = []
        self._live_job = None
        self.live_stats = {"batches": 0, "events": 0, "splits": 0, "resets": 0}

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
            return f"{c.badge} {c.title}"
        if role == KIND_ROLE:
            return row.kind
        if role == SEQ_ROLE:
            return row.seq
        if role == MATCH_ROLE:
            return bool(self.search_term) and self.search_term in row.search_text()
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
        self._set_loading(True)
        if self._hidden:
            # loaded rows not shown yet: expose a chunk on the next loop turn (bounded work)
            self._expose_pending = True
            QTimer.singleShot(0, self._expose_chunk)
            return
        oldest = self.pages[0].page
        self._jobs_open.append(self.jobs.submit(
            _older_job, self.reader, oldest, self.page_size, self.physical, self.show_attempts,
            serial=True, name="older-page",
            on_done=self._install_older, on_error=self._page_error))

    def request_older(self) -> bool:
        """The view (or a navigation) wants older rows: fetch one page if there is one."""
        self._older_wanted = True
        if self.canFetchMore():
            self.fetchMore()
            return True
        return False

    # ------------------------------------------------------------------ opening
    def open(self, path: str, session_id: Optional[str] = None) -> None:
        self.close()
        self.path, self.session_id = path, session_id
        self.opened_at = time.perf_counter()
        self._set_loading(True)
        self._jobs_open.append(self.jobs.submit(
            _open_job, path, session_id, self.page_size, self.physical, self.show_attempts,
            serial=True, name="open",
            on_done=self._install_tail, on_error=self._open_error))
        self.statsChanged.emit()

    def close(self) -> None:
        self.stop_live()
        for j in self._jobs_open:
            j.cancel()
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

    def reload(self) -> None:
        if self.path:
            self.open(self.path, self.session_id)

    def _open_error(self, msg: str):
        self._set_loading(False)
        self.open_error = msg
        self.openFailed.emit(msg)
        self.statsChanged.emit()

    def _page_error(self, msg: str):
        self._set_loading(False)
        self.pageFailed.emit(msg)

    def _install_tail(self, result):
        reader, lp = result
        self.reader = reader
        self.tail_elapsed = time.perf_counter() - self.opened_at
        self.beginResetModel()
        self.pages = [lp]
        self._events = dict(lp.events)
        n = len(lp.rows_for(self.physical, self.show_attempts).rows)
        self._apply_rows(hidden=max(0, n - FIRST_ROWS))
        self.endResetModel()
        self._set_loading(False)
        freeze_heap()
        self.tailInstalled.emit()
        self.opened.emit()
        self.statsChanged.emit()
        self._start_index()
        self._start_live(lp.page)

    def _install_older(self, lp: LoadedPage):
        self._set_loading(False)
        if not lp.page.items:
            self.pages[0].page.has_more = False
            self.statsChanged.emit()
            return
        self.pages.insert(0, lp)
        pr = lp.rows_for(self.physical, self.show_attempts)
        self._events.update(lp.events)
        self._prepend_rows(pr)
        self._link_calls(lp, pr)
        freeze_heap()
        self._set_loading(True)
        self._expose_chunk()

    def _set_window(self, top: int, bottom: int) -> None:
        self._hidden, self._bottom = top, bottom
        n = len(self._all_rows)
        self.rows = self._all_rows[top:n - bottom]

    def _expose_chunk(self, n: int = EXPOSE_CHUNK) -> int:
        """Show up to ``n`` more older rows (prepended); trim the window's newest rows."""
        self._expose_pending = False
        c = min(n, self._hidden)
        if c:
            self.beginInsertRows(QModelIndex(), 0, c - 1)
            self._set_window(self._hidden - c, self._bottom)
            if self.current_match_row is not None:
                self.current_match_row += c
            self._recompute_matches()
            self.endInsertRows()
            extra = len(self.rows) - MAX_EXPOSED
            if extra > 0:
                k = len(self.rows)
                self.beginRemoveRows(QModelIndex(), k - extra, k - 1)
                self._set_window(self._hidden, self._bottom + extra)
                if self.current_match_row is not None and self.current_match_row >= len(self.rows):
                    self.current_match_row = None
                self._recompute_matches()
                self.endRemoveRows()
        self._set_loading(False)
        self.olderInstalled.emit(c)
        self.statsChanged.emit()
        return c

    def request_newer(self) -> int:
        """The view reached the bottom of the window: show newer loaded rows (trim the top)."""
        c = min(EXPOSE_CHUNK, self._bottom)
        if not c:
            return 0
        k = len(self.rows)
        self.beginInsertRows(QModelIndex(), k, k + c - 1)
        self._set_window(self._hidden, self._bottom - c)
        self._recompute_matches()
        self.endInsertRows()
        extra = len(self.rows) - MAX_EXPOSED
        if extra > 0:
            self.beginRemoveRows(QModelIndex(), 0, extra - 1)
            self._set_window(self._hidden + extra, self._bottom)
            if self.current_match_row is not None:
                self.current_match_row = self.current_match_row - extra if self.current_match_row >= extra else None
            self._recompute_matches()
            self.endRemoveRows()
        self.newerInstalled.emit(c)
        self.statsChanged.emit()
        return c

    @property
    def newer_hidden(self) -> int:
        return self._bottom

    def show_around(self, i_all: int) -> None:
        """Re-centre the window on loaded row ``i_all`` (navigation to a row outside it)."""
        n = len(self._all_rows)
        top = max(0, min(i_all - MAX_EXPOSED // 2, n - MAX_EXPOSED))
        bottom = max(0, n - top - MAX_EXPOSED)
        if (top, bottom) == (self._hidden, self._bottom):
            return
        self.beginResetModel()
        self._set_window(top, bottom)
        self.current_match_row = None
        self._recompute_matches()
        self.endResetModel()
        freeze_heap()
        self.statsChanged.emit()

    def show_tail(self) -> None:
        """Window on the newest rows (Ctrl+Down / end of log)."""
        if self._bottom:
            self.show_around(len(self._all_rows) - 1)

    def expose_all(self) -> int:
        """Compatibility: bring the oldest loaded row into the window."""
        if not self._hidden:
            return 0
        self.show_around(0)
        return 1

    def _link_calls(self, lp: LoadedPage, pr: PageRows) -> None:
        """Results on the next newer page whose tool/call just arrived learn the tool name
        (their presenter view stays generic: the host looks calls up in the same page only)."""
        if len(self.pages) < 2:
            return
        calls = {ev.data.get("callId"): ev for ev in lp.events.values()
                 if ev.type == "tool/call" and isinstance(ev.data, dict)}
        if not calls:
            return
        changed = []
        for face in self.pages[1].faces.values():
            for r in face.rows:
                if r.kind == "tool-result" and r.call is None:
                    c = calls.get(result_call_id(r.event))
                    if c is not None:
                        r.call = c
                        r.touch()
                        changed.append(r)
        for r in changed:
            i = self.row_index(r)
            if i is not None:
                ix = self.index(i, 0)
                self.dataChanged.emit(ix, ix)

    def _set_loading(self, on: bool):
        if self.loading != on:
            self.loading = on
            self.loadingChanged.emit(on)

    # ------------------------------------------------------------------ live
    def _start_live(self, page) -> None:
        """Follow the open log: rows written after the tail page arrive through a
        LiveFollower (its own thread and reader), are stitched (no duplicate, no gap) and
        grow the tail page in the page worker."""
        if not self.follow_live or self.reader is None or page.tail_state is None:
            return
        from .live import LiveFollower
        opts = {"poll_interval": 0.25, **self.live_options}
        live = LiveFollower(self.reader, parent=self, page=page, session_id=self.session_id,
                            max_messages=self.page_size, **opts)
        live.rows_appended.connect(self._on_live_rows)
        live.tail_reinstalled.connect(self._on_live_reinstall)
        live.state_changed.connect(self._on_live_state)
        self.live = live
        live.start()

    def stop_live(self) -> None:
        live, self.live = self.live, None
        if live is not None:
            live.stop(timeout=0.2)      # not joined for long on the UI thread: a late row is dropped
            live.deleteLater()

    def _on_live_state(self, state: str) -> None:
        if self.live is None or self.sender() is not self.live:
            return
        if state == "stopped":
            return
        self.live_state = state
        self.liveStateChanged.emit(state)
        self.statsChanged.emit()

    def _on_live_reinstall(self, page) -> None:
        """The log was replaced or shrank (repair, restore): read it again from its tail."""
        if self.live is None or self.sender() is not self.live or self.path is None:
            return
        self.live_stats["resets"] += 1
        self.open(self.path, self.session_id)

    def _on_live_rows(self, events: list) -> None:
        if self.live is None or self.sender() is not self.live:
            return
        self._live_queue.extend(events)
        self.live_stats["events"] += len(events)
        self._pump_live()

    def _pump_live(self) -> None:
        if self._live_job is not None or not self._live_queue or not self.pages:
            return
        lp = self.pages[-1]
        if not lp.page.tail or lp.page.tail_state is None:
            return
        rows, self._live_queue = self._live_queue, []
        prev_calls = [e for e in self.pages[-2].events.values() if e.type == "tool/call"] if len(self.pages) > 1 else []
        self._live_job = job = self.jobs.submit(
            _live_job, lp, rows, self.physical, self.show_attempts, prev_calls,
            serial=True, name="live",
            on_done=lambda new, lp=lp: self._live_done(lp, new),
            on_error=self._live_failed)
        self._jobs_open.append(job)

    def _live_failed(self, msg: str) -> None:
        self._live_job = None
        self.pageFailed.emit(f"live rows: {msg}")

    def _live_done(self, old: LoadedPage, new: list) -> None:
        self._live_job = None
        if not self.pages or self.pages[-1] is not old:
            return                                   # reopened meanwhile
        self._apply_live(old, new)
        self._pump_live()

    def _apply_live(self, old: LoadedPage, new: list) -> None:
        """Replace the newest page's rows by the grown page's rows, touching only what changed:
        rows equal by identity stay, rows with the same key are updated in place, the rest
        are removed and inserted at the end.  A window that does not reach the end of the
        log only grows its hidden bottom; one that does gets the new rows (trimmed at the
        top to MAX_EXPOSED)."""
        face = (self.physical, self.show_attempts)
        old_pr = old.rows_for(*face)
        new_prs = [lp.rows_for(*face) for lp in new]
        old_rows = old_pr.rows
        new_rows = [r for pr in new_prs for r in pr.rows]
        n = len(self._all_rows)
        base = n - len(old_rows)
        m = min(len(old_rows), len(new_rows))
        k = 0
        while k < m and old_rows[k] is new_rows[k]:
            k += 1
        k2 = k
        while k2 < m and old_rows[k2].key == new_rows[k2].key:
            k2 += 1
        c = base + k2                                  # first row removed / inserted (all-rows index)
        n2 = base + len(new_rows)
        h, b = self._hidden, self._bottom
        self.liveAboutToAppend.emit()
        # bookkeeping shared by every case
        for r in old_rows[k:]:
            self._all_pos.pop(id(r), None)
            if self._all_key.get(r.key, -1) >= base + k + self._origin:   # not a key an older page holds
                del self._all_key[r.key]
        self.pages[-1:] = new
        for ev in old.page.closure:
            if self._events.get(ev.seq) is ev:
                del self._events[ev.seq]
        for lp in new:
            for seq, ev in lp.events.items():
                if not ev.synthesized or seq not in self._events:
                    self._events[seq] = ev
        n_old_seq = len(old_pr.seq_rows)
        if n_old_seq:
            del self._seq_rows[-n_old_seq:]
            del self._seq_firsts[-n_old_seq:]
        for pr in new_prs:
            self._seq_rows.extend(pr.seq_rows)
            self._seq_firsts.extend(x[0] for x in pr.seq_rows)
        if self._trackers:
            self._trackers.pop()
        self._trackers.extend(pr.tracker for pr in new_prs)

        def index_rows(lo: int):
            for i in range(lo, len(self._all_rows)):
                r = self._all_rows[i]
                self._all_pos[id(r)] = i + self._origin
                self._all_key[r.key] = i + self._origin

        exposed_end = n - b
        if c < h:
            # the change reaches above the window (a very long tail page): rebuild the window
            self.beginResetModel()
            self._all_rows[base + k:] = new_rows[k:]
            index_rows(base + k)
            if b == 0:                                 # the window keeps reaching the end
                nh, nb = max(h, n2 - MAX_EXPOSED), 0
            else:                                      # same top, same end (clipped)
                nh = min(h, n2)
                nb = n2 - max(nh, min(exposed_end, n2))
            self._set_window(nh, nb)
            self.current_match_row = None
            self._recompute_matches()
            self.endResetModel()
        else:
            # in place: same keys at the same places
            self._all_rows[base + k:base + k2] = new_rows[k:k2]
            self._set_window(h, b)
            lo, hi = max(base + k, h), min(base + k2, exposed_end)
            if lo < hi:
                self.dataChanged.emit(self.index(lo - h, 0), self.index(hi - h - 1, 0))
            if c >= exposed_end and b > 0:
                # everything that changes is below the window
                self._all_rows[c:] = new_rows[k2:]
                self._set_window(h, b + (n2 - n))
            else:
                if exposed_end > c:
                    self.beginRemoveRows(QModelIndex(), c - h, exposed_end - h - 1)
                    del self._all_rows[c:]
                    self._set_window(h, 0)
                    if self.current_match_row is not None and self.current_match_row >= c - h:
                        self.current_match_row = None
                    self.endRemoveRows()
                else:
                    del self._all_rows[c:]
                    self._set_window(h, 0)
                add = new_rows[k2:]
                shown = len(add) if b == 0 else min(len(add), exposed_end - c)
                if shown:
                    self.beginInsertRows(QModelIndex(), c - h, c - h + shown - 1)
                    self._all_rows.extend(add)
                    self._set_window(h, len(add) - shown)
                    self.endInsertRows()
                else:
                    self._all_rows.extend(add)
                    self._set_window(h, len(add))
                extra = len(self.rows) - MAX_EXPOSED
                if extra > 0 and self._bottom == 0:
                    self.beginRemoveRows(QModelIndex(), 0, extra - 1)
                    self._set_window(self._hidden + extra, 0)
                    if self.current_match_row is not None:
                        self.current_match_row = (self.current_match_row - extra
                                                  if self.current_match_row >= extra else None)
                    self.endRemoveRows()
            index_rows(base + k)
            self._recompute_matches()
        self.live_stats["batches"] += 1
        if len(new) > 1:
            self.live_stats["splits"] += 1
        freeze_heap()
        self.liveAppended.emit(n2 - n)
        self.statsChanged.emit()

    # ------------------------------------------------------------------ index
    def _start_index(self):
        if self.path is None:
            return
        self.index_state = "building"
        self._jobs_open.append(self.jobs.submit(
            _index_job, self.path, self.session_id, name="index",
            on_done=self._index_done, on_error=self._index_failed,
            on_progress=lambda d, t: self.indexProgress.emit(d, t)))
        self.statsChanged.emit()

    def _index_done(self, result):
        idx, elapsed, mode = result
        self.seq_index = idx
        self.index_elapsed = elapsed
        self.index_mode = mode
        self.index_state = "ready"
        if self.reader is not None and self.reader.index is None:
            self.reader.index = idx
        self.indexReady.emit()
        self.statsChanged.emit()

    def _index_failed(self, msg: str):
        self.index_state = "failed"
        self.statsChanged.emit()

    def fetch_event(self, seq: int) -> None:
        """event_at in a worker, for a seq that is not loaded (result: eventFetched)."""
        if self.path is None:
            return
        self._jobs_open.append(self.jobs.submit(
            _event_at_job, self.path, self.session_id, self.seq_index, seq, name="event-at",
            on_done=lambda ev: self.eventFetched.emit(seq, ev),
            on_error=lambda msg: self.eventFetched.emit(seq, None)))

    # ------------------------------------------------------------------ faces
    @property
    def wanted_face(self) -> tuple:
        """(physical, show_attempts) last asked for (the shown face may still be building)."""
        return getattr(self, "_want_face", None) or (self.physical, self.show_attempts)

    def set_physical(self, on: bool) -> None:
        if bool(on) != self.wanted_face[0]:
            self._switch_face(bool(on), self.wanted_face[1])

    def set_show_attempts(self, on: bool) -> None:
        if bool(on) != self.wanted_face[1]:
            self._switch_face(self.wanted_face[0], bool(on))

    def _switch_face(self, physical: bool, show_attempts: bool) -> None:
        """Rows for the new face: at once when little must be built, else in the page
        worker (the old rows stay up meanwhile; the newest request wins)."""
        key = (physical, show_attempts)
        self._want_face = key
        todo = [lp for lp in self.pages if key not in lp.faces]
        work = sum(len(lp.events) for lp in todo)
        self._face_gen = getattr(self, "_face_gen", 0) + 1
        if work <= FACE_SYNC_EVENTS:
            self.physical, self.show_attempts = physical, show_attempts
            self._reset_rows()
            self.faceChanged.emit()
            return
        gen = self._face_gen
        self._set_loading(True)

        def build(job, pages=list(self.pages)):
            for lp in pages:
                job.check()
                lp.rows_for(physical, show_attempts)
            return gen

        def done(g):
            self._set_loading(False)
            if g != self._face_gen:
                return
            self.physical, self.show_attempts = physical, show_attempts
            self._reset_rows()
            self.faceChanged.emit()
        self._jobs_open.append(self.jobs.submit(build, serial=True, name="face", on_done=done,
                                                on_error=lambda msg: self._set_loading(False)))
        self.statsChanged.emit()

    def set_page_size(self, n: int) -> None:
        self.page_size = max(1, int(n))

    def _reset_rows(self):
        first = None
        for r in self.rows:
            if r.seq is not None:
                first = r.first_seq if r.first_seq is not None else r.seq
                break
        keep = max(len(self.rows), FIRST_ROWS)
        self.beginResetModel()
        self._apply_rows(hidden=0)
        top = 0
        if first is not None:
            for r in self._all_rows:
                lo = r.first_seq if r.first_seq is not None else r.seq
                if lo is None or lo >= first:
                    break
                top += 1
        n = len(self._all_rows)
        top = min(top, max(0, n - keep))
        self._set_window(top, max(0, n - top - min(keep, MAX_EXPOSED)))
        self._recompute_matches()
        self.endResetModel()
        self.statsChanged.emit()

    # ------------------------------------------------------------------ rows
    def _apply_rows(self, hidden: int = 0, bottom: int = 0):
        """Concatenate the pages' rows for the current face (pages are oldest first)."""
        rows: list = []
        seq_rows: list = []
        trackers: list = []
        for lp in self.pages:
            pr = lp.rows_for(self.physical, self.show_attempts)
            rows.extend(pr.rows)
            seq_rows.extend(pr.seq_rows)
            trackers.append(pr.tracker)
        self._all_rows = rows
        hidden = min(hidden, len(rows))
        self._set_window(hidden, min(bottom, len(rows) - hidden))
        self._seq_rows = seq_rows
        self._seq_firsts = [x[0] for x in seq_rows]
        self._trackers = trackers
        self._origin = 0
        self._all_pos = {id(r): i for i, r in enumerate(rows)}
        self._all_key = {r.key: i for i, r in enumerate(rows)}
        self._recompute_matches()

    # ------------------------------------------------------------------ lookups
    @property
    def has_more(self) -> bool:
        """Older rows exist: hidden loaded rows, or pages not read yet."""
        return bool(self.pages) and (self._hidden > 0 or self.pages[0].page.has_more)

    @property
    def hidden_rows(self) -> int:
        return self._hidden

    @property
    def base_seq(self) -> Optional[int]:
        return self.pages[0].page.base_seq if self.pages else None

    @property
    def trackers(self) -> list:
        return self._trackers

    def row_at(self, i: int) -> Optional[Row]:
        return self.rows[i] if 0 <= i < len(self.rows) else None

    def _prepend_rows(self, pr: "PageRows") -> None:
        """Add an older page's rows above everything loaded (indices shift, ordinals do not)."""
        k = len(pr.rows)
        self._origin -= k
        o = self._origin
        for i, r in enumerate(pr.rows):
            self._all_pos[id(r)] = o + i
            self._all_key[r.key] = o + i
        self._all_rows = pr.rows + self._all_rows
        self._seq_rows = pr.seq_rows + self._seq_rows
        self._seq_firsts = [x[0] for x in pr.seq_rows] + self._seq_firsts
        self._trackers.insert(0, pr.tracker)
        self._set_window(self._hidden + k, self._bottom)

    def _exposed(self, i_all: Optional[int], expose: bool) -> Optional[int]:
        if i_all is None:
            return None
        i_all -= self._origin
        if i_all < self._hidden or i_all >= len(self._all_rows) - self._bottom:
            if not expose:
                return None
            self.show_around(i_all)
        return i_all - self._hidden

    def row_index(self, row: Row) -> Optional[int]:
        return self._exposed(self._all_pos.get(id(row)), False)

    def row_for_key(self, key) -> Optional[int]:
        return self._exposed(self._all_key.get(key), False)

    def row_for_seq(self, seq: int, expose: bool = True) -> Optional[int]:
        """Row showing ``seq`` (a collapsed chunk maps to its attempt/message row).

        A loaded row that is not exposed yet is exposed (with everything newer)."""
        i = bisect.bisect_right(self._seq_firsts, seq) - 1
        best = None
        j = i
        while j >= 0 and j > i - 64:
            lo, hi, r = self._seq_rows[j]
            if lo <= seq <= hi:
                if r.seq == seq:
                    return self._exposed(self._all_pos.get(id(r)), expose)
                if best is None:
                    best = r
            j -= 1
        if best is not None:
            # an assistant row covers its chunks; prefer the row whose own range is tightest
            return self._exposed(self._all_pos.get(id(best)), expose)
        return None

    def event_for_seq(self, seq: int):
        return self._events.get(seq)

    def is_loaded(self, seq: int) -> bool:
        return seq in self._events

    def hidden_attempt_of(self, seq: int):
        for tr in self._trackers:
            a = tr.attempt_of(seq)
            if a is not None:
                return a if a.hidden_by_default else None
        return None

    def turn_rows(self) -> list:
        return [i for i, r in enumerate(self.rows) if r.kind == "turn-start"]

    # ------------------------------------------------------------------ search
    def set_search(self, term: str) -> None:
        term = (term or "").casefold()
        if term == self.search_term:
            return
        self.search_term = term
        self.current_match_row = None
        self._recompute_matches()
        # no dataChanged over every row: QListView would re-lay out the whole window (heights
        # never change with a search); the delegate reads the term when it paints, so views
        # only repaint (searchChanged)
        self.searchChanged.emit()

    def _recompute_matches(self):
        t = self.search_term
        self._matches = [i for i, r in enumerate(self.rows) if t and t in r.search_text()] if t else []

    @property
    def matches(self) -> list:
        return self._matches

    def find(self, from_row: Optional[int], forward: bool) -> Optional[int]:
        """Next match after (forward) or before ``from_row``: in the window, then in the
        loaded rows outside it (the window moves there); None: read older pages. No wrap."""
        m = self._matches
        r = None
        if m:
            if from_row is None:
                r = m[-1] if not forward else m[0]
            elif forward:
                i = bisect.bisect_right(m, from_row)
                r = m[i] if i < len(m) else None
            else:
                i = bisect.bisect_left(m, from_row) - 1
                r = m[i] if i >= 0 else None
        if r is not None or not self.search_term:
            return r
        t = self.search_term
        n = len(self._all_rows)
        span = range(n - self._bottom, n) if forward else range(self._hidden - 1, -1, -1)
        for i_all in span:
            if t in self._all_rows[i_all].search_text():
                return self._exposed(i_all + self._origin, True)
        return None

    def turn_beyond(self, forward: bool) -> Optional[int]:
        """The nearest turn start outside the window (the window moves there)."""
        n = len(self._all_rows)
        span = range(n - self._bottom, n) if forward else range(self._hidden - 1, -1, -1)
        for i_all in span:
            if self._all_rows[i_all].kind == "turn-start":
                return self._exposed(i_all + self._origin, True)
        return None

    def set_current_match(self, row: Optional[int]) -> None:
        old = self.current_match_row
        self.current_match_row = row
        for r in (old, row):
            if r is not None and 0 <= r < len(self.rows):
                ix = self.index_of(r)
                self.dataChanged.emit(ix, ix, [MATCH_ROLE])
        self.searchChanged.emit()

    def index_of(self, row: int) -> QModelIndex:
        return self.index(row, 0)

    # ------------------------------------------------------------------ status
    def stats(self) -> dict:
        events_loaded = len(self._events)
        hidden = sum(map(hidden_attempts, self._trackers))
        tail = self.pages[-1].page if self.pages else None
        return {
            "rows": len(self.rows), "hiddenRows": self._hidden + self._bottom, "events": events_loaded, "pages": len(self.pages),
            "hasMore": self.has_more, "baseSeq": self.base_seq,
            "face": "physical" if self.physical else "logical",
            "format": getattr(getattr(self.reader, "source", None), "kind", None),
            "hiddenAttempts": hidden, "showAttempts": self.show_attempts,
            "closure": len(tail.closure) if tail is not None and tail.tail else 0,
            "dropped": len(tail.dropped) if tail is not None and tail.tail else 0,
            "index": self.index_state,
            "indexMode": self.index_mode,
            # the index is a snapshot: a log that grew since has at least its newest seq + 1 events
            "indexedEvents": (max(self.seq_index.events, (tail.last_seq if tail is not None and tail.last_seq
                                                          is not None else -1) + 1)
                              if self.seq_index is not None else None),
            "loading": self.loading, "matches": len(self._matches),
            "live": self.live_state,
        }
