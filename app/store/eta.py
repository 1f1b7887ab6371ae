"""Progress arithmetic shared by the window's progress panes and the command line (no Qt, no I/O):
percent from bytes, a smoothed rate and the time left.

:class:`Eta` takes ``(done, total)`` samples (bytes; ``done`` never goes back: a smaller value is
ignored) and answers the percent and, once a little time has passed, the seconds left at the
recent rate (an exponentially weighted rate, so a pause or a burst moves the estimate gently).
"""
from __future__ import annotations

import time
from typing import Optional
from collections.abc import Callable


class Eta:
    WARMUP_S = 0.5               # no estimate before this much time (the first samples are noisy)
    ALPHA = 0.3                  # weight of the newest rate sample

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.start = clock()
        self.done = 0
        self.total = 0
        self._rate: Optional[float] = None
        self._t = self.start
        self._d = 0

    def update(self, done: int, total: int) -> None:
        now = self.clock()
        self.total = max(0, total)
        if done < self.done:
            return
        self.done = min(done, self.total) if self.total else done
        dt = now - self._t
        if dt >= 0.05:
            r = (self.done - self._d) / dt
            self._rate = r if self._rate is None else self.ALPHA * r + (1 - self.ALPHA) * self._rate
            self._t, self._d = now, self.done

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0

    def seconds_left(self) -> Optional[float]:
        if not self.total or self.clock() - self.start < self.WARMUP_S:
            return None
        rate = self._rate
        if not rate or rate <= 0:
            elapsed = self.clock() - self.start
            rate = self.done / elapsed if elapsed > 0 else 0
        if rate <= 0:
            return None
        return max(0.0, (self.total - self.done) / rate)


def fmt_left(seconds: Optional[float]) -> str:
    """``about 3 s left``, ``about 2 min left``; empty when not known yet."""
    if seconds is None:
        return ""
    if seconds < 1:
        return "less than a second left"
    if seconds < 90:
        return f"about {seconds:.0f} s left"
    if seconds < 5400:
        return f"about {seconds / 60:.0f} min left"
    return f"about {seconds / 3600:.1f} h left"


def fmt_bytes(n: int) -> str:
    for unit, k in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= k:
            return f"{n / k:.1f} {unit}"
    return f"{n} B"
