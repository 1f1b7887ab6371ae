"""Full-text index of a Harness home (or any JSONL tree, folder of sessions, SQLite store).

An embedded SQLite FTS5 database (standard library ``sqlite3``, no server) in the user cache
directory (``platformdirs.user_cache_dir("session-lens")/fulltext``; ``SESSION_LENS_CACHE_DIR``
overrides the base), one file per indexed root.  It indexes the text a user sees per event
(:mod:`app.log.query.extract`, what :func:`app.log.query.textview.shown_fields` shows: messages,
reasoning, tool arguments, whole tool output, errors, titles, generic rows' payloads, tool-call
blocks whose call never started); each entry carries session, seq,
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
until it was read whole and written with those of the next sessions at the commit (every 5000
sessions or 32 MB of text: a commit makes FTS5 write a segment); one too big for memory is
written as it is read, inside a savepoint (a savepoint per session made FTS5 flush a segment per
session).
It never writes into the store: sources are opened read-only (JSONL/zstd by ``os.read``/``pread``,
SQLite ``mode=ro``).  Where the Python build lacks FTS5, :func:`fts5_available` says so and
searches fall back to scanning the sessions with the same extraction.
"""
from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from .ftsdb import BuildLock, IndexRefused, open_index_db
from .ftsquery import FTS5_MISSING, QueryError, SearchHit, SearchResult, SessionGroup, parse_query
from .ftssearch import IndexQueries
from .ftswalk import Listing, Scanned, WalkSeen, scan_root, shard_path, shard_scan, walk_digest
from .ftswrite import Cancel, Found, Progress, SessionWriter, UpdateReport

if TYPE_CHECKING:
    from .ftsstream import Pending
# (the extraction, the shard workers and the scan are imported when an update or a scan needs them:
# a query of a current index imports none of them, issue 32)

__all__ = ["FullTextIndex", "IndexRefused", "QueryError", "SearchHit", "SearchResult", "SessionGroup",
           "UpdateReport", "fts5_available", "parse_query", "FTS5_MISSING"]

SCHEMA = 5                    # 3: shards; 4: our application id, the build state; 5: the shown text (generic
                              # payloads, open tool-call blocks), the resume state as JSON


def __getattr__(name: str) -> Any:
    """The shard worker's entry points (:mod:`app.store.ftsshard`), imported when asked for."""
    if name in ("serve_shard", "shard_main"):
        from . import ftsshard
        return getattr(ftsshard, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    return os.path.join(cache_dir(), f"{name}-{h}.v4.sqlite")   # v4: files of older builds are not ours


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
CREATE TABLE IF NOT EXISTS folders(path TEXT PRIMARY KEY, ino INTEGER, mtime_ns INTEGER, dirs TEXT, files TEXT);
"""
# the text only: kind, tool and time are plain columns of ``entries`` (a filter is a join, not
# FTS columns to tokenize); positions kept (detail=full) so "phrases" are exact
_FTS_DDL = "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"
# FTS5 writes a new segment whenever its in-memory terms pass this size (default 1 MB): fewer,
# bigger segments for a first build (less merging); memory stays bounded (per index process)
_FTS_HASHSIZE = 8 << 20
MAX_SHARDS = 8
# new JSONL sessions up to this size are read whole (extract_jsonl); None: the extraction's FAST_MAX_BYTES
_FAST_BYTES: Optional[int] = None


def _can_spawn() -> bool:
    return (os.cpu_count() or 1) >= 2



class FullTextIndex(SessionWriter, IndexQueries):
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
        self._listings: dict[str, Listing] = {}       # the folder listings of this object's last walk
        self._seen: Optional[tuple[Scanned, WalkSeen]] = None   # that walk and what it vouched for
        conn, new = open_index_db(self.db_path)
        self._conn: Optional[sqlite3.Connection] = conn
        c = self.conn
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute("PRAGMA foreign_keys=OFF")
        c.execute("PRAGMA cache_size=-32768")           # 32 MB: FTS5 segment merges of a first build
        ver = None if new else self._meta_int("schema")
        if ver is not None and ver != SCHEMA:
            self._drop_all()
            ver = None
        # an index already set up is opened without writing (a search does not wait for a build)
        have = {r[0] for r in c.execute("SELECT name FROM sqlite_master")}
        if ver is None or not {"meta", "sessions", "files", "entries", "folders"} <= have \
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
            part = (0, max(1, min(MAX_SHARDS, self._meta_int("shards") or 1)))
        self.part = part

    def _meta_int(self, key: str) -> Optional[int]:
        """An integer of the meta table (None: missing, or not an integer: a miss, never an error)."""
        try:
            r = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None
        try:
            return int(r[0]) if r is not None else None
        except (TypeError, ValueError):
            return None

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            raise ValueError("the index is closed")
        return self._conn

    @classmethod
    def for_home(cls, home: Optional[str] = None) -> FullTextIndex:
        if home:                        # (the root as given: discovery is not imported for it)
            return cls(os.path.expanduser(home))
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
        for t in ("fts", "entries", "sessions", "files", "folders", "meta"):
            c.execute(f"DROP TABLE IF EXISTS {t}")

    # ------------------------------------------------------------------ walk (stat only)
    def _scan_root(self) -> Scanned:
        return self.walk()

    def walk(self) -> Scanned:
        """The stat walk of the root (:func:`app.store.ftswalk.scan_root`): no file is opened.
        Every file is stat-ed; a folder is listed again unless its inode and mtime are those of
        its listing the last update kept (kept only when the folder's mtime was older than the
        listing by :data:`app.store.ftswalk.RACY_NS`: a coarse file-system clock cannot hide a
        change; a home of 10k sessions: 146 -> ~70 ms of CPU)."""
        known: Optional[dict[str, Listing]] = None
        if self.part[0] == 0 and self._meta_int("folders") == 2:     # (2: sure listings only)
            try:
                known = {r[0]: (r[1], r[2], _names(r[3]), _names(r[4])) for r in self.conn.execute(
                    "SELECT path, ino, mtime_ns, dirs, files FROM folders")}
            except sqlite3.Error:
                known = None
        self._listings = {}
        seen = WalkSeen()
        walked = scan_root(self.root, known, self._listings, seen)
        self._seen = (walked, seen)
        return walked

    def seen_of(self, walked: Scanned) -> Optional[WalkSeen]:
        """What this object's last walk vouched for, if ``walked`` is that walk (:mod:`app.store.ftsfresh`)."""
        return self._seen[1] if self._seen is not None and self._seen[0] is walked else None

    def fresh_digest(self) -> Optional[str]:
        """The walk the manifest records, when one stat per folder and file shows the root still
        so (:func:`app.store.ftsfresh.checked_digest`; None: walk)."""
        from .ftsfresh import checked_digest
        return checked_digest(self)

    def _keep_listings(self) -> None:
        """Keep the folder listings of this object's last walk for the next one (after an update
        that ended whole: the listings and the files table describe the same walk)."""
        got, self._listings = self._listings, {}
        if not got:
            return
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        try:
            c.execute("DELETE FROM folders")
            c.executemany("INSERT INTO folders(path, ino, mtime_ns, dirs, files) VALUES (?,?,?,?,?)",
                          ((p, ino, mt, "\0".join(ds), "\0".join(fs)) for p, (ino, mt, ds, fs) in got.items()))
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('folders', '2')")
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise

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

    def pending(self, walked: Optional[Scanned] = None) -> list[Pending]:
        """The sessions not indexed at their current revision (stat only): what a query scans."""
        from .ftslive import pending_list
        return pending_list(self, walked)

    def default_path(self) -> str:
        return index_path_for(self.root)

    def behind(self) -> int:
        """Sessions new, changed or removed since the last update (stat only, nothing opened; 0 at
        once when the manifest of that update's walk still holds: the window asks every 30 s)."""
        fresh = self.fresh_digest()
        if fresh is not None:
            r = self.conn.execute("SELECT value FROM meta WHERE key = 'walk'").fetchone()
            if r is not None and r[0] == fresh:
                return 0
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
        c.execute("DELETE FROM meta WHERE key = 'walk'")
        c.execute("DELETE FROM folders")           # a rebuild lists every folder again
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

    def update(self, progress: Progress = None, cancel: Cancel = None,
               workers: Optional[int] = None, walked: Optional[Scanned] = None) -> UpdateReport:
        """Bring the index up to date.  ``progress(done_sessions, total_sessions, bytes_read)``
        after each session; ``cancel`` (callable or threading.Event) stops between rows and
        keeps what was committed.  ``workers``: processes for a big build (None: two when there
        is much to read, else none).  The first build of an empty index with workers is split
        into shards, one process each extracting and writing its own shard database; a later
        update of a sharded index updates every shard so (a grown session stays in its shard);
        an index of one shard uses the workers to extract new sessions for this process.
        ``walked``: the stat walk of the root when the caller just made it (:func:`scan_root`)."""
        if self.part[0] != 0:
            raise ValueError("a shard is updated through the index (shard 0), which hands it its files")
        lock = BuildLock(self.db_path)
        lock.acquire()
        try:
            if walked is None:                      # nothing changed (the manifest holds): nothing to do
                from .ftsfresh import unchanged_report
                quick = unchanged_report(self)
                if quick is not None:
                    return quick
            self._set_meta("build", "running")      # until it ends whole: a killed build is known
            self.conn.execute("DELETE FROM meta WHERE key = 'walk'")   # the files change from now on
            if walked is None:
                walked = self.walk()
            rep = self._update(progress, cancel, workers, walked)
            if not rep.cancelled:
                self._set_meta("build", "done")
                # the files tables now hold this walk: a query whose walk is the same reads none of them
                digest = walk_digest(walked)
                self._set_meta("walk", digest)
                from .ftsfresh import save_manifest    # (and one whose manifest check holds walks none)
                save_manifest(self, walked, digest)
                self._keep_listings()
        finally:
            lock.release()
        return rep

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))

    def build_state(self) -> str:
        """``done`` (the last build ended whole), ``running`` (a build is running now, here or in
        another process), ``interrupted`` (a build was killed or cancelled: sessions may be
        missing; the next update resumes it) or ``never``."""
        if BuildLock(self.db_path).held_elsewhere():
            return "running"
        r = self.conn.execute("SELECT value FROM meta WHERE key = 'build'").fetchone()
        v = r[0] if r is not None else None
        if v == "running":
            return "interrupted"
        if v == "done":
            return "done"
        return "never" if self._empty() else "done"

    def _update(self, progress: Progress, cancel: Cancel, workers: Optional[int],
                walked: Optional[Scanned]) -> UpdateReport:
        t0 = time.perf_counter()
        scanned = None
        k, n = self.part
        split = False
        if n == 1 and self.fts5 and workers != 0 and self._empty():
            scanned = walked or self._scan_root()
            fast = [(p, st.st_size) for p, st, _ in scanned[0] if not p.endswith((".zstd", ".zst"))]
            from .ftsio import auto_workers
            want = min(MAX_SHARDS, auto_workers(fast) if workers is None else max(0, int(workers)))
            if want >= 2 and _can_spawn():
                for i in range(1, want):
                    FullTextIndex(self.root, db_path=shard_path(self.db_path, i), part=(i, want)).close_cleared()
                self._set_shards(want)
                k, n = self.part
                split = True
        if split:
            assert scanned is not None
            from .ftsshard import update_shards
            rep = update_shards(self, progress, cancel, shard_scan(scanned, n))
        elif k == 0 and n > 1:
            rep = self._update_parts(progress, cancel, workers, walked)
        else:
            rep = self.update_one(progress, cancel, workers, scanned or walked)
        rep.seconds = time.perf_counter() - t0
        return rep

    def close_cleared(self) -> None:
        """Empty this shard (left over from an earlier build) and close it."""
        if not self._empty():
            self._clear()
        self.close()

    def _update_parts(self, progress: Progress, cancel: Cancel, workers: Optional[int],
                      walked: Optional[Scanned] = None) -> UpdateReport:
        """Update a sharded index in this process, one shard after the other (one walk): a later
        update is small, a worker process would cost more than it saves."""
        parts = self.parts()
        known = {r[0]: i for i, p in enumerate(parts) for r in p.conn.execute("SELECT path FROM files")}
        scans = shard_scan(walked or self._scan_root(), len(parts), known)
        rep = UpdateReport()
        base = [0, 0, 0]
        for ix, scanned in zip(parts, scans):
            def shifted(done: int, total: int, nbytes: int) -> None:
                if progress is not None:
                    progress(base[0] + done, base[1] + total, base[2] + nbytes)
            got = ix.update_one(shifted, cancel, workers, scanned)
            base[0] += got.sessions - got.unchanged
            base[1] += got.sessions - got.unchanged
            base[2] += got.bytes_read
            rep.merge(got)
            rep.workers = max(rep.workers, got.workers)
            if got.cancelled:
                break
        return rep

    def _session_row(self, key: str) -> Optional[tuple[Any, ...]]:
        """The bookkeeping row of one session (None: not indexed)."""
        return self.conn.execute(  # type: ignore[no-any-return]
            "SELECT key, sid, dev, ino, size, mtime_ns, revision, done_pos, done_line, done_text, done_crc, "
            "turn, calls, status, problem FROM sessions WHERE key = ?", (key,)).fetchone()

    def update_one(self, progress: Progress, cancel: Cancel, workers: Optional[int],
                    scanned: Optional[tuple[Any, Any]]) -> UpdateReport:
        """Update this shard (of one or more)."""
        rep = UpdateReport()
        if not self.fts5:
            rep.fallback = FTS5_MISSING
        c = self.conn
        files, stores = scanned if scanned is not None else self._scan_root()
        known_files = {r[0]: r[1:] for r in c.execute("SELECT path, dev, ino, size, mtime_ns, kind, problem "
                                                       "FROM files")}
        # the keys only (a home of 100k sessions); a changed session's row is read when needed
        sids = dict(c.execute("SELECT key, sid FROM sessions"))
        # (an empty index, a first build: no session row to look up per file)
        row_of = self._session_row if sids else _no_row
        work, present, file_rows = _walk_diff(c, files, stores, known_files, rep, row_of,
                                              self._read_header, self._not_session)
        # removed sessions
        gone = [k for k in sids if k not in present]
        c.execute("BEGIN IMMEDIATE")
        try:
            for k in gone:
                self._delete_session(sids[k])
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
        from .ftsio import auto_workers, extracted
        nworkers = auto_workers(fast) if workers is None else (max(0, int(workers)) if fast else 0)
        rep.workers = nworkers
        results = extracted(fast, nworkers, cancel)
        try:
            self._index_work(work, results, file_rows, rep, progress, cancel)
        finally:
            results.close()                     # stops the workers when cancelled or failed
        return rep


def _names(joined: Optional[str]) -> tuple[str, ...]:
    return tuple(joined.split("\0")) if joined else ()


def _no_row(_key: str) -> None:
    return None


def _walk_diff(c: sqlite3.Connection, files: Any, stores: Any, known_files: dict[str, Any], rep: UpdateReport,
               row_of: Callable[[str], Optional[tuple[Any, ...]]],
               read_header: Callable[[str, UpdateReport], tuple[Optional[dict[str, Any]], Optional[str]]],
               not_session: Callable[[str, tuple[int, int, int, int], Optional[str], UpdateReport], tuple[Any, ...]],
               ) -> tuple[list[tuple[Found, Optional[tuple[Any, ...]]]], set[str], list[tuple[Any, ...]]]:
    """The walk against the index: unchanged files and store sessions counted (``rep``), the rest to index.
    -> (work: (Found, its previous session row or None), the keys present, the files table's new rows)."""
    from ..log.query.extract import FAST_MAX_BYTES
    fast_max = FAST_MAX_BYTES if _FAST_BYTES is None else _FAST_BYTES
    from .ftsio import list_store
    failed = dict(c.execute("SELECT key, problem FROM sessions WHERE status = 'error'"))
    work: list[tuple[Found, Optional[tuple[Any, ...]]]] = []   # (Found, previous session row or None)
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
                if failed.get(p):
                    rep.problems.append(f"{p}: {failed[p]}")
            elif prev[4] == "bad" and prev[5]:
                rep.problems.append(f"{p}: {prev[5]}")
            continue
        fmt = "zstd" if p.endswith((".zstd", ".zst")) else "jsonl"
        f = Found(key=p, path=p, fmt=fmt, project=project, st=st)
        row = row_of(p)
        same_file = row is not None and (row[2], row[3]) == (st.st_dev, st.st_ino)
        if not same_file:
            if fmt == "jsonl" and st.st_size <= fast_max:
                f.fast = True                      # read whole, its header checked then
            else:
                hdr, why = read_header(p, rep)
                if hdr is None:
                    file_rows.append(not_session(p, sig, why, rep))
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
            row = row_of(key)
            if row is not None and row[6] == h.get("revision"):
                rep.unchanged += 1
                continue
            work.append((Found(key=key, path=p, fmt="sqlite", project=None, st=st, store=p, sid=h["id"],
                                revision=h.get("revision"), header=h), None))
        file_rows.append((p, *sig, "store", None))
    return work, present, file_rows
