"""Full-text index of a Harness home (or any JSONL tree, folder of sessions, SQLite store).

An embedded SQLite FTS5 database (standard library ``sqlite3``, no server) in the user cache
directory (``platformdirs.user_cache_dir("session-lens")/fulltext``; ``SESSION_LENS_CACHE_DIR``
overrides the base), one file per indexed root.  It indexes the text a user sees per event
(:mod:`app.log.extract`, the same fields as :func:`app.log.textview.event_fields`: messages,
reasoning, tool arguments, whole tool output, errors, titles); each entry carries session, seq,
turn, kind, tool name and time (a plain ``entries`` table; the FTS5 table holds the text only).

Incremental by revision (spec §1.6): a session file whose (device, inode, size, mtime) is
unchanged is not opened at all; a log that grew on the same inode is read from where the index
stopped (the end of its last complete row or frame; a checksum of the bytes before that point
proves the prefix is the same); a replaced, shrunk or rewritten one is indexed again.  A SQLite
store is listed when the file changed and a session whose revision changed is indexed again.

Fast first build: a new JSONL session is read whole with one open and one read and its text
extracted without typed events (:func:`app.log.extract.extract_jsonl`), by two worker processes
when there is much to read, while this process writes; rows are written with ``executemany`` in
large transactions.

Crash-safe: WAL journal, each session's rows and its bookkeeping row are written in one
transaction, so a crash leaves every session either as before or fully updated.  A session's rows
are kept in memory until it was read whole and written with those of the next sessions at the
commit (every 200 sessions or 8 MB); one too big for memory is written as it is read, inside a
savepoint (a savepoint per session made FTS5 flush a segment per session).
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
import sys
import time
import zlib
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

from ..log.extract import (CRC_WINDOW, ERROR_ONLY_B, FAST_MAX_BYTES, TEXT_TYPES_B, Entry, FileText, RowText,
                           extract_jsonl, extract_many, may_hold_text, reader_entries)
from ..log.reader import LogReader
from ..log.sources import Segment, open_source
from .discovery import SQLITE_SUFFIXES, _PROJECT_RE, _older_generations, _walk, read_header_bytes
from .ftsquery import (FTS5_MISSING, MARK_CLOSE, MARK_OPEN, EntryMatcher, ParsedQuery, QueryError, SearchHit,
                       SearchResult, SessionGroup, like_prefix, like_sub, parse_query, scan_snippet, split_marks,
                       with_marks)

__all__ = ["FullTextIndex", "QueryError", "SearchHit", "SearchResult", "SessionGroup", "UpdateReport",
           "fts5_available", "parse_query", "FTS5_MISSING"]

SCHEMA = 2
_COMMIT_BYTES = 8 << 20
_COMMIT_SESSIONS = 200
_FLUSH_ROWS = 2048            # rows written at a time by a session written as it is read
_MEMORY_BYTES = 16 << 20      # a session's text kept in memory before it is written in a savepoint
_FAST_BYTES = FAST_MAX_BYTES  # new JSONL sessions up to this size are read whole (extract_jsonl)
_POOL_MIN_FILES = 200         # worker processes only when there is this much to read …
_POOL_MIN_BYTES = 16 << 20    # … (starting one costs ~0.2 s)
_CHUNK_BYTES = 2 << 20        # files handed to a worker at a time (up to this many bytes …)
_CHUNK_FILES = 64             # … or files)
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
# an entry's rowid is (sid << 32) + its number in the session: a session's entries are one rowid
# range (no index on sid to maintain) and per-session counts need only the rowids of the matches
_SHIFT = 32
# the text only: kind, tool and time are plain columns of ``entries`` (a filter is a join, not
# FTS columns to tokenize); positions kept (detail=full) so "phrases" are exact
_FTS_DDL = "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
_SESSION_COLS = ("sid, key, id, path, store, format, project, cwd, created, dev, ino, size, mtime_ns, revision, "
                 "done_pos, done_line, done_text, done_crc, turn, calls, entries, title")


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


def _chunks(paths: list[tuple[str, int]]) -> Iterator[list[str]]:
    cur: list[str] = []
    n = 0
    for p, size in paths:
        cur.append(p)
        n += size
        if n >= _CHUNK_BYTES or len(cur) >= _CHUNK_FILES:
            yield cur
            cur, n = [], 0
    if cur:
        yield cur


def _extracted(paths: list[tuple[str, int]], workers: int) -> Generator[FileText, None, None]:
    """extract_jsonl of each path, in order: inline, or by ``workers`` worker processes
    (:func:`app.log.extract.serve`; chunks handed out in turn, two in flight per worker, so
    memory stays flat while this process writes).  A worker that dies leaves the rest inline."""
    if workers <= 0:
        for path, _ in paths:
            yield from extract_many([path])
        return
    import pickle
    import subprocess
    import app
    from ..log.extract import WORKER_CODE, read_frame, write_frame
    env = dict(os.environ)
    top = os.path.dirname(os.path.dirname(os.path.abspath(app.__file__)))
    env["PYTHONPATH"] = top + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER_CODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              env=env) for _ in range(workers)]
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
                yield from extract_many(ch)
                continue
            submit()
            yield from pickle.loads(got)
        if broken:
            for ch in chunks:
                yield from extract_many(ch)
    finally:
        for w in procs:
            try:
                if w.stdin is not None:
                    w.stdin.close()
            except OSError:
                pass
        for w in procs:
            try:
                w.wait(timeout=5)
            except subprocess.TimeoutExpired:
                w.kill()
                w.wait()
            if w.stdout is not None:
                w.stdout.close()


def _auto_workers(fast: list[tuple[str, int]]) -> int:
    if getattr(sys, "frozen", False) or (os.cpu_count() or 1) < 2:
        return 0
    if len(fast) < _POOL_MIN_FILES or sum(n for _, n in fast) < _POOL_MIN_BYTES:
        return 0
    return 2


class FullTextIndex:
    """The full-text index of one root (a home, JSONL tree, folder or SQLite store).

    ``update()`` brings it up to date incrementally, ``rebuild()`` from scratch, ``search()``
    queries it, ``behind()`` counts sessions changed since the last update (stat only)."""

    def __init__(self, root: str, db_path: Optional[str] = None):
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
        r = c.execute("SELECT value FROM meta WHERE key='root'").fetchone()
        if ver is None or r is None or r[0] != self.root:
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?), ('root', ?)",
                      (str(SCHEMA), self.root))

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
        """(jsonl/zstd files with stats, sqlite files with stats): no file is opened."""
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
            elif any(_PROJECT_RE.match(n) for n in _safe_listdir(root)):
                kind = "root"
            paths = _walk(base)
        for p in paths:
            try:
                st = os.stat(p)
            except OSError:
                continue
            if p.endswith(SQLITE_SUFFIXES):
                stores.append((p, st))
                continue
            pre = base.rstrip(os.sep) + os.sep
            rel = (p[len(pre):] if p.startswith(pre) else os.path.relpath(p, base)).split(os.sep)
            project = rel[0] if kind in ("root", "home") and len(rel) >= 3 and _PROJECT_RE.match(rel[0]) else None
            files.append((p, st, project))
        # a session folder may hold one file per format version: the newest generation is the session
        hidden = _older_generations([p for p, _, _ in files])
        if hidden:
            files = [f for f in files if f[0] not in hidden]
        return files, stores

    def behind(self) -> int:
        """Sessions new, changed or removed since the last update (stat only, nothing opened)."""
        files, stores = self._scan_root()
        known = {r[0]: r[1:] for r in self.conn.execute("SELECT path, dev, ino, size, mtime_ns FROM files")}
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
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        if self.fts5:
            c.execute("DELETE FROM fts")
        c.execute("DELETE FROM entries")
        c.execute("DELETE FROM sessions")
        c.execute("DELETE FROM files")
        c.execute("COMMIT")
        return self.update(progress=progress, cancel=cancel, workers=workers)

    def _not_session(self, p: str, sig: tuple[int, int, int, int], why: Optional[str],
                     rep: UpdateReport) -> tuple[Any, ...]:
        """The files row of a file whose first line is no session header (reported when it is
        meant to be a session)."""
        if _looks_like_session(p, self.root):
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
        keeps what was committed.  ``workers``: processes extracting new JSONL sessions (None:
        two when there is much to read, else none)."""
        t0 = time.perf_counter()
        rep = UpdateReport()
        if not self.fts5:
            rep.fallback = FTS5_MISSING
        c = self.conn
        files, stores = self._scan_root()
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
                listed = _list_store(p)
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
        nworkers = _auto_workers(fast) if workers is None else (max(0, int(workers)) if fast else 0)
        rep.workers = nworkers
        results = _extracted(fast, nworkers)
        try:
            self._index_work(work, results, file_rows, rep, progress, cancel)
        finally:
            results.close()                     # stops the workers when cancelled or failed
        rep.seconds = time.perf_counter() - t0
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
                    _upsert_file(c, r)
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
        _flush(c, ent, fts, self.fts5)

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
                    and _crc_before(f.path, done_pos) == done_crc:
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
            crc = _crc_before(f.path, done_pos) if f.fmt != "sqlite" and done_pos else None
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
                rows = _split(seg)
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
                _flush(c, ent, fts, self.fts5)
        if self._sp_open:
            _flush(c, ent, fts, self.fts5)
        self._pending = (ent, fts)
        rep.entries += entries
        self._last_entries = entries
        return rt.text_bytes, (done_pos, done_line, done_text, rt.turn, rt.title)

    # ------------------------------------------------------------------ queries
    def indexed_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM sessions WHERE status = 'ok'").fetchone()[0])

    def session_problems(self) -> list[tuple[str, str]]:
        """[(key, problem)] of sessions that could not be indexed."""
        out = [(k, p) for k, p in self.conn.execute("SELECT key, problem FROM sessions WHERE status = 'error'")]
        out += [(p, why) for p, why in self.conn.execute("SELECT path, problem FROM files WHERE kind = 'bad'")]
        return out

    def search(self, query: str, limit: int = 50, offset: int = 0, groups: Optional[int] = 200) -> SearchResult:
        """Ranked hits (bm25) with marked snippets, and per-session counts.

        Light queries instead of one heavy one: the ``limit`` best rowids (bm25 over the matches,
        nothing else computed per match), their rows and snippets (for those only), and the
        per-session counts (the rowid-only path of the match, grouped by session).  ``sessions``
        holds the ``groups`` sessions with the most matches plus those of the hits (None: all);
        ``session_total`` counts every session with a match."""
        t0 = time.perf_counter()
        pq = parse_query(query)
        if not self.fts5:
            res = self._scan_search(pq, limit)
            res.seconds = time.perf_counter() - t0
            return res
        match = pq.fts()
        if match is None and (pq.not_terms or not (pq.kinds or pq.tools)):
            raise QueryError("give words to look for (filters alone select nothing)" if not pq.not_terms
                             else "give words to look for besides the ones to leave out")
        conds, args, need_s = _filter_sql(pq)
        join_s = " JOIN sessions s ON s.sid = e.sid" if need_s else ""
        extra = "".join(" AND " + x for x in conds)
        c = self.conn
        try:
            if match is not None:
                if conds:
                    top = c.execute(
                        f"SELECT fts.rowid, bm25(fts) AS r FROM fts JOIN entries e ON e.rowid = fts.rowid{join_s} "
                        f"WHERE fts MATCH ?{extra} ORDER BY r LIMIT ? OFFSET ?",
                        (match, *args, int(limit), int(offset))).fetchall()
                else:
                    top = c.execute("SELECT rowid, bm25(fts) AS r FROM fts WHERE fts MATCH ? "
                                    "ORDER BY r LIMIT ? OFFSET ?", (match, int(limit), int(offset))).fetchall()
                if conds:
                    counts = c.execute(f"SELECT e.sid, count(*) FROM fts JOIN entries e ON e.rowid = fts.rowid"
                                       f"{join_s} WHERE fts MATCH ?{extra} GROUP BY e.sid", (match, *args)).fetchall()
                else:                                 # the rowids alone say the session
                    counts = c.execute(f"SELECT rowid >> {_SHIFT}, count(*) FROM fts WHERE fts MATCH ? GROUP BY 1",
                                       (match,)).fetchall()
            else:
                where = " AND ".join(conds)
                top = c.execute(f"SELECT e.rowid, 0.0 FROM entries e{join_s} WHERE {where} "
                                f"ORDER BY e.rowid LIMIT ? OFFSET ?", (*args, int(limit), int(offset))).fetchall()
                counts = c.execute(f"SELECT e.sid, count(*) FROM entries e{join_s} WHERE {where} GROUP BY e.sid",
                                   args).fetchall()
            hits, hit_sids = self._hits(top, match)
            total = sum(n for _, n in counts)
            if groups is not None and len(counts) > groups:
                counts.sort(key=lambda r: (-r[1], r[0]))
                shown = counts[:groups] + [r for r in counts[groups:] if r[0] in hit_sids]
            else:
                shown = counts
            n_of = dict(shown)
            rows = []
            ids = list(n_of)
            for i in range(0, len(ids), 900):            # under SQLite's bound-parameter limit
                part = ids[i:i + 900]
                rows += c.execute(f"SELECT sid, key, id, path, title, created, store FROM sessions "
                                  f"WHERE sid IN ({','.join('?' * len(part))})", part).fetchall()
        except sqlite3.OperationalError as e:
            raise QueryError(f"cannot run the query {query!r}: {e}") from None
        sessions = [SessionGroup(key=k, session=i, path=p, title=t, created=cr, count=n_of[sid], store=sto)
                    for sid, k, i, p, t, cr, sto in rows]
        sessions.sort(key=lambda g: (-g.count, g.key))
        return SearchResult(hits=hits, sessions=sessions, total=total, session_total=len(counts),
                            seconds=time.perf_counter() - t0)

    def _hits(self, top: list[tuple[int, float]], match: Optional[str]) -> tuple[list[SearchHit], set[int]]:
        """Rows and snippets of the ranked rowids (snippets made for these only), and their sessions' sids."""
        if not top:
            return [], set()
        ids = [r for r, _ in top]
        marks = ",".join("?" * len(ids))
        rows = {r[0]: r[1:] for r in self.conn.execute(
            f"SELECT e.rowid, s.key, s.id, s.path, s.store, e.seq, e.turn, e.kind, e.tool, e.time, e.sid "
            f"FROM entries e JOIN sessions s ON s.sid = e.sid WHERE e.rowid IN ({marks})", ids)}
        if match is not None:                 # one rowid at a time: FTS5 seeks to it
            sql = (f"SELECT snippet(fts, 0, '{MARK_OPEN}', '{MARK_CLOSE}', '…', 24) FROM fts "
                   f"WHERE fts MATCH ? AND rowid = ?")
            snips = {}
            for r in ids:
                got = self.conn.execute(sql, (match, r)).fetchone()
                snips[r] = got[0] if got else ""
        else:
            snips = {r: (b[:160] + ("…" if len(b) > 160 else "")) for r, b in self.conn.execute(
                f"SELECT rowid, body FROM fts WHERE rowid IN ({marks})", ids)}
        hits = []
        sids = set()
        for rowid, rank in top:
            got = rows.get(rowid)
            if got is None:
                continue
            key, sid, path, store, seq, turn, kind, tool, tm, isid = got
            sids.add(isid)
            text, mk = split_marks(snips.get(rowid, ""))
            hits.append(SearchHit(session=sid, session_key=key, path=path, seq=seq, turn=turn, kind=kind, tool=tool,
                                  time=tm, snippet=with_marks(text, mk), marks=mk, text=text, rank=rank, store=store))
        return hits, sids

    def _scan_search(self, pq: ParsedQuery, limit: int) -> SearchResult:
        """No FTS5: every session's entries (the same extraction as the index) checked one by one:
        words in one entry, -words left out, every filter (kind, tool, session, project, after, before)."""
        from .discovery import discover
        from .faces import open_info
        em = EntryMatcher(pq)
        hits: list[SearchHit] = []
        groups: list[SessionGroup] = []
        listing = discover(self.root)
        for info in listing.sessions:
            if not em.session_ok(info.id, f"{info.project or ''} {info.cwd or ''}"):
                continue
            entries: list[Entry] = []
            res = extract_jsonl(info.path) if info.format == "jsonl" and not info.store else None
            if res is not None and res.status == "ok":
                entries = res.entries
            else:
                try:
                    r = open_info(info)
                except Exception:
                    continue
                try:
                    if r.fatal:
                        continue
                    entries, _rt = reader_entries(r)
                finally:
                    r.close()
            n = 0
            for seq, turn, tm, kind, tool, text in entries:
                span = em.match(kind, tool, tm, text)
                if span is None:
                    continue
                n += 1
                if len(hits) < limit:
                    snip, mk = scan_snippet(text, span)
                    hits.append(SearchHit(session=info.id, session_key=info.key, path=info.path, seq=seq, turn=turn,
                                          kind=kind, tool=tool, time=tm, snippet=with_marks(snip, mk), marks=mk,
                                          text=snip, store=info.store))
            if n:
                groups.append(SessionGroup(key=info.key, session=info.id, path=info.path, title=info.title,
                                           created=info.created_at, count=n, store=info.store))
        groups.sort(key=lambda g: -g.count)
        return SearchResult(hits=hits, sessions=groups, total=sum(g.count for g in groups), session_total=len(groups),
                            fallback=FTS5_MISSING)


def _filter_sql(pq: ParsedQuery) -> tuple[list[str], list[Any], bool]:
    """SQL conditions on entries ``e`` / sessions ``s`` for the query's filters: (conditions,
    arguments, sessions needed)."""
    conds: list[str] = []
    args: list[Any] = []

    def one_of(col: str, vals: list[str], neg: bool) -> None:
        if vals:
            conds.append(f"{col} {'NOT ' if neg else ''}IN ({','.join('?' * len(vals))})")
            args.extend(vals)
    one_of("e.kind", pq.kinds, False)
    one_of("e.kind", pq.not_kinds, True)
    one_of("lower(coalesce(e.tool, ''))", [t.lower() for t in pq.tools], False)
    one_of("lower(coalesce(e.tool, ''))", [t.lower() for t in pq.not_tools], True)
    need_s = False
    for vals, neg in ((pq.sessions, False), (pq.not_sessions, True)):
        if vals:
            conds.append(("NOT " if neg else "") + "(" + " OR ".join("s.id LIKE ? ESCAPE '\\'" for _ in vals) + ")")
            args += [like_prefix(x) for x in vals]
            need_s = True
    for vals, neg in ((pq.projects, False), (pq.not_projects, True)):
        if vals:
            conds.append(("NOT " if neg else "") + "(" + " OR ".join(
                "(coalesce(s.project, '') LIKE ? ESCAPE '\\' OR coalesce(s.cwd, '') LIKE ? ESCAPE '\\')"
                for _ in vals) + ")")
            for x in vals:
                args += [like_sub(x), like_sub(x)]
            need_s = True
    if pq.after is not None:
        conds.append("e.time >= ?")
        args.append(pq.after)
    if pq.before is not None:
        conds.append("e.time < ?")
        args.append(pq.before)
    return conds, args, need_s


def _safe_listdir(p: str) -> list[str]:
    try:
        return os.listdir(p)
    except OSError:
        return []


def _looks_like_session(p: str, root: str) -> bool:
    """A file meant to be a session (reported when unreadable) rather than some other JSONL."""
    name = os.path.basename(p)
    if name.startswith("session.") or name.startswith("session-"):
        return True
    parts = os.path.relpath(p, root).split(os.sep)
    return any(_PROJECT_RE.match(x) for x in parts[:-1])


def _list_store(p: str) -> list[dict[str, Any]]:
    from .sqlite_store import SqliteStore
    store = SqliteStore.open(p)
    try:
        return list(store.list_sessions())
    finally:
        store.close()


def _upsert_file(c: sqlite3.Connection, r: tuple[Any, ...]) -> None:
    c.execute("INSERT OR REPLACE INTO files(path, dev, ino, size, mtime_ns, kind, problem) VALUES (?,?,?,?,?,?,?)",
              r)


def _crc_before(path: str, pos: int) -> Optional[int]:
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


def _split(seg: Segment) -> list[tuple[Any, Optional[bytes], Optional[int], Optional[int]]]:
    """[(pos, raw|None, line, offset)] of a text segment's rows that may hold text; raw None = the
    torn last row.  Rows written the dsh way whose type carries no text are left out here (most
    rows of a long session are streamed chunks)."""
    out: list[tuple[Any, Optional[bytes], Optional[int], Optional[int]]] = []
    parts = seg.data.split(b"\n")
    last = len(parts) - 1
    at = 0
    line = seg.line0
    t0 = seg.text_offset
    row_pos = seg.row_pos
    text_types, error_only = TEXT_TYPES_B, ERROR_ONLY_B
    for i, raw in enumerate(parts):
        if i == last:
            if raw:                                   # no newline after it: torn
                out.append((row_pos(at), None, line, t0 + at if t0 >= 0 else None))
            break
        if raw.startswith(b'{"type":"'):
            e = raw.find(b'"', 9)
            t = raw[9:e] if e > 9 else None
            if t is not None and (t not in text_types or (t in error_only and b'"error"' not in raw)):
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


def _flush(c: sqlite3.Connection, ent: list[tuple[Any, ...]], fts: list[tuple[Any, ...]], fts5: bool) -> None:
    if ent:
        c.executemany("INSERT INTO entries(rowid, sid, seq, turn, time, kind, tool) VALUES (?,?,?,?,?,?,?)", ent)
        ent.clear()
    if fts:
        if fts5:
            c.executemany("INSERT INTO fts(rowid, body) VALUES (?,?)", fts)
        fts.clear()
