"""The fold checkpoints of a log as the row trace reads them: their bookkeeping only (issue 36).

:func:`app.log.query.trace.trace_from_checkpoints` reads of each checkpoint its seq, its position,
the turn start before it, the dispatches begun before that, the turns of its interval and the seqs
its interval cites; never the folds themselves (surface nodes, problems, header history, tool
history), which make nearly all of a ``.folds`` file.  :func:`trace_points` decodes the saved file
(:func:`app.store.indexcache.cached_checkpoints` writes it, and the window's whole-log pass) into
just those fields: msgspec skips the rest without making an object of it.  On the 4.3 GB log the
whole checkpoints, decoded to builtins and then converted, were the biggest part of the window's
``trace-why`` job; these points are a few hundred KB.

Only a file that :func:`~app.store.indexcache.cached_checkpoints` would take as a hit is read (same
checks: the signed digest, format, log identity, header, the hashed bytes before ``upto``); anything
else is None (the caller then goes the usual way).
"""
from __future__ import annotations

import bisect
import hashlib
from array import array
import mmap
import os
from typing import TYPE_CHECKING, Optional
from collections.abc import Callable

import msgspec

from ..log.jobctl import Cancel
from .cachefiles import open_cache_file
from .indexcache import (cache_slot, DIGEST_SIZE, MAGIC, FoldsMeta, cache_size_limit, folds_usable,
                         keyed_hasher)

if TYPE_CHECKING:
    from pathlib import Path

    from ..log.index.reader import LogReader


class _RawPoint(msgspec.Struct):
    """The fields of a :class:`~app.log.fold.checkpoints.Checkpoint` the row trace reads (its turns undecoded)."""
    seq: int
    pos: int
    turn_seq: int
    dispatches: int
    cited: Optional[tuple[int, int]]
    turns: msgspec.Raw


_TURNS = msgspec.json.Decoder(list[tuple[int, int]])


class TracePoint:
    """A checkpoint's bookkeeping; its turns (seq, dispatches before it) as one flat 64-bit array: the turn
    starts of the whole log are in the checkpoints, ~300 K tuples (11 MB) at 4.3 GB, read at one point a trace."""
    __slots__ = ("seq", "pos", "turn_seq", "dispatches", "cited", "_turns")

    def __init__(self, p: _RawPoint):
        self.seq, self.pos, self.turn_seq, self.dispatches = p.seq, p.pos, p.turn_seq, p.dispatches
        self.cited = p.cited
        self._turns = array("q", [x for t in _TURNS.decode(p.turns) for x in t])

    @property
    def turns(self) -> list[tuple[int, int]]:
        t = self._turns
        return [(t[k], t[k + 1]) for k in range(0, len(t), 2)]


class _Folds(FoldsMeta):
    """A ``.folds`` file as :func:`trace_points` reads it (the folds left undecoded)."""
    points: list[_RawPoint]


class TracePoints:
    """The checkpoints' bookkeeping (what :class:`~app.log.fold.checkpoints.Checkpoints` answers the
    trace: ``points`` and :meth:`nearest_index`)."""

    def __init__(self, points: list[TracePoint]):
        self.points = points
        self._seqs = [p.seq for p in points]

    def nearest_index(self, seq: int) -> int:
        return bisect.bisect_right(self._seqs, seq) - 1


def _mapped(path: Path, limit: int) -> Optional[mmap.mmap]:
    """The cache file ``path`` mapped read-only (as :func:`~app.store.cachefiles.read_bounded` reads it: None
    when missing, bigger than ``limit``, empty or no regular file of this user).  A map, not a copy: the
    ~17 MB ``.folds`` of the 4.3 GB log is read as file pages, no anonymous memory of the window's."""
    fd = open_cache_file(path)
    if fd is None:
        return None
    try:
        size = os.fstat(fd).st_size
        return mmap.mmap(fd, size, access=mmap.ACCESS_READ) if 0 < size <= limit else None
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)


def _decoded(blob: mmap.mmap) -> Optional[tuple[_Folds, list[TracePoint]]]:
    """The signed ``.folds`` file in ``blob``, its folds skipped, and its points (None: not signed by us, or of
    another shape)."""
    if len(blob) < len(MAGIC) + DIGEST_SIZE:
        return None
    with memoryview(blob) as view:
        body = view[:-DIGEST_SIZE]
        try:
            if bytes(body[:len(MAGIC)]) != MAGIC or keyed_hasher(body).digest() != bytes(view[-DIGEST_SIZE:]):
                return None
            m = msgspec.json.decode(body[len(MAGIC):], type=_Folds)
            pts = [TracePoint(p) for p in m.points]
            m.points = []                  # (their raw turns refer to the map: gone before it closes)
            return m, pts
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        finally:
            body.release()


def trace_points(reader: LogReader, every: Optional[int] = None) -> Optional[TracePoints]:
    """The saved checkpoints of ``reader``'s log, bookkeeping only (None: none saved that
    :func:`~app.store.indexcache.cached_checkpoints` would use)."""
    from ..log.fold.checkpoints import EVERY
    every = EVERY if every is None else every
    slot = cache_slot(reader, ".folds")
    if slot is None:
        return None
    src, ident, path = slot
    blob = _mapped(path, cache_size_limit(src.size))
    if blob is None:
        return None
    try:
        got = _decoded(blob)
    finally:
        blob.close()
    if got is None:
        return None
    m, points = got
    return TracePoints(points) if folds_usable(m, src, ident, every, hashlib.sha256(src.header_raw).hexdigest()) \
        else None


def window_trace(path: str, session_id: Optional[str], seq: int, cancelled: Cancel = None,
                 check: Optional[Callable[[], None]] = None, build: bool = True) -> Optional[dict[str, object]]:
    """The trace of row ``seq`` for the window's "why" (run in a worker thread): from the saved seq
    index, the checkpoints' bookkeeping (:func:`trace_points`) and the saved surface index, nothing of
    the whole log built or held; as :func:`app.store.requests.exact_trace` answers it.  When those are
    not saved (the whole-log pass of the open has not saved them yet) or cannot answer the log:
    ``build`` False -> None (the window waits for its pass, which saves them, and asks again: no
    second pass over the log beside it); True -> :func:`~app.store.requests.exact_trace` (builds
    them in a child, or traces from scratch)."""
    from ..log.query.trace import trace_from_checkpoints
    from .faces import open_reader
    from .indexcache import cached_index
    from .indexer import CACHE_SCAN_IN_PROCESS
    from .requests import exact_trace
    from .surface_cache import saved_surface
    r = open_reader(path, session_id)
    try:
        if r.header is not None and r.header.version in (0, None, 2, 3, 4) and r.source.kind in ("jsonl", "zstd"):
            idx, _ = cached_index(r, max_scan=CACHE_SCAN_IN_PROCESS)
            pts = trace_points(r) if idx is not None else None
            got = saved_surface(r) if pts is not None else None
            if pts is not None and got is not None:
                out = trace_from_checkpoints(r, seq, pts, got[0], check=check)
                if out is not None:
                    return out
    finally:
        r.close()
    return exact_trace(path, session_id, seq, cancelled=cancelled, check=check) if build else None
