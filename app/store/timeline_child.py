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
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional, cast

from ..log.format.payloads import JsonObj
from ..log.query.timeline_table import SpanTable
from ..log.jobctl import Cancel, Cancelled
from .childproc import ChildFailed, ChildSpec, NoChild, Send, run_child, run_spec, serve, worker_argv

if TYPE_CHECKING:
    from ..log.index.reader import LogReader

TIMELINE_NICE = 10
SPLIT_MIN = 96 << 20     # a raw JSONL log at least this big is read in two parts at once (timeline_split.py) …
SPLIT_WHEN_BUSY = False  # … when a core is free (on a busy machine a second process only adds its start-up)


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


def part_main(_argv: list[str]) -> int:
    """The second part of a log split in two: ``(path, size, start)`` pickled on stdin -> (spans, state) of
    :func:`app.log.query.timeline_split.part` from ``start`` on (an error if the log is no longer ``size``
    bytes: the first part read another snapshot)."""
    def body(_send: Send) -> Any:
        from ..log.query.timeline_split import part
        from .faces import open_reader
        threading.Thread(target=_orphaned, args=(os.getppid(),), name="parent-watch", daemon=True).start()
        path, size, start = pickle.load(sys.stdin.buffer)
        r = open_reader(path, None)
        if r.fatal or r.source.size != size:
            raise ValueError(f"{path}: not the log of the first part")
        return part(r, start, None)
    return serve(body, 0)         # (the niceness of the process reading the first part, inherited)


def _orphaned(parent: int) -> None:
    """End this process as soon as its parent is gone (the first part's process, killed by a cancel)."""
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)


def split_spans(reader: LogReader) -> Optional[list[JsonObj]]:
    """The spans of a big raw JSONL log (:data:`SPLIT_MIN`), its second half read by a ``timeline-part`` child
    while this thread reads the first (:mod:`app.log.query.timeline_split`), else None: not such a log, no free
    core (:data:`SPLIT_WHEN_BUSY`), no turn start near its middle, no child, or parts that do not join (the
    caller makes one pass)."""
    from ..log.query.timeline_split import merge, part, split_point
    src = reader.source
    if src.kind != "jsonl" or src.size < SPLIT_MIN or os.environ.get("SESSION_LENS_SCAN_INPROC") == "1" or \
            not (SPLIT_WHEN_BUSY or _core_free()):
        return None
    at = split_point(reader)
    if at is None:
        return None
    got: dict[str, Any] = {}

    def second() -> None:
        try:
            got["part"] = run_child(worker_argv("timeline-part"), (src.path, src.size, at), lambda _m: None, None,
                                    "timeline part")
        except (NoChild, ChildFailed, OSError) as e:
            got["error"] = e
    th = threading.Thread(target=second, name="timeline-part", daemon=True)
    th.start()
    first = part(reader, None, at)
    th.join()
    if "part" not in got:
        return None
    return merge(first, cast(tuple[list[JsonObj], JsonObj], got["part"]))


def _core_free() -> bool:
    """More than one core, and the last minute's load leaves one of them free."""
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):        # (no load average on this platform: assume the machine is free)
        load = 0.0
    return cores >= 2 and load <= cores - 1


def spans_for(path: str, session: Optional[str], cancel: Cancel) -> tuple[SpanTable, str]:
    """The log's spans: from the cache in this thread, else computed by a child (this thread waits in
    ``read()``, the GIL released), or in this thread when no child can start (``SESSION_LENS_SCAN_INPROC=1``).
    ``cancel``: the job's token (any :data:`app.log.jobctl.Cancel`): a window job's cancel kills the child at
    once; the in-process computation stops at its next tick (:data:`~app.store.timeline_cache.TICK_S`).
    Raises :class:`app.log.jobctl.Cancelled` when cancelled."""
    from .faces import open_reader
    from .timeline_cache import cached_spans
    r = open_reader(path, session)
    if r.fatal:
        raise ValueError(f"{path}: {r.fatal}")
    got, status = cached_spans(r, build=False)
    if got is not None:
        return got, status

    def here(_send: Send, cancelled: Callable[[], bool]) -> tuple[SpanTable, str]:
        def tick() -> None:
            if cancelled():
                raise Cancelled("timeline")
        return cached_spans(r, tick=tick)
    spec = ChildSpec("timeline", request=(path, session), what="timeline", fallback=here,
                     in_process=os.environ.get("SESSION_LENS_SCAN_INPROC") == "1")
    try:
        return cast(tuple[SpanTable, str], run_spec(spec, lambda _m: None, cancel))
    except InterruptedError:
        raise Cancelled("timeline") from None
