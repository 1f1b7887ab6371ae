"""The "Find results" dock closes with the find bar when the find bar's search opened it
(Esc, the bar's ✕, another session), its hits cleared; a dock the user opened (View › Search
results), moved or floated stays, keeping the last search's hits under their query; the results of
*Search all sessions* (in the sidebar) are not touched.  The demo store, real window, offscreen."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QToolButton

from conftest import REPO_ROOT

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower
DEMO = REPO_ROOT / "resources" / "demo"
PROJECT = DEMO / "sessions" / "--home-dev-demo-project--"
ADVANCED = PROJECT / "demo-v4-advanced" / "session.v4.jsonl.zstd"
LONG = PROJECT / "demo-v4-long" / "session.v4.jsonl.zstd"
WORD = "snapshot"                   # 9 hits in demo-v4-advanced (messages, tool calls, outputs)


@pytest.fixture
def demo(qtbot, win):
    if not ADVANCED.exists():
        pytest.fail(f"missing {ADVANCED}")
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(DEMO), remember=False, select_path=str(ADVANCED))
    qtbot.waitUntil(lambda: win.history.path == str(ADVANCED) and not win.history.loading, timeout=WAIT)
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win, timeout=WAIT)     # (Esc is a window shortcut)
    return win


def _find(qtbot, win, word=WORD) -> int:
    """Ctrl+F, type ``word``: the whole-log search runs to its end; the number of hits."""
    fa = win.find_actions
    win.view.setFocus()
    qtbot.keyClick(win.view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is win.find_edit, timeout=WAIT)
    with qtbot.waitSignal(fa.searchFinished, timeout=WAIT):
        qtbot.keyClicks(win.find_edit, word)
    assert fa.results_dock.isVisible()
    return len(fa.results.hits)


def _close_button(win) -> QToolButton:
    return next(b for b in win.find_bar.findChildren(QToolButton) if b.text() == "✕")


def test_esc_closes_the_results_dock_the_search_opened(qtbot, demo):
    win, fa = demo, demo.find_actions
    assert not fa.results_dock.isVisible()
    n = _find(qtbot, win)
    assert n >= 5 and fa.result_view.model().rowCount() == n
    qtbot.keyClick(win.find_edit, Qt.Key.Key_Escape)
    assert not win.find_bar.isVisible()
    assert not fa.results_dock.isVisible(), "the dock opened by the find bar's search closes with it"
    assert fa.results.hits == [] and fa.result_view.model().rowCount() == 0
    # the same with the bar's ✕ button
    assert _find(qtbot, win) == n
    qtbot.mouseClick(_close_button(win), Qt.MouseButton.LeftButton)
    assert not win.find_bar.isVisible() and not fa.results_dock.isVisible()
    # and when another session opens (the find bar closes then too)
    assert _find(qtbot, win) == n
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        assert win.sessions.select_key(next(s.key for s in win.sessions.model.sessions() if s.path == str(LONG)))
    assert not fa.results_dock.isVisible() and fa.results.hits == []


def test_a_dock_the_user_opened_stays_with_the_last_hits(qtbot, demo):
    win, fa = demo, demo.find_actions
    fa.results_dock.toggleViewAction().trigger()          # View › Find results
    assert fa.results_dock.isVisible()
    assert "Ctrl+F" in fa.result_label.text(), "an empty dock says what fills it"
    n = _find(qtbot, win)
    hits = [(x.seq, x.kind) for x in fa.results.hits]
    qtbot.keyClick(win.find_edit, Qt.Key.Key_Escape)
    assert not win.find_bar.isVisible() and win.history.find_term == ""
    assert fa.results_dock.isVisible(), "the user's dock stays open"
    assert [(x.seq, x.kind) for x in fa.results.hits] == hits and fa.result_view.model().rowCount() == n
    label = fa.result_label.text()
    assert label.startswith(f'Last search "{WORD}" (find bar closed): {n} matches'), label
    # its hits still go where they are
    seq = fa.results.hits[0].seq
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        fa.goto_hit(0)
    assert win.view.current_row().seq is not None
    assert fa.result_label.text().startswith(f'Last search "{WORD}"') and fa.results.hits[0].seq == seq
    # a new search replaces them; another session clears them, the dock stays open and says so
    assert _find(qtbot, win, "ADVANCED") > 0
    assert not fa.result_label.text().startswith("Last search")
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        assert win.sessions.select_key(next(s.key for s in win.sessions.model.sessions() if s.path == str(LONG)))
    assert fa.results_dock.isVisible() and fa.results.hits == [] and "Ctrl+F" in fa.result_label.text()


def test_a_floated_dock_is_the_users(qtbot, demo):
    win, fa = demo, demo.find_actions
    n = _find(qtbot, win)
    fa.results_dock.setFloating(True)        # as a double click on its title bar does
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win, timeout=WAIT)
    qtbot.keyClick(win.find_edit, Qt.Key.Key_Escape)
    assert not win.find_bar.isVisible()
    assert fa.results_dock.isVisible() and len(fa.results.hits) == n
    # closed by its own ✕, the next search's dock is the search's again
    fa.results_dock.close()
    fa.results_dock.setFloating(False)
    win.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is win, timeout=WAIT)
    assert _find(qtbot, win) == n
    qtbot.keyClick(win.find_edit, Qt.Key.Key_Escape)
    assert not win.find_bar.isVisible() and not fa.results_dock.isVisible()


def test_closing_the_find_bar_leaves_search_all_sessions_alone(qtbot, demo):
    win, fa, hs = demo, demo.find_actions, demo.home_search
    with qtbot.waitSignal(hs.resultsReady, timeout=WAIT * 3):
        hs.search(WORD)
    qtbot.waitUntil(lambda: hs.model.total > 0, timeout=WAIT * 3)
    total = hs.model.total
    _find(qtbot, win)
    qtbot.keyClick(win.find_edit, Qt.Key.Key_Escape)
    assert not fa.results_dock.isVisible()
    assert hs.panel.stack.currentIndex() == 1 and hs.model.total == total, "its results stay in the sidebar"
