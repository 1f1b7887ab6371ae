"""The selected row stays selected while the user scrolls far away from it (the view holds a
bounded slice of the loaded rows, so scrolling trims rows at the far end, the selected one too).

On a generated log of many pages: a row selected at the tail, then scrolled away from until the
view no longer holds it: the selection did not move to another event, nothing was told that the
current row changed (the inspector was not refreshed once, let alone per step), and scrolling
back shows the same row selected.  The arrow keys then start from the selected row."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.tools.synth import SessionSynth, write_jsonl

from test_ui_history import WAIT, make_window, open_and_wait  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    path = tmp_path_factory.mktemp("parked") / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=7), turns=60)
    return str(path)


class Counts:
    """Calls of the inspector's show_row and emissions of the view's currentChanged."""

    def __init__(self, win, monkeypatch):
        self.shown = 0
        self.current = 0
        insp = win.inspector
        orig = insp.show_row

        def show_row(*a, **k):
            self.shown += 1
            return orig(*a, **k)
        monkeypatch.setattr(insp, "show_row", show_row)
        win.view.selectionModel().currentChanged.connect(self._cur)

    def _cur(self, *_a):
        self.current += 1


def _select_last(qtbot, win, h):
    v = win.view
    qtbot.waitUntil(v.settled, timeout=WAIT)
    r = h.rowCount() - 1
    win.history_actions.controller.select_row(r)
    row = h.row_at(r)
    assert v.current_row() is row and win.inspector.row is row
    return row


def _scroll_until(qtbot, win, h, done, up=True, steps=400):
    """Scroll as a wheel does until ``done()``: up (older pages slide in at the top) or down to the end."""
    v = win.view
    sb = v.verticalScrollBar()
    for _ in range(steps):
        if done():
            return True
        if up:
            sb.setValue(max(0, sb.value() - 240))
            qtbot.waitUntil(lambda: v.settled() or h.loading, timeout=WAIT)
            qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
        else:
            sb.setValue(sb.maximum())
            qtbot.waitUntil(v.settled, timeout=WAIT)
    return done()


def test_a_selected_row_scrolled_out_of_the_view_stays_selected_and_the_inspector_is_not_refreshed(
        qtbot, make_window, log, monkeypatch):  # noqa: F811
    win = make_window(page_size=20)
    h = open_and_wait(qtbot, win, log)
    v = win.view
    sel = _select_last(qtbot, win, h)
    n = Counts(win, monkeypatch)
    trims = []
    h.rowsAboutToBeRemoved.connect(lambda _p, a, b: trims.append((a, b)))   # (the window's trims)
    # far enough that the selected row is trimmed, then 40 more slides of older rows
    assert _scroll_until(qtbot, win, h, lambda: h.row_index(sel) is None)
    t0 = len(trims)
    assert _scroll_until(qtbot, win, h, lambda: len(trims) >= t0 + 40 or not h.has_more)
    assert len(trims) > t0 + 10                          # (the window really slid on, row by row)
    assert h.row_index(sel) is None                      # out of the view: its row is not held there
    # the selection did not wander to another event, and nobody was told it changed
    assert v.current_row() is sel
    assert v.selected_rows() == [sel]
    assert not v.selectionModel().selectedIndexes()      # no row in the view shows as selected
    assert n.current == 0 and n.shown == 0
    assert win.inspector.row is sel
    assert win.history_actions.controller.current_row_index() is not None   # (the row at the top of the screen)
    # scrolling back: the same row shows as selected again, still without a refresh
    assert _scroll_until(qtbot, win, h, lambda: h.row_index(sel) is not None, up=False)
    i = h.row_index(sel)
    assert v.currentIndex().row() == i and v.selectionModel().isSelected(h.index(i, 0))
    assert [ix.row() for ix in v.selectionModel().selectedIndexes()] == [i]
    assert v.current_row() is sel and n.current == 0 and n.shown == 0


def test_the_arrow_keys_start_from_the_parked_row(qtbot, make_window, log, monkeypatch):  # noqa: F811
    win = make_window(page_size=20)
    h = open_and_wait(qtbot, win, log)
    v = win.view
    sel = _select_last(qtbot, win, h)
    prev = h.row_at(h.rowCount() - 2)
    n = Counts(win, monkeypatch)
    assert _scroll_until(qtbot, win, h, lambda: h.row_index(sel) is None)
    assert _scroll_until(qtbot, win, h, lambda: h.window.bottom > 200 or not h.has_more)
    assert v.current_row() is sel and n.shown == 0
    # Up: the row above the selected one (not the top of the view), the view brought back to it
    v.setFocus()
    qtbot.keyClick(v, Qt.Key.Key_Up)
    assert v.current_row() is prev
    i = h.row_index(prev)
    assert i is not None and v.currentIndex().row() == i
    assert v.viewport().rect().intersects(v.visualRect(v.currentIndex()))
    assert n.shown == 1 and win.inspector.row is prev
    # and Down goes back to the selected row
    qtbot.keyClick(v, Qt.Key.Key_Down)
    assert v.current_row() is sel and win.inspector.row is sel and n.shown == 2
    # parked again, Down from it stays on it (it is the newest row)
    assert _scroll_until(qtbot, win, h, lambda: h.row_index(sel) is None)
    qtbot.keyClick(v, Qt.Key.Key_Down)
    assert v.current_row() is sel and h.row_index(sel) is not None
    assert v.currentIndex().row() == h.row_index(sel)


def test_a_click_after_scrolling_away_selects_the_clicked_row(qtbot, make_window, log, monkeypatch):  # noqa: F811
    from PySide6.QtCore import QPoint
    win = make_window(page_size=20)
    h = open_and_wait(qtbot, win, log)
    v = win.view
    sel = _select_last(qtbot, win, h)
    assert _scroll_until(qtbot, win, h, lambda: h.row_index(sel) is None)
    n = Counts(win, monkeypatch)
    ix = v.indexAt(QPoint(20, 20))
    assert ix.isValid()
    qtbot.mouseClick(v.viewport(), Qt.MouseButton.LeftButton, pos=v.visualRect(ix).center())
    clicked = h.row_at(ix.row())
    assert v.current_row() is clicked and clicked is not sel
    assert n.shown == 1 and win.inspector.row is clicked
    # scrolling back down: the old row is not selected again
    assert _scroll_until(qtbot, win, h, lambda: h.row_index(sel) is not None, up=False)
    assert not v.selectionModel().isSelected(h.index(h.row_index(sel), 0))


def test_turn_navigation_starts_from_the_parked_row(qtbot, make_window, log):  # noqa: F811
    from app.ui.history.rows import RowKind
    win = make_window(page_size=20)
    h = open_and_wait(qtbot, win, log)
    v = win.view
    sel = _select_last(qtbot, win, h)
    w = h.window
    o = w.row_ordinal(sel)
    want = next(r for r in reversed(w.all_rows[:o - w.origin]) if r.kind == RowKind.TURN_START)
    assert _scroll_until(qtbot, win, h, lambda: h.row_index(sel) is None)
    assert _scroll_until(qtbot, win, h, lambda: w.bottom > 250 or not h.has_more)
    v.setFocus()
    qtbot.keyClick(v, Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier)      # previous turn
    assert v.current_row() is want and win.inspector.row is want


def test_several_selected_rows_scrolled_away_stay_selected(qtbot, make_window, log):  # noqa: F811
    from PySide6.QtCore import QItemSelection, QItemSelectionModel
    win = make_window(page_size=20)
    h = open_and_wait(qtbot, win, log)
    v = win.view
    qtbot.waitUntil(v.settled, timeout=WAIT)
    n = h.rowCount()
    win.history_actions.controller.select_row(n - 1)
    v.selectionModel().select(QItemSelection(h.index(n - 3, 0), h.index(n - 1, 0)),
                              QItemSelectionModel.SelectionFlag.Select)          # as Shift+click does
    want = [h.row_at(i) for i in range(n - 3, n)]
    assert v.selected_rows() == want
    assert _scroll_until(qtbot, win, h, lambda: all(h.row_index(r) is None for r in want))
    assert v.selected_rows() == want and v.current_row() is want[-1]     # (Copy as Markdown copies these)
    assert _scroll_until(qtbot, win, h, lambda: all(h.row_index(r) is not None for r in want), up=False)
    assert sorted(ix.row() for ix in v.selectionModel().selectedIndexes()) == [h.row_index(r) for r in want]
    assert v.selected_rows() == want
