"""Follow a session log while an agent writes it (spec §1.3, §1.5, §5, §6, §8 "Live").

* :class:`app.store.filewatch.Watcher` wakes a waiting reader when a file (or its directory)
  changes (inotify where it works, always a stat poll beside it).
* :class:`Follower` yields newly complete events of one log (JSONL, zstd, or one session of a
  SQLite store).  It keeps the physical position just after the last complete stored row
  (JSONL: byte after its newline; zstd: start of the next frame; SQLite: next seq) and
  decodes only the bytes past it.  A torn last line or torn last frame is **held**: nothing
  of it is emitted until it is complete (a write in progress looks exactly like that).
  It copes with the file appearing later (atomic publish of a new session: the path is
  watched before it exists), and tells how the writer is doing: ``live`` (grew within
  ``idle_after`` seconds), ``complete`` (quiet and the last turn is closed: the writer
  finished its turn), ``idle`` (quiet, open turn or torn tail, e.g. a long tool call),
  ``crashed`` (open turn or torn tail, quiet for ``crash_after`` seconds: the writer died).
  A file that shrinks or is replaced (repair, restore) is re-read from the start; rows
  already emitted are not emitted again (``resets`` counts these).
* :func:`live_state` is the session list's cheap view of the same: ``"live" | "idle" |
  "crashed" | "complete"`` from the file's modification time and the log's tail state.

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

IDLE_AFTER_S = 3.0          # no growth for this long: no longer "live"
CRASH_AFTER_S = 30.0        # open tail quiet for this long: the writer is presumed dead
LIST_LIVE_WINDOW_S = 15.0   # session list: modified this recently = live
LIST_CRASH_AFTER_S = 120.0  # session list: open tail older than this = crashed


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
        self._last_growth = clock()
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
        try:
            age = max(0.0, time.time() - self._mtime())
        except OSError:
            age = 0.0
        self._last_growth = self.clock() - age

    def _mtime(self) -> float:
        m = os.stat(self.path).st_mtime
        if self.sqlite:
            for suf in ("-wal", "-journal"):
                try:
                    m = max(m, os.stat(self.path + suf).st_mtime)
                except OSError:
                    pass
        return m

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
        if grew:
            self._last_growth = self.clock()
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
        self._last_growth = self.clock()
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
    def quiet_for(self) -> float:
        return max(0.0, self.clock() - self._last_growth)

    @property
    def open_tail(self) -> bool:
        return self.open_turn is not None or self.held > 0

    def state(self) -> str:
        """``waiting`` | ``live`` | ``idle`` | ``complete`` | ``crashed`` (see the module doc)."""
        if self.src is None:
            return "waiting"
        if not self.sqlite:
            from .writerlock import lock_signal
            sig = lock_signal(self.path)
            if sig is not None:             # v1+: the writer's session.lock decides
                return "live" if sig else ("crashed" if self.open_tail else "complete")
        if self.last_type == "session/end-seed" and not self.open_tail:
            return "complete"               # a fork child as published: a seed at rest, not a live writer
        quiet = self.quiet_for
        if quiet < self.idle_after:
            return "live"
        if not self.open_tail:
            return "complete"
        return "crashed" if quiet >= self.crash_after else "idle"

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
    mtime: float
    last_time: Optional[float]   # the newest event's time (seconds)
    sqlite: bool
    changed_at: Optional[float]  # SQLite: when the revision was last seen to move
    seed_only: bool              # the log ends with its fork seed


_state_cache: dict[tuple[str, Optional[str]], _ListState] = {}


def live_state(path: str, session_id: Optional[str] = None, *, now: Optional[float] = None,
               live_window: float = LIST_LIVE_WINDOW_S, crash_after: float = LIST_CRASH_AFTER_S,
               details: Optional[dict[str, object]] = None, reader: Any = None) -> str:
    """``"live" | "idle" | "crashed" | "complete"`` for the session list.

    * ``live``: the file was modified within ``live_window`` seconds (SQLite: the session's
      newest event time, or its revision changed since the previous call, within the window;
      the store's mtime is shared by all its sessions);
    * ``complete``: quiet, and the log ends between turns (no open turn, no torn tail);
    * ``idle``: quiet, open turn or torn tail, for less than ``crash_after`` seconds;
    * ``crashed``: open turn or torn tail, quiet for ``crash_after`` seconds or more.
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
                    return _classify(info, now, live_window, crash_after)
            else:
                rev = None
            open_, last_time, last_type = _tail_facts(r)
        finally:
            if reader is None:
                r.close()
        changed_at = now if (sqlite and cached is not None and cached.get("rev") != rev) else None
        info = {"stamp": stamp, "rev": rev, "open": open_, "mtime": st.st_mtime, "last_time": last_time,
                "sqlite": sqlite, "changed_at": changed_at or (cached["changed_at"] if cached is not None else None),
                "seed_only": last_type == "session/end-seed"}
        _state_cache[key] = info
    if details is not None:
        details.update(info)
    if not sqlite:
        from .writerlock import lock_signal
        sig = lock_signal(p)
        if sig is not None:
            if details is not None:
                details.update(lock=sig)
            return "live" if sig else ("crashed" if info["open"] else "complete")
    return _classify(info, now, live_window, crash_after)


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


def _tail_facts(r: LogReader) -> tuple[bool, Optional[float], Optional[str]]:
    """(open turn or torn tail, the newest event's time in seconds, its type) of an open log."""
    ts = r.tail_state()
    last_time = None
    last_type = None
    for seg in r.source.backward():
        last = _last_event(r, seg)
        if last is not None:
            last_time = last.time / 1000.0
            last_type = last.type
            break
    return ts.is_open or bool(ts.dropped), last_time, last_type


def _classify(info: _ListState, now: float, live_window: float, crash_after: float) -> str:
    if info.get("seed_only") and not info["open"]:
        return "complete"               # a fork child as published: its seed, no writer has resumed it
    if info["sqlite"]:
        # event times are the writer's wall clock: one from the future (skew, synthetic logs) is ignored
        marks = [t for t in (info.get("last_time"), info.get("changed_at")) if t is not None and t <= now + 5]
        last = max(marks) if marks else info["mtime"]
    else:
        last = info["mtime"]
    age = now - last
    if age < live_window:
        return "live"
    if not info["open"]:
        return "complete"
    return "crashed" if age >= crash_after else "idle"
