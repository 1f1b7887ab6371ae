"""dsh SQLite session store, schema ``user_version`` 17 (spec §1.6, §1.8, §2.1, §5).

One SQLite file holds many sessions.  This module has

* the ``source_event_seqs`` varint codec (:func:`encode_seqs`, :func:`decode_seqs`);
* the canonical DDL (:data:`SCHEMA_SQL`) and the identity check against it;
* a **read-only** reader: :class:`SqliteStore` (open, identity check, session list) and
  :class:`SqliteSource` (one session's rows as :class:`~app.log.source.sources.Segment` batches whose
  ``rows`` are the JSON rows exactly as the dsh JSONL writer would store them, so
  :class:`~app.log.format.codec.RowCodec` decodes SQLite and JSONL logs alike);
* a writer used by tests and by fork: :func:`create_store`, :func:`append_batch`,
  :func:`jsonl_to_sqlite`.

Read-only guarantees
--------------------
The reader opens ``file:<path>?mode=ro`` (URI-quoted), sets ``PRAGMA trusted_schema=OFF`` and
``PRAGMA query_only=ON``, checks the identity (application_id, user_version, schema text,
persistence_state) before anything else, and reads only inside ``BEGIN … COMMIT``.  The main
database file is never written.

Side files (``-wal``/``-shm``): SQLite's WAL reader needs the ``-shm`` index and opens the
``-wal`` file; on a writable directory a plain ``mode=ro`` connection *creates* both (an empty
``-wal`` and a 32 KiB ``-shm``) when they are missing, and leaves them behind.  To avoid that,
a store whose header says WAL but which has **no** ``-wal`` file (so every committed page is in
the main file, e.g. a cleanly closed store) is opened with ``immutable=1``, which reads without
locks or side files.  Because such a read has no locking, every read transaction is guarded by
a stamp of the main file (inode, size, mtime, ctime) and of ``-wal``/``-shm`` presence, taken before and
after (and compared with the previous transaction's, since an immutable connection caches
pages); if it changed, the transaction is discarded and redone on a fresh connection: immutable
again when the writer has gone (``-wal`` removed), else a normal ``mode=ro`` connection, to which
the store then switches for good.  Residual race: a writer that opens, commits, checkpoints and
closes entirely between two stamps without changing the file's size, mtime or ctime (one
timestamp tick) would go unnoticed until the next change.  Once a writer is
present the side files exist already, so nothing is created by us; only a live WAL store whose
``-shm`` was deleted would get a new ``-shm``.  Rollback-journal stores (``journal_mode=DELETE``)
never get side files from a reader.  A read-only directory works the same way (immutable when
no ``-wal`` exists; SQLite would otherwise refuse to open).
"""
from __future__ import annotations

import ctypes
import os
import re
import sqlite3
import sys
import threading
import urllib.parse
import uuid
from typing import Any, Optional, TypedDict, TypeVar, Union
from collections.abc import Callable, Iterator

import msgspec
from ..log.source.zstdlib import zstd

from ..log.format.limits import MAX_ROW_BYTES
from ..log.format.model import MAX_SAFE_INT, PACKED_TAGS, Problem
from ..log.source.sources import Segment, Source, SourceChanged

APPLICATION_ID = 1146308688          # 0x44534850, "DSHP"
USER_VERSION = 17
BATCH_ROWS = 2000                    # rows per Segment
BUSY_TIMEOUT_S = 2.0                 # how long a reader waits for a lock before StoreError
ZSTD_LEVEL = 3
COMPRESS_MIN = 4096                  # JSON of at least this many bytes may be stored as a zstd BLOB
MAX_DATA_BYTES = MAX_ROW_BYTES       # decompression cap per row (zstd bomb guard): the row limit, checked while
                                     # decompressing (a BLOB expanding past it stops there: never decoded whole)
_MAX_STORED = MAX_ROW_BYTES + (64 << 10)   # a data cell stored bigger than this is over the row limit: not fetched
PACKED_MIN, PACKED_MAX = 3, 1024
PACKED_MAX_DATA = 1 << 20
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode
_decode_raw = msgspec.json.Decoder(msgspec.Raw).decode
_decode_raw_fields = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode


_T = TypeVar("_T")
StrPath = Union[str, "os.PathLike[str]"]
# a sqlite_master row as compared: (type, name, tbl_name, normalized sql)
SchemaRow = tuple[Any, Any, Any, Optional[str]]
# a fetched row: sqlite3 rows are tuples of column values (bytes for TEXT: ``text_factory = bytes``)
DbRow = tuple[Any, ...]


class StoreError(Exception):
    """A SQLite store cannot be read (one line naming the file)."""


# =========================================================================== varints

def _put_uvarint(out: bytearray, v: int) -> None:
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def encode_seqs(seqs: list[int]) -> bytes:
    """``source_event_seqs`` BLOB: first value unsigned LEB128, then ZigZag deltas (spec §1.8).

    ``[]`` encodes as the empty BLOB.  Values must be ints in ``0 .. 2^53-1``.
    """
    out = bytearray()
    prev = None
    for v in seqs:
        if type(v) is not int or v < 0 or v > MAX_SAFE_INT:
            raise ValueError(f"source event seq {v!r} is not an integer in 0..2^53-1")
        if prev is None:
            _put_uvarint(out, v)
        else:
            d = v - prev
            _put_uvarint(out, 2 * d if d >= 0 else -2 * d - 1)
        prev = v
    return bytes(out)


def decode_seqs(blob: bytes) -> list[int]:
    """Inverse of :func:`encode_seqs`; ValueError on truncated, non-canonical or out-of-range input.

    Canonical means the shortest LEB128 form: a multi-byte varint may not end in a ``0x00``
    byte.  Every decoded value must be a seq (``0 .. 2^53-1``); uniqueness and ``< seq`` are
    envelope rules (spec §2.1) left to the event validator.
    """
    b = bytes(blob)
    out: list[int] = []
    i, n = 0, len(b)
    prev = None
    while i < n:
        start = i
        v = shift = 0
        while True:
            if i >= n:
                raise ValueError(f"truncated varint at byte {start}")
            byte = b[i]
            i += 1
            v |= (byte & 0x7F) << shift
            if not byte & 0x80:
                if byte == 0 and i - start > 1:
                    raise ValueError(f"non-canonical varint at byte {start} (redundant trailing zero byte)")
                break
            shift += 7
            if shift >= 56:          # 8 bytes carry 56 bits: more than any seq or ZigZag delta needs
                raise ValueError(f"varint at byte {start} is longer than 8 bytes")
        if prev is None:
            value = v
        else:
            value = prev + ((v >> 1) if not v & 1 else -(v >> 1) - 1)
        if value < 0 or value > MAX_SAFE_INT:
            raise ValueError(f"varint {len(out)} decodes to {value}, not a seq in 0..2^53-1")
        out.append(value)
        prev = value
    return out


# =========================================================================== schema

SCHEMA_SQL = """\
CREATE TABLE persistence_state (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  store_id TEXT NOT NULL
) STRICT;
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  version INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  cwd TEXT,
  parent_session TEXT,
  seed_length INTEGER,
  origin TEXT,
  delegation_depth INTEGER,
  agent_preset TEXT,
  incarnation TEXT NOT NULL,
  revision INTEGER NOT NULL
) STRICT;
CREATE TABLE events (
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  time INTEGER NOT NULL,
  data ANY NOT NULL,
  source_event_seqs ANY,
  surface_op TEXT,
  ignorable INTEGER CHECK (ignorable IS NULL OR ignorable IN (0, 1)),
  PRIMARY KEY (session_id, seq)
) STRICT;
"""

_TOKEN = re.compile(r"""
    (?P<str>'(?:[^']|'')*')
  | (?P<qid>"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\])
  | (?P<comment>--[^\n]*|/\*.*?\*/)
  | (?P<ws>\s+)
  | (?P<word>[A-Za-z0-9_$]+)
  | (?P<punct>.)
""", re.X | re.S)


def normalize_sql(sql: str) -> str:
    """Whitespace-normalized DDL: comments dropped, whitespace collapsed (and removed around
    punctuation), words upper-cased (SQL keywords and identifiers are case-insensitive),
    plainly quoted identifiers unquoted; string literals are kept verbatim."""
    out: list[str] = []
    prev_wordish = False
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup
        tok = m.group()
        if kind in ("comment", "ws"):
            continue
        if kind == "qid":
            inner = tok[1:-1]
            if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_$]*", inner):
                tok, kind = inner.upper(), "word"
        elif kind == "word":
            tok = tok.upper()
        wordish = kind != "punct"
        if wordish and prev_wordish:
            out.append(" ")
        out.append(tok)
        prev_wordish = wordish
    s = "".join(out)
    return s[:-1] if s.endswith(";") else s


_CANONICAL: Optional[frozenset[SchemaRow]] = None


def _schema_rows(conn: sqlite3.Connection) -> frozenset[SchemaRow]:
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    out: set[SchemaRow] = set()
    for typ, name, tbl, sql in rows:
        dec = [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in (typ, name, tbl, sql)]
        out.add((dec[0], dec[1].lower() if dec[1] else dec[1], dec[2].lower() if dec[2] else dec[2],
                 normalize_sql(dec[3]) if dec[3] is not None else None))
    return frozenset(out)


def canonical_schema() -> frozenset[SchemaRow]:
    """(type, name, tbl_name, normalized sql) of every sqlite_master row of a canonical store."""
    global _CANONICAL
    if _CANONICAL is None:
        c = sqlite3.connect(":memory:")
        try:
            c.executescript(SCHEMA_SQL)
            _CANONICAL = _schema_rows(c)
        finally:
            c.close()
    return _CANONICAL


# =========================================================================== file identity

class _StatxTimestamp(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_int64), ("tv_nsec", ctypes.c_uint32), ("_reserved", ctypes.c_int32)]


class _Statx(ctypes.Structure):
    _fields_ = [("stx_mask", ctypes.c_uint32), ("stx_blksize", ctypes.c_uint32),
                ("stx_attributes", ctypes.c_uint64), ("stx_nlink", ctypes.c_uint32),
                ("stx_uid", ctypes.c_uint32), ("stx_gid", ctypes.c_uint32), ("stx_mode", ctypes.c_uint16),
                ("_spare0", ctypes.c_uint16), ("stx_ino", ctypes.c_uint64), ("stx_size", ctypes.c_uint64),
                ("stx_blocks", ctypes.c_uint64), ("stx_attributes_mask", ctypes.c_uint64),
                ("stx_atime", _StatxTimestamp), ("stx_btime", _StatxTimestamp),
                ("stx_ctime", _StatxTimestamp), ("stx_mtime", _StatxTimestamp),
                ("_spare", ctypes.c_uint64 * 18)]


_statx_fn: Any = None


def birthtime_ns(path: str) -> int:
    """The file's creation time in ns (``st_birthtime`` or Linux ``statx``); 0 if unknown."""
    global _statx_fn
    st = os.stat(path)
    bt = getattr(st, "st_birthtime_ns", None)
    if bt is not None:
        return int(bt)
    bt = getattr(st, "st_birthtime", None)
    if bt is not None:
        return int(bt * 1_000_000_000)
    if not sys.platform.startswith("linux"):
        return 0
    try:
        if _statx_fn is None:
            fn = ctypes.CDLL(None, use_errno=True).statx
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_Statx)]
            fn.restype = ctypes.c_int
            _statx_fn = fn
        buf = _Statx()
        if _statx_fn(-100, os.fsencode(path), 0, 0x800, ctypes.byref(buf)) != 0:   # AT_FDCWD, STATX_BTIME
            return 0
        if not buf.stx_mask & 0x800:
            return 0
        return int(buf.stx_btime.tv_sec * 1_000_000_000 + buf.stx_btime.tv_nsec)
    except (AttributeError, OSError, TypeError):
        _statx_fn = False if _statx_fn is None else _statx_fn
        return 0


def _read_db_header(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(100)


def _header_pages(hdr: bytes) -> Optional[tuple[int, int]]:
    """(page_size, in-header page count) when the count is valid, else None."""
    if len(hdr) < 100:
        return None
    ps = int.from_bytes(hdr[16:18], "big")
    ps = 65536 if ps == 1 else ps
    if hdr[92:96] != hdr[24:28]:
        return None
    return ps, int.from_bytes(hdr[28:32], "big")


# =========================================================================== reader

_SESSION_COLS = ("id", "version", "created_at", "cwd", "parent_session", "seed_length", "origin",
                 "delegation_depth", "agent_preset", "incarnation", "revision")
_HEADER_KEYS = (("version", "version"), ("id", "id"), ("createdAt", "created_at"), ("cwd", "cwd"),
                ("parentSession", "parent_session"), ("seedLength", "seed_length"), ("origin", "origin"),
                ("delegationDepth", "delegation_depth"), ("agentPreset", "agent_preset"))
# a data cell over the row limit is not fetched: it comes as NULL (data is NOT NULL in the schema) beside
# its type (length() of a BLOB reads no content; of a TEXT, SQLite's own copy, once, never handed to Python)
_ROW_COLS = (f"seq, type, time, typeof(data), CASE WHEN length(data) > {_MAX_STORED} THEN NULL ELSE data END, "
             "typeof(source_event_seqs), source_event_seqs, "
             "surface_op, ignorable")
_FP_COLS = "seq, type, time, typeof(data), length(data), source_event_seqs, surface_op, ignorable"


def _text(v: Any, problems: Optional[list[Problem]] = None, what: str = "") -> Any:
    """A cell as text (bytes decoded as UTF-8, a bad one replaced and reported); other values as they are."""
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            if problems is not None:
                problems.append(Problem(code="bad-utf8", message=f"{what} is not valid UTF-8 (replaced)"))
            return v.decode("utf-8", "replace")
    return v


# (-wal exists, inode, size, mtime ns, ctime ns, -shm exists) of the main file: see the module doc
_Stamp = tuple[bool, int, int, int, int, bool]


class _Snapshot(TypedDict):
    """What a :class:`SqliteSource` reads once per snapshot (the ``sessions`` row and the last event)."""
    header: dict[str, Any]
    inc: str                         # incarnation
    rev: int                         # revision
    last: Optional[DbRow]            # the last event row's fingerprint columns (None: no events)
    size: int                        # last seq + its members (0: no events)
    problems: list[Problem]


class SqliteStore:
    """A read-only view of one dsh SQLite store file.  Use :meth:`open`."""

    def __init__(self, path: str, conn: sqlite3.Connection, immutable: bool, busy_timeout: float):
        self.path = path
        self._conn = conn
        self._immutable = immutable
        self._busy_timeout = busy_timeout
        self._lock = threading.RLock()
        self.store_id = ""
        self._file_id = ""
        self._last_stamp: Optional[_Stamp] = None
        self.problems: list[Problem] = []

    # ---------------------------------------------------------------- opening
    @classmethod
    def open(cls, path: StrPath, *, busy_timeout: float = BUSY_TIMEOUT_S) -> SqliteStore:
        """Open read-only and check the identity; StoreError (naming the file) when unusable."""
        p = os.path.abspath(os.fspath(path))
        if not os.path.exists(p):
            raise StoreError(f"{p}: no such file")
        if not os.path.isfile(p):
            raise StoreError(f"{p}: not a file")
        try:
            hdr = _read_db_header(p)
        except OSError as e:
            raise StoreError(f"{p}: cannot read: {e.strerror or e}") from None
        if not hdr:
            raise StoreError(f"{p}: empty file, not a dsh SQLite store")
        if not hdr.startswith(b"SQLite format 3\x00"):
            raise StoreError(f"{p}: file is not a database (no SQLite header)")
        immutable = len(hdr) >= 20 and hdr[18] == 2 and hdr[19] == 2 and not os.path.exists(p + "-wal")
        store = cls(p, cls._connect(p, immutable, busy_timeout), immutable, busy_timeout)
        try:
            store._check_identity()
        except BaseException:
            store.close()
            raise
        return store

    @staticmethod
    def _connect(p: str, immutable: bool, busy_timeout: float) -> sqlite3.Connection:
        uri = f"file:{urllib.parse.quote(p)}?mode=ro" + ("&immutable=1" if immutable else "")
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout, isolation_level=None,
                                   check_same_thread=False)
            conn.text_factory = bytes
            conn.execute("PRAGMA trusted_schema=OFF")
            conn.execute("PRAGMA query_only=ON")
        except sqlite3.Error as e:
            raise StoreError(_describe(p, e, busy_timeout)) from None
        return conn

    def _check_identity(self) -> None:
        p = self.path

        def check(c: sqlite3.Connection) -> None:
            app_id = c.execute("PRAGMA application_id").fetchone()[0]
            ver = c.execute("PRAGMA user_version").fetchone()[0]
            if app_id != APPLICATION_ID:
                if app_id == 0 and ver == 0 and not c.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
                    raise StoreError(f"{p}: empty SQLite database, not a dsh session store")
                raise StoreError(f"{p}: not a dsh session store (application_id {app_id}, "
                                 f"expected {APPLICATION_ID} 'DSHP')")
            if ver != USER_VERSION:
                hint = ("newer than this reader: upgrade Session Lens" if ver > USER_VERSION
                        else "older than this reader supports")
                raise StoreError(f"{p}: dsh store schema user_version {ver} is {hint} "
                                 f"(only user_version {USER_VERSION} is read)")
            got = _schema_rows(c)
            want = canonical_schema()
            if got != want:
                extra = sorted(r[1] for r in got - want)
                missing = sorted(r[1] for r in want - got)
                detail = "; ".join(x for x in (f"differs/unexpected: {', '.join(extra)}" if extra else "",
                                               f"missing/different: {', '.join(missing)}" if missing else "") if x)
                raise StoreError(f"{p}: schema text differs from the canonical dsh user_version 17 DDL ({detail})")
            rows = c.execute("SELECT singleton, store_id FROM persistence_state").fetchall()
            if len(rows) != 1 or rows[0][0] != 1 or not isinstance(rows[0][1], bytes):
                raise StoreError(f"{p}: persistence_state does not hold exactly one store_id row")
            self.store_id = _text(rows[0][1])
            # a truncated file: in-header page count beyond the file (checked under the read lock;
            # skipped for a live WAL store, whose main file may legitimately lag during a checkpoint)
            if self._immutable or not os.path.exists(p + "-wal"):
                hdr = _read_db_header(p)
                hp = _header_pages(hdr)
                size = os.path.getsize(p)
                if hp is not None and hp[0] * hp[1] > size:
                    raise StoreError(f"{p}: database file is truncated (header: {hp[1]} pages of {hp[0]} "
                                     f"bytes, file: {size} bytes)")

        self._read(check)
        st = os.stat(p)
        self._file_id = f"file:{st.st_dev}:{st.st_ino}:{birthtime_ns(p)}:store:{self.store_id}"

    # ---------------------------------------------------------------- transactions
    def _stamp(self) -> Optional[_Stamp]:
        try:
            st = os.stat(self.path)
            return (os.path.exists(self.path + "-wal"), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                    os.path.exists(self.path + "-shm"))
        except OSError:
            return None

    def _reconnect_immutable(self) -> None:
        try:
            self._conn.close()
        except sqlite3.Error:
            pass
        self._conn = self._connect(self.path, True, self._busy_timeout)

    def _switch_to_normal(self) -> None:
        try:
            self._conn.close()
        except sqlite3.Error:
            pass
        self._immutable = False
        self._conn = self._connect(self.path, False, self._busy_timeout)

    def read(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``fn(conn)`` in one read transaction of the store (for a caller's own query, as the
        session list's title pass does); sqlite errors become StoreError."""
        return self._read(fn)

    def _read(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run ``fn(conn)`` inside BEGIN…COMMIT; sqlite errors become StoreError."""
        with self._lock:
            while True:
                before: Optional[_Stamp] = None
                if self._immutable:
                    before = self._stamp()
                    if before is None or before[0]:
                        self._switch_to_normal()
                        continue
                    if before != self._last_stamp:
                        # an immutable connection caches pages forever: the file changed since the
                        # last read, so read through a fresh connection
                        if self._last_stamp is not None:
                            self._reconnect_immutable()
                        self._last_stamp = before
                conn = self._conn
                try:
                    conn.execute("BEGIN")
                    try:
                        result = fn(conn)
                    finally:
                        if conn.in_transaction:
                            conn.execute("COMMIT")
                except sqlite3.Error as e:
                    if self._immutable and self._stamp() != before:
                        continue                       # read torn by a concurrent checkpoint: redo
                    raise StoreError(_describe(self.path, e, self._busy_timeout)) from None
                if self._immutable and self._stamp() != before:
                    continue                           # a writer changed the file meanwhile: redo
                                                       # (fresh immutable connection, or locking if -wal)
                return result

    def close(self) -> None:
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- sessions
    def revision_of(self, incarnation: str, revision: int) -> str:
        """Spec §1.6: ``file:<dev>:<ino>:<birthtimeNs>:store:<store_id>:incarnation:<uuid>:revision:<n>``."""
        return f"{self._file_id}:incarnation:{incarnation}:revision:{revision}"

    def list_sessions(self) -> list[dict[str, Any]]:
        """Header dicts (NULL = absent) newest first, plus ``revision`` (spec §1.6), ``lastSeq``
        (-1 when empty) and ``events`` (= lastSeq + 1: dsh logs satisfy ``events[i].seq == i``;
        a gap shows when the log is read).  Uses the primary-key index only; the data of the
        last row is read only when it is a packed row, to count its members."""
        def q(c: sqlite3.Connection) -> list[dict[str, Any]]:
            out = []
            rows = c.execute(f"SELECT {', '.join(_SESSION_COLS)} FROM sessions "
                             "ORDER BY created_at DESC, id").fetchall()
            for r in rows:
                h, inc, rev = self._header_of(r)
                last = c.execute("SELECT seq, ignorable FROM events WHERE session_id = CAST(? AS TEXT) "
                                 "ORDER BY seq DESC LIMIT 1", (r[0],)).fetchone()
                last_seq = -1
                if last is not None:
                    last_seq = last[0]
                    if last[1] == 0:
                        d = c.execute("SELECT typeof(data), data FROM events "
                                      "WHERE session_id = CAST(? AS TEXT) AND seq = ?", (r[0], last[0])).fetchone()
                        last_seq += _packed_members(d[0], d[1]) - 1
                h["revision"] = self.revision_of(inc, rev)
                h["events"] = last_seq + 1
                h["lastSeq"] = last_seq
                out.append(h)
            return out
        return self._read(q)

    def _header_of(self, r: DbRow, problems: Optional[list[Problem]] = None) -> tuple[dict[str, Any], str, int]:
        vals = dict(zip(_SESSION_COLS, r))
        h: dict[str, Any] = {"type": "session"}
        for key, col in _HEADER_KEYS:
            v = vals[col]
            if v is not None:
                h[key] = _text(v, problems, f"sessions.{col}")
        return h, _text(vals["incarnation"]), vals["revision"]

    def session_ids(self) -> list[str]:
        return self._read(lambda c: [_text(r[0]) for r in c.execute("SELECT id FROM sessions ORDER BY id")])

    def source(self, session_id: str, *, batch_rows: int = BATCH_ROWS) -> SqliteSource:
        return SqliteSource(self, session_id, batch_rows=batch_rows)


def _describe(path: str, e: sqlite3.Error, busy_timeout: float) -> str:
    name = getattr(e, "sqlite_errorname", "") or ""
    msg = str(e)
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in msg or "busy" in msg:
        return f"{path}: database is locked by another process (waited {busy_timeout:g} s); try again later"
    if name.startswith("SQLITE_NOTADB") or "not a database" in msg:
        return f"{path}: file is not a database"
    if name.startswith("SQLITE_CORRUPT") or "malformed" in msg:
        return f"{path}: database disk image is malformed (corrupt or truncated file)"
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in msg:
        return f"{path}: cannot open the database read-only ({msg})"
    return f"{path}: SQLite error: {msg}"


class _Members(msgspec.Struct):
    texts: Optional[list[msgspec.Raw]] = None
    args: Optional[list[msgspec.Raw]] = None


_decode_members = msgspec.json.Decoder(_Members).decode


def _packed_members(dtype: bytes, data: bytes) -> int:
    """Members of a packed row (1 when its data cannot be read)."""
    try:
        jb = _row_json(dtype, data)
        m = _decode_members(jb)
        payload = m.texts if m.texts is not None else m.args
        return max(1, len(payload)) if payload is not None else 1
    except (_Undecodable, msgspec.DecodeError, msgspec.ValidationError):
        return 1


class _Undecodable(Exception):
    pass


def _row_json(dtype: bytes, data: Optional[bytes]) -> bytes:
    """The JSON bytes of a ``data`` cell (TEXT, or a zstd BLOB), validated: strict UTF-8, one value."""
    jb: bytes
    if data is None:
        raise _Undecodable(f"data {dtype.decode().upper()} is over the {MAX_ROW_BYTES >> 20} MiB row limit "
                           "(stored bigger: not read)" if dtype in (b"text", b"blob") else "data is NULL")
    if dtype == b"text":
        jb = data
    elif dtype == b"blob":
        jb = _unzstd(data)
    else:
        raise _Undecodable(f"data has SQLite type {dtype.decode()}, expected TEXT JSON or a zstd BLOB")
    _valid_json(jb, "data")
    return jb


def _valid_json(jb: bytes, what: str) -> None:
    try:
        jb.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _Undecodable(f"{what} is not valid UTF-8 (byte {e.start})") from None
    try:
        _decode_raw(jb)
    except msgspec.DecodeError as e:
        raise _Undecodable(f"{what} is not one JSON value: {e}") from None


def _unzstd(blob: bytes) -> bytes:
    if not blob.startswith(_ZSTD_MAGIC):
        raise _Undecodable("data BLOB is not a Zstandard frame (bad magic)")
    d = zstd.ZstdDecompressor()
    try:
        out = d.decompress(blob, max_length=MAX_DATA_BYTES + 1)
    except zstd.ZstdError as e:
        raise _Undecodable(f"data BLOB does not decompress: {e}") from None
    if len(out) > MAX_DATA_BYTES:
        raise _Undecodable(f"data BLOB decompresses to more than the {MAX_DATA_BYTES >> 20} MiB row limit "
                           "(decompression stopped there)")
    if not d.eof:
        raise _Undecodable("data BLOB holds an incomplete Zstandard frame")
    if d.unused_data:
        raise _Undecodable("data BLOB holds bytes after its Zstandard frame")
    return out


def reconstruct_row(seq: int, typ: bytes, time: int, dtype: bytes, data: bytes, stype: bytes, seqs: Optional[bytes],
                    surface_op: Optional[bytes], ignorable: Optional[int]) -> tuple[bytes, int]:
    """(JSON row bytes as the JSONL writer stores them, members); raises _Undecodable."""
    try:
        t = typ.decode("utf-8") if isinstance(typ, bytes) else str(typ)
    except UnicodeDecodeError:
        raise _Undecodable("type is not valid UTF-8") from None
    jb = _row_json(dtype, data)
    if ignorable == 0:
        if t not in PACKED_TAGS:
            raise _Undecodable(f"ignorable=0 marks a packed row but type {t!r} is not a chunk tag")
        if seqs is not None or surface_op is not None:
            raise _Undecodable("packed row (ignorable=0) has surface columns")
        obj: dict[str, Any] = {"type": t, "seq0": seq, "time0": time, "data": msgspec.Raw(jb)}
        members = 1
        try:
            m = _decode_members(jb)
            payload = m.texts if m.texts is not None else m.args
            if payload:
                members = len(payload)
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass
        return _encode(obj), members
    obj = {"type": t, "seq": seq, "time": time, "data": msgspec.Raw(jb)}
    if seqs is not None:
        if stype != b"blob":
            raise _Undecodable(f"source_event_seqs has SQLite type {stype.decode()}, expected a varint BLOB")
        try:
            obj["sourceEventSeqs"] = decode_seqs(seqs)
        except ValueError as e:
            raise _Undecodable(f"source_event_seqs: {e}") from None
    if surface_op is not None:
        _valid_json(surface_op, "surface_op")
        obj["surfaceOp"] = msgspec.Raw(surface_op)
    if ignorable == 1:
        obj["ignorable"] = True
    elif ignorable is not None:
        raise _Undecodable(f"ignorable is {ignorable!r}, expected NULL, 0 or 1")
    return _encode(obj), 1


def undecodable_marker(seq: object, reason: str) -> bytes:
    """Stand-in bytes of a row that cannot be reconstructed: deliberately not JSON."""
    return f"<undecodable sqlite row seq={seq}: {reason}>".encode("utf-8", "replace")


class SqliteSource(Source):
    """One session of a SQLite store as a :class:`Source`.  Positions are seqs.

    * ``header_raw``: the header line rebuilt from the ``sessions`` row (dsh key order);
      ``header_end`` = 0; ``size`` = end of the snapshot (last row's seq + its members, 0 if empty).
    * :meth:`forward` / :meth:`backward` yield :class:`Segment`\\ s of up to ``batch_rows`` rows,
      ``rows=[(seq, raw)]`` in ascending seq, ``pos`` = first row's seq, ``end`` = last covered
      seq + 1.  ``backward(end)`` reads rows with ``seq < end``; ``forward(start)`` rows with
      ``seq >= start``.  Both stop at the snapshot (rows appended later need :meth:`refresh`).
    * A row that cannot be rebuilt (bad zstd, bad UTF-8, bad varint, wrong cell types) is
      yielded as non-JSON marker bytes (RowCodec reports it malformed) and a Problem with its
      seq and reason is added to ``problems`` (once per seq).
    * Each batch is its own read transaction; if the session was replaced (incarnation) or its
      snapshot rows were rewritten (repair), :class:`SourceChanged` is raised.
    """
    kind = "sqlite"

    def __init__(self, store: SqliteStore, session_id: str, *, batch_rows: int = BATCH_ROWS,
                 owns_store: bool = False):
        self.store = store
        self.path = store.path
        self.session_id = session_id
        self.batch_rows = max(1, int(batch_rows))
        self.owns_store = owns_store
        self.problems: list[Problem] = []
        self.header_end = 0
        self.generation = 0
        self._reported: set[int] = set()
        self._snap: _Snapshot            # set by _install below (the constructor fails without one)
        snap = store._read(self._read_snapshot)
        if snap is None:
            raise StoreError(f"{self.path}: no session {session_id!r} in this store")
        self._install(snap)

    @classmethod
    def open(cls, path: StrPath, session_id: str, **kw: Any) -> SqliteSource:
        """A source that owns its own store connection (closed by :meth:`close`)."""
        store = SqliteStore.open(path)
        try:
            return cls(store, session_id, owns_store=True, **kw)
        except BaseException:
            store.close()
            raise

    # ---------------------------------------------------------------- snapshot
    def _read_snapshot(self, c: sqlite3.Connection) -> Optional[_Snapshot]:
        r = c.execute(f"SELECT {', '.join(_SESSION_COLS)} FROM sessions WHERE id = ?",
                      (self.session_id,)).fetchone()
        if r is None:
            return None
        probs: list[Problem] = []
        header, inc, rev = self.store._header_of(r, probs)
        last = c.execute(f"SELECT {_FP_COLS} FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
                         (self.session_id,)).fetchone()
        size = 0
        if last is not None:
            members = 1
            if last[-1] == 0:
                d = c.execute("SELECT typeof(data), data FROM events WHERE session_id = ? AND seq = ?",
                              (self.session_id, last[0])).fetchone()
                members = _packed_members(d[0], d[1])
            size = last[0] + members
        return {"header": header, "inc": inc, "rev": rev, "last": last, "size": size, "problems": probs}

    def _install(self, snap: _Snapshot) -> None:
        self._snap = snap
        self.header_raw = _encode(snap["header"])
        self.header = snap["header"]
        self.size = snap["size"]
        for p in snap["problems"]:
            if p.message not in {q.message for q in self.problems}:
                self.problems.append(p)

    def _check_snapshot(self, c: sqlite3.Connection) -> tuple[str, int]:
        """Raise SourceChanged when the snapshot no longer holds; return the current (inc, rev)."""
        r = c.execute("SELECT incarnation, revision FROM sessions WHERE id = ?", (self.session_id,)).fetchone()
        snap = self._snap
        if r is None:
            raise SourceChanged(f"{self.path}: session {self.session_id} was deleted")
        inc, rev = _text(r[0]), r[1]
        if inc != snap["inc"]:
            raise SourceChanged(f"{self.path}: session {self.session_id} was replaced (new incarnation)")
        if rev != snap["rev"] and snap["last"] is not None:
            now = c.execute(f"SELECT {_FP_COLS} FROM events WHERE session_id = ? AND seq = ?",
                            (self.session_id, snap["last"][0])).fetchone()
            if now != snap["last"]:
                raise SourceChanged(f"{self.path}: session {self.session_id} was rewritten (repaired) "
                                    f"under the reader (revision {snap['rev']} -> {rev})")
        return inc, rev

    # ---------------------------------------------------------------- reading
    def _fetch(self, lo: Optional[int], hi: int, descending: bool) -> list[DbRow]:
        def q(c: sqlite3.Connection) -> list[DbRow]:
            self._check_snapshot(c)
            where = "session_id = ? AND seq <= ?"
            args: list[object] = [self.session_id, hi]
            if lo is not None:
                where += " AND seq >= ?"
                args.append(lo)
            args.append(self.batch_rows)
            return c.execute(f"SELECT {_ROW_COLS} FROM events WHERE {where} "
                             f"ORDER BY seq {'DESC' if descending else 'ASC'} LIMIT ?", args).fetchall()
        rows = self.store._read(q)
        if descending:
            rows.reverse()
        return rows

    def _segment(self, rows: list[DbRow]) -> Segment:
        out: list[tuple[int, bytes]] = []
        end: Optional[int] = None
        for r in rows:
            seq = r[0]
            try:
                raw, members = reconstruct_row(*r)
            except _Undecodable as e:
                reason = str(e)
                raw, members = undecodable_marker(seq, reason), 1
                if seq not in self._reported:
                    self._reported.add(seq)
                    self.problems.append(Problem(code="undecodable-row", seq=seq,
                                                 message=f"{self.path}: session {self.session_id} row seq {seq}: "
                                                         f"{reason}"))
            out.append((seq, raw))
            stop = seq + members
            end = stop if end is None else max(end, stop)
        assert end is not None                # callers never pass an empty batch
        return Segment(pos=rows[0][0], end=end, data=b"", rows=out)

    def forward(self, start: Optional[int] = None) -> Iterator[Segment]:
        last = self._snap["last"]
        if last is None:
            return
        hi = last[0]
        lo = start
        while lo is None or lo <= hi:
            rows = self._fetch(lo, hi, descending=False)
            if not rows:
                return
            yield self._segment(rows)
            if len(rows) < self.batch_rows:
                return
            lo = rows[-1][0] + 1

    def backward(self, end: Optional[int] = None) -> Iterator[Segment]:
        last = self._snap["last"]
        if last is None:
            return
        hi = last[0] if end is None else min(last[0], end - 1)
        while True:
            rows = self._fetch(None, hi, descending=True)
            if not rows:
                return
            yield self._segment(rows)
            if len(rows) < self.batch_rows:
                return
            hi = rows[0][0] - 1

    def rows(self, start: Optional[int] = None) -> Iterator[tuple[int, bytes]]:
        """All (seq, raw) rows of the snapshot from ``start`` on."""
        for seg in self.forward(start):
            yield from seg.rows or ()

    # ---------------------------------------------------------------- live / identity
    def refresh(self) -> bool:
        """Re-read the revision; extend the snapshot when rows were appended.  True if it grew."""
        def q(c: sqlite3.Connection) -> Optional[_Snapshot]:
            inc, rev = self._check_snapshot(c)
            if rev == self._snap["rev"]:
                return None
            return self._read_snapshot(c)
        snap = self.store._read(q)
        if snap is None:
            return False
        old = self.size
        self._install(snap)
        self.generation += 1
        return self.size > old

    @property
    def snapshot_revision(self) -> str:
        return self.store.revision_of(self._snap["inc"], self._snap["rev"])

    def revision(self) -> str:
        """The stored revision now (spec §1.6 format)."""
        def q(c: sqlite3.Connection) -> tuple[str, int]:
            r = c.execute("SELECT incarnation, revision FROM sessions WHERE id = ?", (self.session_id,)).fetchone()
            if r is None:
                raise SourceChanged(f"{self.path}: session {self.session_id} was deleted")
            return _text(r[0]), r[1]
        return self.store.revision_of(*self.store._read(q))

    def stored_bytes(self) -> Iterator[bytes]:
        """A *reconstruction* of the session as JSONL text (header line + rows, each + ``\\n``).

        SQLite stores have no raw export in dsh (spec §1.8); this is what the JSONL writer would
        have stored for the same rows (dsh key order; ``data`` bytes verbatim).  Undecodable rows
        appear as their non-JSON marker lines."""
        yield self.header_raw + b"\n"
        for seg in self.forward():
            yield b"".join(raw + b"\n" for _, raw in seg.rows or ())

    def close(self) -> None:
        if self.owns_store:
            self.store.close()


# =========================================================================== writer

def create_store(path: StrPath, *, journal_mode: str = "WAL") -> None:
    """Create a new, empty store: canonical schema, identity PRAGMAs, WAL, a uuid4 store_id.

    Refuses to touch an existing file (FileExistsError)."""
    p = os.fspath(path)
    if os.path.exists(p):
        raise FileExistsError(f"{p}: already exists; create_store never overwrites")
    conn = sqlite3.connect(p, isolation_level=None)
    try:
        mode = conn.execute(f"PRAGMA journal_mode={journal_mode}").fetchone()[0]
        if str(mode).upper() != journal_mode.upper():
            raise StoreError(f"{p}: could not set journal_mode={journal_mode} (got {mode})")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("BEGIN IMMEDIATE")
        for stmt in SCHEMA_SQL.split(";"):
            if stmt.strip():
                conn.execute(stmt)
        conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version={USER_VERSION}")
        conn.execute("INSERT INTO persistence_state (singleton, store_id) VALUES (1, ?)", (str(uuid.uuid4()),))
        conn.execute("COMMIT")
    except BaseException:
        conn.close()
        try:
            os.unlink(p)
        except OSError:
            pass
        raise
    conn.close()


def open_writer(path: StrPath, *, busy_timeout: float = 5.0) -> sqlite3.Connection:
    """A read-write connection to an existing store (identity checked) for :func:`append_batch`."""
    p = os.fspath(path)
    if not os.path.exists(p):
        raise StoreError(f"{p}: no such store (use create_store first)")
    conn = sqlite3.connect(f"file:{urllib.parse.quote(os.path.abspath(p))}?mode=rw", uri=True,
                           isolation_level=None, timeout=busy_timeout)
    try:
        conn.execute("PRAGMA trusted_schema=OFF")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=FULL")
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        ver = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id != APPLICATION_ID or ver != USER_VERSION:
            raise StoreError(f"{p}: not a dsh user_version {USER_VERSION} store "
                             f"(application_id {app_id}, user_version {ver}); refusing to write")
        if _schema_rows(conn) != canonical_schema():
            raise StoreError(f"{p}: schema differs from the canonical DDL; refusing to write")
    except sqlite3.Error as e:
        conn.close()
        raise StoreError(_describe(p, e, busy_timeout)) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _json_bytes(v: object) -> bytes:
    return bytes(v) if isinstance(v, msgspec.Raw) else _encode(v)


def _json_text(v: object) -> str:
    b = _json_bytes(v)
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("JSON value is not valid UTF-8") from None


def _int_of(v: object, what: str) -> int:
    if isinstance(v, msgspec.Raw):
        v = _decode(bytes(v))
    if type(v) is not int:
        raise ValueError(f"{what} must be an integer, got {v!r}")
    return v


def _data_cell(v: object) -> Union[str, bytes]:
    jb = _json_bytes(v)
    try:
        text = jb.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("data JSON is not valid UTF-8") from None
    if len(jb) >= COMPRESS_MIN:
        frame = zstd.compress(jb, level=ZSTD_LEVEL)
        if len(frame) < len(jb):
            return frame
    return text


def row_columns(row: dict[str, Any]) -> tuple[int, str, int, Union[str, bytes], Optional[bytes], Optional[str],
                                             Optional[int]]:
    """(seq, type, time, data, source_event_seqs, surface_op, ignorable) of one storage row.

    Values may be Python JSON values or ``msgspec.Raw`` (stored verbatim)."""
    typ = row.get("type")
    if isinstance(typ, msgspec.Raw):
        typ = _decode(bytes(typ))
    if not isinstance(typ, str):
        raise ValueError(f"row has no string type: {row!r:.200}")
    if "seq0" in row or typ in PACKED_TAGS:
        if set(row) != {"type", "seq0", "time0", "data"} or typ not in PACKED_TAGS:
            raise ValueError(f"packed row must be exactly {{type (chunk tag), seq0, time0, data}}: keys {sorted(row)}")
        data = row["data"]
        d = _decode(bytes(data)) if isinstance(data, msgspec.Raw) else data
        payload = d.get("texts", d.get("args")) if isinstance(d, dict) else None
        n = len(payload) if isinstance(payload, list) else 0
        if not PACKED_MIN <= n <= PACKED_MAX:
            raise ValueError(f"packed row at seq {row['seq0']!r} has {n} members (spec: 3..1024)")
        if len(_json_bytes(data)) > PACKED_MAX_DATA:
            raise ValueError(f"packed row at seq {row['seq0']!r} has more than 1 MiB of data")
        return (_int_of(row["seq0"], "seq0"), typ, _int_of(row["time0"], "time0"), _data_cell(data), None, None, 0)
    extra = set(row) - {"type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp", "ignorable"}
    if extra:
        raise ValueError(f"row seq {row.get('seq')!r} has keys SQLite cannot store: {sorted(extra)}")
    for k in ("seq", "time", "data"):
        if k not in row:
            raise ValueError(f"row {row.get('seq')!r} lacks {k}")
    seq = _int_of(row["seq"], "seq")
    seqs = row.get("sourceEventSeqs")
    if isinstance(seqs, msgspec.Raw):
        seqs = _decode(bytes(seqs))
    seqs_cell = None
    if seqs is not None:
        if not isinstance(seqs, list):
            raise ValueError(f"row seq {seq}: sourceEventSeqs must be a list")
        seqs_cell = encode_seqs(seqs)
    sop = row.get("surfaceOp")
    sop_cell = None if sop is None else _json_text(sop)
    ign = row.get("ignorable")
    if isinstance(ign, msgspec.Raw):
        ign = _decode(bytes(ign))
    if "ignorable" in row and ign is not True:
        raise ValueError(f"row seq {seq}: ignorable must be true when present, got {ign!r}")
    return (seq, typ, _int_of(row["time"], "time"), _data_cell(row["data"]), seqs_cell, sop_cell,
            1 if ign is True else None)


def _session_cells(header: dict[str, Any]) -> dict[str, Any]:
    extra = set(header) - {"type"} - {k for k, _ in _HEADER_KEYS}
    if extra:
        raise ValueError(f"header keys SQLite cannot store: {sorted(extra)}")
    if header.get("type", "session") != "session":
        raise ValueError("header type must be 'session'")
    cells: dict[str, Any] = {}
    for key, col in _HEADER_KEYS:
        v = header.get(key)
        if key in ("id", "cwd", "parentSession", "origin", "agentPreset"):
            if v is not None and not isinstance(v, str):
                raise ValueError(f"header {key} must be a string")
        elif v is not None and type(v) is not int:
            raise ValueError(f"header {key} must be an integer")
        cells[col] = v
    for req in ("id", "version", "created_at"):
        if cells[req] is None:
            raise ValueError(f"header lacks {dict((c, k) for k, c in _HEADER_KEYS)[req]} (NOT NULL in SQLite)")
    return cells


def append_batch(path_or_conn: Union[StrPath, sqlite3.Connection], header: dict[str, Any],
                 rows: list[dict[str, Any]]) -> int:
    """Append one batch of storage rows to a session in one ``BEGIN IMMEDIATE`` transaction.

    The first batch creates the ``sessions`` row (fresh uuid4 incarnation); every batch adds 1 to
    ``revision``.  A header that differs from the stored row is refused (ValueError).  Returns the
    new revision."""
    if isinstance(path_or_conn, sqlite3.Connection):
        own, conn = False, path_or_conn
    else:
        own, conn = True, open_writer(path_or_conn)
    try:
        cells = _session_cells(header)
        cols = [row_columns(r) for r in rows]
        if conn.in_transaction:
            raise StoreError("append_batch needs a connection outside any transaction")
        conn.execute("BEGIN IMMEDIATE")
        try:
            cur = conn.execute(f"SELECT {', '.join(_SESSION_COLS)} FROM sessions WHERE id = ?",
                               (cells["id"],)).fetchone()
            if cur is None:
                conn.execute(f"INSERT INTO sessions ({', '.join(_SESSION_COLS)}) VALUES "
                             f"({', '.join('?' * len(_SESSION_COLS))})",
                             [cells[c] for c in _SESSION_COLS[:-2]] + [str(uuid.uuid4()), 0])
            else:
                stored = dict(zip(_SESSION_COLS, cur))
                stored = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in stored.items()}
                diff = [c for c in _SESSION_COLS[:-2] if stored[c] != cells[c]]
                if diff:
                    raise ValueError(f"session {cells['id']}: header differs from the stored row in {diff}")
            conn.executemany("INSERT INTO events (session_id, seq, type, time, data, source_event_seqs, "
                             "surface_op, ignorable) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             [(cells["id"],) + c for c in cols])
            conn.execute("UPDATE sessions SET revision = revision + 1 WHERE id = ?", (cells["id"],))
            rev: int = conn.execute("SELECT revision FROM sessions WHERE id = ?", (cells["id"],)).fetchone()[0]
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        return rev
    finally:
        if own:
            conn.close()


def _raw_row(line: bytes, lineno: int, path: str) -> dict[str, msgspec.Raw]:
    try:
        return _decode_raw_fields(line)
    except msgspec.DecodeError as e:
        raise ValueError(f"{path}: line {lineno} is not a JSON object row: {e}") from None


def jsonl_to_sqlite(jsonl_path: StrPath, db_path: StrPath, batch_rows: int = 50, *,
                    default_version: Optional[int] = 0) -> dict[str, Any]:
    """Append a raw JSONL session file (header + rows as stored) to a SQLite store.

    Rows are stored as they are (packed rows stay packed rows with ignorable=0; ``data`` and
    ``surfaceOp`` bytes verbatim), ``batch_rows`` rows per transaction.  The store is created
    when ``db_path`` does not exist.  A header without ``version`` (older snapshots) is stored
    as ``default_version`` (None: refuse).  A torn last line (no ``\\n``) is not stored.
    Returns ``{"id", "rows", "batches", "filled": [...], "torn": bool}``."""
    jp = os.fspath(jsonl_path)
    with open(jp, "rb") as f:
        text = f.read()
    lines = text.split(b"\n")
    torn = bool(lines and lines[-1])
    body = lines[1:-1] if len(lines) > 1 else []
    header = _decode(lines[0]) if lines and lines[0] else None
    if not isinstance(header, dict) or header.get("type") != "session":
        raise ValueError(f"{jp}: first line is not a session header")
    filled = []
    if "version" not in header:
        if default_version is None:
            raise ValueError(f"{jp}: header has no version")
        header = dict(header, version=default_version)
        filled.append("version")
    rows = [_raw_row(line, i + 2, jp) for i, line in enumerate(body) if line.strip()]
    if not os.path.exists(os.fspath(db_path)):
        create_store(db_path)
    conn = open_writer(db_path)
    batches = 0
    try:
        if not rows:
            append_batch(conn, header, [])
            batches = 1
        for i in range(0, len(rows), max(1, batch_rows)):
            append_batch(conn, header, rows[i:i + batch_rows])
            batches += 1
    finally:
        conn.close()
    return {"id": header.get("id"), "rows": len(rows), "batches": batches, "filled": filled, "torn": torn}
