"""``session.jsonl.zstd``: a zstd session file read frame by frame (spec §1.3, §5).

One :class:`FrameSegment` per frame.  Frames are independent, so a corrupt frame costs
only its own records: it becomes a ``bad`` segment (``data == b""``) plus a
:class:`~app.log.format.model.Problem`, and reading goes on with the next frame (found by the
frame walk, or by searching the next magic that starts a valid frame).  Only the final
frame may be torn; its complete records are recovered (``torn=True``).

Rows are positioned by ``(frame_offset, offset_in_frame)`` (sortable tuples).  The file
is read with ``os.pread`` in bounded chunks (never mmapped); a backward read finds frame
starts from the end by searching the magic backwards and validating candidates, so a
tail page never scans the whole file.
"""
from __future__ import annotations

import os
from typing import Optional
from collections.abc import Iterator


from ..format.limits import (MAX_FRAME_STORED, MAX_ROW_BYTES, ZSTD_BACK_BUDGET, open_regular)
from ..format.model import Problem
from .sources import FileSource, Segment, SourceChanged
from .zstdframes import (COMPLETE, CORRUPT, MAGIC, MAX_HEADER, TORN, Buf, FrameError, decode_bounded,
                         decode_torn, iter_plain, scan_frame, walk_frame)
from .zstdwindows import FrameSegment, FrameState, FrameWindows

BLOCK = 1 << 20            # forward read granularity
BACK_CHUNK = 1 << 16       # first backward search window
MAX_BACK_CHUNK = 1 << 23   # backward search windows grow up to this
OVERSIZE = "oversize"      # a frame whose stored (compressed) bytes run past MAX_FRAME_STORED: never loaded

# (kind, end, view) of a frame: see ZstdSource._classify
Classified = tuple[str, int, Optional[memoryview]]
# a validated backward anchor: (frame start, exactly one frame up to the region end, its bytes if at hand)
Anchor = tuple[int, bool, Optional[memoryview]]


class _Cache:
    __slots__ = ("buf", "at")

    def __init__(self) -> None:
        self.buf = b""
        self.at = 0


class ZstdSource(FileSource):
    """``session.jsonl.zstd``: concatenated independent zstd frames; frame 1 is the header line."""
    kind = "zstd"

    def __init__(self, path: str, block: int = BLOCK) -> None:
        self.path = str(path)
        self.block = max(int(block), 64)
        self.problems: list[Problem] = []
        self._seen: set[tuple[str, int]] = set()
        self._header_problems: list[Problem] = []
        self.fd = open_regular(self.path)
        st = os.fstat(self.fd)
        self._ino = (st.st_dev, st.st_ino)
        self.size = st.st_size
        self._read_header()

    # ------------------------------------------------------------------ low-level reads
    def pread(self, n: int, at: int) -> bytes:
        n = min(n, self.size - at)
        if n <= 0:
            return b""
        out = os.pread(self.fd, n, at)
        if len(out) < n:
            st = os.fstat(self.fd)
            if st.st_size < at + n:
                raise SourceChanged(f"{self.path} shrank from {self.size} to {st.st_size} bytes while reading")
            while len(out) < n:                       # short read without shrinking: keep reading
                more = os.pread(self.fd, n - len(out), at + len(out))
                if not more:
                    raise SourceChanged(f"{self.path}: short read at byte {at + len(out)}")
                out += more
        return out

    def _read(self, o: int, k: int) -> bytes:
        return self.pread(k, o)

    def _problem(self, code: str, message: str, offset: int, fatal: bool = False) -> None:
        key = (code, offset)
        if key in self._seen:
            return
        self._seen.add(key)
        self.problems.append(Problem(code=code, message=message, offset=offset, fatal=fatal))

    # ------------------------------------------------------------------ header (frame 1)
    def _read_header(self) -> None:
        for p in self._header_problems:
            if p in self.problems:
                self.problems.remove(p)
            self._seen.discard((p.code, p.offset))
        self._header_problems = []
        self.header_raw = b""
        self.header_end = 0
        self._header_torn = False
        self._head_rest: Optional[FrameSegment] = None
        self._text0 = -1              # plaintext offset of frame 2
        self._line0: Optional[int] = None
        if self.size == 0:
            return
        n0 = len(self.problems)
        kind, end, view = self._classify(_Cache(), 0, self.size)
        if kind == COMPLETE and view is not None:
            try:
                data = decode_bounded(view, MAX_ROW_BYTES + 1)
            except FrameError as e:
                self._problem("bad-header-frame", f"the zstd header frame does not decode: {e}", 0, fatal=True)
                self.header_end = self._resync(0, self.size, hint=end)
            else:
                self.header_end = end
                nl = data.find(b"\n")
                if nl < 0 or not data.endswith(b"\n"):
                    self.header_raw = data[:nl] if nl >= 0 else data
                    self._problem("bad-header-frame",
                                  "the zstd header frame does not end with a complete line", 0, fatal=True)
                else:
                    self.header_raw = data[:nl]
                    self._text0 = len(data)
                    self._line0 = 1 + data.count(b"\n")
                    if nl + 1 < len(data):
                        self._problem("header-frame-extra",
                                      "the zstd header frame holds more than the header line", 0)
                        self._head_rest = FrameSegment(pos=0, end=end, data=data[nl + 1:], text_offset=nl + 1,
                                                       line0=2, base=nl + 1)
        elif kind == TORN:
            data = decode_torn(view, MAX_ROW_BYTES + 1) if view is not None else b""
            nl = data.find(b"\n")
            self.header_raw = data[:nl] if nl >= 0 else b""
            self.header_end = self.size
            self._header_torn = True
            self._problem("torn-header-frame", "the zstd header frame is incomplete", 0, fatal=True)
        else:
            why = (f"the zstd header frame stores over {MAX_FRAME_STORED >> 20} MiB (the stored frame limit)"
                   if kind == OVERSIZE else f"the file does not start with a valid zstd frame (byte {end})")
            self._problem("bad-header-frame", why, 0, fatal=True)
            self.header_end = self._resync(0, self.size)
        self._header_problems = self.problems[n0:]

    # ------------------------------------------------------------------ frame classification
    def _classify(self, cache: _Cache, at: int, stop: int) -> Classified:
        """(kind, end, view) of the frame at ``at`` within ``[at, stop)``.

        ``view`` is the frame's bytes for complete frames, ``[at, stop)`` for torn ones,
        None for corrupt ones.  ``end`` as in :func:`walk_frame` (absolute offsets).
        A frame whose stored bytes run past :data:`MAX_FRAME_STORED` is ``OVERSIZE``, with
        ``end`` where the bounded walk stopped and no view: it is never loaded.
        """
        need = min(at + MAX_HEADER, stop)
        if not (cache.at <= at and need <= cache.at + len(cache.buf)):
            cache.buf = self.pread(min(self.block, stop - at), at)
            cache.at = at
        region = memoryview(cache.buf)[:stop - cache.at]
        kind, rel = scan_frame(region, at - cache.at)
        end = cache.at + rel
        if kind == TORN and cache.at + len(region) < stop:
            # the frame runs past the cached chunk: walk it on disk (at most the stored frame
            # limit), then load it whole
            lim = min(stop, at + MAX_FRAME_STORED)
            kind, end = walk_frame(self._read, at, lim)
            if kind == CORRUPT:
                return kind, end, None
            if kind == TORN and lim < stop:
                return OVERSIZE, lim, None
            cache.buf = self.pread(end - at, at)
            cache.at = at
            region = memoryview(cache.buf)
        if kind == CORRUPT:
            return kind, end, None
        return kind, end, region[at - cache.at:end - cache.at]

    def _structurally_valid(self, c: int, stop: int) -> bool:
        kind, fend = walk_frame(self._read, c, stop)
        return kind == COMPLETE or (kind == TORN and stop == self.size)

    def _valid_start(self, c: int, stop: int) -> bool:
        """A resync candidate: a frame that decodes (or a decodable torn final frame)."""
        kind, fend = walk_frame(self._read, c, stop)
        if kind == COMPLETE or (kind == TORN and stop == self.size):
            # the frame starts decoding (bounded: a bomb is not expanded to validate it)
            it = iter_plain(self.pread(min(fend - c, 1 << 20), c), window=1 << 16)
            try:
                next(it)
                return True
            except StopIteration as stop_:
                return stop_.value[1] is None and kind == COMPLETE
        return False

    def _resync(self, at: int, stop: int, hint: Optional[int] = None) -> int:
        """Start of the next readable frame after the corrupt one at ``at`` (``stop`` if none)."""
        if hint is not None and at < hint <= stop:
            if hint == stop or (self.pread(4, hint) == MAGIC and self._structurally_valid(hint, stop)):
                return hint
        p = at + 1
        while p < stop:
            n = min(self.block, stop - p)
            chunk = self.pread(n, p)
            i = 0
            while True:
                j = chunk.find(MAGIC, i)
                if j < 0:
                    break
                if self._valid_start(p + j, stop):
                    return p + j
                i = j + 1
            if p + n >= stop:
                break
            p += n - 3
        return stop

    # ------------------------------------------------------------------ segments
    def _bad(self, at: int, end: int, reason: str) -> FrameSegment:
        self._problem("corrupt-frame", f"zstd frame at byte {at}: {reason}", at)
        return FrameSegment(pos=at, end=end, data=b"", bad=f"corrupt zstd frame at byte {at}: {reason}")

    def _oversize(self, at: int, end: int) -> FrameSegment:
        """The frame at ``at`` stores more than :data:`MAX_FRAME_STORED` bytes: skipped unread
        (``end``: where the next readable frame starts)."""
        why = (f"zstd frame at byte {at} stores over {MAX_FRAME_STORED >> 20} MiB, past the stored frame "
               f"limit; its rows are skipped unread (bytes {at}-{end})")
        self._problem("frame-over-limit", why, at)
        return FrameSegment(pos=at, end=end, data=b"", bad=why, bad_kind="over-limit")

    def _windows(self, at: int, end: int, view: Buf, text_offset: int, line0: Optional[int],
                 torn: bool = False, state: Optional[FrameState] = None) -> Iterator[FrameSegment]:
        """The decoded rows of the frame ``[at, end)``, streamed in bounded windows: :class:`FrameWindows`
        (its problems reported here)."""
        return iter(FrameWindows(at, end, view, text_offset, line0, torn, state, self._problem))

    def _frame_backward(self, at: int, end: int, view: Buf, text_offset: int, line0: Optional[int]
                        ) -> Iterator[FrameSegment]:
        """The segments of one complete frame newest first, holding at most about
        :data:`ZSTD_BACK_BUDGET` of plaintext: a big frame is re-streamed for older windows."""
        hi: Optional[int] = None          # windows with index < hi remain to be yielded
        while hi is None or hi > 0:
            st: FrameState = {}
            ring: list[tuple[int, FrameSegment]] = []
            held = 0
            for i, sg in enumerate(self._windows(at, end, view, text_offset, line0, state=st)):
                if hi is not None and i >= hi:
                    break
                ring.append((i, sg))
                held += len(sg.data)
                while held > ZSTD_BACK_BUDGET and len(ring) > 1:
                    held -= len(ring.pop(0)[1].data)
            error = st.get("error")
            if error is not None and not ring:
                yield self._bad(at, end, error)
                return
            if not ring:
                return
            for _, sg in reversed(ring):
                yield sg
            hi = ring[0][0]

    def _scan(self, start: int, stop: int, text_offset: int = -1, line0: Optional[int] = None
              ) -> Iterator[FrameSegment]:
        """Frames from ``start`` (a frame start) up to ``stop`` (a frame end or the snapshot end)."""
        cache = _Cache()
        at = start
        while at < stop:
            kind, end, view = self._classify(cache, at, stop)
            if kind == TORN and stop >= self.size:
                # a torn final frame, unless a readable frame starts after it: then it is a
                # corrupt middle frame whose size fields point past the end of the file
                nxt = self._resync(at, stop)
                if nxt >= stop:
                    yield from self._windows(at, stop, view if view is not None else b"", text_offset, line0,
                                             torn=True)
                    return
                kind, reason = CORRUPT, "the frame's block sizes run past the next frame"
                yield self._bad(at, nxt, reason)
                text_offset, line0 = -1, None
                at = nxt
                continue
            if kind == OVERSIZE:
                nxt = self._resync(at, stop)
                yield self._oversize(at, nxt)
                text_offset, line0 = -1, None
                at = nxt
                continue
            if kind == COMPLETE and view is not None:
                st: FrameState = {}
                it = self._windows(at, end, view, text_offset, line0, state=st)
                first = next(it, None)
                if st["error"] is None:
                    if first is not None:
                        yield first
                        yield from it
                    if st["good"]:
                        if text_offset >= 0:
                            text_offset += st["n"]
                        if line0 is not None:
                            line0 += st["lines"]
                    else:
                        text_offset, line0 = -1, None
                    at = end
                    continue
                reason = st["error"]
                nxt = self._resync(at, stop, hint=end)
                if nxt < end:
                    reason = "the frame runs past the start of the next frame"
            elif kind == TORN:
                # runs past ``stop``, a known frame boundary: its extent is wrong
                reason = "the frame runs past the start of the next frame"
                nxt = self._resync(at, stop)
            else:
                reason = ("no zstd frame magic" if end == at else
                          f"invalid frame structure at byte {end}")
                nxt = self._resync(at, stop)
            yield self._bad(at, nxt, reason)
            text_offset, line0 = -1, None
            at = nxt

    def forward(self, start: Optional[int] = None, line0: Optional[int] = None,
                text_offset: Optional[int] = None) -> Iterator[Segment]:
        """Frames oldest first from ``start`` (a frame start; default: after the header frame)."""
        if start is None:
            if self._head_rest is not None:
                yield self._head_rest
            start = self.header_end
        if start == self.header_end:
            if line0 is None:
                line0 = self._line0
            if text_offset is None:
                text_offset = self._text0
        yield from self._scan(start, self.size, -1 if text_offset is None else text_offset, line0)

    # ------------------------------------------------------------------ backward
    def _check(self, c: int, e: int, win: bytes, win_at: int, exact_only: bool) -> Optional[Anchor]:
        """Validate candidate frame start ``c`` for the region ending at ``e``.

        -> None, or (c, exact, view): ``exact`` when ``[c, e)`` is exactly one frame.
        """
        view = None
        if c >= win_at:
            mv = memoryview(win)[c - win_at:e - win_at]
            kind, rel = scan_frame(mv, 0)
            fend = c + rel
            if kind == COMPLETE:
                view = mv[:rel]
        else:
            kind, fend = walk_frame(self._read, c, e)
        if kind == COMPLETE:
            if fend == e:
                return c, True, view
            if exact_only:
                return None
            return c, False, None
        if kind == TORN and e >= self.size and not exact_only:
            # a torn final frame: confirm that a frame ends where it starts
            if c == self.header_end or self._anchor(c, exact_only=True) is not None:
                return c, False, None
        return None

    def _anchor(self, e: int, exact_only: bool = False) -> Optional[Anchor]:
        """Nearest trustworthy frame start before ``e`` (searching the magic backwards)."""
        lo = self.header_end
        hi = e
        step = BACK_CHUNK
        win, win_at = b"", e
        first = True
        while hi > lo:
            s = max(lo, hi - step)
            chunk = self.pread(min(hi + 3, e) - s, s)
            if first:
                win, win_at, first = chunk, s, False
            j = len(chunk)
            while True:
                p = chunk.rfind(MAGIC, 0, j)
                if p < 0:
                    break
                found = self._check(s + p, e, win, win_at, exact_only)
                if found is not None:
                    return found
                j = p + 3
            hi = s
            step = min(step * 2, MAX_BACK_CHUNK)
        return None

    def backward(self, end: Optional[int] = None) -> Iterator[Segment]:
        """Frames newest first, ending at ``end`` (a segment end; default: the snapshot end)."""
        lo = self.header_end
        e = self.size if end is None else min(end, self.size)
        while e > lo:
            found = self._anchor(e)
            def known(c: int) -> tuple[int, Optional[int]]:
                return (self._text0, self._line0) if c == lo else (-1, None)
            if found is None:
                c = lo                       # nothing validates: scan the region forward
                segs = list(self._scan(c, e, *known(c)))
            else:
                c, exact, view = found
                if exact:
                    if e - c > MAX_FRAME_STORED:
                        yield self._oversize(c, e)
                        e = c
                        continue
                    if view is None:
                        view = memoryview(self.pread(e - c, c))
                    yield from self._frame_backward(c, e, view, *known(c))
                    e = c
                    continue
                segs = list(self._scan(c, e, *known(c)))
            yield from reversed(segs)
            e = c
        if self._head_rest is not None and (end is None or end >= lo):
            yield self._head_rest

    # ------------------------------------------------------------------ snapshot
    def _header_needs_reread(self) -> bool:
        return self._header_torn or self.header_end == 0
