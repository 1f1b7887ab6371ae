"""The work done ahead of an opened session, cached (issue 29): the fold checkpoints, the surface index and
the outline, each saved in its own cache file as before (``.folds``, ``.surface``, ``.outline`` beside the
seq index: :func:`~app.store.indexcache.cached_checkpoints`, :func:`~app.store.surface_cache.cached_surface`,
:func:`~app.store.outline_cache.cached_outline`), but the ones missing are built together by ONE streaming
read of the log (:func:`app.log.query.ahead.build_ahead`), not one pass each.

Used by the window's background child (the ``scan`` worker's "outline" task, low priority, paused while
the user scrolls, killed when another session opens; it hands the surface index to the window's row
statuses too) and by ``session-lens index PATH --all``."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Optional

from ..log.fold.checkpoints import EVERY, Checkpoints
from ..log.fold.surface import ScanEnd, SurfaceIndex
from ..log.index.reader import LogReader
from ..log.query.ahead import Ahead, build_ahead
from ..log.query.outline import Outline
from .folds_stream import FoldsSpool
from .indexcache import cached_checkpoints
from .surface_cache import cached_surface
from .outline_cache import cached_outline


class _CutShort(Exception):
    """The shared pass was cancelled: its checkpoints and surface index are not kept."""


class _SharedPass:
    """Runs :func:`build_ahead` once, the first time a cache misses, and hands each its product."""

    def __init__(self, reader: LogReader, progress: Optional[Callable[[int, int], None]],
                 cancel: Optional[Callable[[], bool]]) -> None:
        self.reader, self.progress, self.cancel = reader, progress, cancel
        self.result: Optional[Ahead] = None
        self.sink: Optional[FoldsSpool] = None      # (the checkpoints streamed to their cache file)
        self.seconds = 0.0

    def run(self) -> Ahead:
        if self.result is None:
            t = time.perf_counter()
            self.result = build_ahead(self.reader, self.progress, self.cancel, sink=self.sink)
            self.seconds = time.perf_counter() - t
        return self.result

    def checkpoints(self) -> Checkpoints:
        a = self.run()
        if not a.complete:
            raise _CutShort
        return a.checkpoints

    def surface(self, end: ScanEnd) -> SurfaceIndex:
        a = self.run()
        if not a.complete:
            raise _CutShort
        end.pos, end.line = a.surface_end.pos, a.surface_end.line
        return a.surface

    def outline(self) -> Outline:
        return self.run().outline

    def release(self) -> None:
        """Drop the checkpoints and the surface index once saved (issue 36: the outline is written next,
        and the child's peak is where all three are held at once)."""
        if self.result is not None:
            self.result.checkpoints = Checkpoints()
            self.result.surface = SurfaceIndex(self.reader.version or 0)


def _checkpoints(reader: LogReader, shared: _SharedPass) -> str:
    """The checkpoints' status: "hit", else built by the pass, each point streamed to the cache file as it
    is made (:mod:`app.store.folds_stream`; the file published when the pass completes)."""
    status = cached_checkpoints(reader, build=False)[1]
    spool = FoldsSpool.open(reader, EVERY) if status == "miss" else None
    if spool is None:
        return status if status == "hit" else cached_checkpoints(reader, make=shared.checkpoints)[1]
    shared.sink = spool
    try:
        rest = shared.checkpoints()
        try:
            spool.publish(rest)
        except (OSError, ValueError):      # (as ``cached_checkpoints``: not saved)
            pass
    finally:
        spool.close()
    return "built"


def cached_ahead(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
                 cancel: Optional[Callable[[], bool]] = None,
                 on_surface: Optional[Callable[[SurfaceIndex], None]] = None) -> tuple[Outline, dict[str, Any]]:
    """(the outline, {"checkpoints"|"surface"|"outline": status, "pass": seconds of the one read (0: every
    product was cached)}).  A cancelled pass returns the outline so far (``complete`` False) and keeps nothing.
    ``on_surface(index)``: the surface index when this pass built it, before the outline (the window's row
    statuses take it: the first open reads the log once); one found in the cache is not handed over (the window
    reads the cache itself, and a cached index holds views of its file, which cannot go to another process)."""
    shared = _SharedPass(reader, progress, cancel)
    out: dict[str, Any] = {}
    try:
        out["checkpoints"] = _checkpoints(reader, shared)
        sindex, out["surface"] = cached_surface(reader, make=shared.surface)
    except _CutShort:
        assert shared.result is not None
        return shared.result.outline, {**out, "pass": round(shared.seconds, 6), "cancelled": True}
    if on_surface is not None and out["surface"] == "built":    # (built here; one read from the cache is lazy:
        on_surface(sindex)                                       #  views of the file, the window reads it itself)
    del sindex
    shared.release()
    ol, out["outline"] = cached_outline(reader, progress, cancel, make=shared.outline)
    out["pass"] = round(shared.seconds, 6)
    return ol, out
