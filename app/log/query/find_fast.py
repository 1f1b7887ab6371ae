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

``tests/test_find_text_fast.py`` holds the hits and stats of both ways equal (:data:`ENABLED` off: the exact
way) on every fixture, zstd and SQLite sessions, hostile, generated and edited logs.  The light decode itself
is :mod:`.find_light`; the fields of the commonest shapes are read by :mod:`.find_shown`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Iterator

from .find_light import light_event
from .find_match import FindOptions, FindStats, Hit, Match, Matcher, TurnRef, match_fields
from .find_rows import row_hits, shown_hit
from .find_shown import quick_shown
from .textrow import CALL, FIELDS, RESULT, TURN, NOTHING, text_row_c
from .textview import TITLE, TOOL_CALL, TOOL_OUTPUT, Field, Shown, event_turn, plain, shown_fields

if TYPE_CHECKING:
    import re

    from ..format.codec import RowCodec

ENABLED = True                     # False: every candidate row the exact way (tests compare both ways)
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
        self.tried = self.passed = 0

    @classmethod
    def of(cls, codec: RowCodec, opts: FindOptions, matcher: Matcher) -> Optional[FastRows]:
        if not ENABLED or codec.version < 2:
            return None
        return cls(codec, opts, matcher)

    def hits(self, raw: bytes, pos: object, offset: int, line: Optional[int], turn: TurnRef,
             st: FindStats) -> Iterator[Hit]:
        """The hits of one stored row, as :func:`~.find_rows.row_hits` gives them."""
        if self.text_row is not None and not self._may_hit(raw):
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
