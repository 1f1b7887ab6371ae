"""Progress and Cancel of a fork (:func:`app.store.forking.fork`): ``progress(done, total)`` in bytes.

The bar covers the copy (the seed's bytes as the child's writer copies them) then the verification
(the bytes compared, scaled into their share of the total), so it moves monotonically to 100 %.
Reports come from two threads (the row pass hands converted rows over, the writer's thread copies the
stored ranges), so they are serialized here, ``done`` never going back.

Cancel: the callback raises (a cancelled job's ``report``); the meter remembers that it stopped the
fork (:attr:`ForkMeter.stopped`), so the fork removes what it had made — the temporary is removed by
the publication itself, a child already published (cancelled while it was verified) and the folders
made for it by :func:`remove_made` — and a cancelled fork leaves nothing.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Optional

Progress = Callable[[int, int], None]


class ForkMeter:
    def __init__(self, progress: Optional[Progress], copy_total: int, verify_total: int) -> None:
        self._progress = progress
        self._lock = threading.Lock()
        self.copy_total = max(1, copy_total)
        self.verify_total = max(1, verify_total)
        self.done = 0
        self._vdone = 0
        self._vwant = 1
        self.stopped = False

    @property
    def total(self) -> int:
        return self.copy_total + self.verify_total

    def _send(self) -> None:
        if self._progress is None:
            return
        try:
            self._progress(self.done, self.total)
        except BaseException:
            self.stopped = True
            raise

    def copied(self, n: int) -> None:
        """``n`` more seed bytes copied (capped at the copy's share: converted rows may be longer)."""
        with self._lock:
            self.done = min(self.copy_total, self.done + n)
            self._send()

    def start_verify(self, want: int) -> None:
        """The copy is over; the verification compares ``want`` bytes."""
        with self._lock:
            self.done = max(self.done, self.copy_total)
            self._vwant, self._vdone = max(1, want), 0
            self._send()

    def verified(self, n: int) -> None:
        with self._lock:
            self._vdone = min(self._vwant, self._vdone + n)
            self.done = max(self.done, self.copy_total + self.verify_total * self._vdone // self._vwant)
            self._send()

    def finish(self) -> None:
        with self._lock:
            self.done = self.total
            self._send()


def missing_dirs(path: str) -> list[str]:
    """The folders of ``path`` (itself included) that do not exist yet, deepest first."""
    out = []
    p = os.path.abspath(path)
    while p and not os.path.isdir(p):
        out.append(p)
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return out


def remove_made(child: Optional[str], made: list[str]) -> None:
    """Undo a cancelled fork: its published child (if it got that far) and the folders made for it
    (deepest first, each only when empty)."""
    if child is not None:
        try:
            os.unlink(child)
        except FileNotFoundError:
            pass
    for d in made:
        try:
            os.rmdir(d)
        except OSError:
            break
