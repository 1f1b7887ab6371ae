"""The stat walk of a root for the home full-text index (:mod:`app.store.fulltext`) and the
split of its files into shards: no file is opened."""
from __future__ import annotations

import hashlib
import os
import time
import zlib
from collections.abc import Iterable
from typing import Optional

# (discovery's names are imported by the walk itself: a query answered by the manifest check,
# app.store.ftsfresh, imports no more than it needs, issue 32)

Scanned = tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]
# a folder's listing as the walk needs it: (inode, mtime_ns, its folders' names, its session and store files' names)
Listing = tuple[int, int, tuple[str, ...], tuple[str, ...]]
# a listing is kept for the next walk only when the folder's mtime is this much older than the
# listing: a change made after it then moves the mtime, however coarse the file system's clock
# (FAT: 2 s) -- git's "racily clean" rule
RACY_NS = 3_000_000_000
class WalkSeen:
    """What a walk can vouch for (the manifest of :mod:`app.store.ftsfresh`): the folders whose
    listing cannot have changed unseen while their mtime stays [(path, device, inode, size, mtime_ns)],
    and how many things it cannot (a folder not settled, with a link passed over or unreadable; a
    file gone between its folder's listing and its stat)."""

    def __init__(self) -> None:
        self.started = time.time_ns()
        self.folders: list[tuple[str, int, int, int, int]] = []
        self.unsure = 0


WALK_BYTES_PER_FILE = 800      # the walk's CPU per file ~ the extraction's of this many bytes (10k home: ~0.2 s)


def shard_scan(scanned: tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]],
                n: int, known: Optional[dict[str, int]] = None) -> list[
        tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]]:
    """The walk split into each shard's part.  ``known``: path -> the shard that recorded it (a
    file stays where it is); a file no shard knows goes where :func:`shard_of` says.  Without
    ``known`` (a first build) the files are dealt out by size, biggest first to the shard with
    the fewest bytes (shard 0's process also walked the root: :data:`WALK_BYTES_PER_FILE`), so
    the shard processes finish together."""
    out: list[tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]] = \
        [([], []) for _ in range(n)]
    if known is None:
        # shard 0 is built by the process that walked the root: its walk counts as so many bytes
        # of each file to extract (the shards' processes then finish together)
        load = [WALK_BYTES_PER_FILE * len(scanned[0])] + [0] * (n - 1)
        for f in sorted(scanned[0], key=lambda f: -f[1].st_size):
            i = load.index(min(load))
            load[i] += f[1].st_size
            out[i][0].append(f)
        for g in scanned[1]:
            out[shard_of(g[0], n)][1].append(g)
        for part in out:
            part[0].sort(key=lambda f: f[0])
        return out
    for f in scanned[0]:
        out[known.get(f[0], shard_of(f[0], n))][0].append(f)
    for g in scanned[1]:
        out[known.get(g[0], shard_of(g[0], n))][1].append(g)
    return out


def _stat_into(paths: Iterable[str], project: Optional[str], files: list[tuple[str, os.stat_result, Optional[str]]],
               stores: list[tuple[str, os.stat_result]], seen: Optional[WalkSeen] = None) -> None:
    """Stat each path (gone: passed over) and file it with the SQLite stores or the session files."""
    from .discovery import SQLITE_SUFFIXES
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            if seen is not None:
                seen.unsure += 1
            continue
        if p.endswith(SQLITE_SUFFIXES):
            stores.append((p, st))
        else:
            files.append((p, st, project))


def _listing(d: str, depth: int, max_depth: int) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    """(folders to walk, session and store files, sure) named in folder ``d`` (read with scandir).
    ``sure`` False: the listing can change while the folder's mtime stays (a session file's name
    that is a link to no file, or an entry that could not be told): it is not kept."""
    from .discovery import SESSION_SUFFIXES, SQLITE_SUFFIXES
    dirs: list[str] = []
    found: list[str] = []
    sure = True
    with os.scandir(d) as it:
        entries = list(it)
    for e in entries:
        name = e.name
        if name.startswith(".") and name not in (".sessions", ".dsh"):
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                if depth < max_depth:
                    dirs.append(name)
            elif name.endswith(SESSION_SUFFIXES) or name.endswith(SQLITE_SUFFIXES):
                if e.is_file():
                    found.append(name)
                elif e.is_symlink():           # (its target can appear or change type unseen)
                    sure = False
        except OSError:
            sure = False
            continue
    return tuple(dirs), tuple(found), sure


def _walk_stat(base: str, projects: bool, max_depth: int = 8, known: Optional[dict[str, Listing]] = None,
               record: Optional[dict[str, Listing]] = None, seen: Optional[WalkSeen] = None) -> tuple[
        list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]:
    """The walk of :func:`app.store.discovery._walk` (same folders and names) in one pass with the
    stat of each file: (session files with their project, SQLite stores), sorted by path.  A
    folder holding several generations of a session keeps the newest (``older_generations``
    on that folder's files only); ``projects``: a file two folders or more below ``base`` is in
    the project its first folder names (``--home-dev-x--``).

    ``known``: the listings of the last walk (:data:`Listing`): a folder whose inode and mtime
    are the listing's is not read again (one stat instead of a scandir: a folder's mtime moves
    whenever a name is added, removed or renamed in it; the files found are stat-ed every time,
    so a grown log is seen).  ``record``: filled with this walk's listings of folders whose mtime
    is older than :data:`RACY_NS` and sure (the others are read again next time).  ``seen``: what
    this walk can vouch for (:class:`WalkSeen`)."""
    from .discovery import PROJECT_RE, SQLITE_SUFFIXES, older_generations
    files: list[tuple[str, os.stat_result, Optional[str]]] = []
    stores: list[tuple[str, os.stat_result]] = []
    stack: list[tuple[str, int, Optional[str]]] = [(base, 0, None)]
    settled = (seen.started if seen is not None else time.time_ns()) - RACY_NS
    known = known or {}
    project_of: dict[Optional[str], Optional[str]] = {}   # a top folder -> the project it names
    stat, sep = os.stat, os.sep
    while stack:
        d, depth, top = stack.pop()
        try:
            st = stat(d)                      # before the listing: a change meanwhile moves the mtime past it
            k = known.get(d)
            if k is not None and k[0] == st.st_ino and k[1] == st.st_mtime_ns:
                dirs, names, sure = k[2], k[3], True      # (only sure listings are kept)
            else:
                dirs, names, sure = _listing(d, depth, max_depth)
        except OSError:
            if seen is not None:
                seen.unsure += 1
            continue
        if sure and st.st_mtime_ns < settled:
            if record is not None:
                record[d] = (st.st_ino, st.st_mtime_ns, dirs, names)
            if seen is not None:
                seen.folders.append((d, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
        elif seen is not None:
            seen.unsure += 1
        pre = d if d.endswith(sep) else d + sep             # (os.path.join, without its per-call checks)
        if dirs:
            stack += [(pre + name, depth + 1, name if depth == 0 else top) for name in dirs]
        if not names:
            continue
        if depth < 2 or not projects:
            project = None
        elif top in project_of:
            project = project_of[top]
        else:
            project = project_of[top] = top if top is not None and PROJECT_RE.match(top) else None
        if len(names) == 1 and not names[0].endswith(SQLITE_SUFFIXES):    # (a session's folder)
            p = pre + names[0]
            try:
                files.append((p, stat(p), project))
            except OSError:
                if seen is not None:
                    seen.unsure += 1
            continue
        found = [pre + name for name in names]
        if len(found) > 1:
            hidden = older_generations(found)
            found = [p for p in found if p not in hidden]
        _stat_into(found, project, files, stores, seen)
    files.sort(key=lambda f: f[0])
    stores.sort(key=lambda f: f[0])
    return files, stores


def walk_digest(walked: Scanned) -> str:
    """A digest of a walk: every file's path, device, inode, size and mtime (equal digests: the
    same files in the same states)."""
    h = hashlib.blake2b(digest_size=20)
    h.update("\n".join(f"{p}\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}"
                       for p, st, _pr in walked[0]).encode("utf-8", "surrogateescape"))
    h.update(b"\1" + "\n".join(f"{p}\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}"
                                for p, st in walked[1]).encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def shard_path(db_path: str, k: int) -> str:
    """The database file of shard ``k`` (shard 0 is the index file itself)."""
    if k == 0:
        return db_path
    base, ext = os.path.splitext(db_path)
    return f"{base}.shard{k}{ext or '.sqlite'}"


def shard_of(path: str, n: int) -> int:
    """The shard of a session file (or SQLite store): a stable hash of its path."""
    return zlib.crc32(path.encode("utf-8", "surrogatepass")) % n


def _can_spawn() -> bool:
    return (os.cpu_count() or 1) >= 2



def stat_or_none(p: str) -> Optional[os.stat_result]:
    try:
        return os.stat(p)
    except OSError:
        return None



def scan_root(root: str, known: Optional[dict[str, Listing]] = None,
              record: Optional[dict[str, Listing]] = None, seen: Optional[WalkSeen] = None) -> Scanned:
    """(jsonl/zstd files with stats, sqlite files with stats) of the whole root (a sharded
    index splits them with :func:`_shard_scan`): no file is opened.  ``known``, ``record``, ``seen``:
    as :func:`_walk_stat` has them (``seen`` also vouches for the root folder, whose names say
    what kind of root it is)."""
    from .discovery import PROJECT_RE
    from .ftsio import safe_listdir
    files: list[tuple[str, os.stat_result, Optional[str]]] = []
    stores: list[tuple[str, os.stat_result]] = []
    if seen is not None:
        _vouch_root(root, seen)
    if os.path.isfile(root):
        paths: Iterable[str] = [root]
    else:
        base = root
        kind = "folder"
        if os.path.isdir(os.path.join(root, "sessions")):
            base, kind = os.path.join(root, "sessions"), "home"
        elif any(PROJECT_RE.match(n) for n in safe_listdir(root)):
            kind = "root"
        files, stores = _walk_stat(base, kind in ("root", "home"), known=known, record=record, seen=seen)
        paths = ()
    _stat_into(paths, None, files, stores)
    return files, stores


def _vouch_root(root: str, seen: WalkSeen) -> None:
    """The root's part of :class:`WalkSeen` (before it is read): a folder, settled, whose
    ``sessions`` is a folder or nothing (a link to no folder could become one unseen)."""
    try:
        st = os.stat(root)
    except OSError:
        seen.unsure += 1
        return
    sessions = os.path.join(root, "sessions")
    if not os.path.isdir(root) or st.st_mtime_ns >= seen.started - RACY_NS \
            or (os.path.lexists(sessions) and not os.path.isdir(sessions)):
        seen.unsure += 1
        return
    seen.folders.append((root, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
