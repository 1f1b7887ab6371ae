"""The session summary follows what is loaded (older pages, a jump, the start and the end of
the log) and states the whole log's figures once the seq index and the outline pass know them;
the first-run tour's bubble never covers the top of the history and Esc ends it for good.
Real window (pytest-qt, offscreen), a generated log of many pages, the demo store."""
from __future__ import annotations

import json
import re
from typing import Optional

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication

from app.log.index.reader import LogReader
from app.tools.synth import SessionSynth, write_jsonl

from test_ui_history import WAIT, idle, make_window, open_and_wait  # noqa: F401 (fixtures)
from test_find_leftovers import _config_dir  # noqa: F401 (the window's config dir)
from test_scroll_pause import log  # noqa: F401 (a 40-turn generated log, seed 5)




def _n(s: str) -> int:
    return int(s.replace(",", ""))


def _loaded(h) -> dict:
    """What the model holds, counted from its events (the reference)."""
    evs = list(h.window.events.values())
    return {"events": h.stats()["storedEvents"],
            "turns": len({e.data.get("turn") for e in evs if isinstance(e.data, dict) and isinstance(e.data.get("turn"), int)}),
            "calls": sum(1 for e in evs if e.type == "tool/call")}


def _summary(qtbot, win) -> str:
    """The summary once the refresh that the last change scheduled has run (no sleep: its signal)."""
    sr = getattr(win.frame_actions, "summary_refresh", None)
    if sr is not None and sr.pending():
        with qtbot.waitSignal(sr.refreshed, timeout=WAIT):
            pass
    return win.inspector.summary


def _check(qtbot, win, whole: Optional[dict]) -> dict:
    """The summary's loaded figures equal the model's, then its whole-log figures equal ``whole``
    (``None``: the loaded ones only)."""
    h = win.history
    text = _summary(qtbot, win)
    want = _loaded(h)
    ev = re.search(r"^events: ([\d,]+)(?: loaded(?: of ([\d,]+))?(?: \(whole log\))?| \(the whole log\))$", text, re.M)
    tu = re.search(r"^turns: ([\d,]+)(?: loaded of ([\d,]+))?", text, re.M)
    tc = re.search(r"tool calls: ([\d,]+)(?: loaded of ([\d,]+))?", text, re.M)
    assert ev and tu and tc, text
    got = {"events": _n(ev[1]), "turns": _n(tu[1]), "calls": _n(tc[1])}
    assert got == want, f"summary {got} != loaded {want}\n{text}"
    if whole is None:
        return got
    assert ev[2] and tu[2] and tc[2], f"no whole-log figures\n{text}"
    assert (_n(ev[2]), _n(tu[2]), _n(tc[2])) == (whole["events"], whole["turns"], whole["calls"]), text
    return got


@pytest.mark.slow
def test_summary_follows_older_pages_jumps_start_and_end(qtbot, make_window, log):  # noqa: F811 (the shared fixture)
    r = LogReader.open(log)
    evs = list(r.iter_events())
    r.close()
    whole = {"events": len(evs), "turns": sum(1 for e in evs if e.type == "turn/start"),
             "calls": sum(1 for e in evs if e.type == "tool/call")}
    win = make_window(page_size=3)
    h = open_and_wait(qtbot, win, log)
    ga = win.go_actions
    qtbot.waitUntil(lambda: h.index_state == "ready" and ga.outline is not None, timeout=WAIT * 2)
    first = _check(qtbot, win, None)            # (the whole log's figures: checked at every step below)
    # older pages: the figures grow with every page (the old summary kept the first page's)
    seen = [first]
    pages = len(h.pages)
    for _ in range(8):                 # (rows of a loaded page slide in, or an older page is read)
        with qtbot.waitSignal(h.olderInstalled, timeout=WAIT):
            assert h.request_older()
        idle(qtbot, h)
        seen.append(_check(qtbot, win, whole))
    assert len(h.pages) >= pages + 3
    assert seen[-1]["events"] > first["events"] and seen[-1]["turns"] > first["turns"]
    # a jump into the middle: only the page around the seq is loaded, and the summary says so
    mid = evs[len(evs) // 2].seq
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.goto_seq(mid)
    idle(qtbot, h)
    assert h.window.has_newer
    got = _check(qtbot, win, whole)
    assert got["events"] < seen[-1]["events"]
    # the start of the log, then the end
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        ga.ctl.goto_start()
    idle(qtbot, h)
    assert min(h.window.events) == 0
    _check(qtbot, win, whole)
    ga.ctl.goto_end()
    idle(qtbot, h)
    assert h.window.attached
    _check(qtbot, win, whole)


@pytest.mark.slow
def test_summary_refresh_is_coalesced_and_pages_are_counted_once(qtbot, make_window, log):  # noqa: F811 (the shared fixture)
    from app.ui.summary import loaded_tally, page_tally
    win = make_window(page_size=3)
    h = open_and_wait(qtbot, win, log)
    sr = win.frame_actions.summary_refresh
    qtbot.waitUntil(lambda: h.index_state == "ready" and win.go_actions.outline is not None, timeout=WAIT * 2)
    _summary(qtbot, win)
    before = sr.count
    for _ in range(200):                       # a burst of changes (rows sliding in while scrolling)
        h.statsChanged.emit()
    assert sr.pending() and sr.count == before, "nothing computed per change"
    with qtbot.waitSignal(sr.refreshed, timeout=WAIT):
        pass
    assert sr.count == before + 1, "one refresh for the burst"
    # each loaded page is counted once: a second tally reuses the pages' records
    tallies = [page_tally(lp) for lp in h.window.pages]
    assert all(page_tally(lp) is t for lp, t in zip(h.window.pages, tallies))
    assert loaded_tally(h.window)["calls"] == _loaded(h)["calls"]


# --------------------------------------------------------------------------- the tour

def _first_rows(win, n: int = 3) -> list:
    """The history's first ``n`` visible rows, in window coordinates."""
    view = win.view
    vp = view.viewport()
    top = view.indexAt(QPoint(4, 1))
    assert top.isValid()
    out = []
    for r in range(top.row(), min(view.model().rowCount(), top.row() + n)):
        rect = view.visualRect(view.model().index(r, 0)).intersected(vp.rect())
        out.append(QRect(vp.mapTo(win, rect.topLeft()), rect.size()))
    return out


def _check_bubble(win, t) -> None:
    bubble = QRect(t.pos(), t.size())              # the tour is a child of the window
    assert win.rect().contains(bubble)
    for r in _first_rows(win):
        assert not bubble.intersects(r), f"the bubble {bubble} covers a first row {r}"
    chip = win.truth_actions.chip
    if chip.isVisible():
        assert not bubble.intersects(QRect(chip.mapTo(win, QPoint(0, 0)), chip.size()))
    a = t.anchor_rect()
    assert a is None or not bubble.intersects(a), "the bubble covers the button it explains"


def _tour_window(qtbot, path, size):
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=20, theme_mode="light")
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.open_store(str(path))
    return w


@pytest.mark.slow
@pytest.mark.parametrize("where,size", [("store", (1400, 860)), ("file", (1200, 800)), ("file", (900, 640))])
def test_tour_bubble_leaves_the_history_top_visible(qtbot, monkeypatch, where, size):
    from app.ui.main_window import demo_store
    from app.ui.tour import HINTS
    monkeypatch.delenv("SESSION_LENS_NO_TOUR")
    demo = demo_store()
    w = _tour_window(qtbot, demo if where == "store" else next(demo.rglob("*.jsonl*")), size)
    qtbot.waitUntil(lambda: w.tour is not None and w.tour.isVisible(), timeout=WAIT)
    t = w.tour
    for i in range(len(HINTS)):
        QApplication.processEvents()
        _check_bubble(w, t)
        if i < len(HINTS) - 1:
            t.next.click()
    # placed again when the window changes size
    w.resize(size[0] - 100, size[1] - 60)
    qtbot.waitUntil(lambda: QRect(t.pos(), t.size()).bottom() < w.height(), timeout=WAIT)
    QApplication.processEvents()
    _check_bubble(w, t)
    w.shutdown()


@pytest.mark.slow
def test_esc_ends_the_tour_for_good(qtbot, tmp_path, monkeypatch):
    from app.ui.main_window import demo_store
    monkeypatch.delenv("SESSION_LENS_NO_TOUR")
    cfg = tmp_path / "cfg"
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(cfg))
    w = _tour_window(qtbot, demo_store(), (1400, 860))
    qtbot.waitUntil(lambda: w.tour is not None and w.tour.isVisible(), timeout=WAIT)
    t = w.tour
    t.next.click()                                 # (at any step)
    # Esc with the history list focused, as a user presses it (the key goes to the focus widget)
    w.activateWindow()
    w.view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is w.view, timeout=WAIT)
    qtbot.keyClick(w.view, Qt.Key.Key_Escape)
    assert w.tour is None and not t.isVisible()
    assert json.loads((cfg / "settings.json").read_text())["tourSeen"] is True
    w.shutdown()
    # never again: the next window, the next session
    w2 = _tour_window(qtbot, demo_store(), (1400, 860))
    QApplication.processEvents()
    assert w2.tour is None
    w2.shutdown()


@pytest.mark.slow
def test_summary_follows_live_rows(qtbot, tmp_path):
    """A log written while it is open: the live rows (counted in the live job) reach the summary."""
    from app.ui.main_window import MainWindow
    src = tmp_path / "src.jsonl"
    write_jsonl(str(src), SessionSynth(31), target_bytes=120_000, batch_events=(1, 8))
    lines = src.read_bytes().splitlines(keepends=True)
    path = tmp_path / "p" / "session.jsonl"
    path.parent.mkdir()
    first = len(lines) // 3
    path.write_bytes(b"".join(lines[:first]))
    win = MainWindow(page_size=10, theme_mode="light",
                     live_options={"poll_interval": 0.05, "idle_after": 0.3, "crash_after": 1.0})
    qtbot.addWidget(win)
    win.show()
    h = open_and_wait(qtbot, win, path)
    qtbot.waitUntil(lambda: h.live_state is not None, timeout=WAIT)
    before = _check(qtbot, win, None)
    with open(path, "ab", buffering=0) as f:
        f.write(b"".join(lines[first:]))
    last = LogReader.open(str(path)).tail_page(1).last_seq
    qtbot.waitUntil(lambda: h.pages[-1].page.last_seq == last and h._live_job is None and not h._live_queue,
                    timeout=WAIT)
    got = _check(qtbot, win, None)
    assert got["events"] > before["events"] and got["calls"] >= before["calls"]
    win.shutdown()
