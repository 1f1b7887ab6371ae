"""Forking a session of a SQLite store (:func:`app.store.forking.fork`): the seed rows as stored (packed rows
stay packed) and the closers appended in ONE transaction, into the source's store or a SQLite ``--out``; the
source's revision checked after, and the child's seed rows compared with the source's by their CRC-32."""
from __future__ import annotations

import os
import zlib
from typing import Any, Optional

from ..log.fold.fork import ForkError, ForkPlan
from ..log.index.reader import LogReader
from .fork_verify import ForkVerifyError
from .publish import make_dirs


def _sqlite_target(src_path: str, out_store: Optional[str]) -> str:
    """The SQLite file a SQLite session's child goes into: the source's store, or ``--out``
    when it names a SQLite store (created when missing); anything else is refused."""
    if not out_store:
        return src_path
    out = os.path.abspath(os.path.expanduser(out_store))
    if os.path.exists(out) and os.path.samefile(out, src_path):
        return src_path
    from .discovery import SQLITE_SUFFIXES, is_sqlite
    if os.path.isfile(out) and is_sqlite(out):
        return out
    if not os.path.exists(out) and out.endswith(SQLITE_SUFFIXES):
        from .sqlite_writer import create_store
        make_dirs(os.path.dirname(out))
        create_store(out)
        return out
    raise ForkError("FORK_UNAVAILABLE", f"--out {out_store} is not a SQLite store: a session of a SQLite store "
                                        "forks into a SQLite store (an existing one, or a new FILE.sqlite)")


def fork_sqlite(reader: LogReader, plan: ForkPlan, header: dict[str, Any], tail_rows: list[Any], rev_before: str,
                 at_seq: Optional[int], out_store: Optional[str] = None) -> dict[str, Any]:
    """SQLite: the seed rows (as stored, packed rows stay packed) and the closers in ONE transaction."""
    import msgspec
    from .sqlite_store import SqliteStore
    from .sqlite_writer import append_batch
    src = reader.source
    target = _sqlite_target(src.path, out_store)
    existing = SqliteStore.open(target)
    try:
        taken = header["id"] in {h["id"] for h in existing.list_sessions()}
    finally:
        getattr(existing, "close", lambda: None)()
    if taken:
        raise ForkError("SESSION_EXISTS", f"{target} already holds a session {header['id']!r}; a fork never "
                                          "writes into an existing session: choose another --id")
    rows: list[Any] = []
    crc = 0
    for seg in src.forward():
        for _pos, raw in seg.rows or []:
            obj = msgspec.json.decode(raw)
            first = obj.get("seq0", obj.get("seq"))
            if first is None or first > plan.stored_through:
                break
            n = len(obj["data"]["dt"]) + 1 if "seq0" in obj else 1
            if first + n - 1 > plan.stored_through:
                raise ForkError("INVALID_BOUNDARY", f"seq {plan.stored_through} is inside a packed row")
            crc = zlib.crc32(raw, crc)
            rows.append(obj)
        else:
            continue
        break
    append_batch(target, header, rows + tail_rows)    # BEGIN IMMEDIATE … COMMIT: all or nothing
    if src.revision() != rev_before:
        raise ForkVerifyError("the source session changed during the fork")
    from .faces import open_reader
    child = open_reader(target, header["id"])
    got = 0
    for seg in child.source.forward():
        for _pos, raw in seg.rows or []:
            obj = msgspec.json.decode(raw)
            if obj.get("seq0", obj.get("seq")) <= plan.stored_through:
                got = zlib.crc32(raw, got)
    if got != crc:
        raise ForkVerifyError("the child's rows differ from the source's")
    return {"child": target, "id": header["id"], "parentSession": reader.header.id if reader.header else None,
            "seedLength": plan.seed_length, "boundary": plan.boundary, "anchor": at_seq,
            "synthesized": plan.synthesized_seqs, "turns": plan.turns, "format": "sqlite",
            "sourceRevision": rev_before, "crc32": f"{crc:08x}", "bytesCopied": None}
