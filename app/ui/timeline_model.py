"""What the Timeline dock draws, computed from a session's timeline (no Qt): bars on lanes, an axis, the
context meter's points, per-turn tokens and cost.

The axis.  A session's turns are often hours apart (the user reads, thinks, comes back): on a wall-clock
axis the work would be slivers.  The waterfall's axis is *active time*: each turn's spans are placed at
their logged times relative to the turn's start, and the gaps between turns are shown as a fixed
:data:`GAP` (the turn boundaries carry the real gap in their tooltip).  When most spans have no measured
duration (snapshots with time 0, clocks mixed up) the axis is the seq: bars from ``seq`` to ``endSeq``,
and the dock says so; a duration is never invented.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate
from collections.abc import Sequence
from typing import Any, Optional

GAP = 1000                    # active-time axis: ms shown between two turns
LANES = ("turn", "step", "attempt", "retry-wait", "tool", "compaction", "approval", "subagent")
TOOL_ROWS = 4                 # parallel tool calls: up to this many rows, the rest share the last
MS_FORMAT = ((3_600_000, "h"), (60_000, "min"), (1000, "s"))


def fmt_ms(ms: Optional[float]) -> str:
    if ms is None:
        return "?"
    for unit, name in MS_FORMAT:
        if ms >= unit:
            return f"{ms / unit:.1f} {name}" if ms < 10 * unit else f"{ms / unit:.0f} {name}"
    return f"{ms:.0f} ms"


def fmt_clock(ms: float) -> str:
    """A position on the active-time axis as h:mm:ss (with tenths when under a minute)."""
    sec = max(ms, 0.0) / 1000
    h, rest = divmod(sec, 3600)
    m, s = divmod(rest, 60)
    return f"{int(h)}:{int(m):02d}:{s:04.1f}" if h else f"{int(m)}:{s:04.1f}"


@dataclass(slots=True)
class Bar:
    x0: float
    x1: float
    row: int                  # display row (lanes, the tool lane split into rows)
    kind: str
    seq: int
    end_seq: Optional[int]
    spans: Sequence[dict[str, Any]]   # the timeline's spans (a SpanTable: a span is a dict only when read) …
    i: int                            # … and this bar's index in them
    bad: bool = False         # failed attempt, tool error, turn error
    unknown: bool = False     # no measured duration (drawn as a marker)

    @property
    def span(self) -> dict[str, Any]:
        return self.spans[self.i]


@dataclass
class Layout:
    axis: str                                     # "time" (active ms) or "seq"
    rows: list[str]                               # display row labels
    bars: list[Bar]
    extent: tuple[float, float]
    turn_marks: list[tuple[float, Any, Optional[int]]] = field(default_factory=list)   # (x, turn, gap before)
    note: str = ""
    by_row: dict[int, list[Bar]] = field(default_factory=dict)      # bars of a row by x0
    row_x0: dict[int, list[float]] = field(default_factory=dict)
    row_max_x1: dict[int, list[float]] = field(default_factory=dict)
    row_x1: dict[int, list[float]] = field(default_factory=dict)
    row_bad: dict[int, list[int]] = field(default_factory=dict)       # running count of bad bars (prefix sums)

    def index(self) -> None:
        self.by_row = {}
        for b in self.bars:
            self.by_row.setdefault(b.row, []).append(b)
        for r, bs in self.by_row.items():
            bs.sort(key=lambda b: b.x0)
            self.row_x0[r] = [b.x0 for b in bs]
            self.row_max_x1[r] = list(accumulate((b.x1 for b in bs), max))
            self.row_x1[r] = [b.x1 for b in bs]
            self.row_bad[r] = list(accumulate((int(b.bad) for b in bs), initial=0))

    def visible_range(self, row: int, v0: float, v1: float) -> tuple[int, int]:
        """Indices [lo, hi) of the bars of ``row`` (by x0) meeting [v0, v1]."""
        return (bisect_left(self.row_max_x1.get(row, []), v0), bisect_right(self.row_x0.get(row, []), v1))

    def columns(self, row: int, lo: int, hi: int, edges: list[float]) -> list[tuple[int, float, bool]]:
        """Bars ``lo..hi`` of ``row`` merged per pixel column (``edges``: the axis value at each column's left
        edge, one more than the columns): (column, the furthest end of the bars starting in it, any bad)."""
        x0, x1, bad = self.row_x0[row], self.row_x1[row], self.row_bad[row]
        out = []
        i = lo
        for c in range(len(edges) - 1):
            j = bisect_left(x0, edges[c + 1], i, hi)
            if j > i:
                out.append((c, max(x1[i:j]), bad[j] > bad[i]))
                i = j
        return out

    def visible(self, row: int, v0: float, v1: float) -> list[Bar]:
        """The bars of ``row`` meeting [v0, v1]."""
        lo, hi = self.visible_range(row, v0, v1)
        return self.by_row.get(row, [])[lo:hi]

    def bar_at(self, row: int, x: float, slop: float) -> Optional[Bar]:
        hits = [b for b in self.visible(row, x - slop, x + slop)]
        if not hits:
            return None
        return min(hits, key=lambda b: 0 if b.x0 <= x <= b.x1 else min(abs(b.x0 - x), abs(b.x1 - x)))

    def bar_of_seq(self, seq: int) -> Optional[Bar]:
        """The narrowest bar whose seq range holds ``seq`` (a tool call over its step over its turn)."""
        best: Optional[Bar] = None
        for b in self.bars:
            hi = b.end_seq if b.end_seq is not None else b.seq
            if b.seq <= seq <= hi and (best is None or hi - b.seq < (best.end_seq or best.seq) - best.seq):
                best = b
        return best


_COLS = ("kind", "seq", "endSeq", "start", "end", "durationMs", "turn", "error", "status")
_BAD_STATUS = frozenset({"failed", "error", "interrupted", "not-started", "no-result"})


class _Cols:
    """The fields the layout reads, by column (a :class:`~app.log.query.timeline_table.SpanTable`'s columns: no
    span dict built), of the spans with a seq; ``idx`` their indices in the spans."""

    def __init__(self, spans: Sequence[dict[str, Any]]) -> None:
        col = getattr(spans, "column", None)
        got: dict[str, list[Any]] = {k: col(k) for k in _COLS} if col is not None else \
            {k: [s.get(k) for s in spans] for k in _COLS}
        seqs = got["seq"]
        keep = [i for i, q in enumerate(seqs) if q is not None]
        if len(keep) != len(seqs):
            got = {k: [v[i] for i in keep] for k, v in got.items()}
        self.idx = keep
        self.kind, self.seq, self.end_seq = got["kind"], got["seq"], got["endSeq"]
        self.start, self.end, self.dur, self.turn = got["start"], got["end"], got["durationMs"], got["turn"]
        self.bad = [bool(e) or st in _BAD_STATUS for e, st in zip(got["error"], got["status"])]

    def turns(self) -> tuple[list[int], list[int]]:
        """The turn spans (positions here) by seq, and their seqs."""
        ts = sorted((q, i) for i, (k, q) in enumerate(zip(self.kind, self.seq)) if k == "turn")
        return [i for _q, i in ts], [q for q, _i in ts]


def layout(spans: Sequence[dict[str, Any]]) -> Layout:
    """Bars for the waterfall (see the module doc for the axis)."""
    c = _Cols(spans)
    measured = sum(1 for d in c.dur if d is not None)
    if c.idx and measured * 2 >= len(c.idx):
        lay = _time_layout(spans, c)
    else:
        lay = _seq_layout(spans, c)
    _drop_empty_rows(lay)
    lay.index()
    return lay


def _drop_empty_rows(lay: Layout) -> None:
    """Rows without a bar are left out (turn, step and attempt are always shown); a lane keeps its name on
    its first row shown."""
    used = {b.row for b in lay.bars} | {0, 1, 2}
    keep = [r for r in range(len(lay.rows)) if r in used]
    new = {r: i for i, r in enumerate(keep)}
    names, kind = [], ""
    for r in keep:
        k = lay.rows[r] or kind
        names.append(k if k != kind else "")
        kind = k
    # (an unnamed tool row follows its lane: the lane's name is the last one seen)
    lay.rows = names
    for b in lay.bars:
        b.row = new[b.row]


def _rows() -> tuple[list[str], dict[str, int]]:
    rows: list[str] = []
    first: dict[str, int] = {}
    for k in LANES:
        first[k] = len(rows)
        n = TOOL_ROWS if k == "tool" else 1
        rows += [k if i == 0 else "" for i in range(n)]
    return rows, first


def _tool_rows(bars: list[Bar], first: int) -> None:
    """Parallel calls on separate rows (greedy: the first row free at the bar's start)."""
    ends: list[float] = []
    for b in sorted(bars, key=lambda b: b.x0):
        for i, e in enumerate(ends):
            if e <= b.x0:
                ends[i] = b.x1
                b.row = first + i
                break
        else:
            if len(ends) < TOOL_ROWS:
                ends.append(b.x1)
                b.row = first + len(ends) - 1
            else:
                b.row = first + TOOL_ROWS - 1


def _seq_layout(spans: Sequence[dict[str, Any]], c: _Cols) -> Layout:
    rows, first = _rows()
    bars = [Bar(q, (e if e is not None else q) + 1, first[k], k, q, e, spans, i, bad, d is None)
            for i, k, q, e, d, bad in zip(c.idx, c.kind, c.seq, c.end_seq, c.dur, c.bad)]
    _tool_rows([b for b in bars if b.kind == "tool"], first["tool"])
    turns, _ = c.turns()
    hi = max((b.x1 for b in bars), default=1)
    return Layout("seq", rows, bars, (0, hi), [(c.seq[t], c.turn[t], None) for t in turns],
                  "Times are missing or unreliable in this log: bars are placed by seq, not by time.")


def _time_layout(spans: Sequence[dict[str, Any]], c: _Cols) -> Layout:
    rows, first = _rows()
    turns, turn_seqs = c.turns()
    offset: dict[int, float] = {}                  # turn seq -> x of its start
    x = 0.0
    marks: list[tuple[float, Any, Optional[int]]] = []
    prev_end: Optional[int] = None
    last_end: dict[int, int] = {}                  # turn seq -> latest plausible span end in it
    for q, end in zip(c.seq, c.end):
        k = bisect_right(turn_seqs, q) - 1
        if k >= 0 and end is not None:
            t0 = c.start[turns[k]]
            if t0 is not None and 0 <= end - t0 <= 6 * 3_600_000:
                last_end[k] = max(last_end.get(k, 0), end - t0)
    for k, t in enumerate(turns):
        start = c.start[t]
        if start is None:
            continue
        gap = start - prev_end if prev_end is not None and start >= prev_end else None
        if marks:
            x += GAP
        offset[c.seq[t]] = x - start
        marks.append((x, c.turn[t], gap))
        length = c.dur[t] if c.dur[t] is not None else last_end.get(k, 0)
        x += length
        prev_end = start + length
    bars: list[Bar] = []
    skipped = 0
    for i, kind, q, e, start, d, bad in zip(c.idx, c.kind, c.seq, c.end_seq, c.start, c.dur, c.bad):
        k = bisect_right(turn_seqs, q) - 1
        off = offset.get(turn_seqs[k]) if k >= 0 else None
        if off is None or start is None:
            skipped += 1
            continue
        x0 = start + off
        bars.append(Bar(x0, x0 + (d if d is not None else 0), first[kind], kind, q, e, spans, i, bad, d is None))
    _tool_rows([b for b in bars if b.kind == "tool"], first["tool"])
    note = f"{skipped} spans without a start time are not drawn." if skipped else ""
    return Layout("time", rows, bars, (0, max(x, max((b.x1 for b in bars), default=1))), marks, note)


# ---------------------------------------------------------------------- tooltips (plain text)

def tip(s: dict[str, Any]) -> str:
    lines = [f"{s['kind']}: {s['label']}", f"seq {s['seq']}" + (f"-{s['endSeq']}" if s.get("endSeq") is not None else ""),
             f"duration {fmt_ms(s['durationMs'])}" if s["durationMs"] is not None else
             f"duration unknown ({s.get('note') or 'no end'})"]
    if s["kind"] == "attempt":
        t = s["tokens"]
        lines.append(f"time to first token {fmt_ms(s.get('ttftMs'))}, decode {fmt_ms(s.get('decodeMs'))}")
        lines.append(f"tokens: input {t['input']:,}, cache read {t['cacheRead']:,}, output {t['output']:,}")
        if s.get("tps"):
            lines.append(f"{s['tps']} tokens/s")
        lines.append(f"finish {s.get('finish')} ({s.get('status')})")
    if s["kind"] == "retry-wait":
        lines.append(f"logged delay {fmt_ms(s.get('delayMs'))} after {s.get('failure')}")
    if s["kind"] in ("tool", "subagent"):
        lines.append(f"status {s.get('status')}")
        if s.get("overlaps"):
            lines.append(f"runs alongside {len(s['overlaps'])} other call(s)")
    if s["kind"] == "subagent":
        c = s.get("childSession")
        lines.append(f"child session {c.get('id')}" if c else "child session not found in this store")
    if s["kind"] == "compaction":
        lines.append(f"context {s.get('tokensBefore')} -> {s.get('tokensAfter')} tokens "
                     f"(shadowed {s.get('shadowedTokens')}, summary {s.get('summaryTokens')})")
    if s["kind"] == "approval":
        lines.append(f"outcome {s.get('outcome')}")
    if s.get("error"):
        lines.append(f"error {s['error']}")
    return "\n".join(lines)

