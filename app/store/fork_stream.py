"""A fork's seed on its way to the write-behind writer: its pieces (:class:`Piece`); the JSONL seed handed from the
row pass to the writer's thread as it is made (:class:`SeedStream`), with a short thread switch interval while
it is fed (:func:`quick_switches`); the zstd seed's runs of pieces (:func:`runs`) and the stored bytes of its
copied frames (:func:`frames_of`)."""
from __future__ import annotations

import sys
import threading
import zlib
from collections import deque
from collections.abc import Iterable, Iterator
from typing import NamedTuple, Optional, Union

from .fork_progress import ForkMeter
from .fork_verify import raw_range
from .publish import FileRange

Chunk = Union[bytes, FileRange]          # what a RawText carries into a JSONL child


class Piece(NamedTuple):
    """A piece of the seed: ``range`` raw JSONL bytes ``[start, stop)`` copied as stored, ``frames``
    whole zstd frames ``[start, stop)`` copied as stored, or ``text``: rows written by us (``data``)."""
    kind: str
    start: int = 0
    stop: int = 0
    data: bytes = b""


class SeedAbandoned(Exception):
    """The seed stream's producer failed (or the stream was already consumed by a failed write)."""


class SeedStream:
    """The JSONL seed's chunks handed from the fork's row pass (the calling thread) to the writer's
    thread as they are made: the kernel copy of stored ranges (``os.copy_file_range`` releases the
    GIL) runs while the flagged segments are read and converted, instead of after.

    One pass only: the writer retrying a failed batch finds the stream spent and fails again, so a
    failed fork never publishes a child from part of its seed.  A producer failure (:meth:`fail`)
    makes the writer's pass raise, so its temporary is removed and nothing is published.  Text not
    yet written is bounded (``max_text`` bytes: the producer waits); byte ranges cost nothing."""

    def __init__(self, max_text: int = 64 << 20) -> None:
        self._cv = threading.Condition()
        self._items: deque[Chunk] = deque()
        self._text = 0
        self._max_text = max_text
        self._done = False
        self._error: Optional[BaseException] = None
        self._taken = False
        self.broken = False             # the writer stopped taking chunks (its write failed)

    def put(self, chunk: Chunk) -> bool:
        """Hand one chunk over; False when the writer has stopped taking them."""
        with self._cv:
            if not isinstance(chunk, FileRange):
                while self._text > self._max_text and not self.broken:
                    self._cv.wait()
                self._text += len(chunk)
            if self.broken:
                return False
            self._items.append(chunk)
            self._cv.notify_all()
            return True

    def end(self) -> None:
        with self._cv:
            self._done = True
            self._cv.notify_all()

    def fail(self, error: BaseException) -> None:
        with self._cv:
            self._error, self._done = error, True
            self._cv.notify_all()

    def __iter__(self) -> Iterator[Chunk]:
        with self._cv:
            if self._taken:
                raise SeedAbandoned("the seed stream was taken by a write that failed: it is not written again")
            self._taken = True
        finished = False
        try:
            while True:
                with self._cv:
                    while not self._items and not self._done:
                        self._cv.wait()
                    if not self._items:
                        if self._error is not None:
                            raise SeedAbandoned(f"the seed rows could not be made: {self._error}")
                        finished = True
                        return
                    c = self._items.popleft()
                    if not isinstance(c, FileRange):
                        self._text -= len(c)
                        self._cv.notify_all()
                yield c
        finally:
            if not finished:
                with self._cv:
                    self.broken = True
                    self._cv.notify_all()


_SWITCH = 1e-4                  # the interpreter's thread switch interval while a seed is fed (s)
_switch_lock = threading.Lock()
_switch_users = [0, 0.0]        # forks feeding now, the interval before the first of them


def quick_switches(on: bool) -> None:
    """While the row pass (Python, holding the GIL) feeds the writer, the writer's thread needs the GIL
    back after each kernel copy (a few calls per stored range): with the default 5 ms switch interval it
    waits up to that long each time, and the copy mostly waits for the pass instead of overlapping it."""
    with _switch_lock:
        if on:
            if not _switch_users[0]:
                _switch_users[1] = sys.getswitchinterval()
                sys.setswitchinterval(min(_SWITCH, _switch_users[1]))
            _switch_users[0] += 1
        else:
            _switch_users[0] -= 1
            if not _switch_users[0]:
                sys.setswitchinterval(_switch_users[1])


def runs(pieces: Iterable[Piece]) -> Iterator[tuple[str, list[Piece]]]:
    """Group consecutive pieces of one kind (frames / text)."""
    kind, run = "", list[Piece]()
    for p in pieces:
        if p.kind != kind and run:
            yield kind, run
            run = []
        kind = p.kind
        run.append(p)
    if run:
        yield kind, run


def frames_of(fd: int, run: list[Piece], acc: list[int], copied: list[int], crc: list[int],
               meter: ForkMeter) -> Iterator[bytes]:
    """The stored bytes of whole frames; ``acc`` = [CRC-32, bytes] of this run, ``crc`` of all
    frames copied so far."""
    for p in run:
        for chunk in raw_range(fd, p.start, p.stop, acc):
            acc[1] += len(chunk)
            copied[0] += len(chunk)
            crc[0] = zlib.crc32(chunk, crc[0])
            meter.copied(len(chunk))
            yield chunk
