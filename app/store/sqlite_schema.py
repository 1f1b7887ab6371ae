"""The dsh SQLite store's format, schema ``user_version`` 17 (spec §1.6, §1.8): the identity (application_id,
user_version), the ``source_event_seqs`` varint codec (:func:`encode_seqs`, :func:`decode_seqs`), the canonical
DDL (:data:`SCHEMA_SQL`) and the identity check against it (:func:`check_identity`), the file identity
(:func:`birthtime_ns`, the database header's page count) and the sessions table's columns.  Shared by the
read-only reader (:mod:`app.store.sqlite_store`) and the writer (:mod:`app.store.sqlite_writer`)."""
from __future__ import annotations

import ctypes
import os
import re
import sqlite3
import sys
from typing import Any, Optional, Union

from ..log.format.model import MAX_SAFE_INT, Problem

APPLICATION_ID = 1146308688          # 0x44534850, "DSHP"
USER_VERSION = 17
StrPath = Union[str, "os.PathLike[str]"]
# a sqlite_master row as compared: (type, name, tbl_name, normalized sql)
SchemaRow = tuple[Any, Any, Any, Optional[str]]


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


def schema_rows(conn: sqlite3.Connection) -> frozenset[SchemaRow]:
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
            _CANONICAL = schema_rows(c)
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


def read_db_header(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read(100)


def header_pages(hdr: bytes) -> Optional[tuple[int, int]]:
    """(page_size, in-header page count) when the count is valid, else None."""
    if len(hdr) < 100:
        return None
    ps = int.from_bytes(hdr[16:18], "big")
    ps = 65536 if ps == 1 else ps
    if hdr[92:96] != hdr[24:28]:
        return None
    return ps, int.from_bytes(hdr[28:32], "big")


# =========================================================================== sessions table

SESSION_COLS = ("id", "version", "created_at", "cwd", "parent_session", "seed_length", "origin",
                 "delegation_depth", "agent_preset", "incarnation", "revision")
HEADER_KEYS = (("version", "version"), ("id", "id"), ("createdAt", "created_at"), ("cwd", "cwd"),
                ("parentSession", "parent_session"), ("seedLength", "seed_length"), ("origin", "origin"),
                ("delegationDepth", "delegation_depth"), ("agentPreset", "agent_preset"))

def text_of(v: Any, problems: Optional[list[Problem]] = None, what: str = "") -> Any:
    """A cell as text (bytes decoded as UTF-8, a bad one replaced and reported); other values as they are."""
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            if problems is not None:
                problems.append(Problem(code="bad-utf8", message=f"{what} is not valid UTF-8 (replaced)"))
            return v.decode("utf-8", "replace")
    return v



def describe_error(path: str, e: sqlite3.Error, busy_timeout: float) -> str:
    """One line naming the file for a sqlite3 error (locked, not a database, corrupt, cannot open)."""
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


def check_identity(c: sqlite3.Connection, p: str, check_pages: bool) -> str:
    """The store_id of the store open on ``c`` (file ``p``) after checking its identity: application_id,
    user_version, the schema text against the canonical DDL, one persistence_state row; with
    ``check_pages`` also that the in-header page count is not beyond the file (a truncated file).
    StoreError (naming the file) when any of them fails."""
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
    got = schema_rows(c)
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
    store_id: str = text_of(rows[0][1])
    if check_pages:
        hdr = read_db_header(p)
        hp = header_pages(hdr)
        size = os.path.getsize(p)
        if hp is not None and hp[0] * hp[1] > size:
            raise StoreError(f"{p}: database file is truncated (header: {hp[1]} pages of {hp[0]} "
                             f"bytes, file: {size} bytes)")
    return store_id
