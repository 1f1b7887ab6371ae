"""Session lineage in a real Harness home: parents and children across project folders.

A fork child lives in its own session folder, often in another project folder than its parent
(``<home>/sessions/--project--/<id>/session.jsonl``), so looking beside the file is not
enough.  :func:`store_listing` finds the store a session file belongs to (the JSONL root above
its project folder, else its own folder for loose files such as the fixtures) and lists it by
headers only (cached per root while no folder of it changed); :func:`lineage` is the
``parentSession`` tree over that listing (ancestors outward, descendants at any depth),
:func:`find_parent` the parent's file and :func:`descendants` the children, grandchildren… in
export order.
"""
from __future__ import annotations

import os
import re
import threading
from typing import Any, Optional

from ..log.fold.lineage import child_title
from ..log.query import trace as _trace
from ..log.query.trace import TraceError, flatten_descendants
from .discovery import Listing, discover, quick_title, session_info

# the core's pure walk over discovery entries where it has one, else its trace_session over a listing
_pure_walk: Any = getattr(_trace, "session_lineage", None)
_walk: Any = getattr(_trace, "trace_session", None)
_PROJECT_RE = re.compile(r"^--.*--$|^_no-cwd$")
_cache: dict[Any, Any] = {}            # root -> (stamp, Listing)
_lock = threading.Lock()


def _resolve_file(path: str) -> str:
    p = os.path.abspath(os.path.expanduser(path))
    if os.path.isdir(p):
        for name in sorted(os.listdir(p), reverse=True):      # session.vN… sort after session.jsonl
            if name.startswith("session") and name.endswith((".jsonl", ".jsonl.zstd")) and \
                    not name.endswith(".tmp") and os.path.isfile(os.path.join(p, name)):
                return os.path.join(p, name)
    return p


def store_root(path: str) -> str:
    """The folder to list for ``path``'s lineage: the JSONL root holding its project folder
    (``<home>/sessions``), else the file's own folder."""
    p = _resolve_file(path)
    d = os.path.dirname(p)
    for _ in range(3):                          # session folder, project folder, root
        if _PROJECT_RE.match(os.path.basename(d)):
            return os.path.dirname(d)
        up = os.path.dirname(d)
        if up == d:
            break
        d = up
    return os.path.dirname(p)


def _stamp(root: str) -> tuple[Any, ...]:
    out: list[Any] = []
    try:
        st = os.stat(root)
        out.append(st.st_mtime_ns)
        with os.scandir(root) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    out.append((e.name, e.stat().st_mtime_ns))
    except OSError:
        pass
    return tuple(sorted(out, key=str))


def store_listing(path: str) -> Listing:
    root = store_root(path)
    stamp = _stamp(root)
    with _lock:
        hit = _cache.get(root)
        if hit is not None and hit[0] == stamp:
            cached: Listing = hit[1]
            return cached
    listing = discover(root)
    with _lock:
        _cache[root] = (stamp, listing)
    return listing


def trace_session(path: str, listing: Optional[Listing] = None) -> dict[Any, Any]:
    """Ancestors (parent outward) and descendants (any depth) of the session at ``path`` (a file or
    its folder) over ``listing``, by default the whole store it belongs to (:func:`store_listing`)."""
    p = _resolve_file(path)
    listing = listing if listing is not None else store_listing(p)
    out: dict[str, Any]
    if _pure_walk is None:
        out = _walk(p, listing=listing)
        return out
    target = next((s for s in listing.sessions if os.path.abspath(s.path) == p), None) or session_info(p)
    if target is None:
        raise TraceError("SESSION_QUERY_NOT_FOUND", f"{path} is not a session")
    out = _pure_walk(target, listing.sessions)
    return out


def lineage(path: str) -> dict[Any, Any]:
    """:func:`trace_session` over the whole store: ancestors, descendants (any depth), completeness."""
    return trace_session(path)


def find_parent(path: str) -> Optional[str]:
    """The file of the session's ``parentSession`` anywhere in its store (None if not found)."""
    p = _resolve_file(path)
    info = session_info(p)
    if info is None or not info.parent:
        return None
    lin = lineage(p)
    anc = lin.get("ancestors") or []
    return anc[0]["path"] if anc else None


find_parent_path = find_parent


def descendants(path: str) -> list[Any]:
    """Children, grandchildren… of the session (depth first, export order): brief dicts with a
    ``depth`` (1 = child)."""
    out: list[dict[str, Any]] = []

    def walk(nodes: list[dict[str, Any]], depth: int) -> None:
        for n in nodes:
            out.append({k: v for k, v in n.items() if k != "children"} | {"depth": depth})
            walk(n.get("children", []), depth + 1)
    walk(lineage(path)["descendants"], 1)
    return out


def fork_child_title(parent_path: str) -> Optional[str]:
    """The title a new fork of ``parent_path`` gets under dsh's rule, given the titles in its store.

    A fork child's log holds its parent's ``session/title`` (copied with the seed) until it is
    renamed, so children still carrying that inherited title count as ``"X (1)"``, ``"X (2)"`` …
    in creation order (their display titles), besides any title that already has a counter."""
    p = _resolve_file(parent_path)
    info = session_info(p)
    if info is None:
        return None
    listing = store_listing(p)
    titles: dict[Any, Any] = {}
    for s in listing.sessions:
        titles[s.key] = quick_title(s)
    parent = next((s for s in listing.sessions if os.path.abspath(s.path) == p), info)
    parent_title = titles.get(parent.key) if parent is not info else quick_title(info)
    taken = list(titles.values())
    display = display_titles(listing, titles)
    taken.extend(display.values())
    return child_title(parent_title, taken)


def display_title(path: str) -> Optional[str]:
    """A session's title as the list shows it: its own, or for a fork child still carrying its
    parent's title, that title with the child's counter (:func:`display_titles`)."""
    p = _resolve_file(path)
    listing = store_listing(p)
    titles = {s.key: quick_title(s) for s in listing.sessions}
    me = next((s for s in listing.sessions if os.path.abspath(s.path) == p), None)
    if me is None:
        info = session_info(p)
        return quick_title(info) if info is not None else None
    return display_titles(listing, titles).get(me.key, titles.get(me.key))


def display_titles(listing: Listing, titles: dict[Any, Any]) -> dict[Any, Any]:
    """``{session key: title}`` for fork children whose title is still the inherited one:
    ``"X (1)"``, ``"X (2)"`` … per parent in creation order (dsh's rule for a child's title)."""
    by_id: dict[str, Any] = {}
    for s in listing.sessions:
        by_id.setdefault(s.id, s)
    kids: dict[Any, Any] = {}
    for s in listing.sessions:
        par = by_id.get(s.parent) if s.parent else None
        if par is None or par is s:
            continue
        pt, ct = titles.get(par.key), titles.get(s.key)
        if pt and ct == pt:
            kids.setdefault(par.key, []).append(s)
    out = {}
    for pk, ks in kids.items():
        ks.sort(key=lambda s: (s.created_at if isinstance(s.created_at, (int, float)) else 0, s.id))
        taken: list[Any] = [t for t in titles.values() if t]
        for s in ks:
            t = child_title(titles[pk], taken)
            out[s.key] = t
            taken.append(t)
    return out


__all__ = ["store_root", "store_listing", "trace_session", "lineage", "find_parent", "find_parent_path", "descendants",
           "fork_child_title", "display_title", "display_titles", "flatten_descendants"]
