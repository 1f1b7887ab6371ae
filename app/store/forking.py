"""Executing a fork: copy the seed rows verbatim, publish the child atomically, verify.

The call returns only after the child is durable (fsync of file and directory through
the write-behind writer's flush barrier) and the source is unchanged: its revision is
the same before and after, and the child's copied bytes have the CRC-32 computed while
reading them from the source.
"""
from __future__ import annotations

import os
import time
import uuid
import zlib
from typing import Optional

from ..log.codec import encode_row
from ..log.fork import ForkError, ForkPlan, child_header, end_seed, plan_fork
from ..log.model import is_event
from ..log.reader import LogReader
from .layout import id_segment, project_key, session_path
from .publish import make_dirs
from .writer import RawFrames, RawText, SessionWriter

COPY_CHUNK = 8 << 20


class ForkVerifyError(Exception):
    pass


def child_location(reader: LogReader, child_id: str, out_store: Optional[str] = None) -> str:
    src = reader.source
    compressed = src.kind == "zstd"
    name = "session.jsonl.zstd" if compressed else "session.jsonl"
    cwd = reader.header.cwd if reader.header else None
    if out_store:
        root = out_store
        if os.path.isdir(os.path.join(out_store, "sessions")):
            root = os.path.join(out_store, "sessions")
        return session_path(root, child_id, cwd, compressed)
    p = os.path.abspath(src.path)
    sess_dir = os.path.dirname(p)
    proj_dir = os.path.dirname(sess_dir)
    if reader.header and os.path.basename(sess_dir) == id_segment(reader.header.id) and \
            os.path.basename(proj_dir) == project_key(cwd):
        return os.path.join(proj_dir, id_segment(child_id), name)     # a JSONL tree: same project
    return os.path.join(sess_dir, id_segment(child_id), name)          # a loose file: beside it


def _cut_offsets(reader: LogReader, plan: ForkPlan):
    """(segment start, byte offset in the segment's decoded text just after the boundary row, segment)."""
    pos, end = plan.cut_segment
    for seg in reader.source.backward(end):
        for rpos, off, line, raw, complete in seg.split_rows():
            items, _ = reader.codec.decode_row(raw, pos=rpos)
            evs = [i for i in items if is_event(i)]
            if evs and evs[0].seq <= plan.stored_through <= evs[-1].seq:
                if evs[-1].seq != plan.stored_through:
                    raise ForkError("INVALID_BOUNDARY", f"seq {plan.stored_through} is inside a packed row")
                local = (rpos - seg.pos) if isinstance(rpos, int) else rpos[1]
                return seg, local + len(raw) + 1
        break
    raise ForkError("INVALID_BOUNDARY", f"seq {plan.stored_through} not found where the index put it")


def _frame_prefix(src, seg, cut: int) -> bytes:
    """The first ``cut`` bytes of the plaintext of the zstd frame holding ``seg`` (a big frame
    is read in several windows; ``seg.base`` is the window's offset in the frame)."""
    base = getattr(seg, "base", 0)
    if base == 0:
        return seg.data[:cut]
    parts = []
    for s in src.forward(start=seg.pos):
        if s.pos != seg.pos or s.base >= base:
            break
        if s.bad:
            raise ForkError("FORK_UNAVAILABLE", f"the frame to cut holds an unreadable part: {s.bad}")
        parts.append(s.data)
    return b"".join(parts) + seg.data[:cut - base]


def _raw_range(fd: int, start: int, stop: int, crc: list):
    at = start
    while at < stop:
        chunk = os.pread(fd, min(COPY_CHUNK, stop - at), at)
        if not chunk:
            raise ForkVerifyError("the source shrank while it was copied")
        crc[0] = zlib.crc32(chunk, crc[0])
        at += len(chunk)
        yield chunk


def _crc_of(path: str, start: int, stop: int) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        crc = [0]
        for _ in _raw_range(fd, start, stop, crc):
            pass
        return crc[0]
    finally:
        os.close(fd)


def fork(reader: LogReader, at_seq: Optional[int] = None, out_store: Optional[str] = None,
         child_id: Optional[str] = None, live: bool = False, plan: Optional[ForkPlan] = None) -> dict:
    """Host fork of ``reader``'s session at message anchor ``at_seq``; returns the child's facts."""
    if reader.header is None:
        raise ForkError("FORK_UNAVAILABLE", "the source has no readable header")
    src = reader.source
    rev_before = src.revision()
    plan = plan or plan_fork(reader, at_seq, live=live)
    child_id = child_id or f"session-{uuid.uuid4()}"
    now = int(time.time() * 1000)
    parent_hdr = reader.header.to_dict()
    header = child_header(parent_hdr, child_id, plan.seed_length, now)
    tail_rows = [e.envelope() for e in plan.closure]
    if not plan.ends_with_end_seed:
        tail_rows.append(end_seed(plan.boundary + 1, now))
    if src.kind == "sqlite":
        return _fork_sqlite(reader, plan, header, tail_rows, rev_before, at_seq, out_store)
    path = child_location(reader, child_id, out_store)
    from .publish import clean_stale_temps
    clean_stale_temps(os.path.dirname(os.path.dirname(path)), depth=1)   # interrupted forks' leftovers
    if os.path.lexists(path) or os.path.lexists(os.path.join(os.path.dirname(path), "session.jsonl")) or \
            os.path.lexists(os.path.join(os.path.dirname(path), "session.jsonl.zstd")):
        raise ForkError("SESSION_EXISTS", f"a session {child_id!r} already exists ({os.path.dirname(path)}); "
                                          "a fork never writes into an existing session: choose another --id")
    crc = [0]
    copied = (0, 0)
    batch: list = []
    fd = os.open(src.path, os.O_RDONLY)
    try:
        if plan.stored_through >= 0:
            seg, cut = _cut_offsets(reader, plan)
            if src.kind == "jsonl":
                start, stop = src.header_end, seg.pos + cut
                batch.append(RawText(_raw_range(fd, start, stop, crc)))
                copied = (start, stop)
            elif src.kind == "zstd":
                # whole frames before the cut frame are copied as stored; the cut frame is re-framed
                start, stop = src.header_end, seg.pos
                if stop > start:
                    batch.append(RawFrames(_raw_range(fd, start, stop, crc)))
                copied = (start, stop)
                partial = _frame_prefix(src, seg, cut)
                batch.append(RawText([partial]))
            else:
                raise ForkError("FORK_UNAVAILABLE", f"cannot fork a {src.kind} source")
        batch.extend(tail_rows)
        w = SessionWriter(path, header, fmt=src.kind, pack=False, batch_delay_ms=1, exists=False)
        try:
            w.append(batch)
            w.flush()                 # the barrier: child published (tmp, fsync, link, fsync dir)
        finally:
            w.close()
    finally:
        os.close(fd)
    # verify: the source is unchanged and the child holds exactly the bytes read from it
    rev_after = src.revision()
    if rev_after != rev_before:
        raise ForkVerifyError(f"the source changed during the fork ({rev_before} -> {rev_after}); "
                              f"the child {path} was published from the earlier state")
    if copied[1] > copied[0]:
        child_start = _child_seed_start(path, src.kind)
        got = _crc_of(path, child_start, child_start + (copied[1] - copied[0]))
        if got != crc[0]:
            raise ForkVerifyError(f"child {path} does not hold the copied bytes (crc {got:#x} != {crc[0]:#x})")
    return {"child": path, "id": child_id, "parentSession": reader.header.id, "seedLength": plan.seed_length,
            "boundary": plan.boundary, "anchor": at_seq, "synthesized": plan.synthesized_seqs,
            "turns": plan.turns, "format": src.kind, "sourceRevision": rev_before,
            "crc32": f"{crc[0]:08x}", "bytesCopied": copied[1] - copied[0]}


def _sqlite_target(src_path: str, out_store: Optional[str]) -> str:
    """The SQLite file a SQLite session's child goes into: the source's store, or ``--out``
    when it names a SQLite store (created when missing); anything else is refused."""
    if not out_store:
        return src_path
    out = os.path.abspath(os.path.expanduser(out_store))
    if os.path.exists(out) and os.path.samefile(out, src_path):
        return src_path
    from .discovery import SQLITE_SUFFIXES, _is_sqlite
    if os.path.isfile(out) and _is_sqlite(out):
        return out
    if not os.path.exists(out) and out.endswith(SQLITE_SUFFIXES):
        from .sqlite_store import create_store
        make_dirs(os.path.dirname(out))
        create_store(out)
        return out
    raise ForkError("FORK_UNAVAILABLE", f"--out {out_store} is not a SQLite store: a session of a SQLite store "
                                        "forks into a SQLite store (an existing one, or a new FILE.sqlite)")


def _fork_sqlite(reader: LogReader, plan: ForkPlan, header: dict, tail_rows: list, rev_before: str,
                 at_seq, out_store: Optional[str] = None) -> dict:
    """SQLite: the seed rows (as stored, packed rows stay packed) and the closers in ONE transaction."""
    import msgspec
    from .sqlite_store import SqliteStore, append_batch
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
    rows: list = []
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
    return {"child": target, "id": header["id"], "parentSession": reader.header.id,
            "seedLength": plan.seed_length, "boundary": plan.boundary, "anchor": at_seq,
            "synthesized": plan.synthesized_seqs, "turns": plan.turns, "format": "sqlite",
            "sourceRevision": rev_before, "crc32": f"{crc:08x}", "bytesCopied": None}


def _child_seed_start(path: str, kind: str) -> int:
    """Offset in the child file where the copied seed bytes start (after its header)."""
    with open(path, "rb") as f:
        if kind == "jsonl":
            return len(f.readline())
        from backports import zstd
        head = f.read(1 << 20)
        return zstd.get_frame_size(head)


def preview(reader: LogReader, at_seq: Optional[int], live: bool = False) -> dict:
    """What the child will contain (for the UI's confirmation), without writing anything."""
    plan = plan_fork(reader, at_seq, live=live)
    last = None
    if plan.last_message_seq is not None:
        ev = reader.event_at(plan.last_message_seq)
        if ev is not None:
            from ..log.model import event_message, message_text
            last = message_text(event_message(ev) or {})
    return {**plan.to_dict(), "lastMessage": last, "parentSession": reader.header.id if reader.header else None}
