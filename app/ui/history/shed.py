"""Pages far from the exposed window are dropped (issue 36: the window's memory stays flat).

Scrolling up adds older pages (``RowWindow.add_older_page``); without this every page read
stayed loaded (its events, rows and surface statuses) for as long as the log was open, so the
window's heap grew with how far the user scrolled.  Once more than ``KEEP_PAGES`` pages are
loaded, the newest pages whose rows all sit below the exposed window (the hidden ``bottom``)
are dropped: the window is then in the state a jump leaves (``tail_pages`` holds the page that
ends the log, for the live feed; ``fetch_newer`` reads the dropped pages again through the seq
index when the user scrolls back down).  The mirror case (newer pages after a jump, the oldest
dropped) keeps ``page.has_more`` of the new first page, so ``request_older`` reads them again.

Pure bookkeeping on a :class:`~app.ui.history.window.RowWindow` (no Qt): the exposed rows do not
change, so no change record is needed.  Once pages are dropped the freed heap is given back
(``app.ui.memory.trim``: malloc_trim).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from ..memory import trim

KEEP_PAGES = 2       # loaded pages kept at least (the exposed window spans one or two; a page of
                     # decoded events is ~11 MB of the window's memory: issue 36, bench/window_memory.py)


def _forget_rows(w, rows: list, pr_seq: int, newest: bool, lp) -> None:
    """Positions, seq ranges, tracker and events of a dropped page (its rows are ``rows``)."""
    for r in rows:
        w.all_pos.pop(id(r), None)
        w.all_key.pop(r.key, None)
    if pr_seq:
        if newest:
            del w.seq_rows[-pr_seq:]
            del w.seq_firsts[-pr_seq:]
        else:
            del w.seq_rows[:pr_seq]
            del w.seq_firsts[:pr_seq]
    if w.trackers:
        w.trackers.pop(-1 if newest else 0)
    ev = w.events
    for seq, e in lp.events.items():
        if ev.get(seq) is e:
            del ev[seq]


def shed_newer(w, keep: Optional[int] = None, pinned: Optional[Callable[[list], bool]] = None) -> int:
    """Drop the newest loaded pages lying wholly below the exposed window (keep ``keep``
    pages at least; never a page whose rows ``pinned`` holds, as a parked selection's: the page
    ending the log then stays aside for the live feed).  Returns the number of pages dropped."""
    keep = KEEP_PAGES if keep is None else keep
    dropped = 0
    face = (w.physical, w.show_attempts)
    while len(w.pages) > keep:
        lp = w.pages[-1]
        pr = lp.rows_for(*face)
        rows = w.rows_of(pr)
        if len(rows) > w.bottom:
            break                                # some of its rows are exposed (or above)
        if pinned is not None and pinned(rows):
            break                                # a parked row's page stays (parking.py)
        if w.attached and lp.page.tail:
            w.tail_pages = [lp]                  # the page ending the log stays for the live feed
        elif w.attached:
            break                                # no page ending the log to come back to
        n_seq = len(w.seq_rows_of(pr))
        _forget_rows(w, rows, n_seq, True, lp)
        w.pages.pop()
        if rows:
            del w.all_rows[len(w.all_rows) - len(rows):]
        w.set_window(w.hidden, w.bottom - len(rows))
        dropped += 1
    if dropped:
        trim()                                   # the dropped pages' heap pages go back to the system
    return dropped


def shed_older(w, keep: Optional[int] = None, pinned: Optional[Callable[[list], bool]] = None) -> int:
    """Drop the oldest loaded pages lying wholly above the exposed window (after a jump, while
    newer pages are read); the new first page still says older rows exist (``has_more``)."""
    keep = KEEP_PAGES if keep is None else keep
    dropped = 0
    face = (w.physical, w.show_attempts)
    while len(w.pages) > keep:
        lp = w.pages[0]
        if lp.page.base_seq is None or not w.pages[1].page.has_more:
            break
        pr = lp.rows_for(*face)
        rows = w.rows_of(pr)
        if len(rows) > w.hidden or (pinned is not None and pinned(rows)):
            break                                # some of its rows are exposed (or below), or a parked row
        n_seq = len(w.seq_rows_of(pr))
        _forget_rows(w, rows, n_seq, False, lp)
        w.pages.pop(0)
        k = len(rows)
        del w.all_rows[:k]
        w.origin += k
        w.set_window(w.hidden - k, w.bottom)
        dropped += 1
    if dropped:
        trim()
    return dropped
