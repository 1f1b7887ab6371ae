"""Physical sources: the stored bytes of one log, read in segments (spec §1.3, §5).

A *segment* is a run of complete stored rows (a block of JSONL lines, one zstd frame,
a batch of SQLite rows) with the decoded text of those rows.  Sources read forwards
from any segment start and backwards from any segment end, so a tail page never needs
the whole file, and they never hold more than a bounded window in memory.

Every source reads a *snapshot*: the size (or revision) captured when it was opened.
Growth after that is picked up by :meth:`Source.refresh` (live follow); a file that
shrinks or is replaced under the reader is reported, never papered over.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from typing import Optional, Union
from collections.abc import Callable, Iterator

from ..format.limits import MAX_ROW_BYTES, open_regular, read_head
from ..format.model import BadKind, Problem

# a stored row's position: a file offset (raw JSONL; SQLite: its seq) or (frame pos, offset in frame) (zstd)
RowPos = Union[int, tuple[int, int]]
Buf = Union[bytes, bytearray, memoryview]

BLOCK = 1 << 20          # read granularity for raw JSONL
PEEK = 1 << 16           # the end of a read looked at first for its last newline (RawJsonlSource._cut_in)
_preadv = getattr(os, "preadv", None)   # (Linux, the BSDs, macOS 11+)


@dataclass(slots=True)
class Segment:
    """Decoded text of consecutive stored rows.

    ``pos``/``end``: physical extent (file offsets; for SQLite, seq range).
    ``text_offset``: offset of ``data[0]`` in the decoded text of the whole log, -1 if unknown.
    ``line0``: 1-based line number of the first row, None if unknown (backward reads).
    ``torn``: the last row in ``data`` is incomplete (only ever the final segment).
    ``rows``: for row-structured sources (SQLite), the rows already split (``data`` unused).
    """
    pos: int
    end: int
    data: bytes
    text_offset: int = -1
    line0: Optional[int] = None
    torn: bool = False
    rows: Optional[list[tuple[int, bytes]]] = None   # [(row_pos, raw_bytes)] when the source splits rows itself
    bad: Optional[str] = None            # the whole segment is unreadable (e.g. corrupt frame): reason
    bad_kind: BadKind = "corrupt-frame"  # the BadRow kind / problem code for ``bad``

    def split_rows(self) -> Iterator[tuple[RowPos, int, Optional[int], bytes, bool]]:
        """Yield (row_pos, offset_in_text, line_no, raw, complete)."""
        if self.rows is not None:
            for p, raw in self.rows:
                yield p, -1, None, raw, True
            return
        data = self.data
        start = 0
        line = self.line0
        n = len(data)
        while start < n:
            nl = data.find(b"\n", start)
            if nl < 0:
                yield self.row_pos(start), self.text_pos(start), line, data[start:], False
                return
            yield self.row_pos(start), self.text_pos(start), line, data[start:nl], True
            start = nl + 1
            if line is not None:
                line += 1

    def text_pos(self, off: int) -> int:
        """The offset of ``data[off]`` in the decoded text of the whole log (-1: unknown)."""
        return self.text_offset + off if self.text_offset >= 0 else -1

    def row_pos(self, off: int) -> RowPos:
        return self.pos + off


@functools.cache
def newlines() -> Callable[[Buf], int]:
    """``data.count(b"\\n")`` of a segment's bytes: in C where the row scanner is built (``tl_lines``, 16 bytes a
    step: ~10x ``bytes.count``, ~0.5 s per GB), else ``bytes.count``."""
    from ..index.fastindex import load_rowscan_c     # (here: that module reads this one)
    got: Optional[Callable[[Buf], int]] = getattr(load_rowscan_c(), "tl_lines", None)
    return got if got is not None else _count_py


def _count_py(data: Buf) -> int:
    return (data.tobytes() if isinstance(data, memoryview) else data).count(b"\n")


class SourceChanged(Exception):
    """The stored log changed in a way a reader cannot follow (shrunk, replaced)."""


class Source:
    """Interface of a physical source."""
    kind = "?"
    path: str
    header_raw: bytes
    header_end: int
    size: int
    problems: list[Problem]

    def forward(self, start: Optional[int] = None) -> Iterator[Segment]:
        raise NotImplementedError

    def backward(self, end: Optional[int] = None) -> Iterator[Segment]:
        raise NotImplementedError

    def refresh(self) -> bool:
        """Re-stat; extend the snapshot if the log grew. True if it grew."""
        raise NotImplementedError

    def revision(self) -> str:
        raise NotImplementedError

    def stored_bytes(self) -> Iterator[bytes]:
        """The file exactly as stored, in chunks (raw export)."""
        raise NotImplementedError

    def close(self) -> None:
        pass


def file_revision(path: str) -> str:
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


class FileSource(Source):
    """A source backed by one file read with ``os.pread``: snapshot refresh, revision, raw bytes."""
    block = BLOCK
    fd = -1
    _ino: tuple[int, int]                # (st_dev, st_ino) of the file opened

    def _read_header(self) -> None:
        """Read the header line (``header_raw``, ``header_end``) from the file (subclasses say how)."""
        raise NotImplementedError

    def _header_needs_reread(self) -> bool:
        """The header was incomplete when last read (subclasses say how they know)."""
        return False

    def refresh(self) -> bool:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            raise SourceChanged(f"{self.path} was removed") from None
        if (st.st_dev, st.st_ino) != self._ino:
            raise SourceChanged(f"{self.path} was replaced by another file")
        if st.st_size < self.size:
            raise SourceChanged(f"{self.path} shrank from {self.size} to {st.st_size} bytes")
        grew = st.st_size > self.size
        self.size = st.st_size
        if grew and self._header_needs_reread():
            self._read_header()
        return grew

    def revision(self) -> str:
        return file_revision(self.path)

    def stored_bytes(self) -> Iterator[bytes]:
        at = 0
        while at < self.size:
            chunk = os.pread(self.fd, min(self.block * 4, self.size - at), at)
            if not chunk:
                break
            at += len(chunk)
            yield chunk

    def close(self) -> None:
        fd, self.fd = getattr(self, "fd", -1), -1
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass

    def __del__(self) -> None:
        self.close()


class RawJsonlSource(FileSource):
    """``session.jsonl``: UTF-8 lines; line 1 is the header."""
    kind = "jsonl"

    def __init__(self, path: str, block: int = BLOCK):
        self.path = path
        self.block = block
        self.problems: list[Problem] = []
        self.fd = open_regular(path)
        st = os.fstat(self.fd)
        self._ino = (st.st_dev, st.st_ino)
        self.size = st.st_size
        self._read_header()

    def _read_header(self) -> None:
        buf = b""
        at = 0
        while True:
            chunk = os.pread(self.fd, 65536, at)
            if not chunk:
                break
            nl = chunk.find(b"\n")
            if nl >= 0:
                buf += chunk[:nl]
                self.header_raw = buf
                self.header_end = at + nl + 1
                return
            buf += chunk
            at += len(chunk)
        self.header_raw = buf
        self.header_end = len(buf)
        if buf:
            self.problems.append(Problem(code="torn-header", message="the header line has no newline", line=1))

    def pread(self, n: int, at: int) -> bytes:
        out = os.pread(self.fd, n, at)
        if len(out) < n:
            # the file shrank under us (repair/truncation by another process)
            st = os.fstat(self.fd)
            if st.st_size < at + n:
                raise SourceChanged(f"{self.path} shrank from {self.size} to {st.st_size} bytes while reading")
        return out

    def pread_into(self, buf: bytearray, at: int) -> bytearray:
        """Fill ``buf`` with the bytes at ``at`` (all of them: the caller asks within the snapshot)
        and return it: one reused buffer instead of fresh bytes per read."""
        if _preadv is None:                  # (no preadv on this platform: a copy)
            buf[:] = self.pread(len(buf), at)
            return buf
        n = _preadv(self.fd, [buf], at)
        if n < len(buf):
            got = n
            while got < len(buf):            # (a short read: the rest, or the file shrank)
                k = _preadv(self.fd, [memoryview(buf)[got:]], at + got)
                if k <= 0:
                    raise SourceChanged(f"{self.path} shrank from {self.size} to "
                                        f"{os.fstat(self.fd).st_size} bytes while reading")
                got += k
        return buf

    def oversized_segment(self, start: int, end: int, line0: Optional[int], torn: bool) -> Segment:
        """A row over :data:`MAX_ROW_BYTES`: one bad segment (never loaded into memory)."""
        n = end - start - (0 if torn else 1)
        reason = f"row of {n} bytes is over the {MAX_ROW_BYTES >> 20} MiB row limit (skipped)"
        return Segment(pos=start, end=end, data=b"", text_offset=start, line0=line0, torn=torn, bad=reason,
                       bad_kind="over-limit")

    def find_newline(self, at: int, end: int) -> int:
        """Offset just past the next newline at or after ``at`` (``end`` if none)."""
        while at < end:
            chunk = self.pread(min(self.block, end - at), at)
            i = chunk.find(b"\n")
            if i >= 0:
                return at + i + 1
            at += len(chunk)
        return end

    def _rfind_newline(self, lo: int, e: int) -> int:
        """Offset just past the last newline in ``[lo, e)`` (``lo`` if none)."""
        while e > lo:
            s = max(lo, e - self.block)
            i = self.pread(e - s, s).rfind(b"\n")
            if i >= 0:
                return s + i + 1
            e = s
        return lo

    def _cut_in(self, at: int, n: int, buf: bytearray) -> int:
        """Just past the last newline of the read ``[at, at + n)`` (-1: it holds none), found by reading it from its
        end into ``buf`` (reused: no fresh pages; most rows end in the last :data:`PEEK` bytes, read once more when
        their segment is read)."""
        hi = at + n
        while hi > at:
            k = min(len(buf), hi - at)
            i = self.pread_into(buf if k == len(buf) else bytearray(k), hi - k).rfind(b"\n")
            if i >= 0:
                return hi - k + i + 1
            hi -= k
        return -1

    def forward(self, start: Optional[int] = None, line0: Optional[int] = None) -> Iterator[Segment]:
        """The segments from ``start`` (a row's start; the first row after the header when None, ``line0`` then 2):
        reads of :attr:`block` bytes from ``start``, a segment ends at the last newline of a read (a read holding
        none carries on to the next), the last at the snapshot's end.  Each segment's bytes are read in one
        ``pread`` once its end is known (:meth:`_cut_in`): one new buffer per segment, no copy of a read."""
        at = self.header_end if start is None else start
        if start is None:
            line0 = 2
        end = self.size
        carry_at = at                        # the next segment's start (rows read past: read again with it)
        buf: Optional[bytearray] = None      # (made at the first read not to the end: a short read makes none)
        count = newlines() if line0 is not None else None
        while at < end:
            n = min(self.block, end - at)
            last = at + n >= end
            if not last and buf is None:
                buf = bytearray(min(PEEK, self.block))
            cut = end if last or buf is None else self._cut_in(at, n, buf)
            at += n
            if cut < 0:
                if at - carry_at > MAX_ROW_BYTES:          # one row over the limit: skip to its end
                    stop = self.find_newline(at, end)
                    torn = stop >= end and self.pread(1, end - 1) != b"\n"
                    yield self.oversized_segment(carry_at, stop, line0, torn)
                    if line0 is not None:
                        line0 += 1
                    carry_at = at = stop
                continue
            data = self.pread(cut - carry_at, carry_at)
            seg = Segment(pos=carry_at, end=cut, data=data, text_offset=carry_at, line0=line0,
                          torn=last and not data.endswith(b"\n"))
            if count is not None and line0 is not None:
                line0 += count(data)
            yield seg
            carry_at = cut

    def backward(self, end: Optional[int] = None) -> Iterator[Segment]:
        e = self.size if end is None else end
        lo = self.header_end
        first = True
        while e > lo:
            want = self.block
            oversized = False
            while True:
                s = max(lo, e - want)
                if e - s > MAX_ROW_BYTES + self.block:
                    oversized = True
                    break
                data = self.pread(e - s, s)
                if s == lo:
                    cut = 0
                    break
                nl = data.find(b"\n")
                if nl >= 0 and nl + 1 < len(data):
                    cut = nl + 1
                    break
                want *= 2
            torn_end = first and end is None and self.pread(1, e - 1) != b"\n"
            if oversized:
                # the row ending at e is over the limit: find its start without loading it
                start = self._rfind_newline(lo, e - 1)
                if e - start - 1 > MAX_ROW_BYTES:
                    yield self.oversized_segment(start, e, 2 if start == lo else None, torn_end)
                    first = False
                    e = start
                    continue
                data, s, cut = self.pread(e - start, start), start, 0
            seg_data = data[cut:]
            torn = first and end is None and not seg_data.endswith(b"\n")
            yield Segment(pos=s + cut, end=e, data=seg_data, text_offset=s + cut, line0=2 if s + cut == lo else None,
                          torn=torn)
            first = False
            e = s + cut

    def _header_needs_reread(self) -> bool:
        return self.header_end == len(self.header_raw) and not self.header_raw.endswith(b"\n")


def open_source(path: str) -> Source:
    """Pick the source for a session file by its name/content."""
    p = str(path)
    if p.endswith(".zstd") or p.endswith(".zst"):
        from .zstdsource import ZstdSource
        return ZstdSource(p)
    magic = read_head(p, 16)
    if magic.startswith(b"\x28\xb5\x2f\xfd"):
        from .zstdsource import ZstdSource
        return ZstdSource(p)
    if magic.startswith(b"SQLite format 3\x00"):
        raise ValueError(f"{p} is a SQLite store: open it with app.store (one file holds many sessions)")
    return RawJsonlSource(p)
