"""Whole-log find (one session, see docs/glossary.md): every stored row of one log, matched on the text a
user sees (pure core, no Qt).

:func:`find` reads the stored bytes segment by segment (1 MiB blocks of JSONL, zstd frames,
batches of SQLite rows: the reader's source, so memory stays bounded whatever the log's size),
prefilters on the raw bytes and decodes only the rows that may match:

* a literal is cut at the characters the field text puts between stored strings (``key: value``
  lines, newlines, compact JSON: :data:`.find_needles._CUTS`; a match may span them) and its longest piece
  is looked for as it is stored: its JSON-escaped form (as dsh writes it, non-ASCII
  as UTF-8), its ``\\uXXXX`` form, and its doubly-escaped form (text inside a JSON string
  inside JSON, e.g. tool arguments).  Quotes, backslashes and control characters stay in the
  piece, in each of their escaped forms (raw: a quote of the compact JSON the field text shows;
  escaped once; twice), so a quoted query keeps its prefilter.  A segment holding none of them is skipped unparsed;
  the ``\\uXXXX`` forms are looked for only from a window's first escape of a non-ASCII
  character (one pass: the C library's ``strstr`` of ``\\u`` through :mod:`.cfind`, each place
  checked, else a regex), so a window of another writer's rows is never missed (where the C is built, that first
  escape is found 16 places a step, rowscan_c.first_uesc, and where the needles, raw and escaped, are looked for by
  at most 4 probes of two bytes, the rows holding any of them are found in one pass, :mod:`.find_anyrows`);
* a case-insensitive literal (and the literal part of a case-insensitive regular expression)
  is looked for as the folded images (:data:`.find_prefilter.FOLD`, one ``bytes.translate``) of the case
  variants ``re.IGNORECASE`` accepts for a stretch of it, ASCII letters included (k: the Kelvin
  sign, s: the long s, i: the Turkish ı/İ); when every raw variant holds one non-ASCII byte
  (ñ/Ñ: C3), memchr looks for that byte first and only the rows holding it are folded;
  a pattern with no literal stretch of 3 bytes decodes every row;
* a candidate row is decoded (:class:`~app.log.format.codec.RowCodec`) and its events' fields
  (:func:`app.log.query.textview.shown_fields`: the text fields, generic rows' payloads, the
  tool-call blocks of assistant messages) are matched as decoded text, so quotes, newlines
  and non-ASCII words are found as the user reads them.

Results stream as :class:`Hit` (one per matching field of an event: seq, turn, kind, a plain
one-line snippet, the match's span in the field's text).  For a literal with no space or control character in a
raw JSONL file, a window's candidate rows are read and matched in C, no row decoded, and each hit is a
:class:`~.find_fast.LazyHit`, whose snippet is made from its row read again when it is first read (pickled, it goes
unmade: ``Hit.row`` says where from; the window makes the snippets it shows).  Where the C is built this is
:mod:`.find_c2` (rowscan_c.find_hits: the fields matched as UTF-8, the hits made in C, the rows of the prefilter's
places found there, a generic row whose shown text holds no match read with no hit; the hits between two rows
the C leaves to us handed on as one :class:`Batch`; compaction summaries, failed attempts, tool results with an error
and rows showing no text read there too, :mod:`.find_more`), else :mod:`.find_fast`'s text hits.  The turn of a hit
whose row names none is the last ``turn/start`` row's before it, found by one C call an ask (:mod:`.find_turns`).
``cancel`` (a callable or a ``threading.Event``) stops the scan between rows; ``progress(done, total)`` reports
physical bytes.  :class:`FindStats` counts what was read.

The parts: :mod:`.find_match` (options, hits, stats, the field matcher), :mod:`.find_needles` (the needles
of the byte prefilter, built from the query), :mod:`.find_prefilter` (the prefilter's byte searches) and
:mod:`.find_rows` (windows, row spans, turns, the hits of a row); this module drives the scan.
"""
from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, Optional, Union
from collections.abc import Callable, Generator, Iterable, Iterator

from ..format.model import Problem
from ..jobctl import is_cancelled
from ..source.sources import RawJsonlSource, Segment
from ..format.limits import MAX_ROW_BYTES
from .find_c2 import BLOCKS, C2_KINDS, LEFT, NO_TURN, c2_ready, find_hits_of
from .find_fast import FastRows
from .find_more import C2_TYPES
from .find_match import Cancel, FindOptions, FindStats, Hit, Matcher, TurnRef, compile_matcher
from .find_needles import build_prefilter
from .find_prefilter import Prefilter
from .find_rows import (TURN_START, LaterTurn, TurnTracker, Win, jsonl_windows, last_turn_in, row_hits, row_spans,
                        row_starts, turn_of_row)
from .textview import ASSISTANT, KINDS, REASONING, TOOL_CALL, USER

if TYPE_CHECKING:
    from ..format.codec import RowCodec
    from ..index.reader import LogReader


def find(reader: LogReader, opts: FindOptions, *, cancel: Cancel = None,
         progress: Optional[Callable[[int, int], None]] = None,
         stats: Optional[FindStats] = None, limit: Optional[int] = None) -> Iterator[Hit]:
    """Stream every match of ``opts`` in the whole stored log of ``reader`` (a LogReader).

    Yields :class:`Hit` oldest first.  ``stats`` (a FindStats) is filled as the scan goes;
    ``stats.complete`` is True only when the whole log was searched.  A match in a tool-call
    block of an assistant message is yielded only when no ``tool/call`` row of that call
    matches after it (the card of the call holds the same text)."""
    st = stats if stats is not None else FindStats()
    return _without_echoes(_find_rows(reader, opts, cancel, progress, st, limit), st)


_BLANK = frozenset((b"", b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c"))   # (what bytes.strip strips)
ECHO_WAIT = 4096                   # hits held back while a call block waits for its tool/call row


class Batch(list):  # type: ignore[type-arg]
    """Hits of one window handed on together (:func:`_c2_hits`); ``blocks``: some are of a tool-call block."""
    __slots__ = ("blocks",)

    def __init__(self, hits: list[Hit], blocks: bool):
        super().__init__(hits)
        self.blocks = blocks


def _without_echoes(hits: Iterator[Union[Hit, Batch]], st: FindStats) -> Iterator[Hit]:
    """``hits`` less each tool-call block hit whose call's ``tool/call`` row hits (the row follows
    the assistant message, and holds the same text: it hits whenever the block does).  While a
    block waits, later hits are held back (order kept) until every waiting call's row came, or a
    user/assistant hit (a later message: its calls' rows would have come), or the end."""
    held: list[Hit] = []
    waiting: set[str] = set()
    for x in hits:
        if type(x) is Batch:
            if not held and not x.blocks:
                yield from x                  # (a window's hits, none of a block, none held: handed on as they are)
                continue
            got: Iterable[Any] = x
        else:
            got = (x,)
        for h in got:
            if h.block:
                held.append(h)
                if h.call is not None:
                    waiting.add(h.call)
                continue
            if held:
                if h.kind == TOOL_CALL and h.call in waiting:
                    gone = [y for y in held if y.block and y.call == h.call]
                    st.hits -= len(gone)
                    held = [y for y in held if not (y.block and y.call == h.call)]
                    waiting.discard(h.call)
                    held.append(h)
                    if not waiting:
                        yield from held
                        held = []
                    continue
                if h.kind not in (USER, ASSISTANT, REASONING) and len(held) < ECHO_WAIT:
                    held.append(h)
                    continue
                yield from held
                held, waiting = [], set()
            yield h
    yield from held


def _find_rows(reader: LogReader, opts: FindOptions, cancel: Cancel,
               progress: Optional[Callable[[int, int], None]], st: FindStats,
               limit: Optional[int]) -> Iterator[Union[Hit, Batch]]:
    matcher = compile_matcher(opts)
    pre = build_prefilter(opts)
    src = reader.source
    codec = reader.codec
    fast = FastRows.of(codec, opts, matcher)
    hits_of = partial(_hits_of, codec, fast, matcher, opts)
    st.bytes_total = getattr(src, "size", 0) or 0
    turn: TurnRef = None              # turn of the last turn/start before the current segment
    segs: Iterator[Union[Win, Segment]]
    if pre is not None and isinstance(src, RawJsonlSource):
        segs = jsonl_windows(src)
        if fast is not None:
            fast.src = src                # (a row's place in the file: its hit's snippet made when asked for)
    else:
        segs = src.forward()
    for seg in segs:
        if is_cancelled(cancel):
            st.cancelled = True
            return
        st.segments += 1
        if seg.bad:
            st.problems.append(Problem(code=getattr(seg, "bad_kind", "corrupt-frame"), message=seg.bad,
                                       offset=seg.pos if isinstance(seg.pos, int) else None))
            continue
        if seg.rows is not None:
            turn, stop = yield from _split_rows_hits(seg.rows, codec, pre, hits_of, turn, st, cancel, limit)
            if stop:
                return
        else:
            data = seg.data
            lim = getattr(seg, "limit", None) or len(data)
            st.bytes_scanned += lim
            if pre is not None:
                memo: list[tuple[int, int]] = []  # (the window's first escape of a non-ASCII character, found once)
                cands = pre.positions(data, lim, rows=True, memo=memo)
                if not cands:
                    st.segments_skipped += 1
                    turn = _turn_after(codec, src, seg, lim, st, turn)
                    if progress:
                        progress(seg.end if isinstance(seg.end, int) else 0, st.bytes_total)
                    continue
                c_way, places, starts = _candidates(fast, seg, pre, cands, lim, memo)
            else:
                c_way, places, starts = None, False, None
            line = seg.line0
            counted = 0
            tb = TurnTracker(codec, seg, turn, st, lim)
            view = memoryview(data)               # (a row copied once out of the reused buffer, not twice)
            if c_way is not None and starts is not None:
                starts = yield from c_way(fast, seg, data, starts, lim, hits_of, tb, st, cancel, limit, places)
                if starts is None:
                    return
            for rs, re_ in row_spans(data, starts, lim):
                if line is not None:
                    line += data.count(b"\n", counted, rs)
                    counted = rs
                if re_ >= lim and seg.torn:
                    continue                      # a torn last row: not an event yet
                raw = view[rs:re_].tobytes()
                if raw[:1] in _BLANK and not raw.strip():
                    continue                      # (only a row starting blank can be all blank: no copy else)
                if pre is not None and pre.gate is not None and not pre.hit(raw):
                    continue
                for h in hits_of(raw, seg.row_pos(rs), seg.text_pos(rs), line, partial(tb.before, rs), st):
                    yield h
                    if limit is not None and st.hits >= limit:
                        return
                if is_cancelled(cancel):
                    st.cancelled = True
                    return
            turn = tb.at_end()
        if progress:
            progress(seg.end if isinstance(seg.end, int) else 0, st.bytes_total)
    st.complete = True



def _turn_after(codec: RowCodec, src: Any, seg: Union[Win, Segment], lim: int, st: FindStats,
                turn: TurnRef) -> TurnRef:
    """The turn after a segment with no candidate row: the one its last turn/start row names (in a window of a raw
    JSONL file, found only if a hit asks), else ``turn``."""
    if isinstance(seg, Win) and isinstance(src, RawJsonlSource):
        if seg.data.rfind(TURN_START, 0, lim) >= 0:
            return LaterTurn(codec, src, st, seg.pos, seg.pos + lim, turn)
        return turn
    t = last_turn_in(codec, seg, lim, st)
    return turn if t is None else t


def _candidates(fast: Optional[FastRows], seg: Union[Win, Segment], pre: Prefilter, cands: list[int],
                lim: int, memo: Optional[list[tuple[int, int]]] = None
                ) -> tuple[Optional[Callable[..., Any]], bool, Optional[list[int]]]:
    """(how the window's candidate rows are read and matched in C, or None; whether the C takes the prefilter's
    places ``cands`` and finds their rows itself; the places, else the candidate rows' starts).  In C: a hit each, a
    row the C leaves to us by its start; not once the reader reads every snippet as it comes (each would cost a
    decode of its row again)."""
    c_way = _c_way(fast, seg, pre)
    places = c_way is _c2_hits and not pre.also
    return c_way, places, cands if places else _gated_starts(pre, seg.data, cands, lim, memo)


def _c_way(fast: Optional[FastRows], seg: Union[Win, Segment], pre: Prefilter) -> Optional[Callable[..., Any]]:
    """How a window's candidate rows are read and matched in C (:func:`_c2_hits`, :func:`_c_text_hits`), None: not
    (no C text hits for this find, not a window of a raw JSONL file, a prefilter with a gate)."""
    if fast is None or fast.eager_reader() or fast.c_hits is None or not isinstance(seg, Win) or pre.gate is not None:
        return None
    return _c2_hits if c2_ready(fast) else _c_text_hits


def _gated_starts(pre: Prefilter, data: Any, cands: Any, lim: int,
                  memo: Optional[list[tuple[int, int]]] = None) -> list[int]:
    """The starts of the candidate rows (``cands``: the prefilter's places) that also hold each other piece of the
    query."""
    starts = row_starts(data, cands, lim)
    for g in pre.also:
        if starts:
            starts = gated(data, lim, starts, g, memo)
    return starts

GATE_PASSES = 4                    # a gate of more needles is checked row by row (each needle: a pass per window)
PLAIN_PASSES = 8                   # (a gate of more needles) its ASCII needles found by a pass each, up to this many


def gated(data: Any, lim: int, starts: list[int], g: Prefilter,
          memo: Optional[list[tuple[int, int]]] = None) -> list[int]:
    """The rows of ``starts`` (in ``data[:lim]``) holding gate ``g``: found in one pass over the window per needle,
    or, for a gate of many needles (a caseless piece's fold variants and escaping levels), its ASCII needles found
    in a pass each (:meth:`.Prefilter.gate_rows`), and only the other rows that hold a byte the rest are looked for
    by checked one by one for the rest (:meth:`.Prefilter.hit_others`).  The rows kept are those
    :meth:`.Prefilter.hit` keeps (``tests/test_find_pieces.py``); in one pass over those rows where
    :meth:`.Prefilter.rows_of` can."""
    one = g.rows_of(data, lim, starts, memo)
    if one is not None:
        return one
    if len(g.needles) + len(g.esc) <= GATE_PASSES:
        held = set(row_starts(data, g.positions(data, lim, rows=True, memo=memo), lim))
        return [x for x in starts if x in held]
    got = g.gate_rows(data, lim, PLAIN_PASSES)
    check = None if got is None else set(row_starts(data, got[1], lim))
    held = set() if got is None else set(row_starts(data, got[0], lim))
    out = []
    for x in starts:
        if x in held:
            out.append(x)
        elif check is None or x in check:
            e = data.find(b"\n", x, lim)
            row = bytes(data[x:lim if e < 0 else e])
            if g.hit(row) if check is None else g.hit_others(row):
                out.append(x)
    return out


def _hits_of(codec: RowCodec, fast: Optional[FastRows], matcher: Matcher, opts: FindOptions, raw: bytes, pos: object,
             offset: int, line: Optional[int], turn: TurnRef, st: FindStats) -> Iterator[Hit]:
    """The hits of one candidate row: through the C text where the row allows (:mod:`.find_fast`), else decoded."""
    if fast is not None:
        return fast.hits(raw, pos, offset, line, turn, st)
    return row_hits(codec, raw, pos, offset, line, matcher, opts, turn, st)


def _c_text_hits(fast: FastRows, seg: Win, data: Any, starts: list[int], lim: int,
                 hits_of: Callable[..., Iterator[Hit]], tb: TurnTracker, st: FindStats, cancel: Cancel,
                 limit: Optional[int], places: bool = False) -> Generator[Hit, None, Optional[list[int]]]:
    """The hits of a window's candidate rows through :meth:`.FastRows.text_hits_of` (the C's text hits; a row it
    leaves to the caller taken by ``hits_of``), in row order: returns [] (the window done), or None (stop: cancelled,
    or the ``limit``-th hit given)."""
    items, read = fast.text_hits_of(data, starts, lim, seg.torn)
    st.rows_decoded += read
    st.rows_fast += read
    view = memoryview(data)
    for it in items:
        if type(it) is int:
            if (yield from _left_row(data, view, it, lim, seg, hits_of, tb, st, cancel, limit)):
                return None
            continue
        yield fast.lazy_hit(it, seg.row_pos(it[0]), seg.text_pos(it[0]), tb.before, st)
        if limit is not None and st.hits >= limit:
            return None
    return []


def _left_row(data: Any, view: memoryview, it: int, lim: int, seg: Win, hits_of: Callable[..., Iterator[Hit]],
              tb: TurnTracker, st: FindStats, cancel: Cancel, limit: Optional[int]) -> Generator[Hit, None, bool]:
    """The hits of the row at ``it`` that a C pass left to the exact way; True: the scan stops (the ``limit``-th
    hit given, or cancelled)."""
    e = data.find(b"\n", it, lim)
    raw = view[it:lim if e < 0 else e].tobytes()
    for h in hits_of(raw, seg.row_pos(it), seg.text_pos(it), None, partial(tb.before, it), st):
        yield h
        if limit is not None and st.hits >= limit:
            return True
    if is_cancelled(cancel):
        st.cancelled = True
        return True
    return False


def _c2_hits(fast: FastRows, seg: Win, data: Any, starts: list[int], lim: int,
             hits_of: Callable[..., Iterator[Hit]], tb: TurnTracker, st: FindStats, cancel: Cancel,
             limit: Optional[int], places: bool = False) -> Generator[Union[Hit, Batch], None, Optional[list[int]]]:
    """As :func:`_c_text_hits`, through rowscan_c.find_hits (:mod:`.find_c2`: the hits made in C): the hits
    between two rows left to us handed on as one :class:`Batch` (without a ``limit``), each row naming no turn
    given the tracker's, in row order.  ``places``: ``starts`` holds the prefilter's places, not rows' starts."""
    items, read, flags = find_hits_of(fast, data, starts, lim, seg.torn, seg.pos, MAX_ROW_BYTES, C2_TYPES, C2_KINDS,
                                      places)
    st.rows_decoded += read
    st.rows_fast += read
    if not flags & (LEFT | NO_TURN) and limit is None:
        st.hits += len(items)
        fast.made += len(items)
        if items:
            yield Batch(items, bool(flags & BLOCKS))
        return []
    view = memoryview(data)
    run: list[Hit] = []
    for it in items:
        if type(it) is not int:
            if it.turn is None:
                it.turn = tb.before(it.offset - seg.pos)
            st.hits += 1
            fast.made += 1
            if limit is None:
                run.append(it)
                continue
            yield it
            if st.hits >= limit:
                return None
            continue
        if run:
            yield Batch(run, bool(flags & BLOCKS))
            run = []
        if (yield from _left_row(data, view, it, lim, seg, hits_of, tb, st, cancel, limit)):
            return None
    if run:
        yield Batch(run, bool(flags & BLOCKS))
    return []


def _split_rows_hits(rows: list[tuple[int, bytes]], codec: RowCodec, pre: Optional[Prefilter],
                     hits_of: Callable[..., Iterator[Hit]], turn: TurnRef, st: FindStats, cancel: Cancel,
                     limit: Optional[int]) -> Generator[Hit, None, tuple[TurnRef, bool]]:
    """The hits of a segment whose source split its rows itself (SQLite), for :func:`_find_rows`:
    returns (the turn at its end, whether the scan stops: cancelled, or the ``limit``-th hit given)."""
    st.bytes_scanned += sum(len(r) for _, r in rows)
    for p, raw in rows:
        if TURN_START in raw:
            t = turn_of_row(codec, raw, st, p)
            if t is not None:
                turn = t
        if pre is not None and not (pre.hit(raw) and pre.hit_also(raw)):
            continue
        for h in hits_of(raw, p, -1, None, turn, st):
            yield h
            if limit is not None and st.hits >= limit:
                return turn, True
        if is_cancelled(cancel):
            st.cancelled = True
            return turn, True
    return turn, False


def find_all(reader: LogReader, opts: FindOptions, **kw: Any) -> tuple[list[Hit], FindStats]:
    """(hits list, stats): :func:`find` collected (tests, CLI)."""
    stats = kw.pop("stats", None) or FindStats()
    hits = list(find(reader, opts, stats=stats, **kw))
    return hits, stats


__all__ = ["FindOptions", "Hit", "FindStats", "find", "find_all", "compile_matcher", "build_prefilter", "KINDS"]
