"""Follow a session log while an agent writes it (spec §1.3, §1.5, §5, §6, §8 "Live").

* :class:`app.store.filewatch.Watcher` wakes a waiting reader when a file (or its directory)
  changes (inotify where it works, always a stat poll beside it).
* :class:`Follower` yields newly complete events of one log (JSONL, zstd, or one session of a
  SQLite store).  It keeps the physical position just after the last complete stored row
  (JSONL: byte after its newline; zstd: start of the next frame; SQLite: next seq) and
  decodes only the bytes past it.  A torn last line or torn last frame is **held**: nothing
  of it is emitted until it is complete (a write in progress looks exactly like that).
  It copes with the file appearing later (atomic publish of a new session: the path is
  watched before it exists), and tells how the writer is doing (:func:`writer_verdict`, the
  one rule): the ``session.lock`` decides when there is one; otherwise growth the follower saw
  itself: ``live`` (seen growing within ``idle_after`` seconds), ``complete`` (quiet, last turn
  closed), ``idle`` (seen growing, now quiet with an open turn or torn tail, e.g. a long tool
  call), ``crashed`` (open tail never seen growing, or quiet for ``crash_after`` seconds).
  A file that shrinks or is replaced (repair, restore) is re-read from the start; rows
  already emitted are not emitted again (``resets`` counts these).
* :func:`live_state` is the session list's cheap view of the same rule, with the same waits
  (``IDLE_AFTER_S``, ``CRASH_AFTER_S``): ``"live" | "idle" | "crashed" | "complete"`` from growth
  seen between two of its calls and the log's tail state.

No module here writes anything.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Optional, TypedDict
from collections.abc import Callable, Iterable, Iterator

from ..log.format.model import BadRow, Event, Item
from ..log.index.reader import LogReader
from ..log.source.sources import RawJsonlSource, Segment, Source, SourceChanged
from .filewatch import Watcher

SESSION_NAMES = ("session.jsonl.zstd", "session.jsonl")
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")

IDLE_AFTER_S = 3.0          # no growth seen for this long: no longer "live"
CRASH_AFTER_S = 30.0        # open tail, no growth seen for this long: the writer is presumed dead
                            # (both for every observer: the follower, the session list and the CLI)
SECOND_LOOK_S = 0.5         # one-shot callers (CLI): the wait before a second look for growth


def writer_verdict(*, open_tail: bool, grew_ago: Optional[float], idle_after: float, crash_after: float,
                   lock: Optional[bool] = None, seed_only: bool = False, torn: bool = False) -> str:
    """THE rule for a writer's state (the follower, the session list and the CLI all ask it):
    ``"live" | "idle" | "crashed" | "complete"``.

    * ``lock`` (v1+ ``session.lock``, :func:`app.store.writerlock.lock_signal`) decides when it
      says anything: held = live; released = crashed (open tail) or complete;
    * a log that ends with its fork seed and nothing after it is a child at rest: complete;
    * otherwise **growth seen by this observer** decides, never the file's age or the event
      times (a checkout, a copy or ``simulate`` make those up): ``grew_ago`` is how long ago the
      observer saw the log grow (size / mtime / revision changed between two of its own looks),
      None when it never did.  Live while it grew less than ``idle_after`` ago; then complete
      when the last turn is closed; an open tail (open turn or torn row) never seen growing is
      crashed at once; one that was seen growing is idle until ``crash_after`` without growth,
      except a **torn** last row (``torn``): a writer writes each batch whole (one write, then
      fsync), so a row left half-written through ``idle_after`` without growth is a write that was
      cut: crashed then, without the long wait meant for a quiet turn (a long tool call).
    """
    if lock is not None:
        return "live" if lock else ("crashed" if open_tail else "complete")
    if seed_only and not open_tail:
        return "complete"
    if grew_ago is not None and grew_ago < idle_after:
        return "live"
    if not open_tail:
        return "complete"
    if grew_ago is None or grew_ago >= crash_after or torn:
        return "crashed"
    return "idle"


# =========================================================================== follower

def _is_sqlite_path(path: str) -> bool:
    if path.endswith(SQLITE_SUFFIXES):
        return True
    try:
        from ..log.format.limits import read_head
        return read_head(path, 16) == b"SQLite format 3\x00"
    except OSError:
        return False


class LastBatch(TypedDict):
    """What the newest poll of a :class:`Follower` brought (the live status line)."""
    events: int
    bytes: Optional[int]         # how far the stored position moved: bytes (SQLite: seqs); None when unknown
    firstSeq: int
    lastSeq: int
    at: float                    # wall-clock time.time()


class WriterFacts(TypedDict):
    """What a follower's writer state went by: the lock's verdict (None: no lock to ask), when it
    last saw growth (wall clock; None: never), and the rule's two waits."""
    lock: Optional[bool]
    grewAt: Optional[float]
    idleAfter: float
    crashAfter: float


class Follower:
    """Newly complete events of one log, as they are written.

    ``from_start``: emit every stored event from seq 0 (True), or only those written after
    the follower first opened the log (False; ``subscribed_last`` is then the last seq that
    was already stored, like dsh's ``session/subscribed.lastSeq``, and a tail page read
    *after* :meth:`open` covers everything before the first emitted row).

    ``path``: a session file, a session directory (either transcript name, waited for), or a
    SQLite store with ``session_id``.  Use :meth:`poll` (non-blocking) with :meth:`wait`,
    or the :meth:`follow` generator.  Not thread-safe except :meth:`wake`.
    """

    def __init__(self, path: str, session_id: Optional[str] = None, *, from_start: bool = True,
                 poll_interval: float = 0.1, use_inotify: bool = True, idle_after: float = IDLE_AFTER_S,
                 crash_after: float = CRASH_AFTER_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.given_path = os.path.abspath(os.path.expanduser(path))
        self.session_id = session_id
        self.from_start = from_start
        self.idle_after = idle_after
        self.crash_after = crash_after
        self.clock = clock
        self.path = self._resolve()
        self.sqlite = session_id is not None or (os.path.exists(self.path) and _is_sqlite_path(self.path))
        extra: tuple[str, ...] = ((os.path.basename(self.path) + "-wal", os.path.basename(self.path) + "-journal")
                                  if self.sqlite else ())
        if os.path.isdir(self.given_path) or self.path != self.given_path:
            extra = extra + SESSION_NAMES
        self.watcher = Watcher(self.path, poll_interval=poll_interval, use_inotify=use_inotify, extra=extra)
        self.src: Optional[Source] = None
        self.reader: Optional[LogReader] = None
        self.pos: Optional[int] = None   # physical position after the last complete row
        self.line: Optional[int] = None  # JSONL line number at ``pos`` when known
        self.last_seq = -1               # last emitted (or, from the end, already stored) seq
        self.subscribed_last: Optional[int] = None
        self.open_turn: Optional[int] = None
        self.held = 0                    # bytes of a torn last row / frame being held
        self.bad: list[BadRow] = []      # complete rows that could not be decoded
        self.resets = 0
        self.emitted = 0
        self.recovered = 0               # records released from a torn zstd frame by finish()
        self._skip_through = -1          # after a reset/recovery: drop seqs <= this
        self.last_type: Optional[str] = None   # type of the last event seen (a fork seed ends with end-seed)
        self.last_batch: Optional[LastBatch] = None   # the newest rows a poll brought: events, bytes, seqs, wall time
        self._dirty = False
        self._last_growth: Optional[float] = None   # clock() when this follower last saw the log grow
        self.last_growth_wall: Optional[float] = None   # the same, wall-clock time.time()
        self._stamp: Optional[tuple[int, ...]] = None   # (size, mtime_ns) at the previous look
        self.last_lock: Optional[bool] = None           # the lock's verdict at the last state()
        self._closed = False

    # ------------------------------------------------------------------ opening
    def _resolve(self) -> str:
        p = self.given_path
        if os.path.isdir(p) and self.session_id is None:
            for n in SESSION_NAMES:
                if os.path.exists(os.path.join(p, n)):
                    return os.path.join(p, n)
            return os.path.join(p, SESSION_NAMES[0])
        return p

    @property
    def kind(self) -> Optional[str]:
        return self.src.kind if self.src is not None else None

    def open(self) -> bool:
        """Open the log if it exists and its header is complete.  True once open."""
        if self.src is not None:
            return True
        if os.path.isdir(self.given_path) and self.session_id is None:
            self.path = self._resolve()      # same directory: the watcher already covers both names
        if not os.path.exists(self.path):
            return False
        try:
            src = self._open_source()
        except FileNotFoundError:
            return False
        except Exception as e:
            if type(e).__name__ == "StoreError" and "no session" in str(e):
                return False             # the store exists, the session is not in it yet
            raise
        if src is None:
            return False
        reader = LogReader(src)
        if reader.header is None or any(p.code in ("torn-header", "torn-header-frame") for p in reader.problems):
            src.close()                  # a header still being written (non-atomic writer)
            return False
        self.src, self.reader = src, reader
        self._init_position()
        return True

    def _open_source(self) -> Optional[Source]:
        if self.sqlite or _is_sqlite_path(self.path):
            self.sqlite = True
            from .sqlite_store import SqliteSource, SqliteStore
            if self.session_id is None:
                store = SqliteStore.open(self.path)
                ids = [h["id"] for h in store.list_sessions()]
                store.close()
                if len(ids) != 1:
                    raise ValueError(f"{self.path} holds {len(ids)} sessions: name one")
                self.session_id = ids[0]
            return SqliteSource.open(self.path, self.session_id)
        from ..log.source.sources import open_source
        from ..log.format.limits import read_head
        if not read_head(self.path, 1):  # (a FIFO or a device is refused, never blocks)
            return None              # empty file: not published yet
        return open_source(self.path)

    def _opened(self) -> tuple[Source, LogReader]:
        """The open source and its reader (only called once :meth:`open` succeeded)."""
        assert self.src is not None and self.reader is not None, "the log is not open"
        return self.src, self.reader

    def _init_position(self) -> None:
        src, reader = self._opened()
        if self.from_start or self.resets:
            self.pos = src.header_end if src.kind != "sqlite" else 0
            self.line = 2 if src.kind == "jsonl" else None
            self._dirty = True
            if self.subscribed_last is None:
                self.subscribed_last = -1
        else:
            self.pos, self.held, last = self._end_position()
            self.last_seq = last
            self.subscribed_last = last
            st = reader.tail_state()
            self.open_turn = st.open_turn
            self._dirty = self.held > 0
        self._stamp = self._look()           # the first look: growth is a change after it, never the file's age

    def _look(self) -> Optional[tuple[int, ...]]:
        """(size, mtime_ns) of the log (SQLite: and of its -wal / -journal), or None."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        out: tuple[int, ...] = (st.st_size, st.st_mtime_ns)
        if self.sqlite:
            for suf in ("-wal", "-journal"):
                try:
                    s2 = os.stat(self.path + suf)
                    out += (s2.st_size, s2.st_mtime_ns)
                except OSError:
                    out += (-1, -1)
        return out

    def _grew(self) -> None:
        self._last_growth = self.clock()
        self.last_growth_wall = time.time()

    def _end_position(self) -> tuple[int, int, int]:
        """(pos, held bytes, last stored seq) at the end of the current snapshot."""
        src, reader = self._opened()
        if src.kind == "sqlite":
            last = -1
            for seg in src.backward():
                evs = _events(reader.decode_segment(seg))
                if evs:
                    last = max(e.seq for e in evs)
                    break
            return src.size, 0, last
        pos: Optional[int] = None
        held = 0
        last = -1
        for seg in src.backward():
            if pos is None:
                if seg.torn:
                    if src.kind == "zstd":
                        pos, held = seg.pos, src.size - seg.pos
                        continue
                    nl = seg.data.rfind(b"\n")
                    pos, held = seg.pos + nl + 1, len(seg.data) - nl - 1
                    seg = Segment(pos=seg.pos, end=seg.pos + nl + 1, data=seg.data[:nl + 1],
                                  text_offset=seg.text_offset, line0=seg.line0)
                else:
                    pos, held = seg.end, 0
            evs = _events(reader.decode_segment(seg))
            if evs:
                last = max(e.seq for e in evs)
                self.last_type = evs[-1].type
                break
        if pos is None:
            pos, held = src.header_end, 0
        return pos, held, last

    # ------------------------------------------------------------------ reading
    def poll(self) -> list[Event]:
        """Events completed since the last call (non-blocking; [] when nothing new)."""
        if self._closed:
            return []
        if self.src is None:
            if not self.open():
                return []
            if not self._dirty:
                return []
        src, _reader = self._opened()
        try:
            grew = src.refresh()
        except SourceChanged:
            return self._reset()
        stamp = self._look()
        if grew or (stamp is not None and self._stamp is not None and stamp != self._stamp):
            self._grew()
        self._stamp = stamp if stamp is not None else self._stamp
        if not grew and not self._dirty:
            return []
        self._dirty = False
        pos0 = self.pos
        try:
            out = self._read_new()
        except SourceChanged:
            return self._reset()
        if out:
            self._note_batch(out, pos0)
        return out

    def _note_batch(self, out: list[Event], pos0: Optional[int]) -> None:
        """What the last poll brought (the live status line): events, stored bytes, when."""
        nbytes = self.pos - pos0 if isinstance(self.pos, int) and isinstance(pos0, int) else None
        self.last_batch = {"events": len(out), "bytes": nbytes, "firstSeq": out[0].seq, "lastSeq": out[-1].seq,
                           "at": time.time()}

    def _reset(self) -> list[Event]:
        """The log shrank or was replaced: re-read it, emitting only seqs not yet emitted."""
        self.resets += 1
        self._skip_through = max(self._skip_through, self.last_seq)
        try:
            if self.src is not None:
                self.src.close()
        finally:
            self.src = self.reader = None
        self.held = 0
        self._grew()                      # replaced or shrunk: someone is writing it
        if not self.open():
            return []
        return self._read_new()

    def _read_new(self) -> list[Event]:
        src, reader = self._opened()
        out: list[Event] = []
        held = 0
        if isinstance(src, RawJsonlSource):
            segs = src.forward(self.pos, line0=self.line)
        else:
            segs = src.forward(self.pos)
        for seg in segs:
            if seg.bad:
                self._take(reader.decode_segment(seg), out)
                self.pos = seg.end
                continue
            if seg.torn:
                if src.kind != "jsonl":
                    held = src.size - seg.pos      # a frame still being written: hold it whole
                    break
                nl = seg.data.rfind(b"\n")
                held = len(seg.data) - nl - 1
                if nl < 0:
                    break
                seg = Segment(pos=seg.pos, end=seg.pos + nl + 1, data=seg.data[:nl + 1],
                              text_offset=seg.text_offset, line0=seg.line0)
                self._take(reader.decode_segment(seg), out)
                self._advance(seg)
                break
            self._take(reader.decode_segment(seg), out)
            self._advance(seg)
        self.held = held
        return out

    def _advance(self, seg: Segment) -> None:
        self.pos = seg.end
        if self.line is not None:
            self.line += seg.data.count(b"\n")

    def _take(self, items: Iterable[Item], out: list[Event]) -> None:
        n0 = len(out)
        for it in items:
            if not isinstance(it, Event):
                if it.kind != "torn":
                    self.bad.append(it)
                continue
            if it.seq <= self._skip_through:
                continue
            out.append(it)
            self.last_type = it.type
            if it.seq > self.last_seq:
                self.last_seq = it.seq
            if it.type == "turn/start":
                d = it.data if isinstance(it.data, dict) else {}
                self.open_turn = d.get("turn", 0) if isinstance(d.get("turn"), int) else 0
            elif it.type == "turn/end":
                self.open_turn = None
        self.emitted += len(out) - n0

    def finish(self) -> list[Event]:
        """The writer is gone: release what a cold reader recovers from a torn zstd frame
        (its complete records, spec §1.3 step 5).  A torn JSONL line stays unreadable.
        If the frame is completed later after all, its rows are not emitted twice."""
        out = self.poll()
        if self.src is None or self.src.kind != "zstd" or not self.held:
            return out
        src, reader = self._opened()
        for seg in src.forward(self.pos):
            if seg.torn:
                got: list[Event] = []
                self._take(reader.decode_segment(seg), got)
                self.recovered += len(got)
                self._skip_through = max(self._skip_through, self.last_seq)
                out.extend(got)
        return out

    # ------------------------------------------------------------------ waiting / state
    def wait(self, timeout: float) -> bool:
        return self.watcher.wait(timeout)

    def wake(self) -> None:
        self.watcher.wake()

    @property
    def quiet_for(self) -> Optional[float]:
        """Seconds since this follower last saw the log grow; None when it never did."""
        return None if self._last_growth is None else max(0.0, self.clock() - self._last_growth)

    def lock(self) -> Optional[bool]:
        """The v1+ ``session.lock``'s verdict (None: no lock to ask, or a SQLite store)."""
        if self.sqlite:
            return None
        from .writerlock import lock_signal
        return lock_signal(self.path)

    @property
    def open_tail(self) -> bool:
        return self.open_turn is not None or self.held > 0

    def facts(self) -> WriterFacts:
        """What the last :meth:`state` went by (the status line says it)."""
        return {"lock": self.last_lock, "grewAt": self.last_growth_wall, "idleAfter": self.idle_after,
                "crashAfter": self.crash_after}

    def state(self) -> str:
        """``waiting`` | ``live`` | ``idle`` | ``complete`` | ``crashed`` (see the module doc)."""
        if self.src is None:
            return "waiting"
        self.last_lock = self.lock()
        return writer_verdict(open_tail=self.open_tail, grew_ago=self.quiet_for, idle_after=self.idle_after,
                              crash_after=self.crash_after, lock=self.last_lock,
                              seed_only=self.last_type == "session/end-seed", torn=self.held > 0)

    def follow(self, idle: Optional[float] = None, stop: Optional[threading.Event] = None,
               tick: float = 0.5) -> Iterator[list[Event]]:
        """Yield non-empty lists of new events until ``stop`` is set or ``idle`` seconds pass
        without a new row (the wait for a file to appear counts as idle time)."""
        last_row = self.clock()
        while not self._closed and not (stop is not None and stop.is_set()):
            evs = self.poll()
            if evs:
                last_row = self.clock()
                yield evs
                continue
            if idle is not None and self.clock() - last_row >= idle:
                return
            left = tick if idle is None else min(tick, max(0.0, idle - (self.clock() - last_row)))
            self.wait(max(0.001, left))

    def close(self) -> None:
        self._closed = True
        self.watcher.wake()
        self.watcher.close()
        if self.src is not None:
            self.src.close()
            self.src = None

    def __enter__(self) -> Follower:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _events(items: Iterable[Item]) -> list[Event]:
    return [it for it in items if isinstance(it, Event)]


def _last_event(r: LogReader, seg: Segment) -> Optional[Event]:
    """The newest event of ``seg`` (the last of ``r.decode_segment(seg)``'s events), its rows decoded
    newest first up to the first that holds one: rows decode independently, so a 1 MB segment is
    not decoded whole for its last row."""
    if seg.bad:
        return None
    for pos, off, line, raw, complete in reversed(list(seg.split_rows())):
        if complete and raw.strip():
            evs = _events(r.codec.decode_row(raw, pos=pos, offset=off, line=line)[0])
            if evs:
                return evs[-1]
    return None


# =========================================================================== list state

class _ListState(TypedDict):
    """The cached facts behind :func:`live_state` for one (path, session)."""
    stamp: tuple[int, ...]       # st_dev, st_ino, size, mtime_ns (SQLite: plus the -wal's size, mtime_ns)
    rev: Optional[str]           # SQLite: the session's revision
    open: bool                   # open turn or torn tail
    torn: bool                   # a torn (or unreadable) last row
    mtime: float
    last_time: Optional[float]   # the newest event's time (seconds)
    sqlite: bool
    changed_at: Optional[float]  # when this process last saw the log grow (stamp / revision moved); None: never
    seed_only: bool              # the log ends with its fork seed


_state_cache: dict[tuple[str, Optional[str]], _ListState] = {}


def live_state(path: str, session_id: Optional[str] = None, *, now: Optional[float] = None,
               idle_after: float = IDLE_AFTER_S, crash_after: float = CRASH_AFTER_S,
               details: Optional[dict[str, object]] = None, reader: Any = None) -> str:
    """``"live" | "idle" | "crashed" | "complete"`` for the session list (:func:`writer_verdict`).

    Growth is what this process saw between two of its own calls for the same (path, session):
    the file's size or mtime (SQLite: the session's revision) changed since the previous call;
    the first call never sees growth, whatever the file's age.  The waits are the follower's
    (``idle_after``, ``crash_after``): a file says when it grew (its mtime, however long ago the
    previous call was), so a list that polls every few seconds still says "live" for a writer
    that wrote within ``idle_after``, and the same state as a follower of the same file.
    The tail analysis is cached per (path, session) and redone only when the revision moves.
    A v1+ session's ``session.lock`` overrides the growth rule (:mod:`app.store.writerlock`), and
    a log that ends with its fork seed (``session/end-seed``, nothing after it) is a fresh child
    at rest, never live.  ``details`` (a dict) receives the facts behind the answer.
    ``reader``: the caller's open reader of the same log (its tail analysis is reused, not redone; left open).
    Raises FileNotFoundError / OpenError when the log cannot be opened.
    """
    from .faces import open_reader
    now = time.time() if now is None else now
    p = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(p):
        for n in SESSION_NAMES:
            if os.path.exists(os.path.join(p, n)):
                p = os.path.join(p, n)
                break
    sqlite = session_id is not None or _is_sqlite_path(p)
    key = (p, session_id)
    st = os.stat(p)
    stamp = _stamp(p, st, sqlite)
    cached = _state_cache.get(key)
    if cached is not None and cached["stamp"] == stamp:
        info = cached
    else:
        r = reader if reader is not None else open_reader(p, session_id)
        try:
            if sqlite:
                rev = r.source.revision()
                if cached is not None and cached.get("rev") == rev:
                    info = cached.copy()
                    info["stamp"] = stamp
                    _state_cache[key] = info
                    if details is not None:
                        details.update(info)
                    return _classify(info, now, idle_after, crash_after, None)
            else:
                rev = None
            open_, torn, last_time, last_type = _tail_facts(r)
        finally:
            if reader is None:
                r.close()
        # growth: the revision (SQLite) or the file's stamp moved since this process last looked; a file
        # says when it moved (its mtime, set by the kernel on the write we did not see), a store does not
        changed_at = None
        if cached is not None and (cached.get("rev") != rev if sqlite else True):
            changed_at = now if sqlite else min(now, st.st_mtime)
        info = {"stamp": stamp, "rev": rev, "open": open_, "torn": torn, "mtime": st.st_mtime, "last_time": last_time,
                "sqlite": sqlite, "changed_at": changed_at or (cached["changed_at"] if cached is not None else None),
                "seed_only": last_type == "session/end-seed"}
        _state_cache[key] = info
    if details is not None:
        details.update(info)
    sig = None
    if not sqlite:
        from .writerlock import lock_signal
        sig = lock_signal(p)
        if sig is not None and details is not None:
            details.update(lock=sig)
    return _classify(info, now, idle_after, crash_after, sig)


def _stamp(p: str, st: os.stat_result, sqlite: bool) -> tuple[int, ...]:
    """What must stay the same for a cached answer to hold: the file's identity, size and mtime
    (SQLite: and its ``-wal``'s size and mtime)."""
    stamp: tuple[int, ...] = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if sqlite:
        for suf in ("-wal",):
            try:
                s2 = os.stat(p + suf)
                stamp += (s2.st_size, s2.st_mtime_ns)
            except OSError:
                pass
    return stamp


def _tail_facts(r: LogReader) -> tuple[bool, bool, Optional[float], Optional[str]]:
    """(open turn or torn tail, torn tail, the newest event's time in seconds, its type) of an open log."""
    ts = r.tail_state()
    last_time = None
    last_type = None
    for seg in r.source.backward():
        last = _last_event(r, seg)
        if last is not None:
            last_time = last.time / 1000.0
            last_type = last.type
            break
    return ts.is_open or bool(ts.dropped), bool(ts.dropped), last_time, last_type


def _classify(info: _ListState, now: float, idle_after: float, crash_after: float, lock: Optional[bool]) -> str:
    at = info.get("changed_at")
    return writer_verdict(open_tail=info["open"], grew_ago=None if at is None else max(0.0, now - at),
                          idle_after=idle_after, crash_after=crash_after, lock=lock,
                          seed_only=bool(info.get("seed_only")), torn=bool(info.get("torn")))
