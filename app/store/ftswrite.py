"""The writing half of the home full-text index (:mod:`app.store.fulltext`): a work list of
sessions indexed several per transaction, each session's rows and bookkeeping row written
together (a crash leaves every session as before or fully updated), a grown log resumed where
the index stopped.  A mixin of :class:`app.store.fulltext.FullTextIndex`."""
from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from ..log.jobctl import Cancelled as Cancelled, is_cancelled
from .ftssearch import SHIFT as _SHIFT

if TYPE_CHECKING:
    from ..log.index.reader import LogReader
    from ..log.query.extract import FileText, RowText
# (the reader, the extraction and the file helpers are imported by the methods that write: a query of
# a current index imports none of them, issue 32)

_COMMIT_BYTES = 32 << 20     # a commit makes FTS5 write its pending terms as a segment: few, big ones
_COMMIT_SESSIONS = 5000      # (1000 cost ~5 % more CPU: more segments to merge); a kill loses one batch at most
_FLUSH_ROWS = 2048            # rows written at a time by a session written as it is read
_MEMORY_BYTES = 16 << 20      # a session's text kept in memory before it is written in a savepoint

Cancel = Optional[object]     # app.log.jobctl.Cancel: a token, a threading.Event or a callable returning True
Progress = Optional[Callable[[int, int, int], None]]

_SESSION_COLS = ("sid, key, id, path, store, format, project, cwd, created, dev, ino, size, mtime_ns, revision, "
                 "done_pos, done_line, done_text, done_crc, turn, calls, entries, title")
COUNTS = ("sessions", "indexed", "grown", "unchanged", "removed", "skipped", "files_opened", "bytes_read", "entries")


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
        for k in COUNTS:
            setattr(self, k, getattr(self, k) + getattr(o, k))
        self.cancelled = self.cancelled or o.cancelled
        self.problems += o.problems

    def to_dict(self) -> dict[str, Any]:
        return {"sessions": self.sessions, "indexed": self.indexed, "grown": self.grown,
                "unchanged": self.unchanged, "removed": self.removed, "skipped": self.skipped,
                "filesOpened": self.files_opened, "bytesRead": self.bytes_read, "entries": self.entries,
                "seconds": round(self.seconds, 3), "cancelled": self.cancelled}



@dataclass
class Found:
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



def cancelled(cancel: Cancel) -> bool:
    """The one cancellation test (:func:`app.log.jobctl.is_cancelled`): a token, an Event or a callable."""
    return is_cancelled(cancel)   # type: ignore[arg-type]  # (any object: the older signature)



class SessionWriter:
    """Writes sessions into ``conn`` (a mixin: the index holds the connection and the root)."""
    root: str
    fts5: bool
    _next_sid: Optional[int]
    _pre: Optional[Callable[[], None]]
    _sp_open: bool
    _writing: bool
    _last_entries: int
    _pending: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]
    _batch: tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]

    @property
    def conn(self) -> sqlite3.Connection:
        raise NotImplementedError

    def _not_session(self, p: str, sig: tuple[int, int, int, int], why: Optional[str],
                     rep: UpdateReport) -> tuple[Any, ...]:
        """The files row of a file whose first line is no session header (reported when it is
        meant to be a session)."""
        from .ftsio import looks_like_session
        if looks_like_session(p, self.root):
            why = why or 'the first line is not a {"type":"session"} header'
            rep.problems.append(f"{p}: {why}")
            rep.skipped += 1
            return (p, *sig, "bad", why)
        return (p, *sig, "other", None)

    def _read_header(self, p: str, rep: UpdateReport) -> tuple[Optional[dict[str, Any]], Optional[str]]:
        from .discovery_headers import read_header_bytes
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


    def _index_work(self, work: list[tuple[Found, Optional[tuple[Any, ...]]]], results: Iterator[FileText],
                    file_rows: list[tuple[Any, ...]], rep: UpdateReport, progress: Progress,
                    cancel: Cancel) -> None:
        """Index the work list, several sessions per transaction.  A session's rows are kept in
        memory and written once it was read whole (nothing to undo when reading fails); one too
        big for that is written in a savepoint as it is read (FTS5 flushes its pending terms to a
        new segment at every savepoint: one per session made small sessions slow)."""
        from .ftsio import upsert_file
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
                if cancelled(cancel):
                    rep.cancelled = True
                    break
                self._sp_open = False         # this session's savepoint (big sessions only)
                self._writing = False         # its rows are being written outside a savepoint
                try:
                    n = self._index_found(f, row, results, file_sig, rep, cancel)
                except Cancelled:
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
            if rep.cancelled:               # Cancel: the batch not yet committed is dropped, not written
                c.execute("ROLLBACK")       # (writing it, FTS5 merges included, took seconds; what was
                self._batch = ([], [], [], [])   # committed stays, and those sessions stay behind)
                return
            for r in file_sig.values():    # stores, non-session files, bad files
                upsert_file(c, r)
            self._flush_batch()
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise

    def _session_error(self, f: Found, why: str, rep: UpdateReport) -> None:
        rep.skipped += 1
        rep.problems.append(f"{f.key}: {why}")
        self._record_error(f, why)

    def _index_found(self, f: Found, row: Optional[tuple[Any, ...]], results: Iterator[FileText],
                     file_sig: dict[str, tuple[Any, ...]], rep: UpdateReport, cancel: Cancel) -> int:
        """Index one session of the work list.  -> text bytes written."""
        from ..log.query.extract import FileText
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
                   res.done_line, res.done_pos, res.done_crc, res.turn, res.state,
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

    def _record_error(self, f: Found, why: str) -> None:
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
        from .ftsio import flush
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

    def _index_one(self, f: Found, row: Optional[tuple[Any, ...]], rep: UpdateReport, cancel: Cancel) -> int:
        """Index one session through its reader (inside the caller's transaction).  -> text bytes written."""
        from ..log.query.extract import RowText
        from .ftsio import crc_before
        c = self.conn
        resume = _resume_point(f, row)
        reader = _reader_of(f)
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
                rt = RowText(reader.codec)
                reopened = 0
                rep.indexed += 1
            else:
                sid, start, line0, text0, turn, state0 = resume
                self._pre = None
                rt = RowText.resumed(reader.codec, turn, state0)
                reopened = self._reopen(sid, len(rt.blocks))
                rep.grown += 1
            n, state = self._feed(reader, sid, start, line0, text0, rt, rep, cancel)
            done_pos, done_line, done_text, turn, title = state
            calls = rt.state()
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
                               crc, turn, calls, self._last_entries, title))
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
                    calls, f.revision, self._last_entries - reopened]
            if title is not None:
                sets += ", title = ?"
                args.append(title)
            c.execute(f"UPDATE sessions SET {sets} WHERE sid = ?", (*args, sid))
            self._writing = False
            return n
        finally:
            reader.close()

    def _reopen(self, sid: int, k: int) -> int:
        """A grown session's last ``k`` entries are the tool-call blocks still open when it was
        indexed (:meth:`RowText.finish`): removed, the resumed RowText holds them again (dropped
        if their call's row comes now, else written again)."""
        if k:
            top = self._rowid_base(sid, True)
            if self.fts5:
                self.conn.execute("DELETE FROM fts WHERE rowid BETWEEN ? AND ?", (top - k, top - 1))
            self.conn.execute("DELETE FROM entries WHERE rowid BETWEEN ? AND ?", (top - k, top - 1))
        return k

    def _feed(self, reader: LogReader, sid: int, start: Optional[int], line0: Optional[int],
              text0: Optional[int], rt: RowText, rep: UpdateReport,
              cancel: Cancel) -> tuple[int, tuple[Any, ...]]:
        """Index rows from ``start`` on; -> (text bytes, (done_pos, done_line, done_text, turn, title))."""
        from ..log.query.extract import Entry, may_hold_text
        from .ftsio import flush, split
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
            if cancelled(cancel):
                raise Cancelled()
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
        rt.finish(found)                     # the blocks still open: the last entries
        for seq, turn, tm, kind, tool, body in found:
            ent.append((nxt, sid, seq, turn, tm, kind, tool))
            fts.append((nxt, body))
            nxt += 1
        entries += len(found)
        if self._sp_open:
            flush(c, ent, fts, self.fts5)
        self._pending = (ent, fts)
        rep.entries += entries
        self._last_entries = entries
        return rt.text_bytes, (done_pos, done_line, done_text, rt.turn, rt.title)


def _reader_of(f: Found) -> LogReader:
    """The reader of a session to index (its file, or its SQLite store's session)."""
    if f.fmt == "sqlite":
        from .faces import open_reader
        assert f.store is not None
        return open_reader(f.store, f.sid)
    from ..log.index.reader import LogReader
    from ..log.source.sources import open_source
    return LogReader(open_source(f.path))


def _resume_point(f: Found, row: Optional[tuple[Any, ...]]) -> Optional[tuple[Any, ...]]:
    """Where a grown log's indexing resumes: (sid, done_pos, done_line, done_text, turn, state), or None to index
    it from the start.  Same file, grown (a log is append-only): resume when the bytes before the stop point are
    the ones indexed; same size but a new mtime means a rewrite: index it again."""
    from .ftsio import crc_before
    if row is None or f.fmt not in ("jsonl", "zstd"):
        return None
    (_k, sid, dev, ino, size, _mt, _rev, done_pos, done_line, done_text, done_crc, turn, calls,
     status, _prob) = row
    st = f.st
    assert st is not None
    if (dev, ino) == (st.st_dev, st.st_ino) and st.st_size > size and status == "ok" and done_pos \
            and crc_before(f.path, done_pos) == done_crc:
        return (sid, done_pos, done_line, done_text, turn, calls)
    return None
