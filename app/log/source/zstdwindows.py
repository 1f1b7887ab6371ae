"""The decoded rows of one zstd frame, streamed in bounded windows (:class:`FrameWindows`, the forward
read of :class:`~app.log.source.zstdsource.ZstdSource`), and the segment a frame's rows come in."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, TypedDict
from collections.abc import Callable, Generator, Iterator

from ..format.limits import FRAME_ROWS_FREE, MAX_FRAME_BYTES, MAX_ROW_BYTES, MIN_STORED_PER_ROW, frame_rows_limit
from ..format.model import BadKind
from .sources import RowPos, Segment, newlines
from .zstdframes import Buf, Plain, iter_plain_fed


class FrameState(TypedDict, total=False):
    """What :meth:`ZstdSource._windows` says about the frame it streamed."""
    good: bool                 # the whole frame decoded as rows
    error: Optional[str]       # the reason when nothing decoded at all
    n: int                     # plaintext bytes
    lines: int                 # rows (lines) yielded


@dataclass(slots=True)
class FrameSegment(Segment):
    """A decoded frame; ``base`` is the offset of ``data[0]`` inside the frame's plaintext."""
    base: int = 0

    def row_pos(self, off: int) -> RowPos:
        return (self.pos, self.base + off)


def _after_newlines(data: bytes, k: int) -> int:
    """The offset just after the ``k``-th newline of ``data`` (0 for k <= 0)."""
    at = 0
    for _ in range(max(0, k)):
        at = data.index(b"\n", at) + 1
    return at


class FrameWindows:
    """The decoded rows of the frame ``[at, end)``, streamed in bounded windows (iterate it once).

    Each window is cut after its last newline (``base`` = its offset in the frame's
    plaintext).  A row over :data:`MAX_ROW_BYTES` is skipped as an ``over-limit`` bad
    segment; plaintext past :data:`MAX_FRAME_BYTES` and a decoding error become a final
    bad segment.  ``torn``: a torn final frame (its incomplete last record is dropped).
    ``state`` receives ``good`` (the whole frame decoded as rows), ``error`` (the reason
    when nothing decoded at all), ``n`` (plaintext bytes), ``lines``.  ``problem(code, message, at)``
    reports a frame over a limit or corrupt after some rows."""

    def __init__(self, at: int, end: int, view: Buf, text_offset: int, line0: Optional[int], torn: bool,
                 state: Optional[FrameState], problem: Callable[[str, str, int], None]):
        self.at, self.end, self.view, self.text_offset, self.line0, self.torn = at, end, view, text_offset, line0, torn
        self.problem = problem
        self.st: FrameState = state if state is not None else {}      # (set when the iteration starts)
        self.pending = b""                      # incomplete last record carried to the next window
        self.skip_from: Optional[int] = None    # plaintext offset of an over-limit record being skipped
        self.base = 0                           # plaintext offset of pending[0]
        self.lines = 0
        self.max_rows = frame_rows_limit(end - at)
        self.fed = [0]                          # stored bytes of the frame fed to the decoder so far
        self.yielded = False

    def seg(self, data: bytes, b: int, bad: Optional[str] = None, kind: BadKind = "corrupt-frame") -> FrameSegment:
        return FrameSegment(pos=self.at, end=self.end, data=data, base=b,
                            text_offset=self.text_offset + b if self.text_offset >= 0 else -1,
                            line0=self.line0 + self.lines if self.line0 is not None else None,
                            torn=self.torn and bad is None, bad=bad, bad_kind=kind)

    def __iter__(self) -> Iterator[FrameSegment]:
        st = self.st
        st.update({"good": True, "error": None, "n": 0, "lines": 0})
        it = iter_plain_fed(self.view, self.fed)
        eof, err = False, None
        while True:
            try:
                piece = next(it)
            except StopIteration as stop_:
                eof, err = stop_.value
                break
            st["n"] += len(piece)
            over, limit = yield from self._piece(piece)
            if over or st["n"] > MAX_FRAME_BYTES:
                yield from self._cut_short(over, limit, it)
                return
        st["lines"] = self.lines
        yield from self._end(eof, err)

    def _piece(self, piece: bytes) -> Generator[FrameSegment, None, tuple[bool, int]]:
        """The rows of one more piece of plaintext: (over the frame's row limit, that limit)."""
        over, limit = False, 0
        if self.skip_from is not None:
            nl = piece.find(b"\n")
            if nl < 0:
                self.base += len(piece)
            else:
                self.base += nl + 1
                yield self.seg(b"", self.skip_from, f"row of {self.base - self.skip_from - 1} bytes in the zstd frame "
                                                    f"at byte {self.at} is over the {MAX_ROW_BYTES >> 20} MiB row "
                                                    "limit (skipped)", "over-limit")
                self.yielded = True
                self.lines += 1
                self.skip_from = None
                self.pending = piece[nl + 1:]
        else:
            self.pending = self.pending + piece if self.pending else piece
        if self.skip_from is None:
            pending = self.pending
            cut = pending.rfind(b"\n") + 1
            # (rows per stored byte so far: a frame denser than any dsh writes is cut as soon as it shows)
            limit = min(self.max_rows, frame_rows_limit(self.fed[0]))
            rows = newlines()(memoryview(pending)[:cut]) if cut else 0     # (pending.count(b"\n", 0, cut); in C)
            over = bool(cut) and self.lines + rows > limit
            if over:
                cut = _after_newlines(pending, limit - self.lines)    # (the rows up to the limit)
                rows = pending.count(b"\n", 0, cut)
            if cut:
                yield self.seg(pending[:cut], self.base)
                self.yielded = True
                self.lines += rows
                self.base += cut
                self.pending = pending = pending[cut:]
            if len(pending) > MAX_ROW_BYTES:
                self.skip_from, self.base, self.pending = self.base, self.base + len(pending), b""
        return over, limit

    def _cut_short(self, over: bool, limit: int, it: Plain) -> Iterator[FrameSegment]:
        """The frame's last, bad segment when it is past its row limit (``over``) or its plaintext limit."""
        at, fed = self.at, self.fed
        self.st["good"] = False
        b = self.base if self.skip_from is None else self.skip_from
        if over:
            yield self.seg(b"", b, f"zstd frame at byte {at} holds more than {limit} rows in its first {fed[0]} stored "
                                   f"bytes, past the frame row limit (one row per {MIN_STORED_PER_ROW} stored bytes "
                                   f"after {FRAME_ROWS_FREE}: tiny rows expanding far past their stored size); the rest "
                                   "of the frame is skipped", "over-limit")
            it.close()
            self.problem("frame-over-limit", f"zstd frame at byte {at} holds more than {limit} rows in its first "
                                             f"{fed[0]} stored bytes", at)
        else:
            yield self.seg(b"", b, f"zstd frame at byte {at} expands past the {MAX_FRAME_BYTES >> 20} MiB frame "
                                   "limit; the rest of the frame is skipped")
            it.close()
            self.problem("frame-over-limit", f"zstd frame at byte {at} expands past the frame limit", at)
        self.st["lines"] = self.lines

    def _end(self, eof: bool, err: Optional[str]) -> Iterator[FrameSegment]:
        """After the frame's last piece: a torn frame's last row, an error's bad segment, an empty frame's
        one empty segment."""
        at, st = self.at, self.st
        if self.torn:
            if self.skip_from is not None:
                yield self.seg(b"", self.skip_from, f"torn row over the {MAX_ROW_BYTES >> 20} MiB row limit "
                                                    "(skipped)", "over-limit")
            elif not self.yielded:
                yield self.seg(b"", self.base)
            return
        if err is not None or not eof or self.pending or self.skip_from is not None:
            reason = (err or ("the frame is incomplete" if not eof else
                              "plaintext does not end at a record boundary"))
            st["good"] = False
            if not self.yielded:
                st["error"] = reason
                return
            b = self.skip_from if self.skip_from is not None else self.base
            self.problem("corrupt-frame", f"zstd frame at byte {at}: {reason} (after {b} good bytes)", at)
            yield self.seg(b"", b, f"corrupt zstd frame at byte {at}: {reason} (the rows before byte {b} of its "
                                   "plaintext are read)")
        elif not self.yielded:
            yield self.seg(b"", 0)        # an empty frame: one empty segment, as before
