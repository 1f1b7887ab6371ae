"""Reading sessions for the home full-text index (:mod:`app.store.fulltext`): which files are
sessions, the extraction worker processes (:func:`app.log.query.extract.serve`), the rows of a segment
that may hold text, and the batched writes.  No Qt; the extraction itself is :mod:`app.log.query.extract`."""
from __future__ import annotations

import os
import sqlite3
import zlib
from collections import deque
from collections.abc import Generator, Iterator
from typing import Any, Optional

from ..log.query.extract import CRC_WINDOW, FileText, extract_many, skips
from ..log.source.sources import Segment
from .discovery import PROJECT_RE

POOL_MIN_FILES = 4            # worker processes only for at least this many files …
POOL_MIN_BYTES = 16 << 20     # … holding this much (starting one costs ~0.2 s of CPU)
CHUNK_BYTES = 2 << 20         # files handed to a worker at a time (up to this many bytes …)
CHUNK_FILES = 64              # … or files)


def _chunks(paths: list[tuple[str, int]]) -> Iterator[list[str]]:
    cur: list[str] = []
    n = 0
    for p, size in paths:
        cur.append(p)
        n += size
        if n >= CHUNK_BYTES or len(cur) >= CHUNK_FILES:
            yield cur
            cur, n = [], 0
    if cur:
        yield cur


def extracted(paths: list[tuple[str, int]], workers: int, cancel: Any = None) -> Generator[FileText, None, None]:
    """extract_jsonl of each path, in order: inline, or by ``workers`` worker processes
    (:func:`app.log.query.extract.serve`; chunks handed out in turn, two in flight per worker, so
    memory stays flat while this process writes).  A worker that dies leaves the rest inline.
    ``cancel``: looked at between rows of the session being read (workers are killed within ~20 ms);
    raises :class:`app.store.ftswrite.Cancelled` (issue 29: Cancel does not wait for a big session)."""
    from ..log.query.extract import ExtractCancelled
    try:
        yield from _extracted(paths, workers, cancel)
    except ExtractCancelled:
        from .ftswrite import Cancelled
        raise Cancelled() from None


def _kill_all(procs: list[Any]) -> None:
    for w in procs:
        if w.poll() is None:
            w.kill()


def _watch(procs: list[Any], cancel: Any) -> Any:
    """Kill ``procs`` once ``cancel`` says stop (their pipes then end).  A token with ``on_cancel`` (a window
    job, :class:`app.log.jobctl.Token`) kills them from its cancel, at once (None returned); any other form
    (a ``threading.Event``, a callable) is polled every 20 ms by a thread: the returned event's .set() ends it."""
    hook = getattr(cancel, "on_cancel", None)
    if hook is not None:
        hook(lambda: _kill_all(procs))
        return None
    import threading
    from ..log.jobctl import is_cancelled
    done = threading.Event()

    def run() -> None:
        while not done.wait(0.02):
            if is_cancelled(cancel):
                for w in procs:
                    w.kill()
                return
    threading.Thread(target=run, name="fts-extract-cancel", daemon=True).start()
    return done


def _extracted(paths: list[tuple[str, int]], workers: int, cancel: Any) -> Generator[FileText, None, None]:
    if workers <= 0:
        for path, _ in paths:
            yield from extract_many([path], cancel)
        return
    import pickle
    import subprocess
    from ..log.query.extract import read_frame, write_frame
    from . import childproc
    procs = [childproc.spawn_worker("fts-extract", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for _ in range(workers)]
    watcher = _watch(procs, cancel) if cancel is not None else None
    chunks = _chunks(paths)
    pending: deque[tuple[subprocess.Popen[bytes], list[str]]] = deque()
    turn = 0
    broken = False

    def submit() -> bool:
        nonlocal turn
        ch = next(chunks, None)
        if ch is None:
            return False
        w = procs[turn % len(procs)]
        turn += 1
        try:
            assert w.stdin is not None
            write_frame(w.stdin, pickle.dumps(ch))
        except OSError:
            pass                                   # read back as a dead worker
        pending.append((w, ch))
        return True
    try:
        for _ in range(2 * workers):
            if not submit():
                break
        while pending:
            w, ch = pending.popleft()
            got = None if broken or w.stdout is None else read_frame(w.stdout)
            if got is None:                        # the worker died: this chunk and the rest inline
                broken = True
                yield from extract_many(ch, cancel)
                continue
            submit()
            yield from pickle.loads(got)
        if broken:
            for ch in chunks:
                yield from extract_many(ch, cancel)
    finally:                                       # end of input; an answer nobody reads ends it too (EPIPE)
        if watcher is not None:
            watcher.set()
        for w in procs:
            for pipe in (w.stdin, w.stdout):
                try:
                    if pipe is not None:
                        pipe.close()
                except OSError:
                    pass
        for w in procs:
            try:
                w.wait(timeout=5)
            except subprocess.TimeoutExpired:
                w.kill()
                w.wait()


def auto_workers(fast: list[tuple[str, int]]) -> int:
    """Two extraction processes for a big first build (2 cores: this process writes meanwhile),
    none for a few sessions or one core."""
    if (os.cpu_count() or 1) < 2:
        return 0
    if len(fast) < POOL_MIN_FILES or sum(n for _, n in fast) < POOL_MIN_BYTES:
        return 0
    return 2


def safe_listdir(p: str) -> list[str]:
    try:
        return os.listdir(p)
    except OSError:
        return []


def looks_like_session(p: str, root: str) -> bool:
    """A file meant to be a session (reported when unreadable) rather than some other JSONL."""
    name = os.path.basename(p)
    if name.startswith("session.") or name.startswith("session-"):
        return True
    parts = os.path.relpath(p, root).split(os.sep)
    return any(PROJECT_RE.match(x) for x in parts[:-1])


def list_store(p: str) -> list[dict[str, Any]]:
    from .sqlite_store import SqliteStore
    store = SqliteStore.open(p)
    try:
        return list(store.list_sessions())
    finally:
        store.close()


def upsert_file(c: sqlite3.Connection, r: tuple[Any, ...]) -> None:
    c.execute("INSERT OR REPLACE INTO files(path, dev, ino, size, mtime_ns, kind, problem) VALUES (?,?,?,?,?,?,?)",
              r)


def crc_before(path: str, pos: int) -> Optional[int]:
    """CRC-32 of the stored bytes just before ``pos`` (proves a prefix unchanged)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        a = max(0, pos - CRC_WINDOW)
        data = os.pread(fd, pos - a, a)
        if len(data) != pos - a:
            return None
        return zlib.crc32(data)
    finally:
        os.close(fd)


def split(seg: Segment) -> list[tuple[Any, Optional[bytes], Optional[int], Optional[int]]]:
    """[(pos, raw|None, line, offset)] of a text segment's rows that may hold text; raw None = the
    torn last row.  Rows written the dsh way whose type shows no text are left out here (most
    rows of a long session are streamed chunks)."""
    out: list[tuple[Any, Optional[bytes], Optional[int], Optional[int]]] = []
    parts = seg.data.split(b"\n")
    last = len(parts) - 1
    at = 0
    line = seg.line0
    t0 = seg.text_offset
    row_pos = seg.row_pos
    for i, raw in enumerate(parts):
        if i == last:
            if raw:                                   # no newline after it: torn
                out.append((row_pos(at), None, line, t0 + at if t0 >= 0 else None))
            break
        if raw.startswith(b'{"type":"'):
            e = raw.find(b'"', 9)
            t = raw[9:e] if e > 9 else None
            if t is not None and skips(t, raw):
                at += len(raw) + 1
                if line is not None:
                    line += 1
                continue
        if raw and not raw.isspace():
            out.append((row_pos(at), raw, line, t0 + at if t0 >= 0 else None))
        at += len(raw) + 1
        if line is not None:
            line += 1
    return out


def flush(c: sqlite3.Connection, ent: list[tuple[Any, ...]], fts: list[tuple[Any, ...]], fts5: bool) -> None:
    if ent:
        c.executemany("INSERT INTO entries(rowid, sid, seq, turn, time, kind, tool) VALUES (?,?,?,?,?,?,?)", ent)
        ent.clear()
    if fts:
        if fts5:
            c.executemany("INSERT INTO fts(rowid, body) VALUES (?,?)", fts)
        fts.clear()
