"""Verifying a fork's child (:func:`app.store.forking.fork`) against its source, after it is published.

JSONL: the child's bytes must equal the source's at the start and end of each copied range and at evenly
spread windows, compared byte for byte, and rows written as text exactly (``verify="full"``: every byte, and
the CRC-32).  zstd: each run of copied frames has the CRC-32 and length computed while reading it from the
source, each re-framed run is one frame whose text has the CRC-32 and length written.  Either way the
source's revision must be the one read before the fork."""
from __future__ import annotations

import os
import zlib
from collections.abc import Iterator
from typing import Any, Optional

from ..log.index.reader import LogReader
from .fork_progress import ForkMeter

COPY_CHUNK = 8 << 20
VERIFY_WINDOW = 64 << 10
VERIFY_WINDOWS = 16
VERIFY_EDGE = 4 << 10          # bytes compared at each end of every copied range (when there are many)


class ForkVerifyError(Exception):
    """The child does not hold what was copied, or the source changed during the fork."""


def pread_all(fd: int, start: int, stop: int) -> bytes:
    """Bytes ``[start, stop)`` of ``fd`` (ForkVerifyError when the file is shorter: it shrank)."""
    out = os.pread(fd, stop - start, start)
    while len(out) < stop - start:
        more = os.pread(fd, stop - start - len(out), start + len(out))
        if not more:
            raise ForkVerifyError("the source shrank while it was copied")
        out += more
    return out


def raw_range(fd: int, start: int, stop: int, crc: list[int]) -> Iterator[bytes]:
    """Bytes ``[start, stop)`` of ``fd`` in chunks, their CRC-32 added to ``crc[0]``."""
    at = start
    while at < stop:
        chunk = os.pread(fd, min(COPY_CHUNK, stop - at), at)
        if not chunk:
            raise ForkVerifyError("the source shrank while it was copied")
        crc[0] = zlib.crc32(chunk, crc[0])
        at += len(chunk)
        yield chunk


def crc_of(path: str, start: int, stop: int) -> int:
    """The CRC-32 of bytes ``[start, stop)`` of ``path``."""
    fd = os.open(path, os.O_RDONLY)
    try:
        crc = [0]
        for _ in raw_range(fd, start, stop, crc):
            pass
        return crc[0]
    finally:
        os.close(fd)


def verify_frames(path: str, layout: list[tuple[str, list[int]]], meter: Optional[ForkMeter] = None) -> None:
    """A zstd child holds its seed as planned: each run of copied frames byte for byte (same
    CRC-32 and length), each re-framed run as exactly one frame whose text has the CRC-32 and
    length written.  Frames are located by their headers; only re-framed ones are decoded."""
    import mmap
    from ..log.source.zstdframes import COMPLETE, decode_frame, scan_frame
    with open(path, "rb") as f:
        at = child_seed_start(path, "zstd")
        if not layout:
            return
        if meter is not None:
            meter.start_verify(sum(n for _k, (_c, n) in layout))
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            for kind, (want_crc, want_n) in layout:
                if meter is not None:
                    meter.verified(want_n)
                if kind == "frames":
                    stop = at
                    while stop - at < want_n:
                        k, stop = scan_frame(mm, stop)
                        if k != COMPLETE:
                            raise ForkVerifyError(f"child {path}: a copied frame is not complete at byte {at}")
                    got = zlib.crc32(mm[at:stop])
                    if stop - at != want_n or got != want_crc:
                        raise ForkVerifyError(f"child {path} does not hold the copied frames at byte {at}")
                else:
                    k, stop = scan_frame(mm, at)
                    text = decode_frame(mm[at:stop]) if k == COMPLETE else b""
                    if len(text) != want_n or zlib.crc32(text) != want_crc:
                        raise ForkVerifyError(f"child {path} does not hold the seed rows written at byte {at}")
                at = stop


def _compare(a: int, b: int, src_at: int, child_at: int, length: int, child_path: str,
             meter: Optional[ForkMeter] = None) -> None:
    at = 0
    while at < length:
        k = min(COPY_CHUNK, length - at)
        if os.pread(a, k, src_at + at) != os.pread(b, k, child_at + at):
            raise ForkVerifyError(f"child {child_path} differs from the source within bytes "
                                  f"{src_at + at}..{src_at + at + k}")
        at += k
        if meter is not None:
            meter.verified(k)


def verify_copy(src_path: str, child_path: str, start: int, stop: int, child_start: int, full: bool) -> str:
    """The child's bytes at ``child_start`` equal the source's ``[start, stop)``: every byte
    (``full``), or the first and last windows and evenly spread ones. -> what was compared."""
    return verify_ranges(src_path, child_path, [(start, stop, child_start)], full)


def verify_ranges(src_path: str, child_path: str, ranges: list[tuple[int, int, int]], full: bool,
                   meter: Optional[ForkMeter] = None) -> str:
    """The child holds each copied range ``(start, stop, child offset)`` of the source: every byte
    (``full``), else both ends of every range (a whole window for one range, ``VERIFY_EDGE`` bytes
    each when there are many) and ``VERIFY_WINDOWS`` windows spread evenly over all the copied
    bytes, compared byte for byte.  -> what was compared."""
    n = sum(stop - start for start, stop, _c in ranges)
    edge = VERIFY_WINDOW if len(ranges) == 1 else VERIFY_EDGE
    spots: list[tuple[int, int, int]] = []               # (source offset, child offset, length)
    if full or n <= VERIFY_WINDOW * (VERIFY_WINDOWS + 2):
        spots = [(start, c, stop - start) for start, stop, c in ranges]
    else:
        for start, stop, c in ranges:
            k = stop - start
            if k <= 2 * edge:
                spots.append((start, c, k))
            else:
                spots += [(start, c, edge), (stop - edge, c + k - edge, edge)]
        step = (n - VERIFY_WINDOW) // (VERIFY_WINDOWS + 1)
        ri, base = 0, 0                                  # the range holding copied byte ``want``
        for j in range(1, VERIFY_WINDOWS + 1):
            want = j * step
            while base + (ranges[ri][1] - ranges[ri][0]) <= want:
                base += ranges[ri][1] - ranges[ri][0]
                ri += 1
            start, stop, c = ranges[ri]
            off = want - base
            spots.append((start + off, c + off, min(VERIFY_WINDOW, stop - start - off)))
    if meter is not None:
        meter.start_verify(sum(length for _s, _c, length in spots))
    a, b = os.open(src_path, os.O_RDONLY), os.open(child_path, os.O_RDONLY)
    try:
        for src_at, child_at, length in spots:
            _compare(a, b, src_at, child_at, length, child_path, meter)
    finally:
        os.close(a)
        os.close(b)
    compared = sum(length for _s, _c, length in spots)
    return "all bytes" if compared >= n and (full or len(spots) == len(ranges)) else \
        f"{compared} of {n} bytes at {len(spots)} places"


def verify_child(reader: LogReader, path: str, layout: list[Any], copied: list[int], crc: list[int], verify: str,
                  rev_before: str, meter: ForkMeter) -> str:
    """The source is unchanged and the child holds exactly the bytes read from it. -> what was compared."""
    src = reader.source
    rev_after = src.revision()
    if rev_after != rev_before:
        raise ForkVerifyError(f"the source changed during the fork ({rev_before} -> {rev_after}); "
                              f"the child {path} was published from the earlier state")
    verified = "nothing copied"
    if src.kind == "zstd":
        verify_frames(path, layout, meter)
        verified = "crc of every copied byte"
    elif copied[0]:
        child_start = child_seed_start(path, src.kind)
        if os.path.getsize(path) < child_start + copied[0]:
            raise ForkVerifyError(f"child {path} is shorter than the copied seed")
        full = verify == "full"
        ranges = []
        with open(path, "rb") as f:
            for item in layout:
                if item[0] == "range":
                    ranges.append((item[1], item[2], child_start + item[3]))
                else:
                    f.seek(child_start + item[2])
                    if f.read(len(item[1])) != item[1]:
                        raise ForkVerifyError(f"child {path} does not hold the converted seed rows")
        verified = verify_ranges(src.path, path, ranges, full, meter) if ranges else "converted rows"
        if ranges and len(ranges) < len(layout):
            verified += f"; {len(layout) - len(ranges)} converted row run(s) in full"
        if full:
            crc[0] = crc_of(path, child_start, child_start + copied[0])
    return verified


def child_seed_start(path: str, kind: str) -> int:
    """Offset in the child file where the copied seed bytes start (after its header)."""
    with open(path, "rb") as f:
        if kind == "jsonl":
            return len(f.readline())
        from ..log.source.zstdlib import zstd
        head = f.read(1 << 20)
        return zstd.get_frame_size(head)
