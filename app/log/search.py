"""Whole-log search: every stored row, matched on the text a user sees (pure core, no Qt).

:func:`find` reads the stored bytes segment by segment (1 MiB blocks of JSONL, zstd frames,
batches of SQLite rows: the reader's source, so memory stays bounded whatever the log's size),
prefilters on the raw bytes and decodes only the rows that may match:

* a literal is looked for as it is stored: its JSON-escaped form (as dsh writes it, non-ASCII
  as UTF-8), its ``\\uXXXX`` form, and its doubly-escaped form (text inside a JSON string
  inside JSON, e.g. tool arguments).  A segment holding none of them is skipped unparsed;
* case-insensitive and regular-expression searches prefilter conservatively on the longest
  run of characters that no JSON encoder escapes (ASCII letters, digits, spaces, most
  punctuation), ASCII-lowercased; a pattern with no such run decodes every row;
* a candidate row is decoded (:class:`~app.log.codec.RowCodec`) and its events' fields
  (:func:`app.log.textview.event_fields`) are matched as decoded text, so quotes, newlines
  and non-ASCII words are found as the user reads them.

Results stream as :class:`Hit` (one per matching field of an event: seq, turn, kind, a plain
one-line snippet, the match's span in the field's text).  ``cancel`` (a callable or a
``threading.Event``) stops the scan between rows; ``progress(done, total)`` reports physical
bytes.  :class:`FindStats` counts what was read.
"""
from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Optional, Protocol, Union, cast
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

from .model import Event, Item, Problem
from .sources import RawJsonlSource, Segment
from .textview import KINDS, Field, event_fields, event_turn, normalize_kind, snippet

if TYPE_CHECKING:
    import sre_parse as _sre_parse   # typeshed has stubs for this name of the module only
    from .codec import RowCodec
    from .reader import LogReader
else:
    try:                             # Python 3.11+: the regex parser moved to re._parser
        from re import _parser as _sre_parse
    except ImportError:              # pragma: no cover
        import sre_parse as _sre_parse


def _private_module(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:              # pragma: no cover
        return None


# re's case folding (simple lowercase mappings, extra folds such as σ/ς): private modules, optional
_sre: Any = _private_module("_sre")
_casefix: Any = _private_module("re._casefix")


class _Flag(Protocol):
    def is_set(self) -> bool: ...


# what stops a scan: a ``threading.Event``-like flag or a callable answering "cancelled?"
Cancel = Union[_Flag, Callable[[], object], None]
# the turn of a row, or a callable finding it lazily
TurnRef = Union[Optional[int], Callable[[], Optional[int]]]

# characters every JSON encoder writes literally (no escaping variants): safe for a byte prefilter
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 !#$%()*+,-.:;=?@[]^_`{|}~")
_TURN_START = b'"turn/start"'


@dataclass
class FindOptions:
    text: str
    regex: bool = False
    case: bool = False               # case-sensitive
    word: bool = False               # whole words only
    kinds: Optional[Collection[str]] = None  # only these textview kinds (None: all); a frozenset once built
    also: tuple[re.Pattern[str], ...] = ()  # further compiled patterns the same field must match (AND)

    def __post_init__(self) -> None:
        if self.kinds is not None:
            self.kinds = frozenset(normalize_kind(k) for k in self.kinds)


@dataclass
class Hit:
    seq: int
    turn: Optional[int]
    kind: str
    snippet: str                     # one plain line around the first match
    span: tuple[int, int]            # (start, end) of the match inside ``snippet``
    start: int                       # first match's character offsets inside the field's whole text
    end: int
    matches: int                     # matches in this field
    tool: Optional[str] = None
    line: Optional[int] = None       # 1-based line of the stored row (JSONL, zstd), when known
    offset: Optional[int] = None     # byte offset of the row in the decoded text, when known
    member: Optional[int] = None     # member of a packed row

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "turn": self.turn, "kind": self.kind, "snippet": self.snippet}


@dataclass
class FindStats:
    bytes_scanned: int = 0           # decoded text bytes looked at (file bytes for raw JSONL)
    bytes_total: int = 0             # physical size of the log
    segments: int = 0
    segments_skipped: int = 0        # no candidate in the segment: never split into rows
    rows_decoded: int = 0            # rows decoded (candidates + turn lookups)
    hits: int = 0
    cancelled: bool = False
    complete: bool = False           # the whole log was searched (not cancelled, no limit hit)
    problems: list[Problem] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"bytesScanned": self.bytes_scanned, "bytesTotal": self.bytes_total,
                "rowsDecoded": self.rows_decoded, "segments": self.segments,
                "segmentsSkipped": self.segments_skipped, "cancelled": self.cancelled,
                "complete": self.complete}


# --------------------------------------------------------------------------- matching

def compile_matcher(opts: FindOptions) -> re.Pattern[str]:
    """The str pattern matched against decoded field text (raises ValueError on a bad regex)."""
    if not opts.text:
        raise ValueError("empty search text")
    p = opts.text if opts.regex else re.escape(opts.text)
    if opts.word:
        p = r"(?<!\w)(?:" + p + r")(?!\w)"
    try:
        return re.compile(p, 0 if opts.case else re.IGNORECASE)
    except re.error as e:
        raise ValueError(f"bad regular expression: {e}") from None


def _safe_runs(s: str) -> list[str]:
    runs: list[str] = []
    cur: list[str] = []
    for ch in s:
        if ch in _SAFE:
            cur.append(ch)
        else:
            if cur:
                runs.append("".join(cur))
            cur = []
    if cur:
        runs.append("".join(cur))
    return runs


def _regex_literal(pattern: str, flags: int) -> Optional[str]:
    """The longest run of literal characters every match must contain (top level only)."""
    try:
        parsed = _sre_parse.parse(pattern, flags)
    except Exception:
        return None
    lit = _sre_parse.LITERAL
    runs: list[str] = []
    cur: list[str] = []
    for op, av in parsed.data:
        if op is lit and isinstance(av, int):        # a LITERAL's argument is its code point
            cur.append(chr(av))
        else:
            if cur:
                runs.append("".join(cur))
            cur = []
    if cur:
        runs.append("".join(cur))
    best = ""
    for r in runs:
        for s in _safe_runs(r):
            if len(s) > len(best):
                best = s
    return best or None


@dataclass
class Prefilter:
    """Byte needles a candidate row must contain (any of them); ``lower``: compare ASCII-lowercased.
    ``gate``: one needle every form contains (a run no encoder escapes): a segment is searched
    for it alone, and the rows holding it are then checked for the needles (one pass, not three)."""
    needles: list[bytes]
    lower: bool
    gate: Optional[bytes] = None

    def positions(self, data: bytes, lim: Optional[int] = None) -> list[int]:
        lim = len(data) if lim is None else lim
        region = data if lim == len(data) or not (self.lower or len(self.needles) > 1) else data[:lim]
        hay = region.lower() if self.lower else data
        out: list[int] = []
        needles = [self.gate] if self.gate is not None else self.needles
        if self.gate is None and len(needles) > 1:
            # a needle with raw UTF-8 cannot occur in ASCII-only bytes; and a writer that stores
            # raw UTF-8 (dsh, JSON.stringify) does not also \u-escape letters: one pass, not two
            if region.isascii():
                needles = [n for n in needles if n.isascii()]
            else:
                needles = [n for n in needles if not n.isascii()] or needles
        for n in needles:
            i = hay.find(n, 0, lim)
            while i >= 0:
                out.append(i)
                i = hay.find(n, i + len(n), lim)
        if len(self.needles) > 1 and self.gate is None:
            out.sort()
        return out

    def hit(self, raw: bytes) -> bool:
        hay = raw.lower() if self.lower else raw
        return any(n in hay for n in self.needles)


def build_prefilter(opts: FindOptions) -> Optional[Prefilter]:
    """The conservative byte prefilter of a search (None: every row must be decoded)."""
    text = opts.text
    if not opts.regex and opts.case:
        once = json.dumps(text, ensure_ascii=False)[1:-1]
        forms = {once, json.dumps(text)[1:-1], json.dumps(once, ensure_ascii=False)[1:-1]}
        needles = sorted({f.encode("utf-8") for f in forms})
        gate = None
        if len(needles) > 1:
            runs = _safe_runs(text)
            best = max(runs, key=len) if runs else ""
            if len(best) >= 4:
                gate = best.encode("ascii")
        return Prefilter(needles, lower=False, gate=gate)
    if opts.regex:
        lit = _regex_literal(text, 0 if opts.case else re.IGNORECASE)
    else:
        if not opts.case:
            pre = _caseless_prefilter(text)
            if pre is not None:
                return pre
        runs = _safe_runs(text)
        lit = max(runs, key=len) if runs else None
    if not lit or len(lit) < 2:
        return None
    if opts.case:
        return Prefilter([lit.encode("ascii")], lower=False)
    return Prefilter([lit.lower().encode("ascii")], lower=True)


_LOWER_OF: Optional[dict[int, list[int]]] = None   # simple lowercase -> the code points mapping to it


def _case_variants(ch: str) -> list[str]:
    """Every character a case-insensitive ``re`` pattern of ``ch`` matches (``re`` compares
    simple lowercase mappings, plus its extra folds such as σ/ς), ``ch`` first."""
    global _LOWER_OF
    tolower: Callable[[int], int] = getattr(_sre, "unicode_tolower", None) or (
        lambda x: ord(chr(x).lower()) if len(chr(x).lower()) == 1 else x)
    if _LOWER_OF is None:
        rev: dict[int, list[int]] = {}
        for x in range(0x1F000):                 # every cased code point is below U+1F000
            lx = tolower(x)
            if lx != x:
                rev.setdefault(lx, []).append(x)
        _LOWER_OF = rev
    low = tolower(ord(ch))
    extra: dict[int, tuple[int, ...]] = getattr(_casefix, "_EXTRA_CASES", {}) if _casefix is not None else {}
    group = [ord(ch)]
    for lx in (low,) + tuple(extra.get(low, ())):
        for x in [lx] + _LOWER_OF.get(lx, []):
            if x not in group:
                group.append(x)
    pat = re.compile(re.escape(ch), re.IGNORECASE)
    return [chr(x) for x in group if pat.fullmatch(chr(x))]


def _caseless_prefilter(text: str, max_variants: int = 2) -> Optional[Prefilter]:
    """The prefilter of a case-insensitive literal holding non-ASCII letters (None: the text has
    none; the ASCII path then applies).  Non-ASCII characters are stored raw (UTF-8) by dsh and
    ``JSON.stringify``, or ``\\uXXXX``-escaped by ASCII-only writers: the needles are the
    case variants of the longest stretch of the text whose non-ASCII letters have at most
    ``max_variants`` combinations (more needles cost a pass each), in both forms, compared with
    the haystack ASCII-lowercased (which also folds the escapes' hex digits)."""
    chars = [(ch, _case_variants(ch) if ord(ch) >= 0x80 else [ch]) for ch in text]
    if text.isascii():
        return None
    best: tuple[int, int, int] = (0, 0, 0)             # (score: bytes, more when ending non-ASCII; start, end)
    for i in range(len(chars)):
        combos, nbytes = 1, 0
        for j in range(i, len(chars)):
            ch, vs = chars[j]
            if not (ch in _SAFE or (ord(ch) >= 0xA0 and ch not in "\u2028\u2029")):
                break                                   # a character some encoder escapes
            combos *= len(vs)
            if combos > max_variants:
                break
            nbytes += len(ch.encode("utf-8"))
            # a needle ending in a non-ASCII character ends in a UTF-8 continuation byte, rare in
            # most logs: bytes.find (which tests a needle's last byte first) skips along faster
            score = nbytes + (8 if ord(ch) >= 0x80 and nbytes >= 4 else 0)
            if score > best[0]:
                best = (score, i, j + 1)
    if best[0] < 3:
        return None if max_variants >= 8 else _caseless_prefilter(text, max_variants * 2)
    _n, i, j = best
    words = [""]
    for _ch, vs in chars[i:j]:
        words = [w + v for w in words for v in vs]
    needles = sorted({w.encode("utf-8").lower() for w in words} | {json.dumps(w)[1:-1].encode("ascii").lower()
                                                                  for w in words})
    return Prefilter(needles, lower=True)


def match_fields(fields: Iterable[Field], matcher: re.Pattern[str], kinds: Optional[Collection[str]] = None,
                 also: Sequence[re.Pattern[str]] = ()) -> Iterator[tuple[Field, re.Match[str], int]]:
    """(field, first match, number of matches) for each field of ``fields`` that matches
    (and matches every pattern of ``also``)."""
    for f in fields:
        if kinds is not None and f.kind not in kinds:
            continue
        m = matcher.search(f.text)
        if m is None:
            continue
        if also and not all(a.search(f.text) for a in also):
            continue
        n = 1
        for _ in matcher.finditer(f.text, m.end() if m.end() > m.start() else m.end() + 1):
            n += 1
        yield f, m, n


# --------------------------------------------------------------------------- scan

def _cancelled(cancel: Cancel) -> bool:
    if cancel is None:
        return False
    is_set = getattr(cancel, "is_set", None)
    if is_set is not None:
        return bool(is_set())
    return bool(cast(Callable[[], object], cancel)())     # no is_set: the callable form


def find(reader: LogReader, opts: FindOptions, *, cancel: Cancel = None,
         progress: Optional[Callable[[int, int], None]] = None,
         stats: Optional[FindStats] = None, limit: Optional[int] = None) -> Iterator[Hit]:
    """Stream every match of ``opts`` in the whole stored log of ``reader`` (a LogReader).

    Yields :class:`Hit` oldest first.  ``stats`` (a FindStats) is filled as the scan goes;
    ``stats.complete`` is True only when the whole log was searched."""
    st = stats if stats is not None else FindStats()
    matcher = compile_matcher(opts)
    pre = build_prefilter(opts)
    src = reader.source
    codec = reader.codec
    st.bytes_total = getattr(src, "size", 0) or 0
    turn: Optional[int] = None        # turn of the last turn/start before the current segment
    segs: Iterator[Union[_Win, Segment]]
    if pre is not None and isinstance(src, RawJsonlSource):
        segs = _jsonl_windows(src)
    else:
        segs = src.forward()
    for seg in segs:
        if _cancelled(cancel):
            st.cancelled = True
            return
        st.segments += 1
        if seg.bad:
            st.problems.append(Problem(code="corrupt-frame", message=seg.bad,
                                       offset=seg.pos if isinstance(seg.pos, int) else None))
            continue
        if seg.rows is not None:
            rows = seg.rows
            st.bytes_scanned += sum(len(r) for _, r in rows)
            for p, raw in rows:
                if _TURN_START in raw:
                    t = _turn_of_row(codec, raw, st, p)
                    if t is not None:
                        turn = t
                if pre is not None and not pre.hit(raw):
                    continue
                for h in _row_hits(codec, raw, p, -1, None, matcher, opts, turn, st):
                    yield h
                    if limit is not None and st.hits >= limit:
                        return
                if _cancelled(cancel):
                    st.cancelled = True
                    return
        else:
            data = seg.data
            lim = getattr(seg, "limit", None) or len(data)
            st.bytes_scanned += lim
            if pre is not None:
                cands = pre.positions(data, lim)
                if not cands:
                    st.segments_skipped += 1
                    t = _last_turn_in(codec, seg, lim, st)
                    if t is not None:
                        turn = t
                    if progress:
                        progress(seg.end if isinstance(seg.end, int) else 0, st.bytes_total)
                    continue
                starts: Optional[list[int]] = _row_starts(data, cands, lim)
            else:
                starts = None
            line = seg.line0
            counted = 0
            tb = _TurnTracker(codec, seg, turn, st, lim)
            for rs, re_ in _row_spans(data, starts, lim):
                if line is not None:
                    line += data.count(b"\n", counted, rs)
                    counted = rs
                if re_ >= lim and seg.torn:
                    continue                      # a torn last row: not an event yet
                raw = data[rs:re_]
                if not raw.strip():
                    continue
                if pre is not None and pre.gate is not None and not pre.hit(raw):
                    continue
                for h in _row_hits(codec, raw, seg.row_pos(rs), seg._abs(rs), line, matcher, opts,
                                   partial(tb.before, rs), st):
                    yield h
                    if limit is not None and st.hits >= limit:
                        return
                if _cancelled(cancel):
                    st.cancelled = True
                    return
            turn = tb.at_end()
        if progress:
            progress(seg.end if isinstance(seg.end, int) else 0, st.bytes_total)
    st.complete = True


class _Win:
    """A window of a raw JSONL file: ``data[:limit]`` are complete rows (the bytes after it are
    the start of the next row, read again with the next window: no copy to cut them off)."""
    __slots__ = ("pos", "end", "data", "limit", "torn", "line0", "text_offset", "bad", "rows")

    def __init__(self, pos: int, data: bytes, limit: int, torn: bool):
        self.pos, self.data, self.limit, self.torn = pos, data, limit, torn
        self.end = pos + limit
        self.line0: Optional[int] = None  # line numbers are not counted on this path (seq is the key)
        self.text_offset = pos
        self.bad: Optional[str] = None
        self.rows: Optional[list[tuple[int, bytes]]] = None

    def row_pos(self, off: int) -> int:
        return self.pos + off

    def _abs(self, off: int) -> int:
        return self.pos + off


WINDOW = 1 << 21


def _jsonl_windows(src: RawJsonlSource) -> Iterator[_Win]:
    """Bounded reads of a raw JSONL snapshot (``src.size``): one copy from the kernel, no joins."""
    at, end = src.header_end, src.size
    while at < end:
        want: int = getattr(src, "block", WINDOW) or WINDOW
        while True:
            chunk = src._pread(min(want, end - at), at)
            if at + len(chunk) >= end:
                cut = len(chunk)
                torn = not chunk.endswith(b"\n")
                break
            nl = chunk.rfind(b"\n")
            if nl >= 0:
                cut, torn = nl + 1, False
                break
            want *= 2                      # a row longer than the window: read more of it
        yield _Win(at, chunk, cut, torn)
        at += cut


class _TurnTracker:
    """The current turn at any row of a segment, found lazily (rows asked in order): forward
    ``find`` of ``"turn/start"`` between asks, each byte looked at once."""

    def __init__(self, codec: RowCodec, seg: Union[_Win, Segment], turn: Optional[int], st: FindStats, lim: int):
        self.codec, self.seg, self.data, self.turn, self.st = codec, seg, seg.data, turn, st
        self.at = 0
        self.lim = lim

    def before(self, rs: int) -> Optional[int]:
        data = self.data
        while self.at < rs:
            i = data.find(_TURN_START, self.at, rs)
            if i < 0:
                self.at = rs
                break
            s = data.rfind(b"\n", 0, i) + 1
            e = data.find(b"\n", i, self.lim)
            e = self.lim if e < 0 else e
            t = _turn_of_row(self.codec, data[s:e], self.st, self.seg.row_pos(s))
            if t is not None:
                self.turn = t
            self.at = e + 1
        return self.turn

    def at_end(self) -> Optional[int]:
        n = self.lim
        if self.at < n:
            t = _last_turn_in(self.codec, self.seg, n, self.st, stop=self.at)
            if t is not None:
                self.turn = t
            self.at = n
        return self.turn


def _row_starts(data: bytes, cands: list[int], lim: int) -> list[int]:
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


def _row_spans(data: bytes, starts: Optional[list[int]], n: int) -> Iterator[tuple[int, int]]:
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


def _turn_of_row(codec: RowCodec, raw: bytes, st: FindStats, pos: object = None) -> Optional[int]:
    st.rows_decoded += 1
    items: list[Item]
    items, _ = codec.decode_row(raw, pos=pos)
    for it in items:
        if type(it) is Event and it.type == "turn/start":
            t = event_turn(it)
            if t is not None:
                return t
    return None


def _last_turn_in(codec: RowCodec, seg: Union[_Win, Segment], end: int, st: FindStats,
                  stop: int = 0) -> Optional[int]:
    """The turn of the last ``turn/start`` row of ``seg.data[stop:end]`` (None: there is none)."""
    data = seg.data
    j = end
    while True:
        i = data.rfind(_TURN_START, stop, j)
        if i < 0:
            return None
        s = data.rfind(b"\n", 0, i) + 1
        e = data.find(b"\n", i, end)
        e = end if e < 0 else e
        if e <= end:
            t = _turn_of_row(codec, data[s:e], st, seg.row_pos(s))
            if t is not None:
                return t
        j = s
        if j <= stop:
            return None


def _row_hits(codec: RowCodec, raw: bytes, pos: object, offset: int, line: Optional[int],
              matcher: re.Pattern[str], opts: FindOptions, turn: TurnRef, st: FindStats) -> Iterator[Hit]:
    """Hits of one stored row; ``turn``: the current turn, or a callable giving it (lazily)."""
    st.rows_decoded += 1
    items: list[Item]
    items, _probs = codec.decode_row(raw, pos=pos, offset=offset, line=line)
    for ev in items:
        if type(ev) is not Event:
            continue
        fields = event_fields(ev)
        if not fields:
            continue
        t = None
        for f, m, n in match_fields(fields, matcher, opts.kinds, opts.also):
            if t is None:
                t = event_turn(ev)
                if t is None:
                    t = turn() if callable(turn) else turn
            snip, a, b = snippet(f.text, m.start(), m.end())
            st.hits += 1
            yield Hit(seq=ev.seq, turn=t, kind=f.kind, snippet=snip, span=(a, b), start=m.start(), end=m.end(),
                      matches=n, tool=f.tool, line=ev.line, offset=ev.offset if ev.offset >= 0 else None,
                      member=ev.member)


def find_all(reader: LogReader, opts: FindOptions, **kw: Any) -> tuple[list[Hit], FindStats]:
    """(hits list, stats): :func:`find` collected (tests, CLI)."""
    stats = kw.pop("stats", None) or FindStats()
    hits = list(find(reader, opts, stats=stats, **kw))
    return hits, stats


__all__ = ["FindOptions", "Hit", "FindStats", "find", "find_all", "compile_matcher", "build_prefilter", "KINDS"]
