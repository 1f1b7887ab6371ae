"""The timeline of a log computed in a low-priority child process (:mod:`app.store.childproc`, kind ``timeline``).

A first timeline of a big log is one pass over every row (seconds per hundred MB); in a thread of the
window's process it would hold the GIL against the UI thread, so the window's worker asks a child,
which computes it, saves it in the cache (:func:`app.store.timeline_cache.cached_spans`) and sends it
back.  A cached timeline is read in the worker thread directly (no child).  When no child can be started
(or ``SESSION_LENS_SCAN_INPROC=1``) it is computed in the calling thread.
"""
from __future__ import annotations

import gc
import os
import pickle
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional, cast

import msgspec

from ..log.format.payloads import JsonObj
from ..log.gcpause import collector_paused
from ..log.query.timeline_table import SpanTable
from ..log.jobctl import Cancel, Cancelled
from .childproc import ChildFailed, ChildSpec, NoChild, Send, run_child, run_spec, serve, worker_argv

if TYPE_CHECKING:
    from ..log.index.reader import LogReader

TIMELINE_NICE = 10
SPLIT_MIN = 96 << 20     # a raw JSONL log at least this big is read in parts at once (timeline_split.py) …
PART_MIN = 48 << 20      # … of at least this many bytes each …
MAX_PARTS = 8            # … in at most this many processes …
SPLIT_WHEN_BUSY = False  # … when cores are free (on a busy machine more processes only add their start-up)
PARTS: Optional[int] = None   # (forced number of parts, whatever the load: tests and bench/timeline_bench.py)
SEND_BATCH = 1 << 14     # a later part sends its spans in batches of about this many while it reads on (0: at its end)


def child_main(_argv: list[str]) -> int:
    """The child: ``(path, session)`` pickled on stdin -> ``(spans, status)``."""
    def body(send: Send) -> Any:
        from .faces import open_reader
        from .timeline_cache import cached_spans
        gc.disable()        # (this process makes the spans, sends them and ends: no collection of them is needed)
        path, session = pickle.load(sys.stdin.buffer)
        r = open_reader(path, session)
        if r.fatal:
            raise ValueError(f"{path}: {r.fatal}")
        return cached_spans(r, tick=lambda: send(("tick",)))
    return serve(body, TIMELINE_NICE)


def part_main(_argv: list[str]) -> int:
    """A later part of a log split in parts: ``(path, size, start, stop[, batch])`` pickled on stdin -> (spans, state)
    of :func:`app.log.query.timeline_split.part` from ``start`` to ``stop`` (None: to the end; an error if the log is
    no longer ``size`` bytes: the first part read another snapshot), its spans as MessagePack
    (:func:`~app.log.query.timeline_split.packed_part`); with ``batch``, most of them sent before, in ``("spans",
    bytes)`` messages of about ``batch`` spans each, while it reads on."""
    def body(send: Send) -> Any:
        from ..log.query.timeline_split import packed_part, part
        from .faces import open_reader
        threading.Thread(target=_orphaned, args=(os.getppid(),), name="parent-watch", daemon=True).start()
        gc.disable()        # (as child_main's)
        path, size, start, stop, *more = pickle.load(sys.stdin.buffer)
        r = open_reader(path, None)
        if r.fatal or r.source.size != size:
            raise ValueError(f"{path}: not the log of the first part")
        batch = more[0] if more else 0

        def sink(spans: list[JsonObj]) -> None:          # (sent while it reads on: read back meanwhile)
            send(("spans", packed_part((spans, {}))[0]))
        # (its spans as MessagePack: read back ~4x faster than pickled)
        return packed_part(part(r, start, stop, sink if batch else None, batch or 1))
    return serve(body, 0)         # (the niceness of the process reading the first part, inherited)


def _orphaned(parent: int) -> None:
    """End this process as soon as its parent is gone (the first part's process, killed by a cancel)."""
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(1)


def split_spans(reader: LogReader) -> Optional[list[JsonObj]]:
    """The spans of a big raw JSONL log (:data:`SPLIT_MIN`) read in parts at once: this thread reads the first,
    a ``timeline-part`` child each other (:mod:`app.log.query.timeline_split`; as many parts as cores are free,
    :func:`parts_for`), else None: not such a log, no free core, no turn start where to cut, no child, or parts
    that do not join (the caller makes one pass)."""
    from ..log.query.timeline_split import merge_all, part, split_points, unpacked_part
    src = reader.source
    n = parts_for(src.size) if src.kind == "jsonl" and os.environ.get("SESSION_LENS_SCAN_INPROC") != "1" else 1
    cuts = split_points(reader, n) if n > 1 else []
    if not cuts:
        return None
    bounds = list(zip(cuts, cuts[1:] + [None]))
    got: dict[int, Any] = {}

    def later(k: int, start: int, stop: Optional[int]) -> None:
        sent: list[JsonObj] = []              # (the spans the part sends while it reads on, read back meanwhile)
        marks = [0]

        def batch(m: tuple[object, ...]) -> None:
            if m[0] == "spans":
                spans, state = unpacked_part((cast(Any, m[1]), {}))
                sent.extend(spans)
                marks[0] += state.get("marks", -1 << 40)      # (not known: merge_all looks at every span)
        try:
            rest, state = unpacked_part(cast(Any, run_child(worker_argv("timeline-part"),
                                                            (src.path, src.size, start, stop, SEND_BATCH), batch,
                                                            None, "timeline part")))
            if "marks" in state:
                state["marks"] = state["marks"] + marks[0] if marks[0] >= 0 else -1
            got[k] = (sent + rest, state)
        except (NoChild, ChildFailed, OSError, ValueError, msgspec.DecodeError) as e:
            got[k] = e
    threads = [threading.Thread(target=later, args=(k, a, z), name=f"timeline-part-{k}", daemon=True)
               for k, (a, z) in enumerate(bounds)]
    with collector_paused():    # (the first part's spans and the others' read back: ~0.8 s of collections per GB)
        for th in threads:
            th.start()
        first = part(reader, None, cuts[0])
        for th in threads:
            th.join()
        rest = [got.get(k) for k in range(len(bounds))]
        if any(not isinstance(x, tuple) for x in rest):
            return None
        return merge_all([first] + cast(list[tuple[list[JsonObj], JsonObj]], rest))


def parts_for(size: int) -> int:
    """How many parts to read a raw JSONL log of ``size`` bytes in: 1 under :data:`SPLIT_MIN`; else one per free
    core (:data:`PARTS` when set; every core with :data:`SPLIT_WHEN_BUSY`), each of at least :data:`PART_MIN`
    bytes, at most :data:`MAX_PARTS` and never more than the cores.  On 2 cores, 2 parts only under a load of 0.5:
    the second process adds its start, its spans' transfer and the first's read of them (~1.6 s CPU per GB in all),
    and the end of the pass (ordering, table, save: ~1 s per GB) stays serial, so even an idle second core saves
    little, and a busy one makes it slower (bench/timeline_bench.py --parts=2, load 3 to 4: 5.0 s/GB wall in 2
    processes, 3.3 in one)."""
    if PARTS is not None:
        return PARTS
    if size < SPLIT_MIN:
        return 1
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):        # (no load average on this platform: assume the machine is free)
        load = 0.0
    free = cores if SPLIT_WHEN_BUSY else int(cores - load + 0.5)   # (an idle core or more besides this process's)
    return max(1, min(free, cores, MAX_PARTS, size // PART_MIN if PART_MIN else MAX_PARTS))   # (never more than cores:
    # on an idle 2-core machine 3 parts ran 3 processes on 2 cores)


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
