"""Replay: the session exactly as it stood at a seq (issue 30).

Pure (no Qt, no store).  :func:`as_of` answers "what did the session look like right after
row ``seq`` was written": the model's view (the derived messages, each linked to the surface
node it came from), the request-header fold, the title, the todo list, the plan / sandbox /
approval / permission modes, the open turn and step, the tool calls still pending, the
subagent children started so far, and where the last model dispatch of the open step was.

It never reads the log from seq 0 once the background pass is done: the surface and header
folds come from the nearest fold checkpoint (:mod:`app.log.fold.checkpoints`: the same
``restore_surface`` / ``restore_header`` that ``folds_at`` uses), the rest from a
:class:`SideIndex` (a small fold snapshotted at the same checkpoints), then the events from the
checkpoint through ``seq`` are replayed into both.  Memory is that of the folds at ``seq``
(the surface nodes' events and a few small dicts), never of the log.

Surface statuses *as of* ``seq`` come from the whole-log surface index
(:mod:`app.log.fold.surface`), trimmed to the prefix: a replacement written after ``seq`` has
not happened yet (:func:`status_as_of`; the rules themselves are :func:`~app.log.fold.surface.row_surface`'s).
"""
from __future__ import annotations

import copy
import re
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Callable, Iterator

from .attempts import AttemptTracker, embedded_stream
from .checkpoints import Checkpoint, Checkpoints, restore_header, restore_surface
from .folds import HeaderFold, SurfaceFold, request_from
from .v2heads import derive_as
from .repair import RepairTracker
from .surface import compaction_ref, row_surface
from ..format.lazyrows import PackedBlock, lazy_row
from ..format.model import PACKED_TAGS, SURFACE_TYPES, Event, is_event
from ..format.payloads import JsonObj, obj

if TYPE_CHECKING:
    from ..index.reader import LogReader
    from .surface import SurfaceIndex

MODE_EVENTS = {"plan/mode": ("plan", "active"), "sandbox/mode": ("sandbox", "mode"),
               "approval/policy": ("approval", "policy"), "permission/preset": ("permission", "preset")}
SUBAGENT_TOOLS = ("subagent", "subagent_fork", "task", "agent")
_SURFACE_NEEDLE = b'"surfaceOp"'       # every surface node's row holds it (spec §3: a node is an append or a replace)


class AsOfError(ValueError):
    """A seq the log cannot answer for (negative, past the end)."""


class SideFold:
    """Everything :func:`as_of` reports that the surface and header folds do not hold; small and
    bounded (the pending calls of the open turn, the children started, the last title and todos)."""

    def __init__(self, version: int = 0) -> None:
        self.rep = RepairTracker(version)          # open turn/step and pending tool calls (dsh's own rules)
        self.title: Any = None
        self.title_seq: Optional[int] = None
        self.todos: Any = None
        self.todos_seq: Optional[int] = None
        self.modes: dict[str, Any] = {}
        self.turn: Any = None                      # the last turn started (open or not)
        self.step_seq: Optional[int] = None        # seq of the open step's step/start
        self.steps_seen = False                    # the open turn has step/start rows
        self.dispatch: Optional[int] = None        # a seq of the last attempt of the open step (chunk or settlement)
        self.attempt_first: Optional[int] = None   # that attempt's dispatch boundary (its first chunk / settlement)
        self.attempts = AttemptTracker(keep_text=False)   # (dsh's attempt grouping; afresh at each turn start)
        # (a tuple: the snapshots of a SideIndex share it instead of copying it; entries are never changed)
        self.children: tuple[dict[str, Any], ...] = ()
        self.last_seq = -1
        self.time: Any = None

    def apply(self, ev: Event) -> bool:
        """Fold one event in; True when it begins a model attempt (a dispatch boundary)."""
        self.last_seq = ev.seq
        self.time = ev.time
        t = ev.type
        self.rep.apply(ev)
        if t == "turn/start":                      # a turn start closes every attempt: start afresh
            self.attempts = AttemptTracker(keep_text=False)
        at = self.attempts
        n0 = at.count
        at.apply(ev)
        began = at.count > n0 and at.attempts[-1].first_seq == ev.seq
        d = obj(ev.data)
        if t == "turn/start":
            self.turn = d.get("turn")
            self.step_seq, self.steps_seen, self.dispatch, self.attempt_first = None, False, None, None
        elif t == "turn/end":
            self.step_seq, self.dispatch, self.attempt_first = None, None, None
        elif t == "step/start":
            self.step_seq, self.steps_seen, self.dispatch, self.attempt_first = ev.seq, True, None, None
        elif t == "step/end":
            self.step_seq, self.dispatch, self.attempt_first = None, None, None
        elif t == "assistant/chunk" or embedded_stream(ev) is not None:
            self.dispatch = ev.seq
            if began:
                self.attempt_first = ev.seq
        elif t == "session/title":
            self.title, self.title_seq = d.get("title", self.title), ev.seq
        elif t == "todo/write":
            self.todos, self.todos_seq = d.get("todos"), ev.seq
        elif t in MODE_EVENTS:
            key, field = MODE_EVENTS[t]
            self.modes[key] = d.get(field)
        elif t == "tool/call" and isinstance(d.get("name"), str) and d["name"] in SUBAGENT_TOOLS:
            args = d.get("arguments")
            self.children += ({"seq": ev.seq, "callId": d.get("callId"), "tool": d["name"],
                               "arguments": args if isinstance(args, str) else None},)
        elif t == "subagent/catalog":
            self.children += ({"seq": ev.seq, "childId": d.get("childId"), "mode": d.get("mode"),
                               "label": d.get("label")},)
        return began

    def block(self, b: PackedBlock) -> bool:
        """Packed chunk deltas: part of an attempt of the open step; True when they begin one."""
        if b.n is None:                 # read for its seq0 only (an attempt is open: part of it)
            self.dispatch = self.last_seq = b.seq0
            return False
        at = self.attempts
        n0 = at.count
        n = b.n
        at.apply_deltas(b.turn, b.step, b.seq0, n)
        began = at.count > n0
        self.dispatch = b.seq0
        if began:
            self.attempt_first = b.seq0
        self.last_seq = b.seq0 + n - 1
        return began

    def copy(self) -> SideFold:
        """A copy to go on folding: what later events change is copied (the open turn's trackers, the
        modes); what they only replace (title, todos) or extend (children, a tuple) is shared."""
        c = copy.copy(self)
        c.rep = copy.deepcopy(self.rep)
        c.attempts = copy.deepcopy(self.attempts)
        c.modes = dict(self.modes)
        return c

    @property
    def open_step(self) -> bool:
        """A step is open (or, in a log without step rows, the turn is)."""
        if self.rep.open_turn is None:
            return False
        return self.step_seq is not None or not self.steps_seen


class SideIndex:
    """:class:`SideFold` snapshots at the fold checkpoints (the state before each point's seq),
    filled on demand from the nearest one already known; :meth:`fill` does the whole log."""

    def __init__(self, reader: LogReader, cps: Checkpoints) -> None:
        self.reader, self.cps = reader, cps
        self.snaps: dict[int, SideFold] = {}
        self.node_cache: dict[int, Event] = {}     # the last position's surface node events (see node_events)

    def node_events(self, seqs: set[int], check: Optional[Callable[[], None]] = None) -> dict[int, Event]:
        """{seq: Event} of surface nodes; those of the previous call are reused (nearby positions share
        most nodes) and only this call's are kept: memory stays that of one position's surface."""
        cache = self.node_cache
        missing = {s for s in seqs if s not in cache}
        if missing:
            cache.update(surface_events(self.reader, missing, check))
        out = {s: cache[s] for s in seqs if s in cache}
        self.node_cache = dict(out)
        return out

    def at(self, i: int, check: Optional[Callable[[], None]] = None) -> SideFold:
        """A copy of the side fold of the events before point ``i``'s seq (``i`` = -1: an empty fold)."""
        if i < 0:
            return SideFold(self.reader.version or 0)
        if i not in self.snaps:
            known = [j for j in self.snaps if j < i]
            j = max(known) if known else -1
            side = self.snaps[j].copy() if j >= 0 else SideFold(self.reader.version or 0)
            pts = self.cps.points
            k = j + 1
            start = pts[j] if j >= 0 else None
            for it in _replay_items(self.reader, start, side, check, SIDE_TYPES):
                first = it.seq0 if isinstance(it, PackedBlock) else it.seq
                while k <= i and first >= pts[k].seq:
                    self.snaps[k] = side.copy()
                    k += 1
                if k > i:
                    break
                if isinstance(it, PackedBlock):
                    side.block(it)
                else:
                    side.apply(it)
            while k <= i:                      # (the log ends before the later points)
                self.snaps[k] = side.copy()
                k += 1
        return self.snaps[i].copy()

    def fill(self, check: Optional[Callable[[], None]] = None) -> None:
        self.at(len(self.cps.points) - 1, check)


def last_seq(reader: LogReader) -> int:
    """The last stored seq of the log (-1: no events)."""
    idx = reader.index
    if idx is not None:
        return int(idx.last)
    return int(reader.tail_state().last_seq)


def check_seq(reader: LogReader, seq: object) -> int:
    """``seq`` as a seq of this log, or :class:`AsOfError` with one clear line."""
    if isinstance(seq, bool) or not isinstance(seq, int):
        try:
            seq = int(str(seq).strip())
        except ValueError:
            raise AsOfError(f"a seq must be a whole number, not {str(seq)[:40]!r}") from None
    last = last_seq(reader)
    if seq < 0:
        raise AsOfError(f"seq {seq} is negative (the log's seqs are 0..{last})")
    if seq > last:
        raise AsOfError(f"seq {seq} is past the end of the log (last seq {last})" if last >= 0
                        else f"seq {seq}: the log has no events")
    return seq


def surface_events(reader: LogReader, seqs: set[int], check: Optional[Callable[[], None]] = None) -> dict[int, Event]:
    """{seq: Event} for surface node ``seqs`` (:func:`~app.log.fold.checkpoints.events_by_seq`, but only
    the rows whose bytes can hold a surface event are decoded: each row decodes on its own, so
    skipping the others is exact, and a packed chunk row costs a byte search instead of a check)."""
    idx = reader.index or reader.build_index()
    by_seg: dict[int, set[int]] = {}
    for s in seqs:
        i = idx.locate(s)
        if i is not None:
            by_seg.setdefault(i, set()).add(s)
    out: dict[int, Event] = {}
    codec = reader.codec
    for i in sorted(by_seg):
        if check is not None:
            check()
        want, end = by_seg[i], idx.seg_end[i]
        for seg in _forward(reader, idx.seg_pos[i], idx.line0[i] if idx.line0[i] >= 0 else None):
            if not seg.bad:
                for pos, off, line, raw in _needle_rows(seg, _SURFACE_NEEDLE):
                    got, _ = codec.decode_row(raw, pos=pos, offset=off, line=line)
                    for ev in got:
                        if is_event(ev) and ev.seq in want:
                            out[ev.seq] = ev
            if seg.end >= end:
                break
    return out


def row_time(reader: LogReader, seq: int, default: Any = None) -> Any:
    """The ``time`` of the stored row of event ``seq`` (a row the replay did not decode), found in the
    index segment holding it by its ``"seq":N,`` bytes; ``default`` when no row names it so (a packed
    chunk, an envelope-free v2+ row)."""
    idx = reader.index
    if idx is None:
        return default
    i = idx.locate(seq)
    if i is None:
        return default
    for seg in _forward(reader, idx.seg_pos[i], idx.line0[i] if idx.line0[i] >= 0 else None):
        if not seg.bad:
            for pos, off, line, raw in _needle_rows(seg, b'"seq":%d,' % seq):
                for ev in reader.codec.decode_row(raw, pos=pos, offset=off, line=line)[0]:
                    if is_event(ev) and ev.seq == seq:
                        return ev.time
        if seg.end >= idx.seg_end[i]:
            break
    return default


def _forward(reader: LogReader, pos: Optional[int], line0: Optional[int], text_offset: int = -1) -> Iterator[Any]:
    """The source's segments from ``pos`` (None: the first), as the checkpoints read them."""
    src = reader.source
    if pos is None or src.kind not in ("jsonl", "zstd"):      # (a SQLite store's rows carry no lines)
        return src.forward() if pos is None else src.forward(pos)
    kw: dict[str, Optional[int]] = {"line0": line0}
    if src.kind == "zstd":
        kw["text_offset"] = text_offset
    return src.forward(pos, **kw)


_CHUNK_ROW = b'{"type":"assistant/chunk"'
_PACKED_PREFIXES = tuple(b'{"type":"' + t.encode() + b'"' for t in PACKED_TAGS)
_FINISH = b'"finish"'
_KEY_RE = re.compile(rb'"data":\{"turn":(-?\d{1,15}),"step":(-?\d{1,15})[,}]')


def _open_key(raw: bytes) -> Optional[tuple[int, int]]:
    """(turn, step) of a chunk or packed row, read from its bytes (None: not in the writer's order)."""
    m = _KEY_RE.search(raw, 0, 256)
    return (int(m.group(1)), int(m.group(2))) if m is not None else None


# the event types the side fold reads (:meth:`SideFold.apply`, its repair and attempt trackers): a pass
# that feeds only the side fold (:class:`SideIndex`) decodes no other row whose type it can read first
SIDE_TYPES = frozenset(t.encode() for t in (
    "turn/start", "turn/end", "step/start", "step/end", "assistant/chunk", "assistant/message", "assistant/attempt",
    "tool/call", "tool/result", "llm/retry", "llm/retry-started", "session/title", "todo/write", "subagent/catalog",
    *MODE_EVENTS))
# ... and what all three folds of :func:`replay` read: the surface types (v3 system/message and v4
# developer/message included), the step marks and image offloads (v4 projections), request headers.
# A row of any other type changes none of them (at most a fold violation, which as_of does not report).
# A v0 ``steering/message`` is a user message (the codec converts it); the chain's compaction groups
# (app.log.fold.v0chain) read the compaction brackets and the end-seeds.
FOLD_TYPES = SIDE_TYPES | frozenset(t.encode() for t in (
    *SURFACE_TYPES, "system/message", "developer/message", "image/offload", "request/header", "steering/message",
    "compaction/start", "compaction/end", "compact/start", "compact/end", "session/end-seed"))


def _replay_items(reader: LogReader, cp: Optional[Checkpoint], side: SideFold,
                  check: Optional[Callable[[], None]], types: Optional[frozenset[bytes]] = None) -> Iterator[Any]:
    """The stored events from the checkpoint on (:func:`~app.log.fold.checkpoints.events_from` with
    ``lazy=True``), except that the rows of a model attempt already open (their turn and step, as the
    writer puts them first in ``data``, name one) are not decoded: a packed delta row is read for its
    ``seq0`` only, and a plain chunk row without a ``"finish"`` is skipped (such a row neither begins
    nor ends an attempt, and no other fold reads it).
    ``types``: only rows of these types are decoded (a row whose ``type`` does not come first, as the
    writer puts it, is decoded anyway); packed rows are always read."""
    first = cp.seq if cp is not None else 0
    segs = _forward(reader, cp.pos if cp is not None else None, cp.line0 if cp else None,
                    cp.text_offset if cp else -1)
    streaming = side.attempts.open_attempts        # (the tracker's open attempts by (turn, step): a live view)
    for seg in segs:
        if check is not None:
            check()
        if seg.bad:
            continue
        for pos, off, line, raw, complete in seg.split_rows():
            packed = raw.startswith(_PACKED_PREFIXES)
            in_open = bool(streaming) and (packed or raw.startswith(_CHUNK_ROW)) and _open_key(raw) in streaming
            if in_open and not packed and _FINISH not in raw:
                continue                     # a chunk of the attempt already open, not its finish
            if types is not None and not packed and raw.startswith(b'{"type":"') \
                    and raw[9:raw.find(b'"', 9)] not in types:
                continue
            for it in lazy_row(reader, pos, off, line, raw, complete, None, in_open):
                if isinstance(it, PackedBlock):
                    if it.n is None or it.seq0 + it.n > first:
                        yield it
                elif it.seq >= first:
                    yield it
            streaming = side.attempts.open_attempts


def _needle_rows(seg: Any, needle: bytes) -> Iterator[tuple[Any, int, Optional[int], bytes]]:
    """(row pos, text offset, line, raw) of the complete rows of ``seg`` holding ``needle``: the needle is
    searched in the segment's bytes, so rows without it cost nothing (``Segment.split_rows``, filtered)."""
    if seg.rows is not None:
        for pos, off, line, raw, complete in seg.split_rows():
            if complete and needle in raw:
                yield pos, off, line, raw
        return
    data: bytes = seg.data
    at = data.find(needle)
    line, counted = seg.line0, 0
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        nl = data.find(b"\n", at)
        if nl < 0:
            return                                   # (a torn last row: not complete)
        if line is not None:
            line += data.count(b"\n", counted, start)
            counted = start
        yield seg.row_pos(start), seg.text_pos(start), line, data[start:nl]
        at = data.find(needle, nl)


def _folds(reader: LogReader, cps: Optional[Checkpoints], side_index: Optional[SideIndex], seq: int,
           check: Optional[Callable[[], None]]) -> tuple[int, SurfaceFold, HeaderFold, SideFold, Iterator[Any]]:
    """(first seq replayed, the three folds at the checkpoint nearest ``seq + 1``, the events after it)."""
    version = reader.version or 0
    i = cps.nearest_index(seq + 1) if cps is not None else -1
    if cps is None or i < 0:
        side = SideFold(version)
        return 0, SurfaceFold(version=version), HeaderFold(), side, _replay_items(reader, None, side, check, FOLD_TYPES)
    si = side_index or SideIndex(reader, cps)
    cp: Checkpoint = cps.points[i]
    nodes, empty, viol, header, hist, _chk = cps.state(i)
    sf = restore_surface(nodes, empty, viol, lambda seqs: si.node_events(seqs, check), cp)
    # (v3 too: today's dsh derives a v3 log on the v4 shape, toolHistory included; folds_at does the same)
    hf = restore_header(header, hist, *cps.tool_state(i))
    side = si.at(i, check)
    return cp.seq, sf, hf, side, _replay_items(reader, cp, side, check, FOLD_TYPES)


# (boundary, surface, header fold (None: no request/header before the boundary), its header, its tool history)
RequestFolds = tuple[int, SurfaceFold, Optional[int], Optional[JsonObj], Optional[JsonObj]]


def _request_folds(sf: SurfaceFold, hf: HeaderFold, b: int) -> RequestFolds:
    """The folds a request at boundary ``b`` is built from; the tool history as the normal request face
    takes it (:func:`~app.log.fold.folds.request_from`: v4, and v0-v3 in today's dsh's shape; the
    writer-era shape drops it in :func:`_request`)."""
    return b, sf.copy(), hf.seq, hf.header, hf.tool_history.snapshot()


def _request(reader: LogReader, req: RequestFolds, as_written: bool) -> tuple[Optional[JsonObj], Optional[str]]:
    """(the request dsh built at the boundary, None) as the normal face builds it
    (:func:`app.log.query.analysis.request_at`: the same normalization, ``as_written`` the same), or
    (None, why) where dsh built none: no ``request/header`` before the boundary (the normal face's
    :class:`~app.log.query.analysis.RequestError` line of ``request --at B``, B the boundary: every seq of
    the attempt names the same boundary, the line names the one seq that is always the attempt's)."""
    from ..query.analysis import RequestError, require_header
    b, sf, header_seq, header, tools = req
    probe = HeaderFold()
    probe.seq = header_seq
    try:
        require_header(probe, b, b)
    except RequestError as e:
        return None, str(e)
    derive_as(sf, reader, as_written)
    sid = reader.header.id if reader.header else ""
    return request_from(sf, header, sid, tools), None


def replay(reader: LogReader, seq: int, cps: Optional[Checkpoints], side_index: Optional[SideIndex],
            check: Optional[Callable[[], None]]) -> tuple[SurfaceFold, HeaderFold, SideFold, Optional[RequestFolds]]:
    """(surface fold, header fold, side fold) of the stored events with seq <= ``seq``, and the folds
    before the last dispatch boundary met on the way (None: none met)."""
    _first, sf, hf, side, events = _folds(reader, cps, side_index, seq, check)
    req: Optional[RequestFolds] = None
    for it in events:
        if isinstance(it, PackedBlock):
            if it.seq0 > seq:
                break
            if side.block(it):
                req = _request_folds(sf, hf, it.seq0)
            if it.n is not None and it.seq0 + it.n - 1 > seq:
                side.last_seq = seq
            continue
        if it.seq > seq:
            break
        if side.apply(it):               # (before the surface and header folds: the request excludes it)
            req = _request_folds(sf, hf, it.seq)
        sf.apply(it)
        hf.apply(it)
    return sf, hf, side, req


def _tool_names(header: Optional[JsonObj]) -> list[Any]:
    tools = (header or {}).get("tools")
    if not isinstance(tools, list):
        return []
    return [t.get("name") if isinstance(t, dict) else t for t in tools]


def as_of(reader: LogReader, seq: object, cps: Optional[Checkpoints] = None, side_index: Optional[SideIndex] = None,
          check: Optional[Callable[[], None]] = None, request: bool = True, as_written: bool = False) -> dict[str, Any]:
    """The session as it stood right after ``seq`` (see the module doc).  ``cps``: the log's fold
    checkpoints (None: folded from seq 0); ``request``: also the exact request at the last dispatch
    boundary of the open step (else only where it is: ``dispatchSeq``, ``requestBoundary``), or None
    with ``requestNote`` saying why where dsh built none there.  Messages and request are derived as
    the normal faces derive them: a v3 log in today's dsh's v4 shape unless ``as_written``."""
    n = check_seq(reader, seq)
    if cps is not None and side_index is None:
        side_index = SideIndex(reader, cps)
    sf, hf, side, req = replay(reader, n, cps, side_index, check)
    derive_as(sf, reader, as_written)
    linked = sf.linked()
    rep = side.rep
    open_step = side.open_step
    b = side.attempt_first if open_step else None
    step = rep.open_step[1] if rep.open_step is not None else None
    config = obj((hf.header or {}).get("config"))
    out: dict[str, Any] = {
        "seq": n, "time": side.time if side.last_seq == n else row_time(reader, n, side.time), "turn": side.turn, "openTurn": rep.open_turn is not None,
        "turnStartSeq": rep.turn_start_seq if rep.open_turn is not None else None,
        "step": step, "title": side.title, "titleSeq": side.title_seq,
        "todos": list(side.todos) if isinstance(side.todos, list) else [], "todosSeq": side.todos_seq,
        "modes": dict(side.modes),
        "header": {"seq": hf.seq, "reason": hf.reason, "provider": config.get("provider"),
                   "model": config.get("model"), "tools": _tool_names(hf.header)},
        "messages": [m for _s, m in linked],
        "messageSeqs": [s for s, _m in linked],
        "nodes": list(sf.nodes),
        "pendingToolCalls": [cid for cid in rep.pending],
        "pendingDetail": [{"callId": cid, "callSeq": cs} for cid, cs in rep.pending.items()],
        "children": copy.deepcopy(list(side.children)),
        "dispatchSeq": side.dispatch if open_step else None,
        "request": None, "requestNote": None, "requestBoundary": b,
    }
    if request and b is not None:
        if req is None or req[0] != b:          # the attempt began before the checkpoint: fold up to it
            rsf, rhf, _side, _r = replay(reader, b - 1, cps, side_index, check)
            req = _request_folds(rsf, rhf, b)
        out["request"], out["requestNote"] = _request(reader, req, as_written)
    return out


# --------------------------------------------------------------------------- surface statuses as of a seq

def status_as_of(index: SurfaceIndex, ev: Any, n: int) -> dict[Any, Any]:
    """:func:`~app.log.fold.surface.row_surface` of a row as it stood right after seq ``n``
    (the row itself at or before ``n``): a replacement written after ``n`` has not happened yet."""
    st = row_surface(index, ev)
    replaces = None
    if ev.is_replace and st.get("surface") == "shadowed" and st["since"] > n:
        replaces = (list(index.fold.replaced.get(ev.seq, [])), compaction_ref(index.replacing.get(ev.seq)))
    return trim_status(st, n, replaces)


def trim_status(st: dict[Any, Any], n: int,
                replaces: Optional[tuple[list[int], Optional[dict[Any, Any]]]] = None) -> dict[Any, Any]:
    """A row's surface status (``row_surface``'s shape, as of the whole log) as it stood right after seq
    ``n``: shadowed by a replacement after ``n`` -> current (``replaces``: what the row itself replaced,
    and its compaction); the chain and the compaction bracket cut at ``n``."""
    st = dict(st)
    if st.get("surface") == "shadowed":
        since = st.get("since")
        if isinstance(since, int) and since > n:          # replaced later: still in the model's view at n
            cur: dict[Any, Any] = {"surface": "current"}
            if replaces is not None and replaces[0]:
                cur["replaces"] = replaces[0]
                if replaces[1] is not None:
                    cur["compaction"] = _trim_comp(replaces[1], n)
            return cur
        st["chain"] = [s for s in st.get("chain", []) if s <= n]
    if "compaction" in st:
        st["compaction"] = _trim_comp(st["compaction"], n)
    return st


def _trim_comp(comp: Optional[dict[Any, Any]], n: int) -> Optional[dict[Any, Any]]:
    if comp is None:
        return None
    out = dict(comp)
    for k in ("summarySeq", "endSeq"):
        if isinstance(out.get(k), int) and out[k] > n:
            out[k] = None
    return out


def surface_as_of(index: SurfaceIndex, n: int) -> list[dict[str, Any]]:
    """``{"seq", "status"}`` of every surface row at or before ``n`` that the surface fold read (nodes,
    shadowed rows, refused rows), seq order, each status as it stood right after ``n``."""
    f = index.fold
    seqs = {s for s in f.nodes if s <= n}
    seqs.update(s for s in f.replaced_by if s <= n)
    seqs.update(s for s in f.replaced if s <= n)
    refused = {s for s in index.rejected if s <= n}
    out = []
    for s in sorted(seqs | refused):
        if s in refused:
            st = "log-only"
        else:
            by = f.replaced_by.get(s)
            st = "shadowed" if by is not None and by <= n else "current"
        out.append({"seq": s, "status": st})
    return out
