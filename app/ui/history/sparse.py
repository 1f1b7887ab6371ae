"""*Errors only* on a long log (issue 29): only the pages that hold errors are read.

With the outline's error seqs known (from the background pass or its cache), the errors older than
the pages that end the log are read one stored row each (the outline says where each is stored), or,
where that is not known, one read per index segment that holds any of them (nothing between two
segments is read), and put together as ONE page of those rows: the window shows it above the pages that end the log
(:meth:`~app.ui.history.jumps.PageJumps.set_filter`).  The page says nothing older exists (its rows are
not contiguous: paging older from it would mean nothing); turning the filter off puts the window back on
the pages that end the log.

Pure (no Qt): :func:`sparse_job` runs in a worker thread like the other page jobs.
"""
from __future__ import annotations

import time
from typing import Any, Optional

from ...log.format.model import is_event
from .pages import LoadedPage, counted_page, loaded_page, compute_views, read_range


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


def _row_events(rr: Any, seq: int, where: Any) -> list[Any]:
    """The event ``seq`` read from its own stored row (``where``: the outline's (pos, offset, line));
    [] when the row is not there any more (the caller reads its segment instead)."""
    pos, off, line = where
    if isinstance(pos, list):
        pos = tuple(pos)                   # (a zstd position, from the saved outline's JSON)
    try:
        raw = rr.raw_at(pos)
    except (TypeError, OSError, ValueError, StopIteration):   # (a SQLite row has no file position)
        return []
    got, _ = rr.reader.codec.decode_row(raw, pos=pos, offset=off, line=line)
    return [it for it in got if is_event(it) and it.seq == seq]


def sparse_page(reader: Any, seqs: list[int], check: Any = None, where: Optional[dict[int, Any]] = None) -> Any:
    """A :class:`~app.log.index.reader.Page` of the stored events ``seqs``, oldest first; nothing older is
    said to exist.  A seq whose row is known (``where``: seq -> (pos, offset, line), from the outline) is
    read from that row alone; the others from their index segments (:func:`error_groups`)."""
    from ...log.format.lazyrows import RowReader
    from ...log.index.reader import Page
    rr = RowReader(reader)
    found: dict[int, Any] = {}
    rest: list[int] = []
    for s in sorted(set(seqs)):
        if check is not None:
            check()
        got = _row_events(rr, s, where[s]) if where and s in where else []
        if got:
            found[s] = got[0]
        else:
            rest.append(s)
    wanted = set(rest)
    for lo, hi in error_groups(reader.index, rest):
        if check is not None:
            check()
        for it in read_range(reader, lo, hi).items:
            if is_event(it) and it.seq in wanted:        # (only the errors: not the rows between two of them)
                found.setdefault(it.seq, it)
    items = [found[s] for s in sorted(found)]
    return Page(items=items, has_more=False, token=None, tail=False, messages=0)


def sparse_job(job: Any, reader: Any, seqs: list[int], where: Optional[dict[int, Any]], physical: bool,
               show_attempts: bool, expanded: Any = None, sindex: Any = None) -> LoadedPage:
    """The worker body: :func:`sparse_page` as a loaded page (rows, views, surface statuses)."""
    t0 = time.perf_counter()
    page = sparse_page(reader, seqs, job.check, where)
    job.check()
    views = compute_views(page.items)
    lp = loaded_page(page, views, time.perf_counter() - t0, physical, show_attempts, sindex=sindex, expanded=expanded)
    lp.sparse = True
    lp.faces.clear()                  # (rows built before the mark: built again without gap rows)
    lp.rows_for(physical, show_attempts)
    return counted_page(lp)
