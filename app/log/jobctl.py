"""The contract of background work, shared by every layer (no Qt, no threads of its own).

Issue 34 item 3: one way to cancel and one progress throttle for all background work, threads and
child processes alike.  The job runner of the window (``app.ui.workers.Jobs``) runs the work; this
module holds what the work itself sees, so that core code (``app.log``), the store and the CLI take
it without importing Qt:

- :class:`Cancelled`: the one exception a cancelled piece of work raises (``app.ui.workers`` and the
  store's full-text writer re-export it);
- :class:`CancelToken`: what work polls - ``token.cancelled`` (a bool) and ``token.check()`` (raises
  :class:`Cancelled`).  A window job (``app.ui.workers.Job``) is one; :class:`Token` is the plain one
  (CLI, tests, children);
- :func:`is_cancelled`: the one test of every form a ``cancel`` argument takes in the older APIs (a
  token, a ``threading.Event``-like flag, a callable answering "cancelled?", None), so those APIs
  keep their signatures while asking one question;
- :class:`Throttle`: the one progress throttle.  The window's job progress (40 ms), the CLI's progress
  line (100 ms) and the progress lines children write to their parent all pass through it.

It lives in ``app.log`` because that is the layer every other one may import (tests/test_layering.py:
``app.log`` imports nothing of ours, ``app.store`` only ``app.log``); it is a top-level module of the
package, not one of its subpackages, because it belongs to none of format, source, index, fold or query.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Optional, Protocol, Union, runtime_checkable

JOB_INTERVAL = 0.04        # the window's progress bars and a child's progress lines: 25 a second at most
CLI_INTERVAL = 0.1         # a terminal line redrawn in place: 10 a second at most


class Cancelled(Exception):
    """Raised inside a piece of work when its job was cancelled."""


@runtime_checkable
class CancelToken(Protocol):
    """What a piece of work polls to learn it should stop."""

    @property
    def cancelled(self) -> bool: ...

    def check(self) -> None:
        """Raise :class:`Cancelled` when cancelled."""


class Token:
    """A plain :class:`CancelToken`: :meth:`cancel` sets it (from any thread: one bool store) and calls the
    hooks given to :meth:`on_cancel`, like a window job's (work blocked in a pipe interrupts itself)."""

    __slots__ = ("name", "_cancelled", "_hooks")

    def __init__(self, name: str = "job") -> None:
        self.name = name
        self._cancelled = False
        self._hooks: list[Callable[[], object]] = []

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        self._cancelled = True
        for fn in list(self._hooks):
            fn()

    def on_cancel(self, fn: Callable[[], object]) -> None:
        """Call ``fn`` (on the cancelling thread) when cancelled; at once if it already is."""
        self._hooks.append(fn)
        if self._cancelled:
            fn()

    def check(self) -> None:
        if self._cancelled:
            raise Cancelled(self.name)


class _Flag(Protocol):
    def is_set(self) -> bool: ...


# every form a ``cancel`` argument takes: a token, an Event-like flag, a callable, or nothing
Cancel = Union[CancelToken, _Flag, Callable[[], object], None]


def is_cancelled(cancel: Cancel) -> bool:
    """Whether ``cancel`` (any form of :data:`Cancel`) says stop."""
    if cancel is None:
        return False
    flag = getattr(cancel, "cancelled", None)
    if isinstance(flag, bool):
        return flag
    is_set = getattr(cancel, "is_set", None)
    if is_set is not None:
        return bool(is_set())
    return bool(cancel()) if callable(cancel) else False


class Throttle:
    """The one progress throttle: :meth:`due` answers whether a ``(done, total)`` report goes out now -
    the first one, the last one (``done >= total``) and otherwise at most one per ``interval`` seconds."""

    __slots__ = ("interval", "_clock", "_last")

    def __init__(self, interval: float = JOB_INTERVAL, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self._clock = clock
        self._last: Optional[float] = None

    def due(self, done: int, total: int) -> bool:
        now = self._clock()
        if self._last is not None and now - self._last < self.interval and done < total:
            return False
        self._last = now
        return True

    def wrap(self, report: Callable[[int, int], object]) -> Callable[[int, int], None]:
        """``report`` called only when :meth:`due` (a progress callback throttled)."""
        def throttled(done: int, total: int) -> None:
            if self.due(done, total):
                report(done, total)
        return throttled
