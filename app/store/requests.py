"""The exact request at a dispatch boundary, and the trace of a row, for the window: cancellable,
never from seq 0 in-process.

:func:`exact_request` (run in a worker thread) uses the saved seq index and fold checkpoints
(:mod:`app.store.indexcache`).  When either is missing it has them built by a child process
(:func:`app.store.indexer.build_index_isolated`, ``what="checkpoints"``), so the long first pass
neither holds the GIL of the window (opening another session stays responsive) nor keeps
running once the request is no longer wanted: ``cancelled()`` is polled while waiting on the
child (which is then killed) and between segments of the short replay afterwards.
"""
from __future__ import annotations

from typing import Optional
from collections.abc import Callable, Iterator

from ..log.query.analysis import request_at as request_from_scratch
from ..log.format.model import Event
from ..log.jobctl import Cancel
from .faces import open_reader


def exact_request(path: str, session_id: Optional[str], seq: int,
                  cancelled: Cancel = None,
                  check: Optional[Callable[[], None]] = None,
                  progress: Optional[Callable[[int, int], None]] = None, as_written: bool = False) -> dict[str, object]:
    """``request_at`` for the window: -> the request dict plus ``"mode"`` ("saved" | "built" | "scratch");
    ``progress(done, total)``: of the index scan when the checkpoints must be built first; ``as_written``: a v3
    log's request in the writer-era shape (default: as today's dsh derives it)."""
    from ..log.fold import checkpoints
    from .indexcache import cached_checkpoints, cached_index
    from .indexer import CACHE_SCAN_IN_PROCESS, build_index_isolated
    r = open_reader(path, session_id)
    try:
        indexed = r.header is not None and r.header.version in (0, None, 2, 3, 4) and r.source.kind in ("jsonl", "zstd")
        if not indexed:
            out = request_from_scratch(r, seq, as_written=as_written)
            out["mode"] = "scratch"
            return out
        idx, _ = cached_index(r, max_scan=CACHE_SCAN_IN_PROCESS)
        cps, _ = cached_checkpoints(r, build=False) if idx is not None else (None, "miss")
        mode = "saved"
        if idx is None or cps is None:
            build_index_isolated(path, session_id, progress=progress, cancelled=cancelled, what="checkpoints")
            mode = "built"
            r.close()
            r = open_reader(path, session_id)
            idx, _ = cached_index(r)
            cps, _ = cached_checkpoints(r)
        out = checkpoints.request_at(r, seq, cps, check=check, as_written=as_written)
        out["mode"] = mode
        return out
    finally:
        r.close()


def exact_trace(path: str, session_id: Optional[str], seq: int,
                cancelled: Cancel = None,
                check: Optional[Callable[[], None]] = None, request_cap: int = 50,
                build: bool = True) -> dict[str, object]:
    """``trace_event`` of one row for the window (run in a worker thread), without a pass over the log:
    from the saved seq index, fold checkpoints and surface index
    (:func:`app.log.query.trace.trace_from_checkpoints`).  Missing checkpoints are built by a child
    process as for :func:`exact_request` (``build=False``: not built; the from-scratch trace
    instead).  A log the checkpoints cannot answer (not indexed, seqs not contiguous, a repair
    cut…) gets the from-scratch trace, ``check()`` polled every 4,096 events.  Raises
    :class:`app.log.query.trace.TraceError` as ``trace_event`` does."""
    from ..log.query.trace import trace_event, trace_from_checkpoints
    from .indexcache import cached_checkpoints, cached_index
    from .surface_cache import cached_surface
    from .indexer import CACHE_SCAN_IN_PROCESS, build_index_isolated
    r = open_reader(path, session_id)
    try:
        indexed = r.header is not None and r.header.version in (0, None, 2, 3, 4) and r.source.kind in ("jsonl", "zstd")
        if indexed:
            idx, _ = cached_index(r, max_scan=CACHE_SCAN_IN_PROCESS)
            cps, _ = cached_checkpoints(r, build=False) if idx is not None else (None, "miss")
            if (idx is None or cps is None) and build:
                build_index_isolated(path, session_id, cancelled=cancelled, what="checkpoints")
                r.close()
                r = open_reader(path, session_id)
                idx, _ = cached_index(r)
                cps, _ = cached_checkpoints(r)
            if idx is not None and cps is not None:
                si, _ = cached_surface(r)
                out = trace_from_checkpoints(r, seq, cps, si, request_cap=request_cap, check=check)
                if out is not None:
                    return out

        def events() -> Iterator[Event]:
            for k, ev in enumerate(r.iter_events(logical=True)):
                if check is not None and not k & 4095:
                    check()
                yield ev
        return trace_event(events(), seq, request_cap=request_cap)
    finally:
        r.close()
