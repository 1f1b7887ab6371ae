"""The timeline of a log computed in a low-priority child process (:mod:`app.store.childproc`, kind ``timeline``).

A first timeline of a big log is one pass over every row (seconds per hundred MB); in a thread of the
window's process it would hold the GIL against the UI thread, so the window's worker asks a child,
which computes it, saves it in the cache (:func:`app.store.timeline_cache.cached_spans`) and sends it
back.  A cached timeline is read in the worker thread directly (no child).  When no child can be started
(or ``SESSION_LENS_SCAN_INPROC=1``) it is computed in the calling thread.
"""
from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable
from typing import Any, Optional, cast

from ..log.format.payloads import JsonObj
from .childproc import NoChild, Send, run_child, serve, worker_argv

TIMELINE_NICE = 10


def child_main(_argv: list[str]) -> int:
    """The child: ``(path, session)`` pickled on stdin -> ``(spans, status)``."""
    def body(send: Send) -> Any:
        from .faces import open_reader
        from .timeline_cache import cached_spans
        path, session = pickle.load(sys.stdin.buffer)
        r = open_reader(path, session)
        if r.fatal:
            raise ValueError(f"{path}: {r.fatal}")
        return cached_spans(r, tick=lambda: send(("tick",)))
    return serve(body, TIMELINE_NICE)


def spans_for(path: str, session: Optional[str], cancelled: Callable[[], bool]) -> tuple[list[JsonObj], str]:
    """The log's spans: from the cache in this thread, else computed by a child (this thread waits in
    ``read()``, the GIL released; the child ticks every 4096 spans, so a cancel stops it soon).  Raises
    InterruptedError when cancelled."""
    from .faces import open_reader
    from .timeline_cache import cached_spans
    r = open_reader(path, session)
    if r.fatal:
        raise ValueError(f"{path}: {r.fatal}")
    got, status = cached_spans(r, build=False)
    if got is not None:
        return got, status
    if os.environ.get("SESSION_LENS_SCAN_INPROC") != "1":
        try:
            res = run_child(worker_argv("timeline"), (path, session), lambda _m: None, cancelled, "timeline")
            return cast(tuple[list[JsonObj], str], res)
        except NoChild:
            pass
    return cached_spans(r)
