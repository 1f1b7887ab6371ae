"""The job runner: named groups (a new job cancels the group's older one; its result is never
delivered), results on the UI thread, and errors of jobs nobody listens to going to the
crash handler."""
from __future__ import annotations

import threading

import app.ui  # noqa: F401  (PySide6 work-around first)
from PySide6.QtCore import QThread

from app.ui import workers
from app.ui.workers import Jobs

WAIT = 120_000  # a limit on waiting for a condition, not on speed


def _blocking(job, gate: threading.Event, value):
    while not gate.wait(0.01):
        job.check()                       # a cancelled job stops here
    return value


def _value(job, value):
    return value


def test_a_new_job_in_a_group_cancels_the_old_one(qtbot):
    jobs = Jobs()
    got, threads = [], []
    gate = threading.Event()

    def done(v):
        got.append(v)
        threads.append(QThread.currentThread())
    old = jobs.submit(_blocking, gate, "old", group="g", on_done=done, on_error=lambda m: got.append(("err", m)))
    new = jobs.submit(_value, "new", group="g", on_done=done)
    assert old.cancelled and not new.cancelled
    qtbot.waitUntil(lambda: got == ["new"], timeout=WAIT)
    gate.set()
    qtbot.waitUntil(lambda: old.finished, timeout=WAIT)
    qtbot.wait(50)
    assert got == ["new"], "the superseded job delivers nothing, not even its cancellation"
    assert threads == [QThread.currentThread()], "results arrive on the UI thread"
    assert jobs.group_busy("g") == 0
    assert jobs.shutdown()


def test_cancel_group_and_non_exclusive_members(qtbot):
    jobs = Jobs()
    got = []
    gate = threading.Event()
    for i in range(3):
        jobs.submit(_blocking, gate, i, group="many", exclusive=False, on_done=got.append)
    assert jobs.group_busy("many") == 3
    jobs.submit(_value, "other", group="other", on_done=got.append)
    assert jobs.cancel_group("many") == 3 and jobs.group_busy("many") == 0
    gate.set()
    qtbot.waitUntil(lambda: jobs.busy == 0, timeout=WAIT)
    assert got == ["other"]
    for i in range(3):                                  # without cancelling, all are delivered
        jobs.submit(_value, i, group="many", exclusive=False, on_done=got.append)
    qtbot.waitUntil(lambda: len(got) == 4, timeout=WAIT)
    assert sorted(got[1:]) == [0, 1, 2]
    assert jobs.shutdown()


def _boom(job):
    raise ValueError("no such seq 7")


def test_unhandled_job_errors_go_to_the_crash_handler(qtbot, tmp_path, monkeypatch):
    from app.ui.crash import install_crash_handler
    monkeypatch.setenv("SESSION_LENS_LOG_DIR", str(tmp_path))
    reports = []
    h = install_crash_handler(show_dialog=False, on_report=lambda path, text: reports.append((path, text)))
    try:
        jobs = Jobs()
        handled = []
        jobs.submit(_boom, name="handled", on_error=handled.append)
        jobs.submit(_boom, name="event-at")
        qtbot.waitUntil(lambda: bool(reports) and bool(handled), timeout=WAIT)
        assert handled == ["ValueError: no such seq 7"]
        qtbot.wait(50)
        assert len(reports) == 1, "a job with on_error is not a crash"
        path, text = reports[0]
        # on disk: where and the error's type, never its message (app/store/diagnostics.py)
        assert "job event-at (ValueError)" in text and "no such seq 7" not in text
        assert path is not None and path.parent == tmp_path and path.read_text() == text
        # cancelled jobs report nothing
        gate = threading.Event()
        j = jobs.submit(_blocking, gate, 1, name="cancelled")
        j.cancel()
        gate.set()
        qtbot.waitUntil(lambda: jobs.busy == 0, timeout=WAIT)
        assert len(reports) == 1
        assert jobs.shutdown()
    finally:
        h.uninstall()
    assert workers._error_sink is None
