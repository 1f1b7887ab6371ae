"""What a find asks for and what it gives, and how decoded field text is matched (pure core, no Qt).

:class:`FindOptions` (the query), :class:`Hit` (one matching field of an event), :class:`FindStats` (what
was read), :func:`compile_matcher` (a caseless literal: :class:`FoldMatcher`, full case folding; else an
``re`` pattern) and :func:`match_fields`.  The scan itself is :func:`app.log.query.find.find`.
"""
from __future__ import annotations

import re
from itertools import compress
from operator import ne
from dataclasses import dataclass, field
from typing import Any, Optional, Union, cast
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence

from ..format.model import Problem
from ..index.fastindex import load_rowscan_c
from ..jobctl import Cancel as JobCancel
from .textview import Field, fold_case, fold_finditer, normalize_kind


# what stops a scan: any form of app.log.jobctl.Cancel (a job's token, a ``threading.Event``, a callable)
Cancel = JobCancel
# the turn of a row, or a callable finding it lazily
TurnRef = Union[Optional[int], Callable[[], Optional[int]]]


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
    # (pos, length, k) of the stored row whose k-th hit this is, where the snippet is still to be made from it
    # (``snippet`` "" until then: a hit of the text hits, app.log.query.find_fast.LazyHit, handed on unmade)
    row: Optional[tuple[int, int, int]] = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "turn": self.turn, "kind": self.kind, "snippet": self.snippet}


@dataclass
class FindStats:
    bytes_scanned: int = 0           # decoded text bytes looked at (file bytes for raw JSONL)
    bytes_total: int = 0             # physical size of the log
    segments: int = 0
    segments_skipped: int = 0        # no candidate in the segment: never split into rows
    rows_decoded: int = 0            # rows decoded (candidates + turn lookups)
    rows_fast: int = 0               # of them: read by the C text_row (decoded only if they hit: find_fast)
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


def fold_count_py(text: str, needle: str) -> Optional[tuple[int, int]]:
    """The definition of ``rowscan_c.fold_count`` (the find section): (start of the first match, number of
    matches) of the folded ASCII ``needle`` in ``text`` by :func:`~app.log.query.textview.fold_finditer` (not
    whole words), (-1, 0) when none; None where ``text`` holds a character some of whose case forms hold an
    ASCII letter (:data:`FC_Q`), where the C does not answer."""
    if any(c in FC_Q for c in text):
        return None
    got = list(fold_finditer(text, needle))
    return (got[0][0] if got else -1), len(got)


# the characters some of whose case forms (str.lower, fold_case) hold ASCII: ß, İ, ı, ŉ, ſ, ǰ, ẖ..ẚ, ẞ, K, ﬀ..ﬆ
FC_Q = frozenset("\u00df\u0130\u0131\u0149\u017f\u01f0\u1e96\u1e97\u1e98\u1e99\u1e9a\u1e9e\u212a"
                 "\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06")
_FOLD_COUNT: Optional[Callable[[str, str], Optional[tuple[int, int]]]] = getattr(load_rowscan_c(), "fold_count", None)


def changed_chars(fn: Callable[[str], str], stop: int = 0x1F000) -> list[tuple[str, str]]:
    """(character, ``fn(character)``) of every character below ``stop`` that ``fn`` (``str.casefold``,
    ``str.lower``: a mapping of each character on its own) changes, in code point order; blocks of 256 that it
    leaves alone are passed over in one call (most of them: ~10 ms, not ~100 for a call a character)."""
    out: list[tuple[str, str]] = []
    for lo in range(0, stop, 256):
        block = "".join(map(chr, range(lo, min(lo + 256, stop))))
        if fn(block) == block:
            continue
        chars = list(block)
        folds = list(map(fn, chars))
        out += compress(zip(chars, folds), map(ne, chars, folds))
    return out


FAST = True                        # False: every caseless field through its folded text (tests compare both ways)
_MADE: Optional[frozenset[str]] = None       # the characters some other character folds into


def inert(needle: str) -> bool:
    """No character of ``needle`` folds (:func:`~app.log.query.textview.fold_case`) or is folded into by
    another ("—", "→", "✓"): its matches in the folded text are its places in the text itself, one to one."""
    global _MADE
    if _MADE is None:
        # (every character that folds to another is below U+1F000; fold_case is casefold but for the Turkish i's: "i")
        _MADE = frozenset("".join(f for _c, f in changed_chars(str.casefold))) | {"i"}
    return all(fold_case(c) == c and c not in _MADE for c in needle)


class FoldMatcher:
    """A caseless literal matched with full case folding (:func:`~app.log.query.textview.fold_case`:
    ``str.casefold``, the Turkish i's to "i"): "strasse" finds "Straße", "file" finds "ﬁle".
    A match's span covers whole characters of the text (:func:`~app.log.query.textview.fold_finditer`)."""

    def __init__(self, text: str, word: bool = False):
        self.pattern = text
        self.needle = fold_case(text)
        self.word = word
        # the C count of a folded ASCII needle (rowscan_c.fold_count), or, for a needle no other character folds
        # into (no letter: "—"), the text's own find and count; None: through the folded text
        self._c = _FOLD_COUNT if FAST and not word and self.needle.isascii() else None
        self._inert = FAST and not word and not self.needle.isascii() and inert(self.needle)

    def plain_way(self) -> Optional[tuple[int, str]]:
        """How :meth:`first_and_count` finds the needle, where a C scan can do the same (rowscan_c.text_hits):
        (0, the needle) by ``fold_count``, (1, the needle) by the text's own find and count; None: otherwise."""
        if self._c is not None:
            return 0, self.needle
        return (1, self.needle) if self._inert else None

    def finditer(self, text: str) -> Iterator[FoldMatch]:
        for a, b in fold_finditer(text, self.needle, self.word):
            yield FoldMatch(text, a, b)

    def search(self, text: str) -> Optional[FoldMatch]:
        return next(self.finditer(text), None)

    def first_and_count(self, text: str) -> tuple[Optional[FoldMatch], int]:
        """(the first match, the number of matches) of :meth:`finditer`: where no character of ``text``
        folds to several (the folded text is as long: a character never folds shorter) and whole words are
        not asked, a match is a place of the needle in the folded text, the same offsets in ``text``, so
        the rest are counted by ``str.count`` (no match objects)."""
        if self._c is not None:
            got = self._c(text, self.needle)
            if got is not None:
                at, n = got
                return (None, 0) if at < 0 else (FoldMatch(text, at, at + len(self.needle)), n)
        elif self._inert:
            at = text.find(self.needle)
            return (None, 0) if at < 0 else (FoldMatch(text, at, at + len(self.needle)), text.count(self.needle, at))
        if not self.word:
            folded = fold_case(text)
            if len(folded) == len(text):
                at = folded.find(self.needle) if self.needle else -1
                if at < 0:
                    return None, 0
                return FoldMatch(text, at, at + len(self.needle)), folded.count(self.needle, at)
        it = self.finditer(text)
        fm = next(it, None)
        return fm, (0 if fm is None else 1 + sum(1 for _ in it))

    def __repr__(self) -> str:
        return f"FoldMatcher({self.pattern!r}, word={self.word})"


# what a field is matched with: a regular expression (regex or case-sensitive), or a caseless literal
Matcher = Union[re.Pattern[str], FoldMatcher]
Match = Union["re.Match[str]", FoldMatch]      # (a field's match: a regex one, or a caseless one)


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


def match_fields(fields: Iterable[Field], matcher: Matcher, kinds: Optional[Collection[str]] = None,
                 also: Sequence[re.Pattern[str]] = ()) -> Iterator[tuple[Field, Union[re.Match[str], FoldMatch], int]]:
    """(field, first match, number of matches) for each field of ``fields`` that matches
    (and matches every pattern of ``also``)."""
    for f in fields:
        if kinds is not None and f.kind not in kinds:
            continue
        if type(matcher) is FoldMatcher:
            fm, n = matcher.first_and_count(f.text)
            if fm is None or (also and not all(a.search(f.text) for a in also)):
                continue
            yield f, fm, n
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
