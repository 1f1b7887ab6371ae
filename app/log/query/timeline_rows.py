"""The timeline's pass over a log: every event of the logical face, a packed chunk row as one
:class:`~app.log.query.timeline.Block` (its first and last member times, no member built).

Most of a real log's bytes are packed delta rows (spec §1.4); the timeline needs only their extent and
times.  A packed row is read with the lean decoder of :mod:`app.log.format.fastrows` and accepted only
when it passes the same checks (:func:`~app.log.format.fastrows.packed_members`, and
:func:`~app.log.format.fastrows.refused_rows` for the limits and UTF-8).  A row of a type no span reads
(:data:`_SKIP`, told by the first key as dsh writes it) is not decoded at all; a v0/v1 ``assistant/chunk`` row
is read with fastrows' lean chunk record (its type, reason and usage: a ``block-end``'s text is not built).  Any other row goes the exact
way (:meth:`~app.log.format.codec.RowCodec.decode_row`), so bad rows and legacy shapes read as everywhere
else.  The logical face: rows from the repair cut on are left out and the closure is appended
(:meth:`~app.log.index.reader.LogReader.iter_events` with ``logical=True`` gives the same events).
"""
from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any, Union
from collections.abc import Iterator

from ..format import fastrows as fr
from ..format.lazyrows import Cut
from ..format.model import Event, is_event
from .timeline import Block, Chunk

if TYPE_CHECKING:
    from ..index.reader import LogReader

# event types no span reads (a row of one is not decoded at all): the rest of the vocabulary
_SKIP = frozenset(t.encode() for t in (
    "user/message", "system/message", "developer/message", "agent/inbox/spliced", "session/title", "todo/write",
    "hook/invoked", "hook/result", "session/title-llm-request", "feedback/record", "goal/change", "plan/mode",
    "sandbox/mode", "approval/policy", "permission/preset", "command/run", "command/done", "image/offload",
    "session-log-deepseek/delivery-accepted", "agent/harness", "workspace/changes", "model/selection"))
_PACKED_PREFIXES = (b'{"type":"text-chunks"', b'{"type":"reasoning-chunks"', b'{"type":"tool-call-chunks"')


def timeline_items(reader: LogReader) -> Iterator[Union[Event, Block, Chunk]]:
    st = reader.tail_state()
    cut = Cut(st.cut_pos) if st.cut_pos is not None else None
    packed = {k: v for k, v in fr.decoders(reader.version).items()
              if k in (b"text-chunks", b"reasoning-chunks", b"tool-call-chunks")}
    chunk_dec = fr.decoders(reader.version).get(b"assistant/chunk")       # (v0/v1: top-level chunk rows)
    decode_row = reader.codec.decode_row
    fast = not reader.envelope_free
    collecting = gc.isenabled()
    gc.disable()                # (many small records, no cycles)
    try:
        for seg in reader.source.forward():
            if seg.bad:
                if cut is not None and cut.reached_by(seg.row_pos(0)):
                    break
                reader.decode_segment(seg, None)
                continue
            refused: set[int] = set()
            if fast:
                if seg.rows is not None:
                    refused = fr.refused_rows([raw for _p, raw in seg.rows], False)
                else:
                    rows = seg.data.split(b"\n")
                    rows.pop()
                    refused = fr.refused_rows(rows, seg.data.isascii())
            for i, (pos, off, line, raw, complete) in enumerate(seg.split_rows()):
                if cut is not None and cut.reached_by(pos):
                    cut.hit = True
                    break
                if not complete:
                    continue
                if fast and raw.startswith(b'{"type":"'):
                    tag = raw[9:raw.find(b'"', 9)]
                    if tag in _SKIP:
                        continue
                    if i not in refused:
                        lean = _block(packed, tag, raw) if tag in packed else \
                            _chunk(chunk_dec, raw) if tag == b"assistant/chunk" and chunk_dec is not None else None
                        if lean is not None:
                            yield lean
                            continue
                items, _probs = decode_row(raw, pos=pos, offset=off, line=line)
                for it in items:
                    if is_event(it):
                        yield it
            if cut is not None and cut.hit:
                break
    finally:
        if collecting:
            gc.enable()
    yield from st.closure


def _chunk(dec: Any, raw: bytes) -> Union[Chunk, None]:
    """An ``assistant/chunk`` row as :mod:`app.log.format.fastrows` reads it when the exact path would read it
    with no problem (its type, finish reason and usage; a block's text is skipped, not built)."""
    try:
        rec = dec(raw)
    except fr.DECODE_ERRORS:
        return None
    d = rec.data
    c = d.chunk
    return Chunk(rec.seq, rec.time, d.turn, d.step, c.type, c.reason, c.usage)


def _block(packed: dict[bytes, Any], tag: bytes, raw: bytes) -> Union[Block, None]:
    dec = packed[tag]
    try:
        rec = dec(raw)
    except fr.DECODE_ERRORS:
        return None
    n = fr.packed_members(rec)
    if not n:
        return None
    d = rec.data
    return Block(d.turn, d.step, rec.seq, n, rec.time0, rec.time0 + sum(d.dt))
