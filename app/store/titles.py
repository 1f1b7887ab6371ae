"""Session titles for the session list: one bounded read per file, cached by revision.

The title of a session is its last ``session/title`` event (spec §2.4, last wins).  dsh
writes the provider's title after turn 1 and a user's rename between turns, so it is found
near the end of the file, else near its start: :func:`session_title` reads a bounded tail
window (and a head window only when the tail has none) and finds the row with ``rfind`` on
the bytes (C speed); only that one row is decoded.

Titles are cached in ``<cache>/titles.json`` (the cache folder of :mod:`app.store.indexcache`)
keyed by path and revision (size and mtime, as the listing's own stat gives them), so listing a
home again reads no session whose file did not change.  :func:`save` writes the cache atomically.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

import msgspec

if TYPE_CHECKING:
    from .discovery import SessionInfo

WINDOW = 256 << 10
_NEEDLE = b'"type":"session/title"'
_FORMAT = 1
_lock = threading.Lock()
# path -> [0, 0, size, mtime_ns, title]
_cache: Optional[dict[str, list[Union[int, str, None]]]] = None
_dirty = False


class _CacheFile(msgspec.Struct):
    """``titles.json``: the format and the cached titles."""
    format: int
    titles: dict[str, list[Union[int, str, None]]]


def _file() -> Optional[Path]:
    from .indexcache import cache_root
    root = cache_root()
    return None if root is None else root / "titles.json"


def _load() -> dict[str, list[Union[int, str, None]]]:
    global _cache
    if _cache is None:
        _cache = {}
        f = _file()
        if f is not None:
            try:
                obj = msgspec.json.decode(f.read_bytes(), type=_CacheFile)
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
        f = _file()
        if not _dirty or f is None or _cache is None:
            return
        try:
            blob = msgspec.json.encode({"format": _FORMAT, "titles": _cache})
        except UnicodeEncodeError:        # a path that is not valid UTF-8 (surrogate-escaped): not cached
            keep = {k: v for k, v in _cache.items() if _encodable(k) and _encodable(v)}
            blob = msgspec.json.encode({"format": _FORMAT, "titles": keep})
        try:
            from .indexcache import _write_atomic
            _write_atomic(f, blob)
            _dirty = False
        except OSError:
            pass


def title_in(blob: bytes) -> Optional[str]:
    """The title of the last complete ``session/title`` row in ``blob`` (None: none there).

    Searched forwards (``bytes.find`` skips ahead by the needle's length; ``rfind`` does not)."""
    found, i = None, blob.find(_NEEDLE)
    while i >= 0:
        lo = blob.rfind(b"\n", 0, i) + 1
        hi = blob.find(b"\n", i)
        if hi < 0:
            break                          # a row cut by the window's end
        if lo > 0:                         # (a row cut by the window's start is passed over)
            try:
                obj = msgspec.json.decode(blob[lo:hi])
            except msgspec.DecodeError:
                obj = None
            if isinstance(obj, dict) and obj.get("type") == "session/title" and isinstance(obj.get("data"), dict) \
                    and isinstance(obj["data"].get("title"), str):
                found = obj["data"]["title"]
        i = blob.find(_NEEDLE, hi)
    return found


def read_title(path: str, size: int, window: int = WINDOW) -> Optional[str]:
    """The title of a raw JSONL session file: tail window first, then the head window."""
    with open(path, "rb") as f:
        if size <= 2 * window:
            return title_in(f.read())
        f.seek(size - window)
        tail = b"\n" + f.read(window)          # (a cut first row does not decode and is passed over)
        t = title_in(tail)
        if t is not None:
            return t
        f.seek(0)
        return title_in(f.read(window))


def session_title(info: SessionInfo) -> Optional[str]:
    """The title of a listed session (:class:`~app.store.discovery.SessionInfo`), cached by revision."""
    global _dirty
    if info.format != "jsonl":
        return None
    size, mtime = getattr(info, "size", None), getattr(info, "mtime", None)
    if not size or not mtime:                    # (a listing already stat'ed the file: no second stat)
        try:
            st = os.stat(info.path)
        except OSError:
            return None
        size, mtime = st.st_size, st.st_mtime
    rev: list[Union[int, str, None]] = [0, 0, size, int(mtime * 1e9)]
    with _lock:
        hit = _load().get(info.path)
    if isinstance(hit, list) and len(hit) == 5 and hit[:4] == rev and (hit[4] is None or isinstance(hit[4], str)):
        return hit[4]
    try:
        t = read_title(info.path, size)
    except OSError:
        return None
    with _lock:
        _load()[info.path] = rev + [t]
        _dirty = True
    return t
