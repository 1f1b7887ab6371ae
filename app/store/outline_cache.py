"""The outline of a log (turns, errors, problems) saved beside its seq index (issue 29: work done ahead).

A cache file like the others of :mod:`app.store.indexcache`: read through the untrusted-folder rules
(:func:`app.store.cachefiles.read_bounded`: regular file of ours, no links, bounded), checked with the
cache folder's keyed digest, and used only for the same file revision (identity, ctime, header, tail)."""
from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any, Optional

import msgspec

from ..log.index.reader import LogReader
from ..log.source.sources import FileSource
from .cachefiles import read_bounded
from .indexcache import (DIGEST_SIZE, Identity, file_source_of, keyed_hasher, source_identity, cache_size_limit, tail_hash,
                         cache_file, cache_root)
from .cachewrite import write_signed

OUTLINE_MAGIC = b"SLOUT\x00\x01\n"
OUTLINE_FORMAT = 2            # 2: the turns say where their errors are stored (error_rows)


def _outline_meta(src: FileSource, ident: Identity) -> dict[str, Any]:
    st = os.fstat(src.fd)
    return {"format": OUTLINE_FORMAT, **ident, "ctime_ns": st.st_ctime_ns,
            "header": hashlib.sha256(src.header_raw).hexdigest(), "tail": tail_hash(src.fd, src.header_end, src.size)}


def cached_outline(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
                   cancel: Optional[Callable[[], bool]] = None,
                   make: Optional[Callable[[], Any]] = None) -> tuple[Any, str]:
    """The log's outline (:func:`app.log.query.outline.build_outline`: turns, errors, problems), saved beside
    its index, so that a session opened again has its turns, F8 and *Errors only* at once.
    -> (Outline, "hit" | "built" | "uncached"); an outline cut short by ``cancel`` is never saved.
    ``make()``: how to build it (default :func:`build_outline`; the one background pass shares its read)."""
    from ..log.query.outline import Outline, build_outline
    build = make if make is not None else (lambda: build_outline(reader, progress, cancel))
    src = file_source_of(reader)
    root = cache_root()
    ident = source_identity(src) if src is not None else None
    if src is None or ident is None or root is None:
        return build(), "uncached"
    path = cache_file(ident, root).with_suffix(".outline")
    meta = _outline_meta(src, ident)
    try:
        blob = read_bounded(path, cache_size_limit(src.size))
        if blob is None:
            raise OSError("no outline saved")
        body, digest = blob[:-DIGEST_SIZE], blob[-DIGEST_SIZE:]
        if keyed_hasher(body).digest() == digest and body.startswith(OUTLINE_MAGIC):
            saved = msgspec.json.decode(body[len(OUTLINE_MAGIC):], type=dict[str, Any])
            if all(saved.get(k) == v for k, v in meta.items()):
                return msgspec.convert(saved["outline"], Outline), "hit"
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, TypeError, KeyError, ValueError):
        pass
    ol = build()
    if ol.complete:
        try:
            write_signed(path, OUTLINE_MAGIC, msgspec.json.encode({**meta, "outline": ol}))
        except (OSError, ValueError, TypeError):
            pass
    return ol, "built"
