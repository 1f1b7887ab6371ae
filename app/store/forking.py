"""Executing a fork: copy the seed rows, publish the child atomically, verify.

The child is written in the source's format (a vN source gives a ``session.vN.jsonl[.zstd]``
child).  Seed rows are copied as stored (byte ranges, whole zstd frames) except rows that the
dsh host would hand over converted: legacy-shape v0 rows (spec §1.7) and the rows of an
envelope-free snapshot, which are written as their converted events.

The call returns only after the child is durable (fsync of file and directory through
the write-behind writer's flush barrier) and the source is unchanged: its revision is
the same before and after.  JSONL: the seed's stored byte ranges are copied by the kernel
(``os.copy_file_range``, else ``sendfile``, else read/write: :class:`~app.store.publish.FileRange`),
never through Python, and verified without a second pass over the whole source: the child's
bytes must equal the source's at the start and end of each copied range and at evenly spread
windows, compared byte for byte, and rows written as text exactly (``verify="full"``: every
byte, and the CRC-32).  zstd: the child's copied bytes have the CRC-32 computed while reading
them from the source (each copied frame run, and each re-framed run by its text).  The plan
comes from the seq index, which is taken from the persistent cache (app/store/indexcache.py).
The verification is in :mod:`app.store.fork_verify`, the seed's hand-over to the writer in
:mod:`app.store.fork_stream`, a SQLite session's fork in :mod:`app.store.fork_sqlite`.
"""
from __future__ import annotations

import os
import time
import uuid
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain, compress
from operator import itemgetter
from typing import Any, Optional

import msgspec

from ..log.format.codec import encode_row
from ..log.index.fastindex import heap_steady
from ..log.fold.fork import ForkError, ForkPlan, child_header, plan_fork, seed_tail
from ..log.format.model import is_event
from ..log.index.reader import LogReader, SeqIndex
from ..log.source.sources import Segment, Source
from .layout import generation_name, id_segment, project_key, session_path
from .fork_progress import ForkMeter, missing_dirs, remove_made
from .fork_sqlite import fork_sqlite
from .fork_stream import Chunk, Piece, SeedStream, frames_of, quick_switches, runs
from .fork_verify import VERIFY_WINDOW, VERIFY_WINDOWS, pread_all, verify_child
from .publish import FileRange, make_dirs
from .writer import RawFrames, RawText, SessionWriter


def _text(data: bytes) -> Piece:
    return Piece("text", data=data)


# the write-behind writer's batch items, as this module hands them over
_raw_text: Callable[[Iterable[Chunk]], RawText] = RawText
_raw_frames: Callable[[Iterator[bytes]], RawFrames] = RawFrames


def child_location(reader: LogReader, child_id: str, out_store: Optional[str] = None) -> str:
    src = reader.source
    compressed = src.kind == "zstd"
    version = getattr(reader, "version", 0) or 0
    name = generation_name(version, compressed)          # the child is written in the source's format
    cwd = reader.header.cwd if reader.header else None
    if out_store:
        root = out_store
        if os.path.isdir(os.path.join(out_store, "sessions")):
            root = os.path.join(out_store, "sessions")
        return session_path(root, child_id, cwd, compressed, version)
    p = os.path.abspath(src.path)
    sess_dir = os.path.dirname(p)
    proj_dir = os.path.dirname(sess_dir)
    if reader.header and os.path.basename(sess_dir) == id_segment(reader.header.id) and \
            os.path.basename(proj_dir) == project_key(cwd):
        return os.path.join(proj_dir, id_segment(child_id), name)     # a JSONL tree: same project
    return os.path.join(sess_dir, id_segment(child_id), name)          # a loose file: beside it


_TYPE = itemgetter(0)

# one of these byte strings is in every row that may read in a legacy shape (spec §1.7)
_LEGACY_HINTS = (b"steering/message", b"user/message", b"assistant/message", b"tool/result", b"turn/start",
                 b"turn/end")


def _converted_rows(reader: LogReader, data: bytes, upto: int) -> list[tuple[int, int, bytes]]:
    """[(start, stop, converted bytes)] of the rows in ``data[:upto]`` that read in a legacy
    shape: dsh's host forks from the converted events, so the child stores them converted
    (ids such as ``legacy-message:<parent id>:<seq>`` keep the parent's id).  ``stop`` is the
    offset of the row's ``\n``.  All rows are first probed by one typed decode that skips their
    content (C speed); only the types found there are searched for as bytes, and only rows that
    may be legacy are decoded by the codec (rows that do not probe: every hint is searched).
    Rows all in the writer's shape take the index's row-head scan instead (:func:`_legacy_by_heads`)."""
    rows = _legacy_by_heads(data, upto)
    if rows is None:
        rows = _legacy_by_probe(data, upto)
    out = []
    for a, b in rows:
        items, _ = reader.codec.decode_row(data[a:b])
        if len(items) == 1 and is_event(items[0]) and items[0].legacy:
            out.append((a, b, encode_row(items[0].envelope())))
    return out


def _legacy_by_heads(data: bytes, upto: int) -> Optional[list[tuple[int, int]]]:
    """[(start, offset of the ``\n``)] of the rows of ``data[:upto]`` that may read in a legacy shape,
    by the scan the seq index flags segments with (:mod:`app.log.index.fastindex`): each row's head in the
    writer's key order gives its type; a row of a type that may be legacy is passed over when it is in
    a shape that is not (``data.message`` there, …), else probed.  None when a row is not in that
    shape (or ``data[:upto]`` does not end a row, or holds a NUL): the caller probes every row.

    Where set-up built the C row scanner, one pass of it (:func:`app.log.index.rowscan.scan`) names the
    rows to probe; a buffer it does not take whole (a seq gap, a packed row it cannot count, a row
    not ending in ``}``) falls back to the regex over the rows' heads (:func:`_legacy_by_regex`),
    as does an interpreted scanner (the regex is faster than the interpreted loop)."""
    from ..log.index import fastindex
    from ..log.format.limits import SCAN_MEMBERS
    if upto <= 0 or data[upto - 1:upto] != b"\n":
        return None
    if fastindex.SCANNER != "python":                  # (the C scanner)
        got = fastindex.scan_rows(data, 0, upto, -1, fastindex.SCAN_TYPES, fastindex.SCAN_KINDS,
                                   SCAN_MEMBERS, True)
        if got is not None:
            probes = got[5]
            return [(a, b - 1) for a, b in zip(probes[::2], probes[1::2]) if _may_be_legacy(data[a:b])]
    return _legacy_by_regex(data, upto)


def _may_be_legacy(row: bytes) -> bool:
    """Whether a row of a type that may be legacy, not in a shape that is not, may read in a legacy
    shape by the probe (a typed decode that skips the content); a row that does not probe (not JSON,
    another shape, nested deeper than the decoder goes): maybe, the codec decides."""
    from ..log.index.fastindex import probe_row
    from ..log.index.rowprobe import maybe_legacy
    try:
        return maybe_legacy(probe_row(row))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return True


def _legacy_by_regex(data: bytes, upto: int) -> Optional[list[tuple[int, int]]]:
    """:func:`_legacy_by_heads` by the regex over the rows' heads joined (``fastindex.ROWS_RE``) and the
    not-legacy shapes' patterns (``fastindex.NOT_LEGACY``); ``data[:upto]`` ends a row."""
    from ..log.index.fastindex import ROW_HEADS, HEADS_LEAD, LEGACY_TYPE_BYTES, NOT_LEGACY, ROWS_RE, SEQ_AT, lines_of
    buf = data if upto == len(data) else data[:upto]     # (the rows after the boundary row are not looked at)
    lines = lines_of(buf, upto)
    if lines is None:
        return None
    found = ROWS_RE.findall(b"\x00".join(chain(HEADS_LEAD, map(ROW_HEADS, lines))))
    if len(found) != len(lines):
        return None                            # a row in another shape or key order, a blank line
    types = list(map(_TYPE, found))
    ends = list(accumulate(map(len, lines)))   # (C-level steps: only the rows of a legacy type are visited)
    out = []
    for i in compress(range(len(lines)), map(LEGACY_TYPE_BYTES.__contains__, types)):
        line, t = lines[i], types[i]
        shape = NOT_LEGACY.get(t)
        if (shape is None or not shape.match(line, SEQ_AT + len(t) + len(found[i][2]))) and _may_be_legacy(line):
            out.append((ends[i] - len(line), ends[i] - 1))
    return out


def _legacy_by_probe(data: bytes, upto: int) -> list[tuple[int, int]]:
    """The rows of ``data[:upto]`` that may read in a legacy shape, every row probed (any shape)."""
    from ..log.index.rowprobe import LEGACY_TYPES, maybe_legacy, scan_lines_probe
    hints: tuple[bytes, ...] = _LEGACY_HINTS
    want = -1                               # rows the probe says may be legacy (-1: unknown)
    try:
        maybe = [r.type for r in scan_lines_probe(data[:upto]) if r.type in LEGACY_TYPES and maybe_legacy(r)]
        hints, want = tuple(sorted({b'"' + t.encode() + b'"' for t in maybe})), len(maybe)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    found: set[tuple[int, int]] = set()
    for hint in hints:
        i = data.find(hint, 0, upto)
        while i >= 0:
            a = data.rfind(b"\n", 0, i) + 1
            b = data.find(b"\n", i, upto)
            if b < 0:
                break
            found.add((a, b))
            i = data.find(hint, b, upto)
    rows = _maybe_legacy_rows(data, sorted(found))
    if want >= 0 and len(rows) < want:      # a type spelled with escapes: every row is looked at
        at, every = 0, []
        while at < upto and (b := data.find(b"\n", at, upto)) >= 0:
            every.append((at, b))
            at = b + 1
        rows = _maybe_legacy_rows(data, every)
    return rows


def _maybe_legacy_rows(data: bytes, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans whose row may read in a legacy shape (by the probe; a row that does not probe: maybe)."""
    from ..log.index.rowprobe import maybe_legacy, scan_lines_probe
    out = []
    for a, b in spans:
        try:
            probe = scan_lines_probe(data[a:b])
            if len(probe) == 1 and not maybe_legacy(probe[0]):
                continue                    # a current-shape row: stored as it is
        except (msgspec.DecodeError, msgspec.ValidationError):
            pass                            # the codec decides
        out.append((a, b))
    return out


def _enveloped_rows(reader: LogReader, seg: Segment, upto: int) -> list[tuple[int, int, bytes]]:
    """Rows of an envelope-free snapshot (spec-versions §0.1) with the envelope dsh's readers
    restore (seq = logical index, time 0): a fork child is a store, so it gets them."""
    import msgspec
    seqs = reader.codec.envelope_seqs or {}
    out = []
    for rpos, _off, _line, raw, complete in seg.split_rows():
        a = (rpos - seg.pos) if isinstance(rpos, int) else rpos[1]
        if a >= upto or not complete:
            break
        if rpos not in seqs or not raw.strip():
            continue
        obj = msgspec.json.decode(raw)
        if not isinstance(obj, dict) or "seq" in obj or "seq0" in obj:
            continue
        if obj.get("type") in ("text-chunks", "reasoning-chunks", "tool-call-chunks"):
            head = {"type": obj["type"], "seq0": seqs[rpos], "time0": 0}
        else:
            head = {"type": obj.get("type"), "seq": seqs[rpos], "time": 0}
        head.update((k, v) for k, v in obj.items() if k != "type")
        out.append((a, a + len(raw), encode_row(head)))
    return out


def _cut_in(reader: LogReader, seg: Segment, stored_through: int) -> Optional[int]:
    """Offset in ``seg.data`` just after the row ending at ``stored_through`` (None: not here)."""
    for rpos, _off, _line, raw, complete in seg.split_rows():
        if not complete:
            break
        items, _ = reader.codec.decode_row(raw, pos=rpos)
        evs = [i for i in items if is_event(i)]
        if evs and evs[0].seq <= stored_through <= evs[-1].seq:
            if evs[-1].seq != stored_through:
                raise ForkError("INVALID_BOUNDARY", f"seq {stored_through} is inside a packed row")
            local = (rpos - seg.pos) if isinstance(rpos, int) else rpos[1] - getattr(seg, "base", 0)
            return local + len(raw) + 1
    return None


def _cut_segment(plan: ForkPlan) -> tuple[int, int]:
    """(pos, end) of the segment holding the plan's last stored seq."""
    if plan.cut_segment is None:
        raise ForkError("INVALID_BOUNDARY", f"seq {plan.stored_through} is in no segment of the index")
    pos, end = plan.cut_segment
    return int(pos), int(end)


def _needs_row_pass(reader: LogReader) -> bool:
    """Whether seed rows may need rewriting: v0/v1 legacy shapes, or an envelope-free snapshot.
    Otherwise the seed is copied as stored without reading it (ranges / whole frames)."""
    return (getattr(reader, "version", 0) or 0) < 2 or bool(getattr(reader, "envelope_free", False))


def _seed_pieces_as_stored(reader: LogReader, plan: ForkPlan) -> Iterator[Piece]:
    """The seed as stored (v2+ store): everything before the cut segment as one byte range /
    run of whole frames, then the cut segment's rows through the boundary."""
    src = reader.source
    _pos, end = _cut_segment(plan)
    for seg in src.backward(end):               # the segment holding the boundary row
        cut = _cut_in(reader, seg, plan.stored_through)
        if cut is None:
            break
        if seg.pos > src.header_end:            # rows before it: copied as stored, not read
            yield Piece("frames" if src.kind == "zstd" else "range", src.header_end, seg.pos)
        yield _text(_frame_prefix(src, seg, cut))
        return
    raise ForkError("INVALID_BOUNDARY", f"seq {plan.stored_through} not found where the index put it")


def _seed_pieces_by_index(reader: LogReader, plan: ForkPlan, idx: SeqIndex, flags: Sequence[int]) -> Iterator[Piece]:
    """v0/v1 with the index's legacy flags: segments without a legacy-shape row are copied as
    stored, unread (byte ranges / whole frames); flagged ones are read and only their legacy rows
    are stored converted: the bytes between those rows stay byte ranges of the source (JSONL; a zstd
    frame holding no converted row stays a whole frame); the cut segment is read through the
    boundary row."""
    from ..log.source.zstdframes import decode_frame
    src = reader.source
    zst = src.kind == "zstd"
    stored = "frames" if zst else "range"
    cut_pos = _cut_segment(plan)[0]
    fd = os.open(src.path, os.O_RDONLY)
    # glibc keeps the freed ~1 MiB read buffers (and the scanner's Latin-1 copies) in the heap during the
    # pass instead of mapping each afresh (a page fault per 4 KiB: half the pass's CPU); trimmed after
    steady = heap_steady(True)
    try:
        run_start: Optional[int] = None        # stored bytes from here on are not yielded yet
        for i in range(len(idx)):
            pos, end = idx.seg_pos[i], idx.seg_end[i]
            if i and idx.seg_pos[i - 1] == pos:
                continue                        # another window of the same frame (read whole below)
            flag = any(flags[j] for j in range(i, len(idx)) if idx.seg_pos[j] == pos) if zst else flags[i]
            last = pos <= cut_pos < end or pos == cut_pos
            if not flag and not last:
                if run_start is None:
                    run_start = pos
                continue
            blob = pread_all(fd, pos, end)
            text = decode_frame(blob) if zst else blob      # bounded (app.log.format.limits.MAX_FRAME_BYTES)
            upto = len(text)
            if last:
                seg = Segment(pos=pos, end=end, data=text)
                cut = _cut_in(reader, seg, plan.stored_through)
                if cut is None:
                    raise ForkError("INVALID_BOUNDARY", f"seq {plan.stored_through} not found where the index put it")
                upto = cut
            conv = _converted_rows(reader, text, upto)
            if zst:
                if not conv and not last:
                    if run_start is None:
                        run_start = pos         # a frame without converted rows: copied whole
                    continue
                if run_start is not None:
                    yield Piece(stored, run_start, pos)
                    run_start = None
                at = 0
                for a, b, row in conv + [(upto, upto, b"")]:
                    for chunk in (text[at:a], row + b"\n" if row else b""):
                        if chunk:
                            yield _text(chunk)
                    at = b + 1 if row else b
            else:
                at = 0
                for a, b, row in conv:
                    if run_start is None and a > at:
                        run_start = pos + at
                    if run_start is not None and pos + a > run_start:
                        yield Piece(stored, run_start, pos + a)
                    run_start = None
                    yield _text(row + b"\n")
                    at = b + 1
                if run_start is None and (upto > at or not last):
                    run_start = pos + at
                if last and run_start is not None and pos + upto > run_start:
                    yield Piece(stored, run_start, pos + upto)
            if last:
                return
    finally:
        os.close(fd)
        if steady:
            heap_steady(False)
    raise ForkError("INVALID_BOUNDARY", f"seq {plan.stored_through} not found where the index put it")


def _seed_pieces(reader: LogReader, plan: ForkPlan) -> Iterator[Piece]:
    """The seed's stored rows as pieces, oldest first: ("frames", start, stop) whole zstd frames
    copied as stored, ("range", start, stop) raw JSONL bytes copied as stored, or ("text", bytes)
    rows (verbatim, converted from a legacy shape, or with a snapshot's envelope restored)."""
    if not _needs_row_pass(reader):
        yield from _seed_pieces_as_stored(reader, plan)
        return
    idx = reader.index
    flags = idx.legacy if idx is not None else None
    if idx is not None and flags is not None and len(flags) == len(idx) and \
            all(p >= reader.source.header_end for p in idx.seg_pos[:1]):
        yield from _seed_pieces_by_index(reader, plan, idx, flags)
        return
    cut_pos = _cut_segment(plan)[0]
    segs = reader.source.forward()
    nxt = next(segs, None)
    while nxt is not None:
        seg, nxt = nxt, next(segs, None)
        # a frame read in several windows is re-framed from its rows, never copied once per window
        multi = getattr(seg, "base", 0) > 0 or (nxt is not None and nxt.pos == seg.pos)
        if seg.bad:
            raise ForkError("INVALID_BOUNDARY", f"an unreadable segment lies inside the seed: {seg.bad}")
        data = seg.data
        upto = len(data)
        last = False
        if seg.pos >= cut_pos or seg.end > cut_pos:
            cut = _cut_in(reader, seg, plan.stored_through)
            if cut is not None:
                upto, last = cut, True
        conv = _enveloped_rows(reader, seg, upto) if getattr(reader, "envelope_free", False) else \
            _converted_rows(reader, data, upto)
        if reader.source.kind == "zstd" and not conv and not last and not multi and \
                seg.pos >= reader.source.header_end:
            yield Piece("frames", seg.pos, seg.end)
        else:
            at = 0
            for a, b, row in conv + [(upto, upto, b"")]:
                for chunk in (data[at:a], row + b"\n" if row else b""):
                    if chunk:
                        yield _text(chunk)
                at = b + 1 if row else b
        if last:
            return
    raise ForkError("INVALID_BOUNDARY", f"seq {plan.stored_through} not found where the index put it")


def _frame_prefix(src: Source, seg: Segment, cut: int) -> bytes:
    """The plaintext of ``seg``'s zstd frame up to ``seg.data[:cut]``: a big frame is read in
    several windows (``seg.base`` is the window's offset in the frame); the earlier ones are
    read again."""
    base = getattr(seg, "base", 0)
    if base == 0:
        return seg.data[:cut]
    parts = []
    for s in src.forward(start=seg.pos):
        if s.pos != seg.pos or getattr(s, "base", 0) >= base:
            break
        if s.bad:
            raise ForkError("FORK_UNAVAILABLE", f"the frame to cut holds an unreadable part: {s.bad}")
        parts.append(s.data)
    return b"".join(parts) + seg.data[:cut]


def checked_plan(reader: LogReader, plan: ForkPlan, given: bool, at_seq: Optional[int], live: bool,
                 strict_anchor: bool) -> ForkPlan:
    """``plan`` when the index it was made from describes the file (:mod:`app.store.forkcheck`: a
    cached index is a hint, re-scanned here); else the index is rebuilt from the file (and saved over
    the cache) and the fork planned again.  A plan the caller made (``given``: a preview the user saw)
    that the rebuilt index does not give again is refused."""
    from .forkcheck import index_agrees, same_for_plan
    if index_agrees(reader, plan):
        return plan
    from .indexcache import cached_index
    old, reader.index = reader.index, None
    cached_index(reader, fresh=True)
    if given:                                # (a host or core plan the caller made: it stands if the file says the same)
        if old is None or reader.index is None or not same_for_plan(old, reader.index, plan):
            raise ForkError("STALE_INDEX", "the saved index of this log did not match the file (rewritten in "
                                           "place?); it was rebuilt: preview the fork again")
        return plan
    return plan_fork(reader, at_seq, live=live, strict_anchor=strict_anchor)


def fork(reader: LogReader, at_seq: Optional[int] = None, out_store: Optional[str] = None,
         child_id: Optional[str] = None, live: bool = False, plan: Optional[ForkPlan] = None,
         verify: str = "sample", strict_anchor: bool = False,
         progress: Optional[Callable[[int, int], None]] = None) -> dict[str, Any]:
    """Host fork of ``reader``'s session at message anchor ``at_seq``; returns the child's facts
    (``strict_anchor``: an anchor past the last event is refused, see :func:`plan_fork`).
    ``progress(done, total)``: bytes of the copy then of the verification; when it raises (Cancel) the
    fork stops and leaves nothing: no child, no temporary, no folder made for it (app/store/fork_progress.py).

    The steps: the destination (:func:`_demo_out`), the parent made durable (:func:`parent_durable`), the
    plan (:func:`_plan`), the child's header and closing rows (:func:`_child_rows`), the child's path
    (:func:`_new_child_path`), the seed written and published (:func:`_write_child`), then verified
    (:func:`app.store.fork_verify.verify_child`).  A SQLite session goes to :func:`app.store.fork_sqlite.fork_sqlite`."""
    if reader.header is None:
        raise ForkError("FORK_UNAVAILABLE", "the source has no readable header")
    src = reader.source
    if src.kind != "sqlite":
        out_store = _demo_out(src.path, out_store)
    rev_before = src.revision()
    parent_durable(src.path)              # barrier 1 of 2: see parent_durable (the child is barrier 2)
    plan = _plan(reader, plan, at_seq, live, strict_anchor)
    child_id = child_id or f"session-{uuid.uuid4()}"
    header, tail_rows = _child_rows(reader, plan, child_id, reader.header.to_dict())
    if src.kind == "sqlite":
        return fork_sqlite(reader, plan, header, tail_rows, rev_before, at_seq, out_store)
    path = _new_child_path(reader, child_id, out_store)
    meter = _meter(plan, src.kind, verify, progress)
    meter.copied(0)                   # (a cancellation point before anything is made)
    crc = [0]          # of the seed bytes as they are written (jsonl) / of the copied frames (zstd)
    copied = [0]
    layout: list[Any] = []  # jsonl: ("range", start, stop, at) / ("text", bytes, at); zstd: ("frames", [crc,
    #                         bytes]) / ("text", [crc, length]), the child's seed in order
    made = _write_child(reader, plan, path, header, tail_rows, meter, layout, copied, crc)
    try:
        verified = verify_child(reader, path, layout, copied, crc, verify, rev_before, meter)
    except BaseException:
        if meter.stopped:             # cancelled while verifying: the published child goes too
            remove_made(path, made)
        raise
    meter.finish()
    return {"child": path, "id": child_id, "parentSession": reader.header.id, "seedLength": plan.seed_length,
            "boundary": plan.boundary, "anchor": at_seq, "synthesized": plan.synthesized_seqs,
            "turns": plan.turns, "format": src.kind, "sourceRevision": rev_before,
            "crc32": f"{crc[0]:08x}" if (src.kind == "zstd" or verify == "full") else None,
            "verified": verified, "bytesCopied": copied[0]}


def _demo_out(src_path: str, out_store: Optional[str]) -> Optional[str]:
    """The destination of a fork of a file: ``out_store``, else the demo's own store for the shipped demo
    (which is never written), prepared when it is the one used."""
    from . import demo
    demo_out = demo.fork_store_for(src_path)       # the shipped demo store is never written
    out_store = out_store or demo_out
    if out_store is not None and out_store == demo_out:
        demo.prepare(out_store)
    return out_store


def _plan(reader: LogReader, plan: Optional[ForkPlan], at_seq: Optional[int], live: bool,
          strict_anchor: bool) -> ForkPlan:
    """The plan to fork by: the caller's, else one made from the saved index; checked against the file."""
    given = plan is not None
    if plan is None and reader.index is None:
        from .indexcache import cached_index
        cached_index(reader)                 # the saved index (extended or built and saved if need be)
    plan = plan or plan_fork(reader, at_seq, live=live, strict_anchor=strict_anchor)
    return checked_plan(reader, plan, given, at_seq, live, strict_anchor)


def _child_rows(reader: LogReader, plan: ForkPlan, child_id: str,
                parent_hdr: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
    """(the child's header, the rows that close its seed) for ``plan`` (``parent_hdr``: the parent's header)."""
    now = int(time.time() * 1000)
    version = getattr(reader, "version", 0) or 0
    header = child_header(parent_hdr, child_id, plan.seed_length, now, version)
    last_time = 0
    if plan.boundary >= 0:                   # the marker's time: event B's, as the newest host (every version)
        last = plan.closure[-1] if plan.closure else reader.event_at(plan.stored_through)
        last_time = last.time if last is not None else 0
    return header, seed_tail(plan, version, last_time, tracker=getattr(plan, "open_tracker", None))


def _new_child_path(reader: LogReader, child_id: str, out_store: Optional[str]) -> str:
    """Where the child of a file goes; interrupted forks' leftovers there are cleaned, and a session already
    there (or a source that is neither JSONL nor zstd) is refused."""
    src = reader.source
    path = child_location(reader, child_id, out_store)
    from .publish import clean_stale_temps
    clean_stale_temps(os.path.dirname(os.path.dirname(path)), depth=1)   # interrupted forks' leftovers
    if _session_exists(path):
        raise ForkError("SESSION_EXISTS", f"a session {child_id!r} already exists ({os.path.dirname(path)}); "
                                          "a fork never writes into an existing session: choose another --id")
    if src.kind not in ("jsonl", "zstd"):
        raise ForkError("FORK_UNAVAILABLE", f"cannot fork a {src.kind} source")
    return path


def _write_child(reader: LogReader, plan: ForkPlan, path: str, header: dict[str, Any], tail_rows: list[Any],
                 meter: ForkMeter, layout: list[Any], copied: list[int], crc: list[int]) -> list[str]:
    """Write the child (its seed and ``tail_rows``) through the write-behind writer and publish it (the
    writer's flush: tmp, fsync, link, fsync dir); ``layout``, ``copied`` and ``crc`` record what was written,
    for the verification.  A failure publishes nothing and removes the folders made for the child.
    -> the folders made for it."""
    src = reader.source
    batch: list[Any] = []
    fd = os.open(src.path, os.O_RDONLY)
    try:
        stream: Optional[SeedStream] = None
        if plan.stored_through >= 0:
            pieces = _seed_pieces(reader, plan)
            if src.kind == "jsonl":
                stream = SeedStream()         # filled below, while the writer copies what it has
                batch.append(_raw_text(stream))
            else:
                # runs of whole frames are copied as stored; rows of a re-framed frame (the cut
                # frame, a frame holding converted rows) are written as one new frame per run
                for run_kind, run in runs(pieces):
                    if run_kind == "frames":
                        acc = [0, 0]                      # crc, bytes of this run as read
                        layout.append(("frames", acc))
                        batch.append(_raw_frames(frames_of(fd, run, acc, copied, crc, meter)))
                    else:
                        text = b"".join(p.data for p in run)
                        meter.copied(len(text))
                        layout.append(("text", [zlib.crc32(text), len(text)]))
                        batch.append(_raw_text([text]))
        batch.extend(tail_rows)
        made = missing_dirs(os.path.dirname(path))
        make_dirs(os.path.dirname(path))  # (here, before the pass: the writer starts its copy without it)
        w = SessionWriter(path, header, fmt=src.kind, pack=False, batch_delay_ms=1, exists=False, retry=False)
        ok = False
        try:
            w.append(batch)
            if stream is not None:
                _feed(stream, pieces, fd, layout, copied, meter)
            w.flush()                 # the barrier: child published (tmp, fsync, link, fsync dir)
            ok = True
        finally:
            if ok:
                w.close()
            else:
                w.abandon()           # a failed fork is not retried: nothing more is published
                remove_made(None, made)       # the child's own folder (and any above it), made for it, when empty
    finally:
        os.close(fd)
    return made


def _meter(plan: ForkPlan, kind: str, verify: str, progress: Optional[Callable[[int, int], None]]) -> ForkMeter:
    """The fork's progress: the copy's share is the seed's extent in the source (to the end of its cut
    segment), the verification's the bytes it reads (every copied byte for zstd or ``full``)."""
    copy_total = int(plan.cut_segment[1]) if plan.stored_through >= 0 and plan.cut_segment is not None else 0
    full = kind == "zstd" or verify == "full"
    return ForkMeter(progress, copy_total,
                     copy_total if full else min(copy_total, VERIFY_WINDOW * (VERIFY_WINDOWS + 2)))

def _feed(stream: SeedStream, pieces: Iterable[Piece], fd: int, layout: list[Any], copied: list[int],
          meter: ForkMeter) -> None:
    """Hand the JSONL seed's pieces to ``stream`` as they are made (stored ranges as kernel copies of
    ``fd``, converted rows as text), recording the child's layout for the verification.  Any failure
    fails the stream (the writer then publishes nothing) and is raised."""
    quick_switches(True)
    try:
        _feed_pieces(stream, pieces, fd, layout, copied, meter)
    finally:
        quick_switches(False)


def _feed_pieces(stream: SeedStream, pieces: Iterable[Piece], fd: int, layout: list[Any], copied: list[int],
                 meter: ForkMeter) -> None:
    try:
        for piece in pieces:
            if piece.kind == "range":
                chunk: Chunk = FileRange(fd, piece.start, piece.stop, meter.copied)   # (reported as copied)
                layout.append(("range", piece.start, piece.stop, copied[0]))
                n = piece.stop - piece.start
            else:
                chunk = piece.data
                layout.append(("text", piece.data, copied[0]))
                n = len(piece.data)
                meter.copied(n)
            copied[0] += n
            if not stream.put(chunk):
                break                 # the writer's pass failed: its flush says why
    except BaseException as e:
        stream.fail(e)
        raise
    stream.end()


def _session_exists(path: str) -> bool:
    """A session file (any generation, any format) is already at ``path`` or in its folder."""
    if os.path.lexists(path):
        return True
    d = os.path.dirname(path)
    try:
        return any(n.startswith("session") and ".jsonl" in n and not n.endswith(".tmp") for n in os.listdir(d))
    except OSError:
        return False



def preview(reader: LogReader, at_seq: Optional[int], live: bool = False,
            strict_anchor: bool = False) -> dict[str, Any]:
    """What the child will contain (for the UI's confirmation), without writing anything."""
    if reader.index is None:
        from .indexcache import cached_index
        cached_index(reader)
    plan = plan_fork(reader, at_seq, live=live, strict_anchor=strict_anchor)
    last = None
    if plan.last_message_seq is not None:
        ev = reader.event_at(plan.last_message_seq)
        if ev is not None:
            from ..log.format.model import event_message, message_text
            last = message_text(event_message(ev) or {})
    return {**plan.to_dict(), "lastMessage": last, "parentSession": reader.header.id if reader.header else None}


def parent_durable(path: str) -> None:
    """The fork's first barrier: force the parent's bytes — the range the child copies among
    them — to disk before the child is published (the child's flush is the second barrier), so
    no crash leaves a durable child whose seed the parent lost (the asymmetric window dsh leaves
    open).  A flush of what is already in the file (fdatasync, else fsync) and of its directory
    entry: nothing is written to the parent.  The fork then checks that the source did not change
    (its revision), so the synced bytes are the copied ones.  A SQLite store: the database file
    and its write-ahead log, where the parent's newest committed rows may still be."""
    from .publish import fsync_dir
    for p in (path, path + "-wal"):
        try:
            fd = os.open(p, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            continue                      # no write-ahead log (or not a SQLite store)
        try:
            getattr(os, "fdatasync", os.fsync)(fd)
        finally:
            os.close(fd)
    fsync_dir(os.path.dirname(os.path.abspath(path)))
