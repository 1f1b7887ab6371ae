"""``page`` of the tail on a cold cache (issue 29: the tail page never waits for the whole-log pass).

A page's row statuses (``surface``) and compaction groups come from the log's surface index, which is
one fold of every row since seq 0.  Saved beside the seq index, it costs nothing; missing, it costs a
read of the whole log (about 8 s per GB here).  So the tail page of a big log whose surface index is
not saved is shown at once with its statuses pending: ``surfaceStatus`` "pending", each event entry's
``surface`` "pending" (no ``surfaceDetail``), ``compactions`` null.  ``index PATH --all`` (or ``page
--wait``, or the window's pass) saves the index; from then on the page is as before
(``surfaceStatus`` "ready").

Only where the fold is dear: a log under :data:`PENDING_BYTES` of plain rows (a zstd log counted at
:data:`ZSTD_RATIO` times its stored size) is folded as before (64 MiB fold in about half a second, well
inside the two seconds the issue allows), and so is a log whose index cannot be saved (a store, no cache
folder): there nothing would ever make the statuses come, so the page waits as before.
"""
from __future__ import annotations

import os
from typing import Any, Optional

PENDING_BYTES = 64 << 20
"""Plain bytes of rows from which a cold tail page does not fold the whole log
(``SESSION_LENS_PAGE_PENDING_BYTES`` overrides it)."""
ZSTD_RATIO = 4
"""A zstd log's plain size estimated from its stored size (dsh's logs compress about 5:1)."""

PENDING_LINE = ("row statuses pending: the surface index of this log is not built yet; "
                "run `session-lens index {path} --all` or pass --wait")


def pending_bytes() -> int:
    env = os.environ.get("SESSION_LENS_PAGE_PENDING_BYTES", "")
    try:
        return max(0, int(env)) if env.strip() else PENDING_BYTES
    except ValueError:
        return PENDING_BYTES


def fold_bytes(reader: Any) -> Optional[int]:
    """The plain bytes a fold of the whole log reads (estimated for zstd); None: not a file the cache keeps."""
    from ..log.source.sources import RawJsonlSource
    from ..store.indexcache import file_source_of
    src = file_source_of(reader)          # (the same sources as cached_surface saves the index of)
    if src is None or not (isinstance(src, RawJsonlSource) or src.kind == "zstd"):
        return None
    return int(src.size) * (ZSTD_RATIO if src.kind == "zstd" else 1)


def page_surface(reader: Any, wait: bool) -> Any:
    """The surface index a page labels its rows from, or None (pending) where it is not saved and would
    need a fold of a big log (``wait``: always the index, built if need be, as before)."""
    from ..store.surface_cache import cached_surface, saved_surface
    size = fold_bytes(reader)
    if wait or size is None or size < pending_bytes():
        return cached_surface(reader)[0]
    got = saved_surface(reader)
    return got[0] if got is not None else None


def mark_pending(entries: list[Any], obj: dict[Any, Any]) -> None:
    """The page without a surface index: every event entry's status and the compaction groups pending."""
    for e in entries:
        if "event" in e:
            e["surface"] = "pending"
    obj["compactions"] = None
    obj["surfaceStatus"] = "pending"
