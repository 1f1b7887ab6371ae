"""The time scrubber's view model (issue 30): which position is wanted, the answers from the workers.

Qt-free but for QtCore.  :class:`ReplayModel` asks :func:`app.log.fold.asof.as_of` for a position in
a worker (:class:`~app.ui.workers.Jobs`, group ``replay``) and never on the UI thread:

* the first request of a session builds a :class:`ReplayContext` in a worker (the saved seq index,
  fold checkpoints and surface index, built by the child process when missing, as the Request tab
  does), then the side index's background pass (:func:`fill_job`, a few checkpoints at a time; a
  position asked for meanwhile fills what it needs itself);
* positions are coalesced: while one answer is being computed, newer positions only replace the
  wanted one, and when the answer arrives for a position no longer wanted it is dropped and the
  latest wanted position is asked for instead (dragging the slider never queues work);
* ``diff_from``: the answer also holds what changed since that position (:mod:`app.log.query.asofdiff`).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Optional

from PySide6.QtCore import QObject, Signal

from .workers import Cancelled, Jobs


class ReplayContext:
    """One session's replay state, shared by the workers (one at a time: :attr:`lock`)."""

    def __init__(self, path: str, session_id: Optional[str], reader: Any, cps: Any, surface: Any,
                 turns: list[int], steps: list[int], last: int) -> None:
        from ..log.fold.asof import SideIndex
        self.path, self.session_id = path, session_id
        self.reader, self.cps, self.surface = reader, cps, surface
        self.side = SideIndex(reader, cps) if cps is not None else None
        self.turns, self.steps, self.last = turns, steps, last
        self.lock = threading.Lock()

    def close(self) -> None:
        with self.lock:
            try:
                self.reader.close()
            except Exception:
                pass


def open_context(job: Any, path: str, session_id: Optional[str]) -> ReplayContext:
    """The replay context of a session (in a worker): saved caches, built by a child when missing."""
    from ..log.fold.asof import last_seq
    from ..store.faces import open_reader
    from ..store.indexcache import cached_checkpoints, cached_index, cached_surface
    from ..store.indexer import CACHE_SCAN_IN_PROCESS, build_index_isolated
    r = open_reader(path, session_id)
    cps = None
    indexed = r.header is not None and r.header.version in (0, None, 2, 3, 4) and r.source.kind in ("jsonl", "zstd") \
        and not r.envelope_free
    if indexed:
        idx, _ = cached_index(r, max_scan=CACHE_SCAN_IN_PROCESS)
        cps, _ = cached_checkpoints(r, build=False) if idx is not None else (None, "miss")
        if idx is None or cps is None:
            build_index_isolated(path, session_id, cancelled=lambda: job.cancelled, what="checkpoints")
            job.check()
            r.close()
            r = open_reader(path, session_id)
            cached_index(r)
            cps, _ = cached_checkpoints(r)
        si, _ = cached_surface(r)
    else:
        from ..log.fold.surface import index_for
        r.build_index()
        si = index_for(r)
    idx = r.index
    turns: list[int] = []
    steps: list[int] = []
    if idx is not None:
        for s, t in idx.marks():
            if t == "turn/start":
                turns.append(s)
            if t in ("turn/start", "turn/end", "assistant/message"):
                steps.append(s)
    job.check()
    return ReplayContext(path, session_id, r, cps, si, sorted(set(turns)), sorted(set(steps)), last_seq(r))


def fill_job(job: Any, ctx: ReplayContext, chunk: int = 4) -> int:
    """The background pass of the side index (in a worker): a few checkpoints at a time, the lock
    released in between so that an answer never waits for the whole pass."""
    if ctx.side is None or ctx.cps is None:
        return 0
    n = len(ctx.cps.points)
    for k in range(0, n, chunk):
        with ctx.lock:
            job.check()
            ctx.side.at(min(n - 1, k + chunk - 1), job.check)
        job.report(min(n, k + chunk), n)
    return n


def answer_job(job: Any, ctx: ReplayContext, seq: int, diff_from: Optional[int]) -> dict[str, Any]:
    """The state as of ``seq`` (and the diff from ``diff_from``), in a worker."""
    from ..log.fold.asof import as_of
    from ..log.query.asofdiff import diff_states
    t0 = time.perf_counter()
    with ctx.lock:
        job.check()
        st = as_of(ctx.reader, seq, ctx.cps, ctx.side, check=job.check, request=False)
        if diff_from is not None and diff_from != seq:
            before = as_of(ctx.reader, diff_from, ctx.cps, ctx.side, check=job.check, request=False)
            st["diff"] = diff_states(before, st, ctx.surface) if diff_from < seq else \
                diff_states(st, before, ctx.surface)
    st["elapsed"] = time.perf_counter() - t0
    return st


class ReplayModel(QObject):
    """The wanted position and the latest answer (see the module doc)."""

    ready = Signal()                   # the context is loaded (ticks, last seq known)
    answered = Signal(object)          # the state dict of the wanted position
    failed = Signal(str)

    def __init__(self, jobs: Jobs, parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.ctx: Optional[ReplayContext] = None
        self.key: Optional[tuple[str, Optional[str]]] = None
        self.wanted: Optional[int] = None
        self.diff_from: Optional[int] = None
        self.busy = False
        self.loading = False
        self.filled = False                # the side index's background pass is done
        self.answer: Optional[dict[str, Any]] = None
        self.dropped = 0                   # answers that arrived for a position no longer wanted
        self.asked = 0                     # answers asked of the workers

    def open(self, path: Optional[str], session_id: Optional[str]) -> None:
        """The session to scrub (None: none); loads its context in a worker."""
        key = (path, session_id) if path else None
        if key == self.key:
            return
        self.reset()
        self.key = key
        if key is None:
            return
        self.loading = True
        self.jobs.submit(open_context, path, session_id, name="replay context", group="replay-context",
                         on_done=lambda ctx, k=key: self._opened(k, ctx), on_error=self._failed)

    def reset(self) -> None:
        self.jobs.cancel_group("replay-context")
        self.jobs.cancel_group("replay-fill")
        self.jobs.cancel_group("replay")
        if self.ctx is not None:
            self.ctx.close()
        self.ctx, self.key, self.wanted, self.answer = None, None, None, None
        self.busy = self.loading = False

    def _opened(self, key: tuple, ctx: ReplayContext) -> None:
        if key != self.key:
            ctx.close()
            return
        self.ctx, self.loading = ctx, False
        self.filled = False
        self.ready.emit()
        self._next()
        self.jobs.submit(fill_job, ctx, name="replay side index", group="replay-fill",
                         on_done=lambda _n, c=ctx: self._filled(c), on_error=self._failed)

    def _filled(self, ctx: ReplayContext) -> None:
        if ctx is self.ctx:
            self.filled = True

    def _failed(self, msg: str) -> None:
        self.loading = self.busy = False
        if msg != "cancelled":
            self.failed.emit(msg)

    def request(self, seq: int, diff_from: Optional[int] = None) -> None:
        """Want the state at ``seq``: asked now, or as soon as the answer being computed arrives."""
        self.wanted, self.diff_from = seq, diff_from
        self._next()

    def _next(self) -> None:
        if self.ctx is None or self.busy or self.wanted is None:
            return
        if self.answer is not None and self.answer["seq"] == self.wanted and \
                self.answer.get("diffFrom") == self.diff_from:
            return
        self.busy = True
        self.asked += 1
        seq, diff_from = self.wanted, self.diff_from
        self.jobs.submit(answer_job, self.ctx, seq, diff_from, name="replay", group="replay",
                         on_done=lambda st, s=seq, d=diff_from: self._done(s, d, st), on_error=self._error)

    def _done(self, seq: int, diff_from: Optional[int], st: dict[str, Any]) -> None:
        self.busy = False
        st["diffFrom"] = diff_from
        if seq != self.wanted or diff_from != self.diff_from:      # stale: the slider moved on
            self.dropped += 1
            self._next()
            return
        self.answer = st
        self.answered.emit(st)

    def _error(self, msg: str) -> None:
        self.busy = False
        if msg == Cancelled.__name__ or msg == "cancelled":
            return
        self.failed.emit(msg)
