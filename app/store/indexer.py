"""Build a session's seq index in a separate process.

The index scan is CPU-bound Python (msgspec envelope decode of every row).  Run in a
thread of the GUI process it competes for the GIL with the UI thread, which then stalls
for 50-120 ms at a time while a 1 GB log indexes.  In a child process the scan has a
core of its own; the GUI only waits on a pipe (which releases the GIL) and unpickles the
finished index (a few arrays, well under a millisecond per MB of marks).

``build_index_isolated`` falls back to an in-process scan when a child cannot be started
(the interpreter cannot be executed) or when
``SESSION_LENS_INDEX_INPROC=1`` is set (benchmarks compare both).  Both use the persistent
index (:mod:`app.store.indexcache`); a saved index that is current (or needs only a few MB
appended since) is taken in-process without starting a child at all (mode "cache").  A child that dies or
reports an error becomes an ``IndexFailed`` with the reason; the store is only read.
"""
from __future__ import annotations

import os
from typing import Literal, Optional, overload
from collections.abc import Callable

from ..log.index.reader import SeqIndex
from ..log.jobctl import JOB_INTERVAL, Cancel, Throttle
from .childproc import ChildFailed, NoChild, Send, run_child, serve, worker_argv

PROGRESS_INTERVAL = JOB_INTERVAL    # progress lines and heartbeats to the parent
CHILD_NICE = 10
CACHE_SCAN_IN_PROCESS = 4 << 20   # a saved index needing at most this much new log scanned is used in-process

What = Literal["index", "checkpoints"]
Progress = Callable[[int, int], None]


class IndexFailed(ChildFailed):
    """The index process reported an error or died."""


def child_main(argv: list[str]) -> int:
    """The child: scan ``argv[0]`` (session id ``argv[1]`` or "") and write pickled
    ("progress", done, total) ... ("done", index) | ("error", text) to stdout."""
    def body(send: Send) -> Optional[SeqIndex]:
        path, sid = argv[0], (argv[1] if len(argv) > 1 and argv[1] else None)
        what = argv[2] if len(argv) > 2 else "index"      # "checkpoints": also the fold checkpoints (saved only)
        from app.store.faces import open_reader
        r = open_reader(path, sid)
        progress = Throttle(PROGRESS_INTERVAL).wrap(lambda done, total: send(("progress", done, total)))
        try:
            from app.store.indexcache import cached_checkpoints, cached_index
            idx: Optional[SeqIndex]
            idx, _status = cached_index(r, progress=progress)
            if what == "checkpoints":
                _with_heartbeat(send, lambda: cached_checkpoints(r))
                idx = None                     # the caller reads both from the cache
        finally:
            r.close()
        return idx
    return serve(body, CHILD_NICE)


def _with_heartbeat(send: Send, work: Callable[[], object]) -> None:
    """Run ``work`` while a thread sends ``("beat",)`` every PROGRESS_INTERVAL: the parent checks its
    cancellation at every message, so a long step without progress of its own still stops at once."""
    import threading
    done = threading.Event()

    def beat() -> None:
        while not done.wait(PROGRESS_INTERVAL):
            try:
                send(("beat",))
            except OSError:                 # the parent is gone (or killed the pipe): nothing to tell
                return
    t = threading.Thread(target=beat, daemon=True)
    t.start()
    try:
        work()
    finally:
        done.set()
        t.join()


def child_command(path: str, session_id: Optional[str], what: What = "index") -> list[str]:
    return worker_argv("index", path, session_id or "", *([] if what == "index" else [what]))


def build_index_inproc(path: str, session_id: Optional[str], progress: Optional[Progress] = None) -> SeqIndex:
    from app.store.faces import open_reader
    r = open_reader(path, session_id)
    try:
        from .indexcache import cached_index
        return cached_index(r, progress=progress)[0]
    finally:
        r.close()


def _checkpoints_inproc(path: str, session_id: Optional[str]) -> None:
    from .faces import open_reader
    from .indexcache import cached_checkpoints, cached_index
    r = open_reader(path, session_id)
    try:
        cached_index(r)
        cached_checkpoints(r)
    finally:
        r.close()


def cached_only(path: str, session_id: Optional[str], max_scan: int = CACHE_SCAN_IN_PROCESS) -> Optional[SeqIndex]:
    """The saved index of ``path`` when it needs at most ``max_scan`` new bytes scanned (else None)."""
    from .faces import open_reader
    from .indexcache import cached_index
    try:
        r = open_reader(path, session_id)
    except Exception:
        return None
    try:
        return cached_index(r, max_scan=max_scan)[0]
    except Exception:           # a cache problem is only a cache miss: the child scans
        return None
    finally:
        r.close()


def _inproc(path: str, session_id: Optional[str], progress: Optional[Progress],
            what: What) -> tuple[Optional[SeqIndex], str]:
    if what == "checkpoints":
        _checkpoints_inproc(path, session_id)
        return None, "thread"
    return build_index_inproc(path, session_id, progress), "thread"


@overload
def build_index_isolated(path: str, session_id: Optional[str] = None, progress: Optional[Progress] = None,
                         cancelled: Cancel = None,
                         what: Literal["index"] = "index") -> tuple[SeqIndex, str]: ...


@overload
def build_index_isolated(path: str, session_id: Optional[str] = None, progress: Optional[Progress] = None,
                         cancelled: Cancel = None, *,
                         what: Literal["checkpoints"]) -> tuple[None, str]: ...


def build_index_isolated(path: str, session_id: Optional[str] = None, progress: Optional[Progress] = None,
                         cancelled: Cancel = None,
                         what: What = "index") -> tuple[Optional[SeqIndex], str]:
    """The SeqIndex of the session at ``path``, scanned in a child process.

    ``progress(done, total)`` is called in the caller's thread; ``cancelled`` (a job, a callable...) is checked
    at every message (about every 40 ms) and, when true, the child is killed and
    ``InterruptedError`` raised.  Returns ``(index, mode)`` with mode "process" or
    "thread" (the in-process fallback); with ``what="checkpoints"`` the index and the fold
    checkpoints are saved in the cache and the index returned is None."""
    if os.environ.get("SESSION_LENS_INDEX_INPROC") == "1":
        return _inproc(path, session_id, progress, what)
    if what == "index":
        idx = cached_only(path, session_id)
        if idx is not None:
            return idx, "cache"

    def on_message(msg: tuple[object, ...]) -> None:
        if msg[0] == "progress" and progress is not None:
            done, total = msg[1], msg[2]
            assert isinstance(done, int) and isinstance(total, int)
            progress(done, total)
    try:
        res = run_child(child_command(path, session_id, what), None, on_message, cancelled, "index", IndexFailed)
    except NoChild:
        return _inproc(path, session_id, progress, what)
    assert res is None or isinstance(res, SeqIndex)
    return res, "process"
