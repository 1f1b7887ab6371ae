"""Speed work in the window (issue 15): the first paint shows a small tail page and the rest of the
first page follows, rows are painted from cached pixmaps, and documents of the hidden rows next to
the window are built in idle time.  Generated logs (app/tools/synth.py), offscreen."""
from __future__ import annotations

import pytest

from app.log.format.model import is_event
from app.log.index.reader import LogReader
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history import pages as P

from test_ui_history import WAIT, make_window  # noqa: F401 (fixture)
from test_find_leftovers import _config_dir  # noqa: F401 (the window's config dir)


@pytest.fixture(scope="module")
def long_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("speed") / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=21), turns=40)
    return str(path)


def test_first_paint_is_a_small_tail_page_and_the_rest_of_the_first_page_follows(qtbot, make_window, long_log):  # noqa: F811
    win = make_window(page_size=50)
    h = win.history
    seen = {}

    def on_tail():
        seen["pages"] = len(h.pages)
        seen["messages"] = h.pages[-1].page.messages
        seen["rows"] = len(h.rows)
        seen["loading"] = h.loading
    h.tailInstalled.connect(on_tail)
    painted = []
    win.view.rowsPainted.connect(lambda: painted.append(len(h.pages)))
    with qtbot.waitSignal(h.opened, timeout=WAIT):
        win.open_store(long_log)
    # painted from the small tail page, before the rest was read
    assert seen["pages"] == 1 and seen["messages"] <= P.FIRST_MESSAGES and seen["loading"]
    assert 0 < seen["rows"] <= 16
    assert painted and painted[0] == 1
    # then the first page is complete: the same events as a 50-message tail page read at once
    qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    assert len(h.pages) == 2 and h.pages[-1].page.tail
    r = LogReader.open(long_log)
    want = [it.seq for it in r.tail_page(50).items if is_event(it)]
    got = sorted(s for lp in h.pages for s, ev in lp.events.items() if not ev.synthesized)
    assert got == sorted(want)
    assert len(h.rows) == min(40, len(h.window.all_rows)), "a full first window once the rest is in"
    assert h.rows[-1].seq == want[-1], "the newest stored event is the bottom row"
    # the window's reader decodes small blocks
    assert h.reader.source.block == P.UI_READ_BLOCK


def test_hidden_rows_next_to_the_window_are_built_in_idle_time(qtbot, make_window, long_log):  # noqa: F811
    win = make_window(page_size=50)
    with qtbot.waitSignal(win.history.opened, timeout=WAIT):
        win.open_store(long_log)
    h = win.history
    qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    w = h.window
    assert w.hidden > 0
    d = win.view.delegate
    qtbot.waitUntil(lambda: w.sindex is not None, timeout=WAIT)     # surface statuses touch every row
    above = w.all_rows[max(0, w.hidden - 10):w.hidden]
    qtbot.waitUntil(lambda: all(d.has_size(r) for r in above), timeout=WAIT)
    qtbot.waitUntil(lambda: not win.view.warmer.timer.isActive(), timeout=WAIT)     # idle work done
    win.view.doItemsLayout()
    # exposing them lays out cached rows: no document is built (the idle work that goes on
    # meanwhile, documents of the next hidden rows, is not counted)
    built = []
    exposing = []
    orig = d.builder.build
    d.builder.build = lambda *a, **k: (exposing and built.append(1)) or orig(*a, **k)
    expose = h._expose_chunk

    def counted():
        exposing.append(1)
        try:
            return expose()
        finally:
            exposing.clear()
    h._expose_chunk = counted
    h.request_older()
    qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    exposing.append(1)
    win.view.doItemsLayout()
    exposing.clear()
    assert len(built) <= 2, built


def test_rows_are_painted_from_cached_pixmaps_and_repainted_when_selected(qtbot, make_window, long_log):  # noqa: F811
    win = make_window(page_size=50)
    with qtbot.waitSignal(win.history.opened, timeout=WAIT):
        win.open_store(long_log)
    h = win.history
    qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    view, d = win.view, win.view.delegate
    view.viewport().repaint()
    # (a grab draws every row on screen; a paint into the window may keep the frame and draw nothing)
    before = view.viewport().grab().toImage()
    n = len(d.pixmaps)
    assert n > 0 and d.pixmaps.bytes > 0
    view.viewport().repaint()
    assert len(d.pixmaps) == n, "a repaint of the same rows blits the cached pixmaps"
    assert view.viewport().grab().toImage() == before
    # selecting the last row paints it differently (a new pixmap), and the view shows it
    view.setCurrentIndex(h.index(len(h.rows) - 1, 0))
    view.viewport().repaint()
    assert len(d.pixmaps) > n
    assert view.viewport().grab().toImage() != before


def test_a_session_file_is_read_once_while_it_is_listed(qtbot, make_window, long_log):  # noqa: F811
    """open_store on one session file starts its tail page at once; the listing adopts that open
    (no second read), and sessionLoaded comes with the session known."""
    win = make_window(page_size=50)
    h = win.history
    opens = []
    orig = h.open
    h.open = lambda *a, **k: (opens.append(a), orig(*a, **k))
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(long_log)
    assert opens == [(long_log, None)]
    assert win.session is not None and win.session.path == long_log and h.rows
    qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    assert len(opens) == 1


def test_the_session_list_gets_its_share_of_a_1400_px_window(qtbot, make_window):  # noqa: F811
    from app.ui.window_start import SPLIT_SIZES
    from conftest import fixture
    win = make_window(page_size=20)
    win.resize(1400, 900)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(fixture("examples/acp-agent/tests/snapshots/subagent-fork-in-process")))
    sizes = win.split.sizes()
    assert abs(sizes[0] - SPLIT_SIZES[0] * sum(sizes) / sum(SPLIT_SIZES)) <= 8, sizes
    assert win.sessions.tree.columnWidth(0) >= 180, "room for a title beside Updated, Project and Format"
