"""*Errors only* on a long log (issue 29): only the pages that hold errors are read.

With the outline's error seqs known (from the background pass or its cache), the errors older than
the pages that end the log are read one stored row each (the outline says where each is stored), or,
where that is not known, one read per index segment that holds any of them (nothing between two
segments is read), and put together as ONE page of those rows: the window shows it above the pages that end the log
(:meth:`~app.ui.history.jumps.PageJumps.set_filter`).  The page says nothing older exists (its rows are
not contiguous: paging older from it would mean nothing); turning the filter off puts the window back on
the pages that end the log.

A row of a v2+ log is read through its lean record (:mod:`app.log.format.fastrows`, where the exact decoder
would read it with no problem) as a :class:`~app.log.format.lazyevent.LazyEvent`, whose payload is decoded when
first read (its row shown, inspected): the page's attempts, counts and filter answers come from the records
(:func:`lean_tracker`, :func:`lean_tally`, ``lazyevent.lean_error``).  :data:`LEAN` off: every row decoded the
exact way, as before (the tests compare the two pages).

Pure (no Qt): :func:`sparse_job` runs in a worker thread like the other page jobs.
"""
from __future__ import annotations

import time
from operator import itemgetter
from typing import Any, Optional

from ...log.fold.attempts import AttemptTracker
from ...log.format import fastrows as fr
from ...log.format.lazyevent import LazyEvent, lean_decoders, lean_error, lean_events
from ...log.format.model import is_event
from ...log.gcpause import collector_paused
from .lazyviews import lazy_views
from .row_kind import RowKind
from .pages import LoadedPage, counted_page, loaded_page, read_range

_FILTERED = (RowKind.TOOL_RESULT, RowKind.TURN_END)      # rows whose payload *Errors only*'s filter reads (row_is_error)
_KEPT = ("tool/result", "turn/end")     # events whose lean record the page keeps (lean_error) once it is built
LEAN = True     # rows read through their lean records, payloads decoded when shown (False: the exact path, as before)


def error_groups(index: Any, seqs: list[int]) -> list[tuple[int, int]]:
    """[lo, hi) ranges to read for ``seqs`` (sorted): one per index segment holding any of them (the page keeps
    only ``seqs`` of what it decodes)."""
    groups: list[tuple[int, int]] = []
    seg = None
    for s in seqs:
        i = index.locate(s) if index is not None else None
        if groups and i is not None and i == seg:
            groups[-1] = (groups[-1][0], s + 1)
        else:
            groups.append((s, s + 1))
            seg = i
    return groups


FIRST_READ = 4096        # bytes read at a row's offset first (an error row is ~0.4 KiB; a longer row reads on)


def rows_at(src: Any, offsets: list[int], out: dict[int, bytes], first: int = FIRST_READ) -> dict[int, bytes]:
    """The stored row (its bytes up to its newline, or the end of the file) at each file offset of ``offsets``
    (sorted), into ``out``: one ordered pass, each read a few KiB at the first offset it does not hold yet, so
    that rows close together come from one read.  Exactly what ``RowReader.raw_at`` gives for each, without its
    64 KiB read per row.  ``out`` keeps the rows read before an error (:class:`OSError`, the source changed)."""
    buf, at = b"", 0                       # buf holds the file's bytes [at, at + len(buf))
    for off in offsets:
        want = first
        while True:
            rel = off - at
            if 0 <= rel <= len(buf):
                nl = buf.find(b"\n", rel)
                if nl >= 0 or at + len(buf) >= src.size:
                    out[off] = buf[rel:nl if nl >= 0 else len(buf)]
                    break
                want = max(want, (len(buf) - rel) * 4)     # (a long row: read it on, from its start)
            buf = src.pread(min(want, src.size - off), off) if off < src.size else b""
            at = off
    return out


Known = tuple[Any, int, int, Any]       # an error's stored row: (pos, seq, offset, line)


def _stored_rows(rr: Any, known: list[Known]) -> list[Optional[bytes]]:
    """The stored row of each of ``known`` (sorted by place), None for a row that cannot be read so (the
    caller reads its segment instead)."""
    from ...log.source.sources import RawJsonlSource
    src = rr.reader.source
    if isinstance(src, RawJsonlSource) and all(type(k[0]) is int for k in known):
        by_off: dict[int, bytes] = {}
        try:
            rows_at(src, [k[0] for k in known], by_off)
        except (OSError, ValueError):
            pass
        return [by_off.get(k[0]) for k in known]
    got: list[Optional[bytes]] = [None] * len(known)
    for i, k in enumerate(known):            # (zstd: one frame decoded for all its rows, in frame order)
        try:
            got[i] = rr.raw_at(k[0])
        except (TypeError, OSError, ValueError, StopIteration):   # (a SQLite row has no file position)
            break
    return got


def _row_events(rr: Any, seqs: list[int], where: dict[int, Any]) -> dict[int, Any]:
    """seq -> the event read from its own stored row (``where``: the outline's (pos, offset, line)), for each of
    ``seqs`` whose row is known and still holds it (the others: the caller reads their segments)."""
    known: list[Known] = []
    get = where.get
    for s in seqs:
        w = get(s)
        if w is not None:
            pos = w[0]
            known.append((tuple(pos) if isinstance(pos, list) else pos, s, w[1], w[2]))  # (zstd: JSON lists)
    known.sort(key=itemgetter(0))
    codec = rr.reader.codec
    decode = codec.decode_row
    decs = lean_decoders(codec) if LEAN else None
    found: dict[int, Any] = {}
    got = [(k, raw) for k, raw in zip(known, _stored_rows(rr, known)) if raw is not None]
    lean = lean_events(codec, decs, [(raw, pos, off, line) for (pos, _s, off, line), raw in got]) if decs else []
    for i, ((pos, s, off, line), raw) in enumerate(got):
        ev = lean[i] if lean else None
        if ev is not None and ev.seq == s:
            found[s] = ev
            continue
        for it in decode(raw, pos=pos, offset=off, line=line)[0]:
            if is_event(it) and it.seq == s:
                found[s] = it
                break
    return found


def sparse_page(reader: Any, seqs: list[int], check: Any = None, where: Optional[dict[int, Any]] = None) -> Any:
    """A :class:`~app.log.index.reader.Page` of the stored events ``seqs``, oldest first; nothing older is
    said to exist.  The seqs whose rows are known (``where``: seq -> (pos, offset, line), from the outline)
    are read from those rows alone, in one ordered pass (:func:`rows_at`); the others from their index
    segments (:func:`error_groups`)."""
    from ...log.format.lazyrows import RowReader
    from ...log.index.reader import Page
    rr = RowReader(reader)
    order = sorted(set(seqs))
    if check is not None:
        check()
    found = _row_events(rr, order, where) if where else {}
    rest = [s for s in order if s not in found]
    wanted = set(rest)
    for lo, hi in error_groups(reader.index, rest):
        if check is not None:
            check()
        for it in read_range(reader, lo, hi).items:
            if is_event(it) and it.seq in wanted:        # (only the errors: not the rows between two of them)
                found.setdefault(it.seq, it)
    items = [found[s] for s in sorted(found)]
    return Page(items=items, has_more=False, token=None, tail=False, messages=0)


NEWEST = 256            # errors read first, as a page of their own, when there are many (the view sits on the log's end)


def newest_part(items: list[Any]) -> list[Any]:
    """The newest of ``items`` (events, oldest first) that start just after an error other than a failed
    attempt's chunk, so that no run of one message's attempts is split: their rows are the whole page's."""
    for i, it in enumerate(items):
        if it.type != "assistant/chunk":
            return items[i + 1:]
    return []


def _loaded(page: Any, t0: float, physical: bool, show_attempts: bool, expanded: Any, sindex: Any) -> LoadedPage:
    """:func:`~app.ui.history.pages.loaded_page` of the page, counted (:func:`~app.ui.history.pages.counted_page`),
    its attempts and counts read from the lean records of its :class:`~app.log.format.lazyevent.LazyEvent` rows (the
    payloads are decoded when a row is shown), its rows built once, without gap rows."""
    views = lazy_views(page.items)                  # (each card's view made when its row is first shown)
    if not LEAN:
        return counted_page(loaded_page(page, views, time.perf_counter() - t0, physical, show_attempts, sindex=sindex,
                                        expanded=expanded, sparse=True))
    events = [it for it in page.items if is_event(it)]
    lp = loaded_page(page, views, 0.0, physical, show_attempts, sindex=sindex, expanded=expanded, sparse=True,
                     tracker=lean_tracker(events))     # (the same events in both faces)
    for r in lp.rows_for(physical, show_attempts).rows:
        if r.kind in _FILTERED and type(r.event) is LazyEvent and lean_error(r.event) is None:
            r.event.load()                          # (decoded here, not by the window's filter on the UI thread)
    lean_tally(lp)
    for ev in events:                               # (the records the window still reads: its filter's, lean_error)
        if type(ev) is LazyEvent and ev.type not in _KEPT:
            ev.lean = None
    lp.elapsed = time.perf_counter() - t0
    return lp


def lean_tally(lp: LoadedPage) -> dict:
    """The summary's counts of the page (:func:`~app.ui.summary.page_tally`): those of its events not decoded from
    their lean records (what the tally reads of them: the turn, a tool call, a tool result's error blocks; a
    message's usage is read from its payload)."""
    from ..summary import seed_tally
    turns: set = set()
    calls = errors = 0
    rest = []
    for ev in lp.events.values():
        rec = ev.lean if type(ev) is LazyEvent else None
        if rec is None or rec.T == "assistant/message":
            rest.append(ev)
            continue
        d = rec.data
        if d.turn is not None:
            turns.add(d.turn)
        if rec.T == "tool/call":
            calls += 1
        elif rec.T == "tool/result" and any(b.isError for b in d.message.content):
            errors += 1
    return seed_tally(lp, rest, turns, calls, errors)


class PageTracker(AttemptTracker):
    """An attempt tracker of one page (never fed again once its rows are built), whose :meth:`attempt_of` is a
    look-up where every attempt is one settled event (first = last seq) in increasing seq order (a v2+ page: the
    binary search finds exactly the attempt of that seq), else the search."""

    _by_seq: Optional[tuple[int, Optional[dict[int, Any]]]] = None

    def attempt_of(self, seq: int) -> Any:
        got = self._by_seq
        if got is None or got[0] != len(self.attempts):
            got = self._by_seq = (len(self.attempts), _single(self.attempts))
        return super().attempt_of(seq) if got[1] is None else got[1].get(seq)


def _single(attempts: list) -> Optional[dict[int, Any]]:
    by: dict[int, Any] = {}
    last = -1
    for a in attempts:
        s = a.first_seq
        if type(s) is not int or a.last_seq != s or s <= last:
            return None
        by[s] = a
        last = s
    return by


def lean_tracker(events: list) -> Any:
    """:func:`~app.log.fold.attempts.find_attempts` (no text kept) of ``events``, read from the lean records of
    those not decoded: a log-only attempt settles from its record's stream, a boundary closes from its record's
    turn, a tool result or a turn's end adds nothing; any other event is applied as it is (its payload read)."""
    tr = PageTracker(keep_text=False)
    for ev in events:
        rec = ev.lean if type(ev) is LazyEvent else None
        if rec is None:
            tr.apply(ev)
            continue
        t = rec.T
        d = rec.data
        if t == "assistant/attempt":
            chunks, finish, usage = fr.stream_summary(d.stream)
            if usage is None and d.usage is not None:
                tr.apply(ev)                        # (the payload's usage: read as the payload holds it)
                continue
            tr.settle(t, ev.seq, (d.turn, d.step), chunks, finish, usage, None)
        elif t in ("step/end", "turn/end", "turn/start", "step/start"):
            tr.boundary(t, d.turn)
        elif t in ("assistant/message", "assistant/chunk", "llm/retry", "llm/retry-started"):
            tr.apply(ev)
    return tr


def sparse_job(job: Any, reader: Any, seqs: list[int], where: Optional[dict[int, Any]], physical: bool,
               show_attempts: bool, expanded: Any = None, sindex: Any = None) -> LoadedPage:
    """The worker body: :func:`sparse_page` as a loaded page (rows, views, surface statuses), with the
    collector held off (:func:`~app.log.gcpause.collector_paused`).  With many errors, the newest (:data:`NEWEST`,
    :func:`newest_part`) go first to ``job.partial`` as a page of their own: what the window shows first, while
    the whole page is read.

    The page built, the heap is frozen (``gc.freeze``, what the window does once it installs the page:
    :func:`~app.ui.workers.freeze_heap`) before the collector is back: else its first young pass walks the whole
    page's objects (tens of ms at 1 GB, with the GIL held), which all live on and are frozen just after."""
    from ..workers import freeze_heap
    with collector_paused():
        lp = _sparse_job(job, reader, seqs, where, physical, show_attempts, expanded, sindex)
        freeze_heap()
        return lp


def _sparse_job(job: Any, reader: Any, seqs: list[int], where: Optional[dict[int, Any]], physical: bool,
                show_attempts: bool, expanded: Any, sindex: Any) -> LoadedPage:
    from ...log.index.reader import Page
    t0 = time.perf_counter()
    order = sorted(set(seqs))
    partial = getattr(job, "partial", None)
    if partial is not None and len(order) > 2 * NEWEST:
        items = newest_part(sparse_page(reader, order[-NEWEST:], job.check, where).items)
        if items:
            page = Page(items=items, has_more=False, token=None, tail=False, messages=0)
            partial.emit(_loaded(page, t0, physical, show_attempts, expanded, sindex))
    page = sparse_page(reader, order, job.check, where)
    job.check()
    return _loaded(page, t0, physical, show_attempts, expanded, sindex)
