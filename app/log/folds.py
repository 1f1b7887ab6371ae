"""Folds over a log prefix (spec §3): surface, model messages, request header, exact request.

Each fold is incremental (``apply`` one event at a time) so that folding a prefix and
folding incrementally are the same computation; ``fold_*`` helpers reduce a list.
"""
from __future__ import annotations

import copy
from typing import Optional
from collections.abc import Iterable

from .model import SURFACE_TYPES, Event, Problem, event_message


class SurfaceFold:
    """``foldSurface``: the ordered model-surface nodes (seqs) and who shadowed whom."""

    def __init__(self, keep_events: bool = True):
        self.nodes: list[int] = []
        self.keep_events = keep_events
        self.events: dict[int, Event] = {}      # seq -> surface event (when keep_events)
        self.replaced_by: dict[int, int] = {}   # shadowed seq -> replacing seq
        self.replaced: dict[int, list] = {}     # replacing seq -> seqs it shadowed
        self.violations: list[Problem] = []
        self._empty_assistant: set[int] = set()

    def apply(self, ev: Event) -> None:
        if ev.type not in SURFACE_TYPES:
            if ev.surface_op is not None or (ev.source_event_seqs is not None and ev.known):
                self._violate(ev, f"{ev.type} carries surface keys")
            return
        op = ev.surface_op
        if op == "append":
            self.nodes.append(ev.seq)
        elif isinstance(op, dict) and op.get("op") == "replace":
            start, end = op.get("start"), op.get("end")
            try:
                i, j = self.nodes.index(start), self.nodes.index(end)
            except ValueError:
                self._violate(ev, f"replace {{start:{start}, end:{end}}} names a seq that is not a surface node")
                return
            if i > j:
                self._violate(ev, f"replace start {start} comes after end {end}")
                return
            slice_ = self.nodes[i:j + 1]
            cited = set(ev.source_event_seqs or ())
            missing = [s for s in slice_ if s not in cited]
            if missing:
                self._violate(ev, f"replace does not cite shadowed nodes {missing}")
                return
            if ev.type == "tool/result" and self.keep_events:
                olds = [self.events.get(s) for s in slice_]
                if len(olds) != 1 or olds[0] is None or olds[0].type != "tool/result":
                    self._violate(ev, "a tool/result replacement must shadow exactly one tool/result")
                    return
            self.nodes[i:j + 1] = [ev.seq]
            for s in slice_:
                self.replaced_by[s] = ev.seq
            self.replaced[ev.seq] = slice_
        else:
            self._violate(ev, f"surface event with invalid surfaceOp {op!r}")
            return
        if self.keep_events:
            self.events[ev.seq] = ev
        if ev.type == "assistant/message":
            m = event_message(ev)
            if m is not None and not m.get("content"):
                self._empty_assistant.add(ev.seq)

    def _violate(self, ev: Event, msg: str) -> None:
        self.violations.append(Problem(code="fold-violation", message=msg, seq=ev.seq, line=ev.line,
                                       offset=ev.offset if ev.offset >= 0 else None))

    def message_seqs(self) -> list[int]:
        """Seqs of nodes that yield a model message (empty assistant messages excluded)."""
        return [s for s in self.nodes if s not in self._empty_assistant]

    def messages(self) -> list[dict]:
        if not self.keep_events:
            raise RuntimeError("SurfaceFold(keep_events=False) cannot derive messages")
        out = []
        for s in self.message_seqs():
            m = event_message(self.events[s])
            if m is not None:
                out.append(m)
        return out

    def copy(self) -> SurfaceFold:
        c = SurfaceFold(self.keep_events)
        c.nodes = list(self.nodes)
        c.events = dict(self.events)
        c.replaced_by = dict(self.replaced_by)
        c.replaced = {k: list(v) for k, v in self.replaced.items()}
        c.violations = list(self.violations)
        c._empty_assistant = set(self._empty_assistant)
        return c


def fold_surface(events: Iterable[Event], keep_events: bool = True) -> SurfaceFold:
    f = SurfaceFold(keep_events)
    for ev in events:
        f.apply(ev)
    return f


def derive_messages(events: Iterable[Event]) -> list[dict]:
    """``deriveMessages``: the model messages of a log prefix."""
    return fold_surface(events).messages()


# --------------------------------------------------------------------------- request header

def canonical_header(header: dict) -> dict:
    """Drop empty ``system``/``tools``, and ``adapterDefaults`` unless a marker is true."""
    h = dict(header or {})
    if h.get("system") in (None, "", []):
        h.pop("system", None)
    if h.get("tools") in (None, []):
        h.pop("tools", None)
    ad = h.get("adapterDefaults")
    if ad is not None and not (isinstance(ad, dict) and any(v is True for v in ad.values())):
        h.pop("adapterDefaults", None)
    return h


class HeaderFold:
    """``foldRequestHeader``: the canonical last ``request/header`` (last wins)."""

    def __init__(self):
        self.header: Optional[dict] = None
        self.seq: Optional[int] = None
        self.reason: Optional[str] = None
        self.history: list[tuple[int, str]] = []      # (seq, reason)

    def apply(self, ev: Event) -> None:
        if ev.type != "request/header" or not isinstance(ev.data, dict):
            return
        hdr = ev.data.get("header")
        if not isinstance(hdr, dict):
            return
        self.header = canonical_header(hdr)
        self.seq = ev.seq
        self.reason = ev.data.get("reason")
        self.history.append((ev.seq, self.reason))


def fold_request_header(events: Iterable[Event]) -> Optional[dict]:
    f = HeaderFold()
    for ev in events:
        f.apply(ev)
    return f.header


def header_equals(a: Optional[dict], b: Optional[dict]) -> bool:
    return canonical_header(a or {}) == canonical_header(b or {})


def build_request(header: Optional[dict], messages: list, session_id: str) -> dict:
    """``buildRequest``: ``{...config, messages, system?, tools?, sessionId}``."""
    h = header or {}
    req = dict(h.get("config") or {})
    req["messages"] = copy.deepcopy(messages)
    if "system" in h:
        req["system"] = h["system"]
    if "tools" in h:
        req["tools"] = h["tools"]
    req["sessionId"] = session_id
    return req


def exact_request(prefix: Iterable[Event], session_id: str) -> dict:
    """The request dispatched after ``prefix`` (= events[0..b-1], b the attempt's first chunk)."""
    sf = SurfaceFold()
    hf = HeaderFold()
    for ev in prefix:
        sf.apply(ev)
        hf.apply(ev)
    return build_request(hf.header, sf.messages(), session_id)
