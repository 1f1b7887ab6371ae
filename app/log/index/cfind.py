"""The C library's ``strstr`` and ``memmem`` through ``ctypes`` (pure core, optional): a byte string in a window.

Where the standard library's scans look at every byte (``re``'s literal prefix loop, ``bytes.find``
with a short needle of common bytes), glibc's ``strstr`` compares 16–64 bytes a step for the
needle's first two bytes (SSE2/AVX2/AVX-512), ~1.6 ms per 100 MB for ``\\u``; its ``memmem`` of a
2-byte needle is a byte-at-a-time loop (~55 ms, slower than ``re``).  :class:`Pinned` holds the
address of one ``bytes`` or ``bytearray`` (no copy) for repeated finds in it.  ``strstr`` stops at a
NUL: CPython keeps one after the last byte of every ``bytes`` and ``bytearray`` (checked when
pinned; else :meth:`Pinned.scan` takes ``memmem``), and an embedded NUL is stepped over.  ``memmem``
calls are clamped to the buffer: no length beyond it is ever passed.  Where the C library or these
symbols cannot be reached (Windows), :data:`AVAILABLE` is False and callers keep their Python path.
"""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Union

Buf = Union[bytes, bytearray]


def _load() -> tuple[Optional[Any], Optional[Any]]:
    try:
        libc = ctypes.CDLL(None)           # (the process's own symbols: glibc on Linux)
        mm, ss = libc.memmem, libc.strstr
    except (OSError, AttributeError, TypeError):
        return None, None
    mm.restype = ctypes.c_void_p
    mm.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    ss.restype = ctypes.c_void_p
    ss.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return mm, ss


_memmem, _strstr = _load()
AVAILABLE = _memmem is not None and _strstr is not None
GIVE_UP = -2                               # :meth:`Pinned.scan`: more embedded NULs than it steps over


class Pinned:
    """The address of ``buf`` for :meth:`find` and :meth:`scan` (a ``bytearray``'s buffer is
    exported, so it cannot be resized, until :meth:`close`, or the ``with`` block ends)."""

    def __init__(self, buf: Buf) -> None:
        if not AVAILABLE:
            raise OSError("memmem/strstr are not available")
        self.n = len(buf)
        self._keep: Any
        if isinstance(buf, bytearray):
            self._keep = (ctypes.c_char * self.n).from_buffer(buf) if self.n else None
            self.addr = ctypes.addressof(self._keep) if self.n else 0
        elif isinstance(buf, bytes):
            self._keep = ctypes.c_char_p(buf)              # (the bytes object's own buffer)
            self.addr = ctypes.cast(self._keep, ctypes.c_void_p).value or 0
        else:
            raise TypeError(f"memmem needs bytes or a bytearray, not {type(buf).__name__}")
        self._buf = buf                                    # (keeps the bytes alive)
        # strstr may run to the NUL CPython keeps after the last byte (it is part of the allocation)
        self._z = self.n > 0 and ctypes.string_at(self.addr + self.n, 1) == b"\0"

    def find(self, needle: bytes, start: int = 0, end: Optional[int] = None) -> int:
        """The offset of the first ``needle`` wholly inside ``buf[start:end]`` (-1: none), as
        ``bytes.find`` (``start``/``end`` clamped to the buffer, negative ones not taken from its end)."""
        end = self.n if end is None else min(end, self.n)
        start = max(start, 0)
        k = len(needle)
        if k == 0:
            return start if start <= end else -1
        if end - start < k:
            return -1
        assert _memmem is not None
        r = _memmem(self.addr + start, end - start, needle, k)
        return r - self.addr if r else -1

    def scan(self, needle: bytes, start: int = 0, end: Optional[int] = None, nuls: int = 8) -> int:
        """As :meth:`find`, by ``strstr`` (``needle`` without a NUL); :data:`GIVE_UP` after
        stepping over ``nuls`` embedded NULs (a zeroed stretch of a torn file: one call each)."""
        end = self.n if end is None else min(end, self.n)
        start = max(start, 0)
        k = len(needle)
        if not self._z or k == 0 or b"\0" in needle or (self.n - end) >> 4 > max(end - start, 1 << 12):
            return self.find(needle, start, end)           # (strstr would read far past ``end``: ~30x cheaper a byte)
        assert _strstr is not None
        while end - start >= k:
            r = _strstr(self.addr + start, needle)
            if r:
                at = r - self.addr
                return at if at + k <= end else -1
            z = self._buf.find(b"\0", start, end)           # (strstr stopped at a NUL: past end, or inside)
            if z < 0:
                return -1
            if nuls <= 0:
                return GIVE_UP
            nuls -= 1
            start = z + 1
        return -1

    def close(self) -> None:
        self._keep = None
        self._buf = b""
        self.addr = 0
        self.n = 0
        self._z = False

    def __enter__(self) -> Pinned:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
