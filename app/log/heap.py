"""The C library's heap, where it is glibc (issue 36): a process gives its freed pages back to the system.

A pass that decodes rows by the thousand leaves its freed memory scattered in the heap, resident; ``malloc_trim``
returns those pages.  Used by the window (:mod:`app.ui.memory`, which also sets the arenas and thresholds) and by
the background pass's child (:mod:`app.store.scan_child`).  Both are no-ops where the C library is not glibc."""
from __future__ import annotations

import ctypes
import ctypes.util
from typing import Any, Optional

_libc: Optional[Any] = None


def glibc() -> Optional[Any]:
    """The C library when it is glibc (it has ``malloc_trim`` and ``mallopt``), else None."""
    global _libc
    if _libc is None:
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _libc = lib if hasattr(lib, "malloc_trim") and hasattr(lib, "mallopt") else False
        except OSError:
            _libc = False
    return _libc or None


def give_back() -> bool:
    """``malloc_trim(0)``: the heap's free pages back to the system; True when some were."""
    lib = glibc()
    return bool(lib is not None and lib.malloc_trim(0))
