"""Three defects seen on screenshots of the demo store, each checked on the demo's own sessions
(pytest-qt, a real window):

* at 1,200 px (and 1,000 px) the toolbar kept "Show request" in its "»" overflow menu: every
  toolbar action now stays on the toolbar, labelled where there is room;
* the inspector's heading showed empty bands (an empty "where" / links label with its line
  height and spacing) above the JSON, and a short tool card left an empty band under it;
* with the first-run tour up, Esc in the find bar ended the tour and left the find bar open
  (a second Esc closed it): Esc closes the innermost thing first, the next Esc ends the tour.
"""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QToolButton

from test_ui_history import WAIT, make_window  # noqa: F401 (fixtures)

ADVANCED = "demo-v4-advanced"


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


def _session_path(session: str):
    from app.ui.main_window import demo_store
    folder = demo_store() / "sessions" / "--home-dev-demo-project--" / session
    return next(p for p in sorted(folder.iterdir()) if p.name.startswith("session"))


def _open_demo(qtbot, win, session: str = ADVANCED):
    from app.ui.main_window import demo_store
    path = _session_path(session)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(demo_store()), select_path=str(path))
    qtbot.waitUntil(lambda: win.history.path == str(path) and not win.history.loading, timeout=WAIT)
    return win.history


# --------------------------------------------------------------------------- the toolbar

def _toolbar_state(win) -> dict:
    """{action label: (button shown inside the toolbar's area, label shown)} and the overflow button."""
    tb = win.toolbar
    out = {}
    for a in tb.actions():
        if a.isSeparator():
            continue
        b = tb.widgetForAction(a)
        inside = b is not None and b.isVisible() and tb.rect().contains(b.geometry())
        out[a.text().replace("&", "").rstrip("…")] = (inside, b.toolButtonStyle() != Qt.ToolButtonStyle.ToolButtonIconOnly)
    ext = tb.findChild(QToolButton, "qt_toolbar_ext_button")
    return {"buttons": out, "overflow": ext is not None and ext.isVisible()}


@pytest.mark.parametrize("width", [1600, 1200, 1000])
def test_every_toolbar_action_stays_on_the_toolbar(qtbot, make_window, width):  # noqa: F811 (the shared fixture)
    win = make_window()
    _open_demo(qtbot, win)
    win.resize(width, 860)
    qtbot.waitUntil(lambda: win.toolbar.width() == win.width(), timeout=WAIT)
    QApplication.processEvents()
    st = _toolbar_state(win)
    btn = st["buttons"]
    assert len(btn) >= 9, btn
    # the key capability first: its button is on the toolbar, labelled, not in the "»" menu
    req = win.toolbar.widgetForAction(win.frame_actions.act_request)
    assert req.isVisible() and win.toolbar.rect().contains(req.geometry()), (width, req.geometry(), win.toolbar.rect())
    assert btn["Show request"] == (True, True)
    assert all(inside for inside, _ in btn.values()), (width, btn)
    assert not st["overflow"], (width, btn)
    # labels stay on the faces and on Show request; only the open buttons and turn arrows give theirs up
    for name in ("Physical tail", "Hidden attempts", "Show request", "Fork from here", "Find"):
        assert btn[name][1], (width, name)
    fit = win.frame_actions.toolbar_fit
    if width >= 1200:
        assert all(labelled for _, labelled in btn.values()) and fit.compacted == 0, (width, btn)
    else:                      # the open buttons gave their labels up first (the File menu has them)
        assert fit.compacted >= 1 and not btn["Open session file"][1] and not btn["Open folder (Harness home, project)"][1]
    # an icon-only button still names its action (and its shortcut) in its tooltip
    fa = win.file_actions
    assert fa.act_open.toolTip().startswith("Open a session file") and "Ctrl+O" in fa.act_open.toolTip()
    # the menus keep the full texts
    assert "Open &folder (Harness home, project)…" in [a.text() for a in win.menu("File").actions()]


# --------------------------------------------------------------------------- the inspector's heading

def _bands(win) -> list:
    """Empty bands in the inspector: shown labels without text, gaps between the shown items
    wider than the layout's spacing, and a presenter view taller than its card."""
    insp = win.inspector
    lay = insp.layout()
    shown = []
    for i in range(lay.count()):
        w = lay.itemAt(i).widget()
        if w is not None and w.isVisible():
            shown.append(w)
    bad = [f"empty label at y={w.y()} h={w.height()}" for w in shown
           if isinstance(w, QLabel) and not w.text().strip() and w.height() > 2]
    for a, b in zip(shown, shown[1:]):
        gap = b.y() - (a.y() + a.height())
        if gap > lay.spacing() + 2:
            bad.append(f"gap of {gap} px between {a.objectName() or type(a).__name__} and {b.objectName() or type(b).__name__}")
    vb = insp.view_box
    if vb.isVisible():
        doc_h = vb.document().size().height()
        cap = max(220, sum(vb.parentWidget().sizes()) // 2)          # (the splitter of view and JSON)
        spare = vb.height() - doc_h
        if doc_h + 12 < cap and spare > vb.fontMetrics().lineSpacing() + 2 * vb.frameWidth() + 6:
            bad.append(f"presenter view {vb.height()} px for a card of {doc_h:.0f} px")
    return bad


def _settle(qtbot, win):
    QApplication.processEvents()
    qtbot.waitUntil(lambda: not win.inspector.layout().geometry().isEmpty(), timeout=WAIT)
    QApplication.processEvents()


@pytest.mark.parametrize("session", [ADVANCED, "demo-v4-tool-turn", "demo-v4-cancel"])
def test_inspector_heading_has_no_empty_band(qtbot, make_window, session):  # noqa: F811 (the shared fixture)
    win = make_window(page_size=500)
    win.resize(1200, 860)
    h = _open_demo(qtbot, win, session)
    sr = win.frame_actions.summary_refresh
    sr.refresh()
    _settle(qtbot, win)
    assert win.inspector.title.text().startswith("Session summary")
    problems = {"summary": _bands(win)}
    win.set_show_attempts(True)
    qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    for _ in range(100):                      # every row of the session (the older pages too)
        if not h.has_more:
            break
        h.fetchMore()
        qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    assert not h.has_more
    kinds = {}
    for i, r in enumerate(h.rows):
        kinds.setdefault(r.kind, i)
    assert {"user", "assistant", "turn-start"} <= set(kinds), set(kinds)
    if session == ADVANCED:
        assert {"tool-call", "tool-result", "attempt-failed"} <= set(kinds), set(kinds)
    cards = 0
    for kind, i in kinds.items():
        win.select_row(i)
        _settle(qtbot, win)
        problems[str(kind)] = _bands(win)
        cards += win.inspector.view_box.isVisible()
    assert {k: v for k, v in problems.items() if v} == {}
    assert cards >= 2 or session != ADVANCED          # (the tool cards were measured too)


# --------------------------------------------------------------------------- Esc with the tour up

def _tour_window(qtbot, make_window, monkeypatch):  # noqa: F811 (the shared fixture)
    monkeypatch.delenv("SESSION_LENS_NO_TOUR", raising=False)
    win = make_window()
    win.resize(1400, 860)
    _open_demo(qtbot, win)
    qtbot.waitUntil(lambda: win.tour is not None and win.tour.isVisible(), timeout=WAIT)
    win.activateWindow()
    win.view.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is win.view, timeout=WAIT)
    return win


def test_esc_closes_the_find_bar_first_then_the_tour(qtbot, make_window, monkeypatch):  # noqa: F811
    win = _tour_window(qtbot, make_window, monkeypatch)
    tour = win.tour
    qtbot.keyClick(win.view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: win.find_bar.isVisible() and QApplication.focusWidget() is win.find_edit, timeout=WAIT)
    qtbot.keyClicks(win.find_edit, "snapshot")
    # one Esc: the find bar (what the user just opened) closes; the tour waits for the next Esc
    qtbot.keyClick(win.find_edit, Qt.Key.Key_Escape)
    assert not win.find_bar.isVisible() and win.find_edit.text() == ""
    assert win.tour is tour and tour.isVisible()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is win.view, timeout=WAIT)
    # the next Esc ends the tour, as before
    qtbot.keyClick(win.view, Qt.Key.Key_Escape)
    assert win.tour is None and not tour.isVisible()


def test_esc_closes_search_results_before_the_tour(qtbot, make_window, monkeypatch):  # noqa: F811
    win = _tour_window(qtbot, make_window, monkeypatch)
    tour = win.tour
    p = win.home_search.panel
    p.show_results(True)
    p.edit.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is p.edit, timeout=WAIT)
    qtbot.keyClick(p.edit, Qt.Key.Key_Escape)
    assert p.stack.currentIndex() == 0 and win.tour is tour and tour.isVisible()
    # with the results closed, Esc in the search box ends the tour (nothing inner is open)
    qtbot.keyClick(p.edit, Qt.Key.Key_Escape)
    assert win.tour is None
