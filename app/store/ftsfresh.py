"""The fast freshness check of a home's full-text index (issue 32: a broad query from the command
line in 0.3 s, the freshness check of a 10k-session home included).

The freshness check proves that the stat walk of the root (:func:`app.store.ftswalk.scan_root`)
would give now exactly the walk the index last recorded (its digest, meta ``walk``): then every
session is indexed at its current revision and nothing needs comparing.  The slow way is to make
the walk.  The manifest (meta ``manifest`` of shard 0, one row) records that walk in a form that
is checked by one ``stat`` per folder and per file (relative to the few folders two levels up,
opened once: a shorter lookup), and nothing else:

* every folder the walk visited, with its device, inode, size and mtime.  A folder whose mtime is
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
from typing import TYPE_CHECKING, Any, Optional

from .ftswalk import Scanned, WalkSeen

if TYPE_CHECKING:
    from .ftswrite import UpdateReport

MANIFEST_KEY = "manifest"
_MAGIC = b"SLM2"
_HEAD = 20                     # the magic, then the numbers of entries and of folders they are grouped under
_PATH_MAX = 4096               # a longer name: not a manifest (the extension's buffer)
_STORE_SUFFIXES = (".sqlite", ".sqlite3", ".db")    # (discovery.SQLITE_SUFFIXES: a walk's stores)


def _split(path: str) -> tuple[bytes, bytes]:
    """(the folder two levels up, the path from it): entries are stat-ed relative to a few open
    folders (a shorter lookup for the kernel than the whole path)."""
    head, tail = os.path.split(path)
    base, mid = os.path.split(head)
    return os.fsencode(base), os.fsencode(os.path.join(mid, tail) if mid else tail)


def manifest_blob(digest: str, walked: Scanned, seen: WalkSeen) -> Optional[bytes]:
    """The manifest of a walk (digest ``digest``; ``seen``: what it vouched for,
    :class:`app.store.ftswalk.WalkSeen`), or None when the walk cannot be checked so: a folder it
    visited was not settled, had a link it passed over or could not be read, or a file it listed
    was gone.  Each entry (folder or file) is kept with its device, inode, size and mtime, under
    the folder two levels up (:func:`_split`)."""
    if seen.unsure or not seen.folders:
        return None
    entries = [(_split(d), (dev, ino, size, mt)) for d, dev, ino, size, mt in seen.folders]
    entries += [(_split(p), (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
                for p, st in [(p, st) for p, st, _pr in walked[0]] + list(walked[1])]
    groups: dict[bytes, list[tuple[bytes, tuple[int, int, int, int]]]] = {}
    for (base, rel), sig in entries:
        groups.setdefault(base, []).append((rel, sig))
    rows = [row for g in groups.values() for row in g]
    nums = array("Q", [len(g) for g in groups.values()])
    for k in range(3):                        # devices, inodes, sizes
        nums.extend(sig[k] for _rel, sig in rows)
    times = array("q", [sig[3] for _rel, sig in rows])
    names = b"\0".join([digest.encode("ascii"), *groups, *(rel for rel, _sig in rows)])
    head = array("Q", [len(rows), len(groups)])
    return _MAGIC + head.tobytes() + nums.tobytes() + times.tobytes() + names


def recorded_digest(blob: Any) -> Optional[str]:
    """The digest of the walk the manifest ``blob`` records (nothing checked; None: not a manifest)."""
    if not isinstance(blob, bytes) or not blob.startswith(_MAGIC) or len(blob) < _HEAD:
        return None
    head = array("Q")
    head.frombytes(blob[4:_HEAD])
    pos = _HEAD + 8 * (head[1] + 4 * head[0])
    end = blob.find(b"\0", pos)
    try:
        return blob[pos:end].decode("ascii") if end >= 0 else None
    except UnicodeDecodeError:
        return None


def fresh_digest(blob: Any) -> Optional[str]:
    """The digest of the walk the manifest ``blob`` records when the file system still is as it
    recorded (every folder's and file's device, inode, size and mtime); None when anything
    differs or the manifest does not parse (the caller then walks).  The stats are made by the
    row scanner's extension where it is built (``manifest_same``, the GIL let go), else here."""
    c = c_check()
    same = c(blob) if c is not None and isinstance(blob, bytes) else -2
    if same == -2:                             # (no extension, or no fstatat on this platform)
        same = same_py(blob)
    return recorded_digest(blob) if same == 1 else None


def same_py(blob: Any) -> int:
    """The check of :func:`fresh_digest` (the definition of the extension's ``manifest_same``):
    1 every entry as recorded, 0 one differs or cannot be stat-ed, -1 not a manifest."""
    if not isinstance(blob, bytes) or not blob.startswith(_MAGIC) or len(blob) < _HEAD:
        return -1
    try:
        head = array("Q")
        head.frombytes(blob[4:_HEAD])
        n, ng = head
        pos = _HEAD + 8 * (ng + 4 * n)
        if pos > len(blob):
            return -1
        nums, times = array("Q"), array("q")
        nums.frombytes(blob[_HEAD:_HEAD + 8 * (ng + 3 * n)])
        times.frombytes(blob[_HEAD + 8 * (ng + 3 * n):pos])
        names = blob[pos:].split(b"\0")
        if len(names) != 1 + ng + n or sum(nums[:ng]) != n or any(len(x) >= _PATH_MAX for x in names):
            return -1
        devs, inos, sizes = nums[ng:ng + n], nums[ng + n:ng + 2 * n], nums[ng + 2 * n:]
        rels = names[1 + ng:]
        rel_ok = os.stat in os.supports_dir_fd
        i = 0
        for base, k in zip(names[1:1 + ng], nums[:ng]):
            if not _same(base, rels[i:i + k], devs[i:i + k], inos[i:i + k], sizes[i:i + k], times[i:i + k], rel_ok):
                return 0
            i += k
        return 1
    except (OSError, ValueError):
        return 0
    except (OverflowError, MemoryError):
        return -1


_C: list[Any] = []


def c_check() -> Any:
    """The extension's ``manifest_same`` when the row scanner's extension is built from this very
    source (its stamp, as :func:`app.log.index.fastindex.load_rowscan_c` checks it), else None."""
    if not _C:
        _C.append(None)
        if os.environ.get("SESSION_LENS_SCANNER") != "python":
            try:
                from ..log.index import rowscan_c  # type: ignore[attr-defined]
            except ImportError:
                return None
            here = os.path.dirname(os.path.abspath(rowscan_c.__file__))
            if _stamp_ok(os.path.join(here, "rowscan_c.c"), os.path.join(here, "rowscan_c.stamp")):
                _C[0] = getattr(rowscan_c, "manifest_same", None)
    return _C[0]


def _stamp_ok(source: str, stamp: str) -> bool:
    """The stamp holds the source's SHA-256 (no source, as in a bundle: the extension is what it carries)."""
    import hashlib
    try:
        with open(source, "rb") as f:
            code = f.read()
    except OSError:
        return True
    try:
        with open(stamp, encoding="ascii") as f:
            return f.read().strip() == hashlib.sha256(code).hexdigest()
    except (OSError, ValueError):
        return False


def _same(base: bytes, rels: list[bytes], devs: Any, inos: Any, sizes: Any, times: Any, rel_ok: bool) -> bool:
    """Every entry under ``base`` as recorded."""
    stat = os.stat
    fd = os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)) if rel_ok else None
    try:
        for rel, dev, ino, size, mt in zip(rels, devs, inos, sizes, times):
            st = stat(rel, dir_fd=fd) if fd is not None else stat(os.path.join(base, rel))
            if st.st_mtime_ns != mt or st.st_size != size or st.st_ino != ino or st.st_dev != dev:
                return False
        return True
    finally:
        if fd is not None:
            os.close(fd)


def manifest_of(ix: Any) -> Optional[bytes]:
    """``ix``'s manifest (None: none)."""
    try:
        r = ix.conn.execute("SELECT value FROM meta WHERE key = ?", (MANIFEST_KEY,)).fetchone()
    except Exception:  # (a missing table, a locked file: the caller walks)
        return None
    return r[0] if r is not None and isinstance(r[0], bytes) else None


def checked_digest(ix: Any) -> Optional[str]:
    """The digest of the walk ``ix``'s manifest records, when the file system still is so
    (:func:`fresh_digest`); None: no manifest, or something changed (the caller walks)."""
    return fresh_digest(manifest_of(ix))


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


def unchanged_report(ix: Any) -> Optional[UpdateReport]:
    """The report of an update of ``ix`` when its manifest still holds (the walk would be the one
    the index holds: nothing to do), made from the files tables as that update would count them
    (:func:`app.store.fulltext._walk_diff` on an unchanged walk: each shard's session files in
    path order, a failed one's and a bad file's problem, a store's sessions); None: the manifest
    does not hold (the update walks)."""
    import time
    from .ftsquery import FTS5_MISSING
    from .ftswrite import UpdateReport
    t0 = time.perf_counter()
    fresh = fresh_digest(manifest_of(ix))
    r = ix.conn.execute("SELECT value FROM meta WHERE key = 'walk'").fetchone()
    if fresh is None or r is None or r[0] != fresh:
        return None
    rep = UpdateReport()
    for part in ix.parts():
        c = part.conn
        failed = dict(c.execute("SELECT key, problem FROM sessions WHERE status = 'error'"))
        stores = []
        for path, kind, problem in c.execute("SELECT path, kind, problem FROM files ORDER BY path"):
            if kind == "session":
                rep.sessions += 1
                if failed.get(path):
                    rep.problems.append(f"{path}: {failed[path]}")
            elif kind == "bad" and problem and not path.endswith(_STORE_SUFFIXES):
                rep.problems.append(f"{path}: {problem}")
            elif kind == "store":
                stores.append(path)
        for path in stores:
            rep.sessions += c.execute("SELECT count(*) FROM sessions WHERE store = ?", (path,)).fetchone()[0]
    rep.unchanged = rep.sessions
    if not ix.fts5:
        rep.fallback = FTS5_MISSING
    rep.seconds = time.perf_counter() - t0
    return rep
