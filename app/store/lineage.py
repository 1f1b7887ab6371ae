"""Session lineage on disk: find a session's relatives with discovery, then walk them with the core.

:func:`trace_session` (spec §9 ``traceSession``) and :func:`find_parent_path` were in the core
(:mod:`app.log.trace`, :mod:`app.log.diff`) with a lazy import of discovery; the core stays free of
store imports (tests/test_layering.py), so the file-system part lives here and the walk stays pure
(:func:`app.log.trace.session_lineage`).
"""
from __future__ import annotations

import os
from typing import Any, Optional

from ..log.trace import TraceError, session_lineage
from .discovery import Listing, discover, session_info


def _session_file(path: str) -> str:
    p = os.path.abspath(path)
    if os.path.isdir(p):
        for name in ("session.jsonl.zstd", "session.jsonl"):
            if os.path.exists(os.path.join(p, name)):
                return os.path.join(p, name)
    return p


def trace_session(path: str, listing: Optional[Listing] = None) -> dict[str, Any]:
    """Ancestors and descendants of the session at ``path`` (a file, or a folder holding ``session.jsonl``).

    ``listing`` defaults to the discovery listing of the file's folder (siblings such as
    ``session.1.jsonl``).  Raises :class:`TraceError` ``SESSION_QUERY_NOT_FOUND`` when ``path`` is not a
    session and ``SESSION_QUERY_INVALID_LINEAGE`` on a cycle.
    """
    p = _session_file(path)
    if listing is None:
        listing = discover(os.path.dirname(p))
    target = next((s for s in listing.sessions if os.path.abspath(s.path) == p), None)
    if target is None:
        target = session_info(p)
        if target is None:
            raise TraceError("SESSION_QUERY_NOT_FOUND", f"{path} is not a session")
    return session_lineage(target, listing.sessions)


def find_parent_path(child_path: str) -> Optional[str]:
    """The file of the child's parentSession among its folder's sessions (None if not found)."""
    child = os.path.abspath(child_path)
    info = session_info(child)
    if info is None or not info.parent:
        return None
    for s in discover(os.path.dirname(child)).sessions:
        if s.id == info.parent and os.path.abspath(s.path) != child:
            return str(s.path)
    return None
