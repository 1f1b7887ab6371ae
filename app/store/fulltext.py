"""Full-text index of a Harness home (or any JSONL tree, folder of sessions, SQLite store).

An embedded SQLite FTS5 database (standard library ``sqlite3``, no server) in the user cache
directory (``platformdirs.user_cache_dir("session-lens")/fulltext``; ``SESSION_LENS_CACHE_DIR``
overrides the base), one file per indexed root.  It indexes the text a user sees per event
(:mod:`app.log.query.extract`, the same fields as :func:`app.log.query.textview.event_fields`: messages,
reasoning, tool arguments, whole tool output, errors, titles); each entry carries session, seq,
turn, kind, tool name and time (a plain ``entries`` table; the FTS5 table holds the text only).

Incremental by revision (spec §1.6): a session file whose (device, inode, size, mtime) is
unchanged is not opened at all; a log that grew on the same inode is read from where the index
stopped (the end of its last complete row or frame; a checksum of the bytes before that point
proves the prefix is the same); a replaced, shrunk or rewritten one is indexed again.  A SQLite
store is listed when the file changed and a session whose revision changed is indexed again.

Fast first build: a new JSONL session is read whole with one open and one read and its text
extracted without typed events (:func:`app.log.query.extract.extract_jsonl`); rows are written with
``executemany`` in large transactions.  The first build of a big root is sharded: the sessions
are dealt out by size into two shards (``<index>.sqlite`` and ``<index>.shard1.sqlite``; a
session found later goes where a hash of its path says), a worker process (:func:`serve_shard`) builds shard 1 while this one
builds shard 0, so both cores extract and both write FTS5 (no text crosses a pipe).  Queries fan
out over the shards and merge (:mod:`app.store.ftssearch`); later updates walk once and update
each shard in this process (a grown session stays in its shard).  An index that started with one
shard stays so; its big updates extract in worker processes (:func:`app.store.ftsio.extracted`).

Crash-safe: WAL journal, each session's rows and its bookkeeping row are written in one
transaction, so a crash leaves every session either as before or fully updated; each shard is
such an index of its own sessions (no session spans two files), so a killed worker leaves its
shard usable and the build is finished in this process.  A session's rows are kept in memory
until it was read whole and written with those of the next sessions at the commit (every 1000
sessions or 32 MB of text: a commit makes FTS5 write a segment); one too big for memory is
written as it is read, inside a savepoint (a savepoint per session made FTS5 flush a segment per
session).
It never writes into the store: sources are opened read-only (JSONL/zstd by ``os.read``/``pread``,
SQLite ``mode=ro``).  Where the Python build lacks FTS5, :func:`fts5_available` says so and
searches fall back to scanning the sessions with the same extraction.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

from . import childproc
from ..log.query.extract import FAST_MAX_BYTES, Entry, FileText, RowText, may_hold_text
from ..log.index.reader import LogReader
from ..log.source.sources import open_source
from .discovery import SESSION_SUFFIXES, SQLITE_SUFFIXES, _PROJECT_RE, _older_generations, read_header_bytes
from .ftsio import (auto_workers, crc_before, extracted, flush, list_store, looks_like_session, safe_listdir, split,
                    upsert_file)
from .ftsquery import FTS5_MISSING, QueryError, SearchHit, SearchResult, SessionGroup, parse_query
from .ftssearch import SHIFT, IndexQueries

__all__ = ["FullTextIndex", "QueryError", "SearchHit", "SearchResult", "SessionGroup", "UpdateReport",
           "fts5_available", "parse_query", "FTS5_MISSING"]

SCHEMA = 3                    # 3: shards (an index of 2 read by a build without shards would miss half)
_COMMIT_BYTES = 32 << 20     # a commit makes FTS5 write its pending terms as a segment: few, big ones
_COMMIT_SESSIONS = 1000
_FLUSH_ROWS = 2048            # rows written at a time by a session written as it is read
_MEMORY_BYTES = 16 << 20      # a session's text kept in memory before it is written in a savepoint
_FAST_BYTES = FAST_MAX_BYTES  # new JSONL sessions up to this size are read whole (extract_jsonl)
Cancel = Optional[object]     # a callable returning True, or a threading.Event
Progress = Optional[Callable[[int, int, int], None]]


def fts5_available() -> bool:
    """Does this Python's SQLite have FTS5?"""
    try:
        c = sqlite3.connect(":memory:")
        try:
            c.execute("CREATE VIRTUAL TABLE t USING fts5(a)")
        finally:
            c.close()
        return True
    except sqlite3.OperationalError:
        return False


def cache_dir() -> str:
    base = os.environ.get("SESSION_LENS_CACHE_DIR")
    if not base:
        import platformdirs
        base = platformdirs.user_cache_dir("session-lens")
    return os.path.join(base, "fulltext")


def index_path_for(root: str) -> str:
    real = os.path.realpath(os.path.expanduser(root))
    h = hashlib.sha1(real.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(real.rstrip(os.sep)) or "root")[:40]
    return os.path.join(cache_dir(), f"{name}-{h}.sqlite")


@dataclass
class UpdateReport:
    sessions: int = 0          # sessions found
    indexed: int = 0           # indexed from scratch (new, replaced, shrunk)
    grown: int = 0             # indexed from where they stopped
    unchanged: int = 0         # skipped: same revision
    removed: int = 0
    skipped: int = 0           # unreadable: reported in problems
    files_opened: int = 0      # files opened to read (headers or content); 0 when nothing changed
    bytes_read: int = 0        # stored bytes read for indexing
    entries: int = 0           # entries written
    seconds: float = 0.0
    cancelled: bool = False
    workers: int = 0           # extraction processes used
    fallback: Optional[str] = None
    problems: list[str] = field(default_factory=list)

    def merge(self, o: UpdateReport) -> None:
        """Add another shard's report to this one."""
        for k in _COUNTS:
            setattr(self, k, getattr(self, k) + getattr(o, k))
        self.cancelled = self.cancelled or o.cancelled
        self.problems += o.problems

    def to_dict(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "indexed": self.indexed, "grown": self.grown,
                "unchanged": self.unchanged, "removed": self.removed, "skipped": self.skipped,
                "filesOpened": self.files_opened, "bytesRead": self.bytes_read, "entries": self.entries,
                "seconds": round(self.seconds, 3), "cancelled": self.cancelled}


_DDL = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS sessions(
  sid INTEGER PRIMARY KEY, key TEXT UNIQUE NOT NULL, id TEXT, path TEXT, store TEXT, format TEXT,
  project TEXT, cwd TEXT, title TEXT, created INTEGER,
  dev INTEGER, ino INTEGER, size INTEGER, mtime_ns INTEGER, revision TEXT,
  done_pos INTEGER, done_line INTEGER, done_text INTEGER, done_crc INTEGER,
  turn INTEGER, calls TEXT, entries INTEGER DEFAULT 0, status TEXT, problem TEXT);
CREATE TABLE IF NOT EXISTS files(path TEXT PRIMARY KEY, dev INTEGER, ino INTEGER, size INTEGER,
  mtime_ns INTEGER, kind TEXT, problem TEXT);
CREATE TABLE IF NOT EXISTS entries(rowid INTEGER PRIMARY KEY, sid INTEGER NOT NULL, seq INTEGER,
  turn INTEGER, time INTEGER, kind TEXT, tool TEXT);
"""
_SHIFT = SHIFT
# the text only: kind, tool and time are plain columns of ``entries`` (a filter is a join, not
# FTS columns to tokenize); positions kept (detail=full) so "phrases" are exact
_FTS_DDL = "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
# FTS5 writes a new segment whenever its in-memory terms pass this size (default 1 MB): fewer,
# bigger segments for a first build (less merging); memory stays bounded (per index process)
_FTS_HASHSIZE = 8 << 20
MAX_SHARDS = 8
_SESSION_COLS = ("sid, key, id, path, store, format, project, cwd, created, dev, ino, size, mtime_ns, revision, "
                 "done_pos, done_line, done_text, done_crc, turn, calls, entries, title")


_COUNTS = ("sessions", "indexed", "grown", "unchanged", "removed", "skipped", "files_opened", "bytes_read", "entries")


def _shard_scan(scanned: tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]],
                n: int, known: Optional[dict[str, int]] = None) -> list[
        tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]]:
    """The walk split into each shard's part.  ``known``: path -> the shard that recorded it (a
    file stays where it is); a file no shard knows goes where :func:`shard_of` says.  Without
    ``known`` (a first build) the files are dealt out by size, biggest first to the shard with
    the fewest bytes, so the shard processes finish together."""
    out: list[tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]] = \
        [([], []) for _ in range(n)]
    if known is None:
        load = [0] * n
        for f in sorted(scanned[0], key=lambda f: -f[1].st_size):
            i = load.index(min(load))
            load[i] += f[1].st_size
            out[i][0].append(f)
        for g in scanned[1]:
            out[shard_of(g[0], n)][1].append(g)
        for part in out:
            part[0].sort(key=lambda f: f[0])
        return out
    for f in scanned[0]:
        out[known.get(f[0], shard_of(f[0], n))][0].append(f)
    for g in scanned[1]:
        out[known.get(g[0], shard_of(g[0], n))][1].append(g)
    return out


def _stat_into(paths: Iterable[str], project: Optional[str], files: list[tuple[str, os.stat_result, Optional[str]]],
               stores: list[tuple[str, os.stat_result]]) -> None:
    """Stat each path (gone: passed over) and file it with the SQLite stores or the session files."""
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        if p.endswith(SQLITE_SUFFIXES):
            stores.append((p, st))
        else:
            files.append((p, st, project))


def _walk_stat(base: str, projects: bool, max_depth: int = 8) -> tuple[
        list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]:
    """The walk of :func:`app.store.discovery._walk` (same folders and names) in one pass with the
    stat of each file: (session files with their project, SQLite stores), sorted by path.  A
    folder holding several generations of a session keeps the newest (``_older_generations``
    on that folder's files only); ``projects``: a file two folders or more below ``base`` is in
    the project its first folder names (``--home-dev-x--``)."""
    files: list[tuple[str, os.stat_result, Optional[str]]] = []
    stores: list[tuple[str, os.stat_result]] = []
    stack: list[tuple[str, int, Optional[str]]] = [(base, 0, None)]
    while stack:
        d, depth, top = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        found: list[str] = []
        for e in entries:
            name = e.name
            if name.startswith(".") and name not in (".sessions", ".dsh"):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    if depth < max_depth:
                        stack.append((e.path, depth + 1, name if depth == 0 else top))
                elif name.endswith(SESSION_SUFFIXES) or name.endswith(SQLITE_SUFFIXES):
                    if e.is_file():
                        found.append(e.path)
            except OSError:
                continue
        if len(found) > 1:
            hidden = _older_generations(found)
            found = [p for p in found if p not in hidden]
        project = top if projects and depth >= 2 and top is not None and _PROJECT_RE.match(top) else None
        _stat_into(found, project, files, stores)
    files.sort(key=lambda f: f[0])
    stores.sort(key=lambda f: f[0])
    return files, stores


def shard_path(db_path: str, k: int) -> str:
    """The database file of shard ``k`` (shard 0 is the index file itself)."""
    if k == 0:
        return db_path
    base, ext = os.path.splitext(db_path)
    return f"{base}.shard{k}{ext or '.sqlite'}"


def shard_of(path: str, n: int) -> int:
    """The shard of a session file (or SQLite store): a stable hash of its path."""
    return zlib.crc32(path.encode("utf-8", "surrogatepass")) % n


def _can_spawn() -> bool:
    return (os.cpu_count() or 1) >= 2


class _ShardWorker:
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

    def why(self) -> str:
        rc = self.proc.returncode if self.proc is not None else None
        last = self.err.decode("utf-8", "replace").strip().splitlines()[-1:] if self.err else []
        return f"exit code {rc}" + (f": {last[0][:200]}" if last else "")

    def result(self) -> Optional[UpdateReport]:
        r = self.report
        if r is None:
            return None
        rep = UpdateReport()
        for k in _COUNTS:
            setattr(rep, k, int(r.get(k, 0)))
        rep.cancelled = bool(r.get("cancelled"))
        rep.problems = [str(x) for x in r.get("problems", [])]
        return rep

    def close(self) -> None:
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


def _stat(p: str) -> Optional[os.stat_result]:
    try:
        return os.stat(p)
    except OSError:
        return None


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
    stop = threading.Event()

    def watch() -> None:
        while inp.read(4096):
            pass
        stop.set()
    threading.Thread(target=watch, daemon=True).start()
    last = [0.0]

    def progress(done: int, total: int, nbytes: int) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.05 or done == total:
            last[0] = now
            out.write(f"P {done} {total} {nbytes}\n".encode())
            out.flush()
    scanned = ([(p, st, project) for p, project in job["files"] if (st := _stat(p)) is not None],
               [(p, st) for p in job["stores"] if (st := _stat(p)) is not None])
    with FullTextIndex(job["root"], db_path=job["db"], part=(int(job["k"]), int(job["n"]))) as ix:
        rep = ix._update_one(progress, stop, 0, scanned)
    d: dict[str, Any] = {k: getattr(rep, k) for k in _COUNTS}
    d.update(cancelled=rep.cancelled, problems=rep.problems)
    out.write(b"R " + json.dumps(d).encode() + b"\n")
    out.flush()


@dataclass
class _Found:
    """One session found by the stat walk."""
    key: str
    path: str
    fmt: str                    # jsonl | zstd | sqlite
    project: Optional[str]
    st: Optional[os.stat_result]
    store: Optional[str] = None
    sid: Optional[str] = None   # sqlite: the session id
    revision: Optional[str] = None
    header: Optional[dict[str, Any]] = None
    fast: bool = False          # a new JSONL file read whole by extract_jsonl (header checked then)


class _Cancelled(Exception):
    pass


def _cancelled(cancel: Cancel) -> bool:
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)
    if is_set is not None:
        return bool(is_set())
    return bool(cancel()) if callable(cancel) else False


class FullTextIndex(IndexQueries):
    """The full-text index of one root (a home, JSONL tree, folder or SQLite store).

    ``update()`` brings it up to date incrementally, ``rebuild()`` from scratch, ``search()``
    queries it, ``behind()`` counts sessions changed since the last update (stat only)."""

    def __init__(self, root: str, db_path: Optional[str] = None, part: Optional[tuple[int, int]] = None):
        """``part``: (k, n) opens shard k of n (a shard build process); None opens the index (its
        shard 0, the others opened when needed)."""
        self.root = os.path.abspath(os.path.expanduser(root))
        if not os.path.exists(self.root):
            raise FileNotFoundError(f"no such file or folder: {root}")
        self.db_path = db_path or index_path_for(self.root)
        self.fts5 = fts5_available()
        self._next_sid: Optional[int] = None
        self._pre: Optional[Callable[[], None]] = None
        self._sp_open = self._writing = False
        self._last_entries = 0
        self._pending: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]] = ([], [])
        # entries, fts, sessions, files rows written at the next commit
        self._batch: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]],
                           list[tuple[Any, ...]]] = ([], [], [], [])
        self._shards: dict[int, FullTextIndex] = {}
        os.makedirs(os.path.dirname(self.db_path), exist_ok=True)
        self._conn: Optional[sqlite3.Connection] = sqlite3.connect(
            self.db_path, isolation_level=None, timeout=10.0, check_same_thread=False)
        c = self.conn
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute("PRAGMA foreign_keys=OFF")
        c.execute("PRAGMA cache_size=-32768")           # 32 MB: FTS5 segment merges of a first build
        ver = None
        try:
            r = c.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
            ver = int(r[0]) if r else None
        except sqlite3.OperationalError:
            pass
        if ver is not None and ver != SCHEMA:
            self._drop_all()
            ver = None
        # an index already set up is opened without writing (a search does not wait for a build)
        have = {r[0] for r in c.execute("SELECT name FROM sqlite_master")}
        if ver is None or not {"meta", "sessions", "files", "entries"} <= have \
                or (self.fts5 and "fts" not in have):
            c.executescript(_DDL)
            if self.fts5:
                c.execute(_FTS_DDL)
                c.execute("INSERT INTO fts(fts, rank) VALUES ('hashsize', ?)", (_FTS_HASHSIZE,))
        r = c.execute("SELECT value FROM meta WHERE key='root'").fetchone()
        if ver is None or r is None or r[0] != self.root:
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?), ('root', ?)",
                      (str(SCHEMA), self.root))
        if part is None:
            r = c.execute("SELECT value FROM meta WHERE key='shards'").fetchone()
            part = (0, max(1, min(MAX_SHARDS, int(r[0])))) if r else (0, 1)
        self.part = part

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ValueError("the index is closed")
        return self._conn

    @classmethod
    def for_home(cls, home: Optional[str] = None) -> FullTextIndex:
        from .discovery import harness_home
        return cls(str(harness_home(home)))

    def close(self) -> None:
        for sh in self._shards.values():
            sh.close()
        self._shards.clear()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> FullTextIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _drop_all(self) -> None:
        c = self.conn
        for t in ("fts", "entries", "sessions", "files", "meta"):
            c.execute(f"DROP TABLE IF EXISTS {t}")

    # ------------------------------------------------------------------ walk (stat only)
    def _scan_root(self) -> tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]:
        """(jsonl/zstd files with stats, sqlite files with stats) of the whole root (a sharded
        index splits them with :func:`_shard_scan`): no file is opened."""
        root = self.root
        files: list[tuple[str, os.stat_result, Optional[str]]] = []
        stores: list[tuple[str, os.stat_result]] = []
        if os.path.isfile(root):
            paths: Iterable[str] = [root]
            base = os.path.dirname(root)
            kind = "file"
        else:
            base = root
            kind = "folder"
            if os.path.isdir(os.path.join(root, "sessions")):
                base, kind = os.path.join(root, "sessions"), "home"
            elif any(_PROJECT_RE.match(n) for n in safe_listdir(root)):
                kind = "root"
            files, stores = _walk_stat(base, kind in ("root", "home"))
            paths = ()
        _stat_into(paths, None, files, stores)
        return files, stores

    # ------------------------------------------------------------------ shards
    def parts(self) -> list[FullTextIndex]:
        """This index and its other shards (a first build by several processes writes one shard
        database each, sessions split by the hash of their file path): queries fan out over them."""
        k, n = self.part
        if k != 0 or n == 1:
            return [self]
        out: list[FullTextIndex] = [self]
        for i in range(1, n):
            sh = self._shards.get(i)
            if sh is None:
                sh = self._shards[i] = FullTextIndex(self.root, db_path=shard_path(self.db_path, i), part=(i, n))
            out.append(sh)
        return out

    def indexed_count(self) -> int:
        return sum(IndexQueries.indexed_count(p) for p in self.parts())

    def session_problems(self) -> list[tuple[str, str]]:
        return [x for p in self.parts() for x in IndexQueries.session_problems(p)]

    def behind(self) -> int:
        """Sessions new, changed or removed since the last update (stat only, nothing opened)."""
        files, stores = self._scan_root()
        known = {r[0]: r[1:] for p in self.parts()
                 for r in p.conn.execute("SELECT path, dev, ino, size, mtime_ns FROM files")}
        n = 0
        seen = set()
        for p, st, _ in files + [(p, st, None) for p, st in stores]:
            seen.add(p)
            if known.get(p) != (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns):
                n += 1
        n += sum(1 for p in known if p not in seen)
        return n

    # ------------------------------------------------------------------ update
    def rebuild(self, progress: Progress = None, cancel: Cancel = None,
                workers: Optional[int] = None) -> UpdateReport:
        for ix in reversed(self.parts()):       # shard 0 last: it says how many shards there are
            ix._clear()
        self._set_shards(1)
        return self.update(progress=progress, cancel=cancel, workers=workers)

    def _clear(self) -> None:
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        if self.fts5:
            c.execute("DELETE FROM fts")
        c.execute("DELETE FROM entries")
        c.execute("DELETE FROM sessions")
        c.execute("DELETE FROM files")
        c.execute("COMMIT")

    def _set_shards(self, n: int) -> None:
        for sh in self._shards.values():
            sh.close()
        self._shards.clear()
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('shards', ?)", (str(n),))
        self.part = (0, n)

    def _empty(self) -> bool:
        c = self.conn
        return c.execute("SELECT 1 FROM sessions LIMIT 1").fetchone() is None and \
            c.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None

    def _not_session(self, p: str, sig: tuple[int, int, int, int], why: Optional[str],
                     rep: UpdateReport) -> tuple[Any, ...]:
        """The files row of a file whose first line is no session header (reported when it is
        meant to be a session)."""
        if looks_like_session(p, self.root):
            why = why or 'the first line is not a {"type":"session"} header'
            rep.problems.append(f"{p}: {why}")
            rep.skipped += 1
            return (p, *sig, "bad", why)
        return (p, *sig, "other", None)

    def _read_header(self, p: str, rep: UpdateReport) -> tuple[Optional[dict[str, Any]], Optional[str]]:
        rep.files_opened += 1
        raw, why = read_header_bytes(p)
        hdr = None
        if raw is not None:
            try:
                hdr = json.loads(raw)
            except ValueError as e:
                why = f"the first line is not JSON: {e}"
        if isinstance(hdr, dict) and hdr.get("type") == "session":
            return hdr, None
        return None, why

    def update(self, progress: Progress = None, cancel: Cancel = None,
               workers: Optional[int] = None) -> UpdateReport:
        """Bring the index up to date.  ``progress(done_sessions, total_sessions, bytes_read)``
        after each session; ``cancel`` (callable or threading.Event) stops between rows and
        keeps what was committed.  ``workers``: processes for a big build (None: two when there
        is much to read, else none).  The first build of an empty index with workers is split
        into shards, one process each extracting and writing its own shard database; a later
        update of a sharded index updates every shard so (a grown session stays in its shard);
        an index of one shard uses the workers to extract new sessions for this process."""
        t0 = time.perf_counter()
        scanned = None
        k, n = self.part
        if k != 0:
            raise ValueError("a shard is updated through the index (shard 0), which hands it its files")
        split = False
        if n == 1 and self.fts5 and workers != 0 and self._empty():
            scanned = self._scan_root()
            fast = [(p, st.st_size) for p, st, _ in scanned[0] if not p.endswith((".zstd", ".zst"))]
            want = min(MAX_SHARDS, auto_workers(fast) if workers is None else max(0, int(workers)))
            if want >= 2 and _can_spawn():
                for i in range(1, want):
                    FullTextIndex(self.root, db_path=shard_path(self.db_path, i), part=(i, want)).close_cleared()
                self._set_shards(want)
                k, n = self.part
                split = True
        if split:
            assert scanned is not None
            rep = self._update_shards(progress, cancel, _shard_scan(scanned, n))
        elif k == 0 and n > 1:
            rep = self._update_parts(progress, cancel, workers)
        else:
            rep = self._update_one(progress, cancel, workers, scanned)
        rep.seconds = time.perf_counter() - t0
        return rep

    def close_cleared(self) -> None:
        """Empty this shard (left over from an earlier build) and close it."""
        if not self._empty():
            self._clear()
        self.close()

    def _update_parts(self, progress: Progress, cancel: Cancel, workers: Optional[int]) -> UpdateReport:
        """Update a sharded index in this process, one shard after the other (one walk): a later
        update is small, a worker process would cost more than it saves."""
        parts = self.parts()
        known = {r[0]: i for i, p in enumerate(parts) for r in p.conn.execute("SELECT path FROM files")}
        scans = _shard_scan(self._scan_root(), len(parts), known)
        rep = UpdateReport()
        base = [0, 0, 0]
        for ix, scanned in zip(parts, scans):
            def shifted(done: int, total: int, nbytes: int) -> None:
                if progress is not None:
                    progress(base[0] + done, base[1] + total, base[2] + nbytes)
            got = ix._update_one(shifted, cancel, workers, scanned)
            base[0] += got.sessions - got.unchanged
            base[1] += got.sessions - got.unchanged
            base[2] += got.bytes_read
            rep.merge(got)
            rep.workers = max(rep.workers, got.workers)
            if got.cancelled:
                break
        return rep

    def _update_shards(self, progress: Progress, cancel: Cancel, scans: list[Any]) -> UpdateReport:
        """Update every shard at once: shards 1..n-1 in worker processes (:func:`serve_shard`),
        shard 0 in this one.  Each shard is an index of its own (WAL, a transaction per batch of
        sessions), so a crash or a killed worker leaves every shard usable; a worker that died is
        finished here.  ``scans``: each shard's part of the walk (handed to its worker: no
        second walk)."""
        _k, n = self.part
        workers = [_ShardWorker(self.root, shard_path(self.db_path, i), i, n, scans[i]) for i in range(1, n)]
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
            if not stopped and _cancelled(cancel):
                stopped = True
                for w in workers:
                    w.cancel()
            return stopped
        try:
            for w in workers:
                w.start()
            rep = self._update_one(mine, stop, 0, scans[0])
            while any(w.running() for w in workers):
                stop()
                report_progress()
                time.sleep(0.02)
            for w in workers:
                got = w.result()
                if got is None and not stopped:      # the worker died: its shard is finished here
                    sh = self.parts()[w.k]
                    got = sh._update_one(None, stop, 0, scans[w.k])
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

    def _update_one(self, progress: Progress, cancel: Cancel, workers: Optional[int],
                    scanned: Optional[tuple[Any, Any]]) -> UpdateReport:
        """Update this shard (of one or more)."""
        rep = UpdateReport()
        if not self.fts5:
            rep.fallback = FTS5_MISSING
        c = self.conn
        files, stores = scanned if scanned is not None else self._scan_root()
        known_files = {r[0]: r[1:] for r in c.execute("SELECT path, dev, ino, size, mtime_ns, kind, problem "
                                                       "FROM files")}
        sess = {r[0]: r for r in c.execute(
            "SELECT key, sid, dev, ino, size, mtime_ns, revision, done_pos, done_line, done_text, done_crc, "
            "turn, calls, status, problem FROM sessions")}
        work: list[tuple[_Found, Optional[tuple[Any, ...]]]] = []   # (_Found, previous session row or None)
        present: set[str] = set()
        file_rows: list[tuple[Any, ...]] = []
        for p, st, project in files:
            sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            prev = known_files.get(p)
            if prev is not None and tuple(prev[:4]) == sig:
                if prev[4] == "session":
                    present.add(p)
                    rep.sessions += 1
                    rep.unchanged += 1
                    row = sess.get(p)
                    if row is not None and row[13] == "error" and row[14]:
                        rep.problems.append(f"{p}: {row[14]}")
                elif prev[4] == "bad" and prev[5]:
                    rep.problems.append(f"{p}: {prev[5]}")
                continue
            fmt = "zstd" if p.endswith((".zstd", ".zst")) else "jsonl"
            f = _Found(key=p, path=p, fmt=fmt, project=project, st=st)
            row = sess.get(p)
            same_file = row is not None and (row[2], row[3]) == (st.st_dev, st.st_ino)
            if not same_file:
                if fmt == "jsonl" and st.st_size <= _FAST_BYTES:
                    f.fast = True                      # read whole, its header checked then
                else:
                    hdr, why = self._read_header(p, rep)
                    if hdr is None:
                        file_rows.append(self._not_session(p, sig, why, rep))
                        continue
                    f.header = hdr
            present.add(p)
            rep.sessions += 1
            work.append((f, row))
            file_rows.append((p, *sig, "session", None))
        for p, st in stores:
            sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
            prev = known_files.get(p)
            if prev is not None and tuple(prev[:4]) == sig:
                for (k,) in c.execute("SELECT key FROM sessions WHERE store = ?", (p,)):
                    present.add(k)
                    rep.sessions += 1
                    rep.unchanged += 1
                continue
            rep.files_opened += 1
            try:
                listed = list_store(p)
            except Exception as e:  # a broken store must not hide the others
                rep.problems.append(f"{p}: {e}")
                rep.skipped += 1
                file_rows.append((p, *sig, "bad", str(e)))
                continue
            for h in listed:
                key = f"{p}#{h['id']}"
                present.add(key)
                rep.sessions += 1
                row = sess.get(key)
                if row is not None and row[6] == h.get("revision"):
                    rep.unchanged += 1
                    continue
                work.append((_Found(key=key, path=p, fmt="sqlite", project=None, st=st, store=p, sid=h["id"],
                                    revision=h.get("revision"), header=h), None))
            file_rows.append((p, *sig, "store", None))
        # removed sessions
        gone = [k for k in sess if k not in present]
        c.execute("BEGIN IMMEDIATE")
        try:
            for k in gone:
                self._delete_session(sess[k][1])
                rep.removed += 1
            seen_paths = {p for p, _, _ in files} | {p for p, _ in stores}
            for p in list(known_files):
                if p not in seen_paths:
                    c.execute("DELETE FROM files WHERE path = ?", (p,))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        fast = [(f.path, f.st.st_size if f.st else 0) for f, _ in work if f.fast]
        nworkers = auto_workers(fast) if workers is None else (max(0, int(workers)) if fast else 0)
        rep.workers = nworkers
        results = extracted(fast, nworkers)
        try:
            self._index_work(work, results, file_rows, rep, progress, cancel)
        finally:
            results.close()                     # stops the workers when cancelled or failed
        return rep

    def _index_work(self, work: list[tuple[_Found, Optional[tuple[Any, ...]]]], results: Iterator[FileText],
                    file_rows: list[tuple[Any, ...]], rep: UpdateReport, progress: Progress,
                    cancel: Cancel) -> None:
        """Index the work list, several sessions per transaction.  A session's rows are kept in
        memory and written once it was read whole (nothing to undo when reading fails); one too
        big for that is written in a savepoint as it is read (FTS5 flushes its pending terms to a
        new segment at every savepoint: one per session made small sessions slow)."""
        c = self.conn
        done = 0
        self._next_sid = None
        self._batch = ([], [], [], [])
        pending_bytes = 0
        pending_sessions = 0
        file_sig = {r[0]: r for r in file_rows}
        c.execute("BEGIN IMMEDIATE")
        try:
            for f, row in work:
                if _cancelled(cancel):
                    rep.cancelled = True
                    break
                self._sp_open = False         # this session's savepoint (big sessions only)
                self._writing = False         # its rows are being written outside a savepoint
                try:
                    n = self._index_found(f, row, results, file_sig, rep, cancel)
                except _Cancelled:
                    # rowids and sids handed out stay taken (rows of the batch hold the ones before)
                    if self._sp_open:
                        c.execute("ROLLBACK TO s")
                        c.execute("RELEASE s")
                    rep.cancelled = True
                    break
                except Exception as e:  # one unreadable session must not stop the others
                    if self._writing:           # a write failed half-way: not one session's problem
                        raise
                    if self._sp_open:
                        c.execute("ROLLBACK TO s")
                        c.execute("RELEASE s")
                    self._session_error(f, f"{type(e).__name__}: {e}", rep)
                    n = 0
                else:
                    if self._sp_open:
                        c.execute("RELEASE s")
                if f.fmt != "sqlite" and f.path in file_sig:
                    self._batch[3].append(file_sig.pop(f.path))
                done += 1
                pending_bytes += n
                pending_sessions += 1
                if progress:
                    progress(done, len(work), rep.bytes_read)
                if pending_bytes >= _COMMIT_BYTES or pending_sessions >= _COMMIT_SESSIONS:
                    self._flush_batch()
                    c.execute("COMMIT")
                    c.execute("BEGIN IMMEDIATE")
                    pending_bytes = pending_sessions = 0
            if not rep.cancelled:
                for r in file_sig.values():    # stores, non-session files, bad files
                    upsert_file(c, r)
            self._flush_batch()
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise

    def _session_error(self, f: _Found, why: str, rep: UpdateReport) -> None:
        rep.skipped += 1
        rep.problems.append(f"{f.key}: {why}")
        self._record_error(f, why)

    def _index_found(self, f: _Found, row: Optional[tuple[Any, ...]], results: Iterator[FileText],
                     file_sig: dict[str, tuple[Any, ...]], rep: UpdateReport, cancel: Cancel) -> int:
        """Index one session of the work list.  -> text bytes written."""
        if not f.fast:
            return self._index_one(f, row, rep, cancel)
        res = next(results)
        rep.files_opened += 1
        st = f.st
        assert st is not None
        sig = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if res.status == "fallback":             # the reader's way (header checked first)
            hdr, why = self._read_header(f.path, rep)
            if hdr is not None:
                f.header = hdr
                return self._index_one(f, row, rep, cancel)
            res = FileText("not-session", why=why)
        if res.status == "not-session":
            file_sig[f.path] = self._not_session(f.path, sig, res.why, rep)
            rep.sessions -= 1
            if row is not None:                  # it was a session before: it is gone
                self._delete_session(row[1])
                rep.removed += 1
            return 0
        if res.header is not None:
            f.header = {"id": res.header[0]}
        if res.status in ("fatal", "error"):
            self._session_error(f, res.why or "unreadable", rep)
            return 0
        # "ok": written with the batch (no savepoint needed)
        assert res.header is not None
        self._writing = True
        if row is not None:
            self._delete_session(row[1])
        sid = self._take_sid()
        nxt = sid << _SHIFT
        be, bf, bs, _bfiles = self._batch
        for i, (seq, turn, tm, kind, tool, body) in enumerate(res.entries, nxt):
            be.append((i, sid, seq, turn, tm, kind, tool))
            bf.append((i, body))
        hid, cwd, created = res.header
        bs.append((sid, f.key, hid, f.path, None, f.fmt, f.project, cwd, created, *sig, None, res.done_pos,
                   res.done_line, res.done_pos, res.done_crc, res.turn, json.dumps(res.calls) if res.calls else None,
                   len(res.entries), res.title))
        if len(be) >= 4096:
            self._flush_batch()
        self._writing = False
        rep.indexed += 1
        rep.bytes_read += res.bytes_read
        rep.entries += len(res.entries)
        return res.text_bytes

    def _take_sid(self) -> int:
        if self._next_sid is None:
            self._next_sid = self.conn.execute("SELECT coalesce(max(sid), 0) + 1 FROM sessions").fetchone()[0]
        sid = self._next_sid
        self._next_sid = sid + 1
        return sid

    def _rowid_base(self, sid: int, resume: bool) -> int:
        """The next free rowid of session ``sid`` (its range starts at ``sid << 32``)."""
        lo = sid << _SHIFT
        if not resume:
            return lo
        r = self.conn.execute("SELECT max(rowid) FROM entries WHERE rowid BETWEEN ? AND ?",
                              (lo, lo + (1 << _SHIFT) - 1)).fetchone()[0]
        return lo if r is None else int(r) + 1

    def _delete_session(self, sid: int) -> None:
        c = self.conn
        if self.fts5:
            c.execute("DELETE FROM fts WHERE rowid BETWEEN ? AND ?", (sid << _SHIFT, ((sid + 1) << _SHIFT) - 1))
        c.execute("DELETE FROM entries WHERE rowid BETWEEN ? AND ?", (sid << _SHIFT, ((sid + 1) << _SHIFT) - 1))
        c.execute("DELETE FROM sessions WHERE sid = ?", (sid,))

    def _record_error(self, f: _Found, why: str) -> None:
        c = self.conn
        r = c.execute("SELECT sid FROM sessions WHERE key = ?", (f.key,)).fetchone()
        if r is not None:
            self._delete_session(r[0])
        st = f.st
        sid = self._take_sid()              # rows of the batch may hold the next sids: take one too
        c.execute("INSERT INTO sessions(sid, key, id, path, store, format, project, dev, ino, size, mtime_ns, "
                  "revision, status, problem) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (sid, f.key, (f.header or {}).get("id") if f.header else None, f.path, f.store, f.fmt, f.project,
                   st.st_dev if st else None, st.st_ino if st else None, st.st_size if st else None,
                   st.st_mtime_ns if st else None, f.revision, "error", why))

    def _flush_batch(self) -> None:
        c = self.conn
        ent, fts, sess, files = self._batch
        if sess:
            c.executemany(f"INSERT INTO sessions({_SESSION_COLS}, status) "
                          "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?, 'ok')", sess)
            sess.clear()
        if files:
            c.executemany("INSERT OR REPLACE INTO files(path, dev, ino, size, mtime_ns, kind, problem) "
                          "VALUES (?,?,?,?,?,?,?)", files)
            files.clear()
        flush(c, ent, fts, self.fts5)

    def _index_one(self, f: _Found, row: Optional[tuple[Any, ...]], rep: UpdateReport, cancel: Cancel) -> int:
        """Index one session through its reader (inside the caller's transaction).  -> text bytes written."""
        c = self.conn
        resume = None
        if row is not None and f.fmt in ("jsonl", "zstd"):
            (_k, sid, dev, ino, size, _mt, _rev, done_pos, done_line, done_text, done_crc, turn, calls,
             status, _prob) = row
            st = f.st
            assert st is not None
            # same file, grown (a log is append-only): resume when the bytes before the stop point are
            # the ones indexed; same size but a new mtime means a rewrite: index it again
            if (dev, ino) == (st.st_dev, st.st_ino) and st.st_size > size and status == "ok" and done_pos \
                    and crc_before(f.path, done_pos) == done_crc:
                resume = (sid, done_pos, done_line, done_text, turn, json.loads(calls) if calls else {})
        reader: LogReader
        if f.fmt == "sqlite":
            from .faces import open_reader
            assert f.store is not None
            reader = open_reader(f.store, f.sid)
        else:
            reader = LogReader(open_source(f.path))
        rep.files_opened += 1
        try:
            if reader.fatal:
                self._session_error(f, str(reader.fatal), rep)
                return 0
            h = reader.header
            assert h is not None
            old = None
            if resume is None:
                old = c.execute("SELECT sid FROM sessions WHERE key = ?", (f.key,)).fetchone()
                sid = self._take_sid()
                st = f.st
                assert st is not None

                def pre(old: Optional[tuple[int]] = old, sid: int = sid, st: os.stat_result = st) -> None:
                    if old is not None:
                        self._delete_session(old[0])
                    c.execute(
                        "INSERT INTO sessions(sid, key, id, path, store, format, project, cwd, created, dev, ino, "
                        "size, mtime_ns, revision, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?, 'ok')",
                        (sid, f.key, h.id, f.path, f.store, f.fmt, f.project, h.cwd, h.createdAt, st.st_dev,
                         st.st_ino, st.st_size, st.st_mtime_ns, f.revision))
                self._pre = pre
                start = line0 = text0 = None
                turn, calls = None, {}
                rep.indexed += 1
            else:
                sid, start, line0, text0, turn, calls = resume
                self._pre = None
                rep.grown += 1
            n, state = self._feed(reader, sid, start, line0, text0, RowText(reader.codec, turn, calls), rep, cancel)
            done_pos, done_line, done_text, turn, title = state
            crc = crc_before(f.path, done_pos) if f.fmt != "sqlite" and done_pos else None
            st = f.st
            assert st is not None
            if not self._sp_open:                 # read whole: write it now (no savepoint needed)
                self._writing = True
                be, bf, bs, _bfiles = self._batch
                be += self._pending[0]
                bf += self._pending[1]
                if self._pre is not None:         # a new session: one row, written with the batch
                    if old is not None:
                        self._delete_session(old[0])
                    bs.append((sid, f.key, h.id, f.path, f.store, f.fmt, f.project, h.cwd, h.createdAt, st.st_dev,
                               st.st_ino, st.st_size, st.st_mtime_ns, f.revision, done_pos, done_line, done_text,
                               crc, turn, json.dumps(calls) if calls else None, self._last_entries, title))
                    if len(be) >= 4096:
                        self._flush_batch()
                    self._writing = False
                    return n
                if len(be) >= 4096:
                    self._flush_batch()
            sets = ("size = ?, mtime_ns = ?, dev = ?, ino = ?, done_pos = ?, done_line = ?, done_text = ?, "
                    "done_crc = ?, turn = ?, calls = ?, status = 'ok', problem = NULL, revision = ?, "
                    "entries = entries + ?")
            args = [st.st_size, st.st_mtime_ns, st.st_dev, st.st_ino, done_pos, done_line, done_text, crc, turn,
                    json.dumps(calls) if calls else None, f.revision, self._last_entries]
            if title is not None:
                sets += ", title = ?"
                args.append(title)
            c.execute(f"UPDATE sessions SET {sets} WHERE sid = ?", (*args, sid))
            self._writing = False
            return n
        finally:
            reader.close()

    def _feed(self, reader: LogReader, sid: int, start: Optional[int], line0: Optional[int],
              text0: Optional[int], rt: RowText, rep: UpdateReport,
              cancel: Cancel) -> tuple[int, tuple[Any, ...]]:
        """Index rows from ``start`` on; -> (text bytes, (done_pos, done_line, done_text, turn, title))."""
        c = self.conn
        src: Any = reader.source
        if start is None:
            segs = src.forward()
        elif src.kind == "zstd":
            segs = src.forward(start, line0=line0, text_offset=text0)
        else:
            segs = src.forward(start, line0=line0)
        nxt = self._rowid_base(sid, start is not None)
        ent: list[tuple[Any, ...]] = []
        fts: list[tuple[Any, ...]] = []
        done_pos, done_line, done_text = start, line0, text0
        entries = 0
        found: list[Entry] = []
        feed = rt.feed
        for seg in segs:
            if _cancelled(cancel):
                raise _Cancelled()
            if seg.bad:
                rep.problems.append(f"{reader.path}: {seg.bad}")
                if isinstance(seg.end, int):
                    done_pos, done_line, done_text = seg.end, None, None
                continue
            seg_done: tuple[Any, ...]
            if seg.rows is not None:
                rows: list[tuple[Any, Optional[bytes], Optional[int], Optional[int]]] = \
                    [(p, raw, None, None) for p, raw in seg.rows if may_hold_text(raw)]
                rep.bytes_read += sum(len(r) for _, r in seg.rows)
                seg_done = (seg.end, None, None)
            else:
                rows = split(seg)
                rep.bytes_read += len(seg.data)
                seg_done = (seg.end, (seg.line0 + seg.data.count(b"\n")) if seg.line0 is not None else None,
                            (seg.text_offset + len(seg.data)) if seg.text_offset >= 0 else None)
            torn_at = None
            for p, raw, line, off in rows:
                if raw is None:               # the torn last row: stop before it
                    torn_at = (p, line, off)
                    break
                feed(raw, found, p, -1 if off is None else off, line)
            for seq, turn, tm, kind, tool, body in found:
                ent.append((nxt, sid, seq, turn, tm, kind, tool))
                fts.append((nxt, body))
                nxt += 1
            entries += len(found)
            found.clear()
            if torn_at is not None and seg.torn:
                if isinstance(torn_at[0], int):
                    done_pos, done_line, done_text = torn_at
                else:                          # a torn zstd frame: resume at the frame
                    done_pos, done_line, done_text = seg.pos, seg.line0, seg.text_offset if seg.text_offset >= 0 else None
            else:
                done_pos, done_line, done_text = seg_done
            if len(ent) >= _FLUSH_ROWS and (self._sp_open or rt.text_bytes >= _MEMORY_BYTES):
                if not self._sp_open:             # too big to keep: write it in a savepoint as it is read
                    c.execute("SAVEPOINT s")
                    self._sp_open = True
                    if self._pre is not None:
                        self._pre()
                flush(c, ent, fts, self.fts5)
        if self._sp_open:
            flush(c, ent, fts, self.fts5)
        self._pending = (ent, fts)
        rep.entries += entries
        self._last_entries = entries
        return rt.text_bytes, (done_pos, done_line, done_text, rt.turn, rt.title)
