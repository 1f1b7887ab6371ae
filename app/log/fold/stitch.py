"""Client stitch of a history tail page and live rows (spec §8 "Live", "Client stitch").

Pure state machine: no I/O, no Qt, no clock.  The caller owns the tail-page reads and the
live stream; the :class:`Stitcher` decides what the view shows.

Protocol (what dsh's client does, made explicit):

1. ``subscribed(last_seq)``: the live stream is open; ``last_seq`` is the last seq the stream
   knew when it opened (``-1``: empty).  Live rows that arrive from now on are offered with
   :meth:`Stitcher.offer`; while no page is installed (or a refetch is in flight) they are
   **buffered**, never shown.
2. ``install(page_events)``: the tail page arrived.  The first install (and any install after
   :meth:`reset`) *reinstalls* the view: ``baseSeq`` = first seq of the page, ``tail`` = last.
   The buffer is replayed: ``seq <= tail`` dropped, ``seq == tail+1`` appended (repeatedly),
   a remaining ``seq > tail+1`` means rows are missing: keep them buffered and refetch.
   After the first install, if ``subscribed.lastSeq > tail`` (the page is older than the
   stream), refetch **once**.
3. ``offer(events)`` (live rows, any order, duplicates allowed): ``seq <= tail`` dropped,
   ``seq == tail+1`` appended (then any buffered successors), ``seq > tail+1`` buffered and a
   refetch requested (one at a time: while a refetch is in flight, rows are only buffered).
4. A refetched page that overlaps or touches the view (``page.base <= tail+1``) only
   *extends* it (its rows with ``seq > tail`` are appended, so the view keeps its older
   pages and scroll position); a page that starts after ``tail+1`` reinstalls the view; a
   page entirely older than the view (stale snapshot) changes nothing and, if rows are still
   missing, the refetch is requested again.

Every call returns a :class:`Step`: ``reinstall`` (the events of the new view, or None),
``appended`` (events to add at the end, in seq order, each exactly previous+1) and
``refetch`` (the caller must read the tail page again and call :meth:`install`).

Invariant (tested with hypothesis in ``tests/test_stitch.py``): the view (last reinstall +
appends) is always a contiguous run of the true log, never a duplicate; once every row was
delivered at least once and refetches were served, it ends at the true last seq.
Items only need a ``seq`` attribute (``Event``) or key (event dicts).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional
from collections.abc import Iterable


def seq_of(ev: Any) -> int:
    s = ev.get("seq") if isinstance(ev, dict) else getattr(ev, "seq", None)
    if not isinstance(s, int) or isinstance(s, bool):
        raise ValueError(f"live row without an integer seq: {ev!r}")
    return s


@dataclass
class Step:
    reinstall: Optional[list[Any]] = None          # new view contents (tail page events), or None
    appended: list[Any] = field(default_factory=list)
    refetch: bool = False

    def __bool__(self) -> bool:
        return self.reinstall is not None or bool(self.appended) or self.refetch


class Stitcher:
    """See the module docstring.  States: ``"idle"`` (nothing installed), ``"loading"``
    (a tail page is being read; live rows buffer), ``"ready"``."""

    def __init__(self, max_buffer: int = 1_000_000):
        self.base_seq: Optional[int] = None
        self.tail_seq: int = -1
        self.subscribed_last: Optional[int] = None
        self.installed = False
        self.loading = False
        self.buffer: dict[int, Any] = {}
        self.refetches = 0                 # tail-page refetches requested (all causes)
        self.stale_installs = 0            # consecutive refetched pages that did not advance the tail
        self.max_buffer = max_buffer
        self._checked_subscribed = False
        self._force_reinstall = True

    # ------------------------------------------------------------------ state
    @property
    def state(self) -> str:
        if self.loading:
            return "loading"
        return "ready" if self.installed else "idle"

    @property
    def missing(self) -> Optional[tuple[int, int]]:
        """(first missing seq, first buffered seq) while rows are missing, else None."""
        if not self.buffer:
            return None
        lo = min(self.buffer)
        return (self.tail_seq + 1, lo) if lo > self.tail_seq + 1 else None

    def reset(self) -> None:
        """The log was replaced/rewritten: the next install reinstalls, buffered rows are kept
        (they are re-checked against the new page)."""
        self._force_reinstall = True
        self._checked_subscribed = False

    # ------------------------------------------------------------------ events
    def subscribed(self, last_seq: int) -> Step:
        """The live stream opened knowing ``last_seq`` (-1: empty log)."""
        self.subscribed_last = int(last_seq)
        self._checked_subscribed = False
        if self.installed and not self.loading:
            return self._check_subscribed(Step())
        return Step()

    def begin_load(self) -> None:
        """A tail page read was started by the caller (not needed after a returned refetch)."""
        self.loading = True

    def install(self, page_events: Iterable[Any]) -> Step:
        """The tail page arrived (events in seq order; bad rows already removed)."""
        events = list(page_events)
        seqs = [seq_of(e) for e in events]
        self.loading = False
        step = Step()
        first_install = self._force_reinstall or not self.installed
        if not events:
            if first_install:
                self.installed = True
                self._force_reinstall = False
                self.base_seq, self.tail_seq = None, -1
                step.reinstall = []
            # an empty refetched page says nothing new: keep the view
        else:
            page_base, page_tail = seqs[0], max(seqs)
            if first_install or page_base > self.tail_seq + 1:
                self.installed = True
                self._force_reinstall = False
                self.base_seq, self.tail_seq = page_base, page_tail
                step.reinstall = events
                self.stale_installs = 0
            elif page_tail > self.tail_seq:
                step.appended = [e for e, s in zip(events, seqs) if s > self.tail_seq]
                self.tail_seq = page_tail
                self.stale_installs = 0
            else:
                self.stale_installs += 1
        self._drain(step)
        if not step.refetch:
            self._check_subscribed(step)
        return step

    def offer(self, events: Iterable[Any]) -> Step:
        """Live rows (any order, duplicates allowed)."""
        step = Step()
        for e in events:
            s = seq_of(e)
            if self.installed and s <= self.tail_seq:
                continue
            if s not in self.buffer:
                if len(self.buffer) >= self.max_buffer:
                    raise OverflowError(f"more than {self.max_buffer} live rows buffered")
                self.buffer[s] = e
        if self.installed and not self.loading:
            self._drain(step)
        return step

    # ------------------------------------------------------------------ internals
    def _drain(self, step: Step) -> None:
        buf = self.buffer
        for s in [s for s in buf if s <= self.tail_seq]:
            del buf[s]
        nxt = self.tail_seq + 1
        while nxt in buf:
            step.appended.append(buf.pop(nxt))
            self.tail_seq = nxt
            nxt += 1
        if self.base_seq is None and step.appended:
            self.base_seq = seq_of(step.appended[0])
        if buf:                              # everything left is > tail+1: rows are missing
            self._request(step)

    def _check_subscribed(self, step: Step) -> Step:
        if not self._checked_subscribed and self.subscribed_last is not None and self.installed:
            self._checked_subscribed = True
            if self.subscribed_last > self.tail_seq:
                self._request(step)
        return step

    def _request(self, step: Step) -> None:
        if not self.loading:
            self.loading = True
            self.refetches += 1
            step.refetch = True
