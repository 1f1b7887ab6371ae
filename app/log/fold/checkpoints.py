"""Fold checkpoints: the surface fold and the header fold saved every few MB of a log.

The exact request at a dispatch boundary ``b`` and the messages through a seq need the
folds of the whole prefix (spec §3).  :func:`build_checkpoints` makes one forward pass and
snapshots both folds at segment starts every ``every`` bytes; :func:`folds_at` then restores
the nearest snapshot at or before a seq and replays only the events after it.  A snapshot
keeps the fold's structure (surface nodes, who shadowed whom, the header) and no payloads:
the events of the surviving surface nodes are read back from the log through the seq index
when a snapshot is restored.  Results equal the from-scratch folds (tests check every
boundary of every fixture).
"""
from __future__ import annotations

import bisect
import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, TypedDict
from collections.abc import Callable, Iterable, Iterator

import msgspec

from .folds import HeaderFold, SurfaceFold, ToolHistoryFold
from .v0chain import V0Chain
from .v2heads import V2Head
from ..format.lazyrows import Lazy, PackedBlock, lazy_segment
from ..format.model import Event, Problem, event_message, is_event

if TYPE_CHECKING:
    from ..index.integrity import EventChecks
    from ..index.reader import LogReader, SeqIndex
    from ..source.sources import Segment

EVERY = 2 << 20
_KINDS = {k: {"kind": k} for k in ("error", "aborted", "stop", "length", "tool-calls")}
_NO_TEXT: list[str] = []      # (the builder's tracker keeps no text: nothing is ever added)
EVENTS_SLACK = 64        # events of shadowed nodes the builder may hold beyond twice its nodes' (issue 36)


class HeaderState(TypedDict):
    """The header fold's result: the canonical header (a JSON object), its seq and reason."""
    header: Optional[dict[str, Any]]
    seq: Optional[int]
    reason: Optional[str]


HistoryEntry = tuple[int, Optional[str]]         # (seq, reason) of a request/header


@dataclass
class Checkpoint:
    """The folds of the stored events with seq < ``seq``, as a change against the previous checkpoint
    (so that a log's checkpoints together take about as much room as one fold, not one per point)."""
    seq: int                 # first seq NOT folded in (the folds cover seqs < seq)
    pos: int                 # physical start of the segment holding ``seq``
    line0: Optional[int]
    text_offset: int
    keep: int                # surface nodes: the previous point's first ``keep`` nodes ...
    add: list[int]           # ... then these
    empty: list[int]         # nodes that are empty assistant messages (no model message)
    violations: list[Problem]             # surface violations found since the previous point
    header: Optional[HeaderState]         # header fold (None: the previous point's)
    history: list[HistoryEntry]           # header history entries since the previous point
    # for the row trace (:func:`app.log.query.trace.trace_from_checkpoints`): the last turn/start before
    # ``seq`` (-1: none), the attempts (dispatches) begun before it (an attempt tracker started
    # afresh at a turn start counts the same from there on: a turn start closes every open
    # attempt), and the lowest and highest seq that the events from here to the next point cite
    # (``sourceEventSeqs``; None: none cite any; the last point's is not final: the log may grow);
    # ``turns``: the same count at every turn start of the interval (a replay then starts at most a turn back)
    turn_seq: int
    dispatches: int
    cited: Optional[tuple[int, int]]
    turns: list[tuple[int, int]]          # (seq, dispatches begun before it) of each turn/start from here to the next point
    checks: list[tuple[Problem, bool]] = field(default_factory=list)   # (problem, refusing) found by EventChecks since the previous point
    # v4 state (spec-versions §6): the last step mark, the image/offload projections of the nodes
    # (node seq -> offloaded image indexes), the header tools seen since the previous point and
    # the rest of the toolHistory fold (None: the previous point's)
    version: int = 0
    step_mark: Optional[tuple[str, int]] = None
    offloaded: list[tuple[int, list[int]]] = field(default_factory=list)
    tool_headers: list[tuple[int, Optional[list[Any]]]] = field(default_factory=list)   # None: same tools as the header before
    tools: Optional[dict[str, Any]] = None
    v2head: Optional[list[Any]] = None    # v0-v2: the v2 -> v3 edge's state (app.log.fold.v2heads.V2Head.state)
    v0chain: Optional[list[Any]] = None   # v0/v1: the v0 -> v1 edge's state (app.log.fold.v0chain.V0Chain.state)


@dataclass
class Checkpoints:
    points: list[Checkpoint] = field(default_factory=list)

    def nearest_index(self, seq: int) -> int:
        return bisect.bisect_right([p.seq for p in self.points], seq) - 1

    def nearest(self, seq: int) -> Optional[Checkpoint]:
        i = self.nearest_index(seq)
        return self.points[i] if i >= 0 else None

    def state(self, i: int) -> tuple[list[int], list[int], list[Problem], HeaderState, list[HistoryEntry],
                                     list[tuple[Problem, bool]]]:
        """(nodes, empty, violations, header dict, history, checks) of point ``i`` (replayed from point 0)."""
        nodes: list[int] = []
        viol: list[Problem] = []
        hist: list[HistoryEntry] = []
        chk: list[tuple[Problem, bool]] = []
        header: HeaderState = {"header": None, "seq": None, "reason": None}
        for p in self.points[:i + 1]:
            del nodes[p.keep:]
            nodes.extend(p.add)
            viol.extend(p.violations)
            hist.extend(p.history)
            chk.extend(p.checks)
            if p.header is not None:
                header = p.header
        return nodes, self.points[i].empty, viol, header, hist, chk

    def to_builtins(self) -> list[object]:
        out: list[object] = msgspec.to_builtins(self.points)
        return out

    @classmethod
    def from_builtins(cls, rows: object) -> Checkpoints:
        """From :meth:`to_builtins`'s output (raises ``msgspec.ValidationError`` on any other shape)."""
        return cls(msgspec.convert(rows, list[Checkpoint]))


    def tool_state(self, i: int) -> tuple[dict[int, list[Any]], Optional[dict[str, Any]]]:
        """(header seq -> tools, the other toolHistory fields) of point ``i`` (v4)."""
        headers: dict[int, list[Any]] = {}
        tools: Optional[dict[str, Any]] = None
        last: list[Any] = []
        for p in self.points[:i + 1]:
            for seq, tl in p.tool_headers:
                last = last if tl is None else tl
                headers[seq] = last
            if p.tools is not None:
                tools = p.tools
        return headers, tools


_TOOL_FIELDS = ("declared", "active", "available", "baseline", "tools", "updates")


def _tool_fields(th: ToolHistoryFold) -> dict[str, Any]:
    d: dict[str, Any] = {k: getattr(th, k) for k in _TOOL_FIELDS}
    d["declared"] = list(th.declared.items())          # (names need not be strings)
    d["available"] = list(th.available)
    return msgspec.to_builtins(d)       # type: ignore[no-any-return]


def restore_header(header: HeaderState, history: Iterable[HistoryEntry],
                   tool_headers: Optional[dict[int, list[Any]]] = None,
                   tools: Optional[dict[str, Any]] = None) -> HeaderFold:
    hf = HeaderFold()
    hf.header, hf.seq, hf.reason = header["header"], header["seq"], header["reason"]
    hf.history = list(history)
    if tools is not None:
        th = hf.tool_history
        th.headers = copy.deepcopy(tool_headers or {})
        t = copy.deepcopy(tools)
        th.declared = {k: v for k, v in t["declared"]}
        th.active, th.available, th.baseline = t["active"], set(t["available"]), t["baseline"]
        th.tools, th.updates = t["tools"], t["updates"]
    return hf


def restore_surface(nodes: list[int], empty: list[int], violations: list[Problem],
                    events_of: Callable[[set[int]], dict[int, Event]], cp: Optional[Checkpoint] = None) -> SurfaceFold:
    """A SurfaceFold(keep_events=True) with these nodes; ``events_of(seqs)`` -> {seq: Event}.
    (The replacement history, ``replaced``/``replaced_by``, is not kept in checkpoints.)"""
    sf = SurfaceFold(keep_events=True, version=cp.version if cp is not None else 0)
    sf.nodes = list(nodes)
    sf.empty_assistant = set(empty)
    sf.violations = [msgspec.structs.replace(p) for p in violations]
    sf.events = events_of(set(sf.nodes)) if sf.nodes else {}
    if cp is not None:
        sf.step_mark = tuple(cp.step_mark) if cp.step_mark is not None else None  # type: ignore[assignment]
        if sf.version <= 2:
            sf.v2 = V2Head.from_state(cp.v2head)
        if sf.version < 2:
            sf.v0 = V0Chain.from_state(cp.v0chain)
        for seq, idxs in cp.offloaded:
            base = event_message(sf.events[seq]) if seq in sf.events else None
            if isinstance(base, dict):
                want, content, k = set(idxs), [], 0
                for b in base.get("content") or []:
                    if isinstance(b, dict) and b.get("type") == "image":
                        if k in want:
                            b = dict(b, offloaded=True)
                        k += 1
                    content.append(b)
                sf.projected[seq] = dict(base, content=content)
    return sf


def _offloaded(sf: SurfaceFold) -> list[tuple[int, list[int]]]:
    """(node seq, indexes of the images its projection marks offloaded) of nodes with a projection."""
    out: list[tuple[int, list[int]]] = []
    if not sf.projected:                         # the common case: no projection (one check per point)
        return out
    for seq in sf.nodes:
        m = sf.projected.get(seq)
        if m is None:
            continue
        imgs = [b for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "image"]
        out.append((seq, [k for k, b in enumerate(imgs) if b.get("offloaded") is True]))
    return out


def segments_from(reader: LogReader, pos: Optional[int], line0: Optional[int], text_offset: int) -> Iterator[Segment]:
    src = reader.source
    if pos is None:
        return src.forward()
    kw: dict[str, Optional[int]] = {"line0": line0}
    if src.kind == "zstd":
        kw["text_offset"] = text_offset
    return src.forward(pos, **kw)


def build_checkpoints(reader: LogReader, every: int = EVERY) -> Checkpoints:
    """One forward pass over the stored events: snapshots at segment starts every ``every`` bytes."""
    b = CheckpointBuilder(reader, every)
    for seg in reader.source.forward():
        if not b.segment(seg, lazy_segment(reader, seg)):        # packed deltas fold into nothing: not decoded
            break
    return b.cps


class CheckpointBuilder:
    """:func:`build_checkpoints` fed a segment at a time (the one background pass feeds it beside the
    outline and the surface index: :mod:`app.log.query.ahead`)."""

    def __init__(self, reader: LogReader, every: int = EVERY, checks: Optional[EventChecks] = None) -> None:
        """``checks``: load checks that the caller applies to the same events, in the same order, before
        :meth:`item` sees each (the one pass shares the outline's): this builder then only reads them."""
        from .attempts import AttemptTracker
        from ..index.integrity import EventChecks
        self.every = every
        self.version = version = reader.version or 0
        self.own_checks = checks is None
        # (a point keeps no replacement history: not recorded, it would grow with the log, issue 36)
        self.sf, self.hf = SurfaceFold(keep_events=True, version=version, keep_replaced=False), HeaderFold()
        self.checks = EventChecks() if checks is None else checks
        self.at = AttemptTracker(keep_text=False)
        self.turn_seq, self.disp_turn = -1, 0
        self.lo: Optional[int] = None
        self.hi: Optional[int] = None
        self.cps = Checkpoints()
        self.n_th = 0
        self.prev_tools: Optional[dict[str, Any]] = None
        self.prev_tl: Optional[list[Any]] = None
        self.last_at: Optional[int] = None
        self.n_chk = 0
        self.nxt = 0
        self.prev_len, self.dirty = 0, 0      # nodes before ``dirty`` are unchanged since the previous point
        self.n_viol = self.n_hist = 0
        self.prev_hseq: object = object()
        self.done = False                     # a gap or disorder: no checkpoint can stand for a prefix after it
        # where each point goes once final (the next one made), instead of being kept in ``cps`` (issue 36:
        # the one pass streams them to their cache file); ``cps`` then holds only the last point
        self.sink: Optional[Callable[[Checkpoint], None]] = None
        self.slim_at = 0                      # attempts before this one were slimmed (_slim_attempts)
        self.tools_key: tuple[bytes, Any] = (b"", None)     # (JSON, list) of the last header's tools (_share_tools)

    def segment(self, seg: Segment, items: Iterable[Lazy]) -> bool:
        """Fold segment ``seg`` (its events, packed rows as blocks: ``lazy_segment``); False: stop here."""
        if isinstance(seg.pos, int) and (self.last_at is None or seg.pos - self.last_at >= self.every) \
                and not seg.bad and seg.line0 is not None:
            self._point(seg)
        return all(self.item(it) for it in items)

    def _point(self, seg: Segment) -> None:
        sf, hf, checks, cps = self.sf, self.hf, self.checks, self.cps
        _prune_events(sf)
        keep = min(self.dirty, self.prev_len)
        node_set = set(sf.nodes)
        if cps.points:
            cps.points[-1].cited = None if self.lo is None or self.hi is None else (self.lo, self.hi)
            if self.sink is not None:          # (final now: handed on, not held)
                self.sink(cps.points.pop())
        self.lo = self.hi = None
        self.at.prune()
        self._slim_attempts()
        p = Checkpoint(
            seq=self.nxt, pos=seg.pos, line0=seg.line0, text_offset=seg.text_offset, keep=keep,
            add=sf.nodes[keep:], empty=sorted(x for x in sf.empty_assistant if x in node_set),
            violations=[msgspec.structs.replace(q) for q in sf.violations[self.n_viol:]],
            header=None if hf.seq == self.prev_hseq else {"header": hf.header, "seq": hf.seq, "reason": hf.reason},
            history=hf.history[self.n_hist:], turn_seq=self.turn_seq,
            dispatches=self.disp_turn if self.turn_seq >= 0 else 0, cited=None, turns=[],
            checks=[(msgspec.structs.replace(q), any(q is r for r in checks.refusing))
                    for q in checks.problems[self.n_chk:]])
        cps.points.append(p)
        p.version = self.version
        # image/offload applies in every version (spec-versions §3.5 correction)
        p.step_mark, p.offloaded = sf.step_mark, _offloaded(sf)
        p.v2head = sf.v2.state() if sf.v2 is not None else None
        p.v0chain = sf.v0.state(node_set) if sf.v0 is not None else None
        # (every version: today's dsh derives toolHistory on the v4 shape, v0-v3 after migrating)
        th = hf.tool_history
        tools = _tool_fields(th)
        p.tool_headers = []
        for seq, tl in list(th.headers.items())[self.n_th:]:
            p.tool_headers.append((seq, None if tl == self.prev_tl else copy.deepcopy(tl)))
            self.prev_tl = tl
        p.tools = None if tools == self.prev_tools else tools
        self.n_th, self.prev_tools = len(th.headers), tools
        self.n_chk = len(checks.problems)
        self.prev_len = self.dirty = len(sf.nodes)
        self.n_viol, self.n_hist, self.prev_hseq = len(sf.violations), len(hf.history), hf.seq
        self.last_at = seg.pos

    def item(self, it: Lazy) -> bool:
        """Fold one event (or packed block); False when it breaks the seq order (the builder is done)."""
        if self.done:
            return False
        if isinstance(it, PackedBlock):
            if it.n is None or it.seq0 != self.nxt:
                self.done = True
                return False
            self.at.apply_deltas(it.turn, it.step, it.seq0, it.n)
            self.nxt = it.seq0 + it.n
            return True
        if it.seq != self.nxt:                # not contiguous: no checkpoint can stand for a prefix after this
            self.done = True
            return False
        if it.type == "turn/start":
            self.turn_seq, self.disp_turn = it.seq, self.at.count
            if self.cps.points:
                self.cps.points[-1].turns.append((self.turn_seq, self.disp_turn))
        self.at.apply(it)
        if it.source_event_seqs:
            a, b = _cited_span(it.source_event_seqs)
            self.lo, self.hi = (a, b) if self.lo is None or self.hi is None else (min(self.lo, a), max(self.hi, b))
        sf = self.sf
        sf.apply(it)
        if isinstance(it.surface_op, dict) and it.seq in sf.events:     # a replacement took its place
            self.dirty = min(self.dirty, sf.nodes.index(it.seq))
            if len(sf.events) > 2 * len(sf.nodes) + EVENTS_SLACK:       # (issue 36: the shadowed nodes' events
                _prune_events(sf)                                         #  go now, not at the next point)
        self.hf.apply(it)
        if it.type == "request/header":
            self._share_tools(it.seq)
        if self.own_checks:
            self.checks.apply(it)
        self.nxt = it.seq + 1
        return True

    def _slim_attempts(self) -> None:
        """The failed attempts the tracker keeps (a later message may still cite one) keep what the count of
        dispatches reads: their span, step, message and finish kind; not their failure text nor usage (issue 36:
        they are kept to the end of the log)."""
        at = self.at
        atts = at.attempts
        opened = {id(a) for a in at.open_attempts.values()}
        k = min(self.slim_at, len(atts))
        while k < len(atts) and id(atts[k]) not in opened:
            a = atts[k]
            f = a.finish
            kind = f.get("kind") if f is not None and len(f) > 1 else None
            if type(kind) is str and kind in _KINDS:
                a.finish = _KINDS[kind]          # (one shared, never changed: the tracker only reads it)
            a.usage = a.retry_number = None
            a.text = _NO_TEXT
            k += 1
        self.slim_at = k

    def _share_tools(self, seq: int) -> None:
        """The header fold keeps every request/header's tools (a later tool update may name any header): a
        list written the same as the one before is kept as that one (issue 36: a long log repeats its header's
        tools thousands of times; the same JSON, so the same fold)."""
        headers = self.hf.tool_history.headers
        tl = headers.get(seq)
        if tl is None:
            return
        try:
            key = msgspec.json.encode(tl)
        except (TypeError, ValueError, msgspec.EncodeError):
            return
        if key == self.tools_key[0] and tl == self.tools_key[1]:      # (== too: JSON writes inf as null)
            headers[seq] = self.tools_key[1]
        else:
            self.tools_key = (key, tl)


def _prune_events(sf: SurfaceFold) -> None:
    """Only the nodes' events are looked up again: the others go (kept, they would make the builder's memory
    grow with the log between two points; dropped after each replacement, it stays within twice the nodes')."""
    ev = sf.events
    sf.events = {k: ev[k] for k in sf.nodes if k in ev}


def _cited_span(seqs: Iterable[Any]) -> tuple[int, int]:
    """(lowest, highest) of a ``sourceEventSeqs`` list (anything not an int: the widest span)."""
    try:
        lo, hi = min(seqs), max(seqs)
    except (TypeError, ValueError):
        return -1, 1 << 62
    if type(lo) is int and type(hi) is int:
        return lo, hi
    return -1, 1 << 62                  # (strings compare among themselves: no seqs either)


def events_by_seq(reader: LogReader, seqs: set[int], check: Optional[Callable[[], None]] = None) -> dict[int, Event]:
    """{seq: Event} for ``seqs``, decoding only the index segments that hold them."""
    idx = reader.index or reader.build_index()
    by_seg: dict[int, set[int]] = {}
    for s in seqs:
        i = idx.locate(s)
        if i is not None:
            by_seg.setdefault(i, set()).add(s)
    out: dict[int, Event] = {}
    for i in sorted(by_seg):
        if check is not None:
            check()
        want = by_seg[i]
        end = idx.seg_end[i]
        for seg in segments_from(reader, idx.seg_pos[i], idx.line0[i] if idx.line0[i] >= 0 else None, -1):
            for it in lazy_segment(reader, seg):       # (surface events are never packed)
                if isinstance(it, Event) and it.seq in want:
                    out[it.seq] = it
            if seg.end >= end:
                break
    return out


def events_from(reader: LogReader, cp: Optional[Checkpoint], check: Optional[Callable[[], None]] = None,
                lazy: bool = False) -> Iterator[Lazy]:
    """Stored events from the checkpoint's seq on (from seq 0 without one); ``check()`` runs
    before each segment (it raises to cancel).  ``lazy``: packed rows as :class:`PackedBlock`."""
    first = cp.seq if cp is not None else 0
    segs = segments_from(reader, cp.pos if cp is not None else None, cp.line0 if cp else None,
                          cp.text_offset if cp else -1)
    for seg in segs:
        if check is not None:
            check()
        for it in (lazy_segment(reader, seg) if lazy else reader.decode_segment(seg)):
            if isinstance(it, PackedBlock):
                if it.n is None or it.seq0 + it.n > first:
                    yield it
            elif is_event(it) and it.seq >= first:
                yield it


def folds_at(reader: LogReader, cps: Checkpoints, b: int, check: Optional[Callable[[], None]] = None,
             checks: Optional[EventChecks] = None) -> tuple[SurfaceFold, HeaderFold]:
    """(SurfaceFold, HeaderFold) of the stored events with seq < ``b``: nearest checkpoint + replay.
    ``checks`` (an empty :class:`~app.log.index.integrity.EventChecks`) ends as if it had seen them all."""
    i = cps.nearest_index(b)
    cp = cps.points[i] if i >= 0 else None
    if cp is not None:
        nodes, empty, viol, header, hist, chk = cps.state(i)
        sf = restore_surface(nodes, empty, viol, lambda seqs: events_by_seq(reader, seqs, check), cp)
        hf = restore_header(header, hist, *cps.tool_state(i))
        if checks is not None:
            for q, refusing in chk:
                prob = msgspec.structs.replace(q)
                checks.problems.append(prob)
                if refusing:
                    checks.refusing.append(prob)
    else:
        sf, hf = SurfaceFold(version=reader.version or 0), HeaderFold()
    for ev in events_from(reader, cp, check, lazy=True):
        if isinstance(ev, PackedBlock):
            if ev.seq0 >= b:
                break
            continue
        if ev.seq >= b:
            break
        sf.apply(ev)
        hf.apply(ev)
        if checks is not None:
            checks.apply(ev)
    return sf, hf


def turn_start_before(idx: SeqIndex, seq: int) -> int:
    """Seq of the last turn/start at or before ``seq`` (0 if none), from the index marks."""
    if idx.monotonic and idx.contiguous_through >= idx.last:
        # (a contiguous log: its marks are in seq order) the last mark at or before seq, then back to a turn/start
        from ..index.reader import MARK_CODES
        ms, mc, code = idx.mark_seq, idx.mark_code, MARK_CODES["turn/start"]
        i = bisect.bisect_right(ms, seq)
        while i > 0:
            i -= 1
            if mc[i] == code:
                return ms[i]
        return 0
    best = 0
    for s, t in idx.marks(-1, seq):
        if t == "turn/start" and s <= seq:
            best = s
    return best


def request_at(reader: LogReader, at_seq: int, cps: Checkpoints, check: Optional[Callable[[], None]] = None,
               checks: Optional[EventChecks] = None, as_written: bool = False) -> dict[str, object]:
    """:func:`app.log.query.analysis.request_at` from checkpoints: the attempt is found from its turn's
    start, the folds from the nearest checkpoint; neither reads the log from seq 0."""
    from ..query.analysis import dispatch_boundary
    from .v2heads import derive_as
    idx = reader.index or reader.build_index()
    ts = turn_start_before(idx, at_seq)
    i = idx.locate(ts) if idx.contiguous_through >= ts else None
    start: Optional[Checkpoint]
    if i is not None:                  # read from the index segment holding the turn's start
        start = Checkpoint(seq=ts, pos=idx.seg_pos[i], line0=idx.line0[i] if idx.line0[i] >= 0 else None,
                           text_offset=-1, keep=0, add=[], empty=[], violations=[], header=None, history=[],
                           turn_seq=-1, dispatches=-1, cited=None, turns=[])
    else:
        start = cps.nearest(ts)
    b, attempt = dispatch_boundary(reader, at_seq, events=(e for e in events_from(reader, start, check)
                                                            if isinstance(e, Event) and e.seq >= ts), checks=checks)
    sf, hf = folds_at(reader, cps, b, check, checks)
    derive_as(sf, reader, as_written)
    from ..query.analysis import require_header
    from .folds import fold_request
    require_header(hf, at_seq, b)
    sid = reader.header.id if reader.header else ""
    return {"atSeq": at_seq, "boundary": b, "headerSeq": hf.seq, "attempt": attempt,
            "request": fold_request(sf, hf, sid)}
