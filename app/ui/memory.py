"""The window process's native heap (issue 36): fewer malloc arenas, and freed memory given back.

glibc gives each thread that allocates its own arena (up to 8 per core), so the page, find and
summary worker threads each keep a heap of their own whose freed pages stay in the process.  Two
arenas hold the same objects with far less idle memory; ``malloc_trim`` returns the free pages at
the top and in the middle of the heaps once a big piece of work let go of its memory.  Both are
no-ops where the C library is not glibc.  ``trim`` also drops the source lines PySide's import
hook left in ``linecache``."""
from __future__ import annotations

import ctypes
import ctypes.util
import linecache
from typing import Any, Optional

M_ARENA_MAX = -8
_libc: Optional[Any] = None


def _glibc() -> Optional[Any]:
    global _libc
    if _libc is None:
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc = lib if hasattr(lib, "malloc_trim") and hasattr(lib, "mallopt") else False
        except OSError:
            _libc = False
    return _libc or None


def limit_arenas(n: int = 2) -> bool:
    """At most ``n`` malloc arenas (call before the worker threads start); True when applied."""
    lib = _glibc()
    return bool(lib is not None and lib.mallopt(M_ARENA_MAX, n))


def forget_source_lines() -> int:
    """Drop the source lines ``linecache`` holds; returns how many files it held.

    PySide's import hook reads the source of every module imported after PySide (through
    ``inspect``, which fills ``linecache``): in the window that was ~200 files, 3.5 M characters,
    80 K Python blocks (a third of an empty window's heap, issue 36), kept for no use (a traceback
    reads its lines again)."""
    n = len(linecache.cache)
    linecache.clearcache()
    return n


def trim() -> bool:
    """Forget cached source lines, and give the heap's free pages back to the system; True when
    some pages were."""
    forget_source_lines()
    lib = _glibc()
    return bool(lib is not None and lib.malloc_trim(0))
