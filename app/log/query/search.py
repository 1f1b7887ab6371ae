"""Whole-log search: every stored row, matched on the text a user sees (pure core, no Qt).

:func:`find` reads the stored bytes segment by segment (1 MiB blocks of JSONL, zstd frames,
batches of SQLite rows: the reader's source, so memory stays bounded whatever the log's size),
prefilters on the raw bytes and decodes only the rows that may match:

* a literal is cut at the characters the field text puts between stored strings (``key: value``
  lines, newlines, compact JSON: :data:`_CUTS`; a match may span them) and its longest piece
  is looked for as it is stored: its JSON-escaped form (as dsh writes it, non-ASCII
  as UTF-8), its ``\\uXXXX`` form, and its doubly-escaped form (text inside a JSON string
  inside JSON, e.g. tool arguments).  Quotes, backslashes and control characters stay in the
  piece, in each of their escaped forms (raw: a quote of the compact JSON the field text shows;
  escaped once; twice), so a quoted query keeps its prefilter.  A segment holding none of them is skipped unparsed;
  the ``\\uXXXX`` forms are looked for only from a window's first escape of a non-ASCII
  character (one pass: the C library's ``strstr`` of ``\\u`` through :mod:`.cfind`, each place
  checked, else a regex), so a window of another writer's rows is never missed;
* a case-insensitive literal (and the literal part of a case-insensitive regular expression)
  is looked for as the folded images (:data:`FOLD`, one ``bytes.translate``) of the case
  variants ``re.IGNORECASE`` accepts for a stretch of it, ASCII letters included (k: the Kelvin
  sign, s: the long s, i: the Turkish ı/İ); when every raw variant holds one non-ASCII byte
  (ñ/Ñ: C3), memchr looks for that byte first and only the rows holding it are folded;
  a pattern with no literal stretch of 3 bytes decodes every row;
* a candidate row is decoded (:class:`~app.log.format.codec.RowCodec`) and its events' fields
  (:func:`app.log.query.textview.shown_fields`: the text fields, generic rows' payloads, the
  tool-call blocks of assistant messages) are matched as decoded text, so quotes, newlines
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
from itertools import compress
from operator import ne
from typing import TYPE_CHECKING, Any, Optional, Protocol, Union, cast
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

from ..index import cfind
from ..format.limits import MAX_ROW_BYTES
from ..format.model import BadKind, Event, Item, Problem
from ..source.sources import RawJsonlSource, Segment
from .textview import ASSISTANT, KINDS, REASONING, TOOL_CALL, USER, Field, shown_fields, event_turn, fold_case, fold_finditer, normalize_kind, snippet

if TYPE_CHECKING:
    import sre_parse as _sre_parse   # typeshed has stubs for this name of the module only
    from ..format.codec import RowCodec
    from ..index.reader import LogReader
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
# characters the field text puts between stored strings (textview: ``key: value`` lines of tool
# arguments, ``CODE: message``, parts joined by newlines, nested values as compact JSON): a match
# may span one, so a needle never holds one (it is cut from a stretch of the text without them)
_JOINTS = frozenset('\n :,"[]{}\\')
# characters every JSON encoder escapes (quote, backslash, controls but the newline, which is a
# joint): a needle holds them in their escaped forms, each level of escaping a needle of its own
# (a text's quotes and backslashes are stored alike: a quote of the field text's compact JSON is
# the stored JSON's, escaped as deep as the string holding it)
_ESCAPED = frozenset('"\\' + "".join(map(chr, range(0x20))).replace("\n", ""))
# where a literal is cut for its needle: the joints but the escaped characters
_CUTS = _JOINTS - _ESCAPED
_TURN_START = b'"turn/start"'
# a window's bytes: fresh bytes, or the reader's one reused buffer (:func:`_jsonl_windows`)
Buf = Union[bytes, bytearray]


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
    call: Optional[str] = None       # tool-call: the call's id
    block: bool = False              # tool-call: a block of an assistant message (kept only when no
                                     # tool/call row of its id follows: a call cut by max-tokens)

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

class FoldMatch:
    """One match of a :class:`FoldMatcher` (the ``start``/``end``/``span``/``group`` of ``re.Match``)."""
    __slots__ = ("string", "_a", "_b")

    def __init__(self, string: str, a: int, b: int):
        self.string, self._a, self._b = string, a, b

    def start(self) -> int:
        return self._a

    def end(self) -> int:
        return self._b

    def span(self) -> tuple[int, int]:
        return self._a, self._b

    def group(self) -> str:
        return self.string[self._a:self._b]


class FoldMatcher:
    """A caseless literal matched with full case folding (:func:`~app.log.query.textview.fold_case`:
    ``str.casefold``, the Turkish i's to "i"): "strasse" finds "Straße", "file" finds "ﬁle".
    A match's span covers whole characters of the text (:func:`~app.log.query.textview.fold_finditer`)."""

    def __init__(self, text: str, word: bool = False):
        self.pattern = text
        self.needle = fold_case(text)
        self.word = word

    def finditer(self, text: str) -> Iterator[FoldMatch]:
        for a, b in fold_finditer(text, self.needle, self.word):
            yield FoldMatch(text, a, b)

    def search(self, text: str) -> Optional[FoldMatch]:
        return next(self.finditer(text), None)

    def __repr__(self) -> str:
        return f"FoldMatcher({self.pattern!r}, word={self.word})"


# what a field is matched with: a regular expression (regex or case-sensitive), or a caseless literal
Matcher = Union[re.Pattern[str], FoldMatcher]


def compile_matcher(opts: FindOptions) -> Matcher:
    """The matcher of decoded field text (raises ValueError on a bad regex): a caseless literal
    is a :class:`FoldMatcher` (full case folding); a regular expression, or a case-sensitive
    literal, an ``re`` pattern (a caseless regular expression: ``re.IGNORECASE``, simple case
    folding)."""
    if not opts.text:
        raise ValueError("empty search text")
    if not opts.regex and not opts.case:
        return FoldMatcher(opts.text, opts.word)
    p = opts.text if opts.regex else re.escape(opts.text)
    if opts.word:
        p = r"(?<!\w)(?:" + p + r")(?!\w)"
    try:
        return re.compile(p, 0 if opts.case else re.IGNORECASE)
    except re.error as e:
        raise ValueError(f"bad regular expression: {e}") from None


def _pieces(s: str) -> list[str]:
    """``s`` cut at the joints but the escaped characters (:data:`_CUTS`): each piece of a match
    lies in one stored string (or one stretch of JSON the field text shows as stored)."""
    return [p for p in re.split("[" + re.escape("".join(sorted(_CUTS))) + "]", s) if p]


def _stored_forms(text: str) -> tuple[set[bytes], set[bytes]]:
    """(raw UTF-8 forms, ``\\uXXXX`` forms) of ``text`` as stored: its escaped characters
    (:data:`_ESCAPED`) at each level of escaping (:func:`_level_form`; one level when it has
    none), its non-ASCII characters raw, escaped once or twice (an ASCII-only writer)."""
    levels = (0, 1, 2) if any(c in _ESCAPED for c in text) else (1,)
    raw: set[bytes] = set()
    esc: set[bytes] = set()
    for lv in levels:
        raw.add("".join(_level_form(c, lv).decode() if c in _ESCAPED else c for c in text).encode("utf-8"))
        for deep in (1, 2):
            esc.add("".join(_level_form(c, lv).decode() if c in _ESCAPED else
                            (c if c < "\x80" else _level_form(c, deep).decode()) for c in text).encode("ascii"))
    return raw, esc - raw


def _safe_runs(s: str) -> list[str]:
    runs: list[str] = []
    cur: list[str] = []
    for ch in s:
        if ch in _SAFE and ch not in _JOINTS:
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


def _fold_table() -> bytes:
    """The byte folding of a caseless prefilter (one ``bytes.translate`` of a window): ASCII
    letters to lower case; UTF-8 continuation bytes 0x80–0x9F onto 0xA0–0xBF (the case bit of
    most two-byte letters: Ñ C3 91 / ñ C3 B1, Д D0 94 / д D0 B4); two-byte lead bytes in pairs
    (Π CE A0 / π CF 80).  It over-matches (unrelated letters fold together), never under-matches:
    a needle is the folded image of every case variant it stands for (checked when it is built)."""
    t = bytearray(range(256))
    for c in range(0x41, 0x5B):
        t[c] = c + 0x20
    for c in range(0x80, 0xA0):
        t[c] = c + 0x20
    for c in range(0xC2, 0xE0):
        t[c] = c & 0xFE
    return bytes(t)


FOLD = _fold_table()
# a \u escape of a character >= U+0080 (as an ASCII-only JSON writer stores non-ASCII text)
_ESC_NONASCII = re.compile(rb"\\u(?!00[0-7])[0-9a-fA-F]{4}")
ANCHOR_ROWS = 32                   # rows holding a caseless prefilter's anchor byte checked one by one, per window
ANCHOR_HITS = 256                  # a needle's rare byte: places checked one by one per window before a plain find
# (or one per KiB of the window, if more: a place checked costs ~0.3 µs, a pass of the escape regex
# ~0.4 ns a byte, so up to ~1 place per 1.3 KB the places cost less; a 1 MiB window of a log holds
# ~260 of a capital letter: with 256 the regex took over in half the windows)
ESC_PLACES = 4                     # places of ``\\u`` that are no escape wanted, before the regex takes over
# (plus one per 4 KiB looked through: strstr and a place checked in Python cost ~1 µs, the regex
# ~0.37 ns a byte; a window of ANSI colours, ``\\u001b`` everywhere, costs a few µs more than the regex alone)
_HEX = frozenset(b"0123456789abcdefABCDEF")


def _is_esc(data: Buf, p: int, lim: int) -> bool:
    """``data[p:p+6]`` (inside ``lim``), a ``\\u`` found there, is the escape of a non-ASCII character."""
    if p + 6 > lim:
        return False
    h = data[p + 2:p + 6]
    return all(c in _HEX for c in h) and not (h[0] == h[1] == 0x30 and h[2] < 0x38)


def first_escape(data: Buf, start: int, lim: int, use_c: bool = True, places: Optional[int] = None) -> int:
    """The offset of the first ``\\uXXXX`` escape of a non-ASCII character wholly inside
    ``data[start:lim]`` (-1: none), as :data:`_ESC_NONASCII` finds it: the C library's ``strstr``
    of ``\\u`` (:mod:`.cfind`; ~1.6 ms per 100 MB, the regex ~37) where it is there, each place
    checked; the regex for the rest of the window once more than ``places`` (:data:`ESC_PLACES`)
    places and one per 4 KiB looked through are no such escape.  Both give the same offset."""
    lim = min(lim, len(data))
    start = max(start, 0)
    if use_c and cfind.AVAILABLE and lim - start >= 6:
        most, fails, frm = ESC_PLACES if places is None else places, 0, start
        with cfind.Pinned(data) as pin:
            p = pin.scan(b"\\u", frm, lim)
            while p >= 0:
                if _is_esc(data, p, lim):
                    return p
                fails, frm = fails + 1, p + 1
                if fails > most + ((p - start) >> 12):
                    break
                p = pin.scan(b"\\u", frm, lim)
            if p == -1:
                return -1
        start = frm                        # (places too many, or NULs: the regex from there on)
    m = _ESC_NONASCII.search(data, start, lim)
    return -1 if m is None else m.start()


def _rarity(b: int) -> int:
    """How common byte ``b`` is in a log, roughly (lower: rarer): the byte of a needle that memchr
    looks for (a continuation byte: most logs are mostly ASCII, and non-ASCII text spreads over
    64 of them; then lead bytes, capitals, punctuation, digits, small letters, JSON's own)."""
    if b >= 0x80:
        return 0 if b < 0xC0 else 1
    c = chr(b)
    if c.isupper():
        return 2
    if c in ' "\\,:{}.\n/':
        return 6
    if c.isdigit():
        return 4
    if c.islower():
        return 5
    return 3


def _rare_byte(n: bytes) -> tuple[bytes, int]:
    """(the rarest byte of needle ``n`` by :func:`_rarity`, its first offset in ``n``)."""
    b = min(n, key=_rarity)
    return bytes([b]), n.index(b)


def _find_anchored(hay: Buf, n: bytes, g: bytes, k: int, start: int, end: int, out: list[int], base: int = 0) -> None:
    """Append ``base +`` every position of ``n`` in ``hay[start:end]`` to ``out``, found by memchr
    of its byte ``g`` (at offset ``k`` of ``n``), each place checked; when ``g`` turns out common
    (more than :data:`ANCHOR_HITS` places) a plain ``find`` does the rest."""
    p = hay.find(g, start + k, end)
    hits, most = 0, max(ANCHOR_HITS, (end - start) >> 10)
    while p >= 0:
        hits += 1
        if hits > most:
            _find_all(hay, n, p - k, end, out, base)
            return
        i = p - k
        if hay.startswith(n, i) and i + len(n) <= end:
            out.append(base + i)
        p = hay.find(g, p + 1, end)


@dataclass
class Prefilter:
    """Byte needles a candidate row must contain (any of them).

    ``fold`` None: the needles are compared with the raw bytes; ``gate``: one needle every form
    contains (a run no encoder escapes): a segment is searched for it alone, and the rows holding
    it are then checked for the needles (one pass, not three).

    ``fold`` (a translate table, :data:`FOLD`): caseless.  A window is folded once and searched
    for ``needles`` (the folded images of the raw UTF-8 case variants: one pass each, the ones
    with non-ASCII bytes skipped in an ASCII window); ``esc`` (the folded images of the
    ``\\uXXXX``-escaped variants) are looked for only from the window's first escape of a
    non-ASCII character, which most windows of a raw UTF-8 log do not hold."""
    needles: list[bytes]
    fold: Optional[bytes] = None
    gate: Optional[bytes] = None
    esc: list[bytes] = field(default_factory=list)
    anchor: Optional[bytes] = None   # (caseless) one non-ASCII byte every raw variant holds

    def __post_init__(self) -> None:
        self._ascii = all(n.isascii() for n in self.needles)
        # needles with a non-ASCII byte: found by memchr of their rarest byte (then checked)
        self._rare = [(n,) + _rare_byte(n) for n in self.needles if not n.isascii()]
        self._plain = [n for n in self.needles if n.isascii()]
        # an escaped needle may start before its first escape of a non-ASCII character
        self._esc_lead = max((m.start() if m else len(n) for n in self.esc
                              for m in [_ESC_NONASCII.search(n)]), default=0)
        # (case-sensitive) escaped needles: memchr of one rare byte they all hold, at their offsets
        self._esc_rare: Optional[tuple[bytes, list[tuple[bytes, int]]]] = None
        if self.esc and self.fold is None:
            common = set(self.esc[0]).intersection(*self.esc[1:])
            if common:
                g = bytes([min(common, key=_rarity)])
                self._esc_rare = g, [(n, n.index(g)) for n in self.esc]

    @property
    def lower(self) -> bool:
        return self.fold is not None

    def positions(self, data: Buf, lim: Optional[int] = None) -> list[int]:
        lim = len(data) if lim is None else lim
        out: list[int] = []
        if self.fold is not None:
            self._folded_positions(data, lim, out)
        elif self.gate is not None:
            _find_all(data, self.gate, 0, lim, out)
        elif self._ascii:
            for n in self.needles:
                _find_all(data, n, 0, lim, out)
        else:
            # raw UTF-8 needles cannot occur in ASCII-only bytes (isascii stops at the first other
            # byte); else memchr of the needle's rarest byte (a UTF-8 continuation byte)
            if not data.isascii():
                for n, g, k in self._rare:
                    _find_anchored(data, n, g, k, 0, lim, out)
                for n in self._plain:
                    _find_all(data, n, 0, lim, out)
            self._escaped_positions(data, data, lim, out)
        if len(out) > 1 and (len(self.needles) > 1 or self.esc):
            out.sort()
        return out

    def _escaped_positions(self, data: Buf, hay: Optional[Buf], lim: int, out: list[int]) -> None:
        """The ``esc`` needles.  Case-sensitive: by memchr of a rare byte they all hold, each
        place checked, as long as that byte is rare in the window.  Else (and for the rest of the
        window) from the first ``\\u`` escape of a non-ASCII character of ``data[:lim]`` on
        (most windows of a raw UTF-8 log hold none: one regex pass, no more)."""
        if not self.esc:
            return
        start = 0
        if hay is not None and self._esc_rare is not None:
            g, pairs = self._esc_rare
            p = data.find(g, 0, lim)
            hits, most = 0, max(ANCHOR_HITS, lim >> 10)
            while p >= 0:
                hits += 1
                if hits > most:
                    start = max(0, p - max(k for _n, k in pairs))
                    break
                for n, k in pairs:
                    i = p - k
                    if i >= 0 and data.startswith(n, i) and i + len(n) <= lim:
                        out.append(i)
                p = data.find(g, p + 1, lim)
            else:
                return
        first = first_escape(data, start, lim)
        if first < 0:
            return
        at = max(start, first - self._esc_lead)     # (a needle may start before its first escape)
        if hay is None:                   # (folded needles: the escapes' hex digits ASCII-lowercased)
            hay, base = data[at:lim].lower(), at
        else:
            base = 0
        for n in self.esc:
            _find_all(hay, n, at - base, lim - base, out, base)

    def _folded_positions(self, data: Buf, lim: int, out: list[int]) -> None:
        anchor = self.anchor
        if anchor is not None:
            # every raw variant holds this byte: memchr finds it, or says no raw variant is here;
            # the rows holding it are checked folded; a byte that turns out common in this window
            # (more than ANCHOR_ROWS rows) gives way to folding the rest of the window
            p, rows = data.find(anchor, 0, lim), 0
            while p >= 0:
                s = data.rfind(b"\n", 0, p) + 1
                e = data.find(b"\n", p, lim)
                e = lim if e < 0 else e
                if rows >= ANCHOR_ROWS:
                    self._fold_search(data, s, lim, out)
                    break
                rows += 1
                if self.hit_raw(data[s:e]):
                    out.append(p)
                p = data.find(anchor, e, lim)
        else:
            self._fold_search(data, 0, lim, out)
        self._escaped_positions(data, None, lim, out)

    def _fold_search(self, data: Buf, start: int, lim: int, out: list[int]) -> None:
        needles = self.needles
        if self._ascii:
            hay = data[start:lim].lower()   # (ASCII needles: the ASCII fold is all they need; a bit faster)
        elif data.isascii():                # (needles with non-ASCII bytes cannot be here)
            needles = [n for n in needles if n.isascii()]
            if not needles:
                return
            hay = data[start:lim].lower()
        else:
            hay = data[start:lim].translate(FOLD)
            for n in self._plain:
                _find_all(hay, n, 0, lim - start, out, start)
            for n, g, k in self._rare:   # (ſ, ẞ, ligatures: memchr of a byte they hold, rare in most logs)
                _find_anchored(hay, n, g, k, 0, lim - start, out, start)
            return
        for n in needles:
            _find_all(hay, n, 0, lim - start, out, start)

    def hit_raw(self, raw: Buf) -> bool:
        """A raw UTF-8 needle (folded) is in ``raw``."""
        hay = raw.translate(FOLD)
        return any(n in hay for n in self.needles)

    def hit(self, raw: bytes) -> bool:
        if self.fold is None:
            return any(n in raw for n in self.needles) or any(n in raw for n in self.esc)
        hay = raw.translate(self.fold)
        return any(n in hay for n in self.needles) or any(n in hay for n in self.esc)


def _find_all(hay: Buf, n: bytes, start: int, end: int, out: list[int], base: int = 0) -> None:
    """Append ``base +`` every position of ``n`` in ``hay[start:end]`` (non-overlapping) to ``out``."""
    i = hay.find(n, start, end)
    while i >= 0:
        out.append(base + i)
        i = hay.find(n, i + len(n), end)


def build_prefilter(opts: FindOptions) -> Optional[Prefilter]:
    """The conservative byte prefilter of a search (None: every row must be decoded)."""
    text = opts.text
    if not opts.regex and opts.case:
        pieces = _pieces(text)
        if not pieces:
            return None
        text = max(pieces, key=lambda p: len(p.encode("utf-8")))
        raw_forms, esc_forms = _stored_forms(text)
        gate = None
        if len(raw_forms | esc_forms) > 1:
            runs = _safe_runs(text)
            best = max(runs, key=len) if runs else ""
            if len(best) >= 4:
                gate = best.encode("ascii")
        if text.isascii():             # (nothing to escape but quotes, backslashes, controls: all forms ASCII)
            return Prefilter(sorted(raw_forms | esc_forms), gate=gate)
        return Prefilter(sorted(raw_forms), gate=gate, esc=sorted(esc_forms))
    if opts.regex:
        lit = _regex_literal(text, 0 if opts.case else re.IGNORECASE)
        if not lit or len(lit) < 2:
            return None
        if opts.case:
            return Prefilter([lit.encode("ascii")])
        return caseless_prefilter(lit)
    return fold_prefilter(text)


_LOWER_OF: Optional[dict[int, list[int]]] = None   # simple lowercase -> the code points mapping to it


def _case_variants(ch: str) -> list[str]:
    """Every character a case-insensitive ``re`` pattern of ``ch`` matches (``re`` compares
    simple lowercase mappings, plus its extra folds such as σ/ς), ``ch`` first."""
    global _LOWER_OF
    tolower: Callable[[int], int] = getattr(_sre, "unicode_tolower", None) or (
        lambda x: ord(chr(x).lower()) if len(chr(x).lower()) == 1 else x)
    if _LOWER_OF is None:
        rev: dict[int, list[int]] = {}
        every = range(0x1F000)                   # every cased code point is below U+1F000
        lows = list(map(tolower, every))
        for x in compress(every, map(ne, every, lows)):      # (C-level: the ~1,400 cased ones reach Python)
            rev.setdefault(lows[x], []).append(x)
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


def _storable(ch: str) -> bool:
    """Stored the same by every JSON encoder up to the ``\\uXXXX`` escape of non-ASCII text."""
    return ch in _SAFE or (ord(ch) >= 0xA0 and ch not in "\u2028\u2029")


# one place of the stored text: the characters it may hold (case variants), as a needle is built
Slot = Sequence[str]
# (needles' raw folded images, escaped images, non-ASCII bytes every raw variant holds), or None
_Needles = Optional[tuple[set[bytes], set[bytes], set[int]]]
_MAX_NEEDLES = 8                   # raw images a stretch may stand for (each one a pass over a window)
_MAX_STRETCH = 32                  # characters of a needle a stretch may span
_MAX_START = 256                   # where a stretch may start (a long pasted text: its first part)


def _esc_form(ch: str) -> bytes:
    return json.dumps(ch)[1:-1].encode("ascii").lower()


def _level_form(ch: str, level: int) -> bytes:
    """A character JSON escapes (:data:`_ESCAPED`) as stored ``level`` strings deep (lowercase
    hex, as :data:`FOLD` leaves a window): 0 itself (a quote of JSON the field text shows, e.g. a
    nested value's compact JSON), 1 escaped once (``\\"``: text of a JSON string), 2 twice (text of
    a string inside a string: tool arguments)."""
    out = ch
    for _ in range(level):
        out = json.dumps(out)[1:-1]
    return out.encode("ascii").lower()


def _stretch_needles(segs: Iterable[Sequence[Slot]]) -> _Needles:
    """The needles of a stretch of a search text stored as any of ``segs`` (each a list of slots:
    the characters each place may hold); None: a slot holds a character a needle cannot hold
    (a joint, a character an encoder may write two ways), or there are too many needles.
    A stretch holding characters JSON escapes (:data:`_ESCAPED`: quote, backslash, controls)
    stands for each level of escaping (:func:`_level_form`)."""
    raw: set[bytes] = set()
    esc: set[bytes] = set()
    anchors: Optional[set[int]] = None
    for seg in segs:
        levels = (0, 1, 2) if any(v in _ESCAPED for slot in seg for v in slot) else (1,)
        common: set[int] = set()
        for lv in levels:
            r: set[bytes] = {b""}
            e: set[bytes] = {b""}
            d: set[bytes] = {b""}
            for slot in seg:
                if not all(v in _ESCAPED or (v not in _JOINTS and _storable(v)) for v in slot):
                    return None
                r = {x + (_level_form(v, lv) if v in _ESCAPED else v.encode("utf-8").translate(FOLD))
                     for x in r for v in slot}
                # (\uXXXX, and \\uXXXX in text inside a JSON string inside JSON, e.g. tool arguments)
                e = {x + (_level_form(v, lv) if v in _ESCAPED else _esc_form(v)) for x in e for v in slot}
                d = {x + (_level_form(v, lv) if v in _ESCAPED else _esc_form(v).replace(b"\\", b"\\\\"))
                     for x in d for v in slot}
                if len(r) > _MAX_NEEDLES or len((e | d) - r) > 16:
                    return None
            raw |= r
            esc |= e | d
        for slot in seg:
            both = set(slot[0].encode("utf-8"))
            for v in slot[1:]:
                both &= set(v.encode("utf-8"))
            common |= {x for x in both if x >= 0x80}
        if len(raw) > _MAX_NEEDLES or len(esc - raw) > 16:
            return None
        anchors = common if anchors is None else anchors & common
    if not raw:
        return None
    return raw, esc - raw, anchors or set()


def _caseless(length: int, needles_of: Callable[[int, int], _Needles], last: Callable[[int], str],
              max_needles: int = 1) -> Optional[Prefilter]:
    """The prefilter of the longest stretch ``[i, j)`` of a text of ``length`` characters whose
    needles (``needles_of(i, j)``) are at most ``max_needles`` raw images (each image is a pass
    over a window) and at most 16 escaped ones; short: a wider stretch with more needles."""
    best: Optional[tuple[int, set[bytes], set[bytes], set[int]]] = None
    for i in range(min(length, _MAX_START)):
        for j in range(i + 1, min(length, i + _MAX_STRETCH) + 1):
            got = needles_of(i, j)
            if got is None or len(got[0]) > max_needles:
                break
            raw, esc, anchors = got
            n = min(len(x) for x in raw)
            # a needle ending in a non-ASCII character ends in a UTF-8 continuation byte, rare in
            # most logs: bytes.find (which tests a needle's last byte first) skips along faster
            score = n + (8 if ord(last(j)) >= 0x80 and n >= 4 else 0)
            if score < 3 and not any(x.isascii() for x in raw):
                score = 3                  # (one non-ASCII character, "ñ": short, yet its lead byte is rare)
            if best is None or score > best[0]:
                best = (score, raw, esc, anchors)
    if best is None or best[0] < 6:
        # short: a wider stretch with more needles (more passes) may be worth it; else the best so far
        wider = None if max_needles >= _MAX_NEEDLES else _caseless(length, needles_of, last, max_needles * 2)
        if wider is not None and (best is None or min(map(len, wider.needles)) > best[0]):
            return wider
        if best is None or best[0] < 3:
            return None
    _s, raw, esc, anchors = best
    return Prefilter(sorted(raw), fold=FOLD, esc=sorted(esc), anchor=_anchor(anchors))


def caseless_prefilter(text: str, max_needles: int = 1) -> Optional[Prefilter]:
    """The prefilter of a case-insensitive regular expression's literal (as ``re.IGNORECASE``
    matches it: every case variant of every character, ASCII letters included: K matches the
    Kelvin sign, s the long s, i the dotted and dotless Turkish i).  The needles are the folded
    images (:data:`FOLD`) of the case variants of the longest stretch of the text whose variants
    fold into few raw images."""
    slots = [_case_variants(ch) for ch in text]
    memo: dict[tuple[int, int], _Needles] = {}

    def needles_of(i: int, j: int) -> _Needles:
        if (i, j) not in memo:
            memo[i, j] = _stretch_needles([slots[i:j]])
        return memo[i, j]
    return _caseless(len(text), needles_of, lambda j: text[j - 1], max_needles)


class _FoldTable:
    """Which characters fold (:func:`~app.log.query.textview.fold_case`) to which strings."""

    def __init__(self) -> None:
        every = range(0x1F000)                  # every character that folds to another is below U+1F000
        chars = list(map(chr, every))
        folds = list(map(str.casefold, chars))  # (C-level: the ~1,500 that change reach Python)
        rev: dict[str, list[str]] = {}
        for c, f in compress(zip(chars, folds), map(ne, chars, folds)):
            f = fold_case(c)                    # (the Turkish i's)
            rev.setdefault(f, []).append(c)
        rev.setdefault("i", []).append("\u0131")   # (ı: casefold keeps it, fold_case makes it "i")
        self.rev = rev
        self.multi = sorted(f for f in rev if len(f) > 1)
        self.by_first: dict[str, list[str]] = {}
        for f in self.multi:
            self.by_first.setdefault(f[0], []).append(f)

    def chars(self, unit: str) -> list[str]:
        """The characters folding to ``unit`` exactly (empty: none)."""
        own = [unit] if len(unit) == 1 and fold_case(unit) == unit else []
        return own + self.rev.get(unit, [])


_FOLDS: Optional[_FoldTable] = None


def _fold_segs(n: str, i: int, j: int, ft: _FoldTable, cap: int = 64) -> Optional[list[list[Slot]]]:
    """Every way the characters of a text can fold to cover ``n[i:j]`` of a folded needle ``n``
    (None: more than ``cap``): each a list of slots (the characters each place may hold).  A
    character whose folding is longer than one may straddle either end of the stretch (ß: "ss"
    holding the stretch's first s and the needle's s before it, or the text's s before the match:
    a match may start or end inside a character's folded form); its folding must then agree with
    the needle there."""
    head, tail, part = n[:i], n[j:], n[i:j]
    out: list[list[Slot]] = []

    def rest(p: int, slots: list[Slot]) -> None:
        if len(out) > cap:
            return
        if p == j:
            out.append(slots)
            return
        for q in range(p + 1, min(j, p + 3) + 1):
            cs = ft.chars(n[p:q])
            if cs:
                rest(q, slots + [cs])
        left = n[p:j]
        for unit in ft.by_first.get(n[p], ()):
            w = unit[len(left):]
            if len(unit) > len(left) and unit.startswith(left) and (tail.startswith(w) or w.startswith(tail)):
                out.append(slots + [ft.chars(unit)])        # straddling the end
    rest(i, [])
    for unit in ft.multi:                                   # straddling the start
        for k in range(1, len(unit)):
            u, v = unit[:k], unit[k:]
            if not (head.endswith(u) or u.endswith(head)):
                continue
            if len(v) <= len(part):
                if part.startswith(v):
                    rest(i + len(v), [ft.chars(unit)])
            elif v.startswith(part):
                w = v[len(part):]
                if tail.startswith(w) or w.startswith(tail):
                    out.append([ft.chars(unit)])
    return None if len(out) > cap else out


def fold_prefilter(text: str, max_needles: int = 1) -> Optional[Prefilter]:
    """The prefilter of a caseless literal as :class:`FoldMatcher` matches it (full case
    folding): the needles stand for every way a text can fold onto a stretch of the folded
    search text (ß or ẞ or "ss" or "ſs" for "ss", ﬁ for "fi", a ß whose "ss" holds the match's
    first s…), as the folded images (:data:`FOLD`) of their raw UTF-8 (and the ``\\uXXXX``
    forms)."""
    global _FOLDS
    if _FOLDS is None:
        _FOLDS = _FoldTable()
    ft = _FOLDS
    n = fold_case(text)
    memo: dict[tuple[int, int], _Needles] = {}

    def needles_of(i: int, j: int) -> _Needles:
        if (i, j) not in memo:
            segs = _fold_segs(n, i, j, ft)
            memo[i, j] = None if segs is None else _stretch_needles(segs)
        return memo[i, j]
    return _caseless(len(n), needles_of, lambda j: n[j - 1], max_needles)


def _anchor(common: Collection[int]) -> Optional[bytes]:
    """One of ``common`` (non-ASCII bytes every raw UTF-8 case variant of the stretch holds:
    ñ/Ñ: C3), lead bytes first (a continuation byte is shared by more characters); None: none."""
    best: Optional[int] = None
    for b in sorted(common):
        if best is None or (b >= 0xC0) > (best >= 0xC0):
            best = b
    return None if best is None else bytes([best])


def match_fields(fields: Iterable[Field], matcher: Matcher, kinds: Optional[Collection[str]] = None,
                 also: Sequence[re.Pattern[str]] = ()) -> Iterator[tuple[Field, Union[re.Match[str], FoldMatch], int]]:
    """(field, first match, number of matches) for each field of ``fields`` that matches
    (and matches every pattern of ``also``)."""
    for f in fields:
        if kinds is not None and f.kind not in kinds:
            continue
        if type(matcher) is FoldMatcher:
            it = matcher.finditer(f.text)
            fm = next(it, None)
            if fm is None or (also and not all(a.search(f.text) for a in also)):
                continue
            yield f, fm, 1 + sum(1 for _ in it)
            continue
        rx = cast(re.Pattern[str], matcher)
        m = rx.search(f.text)
        if m is None:
            continue
        if also and not all(a.search(f.text) for a in also):
            continue
        n = 1
        for _ in rx.finditer(f.text, m.end() if m.end() > m.start() else m.end() + 1):
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
    ``stats.complete`` is True only when the whole log was searched.  A match in a tool-call
    block of an assistant message is yielded only when no ``tool/call`` row of that call
    matches after it (the card of the call holds the same text)."""
    st = stats if stats is not None else FindStats()
    return _without_echoes(_find_rows(reader, opts, cancel, progress, st, limit), st)


ECHO_WAIT = 4096                   # hits held back while a call block waits for its tool/call row


def _without_echoes(hits: Iterator[Hit], st: FindStats) -> Iterator[Hit]:
    """``hits`` less each tool-call block hit whose call's ``tool/call`` row hits (the row follows
    the assistant message, and holds the same text: it hits whenever the block does).  While a
    block waits, later hits are held back (order kept) until every waiting call's row came, or a
    user/assistant hit (a later message: its calls' rows would have come), or the end."""
    held: list[Hit] = []
    waiting: set[str] = set()
    for h in hits:
        if h.block:
            held.append(h)
            if h.call is not None:
                waiting.add(h.call)
            continue
        if held:
            if h.kind == TOOL_CALL and h.call in waiting:
                gone = [x for x in held if x.block and x.call == h.call]
                st.hits -= len(gone)
                held = [x for x in held if not (x.block and x.call == h.call)]
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
               limit: Optional[int]) -> Iterator[Hit]:
    matcher = compile_matcher(opts)
    pre = build_prefilter(opts)
    src = reader.source
    codec = reader.codec
    st.bytes_total = getattr(src, "size", 0) or 0
    turn: TurnRef = None              # turn of the last turn/start before the current segment
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
            st.problems.append(Problem(code=getattr(seg, "bad_kind", "corrupt-frame"), message=seg.bad,
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
                    if isinstance(seg, _Win) and isinstance(src, RawJsonlSource):
                        # (the turn its last turn/start row names: found only if a hit asks)
                        if data.rfind(_TURN_START, 0, lim) >= 0:
                            turn = _LaterTurn(codec, src, st, seg.pos, seg.pos + lim, turn)
                    else:
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
                raw = bytes(data[rs:re_])         # (no copy of bytes; the reused buffer: copied)
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

    def _abs(self, off: int) -> int:
        return self.pos + off


WINDOW = 1 << 21


def _jsonl_windows(src: RawJsonlSource) -> Iterator[_Win]:
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
            chunk: Buf = src.pread_into(buf, at) if n == len(buf) else src._pread(n, at)
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
            stop = src._find_newline(at + n, end)
            w = _Win(at, b"", stop - at, stop >= end and src._pread(1, end - 1) != b"\n")
            w.bad, w.bad_kind = f"row of more than {MAX_ROW_BYTES >> 20} MiB is over the row limit (skipped)", "over-limit"
            yield w
            at = stop
            continue
        yield _Win(at, chunk, cut, torn)
        at += cut


class _LaterTurn:
    """The turn at the end of a skipped window of a raw JSONL file: that of its last ``turn/start``
    row (bytes ``[lo, hi)``), else ``prev``'s; found only when a hit asks, the window then read
    again (most windows are skipped and never asked: no row decoded for them)."""
    __slots__ = ("_args", "_value")

    def __init__(self, codec: RowCodec, src: RawJsonlSource, st: FindStats, lo: int, hi: int, prev: TurnRef):
        self._args: Optional[tuple[RowCodec, RawJsonlSource, FindStats, int, int, TurnRef]] = (
            codec, src, st, lo, hi, prev)
        self._value: Optional[int] = None

    def __call__(self) -> Optional[int]:
        chain: list[_LaterTurn] = []
        at: TurnRef = self
        t: Optional[int] = None
        while isinstance(at, _LaterTurn):     # (iterative: a run of windows none of which says)
            if at._args is None:
                t = at._value
                break
            codec, src, st, lo, hi, prev = at._args
            chain.append(at)
            t = _last_turn_in(codec, _Win(lo, src._pread(hi - lo, lo), hi - lo, False), hi - lo, st)
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


class _TurnTracker:
    """The current turn at any row of a segment, found lazily (rows asked in order): forward
    ``find`` of ``"turn/start"`` between asks, each byte looked at once."""

    def __init__(self, codec: RowCodec, seg: Union[_Win, Segment], turn: TurnRef, st: FindStats, lim: int):
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
        return _turn_now(self.turn)

    def at_end(self) -> TurnRef:
        n = self.lim
        if self.at < n:
            t = _last_turn_in(self.codec, self.seg, n, self.st, stop=self.at)
            if t is not None:
                self.turn = t
            self.at = n
        return self.turn


def _row_starts(data: Buf, cands: list[int], lim: int) -> list[int]:
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


def _row_spans(data: Buf, starts: Optional[list[int]], n: int) -> Iterator[tuple[int, int]]:
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


def _turn_of_row(codec: RowCodec, raw: Buf, st: FindStats, pos: object = None) -> Optional[int]:
    st.rows_decoded += 1
    items: list[Item]
    items, _ = codec.decode_row(bytes(raw), pos=pos)
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
            snip, a, b = snippet(f.text, m.start(), m.end())
            st.hits += 1
            yield Hit(seq=ev.seq, turn=t, kind=f.kind, snippet=snip, span=(a, b), start=m.start(), end=m.end(),
                      matches=n, tool=f.tool, line=ev.line, offset=ev.offset if ev.offset >= 0 else None,
                      member=ev.member, call=sh.call, block=sh.block)


def find_all(reader: LogReader, opts: FindOptions, **kw: Any) -> tuple[list[Hit], FindStats]:
    """(hits list, stats): :func:`find` collected (tests, CLI)."""
    stats = kw.pop("stats", None) or FindStats()
    hits = list(find(reader, opts, stats=stats, **kw))
    return hits, stats


__all__ = ["FindOptions", "Hit", "FindStats", "find", "find_all", "compile_matcher", "build_prefilter", "KINDS"]
