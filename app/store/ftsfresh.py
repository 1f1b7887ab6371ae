"""The fast freshness check of a home's full-text index (issue 32: a broad query from the command
line in 0.3 s, the freshness check of a 10k-session home included).

The freshness check proves that the stat walk of the root (:func:`app.store.ftswalk.scan_root`)
would give now exactly the walk the index last recorded (its digest, meta ``walk``): then every
session is indexed at its current revision and nothing needs comparing.  The slow way is to make
the walk.  The manifest (meta ``manifest`` of shard 0, one row) records that walk in a form that
is checked by one ``stat`` per folder and per file, and nothing else:

* every folder the walk visited, with its device, inode and mtime.  A folder whose mtime is
  unchanged still holds the same names (an entry added, removed or renamed in a folder moves its
  mtime), so the walk would list the same folders and files again.  That holds only when the
  mtime was older than the listing by :data:`app.store.ftswalk.RACY_NS` (a coarse clock could
  hide a change made within the same tick), and when no name of the folder is a link the walk
  passed over (its target can change without the folder's mtime moving).  A walk with any folder
  not so (or one that could not be read) gets no manifest: the next query walks;
* every file the walk found, with its device, inode, size and mtime, as the walk's digest has
  them.  An append moves the file's size and mtime, never its folder's: each file is stat-ed;
* the root itself when it is a folder (the kind of root - home, JSONL tree, folder - comes from
  its names).

All equal: the walk would be the recorded one, so its digest is the one the manifest names.
The caller then compares that digest with the index's (:func:`app.store.ftslive.live_search`,
in the read snapshot of its query).  Anything else (a changed stat, a missing file, a manifest
that does not parse) is no answer at all, and the caller walks.
"""
from __future__ import annotations

import os
from array import array
from typing import Any, Optional

from .ftswalk import Scanned, WalkSeen

MANIFEST_KEY = "manifest"
_MAGIC = b"SLM1"


def manifest_blob(digest: str, walked: Scanned, seen: WalkSeen) -> Optional[bytes]:
    """The manifest of a walk (digest ``digest``; ``seen``: what it vouched for,
    :class:`app.store.ftswalk.WalkSeen`), or None when the walk cannot be checked so: a folder it
    visited was not settled, had a link it passed over or could not be read, or a file it listed
    was gone."""
    if seen.unsure or not seen.folders:
        return None
    folders = seen.folders
    files = [(p, st) for p, st, _pr in walked[0]] + list(walked[1])
    names = [digest] + [d for d, _dev, _ino, _mt in folders] + [p for p, _st in files]
    big = array("Q", [len(folders), len(files)])
    big.extend(dev for _d, dev, _i, _m in folders)
    big.extend(ino for _d, _dev, ino, _m in folders)
    big.extend(st.st_dev for _p, st in files)
    big.extend(st.st_ino for _p, st in files)
    big.extend(st.st_size for _p, st in files)
    times = array("q", [mt for _d, _dev, _i, mt in folders])
    times.extend(st.st_mtime_ns for _p, st in files)
    text = "\0".join(names).encode("utf-8", "surrogateescape")
    head = array("Q", [len(big), len(times)])
    return _MAGIC + head.tobytes() + big.tobytes() + times.tobytes() + text


def _parse(blob: Any) -> Optional[tuple[str, list[tuple[str, int, int, int]], list[tuple[str, int, int, int, int]]]]:
    """(digest, folders [(path, dev, ino, mtime)], files [(path, dev, ino, size, mtime)]) or None."""
    if not isinstance(blob, bytes) or not blob.startswith(_MAGIC):
        return None
    pos = len(_MAGIC)
    head = array("Q")
    head.frombytes(blob[pos:pos + 16])
    pos += 16
    nbig, ntimes = head
    big, times = array("Q"), array("q")
    big.frombytes(blob[pos:pos + 8 * nbig])
    pos += 8 * nbig
    times.frombytes(blob[pos:pos + 8 * ntimes])
    pos += 8 * ntimes
    nd, nf = big[0], big[1]
    names = blob[pos:].decode("utf-8", "surrogateescape").split("\0")
    if len(big) != 2 + 2 * nd + 3 * nf or len(times) != nd + nf or len(names) != 1 + nd + nf:
        return None
    b = 2
    folders = list(zip(names[1:1 + nd], big[b:b + nd], big[b + nd:b + 2 * nd], times[:nd]))
    b += 2 * nd
    files = list(zip(names[1 + nd:], big[b:b + nf], big[b + nf:b + 2 * nf], big[b + 2 * nf:b + 3 * nf], times[nd:]))
    return names[0], folders, files


def fresh_digest(blob: Any) -> Optional[str]:
    """The digest of the walk the manifest ``blob`` records when the file system still is as it
    recorded (every folder's device, inode and mtime, every file's device, inode, size and mtime);
    None when anything differs or the manifest does not parse (the caller then walks)."""
    try:
        got = _parse(blob)
    except (ValueError, UnicodeDecodeError):
        return None
    if got is None:
        return None
    digest, folders, files = got
    stat = os.stat
    try:
        for d, dev, ino, mt in folders:
            st = stat(d)
            if st.st_mtime_ns != mt or st.st_ino != ino or st.st_dev != dev:
                return None
        for p, dev, ino, size, mt in files:
            st = stat(p)
            if st.st_mtime_ns != mt or st.st_size != size or st.st_ino != ino or st.st_dev != dev:
                return None
    except OSError:
        return None
    return digest


def checked_digest(ix: Any) -> Optional[str]:
    """The digest of the walk ``ix``'s manifest records, when the file system still is so
    (:func:`fresh_digest`); None: no manifest, or something changed (the caller walks)."""
    try:
        r = ix.conn.execute("SELECT value FROM meta WHERE key = ?", (MANIFEST_KEY,)).fetchone()
    except Exception:  # (a missing table, a locked file: the caller walks)
        return None
    return fresh_digest(r[0]) if r is not None else None


def save_manifest(ix: Any, walked: Scanned, digest: str) -> None:
    """Record the manifest of ``walked`` (digest ``digest``, the walk the index now holds: the
    caller holds the build lock), or drop the old one when this walk cannot be checked so."""
    seen = ix.seen_of(walked)
    blob = None
    if seen is not None:
        try:
            blob = manifest_blob(digest, walked, seen)
        except (UnicodeEncodeError, OverflowError):
            blob = None
    if blob is None:
        ix.conn.execute("DELETE FROM meta WHERE key = ?", (MANIFEST_KEY,))
    else:
        ix.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (MANIFEST_KEY, blob))


def keep_manifest(ix: Any, walked: Scanned) -> bool:
    """After a query whose walk ``walked`` found the index current (no update run): record the
    manifest of that walk unless it is recorded already, so the next query checks it instead of
    walking.  Written only when no build runs (the build lock taken without waiting) and the
    index still holds that walk (meta ``walk``, read in the write transaction).  -> written."""
    from .ftsdb import BuildLock
    from .ftswalk import walk_digest
    seen = ix.seen_of(walked)
    if seen is None or seen.unsure:
        return False
    digest = walk_digest(walked)
    try:
        blob = manifest_blob(digest, walked, seen)
    except (UnicodeEncodeError, OverflowError):
        return False
    c = ix.conn
    cur = c.execute("SELECT value FROM meta WHERE key = ?", (MANIFEST_KEY,)).fetchone()
    if blob is None or (cur is not None and cur[0] == blob):
        return False
    lock = BuildLock(ix.db_path)
    if not lock.acquire(wait=False):
        return False
    try:
        c.execute("BEGIN IMMEDIATE")
        try:
            r = c.execute("SELECT value FROM meta WHERE key = 'walk'").fetchone()
            if r is None or r[0] != digest:
                c.execute("ROLLBACK")
                return False
            c.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (MANIFEST_KEY, blob))
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
    finally:
        lock.release()
    return True
