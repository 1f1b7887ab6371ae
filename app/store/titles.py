"""Session titles for the session list: one bounded read per file, cached by revision.

The title of a session is its last ``session/title`` event (spec §2.4, last wins), found with
``bytes.find`` (C speed); only the title rows are decoded.  A file of at most ``EXACT_BYTES`` on
disk is read (zstd: decoded) whole, so its title is exactly the one ``inspect`` gives.  A bigger
file is read in two bounded windows: dsh writes the provider's title after turn 1 and a user's
rename between turns, so the last title is looked for in the tail window, else in the head
window; a rename that lies only in the middle of a big log is not seen (the list then shows an
earlier title) — the price of a list that never reads a whole big log.

Titles are cached in ``<cache>/titles.json`` (the cache folder of :mod:`app.store.indexcache`)
keyed by path and revision (size and mtime, as the listing's own stat gives them), with the
header facts the listing read in the same open, so listing a home again opens no session whose
file did not change (one ``stat`` each).  :func:`save` writes the cache atomically.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import msgspec

if TYPE_CHECKING:
    from .discovery import SessionInfo

EXACT_BYTES = 4 << 20              # a file up to this size on disk is searched whole: exactly inspect's title
WINDOW = 256 << 10                 # raw JSONL: bytes read at the tail (and the head when the tail has no title)
ZSTD_WINDOW = 64 << 10             # zstd: compressed bytes read at the tail (and the head); ~4x as much text
ZSTD_PLAIN_LIMIT = 16 << 20        # plaintext decoded from one window at most (a bomb is passed over)
ZSTD_WHOLE_LIMIT = 64 << 20        # plaintext decoded from a whole file at most (else: the windows)
_NEEDLE = b'"session/title"'          # the type value (any spacing around the key; rows are decoded to check)
_FORMAT = 2
_lock = threading.Lock()
# path -> [0, 0, size, mtime_ns, title, head]; head: [header object, id, [fatal header problems]] or None
Entry = list[Any]
_cache: Optional[dict[str, Entry]] = None
_dirty = False


class _CacheFile(msgspec.Struct):
    """``titles.json``: the format and the cached titles."""
    format: int
    titles: dict[str, Entry]


def _file() -> Optional[Path]:
    from .indexcache import cache_root
    root = cache_root()
    return None if root is None else root / "titles.json"


def _load() -> dict[str, Entry]:
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


def _rev(size: int, mtime: float) -> Entry:
    return [0, 0, size, int(mtime * 1e9)]


def _entry(path: str, size: int, mtime: float) -> Optional[Entry]:
    with _lock:
        hit = _load().get(path)
    if isinstance(hit, list) and len(hit) == 6 and hit[:4] == _rev(size, mtime) and \
            (hit[4] is None or isinstance(hit[4], str)):
        return hit
    return None


def lookup(path: str, size: int, mtime: float) -> tuple[bool, Optional[str]]:
    """(hit, title) of the cache for ``path`` at this revision (size and mtime as the listing's stat gives)."""
    hit = _entry(path, size, mtime)
    return (True, hit[4]) if hit is not None else (False, None)


def lookup_head(path: str, size: int, mtime: float) -> Optional[tuple[Optional[str], dict[str, Any], str, list[str]]]:
    """(title, header object, id, fatal header problems) cached for ``path`` at this revision, else None."""
    hit = _entry(path, size, mtime)
    head = hit[5] if hit is not None else None
    if isinstance(head, list) and len(head) == 3 and isinstance(head[0], dict) and isinstance(head[1], str) and \
            isinstance(head[2], list) and all(isinstance(p, str) for p in head[2]):
        return hit[4] if hit is not None else None, dict(head[0]), head[1], list(head[2])
    return None


def remember(path: str, size: int, mtime: float, title: Optional[str],
             head: Optional[tuple[dict[str, Any], str, list[str]]] = None) -> None:
    """Cache the title (and the header facts) read from ``path`` at this revision (written by :func:`save`)."""
    global _dirty
    with _lock:
        _load()[path] = _rev(size, mtime) + [title, list(head) if head is not None else None]
        _dirty = True


def title_of_jsonl(fd: int, size: int, head: bytes = b"", window: int = WINDOW) -> Optional[str]:
    """The title of an open raw JSONL session file: a file of at most ``EXACT_BYTES`` is read whole
    (its last title); a bigger one: the last title in the tail window, else in the head window.
    ``head``: the bytes already read from offset 0 (not read again)."""
    if size <= max(EXACT_BYTES, 2 * window):
        data = head if len(head) >= size else head + os.pread(fd, size - len(head), len(head))
        return title_in(data)
    tail = b"\n" + os.pread(fd, window, size - window)      # (a cut first row does not decode: passed over)
    t = title_in(tail)
    if t is not None:
        return t
    data = head[:window] if len(head) >= window else head + os.pread(fd, window - len(head), len(head))
    return title_in(data)


def decode_frames(buf: bytes, start: int, stop: int, limit: int) -> bytes:
    """The plaintext of the complete frames ``buf[start:stop]`` (checksums verified), at most ``limit``
    bytes (FrameError past it).  Frames that declare their content size (dsh's do) are decoded in one
    call, the declared sizes summed first (libzstd refuses a frame that outgrows its declared size);
    others one by one, streamed and bounded."""
    from backports import zstd

    from ..log.limits import ZSTD_WINDOW_LOG_MAX
    from ..log.zstdframes import FrameError, decode_bounded
    mv = memoryview(buf)
    spans, total, at = [], 0, start
    while at < stop:
        n = zstd.get_frame_size(mv[at:stop])
        size = zstd.get_frame_info(mv[at:at + n]).decompressed_size
        spans.append((at, at + n))
        total = total + size if size is not None and total is not None else None
        at += n
    if total is not None and total <= limit:
        # libzstd sizes a frame's buffers by its declared content size (bounded above) and refuses
        # a frame that outgrows it; only bigger declarations need the window limit (its setup
        # costs as much as decoding a small frame)
        opts: Optional[dict[int, int]] = None
        if total > 1 << ZSTD_WINDOW_LOG_MAX:
            opts = {zstd.DecompressionParameter.window_log_max: ZSTD_WINDOW_LOG_MAX}
        text = zstd.decompress(mv[start:stop], options=opts) if spans else b""
        if len(text) != total:
            raise FrameError("a frame's content differs from its declared size")
        return text
    out, got = [], 0
    for a, b in spans:
        out.append(decode_bounded(mv[a:b], limit - got))
        got += len(out[-1])
    return b"".join(out)


def _frames_text(buf: bytes, start: int, limit: int) -> Optional[bytes]:
    """The plaintext of the chain of frames from ``buf[start]`` to the end of ``buf``, or None when
    the bytes from ``start`` are not such a chain.  A torn last frame gives its complete rows (as a
    reader recovers them); at most ``limit`` plaintext bytes (a bigger chain gives None)."""
    from ..log.zstdframes import COMPLETE, TORN, FrameError, ZstdError, decode_torn, scan_frame
    at, n = start, len(buf)
    torn = None
    while at < n:
        kind, end = scan_frame(buf, at)
        if kind == TORN:
            torn = at
            break
        if kind != COMPLETE:
            return None
        at = end
    try:
        text = decode_frames(buf, start, at, limit)
        if torn is not None:
            text += decode_torn(memoryview(buf)[torn:], limit=max(1, limit - len(text)))
    except (FrameError, ZstdError, ValueError):
        return None
    return text


def title_of_zstd(fd: int, size: int, header_end: int, window: int = ZSTD_WINDOW) -> Optional[str]:
    """The title of an open ``session.jsonl.zstd``: a file of at most ``EXACT_BYTES`` is decoded
    whole (its last title; at most ``ZSTD_WHOLE_LIMIT`` of text); a bigger one: the last title in the
    frames of the tail window (``window`` compressed bytes ending at the end of the file), else in
    the frames of the head window (after the header frame).  Frames are found by their headers and
    decoded with their checksums verified, bounded."""
    from ..log.zstdframes import MAGIC
    body = size - header_end
    if body <= 0:
        return None
    if size <= max(EXACT_BYTES, 2 * window + header_end):
        text = _frames_text(os.pread(fd, body, header_end), 0, ZSTD_WHOLE_LIMIT)
        if text is not None or body <= 2 * window:
            return title_in(b"\n" + text) if text else None
    tail = os.pread(fd, window, size - window)
    i = tail.find(MAGIC)
    while i >= 0:                                  # the first frame start whose chain reaches the end
        text = _frames_text(tail, i, ZSTD_PLAIN_LIMIT)
        if text is not None:
            t = title_in(b"\n" + text)
            if t is not None:
                return t
            break
        i = tail.find(MAGIC, i + 1)
    head = os.pread(fd, window, header_end)
    text = _frames_text(head, 0, ZSTD_PLAIN_LIMIT)       # (the frame cut by the window: its complete rows)
    return title_in(b"\n" + text) if text else None


def read_title(path: str, size: int, window: int = WINDOW) -> Optional[str]:
    """The title of a raw JSONL session file: tail window first, then the head window."""
    from ..log.limits import open_regular
    fd = open_regular(path)
    try:
        return title_of_jsonl(fd, size, b"", window)
    finally:
        os.close(fd)


def session_title(info: SessionInfo) -> Optional[str]:
    """The title of a listed session (:class:`~app.store.discovery.SessionInfo`), cached by revision
    (one read of the file when the cache has no entry for its revision; SQLite: None)."""
    if info.format not in ("jsonl", "zstd"):
        return None
    if info.title_read:
        return info.title
    size, mtime = info.size, info.mtime
    if not size or not mtime:                    # (a listing already stat'ed the file: no second stat)
        try:
            st = os.stat(info.path)
        except OSError:
            return None
        size, mtime = st.st_size, st.st_mtime
    hit, t = lookup(info.path, size, mtime)
    if hit:
        return t
    try:
        if info.format == "jsonl":
            t = read_title(info.path, size)
        else:
            from .discovery import zstd_title
            t = zstd_title(info.path)
    except OSError:
        return None
    remember(info.path, size, mtime, t, (info.header, info.id, list(info.problems)))
    return t
