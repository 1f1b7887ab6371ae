"""Work-arounds for the Qt binding installed here.

PySide6 6.12 on CPython < 3.12 treats ``None``, ``True`` and ``False`` as immortal (they
only are from 3.12, PEP 683) and returns them without a new reference: every call of a
Qt method returning ``void`` drops one reference to ``None``, every ``Signal.emit`` one
to ``True``.  After some tens of thousands of calls - seconds of painting - CPython
aborts with "Fatal Python error: none_dealloc" (or ``bool_dealloc``).  Measured here:
``QColor.setRed`` x1000 -> ``sys.getrefcount(None)`` down by 1000; ``sig.emit(5)`` x1000
-> ``sys.getrefcount(True)`` down by 1000.

:func:`keep_none_alive` gives these three singletons reference counts no program can
exhaust, which is what 3.12+ does by design.  They are static objects CPython never
frees, so this changes nothing else.  Call it before creating widgets (``app.ui`` does on
import; the test conftest does too).
"""
from __future__ import annotations

import sys

_DONE = False


def none_leaks_per_void_call() -> int:
    """How many ``None`` references one void Qt call drops (0 when the binding is fine)."""
    from PySide6.QtCore import QSize
    s = QSize(1, 1)
    before = sys.getrefcount(None)
    for _ in range(100):
        s.setWidth(2)
    return max(0, (before - sys.getrefcount(None)) // 100)


def keep_none_alive() -> bool:
    """Make None/True/False effectively immortal on CPython < 3.12 (idempotent). True if applied."""
    global _DONE
    if _DONE or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    if hasattr(sys, "gettotalrefcount"):       # debug build: different object header layout
        return False
    import ctypes
    for obj in (None, True, False):
        ref = ctypes.c_ssize_t.from_address(id(obj))
        if abs(ref.value - sys.getrefcount(obj)) > 4:
            return False                        # not the layout we expect: leave it alone
    for obj in (None, True, False):
        ctypes.c_ssize_t.from_address(id(obj)).value += 1 << 42
    _DONE = True
    return True
