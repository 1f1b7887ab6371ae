"""dsh SQLite session store, schema ``user_version`` 17 (spec §1.6, §1.8, §2.1, §5).

One SQLite file holds many sessions.  This module is the **read-only** reader: :class:`SqliteStore`
(open, identity check, session list) and :class:`SqliteSource` (one session's rows as
:class:`~app.log.source.sources.Segment` batches whose ``rows`` are the JSON rows exactly as the dsh JSONL
writer would store them, so :class:`~app.log.format.codec.RowCodec` decodes SQLite and JSONL logs alike).
Beside it: :mod:`app.store.sqlite_schema` (the identity, canonical DDL and its check, the
``source_event_seqs`` varint codec), :mod:`app.store.sqlite_rows` (rebuilding a row from its cells, with the
BLOB and size guards) and :mod:`app.store.sqlite_writer` (used by tests and by fork: :func:`create_store`,
:func:`append_batch`, :func:`jsonl_to_sqlite`).

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

import os
import sqlite3
import threading
import urllib.parse
from typing import Any, Optional, TypedDict, TypeVar
from collections.abc import Callable, Iterator

from ..log.format.model import Problem
from ..log.source.sources import Segment, Source, SourceChanged
from .sqlite_rows import FP_COLS, ROW_COLS, Undecodable, encode, packed_members, reconstruct_row, undecodable_marker
from .sqlite_schema import (HEADER_KEYS, SESSION_COLS, StoreError, StrPath, birthtime_ns, check_identity,
                            describe_error, read_db_header, text_of)

BATCH_ROWS = 2000                    # rows per Segment
BUSY_TIMEOUT_S = 2.0                 # how long a reader waits for a lock before StoreError

_T = TypeVar("_T")
# a fetched row: sqlite3 rows are tuples of column values (bytes for TEXT: ``text_factory = bytes``)
DbRow = tuple[Any, ...]


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
            hdr = read_db_header(p)
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
            raise StoreError(describe_error(p, e, busy_timeout)) from None
        return conn

    def _check_identity(self) -> None:
        p = self.path

        def check(c: sqlite3.Connection) -> None:
            # a truncated file: in-header page count beyond the file (checked under the read lock;
            # skipped for a live WAL store, whose main file may legitimately lag during a checkpoint)
            self.store_id = check_identity(c, p, self._immutable or not os.path.exists(p + "-wal"))

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
                    raise StoreError(describe_error(self.path, e, self._busy_timeout)) from None
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
            rows = c.execute(f"SELECT {', '.join(SESSION_COLS)} FROM sessions "
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
                        last_seq += packed_members(d[0], d[1]) - 1
                h["revision"] = self.revision_of(inc, rev)
                h["events"] = last_seq + 1
                h["lastSeq"] = last_seq
                out.append(h)
            return out
        return self._read(q)

    def _header_of(self, r: DbRow, problems: Optional[list[Problem]] = None) -> tuple[dict[str, Any], str, int]:
        vals = dict(zip(SESSION_COLS, r))
        h: dict[str, Any] = {"type": "session"}
        for key, col in HEADER_KEYS:
            v = vals[col]
            if v is not None:
                h[key] = text_of(v, problems, f"sessions.{col}")
        return h, text_of(vals["incarnation"]), vals["revision"]

    def session_ids(self) -> list[str]:
        return self._read(lambda c: [text_of(r[0]) for r in c.execute("SELECT id FROM sessions ORDER BY id")])

    def source(self, session_id: str, *, batch_rows: int = BATCH_ROWS) -> SqliteSource:
        return SqliteSource(self, session_id, batch_rows=batch_rows)


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
        r = c.execute(f"SELECT {', '.join(SESSION_COLS)} FROM sessions WHERE id = ?",
                      (self.session_id,)).fetchone()
        if r is None:
            return None
        probs: list[Problem] = []
        header, inc, rev = self.store._header_of(r, probs)
        last = c.execute(f"SELECT {FP_COLS} FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
                         (self.session_id,)).fetchone()
        size = 0
        if last is not None:
            members = 1
            if last[-1] == 0:
                d = c.execute("SELECT typeof(data), data FROM events WHERE session_id = ? AND seq = ?",
                              (self.session_id, last[0])).fetchone()
                members = packed_members(d[0], d[1])
            size = last[0] + members
        return {"header": header, "inc": inc, "rev": rev, "last": last, "size": size, "problems": probs}

    def _install(self, snap: _Snapshot) -> None:
        self._snap = snap
        self.header_raw = encode(snap["header"])
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
        inc, rev = text_of(r[0]), r[1]
        if inc != snap["inc"]:
            raise SourceChanged(f"{self.path}: session {self.session_id} was replaced (new incarnation)")
        if rev != snap["rev"] and snap["last"] is not None:
            now = c.execute(f"SELECT {FP_COLS} FROM events WHERE session_id = ? AND seq = ?",
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
            return c.execute(f"SELECT {ROW_COLS} FROM events WHERE {where} "
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
            except Undecodable as e:
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
            return text_of(r[0]), r[1]
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
