"""Read faces over a store: open one session as a LogReader, whatever its backend."""
from __future__ import annotations

import os
from typing import Optional

from ..log.format.limits import read_head
from ..log.index.reader import LogReader
from ..log.source.sources import open_source
from .discovery import SQLITE_SUFFIXES, SessionInfo, is_sqlite, select_generation


class OpenError(Exception):
    """A session could not be opened at all (one clear line)."""


def open_reader(path: str, session_id: Optional[str] = None) -> LogReader:
    """Open a session file, or one session of a SQLite store (``session_id`` or its only one)."""
    p = os.path.expanduser(path)
    if not os.path.exists(p):
        raise OpenError(f"no such file: {path}")
    if not os.path.isdir(p):
        try:
            read_head(p, 0)        # never block on a FIFO or a device: refuse what is not a regular file
        except OSError as e:
            raise OpenError(f"cannot read {path}: {e.strerror or e}") from None
    if os.path.isdir(p):
        # a session folder: the newest generation, as dsh selects it (never an older one instead)
        selected, _others, _probs = select_generation(p)
        if selected is None:
            raise OpenError(f"{path} is a folder with no session generation (session[.vN].jsonl[.zstd])")
        return open_reader(selected)
    if p.endswith(SQLITE_SUFFIXES) or is_sqlite(p):
        from .sqlite_store import SqliteStore
        store = SqliteStore.open(p)
        ids = [h["id"] for h in store.list_sessions()]
        if session_id is None:
            if len(ids) != 1:
                raise OpenError(f"{path} holds {len(ids)} sessions: name one with --session (ids: "
                                f"{', '.join(ids[:5])}{'…' if len(ids) > 5 else ''})")
            session_id = ids[0]
        if session_id not in ids:
            raise OpenError(f"{path} has no session {session_id!r}")
        return LogReader(store.source(session_id))
    try:
        reader = LogReader(open_source(p))
    except OSError as e:
        raise OpenError(f"cannot read {path}: {e.strerror or e}") from None
    _check_generation_name(reader)
    return reader


def _check_generation_name(reader: LogReader) -> None:
    """A file path opens exactly that file; a generation name that disagrees with the header's
    version is reported (dsh refuses such a generation: "filename identifies vN, header vM")."""
    from .discovery import parse_generation
    g = parse_generation(os.path.basename(reader.path))
    if g is None or reader.header is None or reader.fatal is not None:
        return
    hv = reader.header.version or 0
    if g[1] != hv:
        from ..log.format.model import Problem
        reader.problems.append(Problem(code="generation-mismatch",
                                       message=f"the file name says v{g[1]} but the header says v{hv}; dsh refuses "
                                               "this generation (read as its header says)", line=1))


def open_info(info: SessionInfo) -> LogReader:
    if info.format == "sqlite":
        return open_reader(info.store or info.path, info.id)
    return open_reader(info.path)
