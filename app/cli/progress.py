"""Progress of a long command on stderr: one line redrawn in place, only when stderr is a terminal and
``--quiet`` is off (piped or redirected output never gets it, so scripts and ``--json`` readers see
nothing but the answer).

    with cli_progress(args, "export") as progress:
        export(reader, fmt, out, progress=progress)

Own code rather than ``tqdm`` or ``rich``: a callable taking ``(done, total)`` bytes is what every long
job here already reports (the window's progress panes take the same), the time left comes from the
same :class:`app.store.eta.Eta` the window uses, and a single redrawn line needs no dependency.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Any, Optional, TextIO
from collections.abc import Iterator

from ..log.jobctl import CLI_INTERVAL, Throttle
from ..store.eta import Eta, fmt_bytes, fmt_left


class Progress:
    """``progress(done, total)``: redraws ``label  42%  12.0 MB / 30.0 MB  about 3 s left`` at most every
    ``interval`` seconds (the one progress throttle, :class:`app.log.jobctl.Throttle`); :meth:`close`
    clears the line."""

    def __init__(self, label: str, stream: TextIO, interval: float = CLI_INTERVAL) -> None:
        self.label = label
        self.stream = stream
        self.throttle = Throttle(interval)
        self.eta = Eta()
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        self.eta.update(done, total)
        if not self.throttle.due(done, total):
            return
        e = self.eta
        left = fmt_left(e.seconds_left())
        line = f"{self.label}  {e.percent:3d}%  {fmt_bytes(e.done)} / {fmt_bytes(e.total)}" + (f"  {left}" if left else "")
        self.stream.write("\r\x1b[2K" + line)
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def enabled(args: Any, stream: Optional[TextIO] = None) -> bool:
    s = stream or sys.stderr
    try:
        tty = s.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and not getattr(args, "quiet", False)


@contextmanager
def cli_progress(args: Any, label: str, stream: Optional[TextIO] = None) -> Iterator[Optional[Progress]]:
    """A :class:`Progress` on ``stream`` (stderr) when it is a terminal and ``--quiet`` is off, else None."""
    s = stream or sys.stderr
    p = Progress(label, s) if enabled(args, s) else None
    try:
        yield p
    finally:
        if p is not None:
            p.close()
