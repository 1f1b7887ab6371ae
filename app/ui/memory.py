"""The window process's native heap (issue 36): fewer malloc arenas, and freed memory given back.

glibc gives each thread that allocates its own arena (up to 8 per core), so the page, find and
summary worker threads each keep a heap of their own whose freed pages stay in the process.  Two
arenas hold the same objects with far less idle memory; ``malloc_trim`` returns the free pages at
the top and in the middle of the heaps once a big piece of work let go of its memory.  Both are
no-ops where the C library is not glibc.  ``trim`` also drops the source lines PySide's import
hook left in ``linecache``."""
from __future__ import annotations

import linecache

from ..log.heap import give_back, glibc

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MMAP_THRESHOLD = 512 << 10     # blocks from this size up: a map of their own, unmapped when freed
TRIM_THRESHOLD = 1 << 20       # free memory at the top of a heap beyond this: given back at once


def limit_arenas(n: int = 2) -> bool:
    """At most ``n`` malloc arenas (call before the worker threads start), and fixed mmap and trim
    thresholds; True when applied.

    glibc raises both thresholds each time a big mapped block is freed (up to 32 MB and 64 MB), after
    which a worker's big blocks (a page's bytes, a child's message, a cache file read) are carved
    from its arena, and the free space at the top of a thread's arena is kept: ``malloc_trim`` gives
    back free pages inside the heaps but not the top of a thread's arena (issue 36: 14.6 MB of a
    15.7 MB worker arena free and resident after the outline of a 4.5 GB log).  Fixed values turn
    that off: big blocks are mapped and unmapped, a heap's free top goes back at once."""
    lib = glibc()
    if lib is None:
        return False
    ok = bool(lib.mallopt(M_ARENA_MAX, n))
    return bool(lib.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(lib.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)) and ok


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
    return give_back()
