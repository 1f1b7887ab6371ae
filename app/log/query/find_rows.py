"""The row-level parts of a find's scan (pure core, no Qt): the windows of a raw JSONL file, the spans of
its rows, the turn each row belongs to (found lazily) and the hits of one stored row.  The scan that
drives them is :func:`app.log.query.find.find`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union
from collections.abc import Iterator

from ..format.limits import MAX_ROW_BYTES
from ..format.model import MAX_SAFE_INT, BadKind, Event, Item
from ..source.sources import RawJsonlSource, Segment
from . import find_match, find_turns
from .find_light import NO_TURN, light_turn
from .find_match import FindOptions, FindStats, Hit, Match, Matcher, TurnRef, match_fields
from .find_anyrows import ROWS_ANY
from .find_prefilter import SAME, Buf
from .textview import Shown, event_turn, shown_fields, snippet

if TYPE_CHECKING:
    from ..format.codec import RowCodec

TURN_START = find_turns.TURN_START
FORWARD_FROM = 1 << 14             # last_turn_in: stretches of this many bytes searched forwards in C (from this many)
_TURN_PROBE = (5, 3)               # (TURN_START looked for by its "/" and the "a" 3 bytes on: find_anyrows)
_PLAIN_TURN = find_turns.PLAIN_TURN  # (read through this name: tests replace it)


class Win:
    """A window of a raw JSONL file: ``data[:limit]`` are complete rows (the bytes after it are
    the start of the next row, read again with the next window: no copy to cut them off).
    ``data`` may be the reader's one reused buffer: valid until the next window is asked for."""
    __slots__ = ("pos", "end", "data", "limit", "torn", "line0", "text_offset", "bad", "bad_kind", "rows")

    def __init__(self, pos: int, data: Buf, limit: int, torn: bool):
        self.pos, self.data, self.limit, self.torn = pos, data, limit, torn
        self.end = pos + limit
        self.line0: Optional[int] = None  # line numbers are not counted on this path (seq is the key)
        self.text_offset = pos
        self.bad: Optional[str] = None
        self.bad_kind: BadKind = "corrupt-frame"
        self.rows: Optional[list[tuple[int, bytes]]] = None

    def row_pos(self, off: int) -> int:
        return self.pos + off

    def text_pos(self, off: int) -> int:
        return self.pos + off


WINDOW = 1 << 21


def jsonl_windows(src: RawJsonlSource) -> Iterator[Win]:
    """Bounded reads of a raw JSONL snapshot (``src.size``): one copy from the kernel, no joins,
    into one reused buffer (:meth:`RawJsonlSource.pread_into`: no fresh pages per window; the
    last, shorter window and a window grown for a long row are fresh bytes).  A row over
    :data:`MAX_ROW_BYTES` is one bad window, skipped unread, as :meth:`RawJsonlSource.forward` does."""
    at, end = src.header_end, src.size
    block: int = getattr(src, "block", WINDOW) or WINDOW
    buf = bytearray(block)
    while at < end:
        want = block
        while True:
            n = min(want, end - at)
            chunk: Buf = src.pread_into(buf, at) if n == len(buf) else src.pread(n, at)
            if at + n >= end:
                cut = n
                torn = not chunk.endswith(b"\n")
                break
            nl = chunk.rfind(b"\n", 0, n)
            if nl >= 0:
                cut, torn = nl + 1, False
                break
            if want > MAX_ROW_BYTES:       # no newline in more than the row limit: one bad window
                cut = -1
                break
            want = min(want * 2, MAX_ROW_BYTES + 1)   # a row longer than the window: read more of it
        if cut < 0:
            stop = src.find_newline(at + n, end)
            w = Win(at, b"", stop - at, stop >= end and src.pread(1, end - 1) != b"\n")
            w.bad, w.bad_kind = f"row of more than {MAX_ROW_BYTES >> 20} MiB is over the row limit (skipped)", "over-limit"
            yield w
            at = stop
            continue
        yield Win(at, chunk, cut, torn)
        at += cut


class LaterTurn:
    """The turn at the end of a skipped window of a raw JSONL file: that of its last ``turn/start``
    row (bytes ``[lo, hi)``), else ``prev``'s; found only when a hit asks, the window then read
    again (most windows are skipped and never asked: no row decoded for them)."""
    __slots__ = ("_args", "_value")

    def __init__(self, codec: RowCodec, src: RawJsonlSource, st: FindStats, lo: int, hi: int, prev: TurnRef):
        self._args: Optional[tuple[RowCodec, RawJsonlSource, FindStats, int, int, TurnRef]] = (
            codec, src, st, lo, hi, prev)
        self._value: Optional[int] = None

    def __call__(self) -> Optional[int]:
        chain: list[LaterTurn] = []
        at: TurnRef = self
        t: Optional[int] = None
        while isinstance(at, LaterTurn):     # (iterative: a run of windows none of which says)
            if at._args is None:
                t = at._value
                break
            codec, src, st, lo, hi, prev = at._args
            chain.append(at)
            t = last_turn_in(codec, Win(lo, src.pread(hi - lo, lo), hi - lo, False), hi - lo, st)
            if t is not None:
                break
            at = prev
        else:
            t = at() if callable(at) else at
        for x in chain:
            x._args, x._value = None, t
        return t


def _turn_now(turn: TurnRef) -> Optional[int]:
    return turn() if callable(turn) else turn


class TurnTracker:
    """The current turn at any row of a segment, found lazily (rows asked in order): the last ``turn/start`` row
    naming a turn between the last row asked and this one, looked for backwards (:func:`last_turn_in`: only the
    rows after the last one naming a turn are decoded, not every one since the last ask)."""

    def __init__(self, codec: RowCodec, seg: Union[Win, Segment], turn: TurnRef, st: FindStats, lim: int):
        self.codec, self.seg, self.data, self.turn, self.st = codec, seg, seg.data, turn, st
        self.at = 0
        self.lim = lim

    def before(self, rs: int) -> Optional[int]:
        if self.at < rs:
            t = self._last(rs, self.at)
            if t is not None:
                self.turn = t
            self.at = rs
        return _turn_now(self.turn)

    def at_end(self) -> TurnRef:
        n = self.lim
        if self.at < n:
            t = self._last(n, self.at)
            if t is not None:
                self.turn = t
            self.at = n
        return self.turn

    def _last(self, end: int, stop: int) -> Optional[int]:
        """:func:`last_turn_in` of ``data[stop:end]``, a call of rowscan_c.last_turn a row (:mod:`.find_turns`: the
        same rows read, last first, a plain one's turn read there, any other by :func:`turn_of_row`, each counted as
        there); ``last_turn_in`` itself where the C is off (a v0/v1 log, the light reads off)."""
        if not find_turns.ENABLED or self.codec.version < 2 or not find_match.FAST:
            return last_turn_in(self.codec, self.seg, end, self.st, stop=stop)
        data, j = self.data, end
        while True:
            got = find_turns.last_turn(data, stop, j)
            if got is None:
                return None
            s, e, t = got
            if t is not None:
                self.st.rows_decoded += 1
                return t
            t = turn_of_row(self.codec, data[s:e], self.st, self.seg.row_pos(s))
            if t is not None:
                return t
            j = s
            if j <= stop:
                return None


def row_starts(data: Buf, cands: list[int], lim: int) -> list[int]:
    """Start offsets of the rows holding the candidate positions (sorted, unique): rowscan_c.row_starts (the find6
    section) where it is built and answers, else :func:`row_starts_py`, its definition."""
    if find_turns.ROW_STARTS is not None and find_turns.ENABLED and type(cands) is list:
        got = find_turns.ROW_STARTS(data, cands, lim)
        if got is not None:
            return got  # type: ignore[no-any-return]
    return row_starts_py(data, cands, lim)


def row_starts_py(data: Buf, cands: list[int], lim: int) -> list[int]:
    """Start offsets of the rows holding the candidate positions (sorted, unique)."""
    out: list[int] = []
    last_end = -1
    for c in cands:
        if c < last_end:
            continue
        if c >= lim:
            break
        s = data.rfind(b"\n", 0, c) + 1
        e = data.find(b"\n", c, lim)
        last_end = lim if e < 0 else e
        out.append(s)
    return out


def row_spans(data: Buf, starts: Optional[list[int]], n: int) -> Iterator[tuple[int, int]]:
    """(start, end) of rows at ``starts`` (None: every row) within ``data[:n]``."""
    if starts is None:
        s = 0
        while s < n:
            e = data.find(b"\n", s, n)
            if e < 0:
                e = n
            yield s, e
            s = e + 1
        return
    for s in starts:
        e = data.find(b"\n", s, n)
        yield s, (n if e < 0 else e)


def turn_of_row(codec: RowCodec, raw: Buf, st: FindStats, pos: object = None) -> Optional[int]:
    """The turn a ``turn/start`` row names (None: none, or no such row): read the light way where the codec would
    read it alike (:func:`.find_light.light_turn`, a v2+ log), else decoded."""
    st.rows_decoded += 1
    raw = bytes(raw)
    if codec.version >= 2 and find_match.FAST:
        m = _PLAIN_TURN.fullmatch(raw)
        if m is not None and int(m[1]) <= MAX_SAFE_INT:
            return int(m[2])
        t = light_turn(raw, codec.envelope_seqs, pos)
        if t is not NO_TURN:
            return t if type(t) is int else None
    items: list[Item]
    items, _ = codec.decode_row(raw, pos=pos)
    for it in items:
        if type(it) is Event and it.type == "turn/start":
            t = event_turn(it)
            if t is not None:
                return t
    return None


def last_turn_in(codec: RowCodec, seg: Union[Win, Segment], end: int, st: FindStats,
                  stop: int = 0) -> Optional[int]:
    """The turn of the last ``turn/start`` row of ``seg.data[stop:end]`` (None: there is none)."""
    data = seg.data
    if ROWS_ANY is not None and end - stop >= FORWARD_FROM:
        # (a stretch before ``end`` at a time, its rows holding the type found forwards in one pass, 16 places a step,
        # then read from the last: a backwards bytes.rfind of it ran at ~1 GB/s, and a common word's hits ask for
        # most of the log; the rows read, in the same order, are rfind's)
        j = end
        while j > stop:
            a = max(stop, j - max(FORWARD_FROM, 2 * len(TURN_START)))
            places = ROWS_ANY(data, a, j, (TURN_START,), (_TURN_PROBE,), SAME, None)
            nxt = a + len(TURN_START) - 1 if a > stop else stop   # (one that begins before ``a``: in the next)
            for i in reversed(places):
                s = data.rfind(b"\n", 0, i) + 1
                e = data.find(b"\n", i, end)
                t = turn_of_row(codec, data[s:end if e < 0 else e], st, seg.row_pos(s))
                if t is not None:
                    return t
                nxt = min(nxt, s)
            j = nxt
        return None
    j = end
    while True:
        i = data.rfind(TURN_START, stop, j)
        if i < 0:
            return None
        s = data.rfind(b"\n", 0, i) + 1
        e = data.find(b"\n", i, end)
        e = end if e < 0 else e
        if e <= end:
            t = turn_of_row(codec, data[s:e], st, seg.row_pos(s))
            if t is not None:
                return t
        j = s
        if j <= stop:
            return None


def row_hits(codec: RowCodec, raw: bytes, pos: object, offset: int, line: Optional[int],
              matcher: Matcher, opts: FindOptions, turn: TurnRef, st: FindStats) -> Iterator[Hit]:
    """Hits of one stored row; ``turn``: the current turn, or a callable giving it (lazily)."""
    st.rows_decoded += 1
    items: list[Item]
    items, _probs = codec.decode_row(raw, pos=pos, offset=offset, line=line)
    for ev in items:
        if type(ev) is not Event:
            continue
        shown = shown_fields(ev)
        if not shown:
            continue
        of = {id(x.field): x for x in shown}
        t = None
        for f, m, n in match_fields([x.field for x in shown], matcher, opts.kinds, opts.also):
            sh = of[id(f)]
            if t is None:
                t = event_turn(ev)
                if t is None:
                    t = turn() if callable(turn) else turn
            yield shown_hit(sh, m, n, ev.seq, t, ev.line, ev.offset, ev.member, st)


def shown_hit(sh: Shown, m: Match, n: int, seq: int, turn: Optional[int], line: Optional[int], offset: int,
              member: Optional[int], st: FindStats) -> Hit:
    """The hit of match ``m`` (``n`` matches) in the shown field ``sh``: its snippet, counted in ``st`` (the
    one place a find hit is built; ``offset`` -1: not known)."""
    f = sh.field
    snip, a, b = snippet(f.text, m.start(), m.end())
    st.hits += 1
    return Hit(seq=seq, turn=turn, kind=f.kind, snippet=snip, span=(a, b), start=m.start(), end=m.end(), matches=n,
               tool=f.tool, line=line, offset=offset if offset >= 0 else None, member=member, call=sh.call,
               block=sh.block)
