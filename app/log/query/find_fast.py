"""Whole-log find's fast way through a candidate row (pure core, no Qt): the row's text read in C first
(``text_row``, :mod:`app.log.query.textrow`), the event decoded only when the row really hits, and then only
the part of it the hits need.

For each candidate row of :func:`app.log.query.find.find` (:meth:`FastRows.hits`):

* the C ``text_row`` reads the row written the plain dsh way straight from its bytes and gives every field
  :func:`~app.log.query.textview.shown_fields` gives, :func:`~app.log.query.textview.plain` ed (``P``);
  anything else (None: not strict JSON, an escape in a key, a type it does not read, an envelope the codec
  restores, a packed row, a v0/v1 session's hit…) takes the exact way (:func:`.find_rows.row_hits`);
* a row showing no text (a turn start, a type whose row shows no payload) has no hit: nothing is decoded;
* where the query is a literal with no control character (a match in a field's text is a match at the same
  place of its plained text: ``plain`` turns a control character into one space, both non-word), a row none
  of whose ``P`` matches has no hit either;
* a row that hits is decoded only as far as its fields need (:class:`_Row`: the payload's ``turn``,
  ``message``, ``content``, ``name``, ``callId``, ``arguments``, ``error`` and ``title``; a generic row's
  whole payload), its fields taken by ``shown_fields`` (the text ``T``) and held to the C's answer: as many,
  the same kinds, each ``T == P`` or ``plain(T) == P``; else the exact way.  Its hits are those of
  :func:`~.find_rows.row_hits`, built from ``T`` with the same matcher and snippet (a field with ``T == P``
  keeps the match found on ``P``).

``tests/test_find_text_fast.py`` holds the hits of both ways equal on the fixtures, generated and hostile logs.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union
from collections.abc import Iterator

import msgspec

from ..format.limits import MAX_DEPTH
from ..format.model import MAX_SAFE_INT
from ..format.versions import DATA_TYPE
from .find_match import FindOptions, FindStats, FoldMatch, Hit, Matcher, TurnRef, match_fields
from .find_rows import row_hits
from .textview import Field, Shown, event_turn, shown_fields, snippet

if TYPE_CHECKING:
    import re

    from ..format.codec import RowCodec

ENABLED = True                     # False: every candidate row the exact way (tests compare both ways)
# the text types whose fields shown_fields reads from the keys of _Data only
LIGHT_TYPES = frozenset({"user/message", "assistant/message", "tool/call", "tool/result", "session/title",
                         "system/message", "developer/message", "compaction/summary"})
LIGHT_B = frozenset(t.encode() for t in LIGHT_TYPES)
TYPE_FIRST = b'{"type":"'              # how dsh writes a row: its type first (any other row: decoded to see)
_UNSET: Any = msgspec.UNSET


class _Data(msgspec.Struct):
    """The keys of a text type's payload :func:`~app.log.query.textview.shown_fields` reads (others skipped)."""
    turn: Any = _UNSET
    message: Any = _UNSET
    content: Any = _UNSET
    name: Any = _UNSET
    callId: Any = _UNSET
    arguments: Any = _UNSET
    error: Any = _UNSET
    title: Any = _UNSET
    summary: Any = _UNSET


class _Row(msgspec.Struct):
    type: str
    data: _Data
    seq: Any = _UNSET
    seq0: Any = _UNSET


_DECODE_ROW = msgspec.json.Decoder(_Row).decode
_KEYS = _Data.__struct_fields__


class _Ev:
    """What ``shown_fields`` and ``event_turn`` read of an event: its type and payload."""
    __slots__ = ("type", "data")

    def __init__(self, typ: str, data: dict[str, Any]):
        self.type, self.data = typ, data


Match = Union["re.Match[str]", FoldMatch]


def light_event(raw: bytes, envelope_seqs: Optional[dict[object, int]] = None,
                pos: object = None) -> Optional[tuple[int, Any]]:
    """(seq, event) of a row of a v2+ log whose fields the exact decoder reads alike, decoded only as far as
    ``shown_fields`` reads a text type (:class:`_Data`); None where the exact way is needed: a row over the
    limits, not JSON (or invalid UTF-8), no valid seq or payload object, a packed row, a type shown as a
    generic row (its whole payload), or a payload key of a type the codec drops (``field_problems``).
    ``envelope_seqs``: the codec's, for a row written without its seq (at ``pos``)."""
    if raw.startswith(TYPE_FIRST) and raw[9:raw.find(b'"', 9)] not in LIGHT_B:
        return None                                # (another type: no payload decoded in vain)
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH:
        return None
    try:
        row = _DECODE_ROW(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
    seq, typ = row.seq, row.type
    if envelope_seqs is not None and seq is _UNSET and row.seq0 is _UNSET and pos in envelope_seqs:
        seq = envelope_seqs[pos]                   # (an envelope-free snapshot: the seq the codec restores)
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INT or typ not in LIGHT_TYPES:
        return None
    d = row.data
    data = {k: v for k in _KEYS if (v := getattr(d, k)) is not _UNSET}
    try:
        msgspec.convert(data, DATA_TYPE)
    except msgspec.ValidationError:
        return None
    return seq, _Ev(typ, data)


class FastRows:
    """The hits of the candidate rows of one find, each decoded only as far as its fields need where it
    allows (:func:`light_event`); :meth:`of` is None where this way is off (a v0/v1 log, whose shapes the
    codec converts; :data:`ENABLED` False)."""

    def __init__(self, codec: RowCodec, opts: FindOptions, matcher: Matcher):
        self.codec, self.opts, self.matcher = codec, opts, matcher
        self.also: tuple[re.Pattern[str], ...] = tuple(opts.also)

    @classmethod
    def of(cls, codec: RowCodec, opts: FindOptions, matcher: Matcher) -> Optional[FastRows]:
        if not ENABLED or codec.version < 2:
            return None
        return cls(codec, opts, matcher)

    def hits(self, raw: bytes, pos: object, offset: int, line: Optional[int], turn: TurnRef,
             st: FindStats) -> Iterator[Hit]:
        """The hits of one stored row, as :func:`~.find_rows.row_hits` gives them."""
        le = light_event(raw, self.codec.envelope_seqs, pos)
        if le is None:
            return row_hits(self.codec, raw, pos, offset, line, self.matcher, self.opts, turn, st)
        st.rows_decoded += 1
        st.rows_fast += 1
        seq, ev = le
        shown = shown_fields(ev)
        return self._hits(seq, ev, shown, self._match([sh.field for sh in shown]), offset, line, turn, st)

    def _match(self, fields: list[Field]) -> list[tuple[int, Match, int]]:
        """(field index, first match, matches) of each field that matches (``match_fields``)."""
        at = {id(f): i for i, f in enumerate(fields)}
        return [(at[id(f)], m, n) for f, m, n in match_fields(fields, self.matcher, self.opts.kinds, self.also)]

    @staticmethod
    def _hits(seq: int, ev: Any, shown: list[Shown], found: list[tuple[int, Match, int]], offset: int,
              line: Optional[int], turn: TurnRef, st: FindStats) -> Iterator[Hit]:
        t = None
        for i, m, n in found:
            sh = shown[i]
            f = sh.field
            if t is None:
                t = event_turn(ev)
                if t is None:
                    t = turn() if callable(turn) else turn
            snip, a, b = snippet(f.text, m.start(), m.end())
            st.hits += 1
            yield Hit(seq=seq, turn=t, kind=f.kind, snippet=snip, span=(a, b), start=m.start(), end=m.end(),
                      matches=n, tool=f.tool, line=line, offset=offset if offset >= 0 else None,
                      member=None, call=sh.call, block=sh.block)
