"""The timeline's pass over a log: every event of the logical face, a packed chunk row as one
:class:`~app.log.query.timeline.Block` (its first and last member times, no member built).

Most of a real log's bytes are packed delta rows (spec §1.4); the timeline needs only their extent and
times.  A packed row is read with the lean decoder of :mod:`app.log.format.fastrows` and accepted only
when it passes the same checks (:func:`~app.log.format.fastrows.packed_members`, and
:func:`~app.log.format.fastrows.refused_rows` for the limits and UTF-8).  A row of a type no span reads
(:data:`_SKIP`, told by the first key as dsh writes it) is not decoded at all; a v0/v1 ``assistant/chunk`` row
is read with fastrows' lean chunk record (its type, reason and usage: a ``block-end``'s text is not built), and
a row of a type the spans read (:data:`_LEAN`: turn and step bounds, tool calls and results, messages,
retries; a v2+ settlement as a :class:`~app.log.query.timeline.Settlement`, its stream summed by
:func:`stream_summary`; in a JSONL segment the row scan in C reads a settlement in the writer's shape in one pass,
:data:`SETTLE_C`, and :func:`~app.log.query.timeline_lean.settled` makes its record) with the lean record of :func:`~app.log.format.fastrows.timeline_decoders` (the rows fastrows accepts,
as events holding only the data fields the spans read).  A JSONL segment is split at once and its refused rows
found in whole-segment passes (:func:`~app.log.format.fastrows.refused_split`).  Any other row goes the exact
way (:meth:`~app.log.format.codec.RowCodec.decode_row`), so bad rows and legacy shapes read as everywhere
else.  The logical face: rows from the repair cut on are left out and the closure is appended
(:meth:`~app.log.index.reader.LogReader.iter_events` with ``logical=True`` gives the same events).

Whole turns (:data:`TURN_C`, v2+ logs): where the row scan in C reads every row of a turn (``timeline_scan.TURN``:
bounds, committed and log-only settlements, tool calls and results, retries, request headers and contexts, in the
writer's shapes), it builds the
turn's spans itself; the pass's Builder takes them (:meth:`~app.log.query.timeline.Builder.turn_c`) when its state is
at rest, else the turn's rows are read again one by one.  ``tests/test_timeline_tlc2.py`` holds the two equal.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, Optional, Union, cast
from collections.abc import Callable, Iterator

from ..format import fastrows as fr
from ..gcpause import collector_paused
from ..index.fastindex import steady_heap
from ..format.lazyrows import Cut
from ..format.model import Event, is_event
from ..format.payloads import JsonObj
from ..source.sources import Segment
from .timeline import Block, Chunk, Settlement
from .timeline_lean import TAGS, settlement, summarize_runs
from .timeline_scan import CHUNK, PACKED, SETTLE, SMALL, SMALL_TYPES, TIMED, TURN, Small, scan

Item = Union[Event, Block, Chunk, Settlement, Small, tuple[Any, bytes], tuple[Any, bytes, Any]]

if TYPE_CHECKING:
    from ..index.reader import LogReader

# event types no span reads (a row of one is not decoded at all): the rest of the vocabulary
_SKIP = frozenset(t.encode() for t in (
    "user/message", "system/message", "developer/message", "agent/inbox/spliced", "session/title", "todo/write",
    "hook/invoked", "hook/result", "session/title-llm-request", "feedback/record", "goal/change", "plan/mode",
    "sandbox/mode", "approval/policy", "permission/preset", "command/run", "command/done", "image/offload",
    "session-log-deepseek/delivery-accepted", "agent/harness", "workspace/changes", "model/selection"))
_SKIP_LIST = sorted(_SKIP)
SETTLE_C = True      # settlement rows read by the row scan in C (timeline_scan.SETTLE; False: by timeline_lean)
TURN_C = True        # whole turns read and built by the row scan in C (timeline_scan.TURN; False: row by row)
_TURN_TAGS = (b"tool/call", b"tool/result", b"turn/end")
_PACKED_PREFIXES = (b'{"type":"text-chunks"', b'{"type":"reasoning-chunks"', b'{"type":"tool-call-chunks"')


def timeline_items(reader: LogReader, start: Optional[int] = None, stop: Optional[int] = None) -> Iterator[Item]:
    """The items of the logical face (``start``/``stop``: only the rows from the row at byte ``start`` on, and
    before byte ``stop``, of a raw JSONL log: a part, with no closure unless it runs to the end; the caller
    checks that the repair cut is not before ``stop``)."""
    st = reader.tail_state()
    cut_pos = st.cut_pos if stop is None else stop
    cut = Cut(cut_pos) if cut_pos is not None else None
    readers = _readers(reader.version)
    decode_row = reader.codec.decode_row
    fast = not reader.envelope_free
    flags = (PACKED if (reader.version or 0) < 2 else 0) | (CHUNK if b"assistant/chunk" in readers else 0) | \
        (SMALL if all(t.encode() in readers for t in SMALL_TYPES) else 0) | \
        (SETTLE if SETTLE_C and all(readers.get(t) is settlement for t in TAGS) else 0)
    if TURN_C and flags & SETTLE and flags & SMALL and fast and (reader.version or 0) >= 2 \
            and all(t in readers for t in _TURN_TAGS):
        flags |= TURN | TIMED               # (any part too: Builder.turn_c takes a later part's turns, see timeline_split)
    src = reader.source
    with collector_paused(), steady_heap(src.size):        # (many small records, no cycles)
        if start is None and src.kind == "jsonl":
            start = src.header_end              # (the same segments with no line numbers: the spans read none, and
        segs: Iterator[tuple[Segment, int, Optional[int]]] = \
            _turns_joined(src.forward(start)) if flags & TURN and src.kind == "jsonl" and REGROUP \
            else ((seg, 0, None) for seg in src.forward(start))
        for seg, first, last in segs:           # counting the newlines of every segment costs ~0.5 s per GB)
            if seg.bad:
                if cut is not None and cut.reached_by(seg.row_pos(0)):
                    break
                reader.decode_segment(seg, None)
                continue
            if fast and seg.rows is None:
                yield from _fast_segment(seg, readers, decode_row, cut, flags, None, first, last)
                if cut is not None and cut.hit:
                    break
                continue
            refused: set[int] = set()
            if fast and seg.rows is not None:
                refused = fr.refused_rows([raw for _p, raw in seg.rows], False)
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
                    rd = readers.get(tag)
                    lean = rd(raw) if rd is not None and i not in refused else None
                    if lean is not None:
                        yield lean
                        continue
                items, _probs = decode_row(raw, pos=pos, offset=off, line=line)
                for it in items:
                    if is_event(it):
                        yield it
            if cut is not None and cut.hit:
                break
    if stop is None:
        yield from st.closure


def _fast_segment(seg: Segment, readers: dict[bytes, Callable[[bytes], Optional[Item]]], decode_row: Any,
                  cut: Optional[Cut], flags: int, rows: Optional[tuple[int, int, int]] = None, first: int = 0,
                  last: Optional[int] = None) -> Iterator[Item]:
    """The rows of one JSONL segment (what the loop of :func:`timeline_items` does with ``split_rows``): sorted by
    :func:`app.log.query.timeline_scan.scan` (skipped rows dropped, runs of delta chunk rows as one Block), the
    rows it leaves read as before; ``rows``: only those from ``start`` to ``stop`` (``(start, stop, index)``: a turn
    the scan read whole, read again row by row); ``first``, ``last``: only the rows from byte ``first`` and before
    byte ``last`` (:func:`_turns_joined`: the others are read in a segment of their own; ``first`` > 0 only where the
    segment has no line numbers)."""
    data = seg.data
    stop = data.rfind(b"\n") + 1                       # (the complete rows; a torn last row is not read)
    if last is not None:
        stop = min(stop, last)
    cut_at = _cut_at(seg, cut) if cut is not None else None
    if cut_at is not None and last is not None and cut_at > last:
        cut_at = None                                   # (the cut is among the rows read after: not hit here)
    if cut_at is not None and cut_at < stop:
        stop = cut_at
    start, index = first, 0
    if rows is not None:
        start, stop, index = rows
    skip = _SKIP
    for x in scan(data, stop, _SKIP_LIST, flags, start, index):
        if isinstance(x, tuple):
            n = len(x)
            if n == 6:
                yield Block(*x)
            elif n == 5:                        # (a small row: Builder.small reads it as its lean event)
                yield cast(Small, x)
            elif n == 10:                       # (a settlement the C scan read: Builder.settled_c reads it)
                yield (x, data)
            else:                               # (a whole turn: Builder.turn_c takes it, else its rows again)
                a, z, _seq, i = cast(tuple[int, int, int, int, Any], x[2])[:4]
                yield (x, data, functools.partial(_fast_segment, seg, readers, decode_row, None, flags & ~TURN,
                                                  (a, z, i)))
            continue
        at = (x >> 1) & 0xFFFFFFFF              # (timeline_scan.unpack, inline)
        raw = data[at:data.index(b"\n", at)]
        if raw[:9] == b'{"type":"':
            tag = raw[9:raw.find(b'"', 9)]
            if tag in skip:
                continue
            rd = readers.get(tag)
            if rd is not None and not x & 1:
                lean = rd(raw)
                if lean is not None:
                    yield lean
                    continue
        items, _probs = decode_row(raw, pos=seg.row_pos(at), offset=seg.text_offset + at if seg.text_offset >= 0
                                   else -1, line=seg.line0 + (x >> 33) if seg.line0 is not None else None)
        for it in items:
            if is_event(it):
                yield it
    if cut_at is not None and cut is not None:
        cut.hit = True


_TURN_START = b'{"type":"turn/start",'
_TURN_END = b'{"type":"turn/end",'
REGROUP = True       # a turn cut by a segment's end read in a segment of its own (False: as the segments come)


def _row_at(data: bytes, row: bytes, at: int = 0, last: bool = False) -> int:
    """The start of the first (``last``: the last) row of ``data`` from byte ``at`` beginning with ``row``, else -1
    (a row starts at 0 or after a newline: a JSON string holds no raw newline)."""
    if last:
        i = data.rfind(b"\n" + row, at)
        return i + 1 if i >= 0 else (at if data.startswith(row, at) else -1)
    if data.startswith(row, at):
        return at
    i = data.find(b"\n" + row, at)
    return i + 1 if i >= 0 else -1


def _turns_joined(segs: Iterator[Segment], limit: int = 8 << 20) -> Iterator[tuple[Segment, int, Optional[int]]]:
    """The segments of a raw JSONL log as ``(segment, first, last)``: read its rows from byte ``first`` and before
    byte ``last`` (None: to its end), the same rows in the same order as the segments read whole, but a turn whose
    ``turn/start`` row is in one segment and its ``turn/end`` row in the next read in a segment of its own, the two
    pieces' bytes joined, so that the row scan in C can read it whole (``timeline_scan.TURN``; ~1 turn in 30 of a
    log of 1 MiB segments, else read row by row in Python).  The row scan gives the same items for any cut of the
    rows into segments (every one a row boundary); only segments with no line numbers, each starting where the last
    ended, are joined; a turn that does not end in the next segment, or of more than ``limit`` bytes, is not."""
    carry: Optional[Segment] = None             # (the bytes of the last segment's open turn)
    for seg in segs:
        first = 0
        plain = not seg.bad and seg.rows is None and seg.line0 is None and type(seg.pos) is int
        if carry is not None:
            end = -1
            if plain and seg.pos == carry.pos + len(carry.data):
                at = _row_at(seg.data, _TURN_END)
                end = seg.data.find(b"\n", at) + 1 if at >= 0 else -1
            if end > 0:
                yield Segment(pos=carry.pos, end=seg.pos + end, data=carry.data + seg.data[:end],
                              text_offset=carry.text_offset), 0, None
                first = end
            else:
                yield carry, 0, None
            carry = None
        last: Optional[int] = None
        if plain and not seg.torn:
            data = seg.data
            at = _row_at(data, _TURN_START, first, last=True)
            if at >= first and len(data) - at <= limit and _row_at(data, _TURN_END, at) < 0:
                carry = Segment(pos=seg.pos + at, end=seg.end, data=data[at:],
                                text_offset=seg.text_pos(at))
                last = at
        if last is None or last > first:
            yield seg, first, last
    if carry is not None:
        yield carry, 0, None


def _cut_at(seg: Segment, cut: Cut) -> Optional[int]:
    """The start of the first row (or torn last row) of ``seg`` at or after the cut, else None."""
    data = seg.data
    if not data or not cut.reached_by(seg.row_pos(len(data) - 1)):
        return None
    at = 0
    while at < len(data):
        if cut.reached_by(seg.row_pos(at)):
            return at
        nl = data.find(b"\n", at)
        if nl < 0:
            break
        at = nl + 1
    return None


def lean_item(raw: bytes, version: int) -> Optional[Item]:
    """What the pass makes of one stored row when it reads it lean (a Block, Chunk, Settlement or lean Event),
    else None (the row is skipped or goes the exact way)."""
    if not raw.startswith(b'{"type":"') or fr.refused_rows([raw], False):
        return None
    rd = _readers(version).get(raw[9:raw.find(b'"', 9)])
    return rd(raw) if rd is not None else None


@functools.cache
def _readers(version: int) -> dict[bytes, Callable[[bytes], Optional[Item]]]:
    """Row type -> its lean reader (a record, or None: the row goes the exact way)."""
    decs = fr.timeline_decoders(version)
    legacy = version < 2
    out: dict[bytes, Callable[[bytes], Optional[Item]]] = {}
    for tag, dec in decs.items():
        if tag in (b"text-chunks", b"reasoning-chunks", b"tool-call-chunks"):
            out[tag] = functools.partial(_block, dec)
        elif tag == b"assistant/chunk":
            out[tag] = functools.partial(_chunk, dec)
        elif tag in TAGS:
            out[tag] = settlement
        elif tag in _LEAN_TAGS:
            out[tag] = functools.partial(_event, dec, legacy=legacy)
    return out


def _event(dec: Any, raw: bytes, legacy: bool) -> Union[Event, Settlement, None]:
    """A row of a type in :data:`_LEAN` as an event holding the data fields the spans read, when
    :mod:`app.log.format.fastrows` accepts it (the exact path would read it with no problem and no
    conversion); a settlement with an embedded stream (v2+) goes the exact way."""
    try:
        rec = dec(raw)
    except fr.DECODE_ERRORS:
        return None
    if rec.K >= fr.CHECKED and not fr.record_ok(rec, legacy):
        return None
    d = rec.data
    ev = Event(seq=rec.seq, type=rec.T, time=rec.time, data=_LEAN[rec.T](d), surface_op=rec.surfaceOp,
               source_event_seqs=rec.sourceEventSeqs, ignorable=rec.ignorable)
    if rec.K == fr.ATTEMPT or (rec.K == fr.MESSAGE and d.stream is not None):
        return Settlement(ev, stream_summary(d.stream))
    return ev


def stream_summary(stream: list[Any]) -> JsonObj:
    """:func:`app.log.format.versions.stream_summary` of a lean stream (fastrows' records: every record an
    object, ``type`` a string or null, ``chunk`` an object or null, ``time``/``time0`` integers or null, ``dt`` a
    list of integers or null), without the text."""
    return summarize_runs(stream, _list_run)


def _list_run(rec: Any, field: Optional[str]) -> Optional[tuple[int, int]]:
    payload = getattr(rec, field) if field is not None else None
    if not isinstance(payload, list) or not payload:
        return None
    n = len(payload)
    return n, (sum(rec.dt[:n - 1]) if rec.dt else 0)      # (a dt of integers only: see timeline_decoders)


def _result(d: Any) -> JsonObj:
    m = d.message
    src = m.source
    return {"turn": d.turn, "step": d.step, "error": d.error,
            "message": {"role": m.role, "isError": m.isError, "toolCallId": m.toolCallId,
                        "source": {"callId": src.callId} if src is not None else None,
                        "content": [{"type": b.type, "isError": b.isError} for b in m.content]}}


# the data fields each handler of app/log/query/timeline.py (and the attempt tracker) reads, per event type
_LEAN: dict[str, Callable[[Any], JsonObj]] = {
    "turn/start": lambda d: {"turn": d.turn},
    "turn/end": lambda d: {"turn": d.turn, "reason": d.reason},
    "step/start": lambda d: {"turn": d.turn, "step": d.step},
    "step/end": lambda d: {"turn": d.turn, "step": d.step},
    "tool/call": lambda d: {"turn": d.turn, "step": d.step, "callId": d.callId, "name": d.name},
    "tool/result": _result,
    "assistant/message": lambda d: {"turn": d.turn, "step": d.step, "interrupted": d.interrupted, "usage": d.usage},
    "assistant/attempt": lambda d: {"turn": d.turn, "step": d.step, "usage": d.usage},
    "llm/retry": lambda d: {"turn": d.turn, "step": d.step, "retry": d.retry, "retryId": d.retryId,
                            "delayMs": d.delayMs, "failure": d.failure},
    "llm/retry-started": lambda d: {"turn": d.turn, "step": d.step, "retry": d.retry, "retryId": d.retryId},
}
_LEAN_TAGS = frozenset(t.encode() for t in _LEAN)


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


def _block(dec: Any, raw: bytes) -> Union[Block, None]:
    try:
        rec = dec(raw)
    except fr.DECODE_ERRORS:
        return None
    n = fr.packed_members(rec)
    if not n:
        return None
    d = rec.data
    return Block(d.turn, d.step, rec.seq, n, rec.time0, rec.time0 + sum(d.dt))
