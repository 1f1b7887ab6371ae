"""The cyclic garbage collector held off for a pass that makes many containers and no cycles (no Qt)."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off for the block, on again after it however it ends, unless it was off before (a caller's
    own pause is never ended here; two threads pausing at once leave it on when the first one ends).  For passes
    that decode rows by the thousand (tens of thousands of dicts and lists, no cycles): its passes over them only
    cost time (10-25 % of an export or of *Errors only*'s page)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
