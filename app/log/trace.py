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
from typing import Any, Optional, Protocol, TypedDict, Union
from collections.abc import Iterable

from .attempts import Attempt, AttemptTracker, embedded_stream
from .folds import SurfaceFold, is_surface_type
from .model import Event
from .payloads import JsonObj, obj
from .versions import replace_bounds

DEFAULT_REQUEST_CAP = 50


class EventSource(Protocol):
    """What :func:`trace_event` needs of a reader (a :class:`~app.log.reader.LogReader`)."""

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
    by_seq_type: dict[int, str] = {}                 # seq -> type (for chain summaries)
    for ev in events:
        by_seq_type[ev.seq] = ev.type
        if ev.seq == seq and target is None:
            target = ev
        if target is not None and ev.seq != seq and ev.source_event_seqs and seq in ev.source_event_seqs:
            derived.append(ev.seq)
        t = ev.type
        d = obj(ev.data)
        rec: Optional[_Compaction]
        if t == "compaction/start":
            cid = d.get("compactionId")
            rec = {"compactionId": cid, "startSeq": ev.seq, "summarySeq": None, "endSeq": None,
                   "turn": d.get("turn"), "replacementSeqs": []}
            open_compactions[cid] = rec
            last_compaction = rec
        elif t == "compaction/summary":
            rec = open_compactions.get(d.get("compactionId"))
            if rec is not None:
                rec["summarySeq"] = ev.seq
        elif t == "compaction/end":
            rec = open_compactions.pop(d.get("compactionId"), None)
            if rec is not None:
                rec["endSeq"] = ev.seq
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

    # surface status
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

    out: JsonObj = {
        "target": _summary(target),
        "surface": surface,
        "replacedBy": sf.replaced_by.get(seq),
        "replacementChain": chain,
        "replacedEventSeqs": list(sf.replaced.get(seq, [])),
        "sourceEventSeqs": list(target.source_event_seqs or []),
        "derivedEventSeqs": derived,
    }
    # attempt
    attempt = None
    if target.type == "assistant/chunk":
        attempt = at.attempt_of(seq)
    elif target.type == "assistant/message":
        attempt = next((a for a in at.attempts if a.message_seq == seq), None)
    elif target.type == "assistant/attempt":
        attempt = at.attempt_of(seq)
    elif target.type in ("llm/retry", "llm/retry-started"):
        attempt = next((a for a in at.attempts if seq in (a.retry_seq, a.retry_started_seq)), None)
    out["attempt"] = _attempt_json(attempt) if attempt is not None else None
    # compaction: through which the target was shadowed, or which the target performed / belongs to
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
    out["compaction"] = comp
    out["requests"] = {"boundaries": boundaries, "count": n_boundaries, "capped": n_boundaries > len(boundaries),
                       "dispatches": n_attempts}
    return out


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
