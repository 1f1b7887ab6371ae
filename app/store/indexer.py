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
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional
from collections.abc import Callable

PROGRESS_INTERVAL = 0.04
CHILD_NICE = 10
CHILD_FLAG = "--session-lens-index-child"      # argv[1] of a frozen binary running as the child
CACHE_SCAN_IN_PROCESS = 4 << 20   # a saved index needing at most this much new log scanned is used in-process


class IndexFailed(RuntimeError):
    """The index process reported an error or died."""


def child_main(argv: list) -> int:
    """The child: scan ``argv[0]`` (session id ``argv[1]`` or "") and write pickled
    ("progress", done, total) ... ("done", index) | ("error", text) to stdout."""
    out = sys.stdout.buffer
    try:
        os.nice(CHILD_NICE)    # background work: on a busy machine the UI thread gets the CPU first
    except (AttributeError, OSError):
        pass
    path, sid = argv[0], (argv[1] if len(argv) > 1 and argv[1] else None)
    what = argv[2] if len(argv) > 2 else "index"      # "checkpoints": also the fold checkpoints (saved only)

    def send(msg) -> None:
        pickle.dump(msg, out, protocol=pickle.HIGHEST_PROTOCOL)
        out.flush()
    try:
        from app.store.faces import open_reader
        r = open_reader(path, sid)
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_INTERVAL:
                last[0] = now
                send(("progress", done, total))
        try:
            from app.store.indexcache import cached_checkpoints, cached_index
            idx, _status = cached_index(r, progress=progress)
            if what == "checkpoints":
                cached_checkpoints(r)
                idx = None                     # the caller reads both from the cache
        finally:
            r.close()
        send(("done", idx))
        return 0
    except BrokenPipeError:
        return 1
    except BaseException as e:  # noqa: BLE001 - everything is reported to the parent
        try:
            send(("error", f"{type(e).__name__}: {e}"))
        except Exception:
            pass
        return 1


def child_command(path: str, session_id: Optional[str], what: str = "index") -> list:
    extra = [] if what == "index" else [what]
    if getattr(sys, "frozen", False):           # the packaged binary runs itself (entry.py)
        return [sys.executable, CHILD_FLAG, path, session_id or ""] + extra
    return [sys.executable, "-m", "app.store.indexer", path, session_id or ""] + extra


def build_index_inproc(path: str, session_id: Optional[str],
                       progress: Optional[Callable[[int, int], None]] = None):
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


def cached_only(path: str, session_id: Optional[str], max_scan: int = CACHE_SCAN_IN_PROCESS):
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


def build_index_isolated(path: str, session_id: Optional[str] = None,
                         progress: Optional[Callable[[int, int], None]] = None,
                         cancelled: Optional[Callable[[], bool]] = None, what: str = "index"):
    """The SeqIndex of the session at ``path``, scanned in a child process.

    ``progress(done, total)`` is called in the caller's thread; ``cancelled()`` is checked
    at every message (about every 40 ms) and, when true, the child is killed and
    ``InterruptedError`` raised.  Returns ``(index, mode)`` with mode "process" or
    "thread" (the in-process fallback)."""
    if os.environ.get("SESSION_LENS_INDEX_INPROC") == "1":
        if what == "checkpoints":
            return _checkpoints_inproc(path, session_id), "thread"
        return build_index_inproc(path, session_id, progress), "thread"
    if what == "index":
        idx = cached_only(path, session_id)
        if idx is not None:
            return idx, "cache"
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    err = tempfile.TemporaryFile()
    try:
        proc = subprocess.Popen(child_command(path, session_id, what), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=err, env=env, close_fds=True)
    except OSError:
        err.close()
        if what == "checkpoints":
            return _checkpoints_inproc(path, session_id), "thread"
        return build_index_inproc(path, session_id, progress), "thread"
    try:
        while True:
            if cancelled is not None and cancelled():
                raise InterruptedError("index cancelled")
            try:
                msg = pickle.load(proc.stdout)         # blocks in read(): the GIL is released
            except EOFError:
                code = proc.wait(5)
                err.seek(0)
                tail = err.read()[-600:].decode("utf-8", "replace").strip()
                raise IndexFailed(f"index process ended without a result (exit code {code})"
                                  + (f": {tail.splitlines()[-1]}" if tail else ""))
            kind = msg[0]
            if kind == "progress":
                if progress is not None:
                    progress(msg[1], msg[2])
            elif kind == "done":
                try:
                    proc.wait(2)
                except subprocess.TimeoutExpired:
                    pass
                return msg[1], "process"
            else:
                raise IndexFailed(msg[1])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
        proc.wait(5)
        err.close()


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
