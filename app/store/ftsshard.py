"""Shard worker processes of the home full-text index's first build (:mod:`app.store.fulltext`):
one shard database built by a worker (the ``fts-shard`` kind of :data:`app.store.childproc.WORKERS`)
while the index's own process builds shard 0."""
from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    import subprocess

from ..log.jobctl import JOB_INTERVAL, Throttle, Token
from .ftswalk import shard_path, stat_or_none
from .ftswrite import COUNTS, Cancel, Progress, UpdateReport, cancelled

if TYPE_CHECKING:
    from .fulltext import FullTextIndex


class ShardWorker:
    """One shard updated by a worker process (:func:`serve_shard`): progress and the report read
    from its stdout by a thread; closing its stdin asks it to stop (it keeps what it committed)."""

    def __init__(self, root: str, db_path: str, k: int, n: int, scanned: tuple[Any, Any]):
        # its files (the worker stats them again)
        self.job: dict[str, Any] = {"root": root, "db": db_path, "k": k, "n": n,
                                    "files": [(p, project) for p, _st, project in scanned[0]],
                                    "stores": [p for p, _st in scanned[1]]}
        self.k = k
        self.progress = (0, 0, 0)
        self.proc: Optional[subprocess.Popen[bytes]] = None
        self.thread: Optional[threading.Thread] = None
        self.report: Optional[dict[str, Any]] = None
        self.err = b""
        self.errfile: Optional[Any] = None           # its stderr (a file: a full pipe would block it)

    def start(self) -> None:
        try:
            import subprocess
            import tempfile
            from . import childproc                 # (a query never starts a worker: imported when one does)
            self.errfile = tempfile.TemporaryFile()
            self.proc = childproc.spawn_worker("fts-shard", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                               stderr=self.errfile)
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(self.job).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            return                                  # read back as a dead worker
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        proc = self.proc
        assert proc is not None and proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(b"P "):
                try:
                    d, t, b = (int(x) for x in line.split()[1:4])
                except ValueError:
                    continue
                self.progress = (d, t, b)            # one assignment: read whole by the other thread
            elif line.startswith(b"R "):
                try:
                    self.report = json.loads(line[2:])
                except ValueError:
                    pass
        proc.stdout.close()
        proc.wait()
        if self.errfile is not None:
            self.errfile.seek(0, os.SEEK_END)
            self.errfile.seek(max(0, self.errfile.tell() - 2000))
            self.err = self.errfile.read()

    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def cancel(self) -> None:
        if self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def kill(self) -> None:
        """Stop it now (Cancel that did not end it at once): what it did not commit is not in its shard
        (SQLite drops a killed writer's transaction), what it committed stays."""
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.kill()
            except OSError:
                pass

    def why(self) -> str:
        rc = self.proc.returncode if self.proc is not None else None
        last = self.err.decode("utf-8", "replace").strip().splitlines()[-1:] if self.err else []
        return f"exit code {rc}" + (f": {last[0][:200]}" if last else "")

    def result(self) -> Optional[UpdateReport]:
        r = self.report
        if r is None:
            return None
        rep = UpdateReport()
        for k in COUNTS:
            setattr(rep, k, int(r.get(k, 0)))
        rep.cancelled = bool(r.get("cancelled"))
        rep.problems = [str(x) for x in r.get("problems", [])]
        return rep

    def close(self) -> None:
        import subprocess
        self.cancel()
        if self.proc is not None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.thread is not None:
            self.thread.join(timeout=5)
        if self.errfile is not None:
            self.errfile.close()



def shard_main(_argv: list[str]) -> int:
    """The ``fts-shard`` worker (:data:`app.store.childproc.WORKERS`)."""
    serve_shard()
    return 0


def serve_shard(inp: Any = None, out: Any = None) -> None:
    """A shard worker: one JSON line ``{"root", "db", "k", "n", "files", "stores"}`` on stdin (its
    files: [path, project] pairs), then the update of shard k of n (progress lines ``P done total
    bytes``, at most every 50 ms, then ``R {report}``); the end of stdin stops it between
    sessions (what it committed stays)."""
    inp = inp or sys.stdin.buffer
    out = out or sys.stdout.buffer
    job = json.loads(inp.readline())
    stop = Token("fts-shard")               # the one token: its cancel also kills the extraction workers

    def watch() -> None:
        while inp.read(4096):
            pass
        stop.cancel()
    threading.Thread(target=watch, daemon=True).start()
    throttle = Throttle(JOB_INTERVAL)       # the one progress throttle (app.log.jobctl)

    def progress(done: int, total: int, nbytes: int) -> None:
        if throttle.due(done, total):
            out.write(f"P {done} {total} {nbytes}\n".encode())
            out.flush()
    scanned = ([(p, st, project) for p, project in job["files"] if (st := stat_or_none(p)) is not None],
               [(p, st) for p in job["stores"] if (st := stat_or_none(p)) is not None])
    from .fulltext import FullTextIndex
    with FullTextIndex(job["root"], db_path=job["db"], part=(int(job["k"]), int(job["n"]))) as ix:
        rep = ix.update_one(progress, stop, 0, scanned)
    d: dict[str, Any] = {k: getattr(rep, k) for k in COUNTS}
    d.update(cancelled=rep.cancelled, problems=rep.problems)
    out.write(b"R " + json.dumps(d).encode() + b"\n")
    out.flush()


CANCEL_GRACE_S = 0.05


def update_shards(ix: FullTextIndex, progress: Progress, cancel: Cancel, scans: list[Any]) -> UpdateReport:
    """Update every shard at once: shards 1..n-1 in worker processes (:func:`serve_shard`),
    shard 0 in this one.  Each shard is an index of its own (WAL, a transaction per batch of
    sessions), so a crash or a killed worker leaves every shard usable; a worker that died is
    finished here.  ``scans``: each shard's part of the walk (handed to its worker: no
    second walk)."""
    _k, n = ix.part
    workers = [ShardWorker(ix.root, shard_path(ix.db_path, i), i, n, scans[i]) for i in range(1, n)]
    own = [0, 0, 0]

    def report_progress() -> None:               # in this thread only
        if progress is not None:
            got = [own] + [list(w.progress) for w in workers]
            progress(*(sum(x[i] for x in got) for i in range(3)))

    def mine(done: int, total: int, nbytes: int) -> None:
        own[:] = [done, total, nbytes]
        report_progress()
    stopped = False

    def stop() -> bool:
        nonlocal stopped
        if not stopped and cancelled(cancel):
            stopped = True
            for w in workers:
                w.cancel()
        return stopped
    try:
        for w in workers:
            w.start()
        rep = ix.update_one(mine, stop, 0, scans[0])
        deadline: Optional[float] = None
        while any(w.running() for w in workers):
            if stop():                           # Cancel: a worker not ended within CANCEL_GRACE_S is killed
                deadline = deadline or time.monotonic() + CANCEL_GRACE_S
                if time.monotonic() >= deadline:
                    for w in workers:
                        w.kill()
            report_progress()
            time.sleep(0.02)
        for w in workers:
            got = w.result()
            if got is None and not stopped:      # the worker died: its shard is finished here
                sh = ix.parts()[w.k]
                got = sh.update_one(None, stop, 0, scans[w.k])
                got.problems.insert(0, f"index worker {w.k} stopped ({w.why()}): finished in this process")
            if got is not None:
                rep.merge(got)
            else:
                rep.cancelled = True
    finally:
        for w in workers:
            w.close()
    rep.workers = n
    return rep
