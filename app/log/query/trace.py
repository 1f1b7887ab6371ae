"""Query trace (spec §9 ``traceEvent`` / ``traceSession``), extended for auditing.

Pure: no Qt.  :func:`trace_event` makes one forward pass over the logical events and
answers, for one seq, where it stands on the model surface, what it replaced or what
replaced it (and through which compaction), which events it cites and which cite it,
which attempt a chunk belongs to, and at which dispatch boundaries it was part of the
request (it was a message of ``deriveMessages(events[0..b-1])``).

:func:`session_lineage` walks ``parentSession`` lineage over discovery entries (the store layer finds
them: :mod:`app.store.lineage`).
"""
from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any, Optional, Protocol, TypedDict, Union
from collections.abc import Callable, Iterable, Iterator, Sequence

from ..fold.attempts import Attempt, AttemptTracker, embedded_stream
from ..fold.folds import SurfaceFold, is_surface_type
from ..format.lazyrows import Lazy, PackedBlock, lazy_segment
from ..format.model import Event
from ..source.sources import RowPos, Segment
from ..format.payloads import JsonObj, obj
from ..format.versions import replace_bounds

if TYPE_CHECKING:
    from ..index.reader import LogReader, SeqIndex

DEFAULT_REQUEST_CAP = 50


class EventSource(Protocol):
    """What :func:`trace_event` needs of a reader (a :class:`~app.log.index.reader.LogReader`)."""

    def iter_events(self, logical: bool = ...) -> Iterable[Event]: ...


class LineageEntry(Protocol):
    """What :func:`session_lineage` reads of a discovery entry (``app.store.discovery.SessionInfo``)."""

    @property
    def id(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def parent(self) -> Optional[str]: ...
    @property
    def created_at(self) -> Optional[int]: ...
    @property
    def header(self) -> JsonObj: ...


class _Compaction(TypedDict):
    """A compaction seen in the pass (``compaction/start`` .. ``compaction/end``)."""
    compactionId: Any            # as logged (JSON)
    startSeq: int
    summarySeq: Optional[int]
    endSeq: Optional[int]
    turn: Any
    replacementSeqs: list[int]


class TraceError(Exception):
    """A refused query; ``code`` as dsh names it (SESSION_QUERY_*)."""

    def __init__(self, code: str, message: str):
        super().__init__(f"{code}: {message}")
        self.code = code
        self.reason = message


def _summary(ev: Event) -> JsonObj:
    t, s = ev.turn_step()
    out: JsonObj = {"seq": ev.seq, "type": ev.type, "time": ev.time}
    if t is not None:
        out["turn"] = t
    if s is not None:
        out["step"] = s
    if ev.surface_op is not None:
        out["surfaceOp"] = ev.surface_op
    if ev.synthesized:
        out["synthesized"] = True
    return out


def _attempt_json(a: Attempt) -> JsonObj:
    d = a.to_dict()
    d["failure"] = a.failure
    d["retryNumber"] = a.retry_number
    return d


def trace_event(reader_or_events: Union[EventSource, Iterable[Event]], seq: int,
                request_cap: int = DEFAULT_REQUEST_CAP) -> JsonObj:
    """The trace of one event.  ``reader_or_events``: a LogReader or an event iterable."""
    events: Iterable[Event]
    if hasattr(reader_or_events, "iter_events"):
        events = reader_or_events.iter_events(logical=True)
    else:
        events = reader_or_events
    sf = SurfaceFold(keep_events=False)
    at = AttemptTracker(keep_text=False)
    target: Optional[Event] = None
    derived: list[int] = []
    boundaries: list[int] = []
    n_boundaries = 0
    n_attempts = 0
    open_compactions: dict[Any, _Compaction] = {}    # compactionId -> record
    compaction_of: dict[int, tuple[_Compaction, JsonObj]] = {}   # replacing seq -> (record, its surfaceOp)
    last_compaction: Optional[_Compaction] = None
    for ev in events:
        if ev.seq == seq and target is None:
            target = ev
        if target is not None and ev.seq != seq and ev.source_event_seqs and seq in ev.source_event_seqs:
            derived.append(ev.seq)
        t = ev.type
        d = obj(ev.data)
        rec: Optional[_Compaction]
        if t.startswith("compaction/"):
            started = _track_compaction(ev, t, d, open_compactions)
            if started is not None:
                last_compaction = started
        # v2+: the settlement is the dispatch boundary and not part of its own request
        in_request = (target is not None and seq in sf.message_seqs()) if embedded_stream(ev) is not None else None
        if is_surface_type(ev) and ev.is_replace:
            before = dict(sf.replaced)
            sf.apply(ev)
            if ev.seq in sf.replaced and ev.seq not in before:
                rec = None
                if open_compactions:
                    rec = list(open_compactions.values())[-1]
                elif last_compaction is not None and last_compaction["endSeq"] is None:
                    rec = last_compaction
                if rec is not None:
                    rec["replacementSeqs"].append(ev.seq)
                    compaction_of[ev.seq] = (rec, dict(ev.surface_op))
        else:
            sf.apply(ev)
        before_n = len(at.attempts)
        at.apply(ev)
        if len(at.attempts) != before_n:          # a new attempt: its first chunk is a dispatch boundary
            n_attempts += 1
            if in_request if in_request is not None else (target is not None and seq in sf.message_seqs()):
                n_boundaries += 1
                if len(boundaries) < request_cap:
                    boundaries.append(ev.seq)
    if target is None:
        raise TraceError("SESSION_QUERY_EVENT_NOT_FOUND", f"seq {seq} is not in the log")

    out, chain = _trace_head(sf, target, seq, derived)
    attempt = _target_attempt(at, target, seq)
    out["attempt"] = _attempt_json(attempt) if attempt is not None else None
    comp = _compaction_json(sf, compaction_of, target, seq, chain)
    out["compaction"] = comp
    out["requests"] = {"boundaries": boundaries, "count": n_boundaries, "capped": n_boundaries > len(boundaries),
                       "dispatches": n_attempts}
    return out


def _track_compaction(ev: Event, t: str, d: JsonObj, open_compactions: dict[Any, _Compaction]) -> Optional[_Compaction]:
    """Note a ``compaction/*`` event in the open compactions (by id); -> the record a ``compaction/start`` opens."""
    rec: Optional[_Compaction]
    if t == "compaction/start":
        cid = d.get("compactionId")
        rec = {"compactionId": cid, "startSeq": ev.seq, "summarySeq": None, "endSeq": None,
               "turn": d.get("turn"), "replacementSeqs": []}
        open_compactions[cid] = rec
        return rec
    if t == "compaction/summary":
        rec = open_compactions.get(d.get("compactionId"))
        if rec is not None:
            rec["summarySeq"] = ev.seq
    elif t == "compaction/end":
        rec = open_compactions.pop(d.get("compactionId"), None)
        if rec is not None:
            rec["endSeq"] = ev.seq
    return None


def _surface_status(sf: SurfaceFold, target: Event, seq: int) -> tuple[str, list[int]]:
    """(the target's surface status: current, shadowed or log-only; the seqs that replaced it, in turn)."""
    if is_surface_type(target) and target.surface_op is not None:
        if seq in sf.replaced_by:
            surface = "shadowed"
        elif seq in sf.nodes:
            surface = "current"
        else:
            surface = "log-only"            # a rejected (violating) surface event
    else:
        surface = "log-only"
    chain: list[int] = []
    cur = sf.replaced_by.get(seq)
    seen: set[int] = set()
    while cur is not None and cur not in seen:
        seen.add(cur)
        chain.append(cur)
        cur = sf.replaced_by.get(cur)
    return surface, chain


def _trace_head(sf: SurfaceFold, target: Event, seq: int, derived: list[int]) -> tuple[JsonObj, list[int]]:
    """The first fields of a trace (the target, its surface status, what replaced it and what it replaced, its
    sources and ``derived``) -> (them, the replacement chain)."""
    surface, chain = _surface_status(sf, target, seq)
    return {
        "target": _summary(target),
        "surface": surface,
        "replacedBy": sf.replaced_by.get(seq),
        "replacementChain": chain,
        "replacedEventSeqs": list(sf.replaced.get(seq, [])),
        "sourceEventSeqs": list(target.source_event_seqs or []),
        "derivedEventSeqs": derived,
    }, chain


def _target_attempt(at: AttemptTracker, target: Event, seq: int) -> Optional[Attempt]:
    """The attempt the target belongs to (a chunk, a message, an attempt, a retry), if any."""
    if target.type == "assistant/chunk":
        return at.attempt_of(seq)
    if target.type == "assistant/message":
        return next((a for a in at.attempts if a.message_seq == seq), None)
    if target.type == "assistant/attempt":
        return at.attempt_of(seq)
    if target.type in ("llm/retry", "llm/retry-started"):
        return next((a for a in at.attempts if seq in (a.retry_seq, a.retry_started_seq)), None)
    return None


def _compaction_json(sf: SurfaceFold, compaction_of: dict[int, tuple[_Compaction, JsonObj]], target: Event,
                     seq: int, chain: list[int]) -> Optional[JsonObj]:
    """The compaction through which the target was shadowed, or which the target performed / belongs to."""
    comp: Optional[JsonObj] = None
    via: Optional[int] = None
    if chain and chain[0] in compaction_of:
        via = chain[0]
    elif seq in compaction_of:
        via = seq
    if via is not None:
        rec, op = compaction_of[via]
        comp = {"compactionId": rec["compactionId"], "startSeq": rec["startSeq"], "summarySeq": rec["summarySeq"],
                "endSeq": rec["endSeq"], "replacementSeq": via,
                "shadowedRange": dict(zip(("start", "end"), replace_bounds(op))),
                "shadowedSeqs": list(sf.replaced.get(via, []))}
    elif target.type.startswith("compaction/") and isinstance(target.data, dict):
        cid = target.data.get("compactionId")
        for rec, op in compaction_of.values():
            if rec["compactionId"] == cid:
                comp = {"compactionId": cid, "startSeq": rec["startSeq"], "summarySeq": rec["summarySeq"],
                        "endSeq": rec["endSeq"], "replacementSeq": rec["replacementSeqs"][0],
                        "shadowedRange": dict(zip(("start", "end"), replace_bounds(op))),
                        "shadowedSeqs": list(sf.replaced.get(rec["replacementSeqs"][0], []))}
                break
    return comp


# --------------------------------------------------------------------------- session lineage

def _sort_key(s: LineageEntry) -> tuple[float, str]:
    c = s.created_at
    return (c if isinstance(c, (int, float)) else 0, s.id)


def session_lineage(target: LineageEntry, sessions: list[LineageEntry]) -> JsonObj:
    """Ancestors (parent outward) and descendants (trees by parentSession) of ``target`` among ``sessions``.

    ``target`` and ``sessions`` are discovery entries (``id``, ``path``, ``parent``, ``created_at``,
    ``header``); finding them on disk is the store layer's job (:func:`app.store.lineage.trace_session`).
    Raises :class:`TraceError` ``SESSION_QUERY_INVALID_LINEAGE`` on a cycle.
    """
    by_id: dict[str, list[LineageEntry]] = {}
    for s in sessions:
        by_id.setdefault(s.id, []).append(s)

    def pick(ids_list: list[LineageEntry], near: LineageEntry) -> LineageEntry:
        same = [c for c in ids_list if os.path.dirname(c.path) == os.path.dirname(near.path)]
        return (same or ids_list)[0]

    def brief(s: LineageEntry) -> JsonObj:
        return {"id": s.id, "path": s.path, "createdAt": s.created_at, "parentSession": s.parent,
                "seedLength": s.header.get("seedLength"), "origin": s.header.get("origin")}

    ancestors: list[JsonObj] = []
    seen = {target.id}
    cur = target
    complete = True
    root: Optional[str] = target.id
    unresolved: Optional[str] = None
    while cur.parent:
        if cur.parent in seen:
            raise TraceError("SESSION_QUERY_INVALID_LINEAGE",
                             f"parentSession cycle through {cur.parent} (from {target.id})")
        cands = [c for c in by_id.get(cur.parent, []) if c is not cur]
        if not cands:
            complete, unresolved, root = False, cur.parent, None
            break
        cur = pick(cands, cur)
        seen.add(cur.id)
        ancestors.append(brief(cur))
        root = cur.id

    children: dict[str, list[LineageEntry]] = {}
    for s in sessions:
        if s.parent:
            children.setdefault(s.parent, []).append(s)

    def tree(s: LineageEntry, path_ids: set[str]) -> JsonObj:
        node = brief(s)
        kids: list[JsonObj] = []
        for c in sorted(children.get(s.id, []), key=_sort_key):
            if c is s:
                continue
            if c.id in path_ids:
                raise TraceError("SESSION_QUERY_INVALID_LINEAGE", f"parentSession cycle through {c.id}")
            kids.append(tree(c, path_ids | {c.id}))
        node["children"] = kids
        return node

    desc = tree(target, {target.id})["children"]
    out: JsonObj = {"target": brief(target), "ancestors": ancestors, "descendants": desc, "complete": complete}
    if complete:
        out["root"] = root
    else:
        out["unresolvedParentId"] = unresolved
    return out


def flatten_descendants(trees: list[JsonObj]) -> list[JsonObj]:
    """Depth-first list of descendant nodes (the export order of spec §9)."""
    out: list[JsonObj] = []
    for t in trees:
        out.append(t)
        out.extend(flatten_descendants(t.get("children", [])))
    return out


# --------------------------------------------------------------------------- trace from checkpoints

class _PointLike(Protocol):
    """What the trace reads of a fold checkpoint (:class:`~app.log.fold.checkpoints.Checkpoint`, or
    its bookkeeping alone: ``app.store.trace_points.TracePoint``)."""

    @property
    def seq(self) -> int: ...
    @property
    def pos(self) -> int: ...
    @property
    def turn_seq(self) -> int: ...
    @property
    def dispatches(self) -> int: ...
    @property
    def cited(self) -> Optional[tuple[int, int]]: ...
    @property
    def turns(self) -> list[tuple[int, int]]: ...


class _CheckpointsLike(Protocol):
    """What the trace reads of a log's fold checkpoints (:class:`~app.log.fold.checkpoints.Checkpoints`,
    or ``app.store.trace_points.TracePoints``: the same points without their folds)."""

    @property
    def points(self) -> Sequence[_PointLike]: ...
    def nearest_index(self, seq: int) -> int: ...


class _SurfaceLike(Protocol):
    """What :func:`trace_from_checkpoints` reads of a :class:`~app.log.fold.surface.SurfaceIndex`."""
    fold: SurfaceFold
    replacing: dict[int, dict[str, Any]]
    replace_ops: dict[Any, Any]


def _lazy_from(reader: LogReader, idx: SeqIndex, start: int,
               check: Optional[Callable[[], None]] = None) -> Iterator[Lazy]:
    """The stored events from seq ``start`` on (a turn start, or 0: no packed row straddles it;
    packed rows as blocks), read from the index segment holding it; in a raw JSONL segment the
    rows before it whose head names a smaller seq are skipped undecoded.  ``check()`` before each
    segment (it raises to cancel)."""
    from ..fold.checkpoints import segments_from
    i = idx.locate(start) if start > 0 else None
    pos = idx.seg_pos[i] if i is not None else None
    line0 = (idx.line0[i] if idx.line0[i] >= 0 else None) if i is not None else None
    skipping = start > 0
    for seg in segments_from(reader, pos, line0, -1):
        if check is not None:
            check()
        if skipping and type(seg) is Segment and seg.rows is None and not seg.bad:
            rest = _from_seq(seg, start)
            if rest is None:
                continue                          # (every row of this segment is before ``start``)
            seg = rest
        skipping = False
        for it in lazy_segment(reader, seg):
            if isinstance(it, PackedBlock):
                if it.n is not None and it.seq0 + it.n <= start:
                    continue
            elif it.seq < start:
                continue
            yield it


def _from_seq(seg: Segment, start: int) -> Optional[Segment]:
    """The part of a raw JSONL segment from its first row whose head does not name a seq below
    ``start`` (None: every row does)."""
    for p, _off, line, raw, complete in seg.split_rows():
        m = _HEAD_SEQ.match(raw) if complete else None
        if m is None or int(m.group(1)) >= start:
            k = p - seg.pos if isinstance(p, int) else 0
            if k == 0:
                return seg
            return Segment(pos=seg.pos + k, end=seg.end, data=seg.data[k:],
                           text_offset=seg.text_offset + k if seg.text_offset >= 0 else -1, line0=line,
                           torn=seg.torn)
    return None


# the head of a row as the writers write it: its type, then its seq (a packed row: its first seq)
_HEAD_SEQ = re.compile(rb'\{"type":"[^"\\]*","seq0?":(\d+)[,}]')
_PACKED = (b'{"type":"text-chunks"', b'{"type":"reasoning-chunks"', b'{"type":"tool-call-chunks"')


def _event_at(reader: LogReader, idx: SeqIndex, seq: int) -> Optional[Event]:
    """The stored event ``seq`` (a packed chunk too), from the index segment holding it: rows
    decoded up to it (the ones whose head names another seq skipped), a packed row expanded
    only when it may hold it."""
    from ..fold.checkpoints import segments_from
    i = idx.locate(seq)
    if i is None:
        return None
    codec = reader.codec

    def find_in(row: tuple[RowPos, int, Optional[int], bytes]) -> Optional[Event]:
        items, _ = codec.decode_row(row[3], pos=row[0], offset=row[1], line=row[2])
        return next((it for it in items if isinstance(it, Event) and it.seq == seq), None)
    pending: Optional[tuple[RowPos, int, Optional[int], bytes]] = None    # a packed row starting at or before seq
    for seg in segments_from(reader, idx.seg_pos[i], idx.line0[i] if idx.line0[i] >= 0 else None, -1):
        if seg.bad:
            continue
        for p, off, line, raw, complete in seg.split_rows():
            if not complete:
                continue
            m = _HEAD_SEQ.match(raw)
            if m is not None and pending is not None and int(m.group(1)) <= seq:
                pending = None                    # (the next row starts at or before seq: not in the packed one)
            if pending is not None:
                got = find_in(pending)
                pending = None
                if got is not None:
                    return got
            if m is not None:
                head = int(m.group(1))
                if head > seq:
                    return None
                if head != seq:
                    if raw.startswith(_PACKED):
                        pending = (p, off, line, raw)
                    continue
            got = find_in((p, off, line, raw))
            if got is not None:
                return got
        if seg.end >= idx.seg_end[i]:
            break
    return find_in(pending) if pending is not None else None


def _starts(items: Iterable[Lazy], tracker: AttemptTracker) -> Iterator[tuple[Lazy, bool]]:
    """(item, began an attempt?) of each item, fed to ``tracker`` (as :func:`trace_event` feeds it)."""
    for it in items:
        n = tracker.count
        if isinstance(it, PackedBlock):
            tracker.apply_deltas(it.turn, it.step, it.seq0, it.n or 0)
        else:
            tracker.apply(it)
        yield it, tracker.count != n


def _first_seq(it: Lazy) -> int:
    return it.seq0 if isinstance(it, PackedBlock) else it.seq


def _turn_before(cps: _CheckpointsLike, x: int) -> tuple[int, int]:
    """(seq, dispatches begun before it) of the last turn start at or before ``x`` ((0, 0): none),
    from the checkpoints (no pass over the index marks)."""
    i = cps.nearest_index(x)
    if i < 0:
        return 0, 0
    cp = cps.points[i]
    best = (cp.turn_seq, cp.dispatches) if cp.turn_seq >= 0 else (0, 0)
    for ts, n in cp.turns:
        if ts > x:
            break
        best = (ts, n)
    return best


class _Dispatches:
    """Dispatches (attempt starts) before a seq: the nearest checkpoint's count at its turn start,
    plus a short replay from that turn start with a fresh attempt tracker."""

    def __init__(self, reader: LogReader, idx: SeqIndex, cps: _CheckpointsLike, check: Optional[Callable[[], None]]):
        self.reader, self.idx, self.cps, self.check = reader, idx, cps, check

    def before(self, x: Optional[int], embedded_at_x: bool = False) -> int:
        """Attempts begun by events with seq < ``x`` (None: the whole stored log), and with
        ``embedded_at_x``, also one begun by the event ``x`` itself when it settles an embedded stream."""
        start, n = _turn_before(self.cps, x if x is not None else self.idx.last + 1)
        for it, began in _starts(_lazy_from(self.reader, self.idx, start, self.check), AttemptTracker(keep_text=False)):
            s = _first_seq(it)
            if x is not None and s >= x:
                if s == x and began and embedded_at_x and not isinstance(it, PackedBlock) \
                        and embedded_stream(it) is not None:
                    n += 1
                break
            if began:
                n += 1
        return n


def trace_from_checkpoints(reader: LogReader, seq: int, cps: _CheckpointsLike, surface: _SurfaceLike,
                           request_cap: int = DEFAULT_REQUEST_CAP,
                           check: Optional[Callable[[], None]] = None) -> Optional[JsonObj]:
    """:func:`trace_event` of a stored row without a pass over the log: the surface status,
    replacement chain and compaction from the log's surface index (:mod:`app.log.fold.surface`, saved
    beside its seq index), the attempt from a replay of the row's turn, the requests it was part
    of from dispatch counts kept in the fold checkpoints (each a replay from the nearest turn
    start), the events citing it from the checkpoint intervals whose citations reach it.

    None: this log cannot be answered so (seqs not contiguous, a repair cut, old checkpoints, a
    synthesized row, a synthesized compaction closer…): use :func:`trace_event`."""
    idx = reader.index or reader.build_index()
    if not cps.points or any(p.dispatches < 0 for p in cps.points) or idx.contiguous_through < idx.last \
            or not idx.monotonic or not 0 <= seq <= idx.last:
        return None
    st = reader.tail_state()
    if st.cut_pos is not None or any(ev.type.startswith("compaction/") for ev in st.closure):
        return None
    target = _event_at(reader, idx, seq)
    if target is None or target.synthesized:
        return None
    fold = surface.fold                 # (the head as trace_event derives it from the whole log)
    out, chain = _trace_head(fold, target, seq, _derived(reader, idx, cps, seq, st.closure, check))
    # the attempt: one replay of the target's turn (a turn start closes every open attempt)
    at = AttemptTracker(keep_text=False)
    for it, _b in _starts(_lazy_from(reader, idx, _turn_before(cps, seq)[0], check), at):
        if not isinstance(it, PackedBlock) and it.type == "turn/start" and it.seq > seq:
            break
    else:
        for ev in st.closure:
            at.apply(ev)
    attempt = _target_attempt(at, target, seq)
    out["attempt"] = _attempt_json(attempt) if attempt is not None else None
    out["compaction"] = _compaction_from(surface, target, chain)
    # requests: the dispatches while the target is a model message (from its own fold step to the
    # one that shadowed it: at an embedded settlement the surface is taken before it applies)
    d = _Dispatches(reader, idx, cps, check)
    total = d.before(None)
    member = is_surface_type(target) and target.surface_op is not None and \
        (seq in fold.nodes or seq in fold.replaced_by) and seq not in fold.empty_assistant
    boundaries: list[int] = []
    count = 0
    if member:
        r = fold.replaced_by.get(seq)
        count = (d.before(r, embedded_at_x=True) if r is not None else total) - d.before(seq + 1)
        if count:
            for it, began in _starts(_lazy_from(reader, idx, _turn_before(cps, seq)[0], check),
                                     AttemptTracker(keep_text=False)):
                s = _first_seq(it)
                if r is not None and s > r:
                    break
                if not began or s <= seq:
                    continue
                if r is not None and s == r and (isinstance(it, PackedBlock) or embedded_stream(it) is None):
                    break
                boundaries.append(s)
                if len(boundaries) >= min(count, request_cap):
                    break
    out["requests"] = {"boundaries": boundaries, "count": count, "capped": count > len(boundaries),
                       "dispatches": total}
    return out


def _compaction_from(surface: _SurfaceLike, target: Event, chain: list[int]) -> Optional[JsonObj]:
    """The trace's ``compaction`` from the surface index's records (see :func:`trace_event`)."""
    seq = target.seq
    fold = surface.fold
    via: Optional[int] = None
    if chain and chain[0] in surface.replacing:
        via = chain[0]
    elif seq in surface.replacing:
        via = seq
    if via is not None:
        rec = surface.replacing[via]
        return {"compactionId": rec["compactionId"], "startSeq": rec["startSeq"], "summarySeq": rec["summarySeq"],
                "endSeq": rec["endSeq"], "replacementSeq": via,
                "shadowedRange": dict(zip(("start", "end"), replace_bounds(surface.replace_ops[via]))),
                "shadowedSeqs": list(fold.replaced.get(via, []))}
    if target.type.startswith("compaction/") and isinstance(target.data, dict):
        cid = target.data.get("compactionId")
        for rseq, rec in surface.replacing.items():
            if rec["compactionId"] == cid:
                first = rec["replacementSeqs"][0]
                return {"compactionId": cid, "startSeq": rec["startSeq"], "summarySeq": rec["summarySeq"],
                        "endSeq": rec["endSeq"], "replacementSeq": first,
                        "shadowedRange": dict(zip(("start", "end"), replace_bounds(surface.replace_ops[rseq]))),
                        "shadowedSeqs": list(fold.replaced.get(first, []))}
    return None


def _derived(reader: LogReader, idx: SeqIndex, cps: _CheckpointsLike, seq: int, closure: list[Event],
             check: Optional[Callable[[], None]]) -> list[int]:
    """Seqs of the events after ``seq`` that cite it, reading only the checkpoint intervals whose
    citations reach ``seq`` (and the one after the last checkpoint); of those, only the rows that
    hold a ``sourceEventSeqs`` key are decoded."""
    from ..fold.checkpoints import segments_from
    out: list[int] = []
    pts = cps.points
    codec = reader.codec
    for k, p in enumerate(pts):
        nxt = pts[k + 1] if k + 1 < len(pts) else None
        if nxt is not None and (nxt.seq <= seq or p.cited is None or not p.cited[0] <= seq <= p.cited[1]):
            continue
        i = idx.locate(max(p.seq, seq + 1))
        if i is None:
            continue
        for seg in segments_from(reader, idx.seg_pos[i], idx.line0[i] if idx.line0[i] >= 0 else None, -1):
            if check is not None:
                check()
            if seg.bad:
                continue
            if nxt is not None and isinstance(seg.pos, int) and seg.pos >= nxt.pos:
                break
            done = False
            for pos, off, line, raw, complete in seg.split_rows():
                if not complete or _CITES not in raw:
                    continue
                items, _ = codec.decode_row(raw, pos=pos, offset=off, line=line)
                for it in items:
                    if not isinstance(it, Event):
                        continue
                    if nxt is not None and it.seq >= nxt.seq:
                        done = True
                        break
                    if it.seq > seq and it.source_event_seqs and seq in it.source_event_seqs:
                        out.append(it.seq)
                if done:
                    break
            if done:
                break
    for ev in closure:
        if ev.seq != seq and ev.source_event_seqs and seq in ev.source_event_seqs:
            out.append(ev.seq)
    return out


_CITES = b'"sourceEventSeqs"'        # a row citing other events holds this key (a row without it cites none)
