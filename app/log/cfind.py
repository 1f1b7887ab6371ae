"""The C library's ``memmem`` through ``ctypes`` (pure core, optional): a byte string in a window.

Where the standard library's scans look at every byte (``re``'s literal prefix loop, ``bytes.find``
with a short needle of common bytes), glibc's ``memmem`` skips: for a needle of 3 bytes or more it
jumps by the needle's length less one past any byte pair the needle does not hold.  :class:`Pinned`
holds the address of one ``bytes`` or ``bytearray`` (no copy) for repeated finds in it; where the
C library or its ``memmem`` cannot be reached (Windows), :data:`AVAILABLE` is False and callers
keep their pure Python path.  Every call is clamped to the buffer: no length beyond it is ever passed.
"""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Union

Buf = Union[bytes, bytearray]


def _load() -> Optional[Any]:
    try:
        libc = ctypes.CDLL(None)           # (the process's own symbols: glibc on Linux)
        f = libc.memmem
    except (OSError, AttributeError, TypeError):
        return None
    f.restype = ctypes.c_void_p
    f.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_size_t]
    return f


_memmem: Optional[Any] = _load()
AVAILABLE = _memmem is not None


class Pinned:
    """The address of ``buf`` for :meth:`find` (a ``bytearray``'s buffer is exported, so it cannot
    be resized, until :meth:`close`, or the ``with`` block ends)."""

    def __init__(self, buf: Buf) -> None:
        if _memmem is None:
            raise OSError("memmem is not available")
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

    def close(self) -> None:
        self._keep = None
        self.addr = 0
        self.n = 0

    def __enter__(self) -> Pinned:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
