"""The byte prefilter of a find: :class:`Prefilter` (the needles a candidate row must hold) and the
byte searches it runs over a window of stored bytes (pure core, no Qt).

How the needles are built from a query is :mod:`.find_needles`; the module docstring of :mod:`.find`
tells the whole path.
"""
from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass, field
from typing import Optional, Union

from ..index import cfind
from ..index.fastindex import load_rowscan_c
from .find_anyrows import ROWS_ANY, AnyRows

# a window's bytes: fresh bytes, or the reader's one reused buffer (:func:`_jsonl_windows`)
Buf = Union[bytes, bytearray]


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
SAME = bytes(range(256))           # (a case-sensitive search: every byte itself)
# the C search of a needle in a window seen through a table (rowscan_c.find_folded: no translated copy of the
# window, memchr of the bytes the table maps onto the needle's rarest byte); None: find_folded_py
_C_FOLDED = getattr(load_rowscan_c(), "find_folded", None)
# the same for an ASCII needle, 16 places a step (rowscan_c.find_ascii, the find section; None where the table does
# not allow it, or where the extension is older)
_C_ASCII = getattr(load_rowscan_c(), "find_ascii", None)
# the first escape of a non-ASCII character, 16 places a step (rowscan_c.first_uesc, the find5 section: the C
# library's strstr of ``\\u`` ran at ~0.5 GB/s on this machine, a whole-log find's largest cost for a rare word)
_C_UESC = getattr(load_rowscan_c(), "first_uesc", None)
# letters by how rarely they come in English text and code (the anchor of a needle of letters: its rarest)
_LETTERS = b"zqxjkvbpygwfmucldrhsnioate"
# a \u escape of a character >= U+0080 (as an ASCII-only JSON writer stores non-ASCII text)
_ESC_NONASCII = re.compile(rb"\\u(?!00[0-7])[0-9a-fA-F]{4}")
ANCHOR_ROWS = 32                   # rows holding a caseless prefilter's anchor byte checked one by one, per window
ANCHOR_HITS = 256                  # a needle's rare byte: places checked one by one per window before a plain find
# (or one per KiB of the window, if more: a place checked costs ~0.3 µs, a pass of the escape regex
# ~0.4 ns a byte, so up to ~1 place per 1.3 KB the places cost less; a 1 MiB window of a log holds
# ~260 of a capital letter: with 256 the regex took over in half the windows)
WINDOW_PROBES = 4                  # rows_of: rows searched in one pass for at most this many probes (each probe costs
# ~0.1 ms per MiB of the pass, a pass per needle ~0.15-0.25 ms: more probes, the passes)
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
    ``data[start:lim]`` (-1: none), as :data:`_ESC_NONASCII` finds it: rowscan_c.first_uesc (16 places a step)
    where it is built, else (or ``places`` given) the C library's ``strstr`` of ``\\u`` (:mod:`.cfind`; ~1.6 ms
    per 100 MB with its SSE2 version, ~0.2 s with its generic loop; the regex ~37) where it is there, each place
    checked; the regex for the rest of the window once more than ``places`` (:data:`ESC_PLACES`)
    places and one per 4 KiB looked through are no such escape.  All give the same offset."""
    lim = min(lim, len(data))
    start = max(start, 0)
    if use_c and places is None and _C_UESC is not None:
        return int(_C_UESC(data, start, lim))
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


def _first_escape_of(data: Buf, lim: int, memo: Optional[list[tuple[int, int]]]) -> int:
    """``first_escape(data, 0, lim)``, kept in ``memo`` (one window's: a quoted query's prefilter and its gate both
    ask, each a pass of the window) for the next ask with the same ``lim``."""
    if memo is None:
        return first_escape(data, 0, lim)
    for m_lim, at in memo:
        if m_lim == lim:
            return at
    at = first_escape(data, 0, lim)
    memo.append((lim, at))
    return at


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


@lru_cache(maxsize=4096)
def anchor_of(n: bytes) -> int:
    """The offset in needle ``n`` of the byte a search looks for first (:func:`_rarity`, then letters by
    :data:`_LETTERS`: a rarer one means fewer places to check)."""
    return min(range(len(n)), key=lambda i: (_rarity(n[i]), _LETTERS.find(bytes([n[i] | 0x20]))
                                             if 0x41 <= n[i] <= 0x7A else 0))


def find_folded_py(data: Buf, start: int, end: int, n: bytes, table: bytes, rows: bool = False) -> list[int]:
    """The definition of ``rowscan_c.find_folded``: the places of ``n`` in ``data.translate(table)[start:end]``
    (as :func:`_find_all`: left to right, not overlapping; ``rows``: the first in each row); a negative ``start``
    or ``end`` counts as 0 (not from the end)."""
    out: list[int] = []
    _find_all(data.translate(table), n, max(start, 0), max(end, 0), out, 0, rows)
    return out


def _find_through(data: Buf, start: int, end: int, n: bytes, table: bytes, out: list[int], rows: bool) -> None:
    """Append the places of needle ``n`` (an image through ``table``) in ``data[start:end]`` seen through
    ``table`` to ``out``: in C where the extension is built, else translated then searched."""
    if _C_ASCII is not None and len(n) >= 2 and n.isascii():
        got = _C_ASCII(data, start, end, n, table, rows)
        if got is not None:
            out.extend(got)
            return
    if _C_FOLDED is not None:
        out.extend(_C_FOLDED(data, start, end, n, table, anchor_of(n), rows))
    else:
        out.extend(find_folded_py(data, start, end, n, table, rows))


def _rare_byte(n: bytes) -> tuple[bytes, int]:
    """(the rarest byte of needle ``n`` by :func:`_rarity`, its first offset in ``n``)."""
    b = min(n, key=_rarity)
    return bytes([b]), n.index(b)


def _find_anchored(hay: Buf, n: bytes, g: bytes, k: int, start: int, end: int, out: list[int], base: int = 0,
                   rows: bool = False) -> None:
    """Append ``base +`` every position of ``n`` in ``hay[start:end]`` to ``out``, found by memchr
    of its byte ``g`` (at offset ``k`` of ``n``), each place checked; when ``g`` turns out common
    (more than :data:`ANCHOR_HITS` places) a plain ``find`` does the rest."""
    p = hay.find(g, start + k, end)
    hits, most = 0, max(ANCHOR_HITS, (end - start) >> 10)
    while p >= 0:
        hits += 1
        if hits > most:
            _find_all(hay, n, p - k, end, out, base, rows)
            return
        i = p - k
        if hay.startswith(n, i) and i + len(n) <= end:
            out.append(base + i)
            if rows:                       # (the first place in each row is enough: on to the next row)
                e = hay.find(b"\n", i + len(n), end)
                if e < 0:
                    return
                p = e
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
    # the other pieces of the query (cut at the joints, :func:`.find_needles.piece_gates`): a candidate row
    # must hold each of them too (a match holds every piece, each in one stored string), checked per row
    also: list[Prefilter] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._ascii = all(n.isascii() for n in self.needles)
        # needles with a non-ASCII byte: found by memchr of their rarest byte (then checked)
        self._rare = [(n,) + _rare_byte(n) for n in self.needles if not n.isascii()]
        self._plain = [n for n in self.needles if n.isascii()]
        # (the rows holding any of the needles are those holding any of the shortest: one holding another inside
        # it, as the escaped forms of a quoted word hold the raw one, '\\"tests' '"tests', needs no pass of its own)
        self._plain_rows = _inner(self._plain)
        self._rows = _inner(self.needles)
        # (a row is looked at for the needles with non-ASCII bytes only when it holds their rarest byte)
        self._rare_by: dict[bytes, list[bytes]] = {}
        for n, g, _k in self._rare:
            self._rare_by.setdefault(g, []).append(n)
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

        # (rows_of: every needle, raw and escaped, less those holding another; and the raw ones alone, for a window
        # holding no escape of a non-ASCII character, where no escaped needle can be: fewer probes)
        table = self.fold if self.fold is not None else SAME
        self._any = AnyRows(tuple(_inner(self.needles + self.esc)), table)
        self._any_raw = AnyRows(tuple(_inner(self.needles)), table) if self.esc else self._any

    def rows_of(self, data: Buf, lim: int, starts: Optional[list[int]] = None,
                memo: Optional[list[tuple[int, int]]] = None) -> Optional[list[int]]:
        """The rows of ``data[:lim]`` holding a needle (raw or escaped) in one pass (:mod:`.find_anyrows`):
        ``starts`` None, a place in each (the rows :meth:`positions` finds with ``rows``); else the starts of the
        rows of ``starts`` that :meth:`hit` keeps.  In a window holding no ``\\uXXXX`` escape of a non-ASCII
        character (:func:`first_escape`), the raw needles alone (each escaped needle holds one).  None: not this
        way (no C, a gate, a needle with a newline, more than :data:`WINDOW_PROBES` probes; a whole window of a
        prefilter with an anchor byte): the caller takes the passes.  ``memo``: the window's own list (empty at first),
        where that first escape is kept once found (with ``lim``), for the next ask about the same window."""
        if ROWS_ANY is None or self.gate is not None or (starts is None and self.anchor is not None):
            return None                    # (memchr of the anchor byte costs less)
        way = self._any
        if self.esc and self._any_raw.needles and _first_escape_of(data, lim, memo) < 0:
            way = self._any_raw
        return way.rows(data, lim, starts, WINDOW_PROBES)

    @property
    def lower(self) -> bool:
        return self.fold is not None

    def positions(self, data: Buf, lim: Optional[int] = None, rows: bool = False,
                  memo: Optional[list[tuple[int, int]]] = None) -> list[int]:
        """Sorted places of the needles in ``data[:lim]``; ``rows``: only a place in each row holding one (the
        rows are all a caller asks for: the search goes on from the row's end), in one pass where
        :meth:`rows_of` can, else the first place of each needle in each row."""
        lim = len(data) if lim is None else lim
        if rows:
            got = self.rows_of(data, lim, memo=memo)
            if got is not None:
                return got
        out: list[int] = []
        if self.fold is not None:
            self._folded_positions(data, lim, out, rows)
        elif self.gate is not None:
            _find_through(data, 0, lim, self.gate, SAME, out, rows)
        elif self._ascii:
            for n in self.needles:
                _find_through(data, 0, lim, n, SAME, out, rows)
        else:
            # raw UTF-8 needles cannot occur in ASCII-only bytes (isascii stops at the first other
            # byte); else memchr of the needle's rarest byte (a UTF-8 continuation byte)
            if not data.isascii():
                for n, g, k in self._rare:
                    _find_anchored(data, n, g, k, 0, lim, out, 0, rows)
                for n in self._plain:
                    _find_all(data, n, 0, lim, out, 0, rows)
            self._escaped_positions(data, data, lim, out, rows)
        if len(out) > 1 and (len(self.needles) > 1 or self.esc):
            out.sort()
        return out

    def _escaped_positions(self, data: Buf, hay: Optional[Buf], lim: int, out: list[int], rows: bool = False) -> None:
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
            _find_all(hay, n, at - base, lim - base, out, base, rows)

    def _folded_positions(self, data: Buf, lim: int, out: list[int], rows: bool = False) -> None:
        anchor = self.anchor
        if anchor is not None and _C_FOLDED is not None:
            # (the C's folded search from the first row holding the anchor on: no row checked one by one)
            p = data.find(anchor, 0, lim)
            if p >= 0:
                self._fold_search(data, data.rfind(b"\n", 0, p) + 1, lim, out, rows)
        elif anchor is not None:
            # every raw variant holds this byte: memchr finds it, or says no raw variant is here;
            # the rows holding it are checked folded; a byte that turns out common in this window
            # (more than ANCHOR_ROWS rows) gives way to folding the rest of the window
            p, held = data.find(anchor, 0, lim), 0
            while p >= 0:
                s = data.rfind(b"\n", 0, p) + 1
                e = data.find(b"\n", p, lim)
                e = lim if e < 0 else e
                if held >= ANCHOR_ROWS:
                    self._fold_search(data, s, lim, out, rows)
                    break
                held += 1
                if self.hit_raw(data[s:e]):
                    out.append(p)
                p = data.find(anchor, e, lim)
        else:
            self._fold_search(data, 0, lim, out, rows)
        self._escaped_positions(data, None, lim, out, rows)

    def _fold_search(self, data: Buf, start: int, lim: int, out: list[int], rows: bool = False) -> None:
        needles = self.needles
        if _C_FOLDED is not None:          # (no folded copy of the window: each needle looked for through FOLD)
            if rows:
                needles = self._rows
            if not self._ascii and data.isascii():
                needles = self._plain_rows if rows else self._plain   # (a needle with a non-ASCII byte is not in ASCII bytes)
            for n in needles:
                _find_through(data, start, lim, n, FOLD, out, rows)
            return
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
                _find_all(hay, n, 0, lim - start, out, start, rows)
            for n, g, k in self._rare:   # (ſ, ẞ, ligatures: memchr of a byte they hold, rare in most logs)
                _find_anchored(hay, n, g, k, 0, lim - start, out, start, rows)
            return
        for n in needles:
            _find_all(hay, n, 0, lim - start, out, start, rows)

    def gate_rows(self, data: Buf, lim: int, most: int) -> Optional[tuple[list[int], list[int]]]:
        """(places of the ASCII needles, places where another needle may be) in ``data[:lim]`` seen through
        :attr:`fold`, the first of each in each row, sorted, a pass each: a row holding none of them holds no
        needle; one holding only the second is checked (:meth:`hit_others`).  The second: the bytes the needles
        with a non-ASCII byte are looked for by (:attr:`_rare_by`) and, with escaped needles, ``\\u`` (all of
        them hold it).  None: more than ``most`` ASCII needles."""
        if len(self._plain_rows) > most:
            return None
        table = self.fold if self.fold is not None else SAME
        plain: list[int] = []
        for n in self._plain_rows:
            _find_through(data, 0, lim, n, table, plain, True)
        maybe: list[int] = []
        for g in sorted(self._rare_by) if self._rare else ():
            _find_through(data, 0, lim, g, table, maybe, True)
        if self.esc:
            _find_through(data, 0, lim, b"\\u", table if self.fold is not None else FOLD, maybe, True)
        plain.sort()
        maybe.sort()
        return plain, maybe

    def hit_others(self, raw: bytes) -> bool:
        """``raw`` holds a needle :meth:`gate_rows` looks for no ASCII one of (:meth:`hit` is this, or an ASCII
        needle found): one with a non-ASCII byte, or an escaped one."""
        if self.fold is None:
            return any(n in raw for n, _g, _k in self._rare) or any(n in raw for n in self.esc)
        hay = raw.translate(self.fold)
        return (bool(self._rare) and not hay.isascii() and
                any(g in hay and any(n in hay for n in ns) for g, ns in self._rare_by.items())) or \
            (bool(self.esc) and b"\\u" in hay and any(n in hay for n in self.esc))

    def hit_raw(self, raw: Buf) -> bool:
        """A raw UTF-8 needle (folded) is in ``raw``."""
        hay = raw.translate(FOLD)
        return any(n in hay for n in self.needles)

    def hit_also(self, raw: bytes) -> bool:
        """``raw`` (a candidate row) holds every other piece of the query (:attr:`also`)."""
        return all(g.hit(raw) for g in self.also)

    def hit(self, raw: bytes) -> bool:
        if self.fold is None:
            return any(n in raw for n in self.needles) or any(n in raw for n in self.esc)
        hay = raw.translate(self.fold)
        # (a needle with a non-ASCII byte is not in an ASCII row; every escaped one holds a \u)
        return any(n in hay for n in self._plain) or \
            (bool(self._rare) and not hay.isascii() and
             any(g in hay and any(n in hay for n in ns) for g, ns in self._rare_by.items())) or \
            (bool(self.esc) and b"\\u" in hay and any(n in hay for n in self.esc))


def _inner(needles: list[bytes]) -> list[bytes]:
    """``needles`` less each one holding another (a text holds one of them iff it holds one of these), in order."""
    return [n for k, n in enumerate(needles)
            if not any(m in n and (m != n or j < k) for j, m in enumerate(needles) if j != k)]


def _find_all(hay: Buf, n: bytes, start: int, end: int, out: list[int], base: int = 0, rows: bool = False) -> None:
    """Append ``base +`` every position of ``n`` in ``hay[start:end]`` (non-overlapping) to ``out``; ``rows``:
    the first in each row only (``hay``'s rows end at its newlines, as the window's: a copy of the same length)."""
    i = hay.find(n, start, end)
    if rows:
        while i >= 0:
            out.append(base + i)
            e = hay.find(b"\n", i + len(n), end)
            if e < 0:
                return
            i = hay.find(n, e + 1, end)
        return
    while i >= 0:
        out.append(base + i)
        i = hay.find(n, i + len(n), end)
