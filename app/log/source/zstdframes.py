"""Zstandard frames of a ``session.jsonl.zstd`` file (spec §1.3), as pure functions.

A zstd session file is a concatenation of independent frames, each with a content
checksum: frame 1 holds exactly the header line, every later frame one durable append
batch of complete ``\\n``-terminated lines.  The concatenated plaintext is the raw file.

* :func:`scan_frame` classifies the frame at an offset as ``complete``, ``torn`` or
  ``corrupt`` without decompressing (the spec's header/block walk; libzstd's
  ``get_frame_size`` is the fast path).
* :func:`walk_frame` is the same walk over any ``read(offset, n)`` callable, so a
  reader can classify a frame on disk without loading it.
* :func:`encode_frame` / :func:`encode_session` write frames as dsh does;
  :func:`decode_frame` decodes one complete frame (checksum verified);
  :func:`decode_torn` recovers the complete records of a torn final frame.
"""
from __future__ import annotations

import ctypes
import mmap
from itertools import islice
import threading
from collections.abc import Callable, Generator, Iterable
from typing import Optional, Union

from .zstdlib import native_library_path, zstd

MAGIC = b"\x28\xb5\x2f\xfd"            # 0xFD2FB528 little-endian
MAGIC_INT = 0xFD2FB528
MAX_HEADER = 18                        # magic + descriptor + window + dict id + FCS
COMPLETE, TORN, CORRUPT = "complete", "torn", "corrupt"

_DICT_BYTES = (0, 1, 2, 4)
_OPTIONS_CACHE: dict[int, dict[int, int]] = {}

ZstdError = zstd.ZstdError

Buf = Union[bytes, bytearray, memoryview, mmap.mmap]     # frame bytes in memory (sliceable, sized)
ReadAt = Callable[[int, int], Union[bytes, memoryview]]  # read(offset, n) -> up to n bytes at offset
Walk = tuple[str, int]                                   # (COMPLETE | TORN | CORRUPT, end offset)
# a frame's plaintext in pieces; returns (eof, error) when the pieces end (see iter_plain)
Plain = Generator[bytes, None, tuple[bool, Optional[str]]]


class FrameError(zstd.ZstdError):
    """A frame that does not decode as one complete, verified zstd frame."""


class FrameLimitError(FrameError):
    """A frame whose plaintext runs past the limit the caller set (it may be sound)."""


# --------------------------------------------------------------------------- scanning

def header_size(descriptor: int) -> Optional[int]:
    """Frame header size for a descriptor byte, or None when the descriptor is corrupt."""
    if descriptor & 0x18:
        return None
    fcs_flag = descriptor >> 6
    single = descriptor & 0x20
    fcs = (1 if single else 0) if fcs_flag == 0 else 1 << fcs_flag
    return 5 + (0 if single else 1) + _DICT_BYTES[descriptor & 3] + fcs


def walk_frame(read: ReadAt, at: int, limit: int) -> Walk:
    """The spec §1.3 frame walk over ``read(offset, n)`` for bytes in ``[at, limit)``.

    Returns ``(kind, end)``: ``complete`` with the frame's end offset; ``torn`` with
    ``end == limit`` (the frame runs past ``limit``); ``corrupt`` with ``end`` = the
    offset of the offending byte (the frame's extent is unknown).
    """
    if limit - at < 4:
        return TORN, limit
    if bytes(read(at, 4)) != MAGIC:
        return CORRUPT, at            # also rejects skippable frames
    if limit - at < 5:
        return TORN, limit
    d = read(at + 4, 1)[0]
    hs = header_size(d)
    if hs is None:
        return CORRUPT, at + 4
    p = at + hs
    if p > limit:
        return TORN, limit
    while True:
        if p + 3 > limit:
            return TORN, limit
        h = int.from_bytes(read(p, 3), "little")
        btype = (h >> 1) & 3
        if btype == 3:
            return CORRUPT, p
        p += 3 + (1 if btype == 1 else h >> 3)
        if p > limit:
            return TORN, limit
        if h & 1:
            break
    if d & 4:
        p += 4
        if p > limit:
            return TORN, limit
    return COMPLETE, p


def scan_frame(buf: Buf, at: int = 0) -> Walk:
    """Classify the frame starting at ``buf[at]`` without decompressing it.

    ``buf`` is bytes-like and ends where the data ends (end of file, or of the region
    being scanned).  Returns ``(kind, end)`` as :func:`walk_frame` (offsets in ``buf``).
    """
    n = len(buf)
    if n - at >= 5 and buf[at:at + 4] == MAGIC and not (buf[at + 4] & 0x18):
        try:
            size = zstd.get_frame_size(memoryview(buf)[at:])
        except zstd.ZstdError:
            pass
        else:
            if at + size <= n:
                return COMPLETE, at + size
    mv = memoryview(buf)
    return walk_frame(lambda o, k: mv[o:o + k], at, n)


def iter_frames(buf: Buf, at: int = 0) -> Iterable[tuple[str, int, int]]:
    """Yield ``(kind, start, end)`` for consecutive frames of ``buf`` (stops at the first
    torn or corrupt frame, which is yielded too)."""
    n = len(buf)
    while at < n:
        kind, end = scan_frame(buf, at)
        yield kind, at, end
        if kind != COMPLETE:
            return
        at = end


# --------------------------------------------------------------------------- encoding

def _options(level: int) -> dict[int, int]:
    opts = _OPTIONS_CACHE.get(level)
    if opts is None:
        P = zstd.CompressionParameter
        opts = {P.compression_level: level, P.checksum_flag: 1, P.content_size_flag: 1}
        _OPTIONS_CACHE[level] = opts
    return opts


def encode_frame(text: bytes, level: int = zstd.COMPRESSION_LEVEL_DEFAULT) -> bytes:
    """One independent frame with content size and content checksum."""
    return zstd.compress(bytes(text), options=_options(level))


def encode_session(header_line: bytes, batches: Iterable[bytes], level: int = zstd.COMPRESSION_LEVEL_DEFAULT) -> bytes:
    """A whole ``session.jsonl.zstd``: frame 1 = the header line (with its ``\\n``), then
    one frame per batch of complete lines."""
    header_line = bytes(header_line)
    if not header_line.endswith(b"\n"):
        header_line += b"\n"
    if header_line.count(b"\n") != 1:
        raise ValueError("the header line must be exactly one line")
    out = [encode_frame(header_line, level)]
    for batch in batches:
        batch = bytes(batch)
        if not batch or not batch.endswith(b"\n"):
            raise ValueError("a batch must be non-empty complete lines ending with \\n")
        out.append(encode_frame(batch, level))
    return b"".join(out)


# --------------------------------------------------------------------------- decoding

def decode_frame(buf: Buf) -> bytes:
    """Decode exactly one complete frame; the content checksum and size are verified.

    Raises :class:`FrameError` (a ``ZstdError``) when ``buf`` is not exactly one valid frame.
    """
    n = len(buf)
    if n < 5 or buf[:4] != MAGIC:
        raise FrameError("no zstd frame magic")
    if buf[4] & 0x18:
        raise FrameError("reserved bits set in the frame descriptor")
    try:
        size = zstd.get_frame_size(buf)
    except zstd.ZstdError as e:
        raise FrameError(f"frame structure: {e}") from None
    if size != n:
        raise FrameError(f"frame is {size} bytes, {n - size} trailing bytes")
    from ..format.limits import MAX_FRAME_BYTES
    return decode_bounded(buf, MAX_FRAME_BYTES)


def decompressor() -> zstd.ZstdDecompressor:
    """A streaming decompressor that refuses frames needing a window over the limit."""
    from ..format.limits import ZSTD_WINDOW_LOG_MAX
    return zstd.ZstdDecompressor(options={zstd.DecompressionParameter.window_log_max: ZSTD_WINDOW_LOG_MAX})


FEED = 1 << 16                         # stored bytes fed at a time when the caller counts them (iter_plain)


def iter_plain(buf: Buf, window: int = 0, fed: Optional[list[int]] = None) -> Plain:
    """Stream the plaintext of one frame (complete or torn) in pieces of at most ``window``
    bytes: memory stays bounded whatever the frame expands to.  Yields ``bytes``; returns
    (StopIteration value) ``(eof, error)``: ``eof`` when the frame ended (checksum verified),
    ``error`` the decoder's message when it failed (pieces before it are good).  ``fed``: the
    frame's bytes are fed in steps of :data:`FEED` and ``fed[0]`` says how many were fed so far
    (at least the stored bytes the plaintext yielded so far came from)."""
    from ..format.limits import ZSTD_OUT_WINDOW
    window = window or ZSTD_OUT_WINDOW
    d = decompressor()
    whole = memoryview(buf)
    step = len(whole) if fed is None else FEED
    data: Union[memoryview, bytes] = whole[:step]
    at = len(data)
    parts: list[bytes] = []                     # (fed in steps: pieces gathered up to ``window``, as before)
    n = 0
    while True:
        if fed is not None:
            fed[0] = at
        try:
            out = d.decompress(data, max_length=window - n)
        except zstd.ZstdError as e:
            if parts:
                yield b"".join(parts)
            return False, str(e)
        data = b""
        if out:
            parts.append(out)
            n += len(out)
        if n < window and d.needs_input and not d.eof and at < len(whole):
            data = whole[at:at + step]          # (the next step of the frame)
            at += len(data)
            continue
        if parts:
            yield parts[0] if len(parts) == 1 else b"".join(parts)
            parts, n = [], 0
        if d.eof:
            return True, None
        if d.needs_input and not out:
            return False, None          # input exhausted mid-frame (torn)


def iter_plain_fed(buf: Buf, fed: list[int]) -> Plain:
    """``iter_plain(buf, fed=fed)``; a frame of at most :data:`FEED` stored bytes that is exactly one whole frame
    declaring a content size within the output window is decoded in one call by the process's :class:`SizedDecoder`
    (one libzstd context for every frame: a streaming decompressor set up per frame cost more than decoding a
    small one).  Its plaintext comes as the one piece the streaming path gives such a frame (fed whole: ``fed[0]``
    its size); a frame that does not decode so takes the streaming path, which says why."""
    from ..format.limits import ZSTD_OUT_WINDOW
    dec = sized_decoder() if len(buf) <= FEED else None
    if dec is not None and bytes(buf[:4]) == MAGIC:
        src = bytes(buf)
        ends = list(islice(dec.frame_ends(src, 0, len(src)), 2))
        if len(ends) == 1 and ends[0][0] == len(src) and ends[0][1] <= ZSTD_OUT_WINDOW:
            try:
                out = dec.decode(src, 0, len(src), ends[0][1])
            except FrameError:
                out = None
            if out is not None:
                fed[0] = len(src)
                if out:
                    yield out
                return True, None
    return (yield from iter_plain(buf, fed=fed))


class SizedDecoder:
    """Decodes runs of whole frames that declare their content size with ONE libzstd context,
    reused from call to call (the zstd module sets a context up per frame: about 17 µs, more
    than decoding a small frame; a session list decodes a few small frames per file).  The run is
    decoded in one call into a buffer of exactly the declared total, so libzstd refuses a frame
    that outgrows its declaration; checksums are verified; the window is bounded as everywhere.
    libzstd is the one the zstd module (:mod:`.zstdlib`) carries (its symbols, through ``ctypes``); where they
    cannot be reached, :func:`sized_decoder` gives None and callers keep the streaming path."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        from ..format.limits import ZSTD_WINDOW_LOG_MAX
        self._lib = lib
        self._lock = threading.Lock()
        self._buf = bytearray(1 << 16)
        self._dctx = lib.ZSTD_createDCtx()
        if not self._dctx:
            raise MemoryError("ZSTD_createDCtx")
        r = lib.ZSTD_DCtx_setParameter(self._dctx, _D_WINDOW_LOG_MAX, ZSTD_WINDOW_LOG_MAX)
        if lib.ZSTD_isError(r):
            raise FrameError(lib.ZSTD_getErrorName(r).decode("ascii", "replace"))

    def decode(self, src: bytes, start: int, stop: int, total: int) -> bytes:
        """The plaintext of the whole frames ``src[start:stop]`` whose declared sizes add up to
        ``total`` (FrameError when they do not decode to exactly that, checksums verified)."""
        if not 0 <= start <= stop <= len(src) or total < 0:
            raise ValueError("frame run outside the buffer")
        if start == stop:
            return b""
        keep = ctypes.c_char_p(src)                       # (no copy: the bytes object's own buffer)
        base = ctypes.cast(keep, ctypes.c_void_p).value or 0
        with self._lock:                                  # one thread at a time: the context, the buffer
            if len(self._buf) < total:
                self._buf = bytearray(max(total, 2 * len(self._buf)))
            dst = (ctypes.c_char * len(self._buf)).from_buffer(self._buf)
            r = self._lib.ZSTD_decompressDCtx(self._dctx, dst, total, base + start, stop - start)
            del dst
            if self._lib.ZSTD_isError(r):
                raise FrameError(self._lib.ZSTD_getErrorName(r).decode("ascii", "replace"))
            if r != total:
                raise FrameError("a frame's content differs from its declared size")
            out = bytes(memoryview(self._buf)[:total])
            if len(self._buf) > _KEEP_BUF:
                self._buf = bytearray(_KEEP_BUF)          # (a big run's buffer is not kept)
            return out

    def run_size(self, src: bytes, start: int, stop: int) -> Optional[int]:
        """The declared plaintext size of ``src[start:stop]`` when it is exactly a run of whole
        frames that all declare their content size (libzstd walks the frame headers and blocks in C,
        no Python step per frame), else None (a torn or corrupt frame, a frame without a declared
        size: callers take the frame-by-frame path).  A skippable frame in the run is passed over,
        as libzstd does (it holds no rows; the spec's walk calls it corrupt)."""
        if not 0 <= start < stop <= len(src):
            return None
        base = ctypes.cast(ctypes.c_char_p(src), ctypes.c_void_p).value or 0
        r = self._lib.ZSTD_findDecompressedSize(base + start, stop - start)
        return None if r >= _CONTENTSIZE_ERROR else int(r)

    def frame_ends(self, src: bytes, start: int, stop: int) -> Generator[tuple[int, int], None, None]:
        """(offset in ``src``, offset in the plaintext) where each whole frame of ``src[start:stop]``
        ends, walked one frame at a time by their headers (no decoding; ends early at a frame without
        a declared size)."""
        if not 0 <= start <= stop <= len(src):
            return
        base = ctypes.cast(ctypes.c_char_p(src), ctypes.c_void_p).value or 0
        size, content, is_error = self._lib.ZSTD_findFrameCompressedSize, self._lib.ZSTD_getFrameContentSize, \
            self._lib.ZSTD_isError
        at, end = start, 0
        while at < stop:
            n = size(base + at, stop - at)
            if is_error(n):
                return
            c = content(base + at, stop - at)
            if c >= _CONTENTSIZE_ERROR:
                return
            at += n
            end += c
            yield at, end

    def decode_into(self, src: bytes, start: int, stop: int, total: int, out: bytearray) -> None:
        """:meth:`decode` into the caller's ``out`` (grown to at least ``total`` bytes; the plaintext
        is ``out[:total]``): no copy of the plaintext, for a caller that only searches it."""
        if not 0 <= start <= stop <= len(src) or total < 0:
            raise ValueError("frame run outside the buffer")
        if len(out) < total:
            out.extend(bytes(max(total, 2 * len(out)) - len(out)))
        if start == stop:
            return
        base = ctypes.cast(ctypes.c_char_p(src), ctypes.c_void_p).value or 0
        dst = (ctypes.c_char * len(out)).from_buffer(out)
        try:
            with self._lock:
                r = self._lib.ZSTD_decompressDCtx(self._dctx, dst, total, base + start, stop - start)
        finally:
            del dst
        if self._lib.ZSTD_isError(r):
            raise FrameError(self._lib.ZSTD_getErrorName(r).decode("ascii", "replace"))
        if r != total:
            raise FrameError("a frame's content differs from its declared size")


_KEEP_BUF = 4 << 20
_CONTENTSIZE_ERROR = (1 << 64) - 2       # ZSTD_CONTENTSIZE_ERROR; ZSTD_CONTENTSIZE_UNKNOWN is 2^64 - 1
_D_WINDOW_LOG_MAX = 100                  # ZSTD_d_windowLogMax
_sized: list[Optional[SizedDecoder]] = []


def sized_decoder() -> Optional[SizedDecoder]:
    """The process's :class:`SizedDecoder` (None: libzstd's symbols are not reachable here)."""
    if not _sized:
        dec: Optional[SizedDecoder] = None
        try:
            path = native_library_path()
            if path is None:
                raise ImportError("no zstd C extension")
            lib = ctypes.CDLL(path)
            lib.ZSTD_createDCtx.restype = ctypes.c_void_p
            lib.ZSTD_createDCtx.argtypes = []
            lib.ZSTD_DCtx_setParameter.restype = ctypes.c_size_t
            lib.ZSTD_DCtx_setParameter.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
            lib.ZSTD_decompressDCtx.restype = ctypes.c_size_t
            lib.ZSTD_decompressDCtx.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                                ctypes.c_void_p, ctypes.c_size_t]
            lib.ZSTD_findDecompressedSize.restype = ctypes.c_ulonglong
            lib.ZSTD_findDecompressedSize.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            lib.ZSTD_findFrameCompressedSize.restype = ctypes.c_size_t
            lib.ZSTD_findFrameCompressedSize.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            lib.ZSTD_getFrameContentSize.restype = ctypes.c_ulonglong
            lib.ZSTD_getFrameContentSize.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            lib.ZSTD_isError.restype = ctypes.c_uint
            lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
            lib.ZSTD_getErrorName.restype = ctypes.c_char_p
            lib.ZSTD_getErrorName.argtypes = [ctypes.c_size_t]
            dec = SizedDecoder(lib)
        except (OSError, AttributeError, ImportError, MemoryError, FrameError):
            dec = None
        _sized.append(dec)
    return _sized[0]


def decode_bounded(buf: Buf, limit: int) -> bytes:
    """Decode one complete frame whose plaintext must not exceed ``limit`` bytes (FrameError)."""
    out: list[bytes] = []
    n = 0
    it = iter_plain(buf)
    while True:
        try:
            piece = next(it)
        except StopIteration as stop:
            eof, err = stop.value
            break
        n += len(piece)
        if n > limit:
            raise FrameLimitError(f"frame expands past {limit} bytes")
        out.append(piece)
    if err is not None:
        raise FrameError(err)
    if not eof:
        raise FrameError("frame is incomplete")
    return b"".join(out)


def decode_partial(buf: Buf, chunk: int = 1 << 16, limit: int = 0) -> bytes:
    """What decodes from the start of a (possibly incomplete) frame, at most ``limit`` bytes
    (default: the frame limit of :mod:`app.log.format.limits`)."""
    from ..format.limits import MAX_FRAME_BYTES
    limit = limit or MAX_FRAME_BYTES
    out: list[bytes] = []
    n = 0
    it = iter_plain(buf)
    for piece in it:
        out.append(piece[:limit - n])
        n += len(out[-1])
        if n >= limit:
            break
    return b"".join(out)


def decode_torn(buf: Buf, limit: int = 0) -> bytes:
    """Records recovered from a torn final frame: the decodable plaintext cut after its
    last ``\\n`` (no end-of-frame requirement; an incomplete record is dropped)."""
    data = decode_partial(buf, limit=limit)
    return data[:data.rfind(b"\n") + 1]
