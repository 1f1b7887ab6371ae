"""Full-text index of a Harness home (or any JSONL tree, folder of sessions, SQLite store).

An embedded SQLite FTS5 database (standard library ``sqlite3``, no server) in the user cache
directory (``platformdirs.user_cache_dir("session-lens")/fulltext``; ``SESSION_LENS_CACHE_DIR``
overrides the base), one file per indexed root.  It indexes the text a user sees per event
(:func:`app.log.textview.event_fields`: messages, reasoning, tool arguments, whole tool output,
errors, titles); each entry carries session, seq, turn, kind, tool name and time.

Incremental by revision (spec §1.6): a session file whose (device, inode, size, mtime) is
unchanged is not opened at all; a log that grew on the same inode is read from where the index
stopped (the end of its last complete row or frame; a checksum of the bytes before that point
proves the prefix is the same); a replaced, shrunk or rewritten one is indexed again.  A SQLite
store is listed when the file changed and a session whose revision changed is indexed again.

Crash-safe: WAL journal, each session's rows and its bookkeeping row are written in one
transaction, so a crash leaves every session either as before or fully updated.  A session's rows
are kept in memory until it was read whole and written with those of the next sessions at the
commit (every 200 sessions or 8 MB); one too big for memory is written as it is read, inside a
savepoint (a savepoint per session made FTS5 flush a segment per session).
It never writes into the store: sources are opened read-only (JSONL/zstd by ``os.pread``,
SQLite ``mode=ro``).  Where the Python build lacks FTS5, :func:`fts5_available` says so and
searches fall back to scanning the sessions (:mod:`app.log.search`).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime, UTC
from typing import Optional
from collections.abc import Callable

from ..log.model import is_event
from ..log.reader import LogReader
from ..log.sources import open_source
from ..log.textview import KINDS, TEXT_TYPES, event_fields, event_turn, normalize_kind, plain
from .discovery import SQLITE_SUFFIXES, _PROJECT_RE, _older_generations, _walk, read_header_bytes

SCHEMA = 1
CRC_WINDOW = 4096
MARK_OPEN, MARK_CLOSE = "\x02", "\x03"        # snippet sentinels (the body holds no control chars)
HIT_OPEN, HIT_CLOSE = "«", "»"               # plain-text marks in returned snippets
_KIND_TOKEN = {k: k.replace("-", "") for k in KINDS}
_TOKEN_KIND = {v: k for k, v in _KIND_TOKEN.items()}
_TEXT_TYPES_B = frozenset(t.encode() for t in TEXT_TYPES) | {b"turn/start"}
_ERROR_ONLY_B = frozenset({b"assistant/chunk", b"turn/end"})
_COMMIT_BYTES = 8 << 20
_COMMIT_SESSIONS = 200
_FLUSH_ROWS = 2048            # rows written at a time by a session written as it is read
_MEMORY_BYTES = 16 << 20      # a session's text kept in memory before it is written in a savepoint


class QueryError(ValueError):
    """A query that cannot be run (one clear line)."""


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


# --------------------------------------------------------------------------- results

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
    fallback: Optional[str] = None
    problems: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"sessions": self.sessions, "indexed": self.indexed, "grown": self.grown,
                "unchanged": self.unchanged, "removed": self.removed, "skipped": self.skipped,
                "filesOpened": self.files_opened, "bytesRead": self.bytes_read, "entries": self.entries,
                "seconds": round(self.seconds, 3), "cancelled": self.cancelled}


@dataclass
class SearchHit:
    session: str               # session id
    session_key: str           # unique key (path, or store#id)
    path: str
    seq: int
    turn: Optional[int]
    kind: str
    tool: Optional[str]
    time: Optional[int]
    snippet: str               # plain text, matched words between « »
    marks: list                # [(start, end)] of matched words inside ``snippet`` (without the « »)
    text: str                  # ``snippet`` without marks
    rank: float = 0.0
    store: Optional[str] = None

    def to_dict(self) -> dict:
        return {"session": self.session, "seq": self.seq, "turn": self.turn, "kind": self.kind,
                "snippet": self.snippet, "path": self.path, "tool": self.tool, "time": self.time,
                **({"store": self.store} if self.store else {})}


@dataclass
class SessionGroup:
    key: str
    session: str
    path: str
    title: Optional[str]
    created: Optional[int]
    count: int
    store: Optional[str] = None


@dataclass
class SearchResult:
    hits: list
    sessions: list             # SessionGroup, most matches first
    total: int                 # matches in all sessions
    fallback: Optional[str] = None
    seconds: float = 0.0


# --------------------------------------------------------------------------- query parsing

_TOKEN_RE = re.compile(r'(-?)(\w+):"([^"]*)"|"([^"]*)"|(\S+)')
FILTERS = ("tool", "kind", "session", "after", "before", "project")


@dataclass
class ParsedQuery:
    terms: list                 # [(text, prefix:bool, phrase:bool)]
    kinds: list
    tools: list
    sessions: list
    projects: list
    after: Optional[int] = None
    before: Optional[int] = None
    ops: list = field(default_factory=list)   # FTS expression parts in order (terms and OR/NOT)

    def fts(self) -> Optional[str]:
        ops = list(self.ops)
        # a leading or trailing operator is a syntax error: drop dangling ones
        while ops and ops[0] in ("OR", "AND", "NOT"):
            ops.pop(0)
        while ops and ops[-1] in ("OR", "AND", "NOT"):
            ops.pop()
        parts = ["(" + " ".join(ops) + ")"] if ops else []
        if self.kinds:
            parts.append("{kind} : (" + " OR ".join(_KIND_TOKEN[k] for k in self.kinds) + ")")
        if self.tools:
            parts.append("{tool} : (" + " OR ".join(_quote(t) for t in self.tools) + ")")
        return " AND ".join(parts) or None


def _quote(s: str) -> str:
    return '"' + s.replace('"', '""') + '"'


def _date_ms(s: str, what: str) -> int:
    s = s.strip()
    for fmt in ("%Y-%m-%d", "%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S", "%Y-%m"):
        try:
            d = datetime.strptime(s, fmt).replace(tzinfo=UTC)
            return int(d.timestamp() * 1000)
        except ValueError:
            continue
    raise QueryError(f"{what}:{s} is not a date (YYYY-MM-DD)")


def parse_query(q: str) -> ParsedQuery:
    """Words, "phrases", prefix*, OR/NOT between terms, and the filters of ``FILTERS``."""
    pq = ParsedQuery(terms=[], kinds=[], tools=[], sessions=[], projects=[])
    for m in _TOKEN_RE.finditer(q or ""):
        neg, fkey, fval, phrase, word = m.groups()
        if fkey is not None and fkey.lower() in FILTERS:
            key, val = fkey.lower(), fval
        elif word is not None and ":" in word and word.split(":", 1)[0].lower() in FILTERS:
            key, val = word.split(":", 1)
            key = key.lower()
        else:
            key = None
        if key is not None:
            if not val:
                raise QueryError(f"{key}: needs a value")
            if key == "kind":
                try:
                    pq.kinds.append(normalize_kind(val))
                except ValueError as e:
                    raise QueryError(str(e)) from None
            elif key == "tool":
                pq.tools.append(val)
            elif key == "session":
                pq.sessions.append(val)
            elif key == "project":
                pq.projects.append(val)
            elif key == "after":
                pq.after = _date_ms(val, key)
            elif key == "before":
                pq.before = _date_ms(val, key)
            continue
        if fkey is not None:                       # word:"…" with an unknown key: a phrase of both
            word = None
            phrase = f"{fkey} {fval}"
        if phrase is not None:
            if phrase.strip():
                pq.terms.append((phrase, False, True))
                pq.ops.append(_quote(phrase))
            continue
        if word in ("OR", "NOT", "AND"):
            pq.ops.append(word)
            continue
        prefix = word.endswith("*")
        w = word.rstrip("*")
        toks = re.findall(r"\w+", w)
        if not toks:
            continue
        text = " ".join(toks)
        pq.terms.append((text, prefix, len(toks) > 1))
        pq.ops.append(_quote(text) + ("*" if prefix else ""))
    return pq


# --------------------------------------------------------------------------- the index

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
CREATE INDEX IF NOT EXISTS entries_sid ON entries(sid);
"""
_FTS_DDL = ("CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(body, kind, tool, "
            "tokenize = 'unicode61 remove_diacritics 2')")


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
    header: Optional[dict] = None


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
        self._next_rowid = self._next_sid = self._pre = None
        self._sp_open = self._writing = False
        self._pending: tuple = ([], [])
        self._batch: tuple = ([], [], [], [])
        os.makedirs(os.path.dirname(self.db_path), exist_ok=True)
        self.conn = sqlite3.connect(self.db_path, isolation_level=None, timeout=10.0, check_same_thread=False)
        c = self.conn
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute("PRAGMA foreign_keys=OFF")
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
        if ver is None or not {"meta", "sessions", "files", "entries", "entries_sid"} <= have \
                or (self.fts5 and "fts" not in have):
            c.executescript(_DDL)
            if self.fts5:
                c.execute(_FTS_DDL)
        r = c.execute("SELECT value FROM meta WHERE key='root'").fetchone()
        if ver is None or r is None or r[0] != self.root:
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('schema', ?), ('root', ?)",
                      (str(SCHEMA), self.root))

    @classmethod
    def for_home(cls, home: Optional[str] = None) -> FullTextIndex:
        from .discovery import harness_home
        return cls(str(harness_home(home)))

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _drop_all(self) -> None:
        c = self.conn
        for t in ("fts", "entries", "sessions", "files", "meta"):
            c.execute(f"DROP TABLE IF EXISTS {t}")

    # ------------------------------------------------------------------ walk (stat only)
    def _scan_root(self) -> tuple:
        """(jsonl/zstd files with stats, sqlite files with stats): no file is opened."""
        root = self.root
        files, stores = [], []
        if os.path.isfile(root):
            paths = [root]
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
            rel = os.path.relpath(p, base).split(os.sep)
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
    def rebuild(self, progress: Optional[Callable] = None, cancel=None) -> UpdateReport:
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        if self.fts5:
            c.execute("DELETE FROM fts")
        c.execute("DELETE FROM entries")
        c.execute("DELETE FROM sessions")
        c.execute("DELETE FROM files")
        c.execute("COMMIT")
        return self.update(progress=progress, cancel=cancel)

    def update(self, progress: Optional[Callable] = None, cancel=None) -> UpdateReport:
        """Bring the index up to date.  ``progress(done_sessions, total_sessions, bytes_read)``
        after each session; ``cancel`` (callable or threading.Event) stops between rows and
        keeps what was committed."""
        t0 = time.perf_counter()
        rep = UpdateReport()
        self._next_rowid = None
        if not self.fts5:
            rep.fallback = FTS5_MISSING
        c = self.conn
        files, stores = self._scan_root()
        known_files = {r[0]: r[1:] for r in c.execute("SELECT path, dev, ino, size, mtime_ns, kind, problem "
                                                       "FROM files")}
        sess = {r[0]: r for r in c.execute(
            "SELECT key, sid, dev, ino, size, mtime_ns, revision, done_pos, done_line, done_text, done_crc, "
            "turn, calls, status, problem FROM sessions")}
        work: list = []            # (_Found, previous session row or None)
        present: set = set()
        file_rows: list = []
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
                rep.files_opened += 1
                raw, why = read_header_bytes(p)
                hdr = None
                if raw is not None:
                    try:
                        hdr = json.loads(raw)
                    except ValueError as e:
                        why = f"the first line is not JSON: {e}"
                if not (isinstance(hdr, dict) and hdr.get("type") == "session"):
                    if _looks_like_session(p, self.root):
                        why = why or 'the first line is not a {"type":"session"} header'
                        rep.problems.append(f"{p}: {why}")
                        rep.skipped += 1
                        file_rows.append((p, *sig, "bad", why))
                    else:
                        file_rows.append((p, *sig, "other", None))
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
        # index the work list, several sessions per transaction.  A session's rows are kept in
        # memory and written once it was read whole (nothing to undo when reading fails); one
        # too big for that is written in a savepoint as it is read (FTS5 flushes its pending
        # terms to a new segment at every savepoint: one per session made small sessions slow)
        done = 0
        self._next_sid = None
        self._batch = ([], [], [], [])   # entries, fts, sessions, files rows written at the next commit
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
                    n = self._index_one(f, row, rep, cancel)
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
                    rep.skipped += 1
                    rep.problems.append(f"{f.key}: {type(e).__name__}: {e}")
                    self._record_error(f, f"{type(e).__name__}: {e}")
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
        rep.seconds = time.perf_counter() - t0
        return rep

    def _delete_session(self, sid: int) -> None:
        c = self.conn
        if self.fts5:
            c.execute("DELETE FROM fts WHERE rowid IN (SELECT rowid FROM entries WHERE sid = ?)", (sid,))
        c.execute("DELETE FROM entries WHERE sid = ?", (sid,))
        c.execute("DELETE FROM sessions WHERE sid = ?", (sid,))

    def _record_error(self, f: _Found, why: str) -> None:
        c = self.conn
        r = c.execute("SELECT sid FROM sessions WHERE key = ?", (f.key,)).fetchone()
        if r is not None:
            self._delete_session(r[0])
        st = f.st
        if self._next_sid is None:
            self._next_sid = c.execute("SELECT coalesce(max(sid), 0) + 1 FROM sessions").fetchone()[0]
        sid = self._next_sid                # rows of the batch may hold the next sids: take one too
        self._next_sid += 1
        c.execute("INSERT INTO sessions(sid, key, id, path, store, format, project, dev, ino, size, mtime_ns, "
                  "revision, status, problem) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                  (sid, f.key, (f.header or {}).get("id") if f.header else None, f.path, f.store, f.fmt, f.project,
                   st.st_dev if st else None, st.st_ino if st else None, st.st_size if st else None,
                   st.st_mtime_ns if st else None, f.revision, "error", why))

    def _flush_batch(self) -> None:
        c = self.conn
        ent, fts, sess, files = self._batch
        if sess:
            c.executemany(
                "INSERT INTO sessions(sid, key, id, path, store, format, project, cwd, created, dev, ino, size, "
                "mtime_ns, revision, done_pos, done_line, done_text, done_crc, turn, calls, entries, title, status) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?, 'ok')", sess)
            sess.clear()
        if files:
            c.executemany("INSERT OR REPLACE INTO files(path, dev, ino, size, mtime_ns, kind, problem) "
                          "VALUES (?,?,?,?,?,?,?)", files)
            files.clear()
        _flush(c, ent, fts)

    def _index_one(self, f: _Found, row, rep: UpdateReport, cancel) -> int:
        """Index one session (inside the caller's savepoint).  -> text bytes written."""
        c = self.conn
        resume = None
        if row is not None and f.fmt in ("jsonl", "zstd"):
            (_k, sid, dev, ino, size, _mt, _rev, done_pos, done_line, done_text, done_crc, turn, calls,
             status, _prob) = row
            st = f.st
            # same file, grown (a log is append-only): resume when the bytes before the stop point are
            # the ones indexed; same size but a new mtime means a rewrite: index it again
            if (dev, ino) == (st.st_dev, st.st_ino) and st.st_size > size and status == "ok" and done_pos \
                    and _crc_before(f.path, done_pos) == done_crc:
                resume = (sid, done_pos, done_line, done_text, turn, json.loads(calls) if calls else {})
        if f.fmt == "sqlite":
            from .faces import open_reader
            reader = open_reader(f.store, f.sid)
        else:
            reader = LogReader(open_source(f.path))
        rep.files_opened += 1
        try:
            if reader.fatal:
                why = str(reader.fatal)
                rep.skipped += 1
                rep.problems.append(f"{f.key}: {why}")
                self._record_error(f, why)
                return 0
            h = reader.header
            old = None
            if resume is None:
                old = c.execute("SELECT sid FROM sessions WHERE key = ?", (f.key,)).fetchone()
                if self._next_sid is None:
                    self._next_sid = c.execute("SELECT coalesce(max(sid), 0) + 1 FROM sessions").fetchone()[0]
                sid = self._next_sid
                self._next_sid += 1
                st = f.st

                def pre(old=old, sid=sid, st=st, h=h):
                    if old is not None:
                        self._delete_session(old[0])
                    c.execute(
                        "INSERT INTO sessions(sid, key, id, path, store, format, project, cwd, created, dev, ino, "
                        "size, mtime_ns, revision, status) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?, 'ok')",
                        (sid, f.key, h.id, f.path, f.store, f.fmt, f.project, h.cwd, h.createdAt, st.st_dev,
                         st.st_ino, st.st_size, st.st_mtime_ns, f.revision))
                self._pre = pre
                start = None
                line0 = text0 = None
                turn, calls = None, {}
                rep.indexed += 1
            else:
                sid, start, line0, text0, turn, calls = resume
                self._pre = None
                rep.grown += 1
            n, state = self._feed(reader, sid, start, line0, text0, turn, calls, rep, cancel)
            done_pos, done_line, done_text, turn, title = state
            crc = _crc_before(f.path, done_pos) if f.fmt != "sqlite" and done_pos else None
            st = f.st
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

    def _feed(self, reader, sid, start, line0, text0, turn, calls, rep: UpdateReport, cancel):
        """Index rows from ``start`` on; -> (text bytes, (done_pos, done_line, done_text, turn, title))."""
        c = self.conn
        src = reader.source
        codec = reader.codec
        if start is None:
            segs = src.forward()
        elif src.kind == "zstd":
            segs = src.forward(start, line0=line0, text_offset=text0)
        else:
            segs = src.forward(start, line0=line0)
        nxt = self._next_rowid
        if nxt is None:
            nxt = c.execute("SELECT coalesce(max(rowid), 0) + 1 FROM entries").fetchone()[0]
        ent, fts = [], []
        nbytes = 0
        title = None
        done_pos, done_line, done_text = start, line0, text0
        entries = 0
        fts5 = self.fts5
        for seg in segs:
            if _cancelled(cancel):
                raise _Cancelled()
            if seg.bad:
                rep.problems.append(f"{reader.path}: {seg.bad}")
                if isinstance(seg.end, int):
                    done_pos, done_line, done_text = seg.end, None, None
                continue
            if seg.rows is not None:
                rows = [(p, raw, None, None) for p, raw in seg.rows]
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
                t = _row_type(raw)
                if t is not None:
                    if t not in _TEXT_TYPES_B:
                        continue
                    if t in _ERROR_ONLY_B and b'"error"' not in raw:
                        continue                  # a chunk / turn end without an error has no text
                items, _ = codec.decode_row(raw, pos=p, offset=-1 if off is None else off, line=line)
                for ev in items:
                    if not is_event(ev):
                        continue
                    if ev.type == "turn/start":
                        tt = event_turn(ev)
                        if tt is not None:
                            turn = tt
                        calls.clear()
                        continue
                    fields = event_fields(ev, calls)
                    if not fields:
                        continue
                    et = event_turn(ev)
                    for fl in fields:
                        body = plain(fl.text)
                        ent.append((nxt, sid, ev.seq, et if et is not None else turn, ev.time, fl.kind, fl.tool))
                        if fts5:
                            fts.append((nxt, body, _KIND_TOKEN[fl.kind], fl.tool or ""))
                        nxt += 1
                        nbytes += len(body)
                        entries += 1
                        if fl.kind == "title":
                            title = fl.text
            if torn_at is not None and seg.torn:
                if isinstance(torn_at[0], int):
                    done_pos, done_line, done_text = torn_at
                else:                          # a torn zstd frame: resume at the frame
                    done_pos, done_line, done_text = seg.pos, seg.line0, seg.text_offset if seg.text_offset >= 0 else None
            else:
                done_pos, done_line, done_text = seg_done
            if len(ent) >= _FLUSH_ROWS and (self._sp_open or nbytes >= _MEMORY_BYTES):
                if not self._sp_open:             # too big to keep: write it in a savepoint as it is read
                    c.execute("SAVEPOINT s")
                    self._sp_open = True
                    if self._pre is not None:
                        self._pre()
                _flush(c, ent, fts)
        if self._sp_open:
            _flush(c, ent, fts)
        self._pending = (ent, fts)
        self._next_rowid = nxt
        rep.entries += entries
        self._last_entries = entries
        return nbytes, (done_pos, done_line, done_text, turn, title)

    # ------------------------------------------------------------------ queries
    def indexed_count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM sessions WHERE status = 'ok'").fetchone()[0]

    def session_problems(self) -> list:
        """[(key, problem)] of sessions that could not be indexed."""
        out = [(k, p) for k, p in self.conn.execute("SELECT key, problem FROM sessions WHERE status = 'error'")]
        out += [(p, why) for p, why in self.conn.execute("SELECT path, problem FROM files WHERE kind = 'bad'")]
        return out

    def search(self, query: str, limit: int = 50, offset: int = 0) -> SearchResult:
        """Ranked hits (bm25) with marked snippets, and per-session counts."""
        t0 = time.perf_counter()
        pq = parse_query(query)
        if not self.fts5:
            res = self._scan_search(pq, limit)
            res.seconds = time.perf_counter() - t0
            return res
        match = pq.fts()
        if match is None:
            raise QueryError("give words to look for (filters alone select nothing)")
        where, args = ["fts MATCH ?"], [match]
        if pq.sessions:
            where.append("(" + " OR ".join("s.id LIKE ? ESCAPE '\\'" for _ in pq.sessions) + ")")
            args += [_like_prefix(x) for x in pq.sessions]
        if pq.projects:
            where.append("(" + " OR ".join("(s.project LIKE ? ESCAPE '\\' OR s.cwd LIKE ? ESCAPE '\\')"
                                           for _ in pq.projects) + ")")
            for x in pq.projects:
                args += [_like_sub(x), _like_sub(x)]
        if pq.after is not None:
            where.append("e.time >= ?")
            args.append(pq.after)
        if pq.before is not None:
            where.append("e.time < ?")
            args.append(pq.before)
        w = " AND ".join(where)
        sql = (f"SELECT s.key, s.id, s.path, s.store, e.seq, e.turn, e.kind, e.tool, e.time, "
               f"snippet(fts, 0, '{MARK_OPEN}', '{MARK_CLOSE}', '…', 24), bm25(fts, 10.0, 0.0, 0.0) AS r "
               f"FROM fts JOIN entries e ON e.rowid = fts.rowid JOIN sessions s ON s.sid = e.sid "
               f"WHERE {w} ORDER BY r LIMIT ? OFFSET ?")
        try:
            rows = self.conn.execute(sql, (*args, int(limit), int(offset))).fetchall()
            groups = self.conn.execute(
                f"SELECT s.key, s.id, s.path, s.title, s.created, s.store, count(*) AS n "
                f"FROM fts JOIN entries e ON e.rowid = fts.rowid JOIN sessions s ON s.sid = e.sid "
                f"WHERE {w} GROUP BY s.sid ORDER BY n DESC, s.key", args).fetchall()
        except sqlite3.OperationalError as e:
            raise QueryError(f"cannot run the query {query!r}: {e}") from None
        hits = []
        for key, sid, path, store, seq, turn, kind, tool, tm, snip, rank in rows:
            text, marks = _marks(snip)
            shown = _with_marks(text, marks)
            hits.append(SearchHit(session=sid, session_key=key, path=path, seq=seq, turn=turn, kind=kind, tool=tool,
                                  time=tm, snippet=shown, marks=marks, text=text, rank=rank, store=store))
        sessions = [SessionGroup(key=k, session=i, path=p, title=t, created=cr, count=n, store=sto)
                    for k, i, p, t, cr, sto, n in groups]
        return SearchResult(hits=hits, sessions=sessions, total=sum(g.count for g in sessions),
                            seconds=time.perf_counter() - t0)

    def _scan_search(self, pq: ParsedQuery, limit: int) -> SearchResult:
        """No FTS5: scan each session with the whole-log search (words ANDed in one field)."""
        from ..log.search import FindOptions, find
        from .discovery import discover
        words = [t for t, _, _ in pq.terms]
        if not words and not pq.kinds:
            raise QueryError("give words to look for")
        pats = [_word_re(t, p) for t, p, _ in pq.terms]
        opts = FindOptions(pats[0] if pats else ".", regex=True, kinds=pq.kinds or None,
                           also=tuple(re.compile(x, re.IGNORECASE) for x in pats[1:]))
        hits, groups = [], []
        listing = discover(self.root)
        from .faces import open_info
        for info in listing.sessions:
            if pq.sessions and not any(info.id.startswith(x) for x in pq.sessions):
                continue
            if pq.projects and not any(x.lower() in f"{info.project or ''} {info.cwd or ''}".lower()
                                       for x in pq.projects):
                continue
            try:
                r = open_info(info)
            except Exception:
                continue
            try:
                if r.fatal:
                    continue
                n = 0
                for h in find(r, opts):
                    if pq.tools and (h.tool or "") not in pq.tools:
                        continue
                    n += 1
                    if len(hits) < limit:
                        hits.append(SearchHit(session=info.id, session_key=info.key, path=info.path, seq=h.seq,
                                              turn=h.turn, kind=h.kind, tool=h.tool, time=None, snippet=h.snippet,
                                              marks=[], text=h.snippet, store=info.store))
                if n:
                    groups.append(SessionGroup(key=info.key, session=info.id, path=info.path, title=None,
                                               created=info.created_at, count=n, store=info.store))
            finally:
                r.close()
        groups.sort(key=lambda g: -g.count)
        return SearchResult(hits=hits, sessions=groups, total=sum(g.count for g in groups), fallback=FTS5_MISSING)


FTS5_MISSING = ("this Python's SQLite has no FTS5: searching by scanning every session "
                "(slower; install a Python whose sqlite3 has FTS5 for the index)")


class _Cancelled(Exception):
    pass


def _cancelled(cancel) -> bool:
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)
    return bool(is_set() if is_set is not None else cancel())


def _safe_listdir(p: str) -> list:
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


def _list_store(p: str) -> list:
    from .sqlite_store import SqliteStore
    store = SqliteStore.open(p)
    try:
        return store.list_sessions()
    finally:
        store.close()


def _upsert_file(c, r) -> None:
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


def _split(seg) -> list:
    """[(pos, raw|None, line, offset)] of a text segment's rows that may hold text; raw None = the
    torn last row.  Rows written the dsh way whose type carries no text are left out here (most
    rows of a long session are streamed chunks)."""
    out = []
    parts = seg.data.split(b"\n")
    last = len(parts) - 1
    at = 0
    line = seg.line0
    t0 = seg.text_offset
    row_pos = seg.row_pos
    text_types, error_only = _TEXT_TYPES_B, _ERROR_ONLY_B
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


def _row_type(raw: bytes) -> Optional[bytes]:
    """The ``type`` of a row written the dsh way (``{"type":"…"`` first), else None (decode it)."""
    if raw.startswith(b'{"type":"'):
        e = raw.find(b'"', 9)
        if e > 9:
            return raw[9:e]
    return None


def _flush(c, ent: list, fts: list) -> None:
    if ent:
        c.executemany("INSERT INTO entries(rowid, sid, seq, turn, time, kind, tool) VALUES (?,?,?,?,?,?,?)", ent)
        ent.clear()
    if fts:
        c.executemany("INSERT INTO fts(rowid, body, kind, tool) VALUES (?,?,?,?)", fts)
        fts.clear()


def _marks(snip: str) -> tuple:
    """Strip the sentinels: (plain text, [(start, end)])."""
    out, marks = [], []
    pos = 0
    start = None
    for ch in snip:
        if ch == MARK_OPEN:
            start = pos
        elif ch == MARK_CLOSE:
            if start is not None:
                marks.append((start, pos))
            start = None
        else:
            out.append(ch)
            pos += 1
    return "".join(out), marks


def _with_marks(text: str, marks: list) -> str:
    out, at = [], 0
    for a, b in marks:
        out += [text[at:a], HIT_OPEN, text[a:b], HIT_CLOSE]
        at = b
    out.append(text[at:])
    return "".join(out)


def _like_prefix(s: str) -> str:
    return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _like_sub(s: str) -> str:
    return "%" + s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _word_re(t: str, prefix: bool) -> str:
    body = r"\W+".join(re.escape(x) for x in t.split())
    return r"(?<!\w)" + body + ("" if prefix else r"(?!\w)")
