"""The stat walk of a root for the home full-text index (:mod:`app.store.fulltext`) and the
split of its files into shards: no file is opened."""
from __future__ import annotations

import os
import zlib
from collections.abc import Iterable
from typing import Optional

from .discovery import SESSION_SUFFIXES, SQLITE_SUFFIXES, PROJECT_RE, older_generations
from .ftsio import safe_listdir

Scanned = tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]


def shard_scan(scanned: tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]],
                n: int, known: Optional[dict[str, int]] = None) -> list[
        tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]]:
    """The walk split into each shard's part.  ``known``: path -> the shard that recorded it (a
    file stays where it is); a file no shard knows goes where :func:`shard_of` says.  Without
    ``known`` (a first build) the files are dealt out by size, biggest first to the shard with
    the fewest bytes, so the shard processes finish together."""
    out: list[tuple[list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]] = \
        [([], []) for _ in range(n)]
    if known is None:
        load = [0] * n
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
               stores: list[tuple[str, os.stat_result]]) -> None:
    """Stat each path (gone: passed over) and file it with the SQLite stores or the session files."""
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        if p.endswith(SQLITE_SUFFIXES):
            stores.append((p, st))
        else:
            files.append((p, st, project))


def _walk_stat(base: str, projects: bool, max_depth: int = 8) -> tuple[
        list[tuple[str, os.stat_result, Optional[str]]], list[tuple[str, os.stat_result]]]:
    """The walk of :func:`app.store.discovery._walk` (same folders and names) in one pass with the
    stat of each file: (session files with their project, SQLite stores), sorted by path.  A
    folder holding several generations of a session keeps the newest (``older_generations``
    on that folder's files only); ``projects``: a file two folders or more below ``base`` is in
    the project its first folder names (``--home-dev-x--``)."""
    files: list[tuple[str, os.stat_result, Optional[str]]] = []
    stores: list[tuple[str, os.stat_result]] = []
    stack: list[tuple[str, int, Optional[str]]] = [(base, 0, None)]
    while stack:
        d, depth, top = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = list(it)
        except OSError:
            continue
        found: list[str] = []
        for e in entries:
            name = e.name
            if name.startswith(".") and name not in (".sessions", ".dsh"):
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    if depth < max_depth:
                        stack.append((e.path, depth + 1, name if depth == 0 else top))
                elif name.endswith(SESSION_SUFFIXES) or name.endswith(SQLITE_SUFFIXES):
                    if e.is_file():
                        found.append(e.path)
            except OSError:
                continue
        if len(found) > 1:
            hidden = older_generations(found)
            found = [p for p in found if p not in hidden]
        project = top if projects and depth >= 2 and top is not None and PROJECT_RE.match(top) else None
        _stat_into(found, project, files, stores)
    files.sort(key=lambda f: f[0])
    stores.sort(key=lambda f: f[0])
    return files, stores


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



def scan_root(root: str) -> Scanned:
    """(jsonl/zstd files with stats, sqlite files with stats) of the whole root (a sharded
    index splits them with :func:`_shard_scan`): no file is opened."""
    files: list[tuple[str, os.stat_result, Optional[str]]] = []
    stores: list[tuple[str, os.stat_result]] = []
    if os.path.isfile(root):
        paths: Iterable[str] = [root]
    else:
        base = root
        kind = "folder"
        if os.path.isdir(os.path.join(root, "sessions")):
            base, kind = os.path.join(root, "sessions"), "home"
        elif any(PROJECT_RE.match(n) for n in safe_listdir(root)):
            kind = "root"
        files, stores = _walk_stat(base, kind in ("root", "home"))
        paths = ()
    _stat_into(paths, None, files, stores)
    return files, stores
