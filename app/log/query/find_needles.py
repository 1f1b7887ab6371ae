"""The needles of a find's byte prefilter, built from its query (pure core, no Qt): the stored forms of
a literal (JSON escapes, ``\\uXXXX`` forms), a regular expression's literal run, and the case variants of
a caseless one (``re.IGNORECASE``'s simple folding, or the full folding of :class:`~.find_match.FoldMatcher`).
:func:`build_prefilter` is the entry; :class:`~.find_prefilter.Prefilter` runs the needles.
"""
from __future__ import annotations

import importlib
import json
import re
from itertools import compress
from operator import ne
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Callable, Collection, Iterable, Sequence

from .find_match import FindOptions, changed_chars
from .find_prefilter import FOLD, Prefilter
from .textview import fold_case

if TYPE_CHECKING:
    import sre_parse as _sre_parse   # typeshed has stubs for this name of the module only
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


def build_prefilter(opts: FindOptions) -> Optional[Prefilter]:
    """The conservative byte prefilter of a search (None: every row must be decoded); a literal's
    other pieces are its gates (:func:`piece_gates`)."""
    pre = _build_prefilter(opts)
    if pre is not None and shown_only(pre):
        return None
    if pre is not None and not opts.regex:
        pre.also = [g for g in piece_gates(opts.text, opts.case, pre) if not shown_only(g)]
    return pre


def shown_only(pre: Prefilter) -> bool:
    """A needle the field text may show where the stored bytes do not hold it: within ``-Infinity``, the text
    of a number a row stores as ``1e999`` or a 5000-digit integer (issue 27).  Such a prefilter is not used."""
    return any(n.lower() in b"-infinity" for n in pre.needles)


def _case_prefilter(text: str) -> Prefilter:
    """The case-sensitive needles of a piece: its stored forms (:func:`_stored_forms`)."""
    raw_forms, esc_forms = _stored_forms(text)
    if text.isascii():
        return Prefilter(sorted(raw_forms | esc_forms))
    return Prefilter(sorted(raw_forms), esc=sorted(esc_forms))


def piece_gates(text: str, case: bool, primary: Prefilter) -> list[Prefilter]:
    """The prefilters of the literal ``text``'s pieces (cut at the joints, :func:`_pieces`) other than the
    one ``primary`` looks for: a match holds every piece, each inside one stored string (or one stretch of
    the JSON the field text shows as stored), exactly as the primary's piece, so a row that holds none of a
    piece's stored forms cannot match, and is not decoded.  Pieces are taken once each (by their folded
    form, caseless), longest first."""
    seen = {tuple(primary.needles)}
    out: list[Prefilter] = []
    for piece in sorted({(p if case else fold_case(p)): p for p in _pieces(text)}.values(),
                        key=lambda p: -len(p.encode("utf-8"))):
        if (piece if case else fold_case(piece)).encode("utf-8") in primary.needles:
            continue                   # (the primary looks for this very piece)
        g = _case_prefilter(piece) if case else _fold_gate(piece)
        if g is None or tuple(g.needles) in seen:
            continue
        seen.add(tuple(g.needles))
        out.append(g)
    return out


_GATE_NEEDLES = 256                # raw images a piece's gate may hold (an ASCII row is looked through for the ASCII ones)


def _fold_gate(piece: str) -> Optional[Prefilter]:
    """A caseless piece's gate: the folded images of every way a text can fold onto the whole piece (a
    match may start or end inside a character's folded form at either end, as :func:`_fold_segs` allows),
    short pieces included; too many images: the best stretch (:func:`fold_prefilter`), or none."""
    global _FOLDS
    if _FOLDS is None:
        _FOLDS = _FoldTable()
    n = fold_case(piece)
    segs = _fold_segs(n, 0, len(n), _FOLDS)
    got = None if segs is None else _stretch_needles(segs, _GATE_NEEDLES)
    if got is None:
        return fold_prefilter(piece, _MAX_NEEDLES)
    raw, esc, _anchors = got
    return Prefilter(sorted(raw), fold=FOLD, esc=sorted(esc))


def _build_prefilter(opts: FindOptions) -> Optional[Prefilter]:
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


def case_variants(ch: str) -> list[str]:
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


def _stretch_needles(segs: Iterable[Sequence[Slot]], cap: int = _MAX_NEEDLES) -> _Needles:
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
                if len(r) > cap or len((e | d) - r) > 2 * cap:
                    return None
            raw |= r
            esc |= e | d
        for slot in seg:
            both = set(slot[0].encode("utf-8"))
            for v in slot[1:]:
                both &= set(v.encode("utf-8"))
            common |= {x for x in both if x >= 0x80}
        if len(raw) > cap or len(esc - raw) > 2 * cap:
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
    slots = [case_variants(ch) for ch in text]
    memo: dict[tuple[int, int], _Needles] = {}

    def needles_of(i: int, j: int) -> _Needles:
        if (i, j) not in memo:
            memo[i, j] = _stretch_needles([slots[i:j]])
        return memo[i, j]
    return _caseless(len(text), needles_of, lambda j: text[j - 1], max_needles)


class _FoldTable:
    """Which characters fold (:func:`~app.log.query.textview.fold_case`) to which strings."""

    def __init__(self) -> None:
        rev: dict[str, list[str]] = {}
        for c, f in changed_chars(str.casefold):   # (every character that folds to another is below U+1F000)
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
