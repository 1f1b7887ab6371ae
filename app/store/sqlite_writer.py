"""Writing dsh SQLite stores (spec §1.8), for tests, generators and fork: :func:`create_store` (canonical
schema, identity PRAGMAs, a uuid4 store_id; never over an existing file), :func:`open_writer` (identity
checked), :func:`append_batch` (one ``BEGIN IMMEDIATE`` transaction per batch) and :func:`jsonl_to_sqlite`.
Rows are stored as the JSONL writer stores them: ``data`` verbatim (a big one as a zstd BLOB when smaller),
packed rows as packed rows (``ignorable`` 0)."""
from __future__ import annotations

import os
import sqlite3
import urllib.parse
import uuid
from typing import Any, Optional, Union

import msgspec

from ..log.format.model import PACKED_TAGS
from ..log.source.zstdlib import zstd
from .sqlite_rows import encode as _encode
from .sqlite_schema import (APPLICATION_ID, HEADER_KEYS, SCHEMA_SQL, SESSION_COLS, USER_VERSION, StoreError, StrPath,
                            canonical_schema, describe_error, encode_seqs, schema_rows)

ZSTD_LEVEL = 3
COMPRESS_MIN = 4096                  # JSON of at least this many bytes may be stored as a zstd BLOB
PACKED_MIN, PACKED_MAX = 3, 1024
PACKED_MAX_DATA = 1 << 20

_decode = msgspec.json.Decoder().decode
_decode_raw_fields = msgspec.json.Decoder(dict[str, msgspec.Raw]).decode


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
        if schema_rows(conn) != canonical_schema():
            raise StoreError(f"{p}: schema differs from the canonical DDL; refusing to write")
    except sqlite3.Error as e:
        conn.close()
        raise StoreError(describe_error(p, e, busy_timeout)) from None
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
    extra = set(header) - {"type"} - {k for k, _ in HEADER_KEYS}
    if extra:
        raise ValueError(f"header keys SQLite cannot store: {sorted(extra)}")
    if header.get("type", "session") != "session":
        raise ValueError("header type must be 'session'")
    cells: dict[str, Any] = {}
    for key, col in HEADER_KEYS:
        v = header.get(key)
        if key in ("id", "cwd", "parentSession", "origin", "agentPreset"):
            if v is not None and not isinstance(v, str):
                raise ValueError(f"header {key} must be a string")
        elif v is not None and type(v) is not int:
            raise ValueError(f"header {key} must be an integer")
        cells[col] = v
    for req in ("id", "version", "created_at"):
        if cells[req] is None:
            raise ValueError(f"header lacks {dict((c, k) for k, c in HEADER_KEYS)[req]} (NOT NULL in SQLite)")
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
            cur = conn.execute(f"SELECT {', '.join(SESSION_COLS)} FROM sessions WHERE id = ?",
                               (cells["id"],)).fetchone()
            if cur is None:
                conn.execute(f"INSERT INTO sessions ({', '.join(SESSION_COLS)}) VALUES "
                             f"({', '.join('?' * len(SESSION_COLS))})",
                             [cells[c] for c in SESSION_COLS[:-2]] + [str(uuid.uuid4()), 0])
            else:
                stored = dict(zip(SESSION_COLS, cur))
                stored = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in stored.items()}
                diff = [c for c in SESSION_COLS[:-2] if stored[c] != cells[c]]
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
