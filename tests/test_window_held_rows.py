"""Rows of dropped pages are freed (issue 36): once the window drops pages far from the exposed
rows (``app.ui.history.shed``), nothing else in the window keeps their rows (and the decoded
events the rows hold) alive.  Before, the delegate's row-height cache held every row ever laid
out, so scrolling up a long log kept the events of every page read.

On a generated log of many pages, in the real window: the rows of the older pages loaded after a
first scroll are tracked by weak references; after scrolling much further up (those pages are
dropped), every tracked row still alive belongs to a page the window holds."""
from __future__ import annotations

import gc
import weakref

import pytest

from app.tools.synth import SessionSynth, write_jsonl

from test_parked_selection import _scroll_until
from test_ui_history import WAIT, make_window, open_and_wait  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    path = tmp_path_factory.mktemp("held") / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=7), turns=60)
    return str(path)


def _held_rows(h) -> set:
    w = h.window
    pages = list(w.pages) + list(w.tail_pages)
    return {id(r) for lp in pages for pr in lp.faces.values() for r in pr.rows} | \
        {id(r) for lp in pages for r in lp.row_cache.values()}


def test_rows_of_dropped_pages_are_freed(qtbot, make_window, log):  # noqa: F811
    win = make_window(page_size=20)
    h = open_and_wait(qtbot, win, log)
    qtbot.waitUntil(lambda: h.index_state == "ready", timeout=WAIT * 2)   # (pages are dropped once they can be read again)
    w = h.window
    # no row selected: a parked row's page is kept, and the pages between it and the window with it
    # (test_parked_selection.py); here the pages scrolled past must go
    win.view.selectionModel().clear()
    win.view.setCurrentIndex(win.view.model().index(-1, 0))
    assert _scroll_until(qtbot, win, h, lambda: w.older_read >= 3)
    tail = {id(lp) for lp in w.pages if lp.page.tail}
    tracked = [weakref.ref(r) for lp in w.pages if id(lp) not in tail
               for r in lp.rows_for(w.physical, w.show_attempts).rows]
    assert len(tracked) > 20
    first = [weakref.ref(lp) for lp in w.pages if id(lp) not in tail]
    assert _scroll_until(qtbot, win, h, lambda: w.older_read >= 12 or not h.has_more, steps=1200)
    qtbot.waitUntil(lambda: win.view.settled() and not h.loading, timeout=WAIT)   # (no slide or read pending)
    assert not [lp for lp in w.pages for ref in first if ref() is lp], \
        f"the first pages read are still loaded ({w.older_read} read)"
    gc.collect()
    held = _held_rows(h)
    alive = [ref() for ref in tracked if ref() is not None]
    stray = [r for r in alive if id(r) not in held]
    assert not stray, f"{len(stray)} of {len(tracked)} rows of dropped pages still held (e.g. {stray[0].key})"
