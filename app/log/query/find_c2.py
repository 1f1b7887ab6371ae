"""Whole-log find's hits of a window's candidate rows made in C (pure core, no Qt): rowscan_c.find_hits (the
findc2 section) and its definition.

``find_hits`` answers what ``text_hits`` (:func:`.find_fast.text_hits_py`) answers, and makes each hit tuple the
:class:`~.find_fast.LazyHit` :meth:`.find_fast.FastRows.lazy_hit` makes of it, faster: the row is read without
storing the parts no field is made from (an assistant message's stream), its fields are matched as UTF-8 in C
(no Python string made), and the hits are made in C.  It says in ``flags`` what the caller must still look at
(:data:`LEFT` rows left to it, :data:`NO_TURN` hits of a row naming no turn, :data:`BLOCKS` hits of tool-call
blocks), so that a window holding none of them is handed on whole (:func:`app.log.query.find.find`).

:func:`find_hits_py` is the definition; ``tests/test_find_c2.py`` holds the two equal, and find's hits to the
exact way's.
"""
from __future__ import annotations

from typing import Any

from ..index.fastindex import load_rowscan_c
from .find_fast import FastRows, LazyHit, text_hits_py
from .find_light import TYPE_FIRST
from .find_match import fold_count_py
from .find_more import more_items
from .find_rows import row_starts_py
from .textrow import FIELDS, NOTHING, SPECIAL, text_row_c, text_row_py
from .textview import ERROR, TOOL_CALL, TOOL_OUTPUT

FIND_HITS = getattr(load_rowscan_c(), "find_hits", None)
LEFT, NO_TURN, BLOCKS = 1, 2, 4       # flags: a row left to the caller, a hit of a row naming no turn, a block's hit
MAX_HITS = 4096                       # a row of more hits is left to the caller (the C's fixed room)
ENABLED = True                        # False: find takes text_hits (tests compare both)


C2_KINDS = (TOOL_CALL, TOOL_OUTPUT, ERROR)   # (the error kind: :mod:`.find_more`'s error fields)


def c2_ready(fast: FastRows) -> bool:
    """find_hits takes ``fast``'s find (its C text hits on, the C built, the needle valid UTF-8: not a lone
    surrogate)."""
    if not ENABLED or FIND_HITS is None or fast.c_hits is None or fast.src is None:
        return False
    try:
        fast.c_hits[1].encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def find_hits_py(data: Any, starts: list[int], lim: int, torn: bool, max_row: int, types: tuple[bytes, ...],
                 needle: bytes, mode: int, kinds: tuple[str, ...],
                 make: tuple[type, Any, Any, int], places: bool = False) -> tuple[list[Any], int, int]:
    """The definition of ``rowscan_c.find_hits``: :func:`.find_fast.text_hits_py`'s items (the rows of the types
    :mod:`.find_more` adds read as :func:`.find_more.more_items` reads them), a row of more than
    :data:`MAX_HITS` hits left to the caller, each hit tuple made the hit ``make`` = (cls, fast rows, source, base)
    says (:meth:`.FastRows.lazy_hit`'s, its turn None where the row names none); (items, rows read, flags).
    ``places``: ``starts`` holds places in rows (ascending, none negative), the rows' starts found as :func:`.find_rows.row_starts_py`
    finds them."""
    if places:
        starts = row_starts_py(data, [c for c in starts if c >= 0], lim)
    text = needle.decode("utf-8")
    items, read = text_hits_py(data, starts, lim, torn, max_row, types, text, mode, kinds[:2])  # type: ignore[arg-type]
    items, more = more_items(data, items, lim, max_row, types, text, mode, kinds)
    read += more
    quiet = [it for it in items if type(it) is int and _quiet(data, it, lim, max_row, types, text, mode)]
    items = [it for it in items if type(it) is not int or it not in quiet]
    read += len(quiet)
    cls, fr, src, base = make
    out: list[Any] = []
    flags = 0
    i = 0
    while i < len(items):
        it = items[i]
        if type(it) is int:
            out.append(it)
            flags |= LEFT
            i += 1
            continue
        j = i
        while j < len(items) and type(items[j]) is not int and items[j][0] == it[0]:
            j += 1
        row = items[i:j]
        i = j
        if len(row) > MAX_HITS:
            out.append(it[0])
            flags |= LEFT
            read -= 1
            continue
        for s, n, seq, t, kind, tool, call, block, a, b, count, k in row:
            h: Any = object.__new__(cls)
            h.__dict__ = dict(seq=seq, turn=t, kind=kind, start=a, end=b, matches=count, tool=tool, line=None,
                              offset=base + s, member=None, call=call, block=block,
                              _source=(fr, src, base + s, n, k))
            out.append(h)
            flags |= (NO_TURN if t is None else 0) | (BLOCKS if block else 0)
    return out, read, flags


def _quiet(data: Any, s: int, lim: int, max_row: int, types: tuple[bytes, ...], needle: str, mode: int) -> bool:
    """The row at ``s`` is a generic row (a type neither of ``types`` nor of textrow's SPECIAL) whose text as the C
    ``text_row`` reads it holds no match: it has no hit (:meth:`.FastRows._may_hit`'s gate), read without a decode."""
    e = data.find(b"\n", s, lim)
    raw = bytes(data[s:lim if e < 0 else e])
    q = raw.find(b'"', 9)
    if not 10 <= len(raw) <= max_row or not raw.startswith(TYPE_FIRST) or q < 0 or raw[9:q] in types \
            or raw[9:q] in SPECIAL:
        return False
    r = (text_row_c() or text_row_py)(raw, False)
    if r is None or r[0] not in (NOTHING, FIELDS):
        return False
    for _kind, text in r[4] if r[0] == FIELDS else ():
        got = fold_count_py(text, needle) if mode == 0 else (text.find(needle), text.count(needle))
        if got is None or got[1]:
            return False
    return True


def find_hits_of(fast: FastRows, data: Any, starts: list[int], lim: int, torn: bool, base: int,
                 max_row: int, types: tuple[bytes, ...], kinds: tuple[str, ...],
                 places: bool = False) -> tuple[list[Any], int, int]:
    """find_hits (or its definition where the C is not there) of a window's candidate rows for ``fast``'s find."""
    mode, needle = fast.c_hits  # type: ignore[misc]
    f = FIND_HITS or find_hits_py
    return f(data, starts, lim, torn, max_row, types, needle.encode("utf-8"), mode, kinds,
             (LazyHit, fast, fast.src, base), places)
