"""History pages: a page read from the log, its rows per face, and the worker bodies.

Pure (no Qt): the page jobs run in :mod:`app.ui.workers` threads and only poll
``job.check()`` / ``job.report()``; :class:`~app.ui.history.window.RowWindow` holds the
loaded pages and :class:`~app.ui.history.model.HistoryModel` submits the jobs.

* Faces: logical (``Page.logical_items``: closure rows appended, tail rows a repair would
  drop removed) or physical (``Page.items``: exactly the stored rows, bad rows included).
  Hidden (failed) attempts appear only when ``show_attempts`` is on.
* Live: a tail page grown by live rows is cut once it holds more than ``LIVE_SPLIT``
  messages (the newer part keeping ``LIVE_KEEP``), like the host pages.
"""
from __future__ import annotations

import bisect
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Optional

from ...log.fold.attempts import find_attempts
from ...log.fold.inflight import in_flight, live_items
from ...log.format.model import is_event
from ...log.index.reader import extend_tail_page, row_key, split_page
from ...log.source.sources import RawJsonlSource
from ...store.faces import open_reader
from ...store.indexer import build_index_isolated
from .rows import Row, build_rows, result_call_id
from .row_kind import RowKind
from .compaction import group_compactions, page_groups, page_surface_of

from ...presenters.registry import views_for_page      # (the package registers the built-in presenters)

FIRST_MESSAGES = 6      # messages of the tail page painted first (the rest of the first page follows)
TAIL_READ_BLOCK = 1 << 15  # read/decode granularity for that tail page (only its last few blocks are read)
PAINT_WAIT = 0.25       # seconds the rest waits for the first paint at most
UI_READ_BLOCK = 1 << 17  # read/decode granularity of the window's JSONL reader (pages, tail)
LIVE_SPLIT = 24          # a live tail page holding more messages than this is cut ...
LIVE_KEEP = 12           # ... keeping this many in the newest page


def compute_views(events: list) -> dict:
    """Presenter views for one page ({seq: view}); a failing presenter -> {}."""
    try:
        return dict(views_for_page(events) or {})
    except Exception:  # a presenter bug must not hide the page: generic cards instead
        return {}


_HIDDEN: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()


def hidden_attempts(tracker) -> int:
    """Failed attempts a page hides by default (a page's tracker never changes once built:
    counted once, not at every status update; kept here, beside the tracker, not in it)."""
    n = _HIDDEN.get(tracker)
    if n is None:
        n = _HIDDEN[tracker] = sum(1 for a in tracker.attempts if a.hidden_by_default)
    return n


@dataclass
class LoadedPage:
    page: Any                 # app.log.index.reader.Page
    views: dict
    elapsed: float            # seconds in the worker
    faces: dict = field(default_factory=dict)    # (physical, show_attempts) -> PageRows
    events: dict = field(default_factory=dict)   # seq -> Event (stored events and closure rows)
    trackers: dict = field(default_factory=dict)  # physical -> AttemptTracker (same for both attempt settings)
    row_cache: dict = field(default_factory=dict)  # rows shared between faces (documents stay cached)
    surface: dict = field(default_factory=dict)   # seq -> surface status (app.log.fold.surface.row_surface)
    compactions: dict = field(default_factory=dict)  # compactionId -> compaction_group (brackets on this page)
    live: Optional[bool] = None  # the writer: True live (the tail's logical face is the live face, no
                                 # closure), False gone (a call it left streaming is cut off), None unknown
    expanded: Any = None        # the window's set of expanded compactionIds (shared; None: all collapsed)
    sindex: Any = None          # the SurfaceIndex the statuses came from (fed by live rows in the live job)
    sparse: bool = False        # rows of scattered segments (*Errors only*: sparse.py): its seq skips are no gaps

    @property
    def face_neutral(self) -> bool:
        """Physical and logical rows are the same (no closure, no dropped or bad rows)."""
        p = self.page
        if p.tail and (p.closure or p.dropped):
            return False
        return all(is_event(it) for it in p.items)

    def rows_for(self, physical: bool, show_attempts: bool) -> PageRows:
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


def page_items(page, physical: bool, live: Optional[bool] = False) -> list:
    if physical:
        return list(page.items)
    if page.tail:
        # the live face: the open turn as it stands (in flight), no crash closure
        return live_items(page) if live is True else page.logical_items()
    return [it for it in page.items if is_event(it)]


def build_page_rows(lp: LoadedPage, physical: bool, show_attempts: bool) -> PageRows:
    """Rows of one page in one face (pure; runs in the page worker for the current face).

    Attempts never straddle pages (a page starts at a message's first cited chunk), so
    per-page attempt tracking equals whole-log tracking for the rows shown."""
    p = lp.page
    items = page_items(p, physical, lp.live)
    tracker = lp.trackers.get(physical)
    if tracker is None:
        tracker = lp.trackers[physical] = find_attempts([it for it in items if is_event(it)], keep_text=False)
    dropped = set()
    if physical and p.tail:
        dropped = {row_key(d) for d in p.dropped if is_event(d)}
    rows = build_rows(items, tracker, lp.views, show_attempts, dropped, lp.row_cache)
    if not lp.sparse:
        rows = with_gap_rows(rows, [it for it in items if is_event(it) and not it.synthesized], lp.row_cache)
    if p.tail and lp.live is False and p.closure:
        # the writer is gone: a call it left streaming is not "in flight" any more (both faces)
        rows = [_writer_gone(r, lp.row_cache) if r.kind == RowKind.STREAMING else r for r in rows]
    elif not p.tail or (lp.live is False and not p.closure):
        # no writer, nothing open: a call whose message is not in the log (a seq gap) ended incomplete
        rows = [_ended(r, lp.row_cache) if r.kind == RowKind.STREAMING else r for r in rows]
    elif p.tail and lp.live is True and p.tail_state is not None:
        # the live face: tool calls with no result yet are running
        fl = in_flight(p.tail_state.tracker)
        running = {c.get("seq") for c in (fl or {}).get("runningTools", [])}
        if running:
            rows = [_marked(r, "running", lp.row_cache) if r.kind == RowKind.TOOL_CALL and r.seq in running else r
                    for r in rows]
    for r in rows:
        st = lp.surface.get(r.seq) if r.event is not None and not r.synthesized else None
        if st != r.surface:
            r.surface = st
            r.touch()
    if lp.compactions:
        rows = group_compactions(rows, lp.compactions, lp.expanded or (), lp.row_cache)
    seq_rows = []
    for r in rows:
        if r.seq is None:
            continue
        lo = r.first_seq if r.first_seq is not None else r.seq
        hi = max(r.seq, r.last_seq if r.last_seq is not None else r.seq)
        seq_rows.append((lo, hi, r))
    seq_rows.sort(key=lambda x: (x[0], x[1] - x[0]))
    return PageRows(rows, tracker, seq_rows)


def link_results(calls_from: LoadedPage, results_in: LoadedPage) -> list:
    """Tool results of ``results_in`` whose tool/call was not loaded with them learn it from
    ``calls_from`` (the tool name on the card); returns the rows changed (touched)."""
    calls = {ev.data.get("callId"): ev for ev in calls_from.events.values()
             if ev.type == "tool/call" and isinstance(ev.data, dict)}
    changed: list = []
    if not calls:
        return changed
    for face in results_in.faces.values():
        for r in face.rows:
            if r.kind == RowKind.TOOL_RESULT and r.call is None and r.event is not None:
                c = calls.get(result_call_id(r.event))
                if c is not None:
                    r.call = c
                    r.touch()
                    changed.append(r)
    return changed


def with_gap_rows(rows: list, events: list, cache: dict) -> list:
    """A ``gap`` row where the page's stored seqs skip (before the first row at or after the
    seq that follows the gap)."""
    gaps = []
    prev = None
    for ev in events:
        if prev is not None and ev.seq > prev + 1:
            gaps.append((prev + 1, ev.seq - 1))
        prev = ev.seq if prev is None else max(prev, ev.seq)
    if not gaps:
        return rows
    out: list = []
    gi = 0
    for r in rows:
        lo = r.first_seq if r.first_seq is not None else r.seq
        while gi < len(gaps) and lo is not None and lo > gaps[gi][1]:
            a, b = gaps[gi]
            key = ("gap", a)
            g = cache.get(key)
            if g is None:
                g = cache[key] = Row(key=key, kind=RowKind.GAP, seq=None, first_seq=a, last_seq=b)
            out.append(g)
            gi += 1
        out.append(r)
    return out


def _marked(r, mark: str, cache: dict):
    """The same row with one more mark (cached: documents stay cached)."""
    key = (mark,) + r.key + (id(r),)
    got = cache.get(key)
    if got is None:
        got = cache[key] = Row(key=r.key, kind=r.kind, seq=r.seq, first_seq=r.first_seq, last_seq=r.last_seq,
                               event=r.event, attempt=r.attempt, view=r.view, marks=r.marks | {mark},
                               chunks=r.chunks, call=r.call)
    return got


def _writer_gone(r, cache: dict):
    """A streaming row whose writer is gone: the same row marked ``stopped``."""
    key = ("stopped",) + r.key
    got = cache.get(key)
    if got is None:
        got = cache[key] = Row(key=r.key, kind=RowKind.STREAMING, seq=r.seq, first_seq=r.first_seq, last_seq=r.last_seq,
                               event=r.event, attempt=r.attempt, view=r.view,
                               marks=(r.marks - {"streaming"}) | {"stopped"}, chunks=r.chunks, call=r.call)
    return got


def _ended(r, cache: dict):
    """A "streaming" row of a finished log (or of an older page): an attempt that ended without its
    message in the log, drawn as the incomplete model call it is, never "in flight"."""
    key = ("ended",) + r.key
    got = cache.get(key)
    if got is None:
        got = cache[key] = Row(key=r.key, kind=RowKind.ATTEMPT_OPEN, seq=r.seq, first_seq=r.first_seq,
                               last_seq=r.last_seq, event=r.event, attempt=r.attempt, view=r.view,
                               marks=r.marks - {"streaming"}, chunks=r.chunks, call=r.call)
    return got


def loaded_page(page, views, elapsed, physical, show_attempts, row_cache: Optional[dict] = None,
            sindex: Any = None, live: Optional[bool] = None, expanded: Any = None, sparse: bool = False,
            tracker: Any = None) -> LoadedPage:
    """The page with its rows built (``tracker``: its attempts, for both faces, when the caller made them)."""
    lp = LoadedPage(page, views, elapsed, sparse=sparse)
    lp.live, lp.expanded, lp.sindex = live, expanded, sindex
    if row_cache is not None:
        lp.row_cache = row_cache
    if sindex is not None:
        lp.surface, lp.compactions = page_surface_of(sindex, page), page_groups(sindex, page)
    for it in page.items:
        if is_event(it):
            lp.events.setdefault(it.seq, it)
    if page.tail:
        for ev in page.closure:
            lp.events.setdefault(ev.seq, ev)
    if tracker is not None:
        lp.trackers[False] = lp.trackers[True] = tracker
    lp.rows_for(physical, show_attempts)
    return lp


def counted_page(lp: LoadedPage) -> LoadedPage:
    """An older, jump or live page with the session summary's counts of it made here, in the
    worker (the summary then only adds records up on the UI thread; the first tail page is
    counted there, after its first paint)."""
    from ..summary import page_tally
    page_tally(lp)
    return lp


# --------------------------------------------------------------------------- worker bodies

def writer_is_live(path: str, session_id: Optional[str]) -> Optional[bool]:
    """A writer holds the session's lock (v1+): the tail opens in the live face.  Without lock
    semantics (v0, SQLite) a recent file time proves nothing (a copy is recent too): the live
    face waits for growth the follower observes (:class:`~app.ui.history.live_feed.LiveFeed`)."""
    if session_id is not None:
        return None
    try:
        from ...store.writerlock import lock_signal
        return lock_signal(path)      # True held, False nobody holds it (the writer is gone), None no lock
    except Exception:        # no answer: the crash closure (the reader's default)
        return None


def surface_job(job, path: str, session_id: Optional[str], read: bool = True) -> Any:
    """The surface index of the log (one streaming pass decoding only the rows that can change
    the surface), on its own reader, after the tail page is shown: the first paint does not wait
    for it (RowWindow.set_surface applies it to every loaded page).  Saved in the index cache
    (:func:`~app.store.surface_cache.cached_surface`): a log opened before needs no pass, a grown one only its new rows.
    ``read`` False: None when the whole log would have to be read (the whole-log pass brings it instead)."""
    from ...store.surface_cache import cached_surface
    r = open_reader(path, session_id)
    try:
        job.check()
        return cached_surface(r, make=None if read else _not_read)[0]
    except _NotRead:
        return None
    finally:
        r.close()


class _NotRead(Exception):
    pass


def _not_read(_end: Any) -> Any:
    raise _NotRead


def _open_job(job, path: str, session_id: Optional[str], page_size: int, physical: bool, show_attempts: bool,
              expanded: Any = None):
    """(reader, tail page of ``page_size`` messages)."""
    reader, lp, _rest = open_split_job(job, path, session_id, page_size, physical, show_attempts, expanded)
    return reader, lp


def open_split_job(job, path: str, session_id: Optional[str], page_size: int, physical: bool,
                    show_attempts: bool, expanded: Any = None, painted: Any = None):
    """(reader, tail page, rest).  With ``painted`` (a threading.Event) the tail page holds
    ``FIRST_MESSAGES`` messages and is streamed (``job.stream``) as soon as it is built, so the
    window paints it; ``rest`` is the older page completing the first ``page_size`` messages, read
    once ``painted`` is set (or after ``PAINT_WAIT`` seconds).  ``rest`` None: the tail page holds
    the whole first page."""
    t0 = time.perf_counter()
    reader = open_reader(path, session_id)
    first = min(page_size, FIRST_MESSAGES) if painted is not None else page_size
    raw = reader.source if isinstance(reader.source, RawJsonlSource) else None
    if raw is not None:   # rows are decoded by whole blocks: small ones waste little (smaller still for the first paint)
        raw.block = TAIL_READ_BLOCK if first < page_size else UI_READ_BLOCK
    job.check()
    live = writer_is_live(path, session_id)
    page = reader.tail_page(first)
    if raw is not None:
        raw.block = UI_READ_BLOCK
    job.check()
    evs = [it for it in page.items if is_event(it)] + list(page.closure)
    views = compute_views(evs)
    lp = loaded_page(page, views, time.perf_counter() - t0, physical, show_attempts, live=live, expanded=expanded)
    if first >= page_size or not page.has_more:
        return reader, lp, None
    job.stream((reader, lp))
    painted.wait(PAINT_WAIT)                  # the first paint does not share the GIL with the rest
    job.check()
    rest = older_job(job, reader, page, page_size - first, physical, show_attempts, expanded)
    return reader, lp, rest


def older_job(job, reader, page, page_size: int, physical: bool, show_attempts: bool, expanded: Any = None,
               sindex: Any = None):
    t0 = time.perf_counter()
    older = reader.page_before(page, page_size)
    views = compute_views([it for it in older.items if is_event(it)])
    return counted_page(loaded_page(older, views, time.perf_counter() - t0, physical, show_attempts, sindex=sindex,
                            expanded=expanded))


def seq_index_job(job, path: str, session_id: Optional[str]):
    """The seq index, scanned in a child process (app.store.indexer) so the scan does not
    compete with the UI thread for the GIL; this worker thread only waits on a pipe."""
    t0 = time.perf_counter()
    try:
        idx, mode = build_index_isolated(path, session_id, progress=job.report, cancelled=job)
    except InterruptedError:
        from ..workers import Cancelled
        raise Cancelled(job.name)
    if mode == "process" and not idx.mapped():
        idx = mapped_twin(path, session_id, idx)
    return idx, time.perf_counter() - t0, mode


def mapped_twin(path: str, session_id: Optional[str], idx):
    """The index the child just scanned and saved, read again through a map of its cache file
    when that file holds the same index (its arrays then stay in the file's pages, not in the
    window's anonymous memory: issue 36); else ``idx``."""
    from ...store.indexer import cached_only
    twin = cached_only(path, session_id, max_scan=0)
    if twin is None or not twin.mapped() or (len(twin), twin.events, twin.last, len(twin.mark_seq)) != \
            (len(idx), idx.events, idx.last, len(idx.mark_seq)):
        return idx
    return twin


def event_at_job(job, path: str, session_id: Optional[str], index, seq: int):
    r = open_reader(path, session_id)
    try:
        if index is not None:
            r.index = index
        return r.event_at(seq)
    finally:
        r.close()


def nearest_seq_job(job, path: str, session_id: Optional[str], index, offset: Optional[int], line: Optional[int]):
    """The seq of the stored event nearest a place in the log that has no seq of its own (a
    malformed row's byte offset or line, from the problems panel): the last event before it,
    else the first one after it; None when the log has no event.  Reads backward from the
    segment holding ``offset`` (raw JSONL with a seq index: one segment or two), else from the end."""
    from ...log.format.model import is_event as _is_event
    from ...log.index.reader import PageToken
    from ...log.source.sources import RawJsonlSource
    r = open_reader(path, session_id)
    try:
        token = None
        if index is not None:
            r.index = index
            if offset is not None and isinstance(r.source, RawJsonlSource) and len(index):
                i = bisect.bisect_right(index.seg_pos, offset) - 1
                if 0 <= i < len(index):
                    token = PageToken(end=index.seg_end[i], pos=None)

        def after(ev) -> bool:
            if offset is not None and ev.offset is not None and ev.offset >= 0:
                return ev.offset >= offset
            return line is not None and ev.line is not None and ev.line >= line
        nearest = None
        for k, (it, _end) in enumerate(r.backward_items(token)):
            if k % 256 == 0:
                job.check()
            if not _is_event(it) or it.synthesized:
                continue
            if after(it):
                nearest = it.seq                 # the oldest event after it so far
                continue
            return it.seq
        return nearest
    finally:
        r.close()


def _stale_live_row(key: tuple, row, region_start: int) -> bool:
    """Rows a live append may change: synthesized closers, and attempt/assistant rows of
    the turn still being written (their attempt gains chunks, a finish, a retry)."""
    if key[0] == "s":
        return True
    if key[0] == "a" or (key[0] == "e" and len(key) > 2 and key[2] == RowKind.ASSISTANT):
        return row.seq is None or row.seq >= region_start or (row.first_seq or 0) >= region_start
    return False


def live_job(job, lp: LoadedPage, rows: list, physical: bool, show_attempts: bool, prev_calls: list):
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
    sindex = lp.sindex
    if sindex is not None:           # the statuses of the new rows (an index fed, not rebuilt)
        sindex.feed(e for e in rows if is_event(e) and not e.synthesized and e.seq > sindex.last_seq)
    elapsed = time.perf_counter() - t0
    return [counted_page(loaded_page(part, views, elapsed, physical, show_attempts, cache, sindex=sindex, live=lp.live,
                             expanded=lp.expanded)) for part in parts]


# --------------------------------------------------------------------------- jumps (pages read by range)

_TURN_START = 0          # MARK_CODES of app.log.index.reader: turn/start, turn/end, assistant/message, end-seed
_MESSAGE = 2


def _marks(index):
    return index.mark_seq, index.mark_code


def bound_before(index, seq: int, want: int) -> int:
    """A page start at or before ``seq``, about ``want`` assistant messages back: the nearest
    turn start once ``want`` messages are collected (within ``want`` more), else just after
    a message (chunks of a message never straddle it).  0: the start of the log."""
    ms, mc = _marks(index)
    i = bisect.bisect_right(ms, seq) - 1
    n = 0
    msg_bound = None
    while i >= 0:
        s, c = ms[i], mc[i]
        if c == _TURN_START and n >= want:
            return s
        if c == _MESSAGE and s < seq:
            n += 1
            if n == want:
                msg_bound = s + 1
            elif n >= 2 * want and msg_bound is not None:
                return msg_bound
        i -= 1
    return 0


def bound_after(index, seq: int, want: int) -> Optional[int]:
    """A page end (exclusive) after ``seq``, about ``want`` assistant messages on: the next
    turn start once ``want`` messages are passed (within ``want`` more), else just after a
    message.  None: the end of the log."""
    ms, mc = _marks(index)
    i = bisect.bisect_right(ms, seq)
    n = 0
    msg_bound = None
    while i < len(ms):
        s, c = ms[i], mc[i]
        if c == _TURN_START and n >= want:
            return s
        if c == _MESSAGE:
            n += 1
            if n == want:
                msg_bound = s + 1
            elif n >= 2 * want and msg_bound is not None:
                return msg_bound
        i += 1
    return None


def range_around(index, seq: int, page_size: int) -> tuple:
    """[lo, hi) of a page holding ``seq`` with about ``page_size`` messages around it
    (hi None: to the end of the log)."""
    # a jump's page is small, as the tail's first one (FIRST_MESSAGES): the window grows as the user scrolls
    half = max(2, min(page_size // 4, FIRST_MESSAGES))
    return bound_before(index, seq, half), bound_after(index, seq, half)


def _forward_segment(reader, lo: int, hi: Optional[int]) -> Optional[int]:
    """The index segment to read ``[lo, hi)`` forward from (raw JSONL), when that decodes fewer
    rows outside the range than reading backward from the end of ``hi``'s segment (the start of
    the log: none at all); None: read backward."""
    idx = reader.index
    if hi is None or idx is None or not idx.monotonic or not isinstance(reader.source, RawJsonlSource):
        return None
    i, j = idx.locate(lo), idx.locate(hi)
    if i is None or j is None:
        return None

    def share(k: int, n: int) -> float:       # the part of segment k's bytes holding n of its seqs
        span = idx.last_seq[k] - idx.first_seq[k] + 1
        return (idx.seg_end[k] - idx.seg_pos[k]) * n / max(1, span)
    before = share(i, lo - idx.first_seq[i])
    after = share(j, idx.last_seq[j] - hi + 1)
    return i if before < after else None


def _read_forward(reader, i: int, lo: int, hi: int):
    """:func:`read_range` reading forward from index segment ``i`` (it holds ``lo``)."""
    from ...log.index.reader import MESSAGE_TYPES, Page, PageToken
    idx = reader.index
    collected: list = []
    bad: list = []                   # bad rows after the last event collected (kept if another follows)
    has_more = i > 0
    first_end = 0
    count = 0
    line0 = idx.line0[i]
    for seg in reader.source.forward(idx.seg_pos[i], line0 if line0 >= 0 else None):
        for it in reader.decode_segment(seg):
            if not is_event(it):
                if collected:
                    bad.append(it)
                else:
                    has_more = True          # older than the range's first event
                continue
            if it.seq < lo:
                has_more = True
                continue
            if it.seq >= hi:
                break
            if not collected:
                first_end = seg.end
            collected += bad
            bad = []
            collected.append(it)
            if it.type in MESSAGE_TYPES and it.surface_op == "append":
                count += 1
        else:
            continue
        break
    token = PageToken(end=first_end, pos=collected[0].pos) if collected and has_more else None
    return Page(items=collected, has_more=has_more, token=token, tail=False, messages=count)


def read_range(reader, lo: int, hi: Optional[int]):
    """A :class:`~app.log.index.reader.Page` of the stored rows with ``lo <= seq < hi`` (bad rows
    between them included), read through the index backward from the segment holding ``hi``,
    or forward from the one holding ``lo`` when that decodes less (the start of the log): no
    page in between is read.  Its token continues older pages as usual."""
    from ...log.index.reader import MESSAGE_TYPES, Page, PageToken
    i = _forward_segment(reader, lo, hi)
    if i is not None and hi is not None:
        return _read_forward(reader, i, lo, hi)
    token = reader.token_for_seq(hi) if hi is not None else None
    collected: list = []
    ends: list = []
    has_more = False
    count = 0
    for it, seg_end in reader.backward_items(token):
        if is_event(it):
            if hi is not None and it.seq >= hi:
                continue
            if it.seq < lo:
                has_more = True
                break
            if it.type in MESSAGE_TYPES and it.surface_op == "append":
                count += 1
        elif not collected:
            continue                 # bad rows after the range's last event belong to the next page
        collected.append(it)
        ends.append(seg_end)
    while collected and not is_event(collected[-1]):   # bad rows before the range's first event: older
        collected.pop()
        ends.pop()
        has_more = True
    collected.reverse()
    ends.reverse()
    token = PageToken(end=ends[0], pos=collected[0].pos) if collected and has_more else None
    return Page(items=collected, has_more=has_more, token=token, tail=False, messages=count)


def range_job(job, reader, lo: int, hi: Optional[int], physical: bool, show_attempts: bool,
               expanded: Any = None, sindex: Any = None):
    t0 = time.perf_counter()
    page = read_range(reader, lo, hi)
    job.check()
    views = compute_views([it for it in page.items if is_event(it)])
    return counted_page(loaded_page(page, views, time.perf_counter() - t0, physical, show_attempts, sindex=sindex,
                            expanded=expanded))
