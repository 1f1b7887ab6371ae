"""Exact titles for the provisional titles of a session list, read in a low-priority child process.

A first listing reads only a bounded head and tail of each log (decision 0016): a title found only
in the head is provisional.  The window refines them afterwards by reading the middles
(:func:`app.store.titles.exact_title`), which for a home of thousands of sessions is seconds of
libzstd and ``bytes.find``; in a thread of the window's process the searches would hold the GIL
against the UI thread, so they run in a child (:mod:`app.store.childproc`: niced, stopped while the
user scrolls, killed when the list is closed or reloaded).  The child only reads; it sends
``("title", k, (title, damage) | None)`` for the ``k``-th file as it goes, and the parent records
each exact title over the cache's provisional entry (:func:`app.store.titles.apply_exact`).
"""
from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable
from typing import Any

from ..log.jobctl import Cancel, is_cancelled
from .childproc import NoChild, Send, run_child, serve, worker_argv

REFINE_NICE = 15            # after the UI, a search and the index: as low as the outline pass
Job = tuple[str, str, int, float]          # (path, format, size, mtime) as listed


def read_exact(jobs: list[Job], send: Callable[[tuple[object, ...]], None],
               cancelled: Cancel = None) -> int:
    """Send ``("title", k, exact_title(...))`` for each job in order; returns how many were read."""
    from .titles import exact_title
    for k, (path, fmt, size, mtime) in enumerate(jobs):
        if is_cancelled(cancelled):
            raise InterruptedError("title refinement cancelled")
        send(("title", k, exact_title(path, fmt, size, mtime)))
    return len(jobs)


def child_main(_argv: list[str]) -> int:
    """The child: reads the jobs pickled on stdin."""
    def body(send: Send) -> Any:
        return read_exact(pickle.load(sys.stdin.buffer), send)
    return serve(body, REFINE_NICE)


def refine(jobs: list[Job], on_title: Callable[[int, Any], None], cancelled: Cancel) -> int:
    """Read the exact title of each job in a child process, calling ``on_title(k, got)`` in the
    caller's thread as each arrives (in order); in this thread when no child can be started (or
    ``SESSION_LENS_SCAN_INPROC=1``).  Raises InterruptedError when cancelled."""
    def on_message(msg: tuple[object, ...]) -> None:
        if msg[0] == "title":
            on_title(int(msg[1]), msg[2])          # type: ignore[call-overload]
    if not jobs:
        return 0
    if os.environ.get("SESSION_LENS_SCAN_INPROC") != "1":
        try:
            return int(run_child(worker_argv("titles"), jobs, on_message,  # type: ignore
                                 cancelled, "title refinement", background=True))
        except NoChild:
            pass
    return read_exact(jobs, on_message, cancelled)
