"""The title cache: ``<cache>/titles.json`` (the cache folder of :mod:`app.store.indexcache`), keyed by path
and revision (size and mtime as the listing's stat gives them, and inode and ctime when it gave them), with the
header facts the listing read in the same open and whether the title is exact (decision 0016).  Read in one
typed decode, written atomically by :func:`save`; :mod:`app.store.titles` reads the titles it holds."""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Optional

import msgspec

_FORMAT = 5
_MAX_FILE = 256 << 20              # titles.json bigger than this (or not a regular file: a link, a FIFO) is not read
_lock = threading.Lock()
# path -> (inode, ctime_ns, size, mtime_ns, title, head, exact); head: (header object, id, [fatal header problems]) or
# None; exact: False for a provisional title (a middle left unread, decision 0016).
# The shape is checked for the whole file in one typed decode: an entry of another shape makes the
# file foreign (ignored and rebuilt).
Head = tuple[dict[str, Any], str, list[str]]
Entry = tuple[int, int, int, int, Optional[str], Optional[Head], bool]
_cache: Optional[dict[str, Entry]] = None
_dirty = False


class _CacheFile(msgspec.Struct):
    """``titles.json``: the format and the cached titles."""
    format: int
    titles: dict[str, Entry]


def cache_file() -> Optional[Path]:
    """``titles.json`` in the cache folder (None: no cache folder)."""
    from .indexcache import cache_root
    root = cache_root()
    return None if root is None else root / "titles.json"


def _load() -> dict[str, Entry]:
    global _cache
    if _cache is None:
        _cache = {}
        f = cache_file()
        if f is not None:
            try:
                from .cachefiles import read_bounded
                blob = read_bounded(f, _MAX_FILE)
                if blob is None:
                    raise OSError("not a regular cache file of a sound size")
                obj = msgspec.json.decode(blob, type=_CacheFile)
                if obj.format == _FORMAT:
                    _cache = obj.titles
            except (OSError, msgspec.DecodeError):          # (ValidationError: a foreign shape)
                pass                       # missing, corrupt or foreign: start empty
    return _cache


def _encodable(x: object) -> bool:
    try:
        msgspec.json.encode(x)
        return True
    except UnicodeEncodeError:
        return False


def save() -> None:
    """Write the title cache if it changed (atomically; errors are ignored: it is a cache)."""
    global _dirty
    with _lock:
        f = cache_file()
        if not _dirty or f is None or _cache is None:
            return
        try:
            blob = msgspec.json.encode({"format": _FORMAT, "titles": _cache})
        except UnicodeEncodeError:        # a path that is not valid UTF-8 (surrogate-escaped): not cached
            keep = {k: v for k, v in _cache.items() if _encodable(k) and _encodable(v)}
            blob = msgspec.json.encode({"format": _FORMAT, "titles": keep})
        try:
            from .cachefiles import write_atomic
            write_atomic(f, (blob,))
            _dirty = False
        except OSError:
            pass


NO_IDENT = (0, 0)


def ident_of(st: os.stat_result) -> tuple[int, int]:
    """(inode, ctime ns) of a file's stat: what a rewrite in place changes even when the size and the
    mtime are put back (a user can reset an mtime, never a ctime)."""
    return st.st_ino, st.st_ctime_ns


def revision(size: int, mtime: float, ident: tuple[int, int] = NO_IDENT) -> tuple[int, int, int, int]:
    """The revision key of an entry: (inode, ctime ns, size, mtime ns)."""
    return ident[0], ident[1], size, int(mtime * 1e9)


def _same(hit: Entry, size: int, mtime: float, ident: tuple[int, int]) -> bool:
    """Whether ``hit`` is of this revision: size and mtime, and inode and ctime when the caller's stat
    gave them (an entry saved without them never matches such a lookup: read again, saved with them)."""
    return hit[2:4] == revision(size, mtime)[2:] and (ident == NO_IDENT or hit[:2] == ident)


def entry(path: str, size: int, mtime: float, ident: tuple[int, int] = NO_IDENT) -> Optional[Entry]:
    """The cache's entry for ``path`` at this revision, else None."""
    with _lock:
        hit = _load().get(path)
    return hit if hit is not None and _same(hit, size, mtime, ident) else None


def empty() -> bool:
    """Whether the title cache holds nothing (a first listing: no lookup can hit)."""
    with _lock:
        return not _load()


def lookup(path: str, size: int, mtime: float) -> tuple[bool, Optional[str]]:
    """(hit, title) of the cache for ``path`` at this revision (size and mtime as the listing's stat gives)."""
    hit = entry(path, size, mtime)
    return (True, hit[4]) if hit is not None else (False, None)


def lookup_exact(path: str, size: int, mtime: float) -> Optional[bool]:
    """Whether the cached title of ``path`` at this revision is exact (None: no entry)."""
    hit = entry(path, size, mtime)
    return None if hit is None else hit[6]


def lookup_head(path: str, size: int, mtime: float, ident: tuple[int, int] = NO_IDENT) \
        -> Optional[tuple[Optional[str], dict[str, Any], str, list[str], bool]]:
    """(title, header object, id, fatal header problems, title exact) cached for ``path`` at this
    revision (``ident``: :func:`ident_of` the listing's stat), else None."""
    hit = entry(path, size, mtime, ident)
    if hit is None or hit[5] is None:
        return None
    head = hit[5]
    return hit[4], dict(head[0]), head[1], list(head[2]), hit[6]


def remember(path: str, size: int, mtime: float, title: Optional[str], head: Optional[Head] = None,
             exact: bool = True, ident: tuple[int, int] = NO_IDENT) -> None:
    """Cache the title (and the header facts) read from ``path`` at this revision (written by :func:`save`);
    ``exact``: False for a provisional title (a middle left unread)."""
    global _dirty
    with _lock:
        _load()[path] = revision(size, mtime, ident) + (title, head, exact)
        _dirty = True


def upgrade(path: str, size: int, mtime: float, title: Optional[str], problems: Optional[list[str]] = None) -> bool:
    """Record the exact title read for ``path`` at this revision over a provisional entry (the header
    facts kept; ``problems``: the damage the exact read named, added to the entry's).  False when
    the cache holds no entry for this revision (the file changed: the next listing reads it anew)."""
    global _dirty
    with _lock:
        cache = _load()
        hit = cache.get(path)
        if hit is None or not _same(hit, size, mtime, NO_IDENT):
            return False
        head = hit[5]
        if head is not None and problems:
            head = (head[0], head[1], head[2] + [p for p in problems if p not in head[2]])
        cache[path] = hit[:4] + (title, head, True)
        _dirty = True
        return True
