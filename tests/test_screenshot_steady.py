"""A screenshot shows the same rows on every run (issue 36, item 4).

The window slides older loaded rows into the list as a time budget per loop turn allows (the documents
of as many rows as fit in 2 ms): how many rows the list held when it settled, and so the status bar's
"N rows" of a ``--screenshot`` of the demo store, varied with the machine's load (57, 59 or 62 of
70).  For a screenshot, :func:`app.ui.app.steady_exposure` slides a whole chunk at a time."""
from __future__ import annotations

from app.ui.app import steady_exposure
from conftest import REPO_ROOT

DEMO = REPO_ROOT / "resources/demo/sessions/--home-dev-demo-project--/demo-plain-turn/session.v3.jsonl"


def _rows(qtbot, win) -> list:
    with qtbot.waitSignal(win.sessionLoaded, timeout=120_000):
        win.open_store(str(DEMO))
    rows = list(win.history.window.all_rows)
    assert len(rows) >= 3
    return rows


def test_a_spent_budget_builds_no_row_but_a_screenshot_builds_the_chunk(qtbot, win):
    rows = _rows(qtbot, win)
    # (a budget already spent: the window's exposure builds no document this turn, and slides one row)
    assert win.history.prepare_rows(rows, -1.0) == 0
    steady_exposure(win)
    assert win.history.prepare_rows(rows, -1.0) == len(rows)
