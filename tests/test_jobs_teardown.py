"""A job's answer that arrives as its window closes (the callback's Qt objects already deleted) is dropped
like a cancelled job's; it once raised "Internal C++ object already deleted" in the Qt event loop at teardown
(the summary's figures, a replay answer).  Any other error in a callback still reaches the event loop."""
from __future__ import annotations

import pytest

import app.ui  # noqa: F401  (PySide6 refcount work-around before any Qt code)

pytest.importorskip("PySide6")


def test_an_answer_for_deleted_qt_objects_is_dropped(qtbot):
    from PySide6.QtCore import QTimer
    from shiboken6 import delete

    from app.ui.workers import Jobs
    jobs = Jobs()
    timer = QTimer()
    delete(timer)                                  # (the window closed: its timer is gone)
    ran: list = []

    def done(_r):
        ran.append(1)
        timer.stop()                               # raises RuntimeError: already deleted
    job = jobs.submit(lambda job: 42, on_done=done)
    qtbot.waitUntil(lambda: job.finished, timeout=120_000)
    assert ran == [1]
    jobs.shutdown()


def test_other_errors_in_a_callback_still_surface(qtbot):
    from app.ui.workers import Jobs
    jobs = Jobs()

    def done(_r):
        raise RuntimeError("a real bug")
    with qtbot.captureExceptions() as exc:
        job = jobs.submit(lambda job: 1, on_done=done)
        qtbot.waitUntil(lambda: job.finished, timeout=120_000)
    assert any("a real bug" in str(e[1]) for e in exc)
    jobs.shutdown()
