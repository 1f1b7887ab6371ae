"""The job pool gives its freed heap back once its jobs have all ended (issue 36).

A worker's peak (a page decoded, a cache file read, a result unpickled) leaves free pages in its
malloc arena; ``Jobs`` calls :func:`app.ui.memory.trim` once no pool job is left (never while one
runs; a session-long ``own_thread`` job does not count).  The old code trimmed only after a few
named steps (the open, a find, the outline), so the heap a later job freed stayed in the process."""
from __future__ import annotations

import sys
import threading

import app.ui  # noqa: F401  (PySide6 work-around first)
from app.ui import memory
from app.ui.workers import Jobs

WAIT = 120_000  # a limit on waiting for a condition, not on speed


def _ours(jobs: Jobs) -> bool:
    """The trim was asked by ``jobs`` (not by the pool of an earlier test's window, whose timer may fire now)."""
    return sys._getframe(2).f_locals.get("self") is jobs


def _wait(job, gate: threading.Event) -> int:
    while not gate.wait(0.01):
        job.check()
    return 1


def test_the_pool_trims_the_heap_once_its_jobs_have_ended(qtbot, monkeypatch):
    jobs = Jobs()
    calls: list[int] = []
    monkeypatch.setattr(memory, "trim", lambda: _ours(jobs) and calls.append(jobs.busy) or True)
    gate, follower_gate = threading.Event(), threading.Event()
    follower = jobs.submit(_wait, follower_gate, own_thread=True, name="follower")
    long = jobs.submit(_wait, gate, name="long")
    short = jobs.submit(lambda job: 2, name="short")
    qtbot.waitUntil(lambda: short.finished, timeout=WAIT)
    qtbot.wait(3 * 250)
    assert calls == [] and not long.finished            # a pool job still runs: no trim
    gate.set()
    qtbot.waitUntil(lambda: calls != [], timeout=WAIT)
    assert long.finished and calls == [1]               # (the follower, a session-long job, left alone)
    follower_gate.set()
    qtbot.waitUntil(lambda: follower.finished, timeout=WAIT)
    qtbot.wait(3 * 250)
    assert calls == [1]                                 # its end is no pool work: no second trim
