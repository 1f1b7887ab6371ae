"""Whole-log find's fast way through a candidate row (pure core, no Qt): the row decoded only as far as the
fields a user sees need, instead of the codec's whole event.

For each candidate row of :func:`app.log.query.find.find` of a v2+ log (:meth:`FastRows.hits`):

* a row of a text type whose fields :func:`~app.log.query.textview.shown_fields` reads from a few payload keys
  (:data:`.find_light.LIGHT_TYPES`) is decoded by msgspec (:mod:`.find_light`): its type, seq (or the one the codec restores
  in an envelope-free snapshot) and the payload keys ``turn``, ``message``, ``content``, ``name``, ``callId``,
  ``arguments``, ``error``, ``title`` and ``summary``; everything else of the row (an assistant message's
  embedded stream, usage, provenance…) is skipped unbuilt;
* it is held to what the codec would make of it (:func:`.find_light.light_event`): the row limits (size, nesting), strict
  JSON and valid UTF-8, a seq in range, a payload object, and the keys read of the types the codec keeps
  (``msgspec.convert`` to :data:`~app.log.format.versions.DATA_TYPE`: a value ``field_problems`` would drop
  sends the row the exact way);
* its hits are built as :func:`~.find_rows.row_hits` builds them (``shown_fields``, the same matcher, the
  same snippet, ``Hit``), from the same text;
* every other row (a v0/v1 log, whose shapes the codec converts; another type; anything the checks refuse)
  takes the exact way, :func:`~.find_rows.row_hits`.

The C gate (:meth:`FastRows._may_hit`): for a literal query with no control character, the C ``text_row``
(:mod:`app.log.query.textrow`) reads the row's fields plained, straight from its bytes; a row none of whose
plained fields matches has no hit (a match in a field's text is a match at the same place of its plained text:
``plain`` turns a control character into one space, and neither is a word character), and is not decoded.
The C's text cannot make the hits themselves: a snippet is cut at the field's line breaks, which only the text
holds; so the gate runs while most rows it reads do not hit (a rare word's candidates) and steps aside once
most do (a common word's: the decode is needed anyway).

The text hits (:meth:`FastRows._text_hits`), for a literal with neither a control character nor a space, in a
raw JSONL file: a row of a type the C reads as the codec does (user and assistant messages, tool calls and
results, titles) is matched in the C's plained fields, which give the same places and counts (a place ``plain``
changes holds a space or a control character, neither in the literal), and is not decoded; each hit is a
:class:`LazyHit`, whose snippet (cut at the field's real line breaks: only the text holds them) is made when it is
first read, from the row read again and its hits made the exact way.  A common word's hits thus cost the C's read
of their rows, not a decode each.

``tests/test_find_text_fast.py`` holds the hits and stats of both ways equal (:data:`ENABLED` off: the exact
way) on every fixture, zstd and SQLite sessions, hostile, generated and edited logs.  The light decode itself
is :mod:`.find_light`; the fields of the commonest shapes are read by :mod:`.find_shown`.
"""
from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Iterator

import msgspec

from ..format.limits import MAX_ROW_BYTES
from ..source.sources import RawJsonlSource, SourceChanged
from .find_light import TYPE_FIRST, light_event
from ..index.fastindex import load_rowscan_c
from .find_match import FindOptions, FindStats, FoldMatcher, Hit, Match, Matcher, TurnRef, fold_count_py, match_fields
from .find_rows import row_hits, shown_hit
from .find_shown import quick_shown
from .textrow import CALL, FIELDS, READ_TYPES, RESULT, TURN, NOTHING, TITLE as OP_TITLE, text_row_c
from .textview import NO_PAYLOAD_TYPES, TITLE, TOOL_CALL, TOOL_OUTPUT, Field, Shown, event_turn, plain, shown_fields

if TYPE_CHECKING:
    import re

    from ..format.codec import RowCodec

ENABLED = True                     # False: every candidate row the exact way (tests compare both ways)
READ_B = frozenset(t.encode() for t in READ_TYPES)   # (the types the text hits read: _read_text)
READ_T = tuple(sorted(READ_B))
_C_TEXT_HITS = getattr(load_rowscan_c(), "text_hits", None)
EAGER_AFTER = 256                  # LazyHits made before FastRows.eager_reader may say the reader reads every snippet
GATE_TRIAL = 64                    # rows the gate is tried on before it may turn itself off


def gate_fields(r: tuple[Any, ...]) -> list[tuple[str, str]]:
    """(kind, plained text) of each field of a C ``text_row`` answer, in ``shown_fields`` order."""
    op = r[0]
    if op in (NOTHING, TURN):
        return []
    if op == FIELDS:
        return list(r[4]) + [(TOOL_CALL, b[2]) for b in r[5] or ()]
    if op == CALL:
        return [(TOOL_CALL, r[6])]
    if op == RESULT:
        return [(TOOL_OUTPUT, r[5])]
    return [(TITLE, plain(r[4]))]


class FastRows:
    """The hits of the candidate rows of one find, each decoded only as far as its fields need where it
    allows (:func:`light_event`); :meth:`of` is None where this way is off (a v0/v1 log, whose shapes the
    codec converts; :data:`ENABLED` False)."""

    def __init__(self, codec: RowCodec, opts: FindOptions, matcher: Matcher):
        self.codec, self.opts, self.matcher = codec, opts, matcher
        self.also: tuple[re.Pattern[str], ...] = tuple(opts.also)
        # the gate: a literal with no control character matches a field's text only where it matches the
        # same place of its plained text (plain: a control character to one space, both no word character)
        self.text_row = text_row_c() if not opts.regex and not opts.also and plain(opts.text) == opts.text else None
        # the text hits: a literal with no space either matches the plained text exactly where it matches the
        # text (the places plain changes hold a space in one, a control character in the other: neither is in
        # the literal), so its hits (offsets, counts) come from the C's text; only the snippet needs the text
        # itself, made when it is asked for (:class:`LazyHit`: the row read again, the exact way)
        self.text_hits = self.text_row is not None and " " not in opts.text
        self.src: Optional[RawJsonlSource] = None     # (set by find for a raw JSONL file: snippets made lazily)
        # the C's text hits of a window's candidate rows (rowscan_c.text_hits): (mode, needle) or None
        self.c_hits = c_mode(opts, matcher) if self.text_hits and opts.kinds is None else None
        self._text_hits_c = _C_TEXT_HITS
        self.last_row: Optional[tuple[tuple[int, int], list[Hit]]] = None   # (LazyHit: the hits of the last row read)
        self.made = self.resolved = 0                  # LazyHits made, and of them snippets made (see eager_reader)
        self.tried = self.passed = 0

    @classmethod
    def of(cls, codec: RowCodec, opts: FindOptions, matcher: Matcher) -> Optional[FastRows]:
        if not ENABLED or codec.version < 2:
            return None
        return cls(codec, opts, matcher)

    def hits(self, raw: bytes, pos: object, offset: int, line: Optional[int], turn: TurnRef,
             st: FindStats) -> Iterator[Hit]:
        """The hits of one stored row, as :func:`~.find_rows.row_hits` gives them."""
        if self.text_hits and self.src is not None and type(pos) is int:
            r = self._read_text(raw)
            if r is not None:
                st.rows_decoded += 1
                st.rows_fast += 1
                return self._text_hits(r, raw, pos, offset, line, turn, st)
        elif self.text_row is not None and not self._may_hit(raw):
            st.rows_decoded += 1
            st.rows_fast += 1
            return iter(())
        return self.decoded_hits(raw, pos, offset, line, turn, st)

    def decoded_hits(self, raw: bytes, pos: object, offset: int, line: Optional[int], turn: TurnRef,
                     st: FindStats) -> Iterator[Hit]:
        """The hits of one stored row, decoded (the light way where it allows, else the codec's)."""
        if raw.startswith(TYPE_FIRST) and raw[9:raw.find(b'"', 9)] in QUIET_B and quiet_type(raw):
            st.rows_decoded += 1
            st.rows_fast += 1
            return iter(())
        le = light_event(raw, self.codec.envelope_seqs, pos)
        if le is None:
            return row_hits(self.codec, raw, pos, offset, line, self.matcher, self.opts, turn, st)
        st.rows_decoded += 1
        st.rows_fast += 1
        seq, ev = le
        shown = quick_shown(ev.type, ev.data)        # (the commonest shapes read once: find_shown)
        if shown is None:
            shown = shown_fields(ev)
        return self._hits(seq, ev, shown, self._match([sh.field for sh in shown]), offset, line, turn, st)

    def eager_reader(self) -> bool:
        """True (and the text hits off from now on) once the one reading the hits has read most of their snippets
        (:data:`EAGER_AFTER` hits made): each snippet then costs its row's decode on top of the C's read, so the
        rows are decoded as they come instead (the text hits pay only where snippets are made when shown)."""
        if self.text_hits and self.made >= EAGER_AFTER and self.resolved * 2 >= self.made:
            self.text_hits = False
            self.c_hits = None
        return not self.text_hits

    def text_hits_of(self, data: Any, starts: list[int], lim: int, torn: bool) -> tuple[list[Any], int]:
        """rowscan_c.text_hits of a window's candidate rows (see :func:`text_hits_py`): (items, rows read)."""
        mode, needle = self.c_hits  # type: ignore[misc]
        f = self._text_hits_c or text_hits_py
        return f(data, starts, lim, torn, MAX_ROW_BYTES, READ_T, needle, mode, (TOOL_CALL, TOOL_OUTPUT))

    def lazy_hit(self, it: tuple[Any, ...], pos: int, offset: int, turn_at: Any, st: FindStats) -> Hit:
        """The :class:`LazyHit` of a hit tuple of :meth:`text_hits_of` (``turn_at(row start)``: the tracker's
        turn, for a row naming none)."""
        s, n, seq, t, kind, tool, call, block, a, b, count, k = it
        if t is None:
            t = turn_at(s)
        st.hits += 1
        self.made += 1
        assert self.src is not None
        return LazyHit(seq=seq, turn=t, kind=kind, start=a, end=b, matches=count, tool=tool, line=None,
                       offset=offset if offset >= 0 else None, member=None, call=call, block=block,
                       source=(self, self.src, pos, n, k))

    def hits_again(self, raw: bytes, pos: int, h: Hit) -> list[Hit]:
        """The hits of ``h``'s stored row ``raw`` (at ``pos``) made again the exact way, their snippets made."""
        return list(self.decoded_hits(raw, pos, -1 if h.offset is None else h.offset, h.line, h.turn, FindStats()))

    def _read_text(self, raw: bytes) -> Optional[tuple[Any, ...]]:
        """The C ``text_row`` of a row of a type it reads as the codec would (:data:`READ_B`: not a generic row,
        which the codec may read otherwise), within the codec's limits; None: the row is decoded.  (A row the C
        reads is strict JSON nested at most ``FT_DEPTH`` (64) deep: within the codec's ``MAX_DEPTH``, 256.)"""
        if not raw.startswith(TYPE_FIRST) or raw[9:raw.find(b'"', 9)] not in READ_B or len(raw) > MAX_ROW_BYTES:
            return None
        r = self.text_row(raw, False) if self.text_row is not None else None
        return None if r is None or r[0] == TURN else r

    def _text_hits(self, r: tuple[Any, ...], raw: bytes, pos: int, offset: int, line: Optional[int],
                   turn: TurnRef, st: FindStats) -> Iterator[Hit]:
        """The hits of a row read by the C ``text_row`` (``r``): matched in its plained fields, each a
        :class:`LazyHit` whose snippet is made when asked for."""
        if r[0] == NOTHING:
            return
        shown = text_shown(r)
        found = self._match([sh.field for sh in shown])
        if not found:
            return
        seq, t = r[1], r[3]
        if t is None:
            t = turn() if callable(turn) else turn
        src = self.src
        assert src is not None                     # (hits: only where find set it)
        for k, (i, m, n) in enumerate(found):
            sh = shown[i]
            f = sh.field
            st.hits += 1
            self.made += 1
            yield LazyHit(seq=seq, turn=t, kind=f.kind, start=m.start(), end=m.end(), matches=n, tool=f.tool,
                          line=line, offset=offset if offset >= 0 else None, member=None, call=sh.call,
                          block=sh.block, source=(self, src, pos, len(raw), k))

    def _may_hit(self, raw: bytes) -> bool:
        """False: the C ``text_row`` reads the row and none of its plained fields matches (no hit).  Used while
        most rows it asks about do not hit (a rare word's candidates); off once most do (a common word's)."""
        r = self.text_row(raw, False) if self.text_row is not None else None
        if r is None:
            return True
        self.tried += 1
        if self._match([Field(k, t) for k, t in gate_fields(r)]):
            self.passed += 1
            if self.tried >= GATE_TRIAL and self.passed * 2 > self.tried:
                self.text_row = None                   # (most rows hit: the gate costs more than it saves)
            return True
        return False

    def _match(self, fields: list[Field]) -> list[tuple[int, Match, int]]:
        """(field index, first match, matches) of each field that matches (``match_fields``)."""
        at = {id(f): i for i, f in enumerate(fields)}
        return [(at[id(f)], m, n) for f, m, n in match_fields(fields, self.matcher, self.opts.kinds, self.also)]

    @staticmethod
    def _hits(seq: int, ev: Any, shown: list[Shown], found: list[tuple[int, Match, int]], offset: int,
              line: Optional[int], turn: TurnRef, st: FindStats) -> Iterator[Hit]:
        t = None
        for i, m, n in found:
            if t is None:
                t = event_turn(ev)
                if t is None:
                    t = turn() if callable(turn) else turn
            yield shown_hit(shown[i], m, n, seq, t, line, offset, None, st)


QUIET_B = frozenset(t.encode() for t in NO_PAYLOAD_TYPES)


class _TypeOnly(msgspec.Struct):
    type: str


_TYPE_ONLY = msgspec.json.Decoder(_TypeOnly)


def quiet_type(raw: bytes) -> bool:
    """The row is read (its type as the codec reads it: the last ``type`` key, escapes decoded) as an event of a
    type that shows no text (textview.NO_PAYLOAD_TYPES): it has no hit, without a decode.  False where msgspec does
    not read it so (the exact way then decodes it: no hit either way, or its event's own)."""
    try:
        return _TYPE_ONLY.decode(raw).type in NO_PAYLOAD_TYPES
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return False


def c_mode(opts: FindOptions, matcher: Matcher) -> Optional[tuple[int, str]]:
    """How rowscan_c.text_hits matches ``opts``'s literal, as ``match_fields`` does: (0, the folded needle) a
    caseless ASCII literal (FoldMatcher's C count), (1, the needle) a literal found as it is (a caseless one no
    character folds into, a case-sensitive one); None: not in C (whole words, other caseless literals)."""
    if opts.regex or opts.word or opts.also:
        return None
    if isinstance(matcher, FoldMatcher):
        return matcher.plain_way()
    return 1, opts.text


def text_hits_py(data: Any, starts: list[int], lim: int, torn: bool, max_row: int, types: tuple[bytes, ...],
                 needle: str, mode: int, kinds: tuple[str, str]) -> tuple[list[Any], int]:
    """The definition of ``rowscan_c.text_hits`` (the findc section): for each candidate row of ``starts`` in
    ``data[:lim]``, the hits of its plained fields (:func:`text_shown` of ``text_row``) as tuples, or its start
    where the row is left to the caller (see the C's comment)."""
    from .textrow import text_row_py
    tr = text_row_c() or text_row_py
    items: list[Any] = []
    read = 0
    for s in starts:
        if not 0 <= s < lim:
            continue
        e = data.find(b"\n", s, lim)
        e = lim if e < 0 else e
        if e >= lim and torn:
            continue
        raw = bytes(data[s:e])
        r = None
        if 10 <= len(raw) <= max_row and raw.startswith(TYPE_FIRST):
            q = raw.find(b'"', 9)
            if q >= 0 and raw[9:q] in types:
                r = tr(raw, False)
        if r is None or r[0] in (TURN, OP_TITLE):
            items.append(s)
            continue
        row: list[Any] = []
        for sh in text_shown(r):
            f = sh.field
            got = fold_count_py(f.text, needle) if mode == 0 else (f.text.find(needle), f.text.count(needle))
            if got is None:
                break
            if got[1]:
                kind = kinds[0] if f.kind == TOOL_CALL else kinds[1] if f.kind == TOOL_OUTPUT else f.kind
                row.append((s, e - s, r[1], r[3], kind, f.tool, sh.call, sh.block, got[0], got[0] + len(needle),
                            got[1], len(row)))
        else:
            read += 1
            items += row
            continue
        items.append(s)
    return items, read


def text_shown(r: tuple[Any, ...]) -> list[Shown]:
    """The shown fields (plained texts) of a C ``text_row`` answer, in ``shown_fields`` order."""
    op = r[0]
    if op == FIELDS:
        return [Shown(Field(k, t)) for k, t in r[4]] + [Shown(Field(TOOL_CALL, b[2], b[1]), b[0], True)
                                                        for b in r[5] or ()]
    if op == CALL:
        return [Shown(Field(TOOL_CALL, r[6], r[5] or None), r[4])]
    if op == RESULT:
        return [Shown(Field(TOOL_OUTPUT, r[5]))]
    if op == OP_TITLE:
        return [Shown(Field(TITLE, plain(r[4])))]
    return []


def made_snippet(got: list[Hit], k: int, h: Hit) -> tuple[str, tuple[int, int]]:
    """(snippet, span) of ``h``, the ``k``-th hit of its row, from ``got``, the row's hits made again
    (:meth:`FastRows.hits_again`); ``("", (0, 0))`` where the row no longer holds it (the file changed under the
    find: no snippet to show)."""
    g = got[k] if k < len(got) else None
    if g is None or (g.seq, g.kind, g.start, g.end) != (h.seq, h.kind, h.start, h.end):
        return "", (0, 0)
    return g.snippet, g.span


class LazyHit(Hit):
    """A :class:`Hit` whose snippet (and its span) is made when first read: its row read again from the file
    and its hits made the exact way (:meth:`FastRows.decoded_hits`), the ``k``-th of them giving it.  A copy
    pickled is a plain :class:`Hit` (:meth:`plain_hit`)."""

    def __init__(self, *, source: tuple[FastRows, RawJsonlSource, int, int, int], **kw: Any):
        self.__dict__.update(kw)
        self._source: Optional[tuple[FastRows, RawJsonlSource, int, int, int]] = source

    def __getattr__(self, name: str) -> Any:
        if name in ("snippet", "span") and self.__dict__.get("_source") is not None:
            self._make_snippet()
            return self.__dict__[name]
        raise AttributeError(name)

    def _make_snippet(self) -> None:
        fr, src, pos, n, k = self._source          # type: ignore[misc]
        self._source = None
        fr.resolved += 1
        last = fr.last_row
        if last is not None and last[0] == (pos, n):
            got = last[1]                            # (the row's other hits: read and decoded once)
        else:
            try:
                raw = src.pread(n, pos)
            except SourceChanged:
                raw = b""                            # (the file shrank since: no row, no snippet)
            except (OSError, ValueError):
                try:
                    with open(src.path, "rb") as f:  # (the reader closed since: the file read on its own)
                        raw = os.pread(f.fileno(), n, pos)
                except OSError:
                    raw = b""
            got = fr.hits_again(raw, pos, self)
            fr.last_row = (pos, n), got
        self.snippet, self.span = made_snippet(got, k, self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Hit):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in _COMPARED)

    __hash__ = None  # type: ignore[assignment]

    def pending(self) -> Optional[tuple[int, int, int]]:
        """(pos, length, k) of its row while the snippet is not made yet (:attr:`Hit.row`), else None."""
        src = self.__dict__.get("_source")
        return None if src is None else (src[2], src[3], src[4])

    def plain_hit(self) -> Hit:
        """A plain :class:`Hit`: its snippet made."""
        return Hit(**{k: getattr(self, k) for k in _COMPARED})

    def __reduce__(self) -> Any:
        # (handed on unmade: snippet "", ``row`` saying where to make it from; the window makes the snippets of
        # the hits it shows, app.ui.find_hits.make_snippets)
        row = self.pending()
        if row is None:
            return (_hit_of, (self.plain_hit().__dict__,))
        d = self.__dict__
        return (_hit_of, ({k: d[k] for k in _KNOWN} | {"snippet": "", "span": (0, 0), "row": row},))


_COMPARED = tuple(f.name for f in dataclasses.fields(Hit) if f.compare)     # (every field but ``row``)
_KNOWN = tuple(k for k in _COMPARED if k not in ("snippet", "span"))          # (a LazyHit's own, its snippet unmade)


def _hit_of(d: dict[str, Any]) -> Hit:
    return Hit(**d)
