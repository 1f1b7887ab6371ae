"""Issue 35 in the window (what a new user hit, round 3), each on the demo store or a generated log."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from test_ui_history import WAIT, make_window  # noqa: F401 (fixtures)

SESSION_DIR = "--home-dev-demo-project--"


def _infos():
    from app.store.discovery import discover
    from app.ui.main_window import demo_store
    return {s.id: s for s in discover(str(demo_store())).sessions}


def _demo(qtbot, make_window, session="demo-v4-advanced", size=(1400, 860)):  # noqa: F811
    from app.ui.main_window import demo_store
    store = demo_store()
    info = _infos()[session]
    win = make_window(page_size=50)
    win.resize(*size)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(store), select_path=info.path)
    qtbot.waitUntil(lambda: win.history.path == info.path and not win.history.loading, timeout=WAIT)
    return win, win.history


def _switch(qtbot, win, session: str):
    info = _infos()[session]
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_session(info)
    qtbot.waitUntil(lambda: win.history.path == info.path and not win.history.loading, timeout=WAIT)


def test_request_chip_is_reset_when_another_session_opens(qtbot, make_window):  # noqa: F811
    """Item 4: the Request tab kept "Exact request at seq 27 …" of the previous session."""
    win, h = _demo(qtbot, make_window)
    i = max(i for i, r in enumerate(h.rows) if r.event is not None and r.event.type == "assistant/message")
    win.select_row(i)
    with qtbot.waitSignal(win.request_view.computed, timeout=WAIT):
        win.show_request_tab()
    chip = win.truth_actions.request_chip
    assert chip.text().startswith("Exact request at seq")
    win.tabs.setCurrentIndex(0)
    _switch(qtbot, win, "demo-v4-tool-turn")
    QApplication.processEvents()
    assert not chip.text().startswith("Exact request at seq"), chip.text()
    assert "the selected dispatch" in chip.text()
