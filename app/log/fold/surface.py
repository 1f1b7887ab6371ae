"""Surface status of every row: is it in the model's view now, and if not, since when and why.

Pure (no Qt, no store).  One streaming pass over a log's events (:class:`SurfaceIndex`,
built on :class:`~app.log.fold.folds.SurfaceFold` so the replacement rules live in one place)
keeps only what a page needs to label its rows afterwards: which seqs were shadowed, by
which replacing seq, the replacement chain, the rejected surface events, and the
compaction brackets (with estimated context size before and after).  Its size is
proportional to the number of replacements and surface nodes, not to the log; who shadowed whom
is kept in flat columns (:class:`~app.log.fold.shadowmap.ShadowColumns`, 8 bytes per shadowed seq while seqs fit 32 bits),
which a saved index maps from its file instead of reading them in.

* :func:`row_surface` — the status of one row given an index:
  ``{"surface": "current" | "shadowed" | "log-only", ...}``; a shadowed row also carries
  ``since`` (the seq from which it is no longer in the model's view = the seq that
  replaced it), ``replacedBy``, ``chain`` (every later replacement of the replacement) and
  ``compaction`` (the bracket it was compacted by, when it was).
* :func:`page_surface` — ``{seq: status}`` for the events of a page.
* :func:`compaction_group` — the compact description of one compaction for a collapsed
  row: replaced item count, estimated tokens before/after, the summary as text.
* :func:`summary_text` — a ``compaction/summary.summary`` (a string or a list of content
  blocks) as plain text, never a Python list repr.

``index_for(reader)`` (in this module, duck-typed on the reader) caches one index per
reader and source revision; a live view may :meth:`SurfaceIndex.feed` appended rows
instead of rebuilding it.
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Callable, Iterable, Iterator

import msgspec

from .folds import SurfaceFold, is_surface_type
from ..format.model import Event, Problem, is_event
from ..format.payloads import content_text
from ..format.seqranges import seqs_text
from .shadowmap import Column, ShadowColumns

_FOLD_ALSO = frozenset({"step/start", "step/end", "image/offload"})   # non-surface events the v4 fold reads
TOKEN_CHARS = 4          # estimated tokens = stored characters of a message / 4 (a rough, stable rule)


def summary_text(summary: Any) -> str:
    """A compaction summary (string, content block, list of blocks) as plain text."""
    if summary is None:
        return ""
    if isinstance(summary, str):
        return summary
    if isinstance(summary, dict):
        text = summary.get("text")
        if isinstance(text, str):
            return text
        if "content" in summary:
            return summary_text(summary.get("content"))
        t = summary.get("type")
        return f"[{t}]" if t else ""
    if isinstance(summary, (list, tuple)):
        return content_text(list(summary), kinds=(), image=None, nested=False, other=summary_text, sep="\n\n")
    return str(summary)


def _estimate(ev: Event) -> int:
    n = len(ev.raw) if ev.raw else 0
    if not n:
        import msgspec
        try:
            n = len(msgspec.json.encode(ev.data))
        except (TypeError, msgspec.EncodeError):
            n = 0
    return max(1, n // TOKEN_CHARS)


class SurfaceIndex:
    """What the surface fold says about every seq, kept small (see the module doc)."""

    def __init__(self, version: int = 0):
        self.fold = SurfaceFold(keep_events=False, version=version, columns=ShadowColumns())
        self.last_seq = -1
        self.events = 0
        self.rejected: dict[int, str] = {}            # seq -> violation message (a surface event the fold refused)
        # bracket records, log order; a record's shadowed seqs are those of its replacements
        # (``groups``: their positions in the fold's columns, see :func:`shadowed_of`)
        self.compactions: list[dict[str, Any]] = []
        self._open: dict[Any, dict[str, Any]] = {}               # compactionId -> record
        self.replacing: dict[int, dict[str, Any]] = {}           # replacing seq -> the compaction record it belongs to
        self.replace_ops: dict[Any, Any] = {}         # replacing seq -> its surfaceOp (in a compaction)
        self._est: dict[int, int] = {}                # current node seq -> estimated tokens
        self.context_tokens = 0             # estimated tokens of the current surface

    # ------------------------------------------------------------------ feeding
    def feed(self, events: Iterable[Any]) -> SurfaceIndex:
        for ev in events:
            if is_event(ev):
                self.apply(ev)
        return self

    def apply(self, ev: Event) -> None:
        if ev.synthesized:
            return                          # closers are appends past the stored log; never fold them in
        self.events += 1
        if ev.seq > self.last_seq:
            self.last_seq = ev.seq
        t = ev.type
        if t.startswith("compaction/"):
            self._compaction(ev)
        surface = is_surface_type(ev)
        if not surface and ev.surface_op is None and ev.source_event_seqs is None and t not in _FOLD_ALSO:
            return
        fold = self.fold
        nv = len(fold.violations)
        nodes_before = len(fold.nodes)
        fold.apply(ev)
        if len(fold.violations) != nv:
            if surface:
                self.rejected[ev.seq] = fold.violations[-1].message
            return
        if not surface:
            return
        est = _estimate(ev)
        if ev.is_replace and ev.seq in fold.replaced:
            shadowed = fold.replaced[ev.seq]
            before = self.context_tokens
            removed = sum(self._est.pop(s, 0) for s in shadowed)
            self._est[ev.seq] = est
            self.context_tokens = before - removed + est
            rec = self._bracket_for_replacement()
            if rec is not None:
                rec["replacementSeqs"].append(ev.seq)
                rec["groups"].append(len(self._columns.by) - 1)      # (the replacement just recorded)
                if rec["tokensBefore"] is None:
                    rec["tokensBefore"] = before
                rec["tokensAfter"] = self.context_tokens
                self.replacing[ev.seq] = rec
                self.replace_ops[ev.seq] = ev.surface_op
        elif len(fold.nodes) > nodes_before:
            self._est[ev.seq] = est
            self.context_tokens += est

    def lean_step(self, typ: str, seq: int) -> None:
        """What :meth:`apply` does with a well-formed ``step/start`` or ``step/end`` (:mod:`.surface_fast`)."""
        self.events += 1
        if seq > self.last_seq:
            self.last_seq = seq
        self.fold.step_mark = (typ, seq)

    def lean_append(self, seq: int, empty: bool, nbytes: int) -> None:
        """What :meth:`apply` does with a well-formed ``append`` of a message stored in ``nbytes`` (``empty``: an
        assistant message with no content; :mod:`.surface_fast`)."""
        self.events += 1
        if seq > self.last_seq:
            self.last_seq = seq
        self.fold.append_node(seq, empty)
        est = max(1, nbytes // TOKEN_CHARS)
        self._est[seq] = est
        self.context_tokens += est

    def _bracket_for_replacement(self) -> Optional[dict[str, Any]]:
        if self._open:
            rec: dict[str, Any] = list(self._open.values())[-1]
            return rec
        return None

    def _compaction(self, ev: Event) -> None:
        d = ev.data if isinstance(ev.data, dict) else {}
        cid = d.get("compactionId")
        t = ev.type
        rec: Optional[dict[str, Any]]
        if t == "compaction/start":
            rec = {"compactionId": cid, "turn": d.get("turn"), "startSeq": ev.seq, "summarySeq": None,
                   "endSeq": None, "summary": "", "replacementSeqs": [], "groups": [],
                   "tokensBefore": None, "tokensAfter": None}
            self._open[cid] = rec
            self.compactions.append(rec)
        elif t == "compaction/summary":
            rec = self._open.get(cid)
            if rec is not None:
                rec["summarySeq"] = ev.seq
                rec["summary"] = summary_text(d.get("summary"))
        elif t == "compaction/end":
            rec = self._open.pop(cid, None)
            if rec is not None:
                rec["endSeq"] = ev.seq

    # ------------------------------------------------------------------ queries
    def replacement_chain(self, seq: int) -> list[Any]:
        """The seq that replaced ``seq``, the one that replaced that, and so on."""
        return self._columns.chain(seq)

    def compaction_of(self, seq: int) -> Optional[dict[str, Any]]:
        """The bracket that shadowed ``seq``, performed its replacement, or contains it."""
        rec = self.replacing.get(seq)
        if rec is not None:
            return rec
        by = self.fold.replaced_by.get(seq)
        if by is not None and by in self.replacing:
            return self.replacing[by]
        for rec in self.compactions:
            end = rec["endSeq"] if rec["endSeq"] is not None else self.last_seq
            if rec["startSeq"] <= seq <= end:
                return rec
        return None

    def status(self, ev: Any) -> dict[Any, Any]:
        return row_surface(self, ev)

    @property
    def _columns(self) -> ShadowColumns:
        cols = self.fold.columns
        assert cols is not None
        return cols

    def shadowed_of(self, rec: dict[str, Any]) -> list[int]:
        """The seqs a compaction record's replacements shadowed, in order."""
        cols = self._columns
        out: list[int] = []
        for g in rec["groups"]:
            out.extend(cols.group(g))
        return out

    # ------------------------------------------------------------------ saving (the index cache)
    def to_state(self, wide: bool = True) -> SurfaceState:
        """Everything the index holds, as plain data (compaction records shared between its maps
        are named by their position in :attr:`compactions`; ``wide`` False: the columns as they are, 4-byte
        ints while they fit, see :meth:`ShadowColumns.columns`)."""
        f = self.fold
        at = {id(rec): i for i, rec in enumerate(self.compactions)}
        return SurfaceState(
            version=f.version, nodes=list(f.nodes), violations=list(f.violations),
            empty_assistant=sorted(f.empty_assistant), step_mark=f.step_mark,
            last_seq=self.last_seq, events=self.events, rejected=dict(self.rejected),
            compactions=self.compactions, open=[(cid, at[id(rec)]) for cid, rec in self._open.items()],
            replacing={k: at[id(rec)] for k, rec in self.replacing.items()}, replace_ops=dict(self.replace_ops),
            est=dict(self._est), context_tokens=self.context_tokens, columns=self._columns.columns(wide))

    @classmethod
    def from_state(cls, st: SurfaceState, columns: Optional[dict[str, Column]] = None) -> SurfaceIndex:
        """The index saved as ``st``; its columns from ``columns`` (default ``st.columns``), which may be
        read-only views (they are copied if the index is fed more rows)."""
        idx = cls(st.version)
        f = idx.fold
        cols = columns if columns is not None else st.columns or {}
        f.columns = ShadowColumns(**cols)
        f.replaced_by, f.replaced = f.columns.replaced_by, f.columns.replaced
        f.nodes = st.nodes
        f.violations, f.empty_assistant, f.step_mark = st.violations, set(st.empty_assistant), st.step_mark
        idx.last_seq, idx.events, idx.rejected = st.last_seq, st.events, st.rejected
        idx.compactions = st.compactions
        idx._open = {cid: st.compactions[i] for cid, i in st.open}
        idx.replacing = {k: st.compactions[i] for k, i in st.replacing.items()}
        idx.replace_ops, idx._est, idx.context_tokens = st.replace_ops, st.est, st.context_tokens
        return idx


class SurfaceState(msgspec.Struct):
    """A :class:`SurfaceIndex` as plain data (:meth:`SurfaceIndex.to_state`): everything but ``columns``
    (the fold's :class:`~app.log.fold.shadowmap.ShadowColumns`, by name) is encodable with msgspec."""
    version: int
    nodes: list[int]
    violations: list[Problem]
    empty_assistant: list[int]
    step_mark: Optional[tuple[str, int]]
    last_seq: int
    events: int
    rejected: dict[int, str]
    compactions: list[dict[str, Any]]        # bracket records (JSON objects)
    open: list[tuple[Any, int]]              # (compactionId, record position) of open brackets
    replacing: dict[int, int]                # replacing seq -> record position
    replace_ops: dict[int, Any]              # replacing seq -> its surfaceOp (a JSON value)
    est: dict[int, int]
    context_tokens: int
    columns: Optional[dict[str, Any]] = None   # (saved as raw columns beside the rest)


def compaction_ref(rec: Optional[dict[Any, Any]]) -> Optional[dict[Any, Any]]:
    if rec is None:
        return None
    return {"compactionId": rec["compactionId"], "startSeq": rec["startSeq"], "summarySeq": rec["summarySeq"],
            "endSeq": rec["endSeq"]}


def row_surface(index: SurfaceIndex, ev: Any) -> dict[Any, Any]:
    """The surface status of one row (an Event; a bad row is ``log-only``)."""
    if not is_event(ev):
        return {"surface": "log-only", "why": "not a readable event"}
    if not is_surface_type(ev):
        return {"surface": "log-only"}
    seq = ev.seq
    by = index.fold.replaced_by.get(seq) if not ev.synthesized else None
    if by is not None:
        out = {"surface": "shadowed", "since": by, "replacedBy": by, "chain": index.replacement_chain(seq)}
        rec = index.replacing.get(by)
        if rec is not None:
            out["compaction"] = compaction_ref(rec)
        return out
    if seq in index.rejected and not ev.synthesized:
        return {"surface": "log-only", "why": f"refused by the surface fold: {index.rejected[seq]}"}
    if ev.surface_op is None:
        return {"surface": "log-only", "why": "no surfaceOp"}
    out = {"surface": "current"}
    if ev.is_replace:
        out["replaces"] = list(index.fold.replaced.get(seq, []))
        rec = index.replacing.get(seq)
        if rec is not None:
            out["compaction"] = compaction_ref(rec)
    return out


def _seqs(xs: Iterable[int]) -> str:
    """Runs as ranges, a long list summarised (``seqranges.seqs_text``)."""
    return seqs_text(xs)


def describe_surface(status: dict[Any, Any]) -> str:
    """A row's surface status in words (the label of a dimmed row, the inspector's "why")."""
    st = status.get("surface")
    comp = status.get("compaction")
    if st == "shadowed":
        how = f"replaced by seq {status['replacedBy']}"
        if comp:
            how += f", compaction at seqs {comp['startSeq']}–{comp['endSeq'] if comp['endSeq'] is not None else '…'}"
        later = status.get("chain", [])[1:]
        if len(later) > 3:             # a long chain: how many and the latest (the whole chain: the trace)
            how += f"; that replacement was replaced in turn {len(later):,} times, latest by seq {later[-1]}"
        elif later:
            how += f"; that replacement was replaced in turn by seq {_seqs(later)}"
        return f"Not in the model's view since seq {status['since']} ({how})"
    if st == "current":
        if status.get("replaces"):
            via = " by compaction" if comp else ""
            return f"In the model's view; replaces seq {_seqs(status['replaces'])}{via}"
        return "In the model's view"
    why = status.get("why")
    return "Log only: not a model message" + (f" ({why})" if why else "")


def page_surface(index: SurfaceIndex, items: Iterable[Any]) -> dict[Any, Any]:
    """``{seq: status}`` for the events among ``items`` (a page, logical or physical)."""
    return {it.seq: row_surface(index, it) for it in items if is_event(it)}


def compaction_group(index: SurfaceIndex, key: Any) -> Optional[dict[Any, Any]]:
    """One compaction as a collapsed row: ``key`` is its compactionId or any seq inside its bracket."""
    rec = None
    if isinstance(key, str):
        rec = next((r for r in index.compactions if r["compactionId"] == key), None)
    elif isinstance(key, int):
        rec = index.compaction_of(key)
    if rec is None:
        return None
    rows = [s for s in (rec["startSeq"], rec["summarySeq"], *rec["replacementSeqs"], rec["endSeq"]) if s is not None]
    shadowed = index.shadowed_of(rec)
    return {"compactionId": rec["compactionId"], "turn": rec["turn"], "startSeq": rec["startSeq"],
            "summarySeq": rec["summarySeq"], "endSeq": rec["endSeq"],
            "replacementSeqs": list(rec["replacementSeqs"]), "replacedCount": len(shadowed),
            "shadowedSeqs": shadowed,
            "tokensBefore": rec["tokensBefore"], "tokensAfter": rec["tokensAfter"],
            "tokenEstimate": f"stored characters / {TOKEN_CHARS}",
            "summary": rec["summary"], "rows": sorted(rows), "complete": rec["endSeq"] is not None}


def compaction_line(group: dict[Any, Any]) -> str:
    """One line for a collapsed compaction row (plain text)."""
    n = group["replacedCount"]
    b, a = group.get("tokensBefore"), group.get("tokensAfter")
    tok = f" · ~{b:,} → ~{a:,} tokens" if isinstance(b, int) and isinstance(a, int) else ""
    first = (group.get("summary") or "").strip().splitlines()
    head = first[0] if first else "(no summary)"
    if len(head) > 160:
        head = head[:159] + "…"
    state = "" if group.get("complete") else " · not closed"
    return f"Compaction: {n} item{'s' if n != 1 else ''} replaced{tok}{state} — {head}"


def build_index(events: Iterable[Any], version: int = 0) -> SurfaceIndex:
    return SurfaceIndex(version).feed(events)


# a stored row the surface index must read holds one of these byte strings; every other row (a
# packed chunk run, a tool call record, a header…) cannot change the surface, so it is not decoded
SURFACE_NEEDLES = (b'"surfaceOp"', b'"sourceEventSeqs"', b'"compaction/', b'"step/', b'"image/offload"')
_NEEDLES = SURFACE_NEEDLES


class ScanEnd:
    """Where a surface scan stopped: ``pos`` and ``line`` of the first stored row it did not read
    (the repair cut, a torn last row, or the end of the log)."""

    def __init__(self) -> None:
        self.pos: Any = None
        self.line: Optional[int] = None


def _surface_rows(reader: Any, cut: Any, segments: Optional[Iterable[Any]] = None,
                  end: Optional[ScanEnd] = None, lean: Optional[Callable[[bytes], bool]] = None) -> Iterator[Event]:
    """The stored events the surface index reads, oldest first, up to the repair cut: only the
    rows whose bytes can hold a surface event, a compaction marker, a step boundary or an image
    offload are decoded (the codec decodes each row on its own, so skipping rows is exact).
    ``segments``: from there on (default: the whole log); ``end`` gets where the scan stopped."""
    codec = reader.codec
    n0, n1, n2, n3, n4 = _NEEDLES
    for seg in (reader.source.forward() if segments is None else segments):
        if seg.bad:
            continue
        for pos, off, line, raw, complete in seg.split_rows():
            if cut is not None and pos >= cut:
                if end is not None:
                    end.pos, end.line = pos, line
                return
            if not complete:
                if end is not None:
                    end.pos, end.line = pos, line
                continue
            if not (n0 in raw or n3 in raw or n1 in raw or n2 in raw or n4 in raw):
                continue
            if lean is not None and lean(raw):
                continue                  # (folded in from its lean record: surface_fast)
            got, _ = codec.decode_row(raw, pos=pos, offset=off, line=line)
            for ev in got:
                if is_event(ev):
                    yield ev
        if end is not None and not seg.torn:
            end.pos = seg.end
            end.line = seg.line0 + seg.data.count(b"\n") if seg.line0 is not None else None


def index_key(reader: Any, exact: bool = False) -> tuple[Any, Any, bool]:
    """What a reader's surface index is cached under (the source's size and generation)."""
    src = reader.source
    return (getattr(src, "size", None), getattr(src, "generation", 0), exact)


def remember(reader: Any, idx: SurfaceIndex) -> None:
    """Make ``idx`` the reader's surface index for its current source state (what :func:`index_for`
    returns from now on); the persistent cache (:mod:`app.store.indexcache`) hands its index over so."""
    reader.cached_surface_index = (index_key(reader), idx)


def extend_index(reader: Any, idx: SurfaceIndex, segments: Optional[Iterable[Any]] = None,
                 end: Optional[ScanEnd] = None) -> SurfaceIndex:
    """Fold the stored rows of ``segments`` (default: the whole log) into ``idx``, up to the repair cut."""
    from .surface_fast import lean_feeder
    st = reader.tail_state()
    for ev in _surface_rows(reader, st.cut_pos, segments, end, lean_feeder(idx, getattr(reader, "version", 0) or 0)):
        idx.apply(ev)
    idx.last_seq = max(idx.last_seq, st.last_seq)
    return idx


def index_for(reader: Any, exact: bool = False) -> SurfaceIndex:
    """The reader's surface index, built once per source state (one streaming pass over the
    stored rows, decoding only those that can matter; ``exact``: decode every row instead, as
    a check).  The closure is not folded in: closers are appends, always current."""
    key = index_key(reader, exact)
    cached = getattr(reader, "cached_surface_index", None)
    if cached is not None and cached[0] == key:
        hit: SurfaceIndex = cached[1]
        return hit
    st = reader.tail_state()
    cut = st.cut_pos
    idx = SurfaceIndex(getattr(reader, "version", 0) or 0)
    if exact:
        for ev in reader.iter_events(logical=False):
            if cut is not None and ev.pos is not None and ev.pos >= cut:
                break
            idx.apply(ev)
    else:
        extend_index(reader, idx)
    reader.cached_surface_index = (key, idx)
    return idx
