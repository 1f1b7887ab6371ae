"""The one screen of every fast path: the rows a lean record must not take, whatever it declares (issue 27).

A lean msgspec record (:mod:`app.log.format.fastrows`, the timeline's and the surface index's readers) checks only
the fields it declares: the rest of the row is skipped, as JSON, but msgspec neither bounds the depth of what it
skips, nor validates its strings as UTF-8, nor *parses its numbers*.  The exact decoder
(:meth:`app.log.format.codec.RowCodec.decode_row`, msgspec to Python objects) refuses a row over the size or depth
limit of :mod:`app.log.format.limits`, and reads a row with invalid UTF-8 with a problem; and it refuses a row
holding a number out of range (``1e999``, ``-1E400``, a float of more than ~309 integral digits, an integer of more
than 4300 digits: "Number out of range").  :func:`refused_py` is the rule that sends such rows the exact way:

* over ``max_row`` bytes; not UTF-8; nested deeper than ``max_depth`` (brackets outside strings);
* outside strings, a run of more than 18 digits or an exponent (an ``e``/``E`` after a digit or a point).  This
  is wider than the exact decoder's refusal (``1.5e3`` and a 400-digit integer are read there): such rows are
  rare in real logs and the exact way gives the same answer, only slower.  A digit, ``e`` or digit run inside a
  string (a backslash before a quote or a backslash escapes it) is never a reason.

It is the rule of the timeline's scan (``tl_refused`` in the timelinec section of ``app/log/index/rowscan_c.c``,
which reports it for every row that scan leaves); :func:`c_screens` gives that C code for one row and for a list of
rows (``screen_row``/``screen_rows``, the numbers section).  Where the scanner is not built,
:mod:`app.log.format.fastrows` makes its bytes checks and :func:`hinted` (:func:`hint`, a prefilter, then
:func:`number_refused` on the rows it finds: each a few C-level passes over the row).
``tests/test_fastrows_numbers.py`` holds the C and interpreted screens equal and every fast path equal to the exact
one on rows holding such numbers.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Optional

from .limits import MAX_DEPTH, MAX_ROW_BYTES

_DIGITS = frozenset(b"0123456789")


def refused_py(row: bytes, max_row: int = MAX_ROW_BYTES, max_depth: int = MAX_DEPTH) -> int:
    """1 when the row is over ``max_row`` bytes, not UTF-8, nested deeper than ``max_depth`` (brackets outside
    strings; in a string a backslash before a quote or a backslash escapes it), or holds outside strings a run of
    more than 18 digits or an exponent (an ``e``/``E`` after a digit or a point): the definition of the screen."""
    if len(row) > max_row:
        return 1
    try:
        row.decode("utf-8")
    except UnicodeDecodeError:
        return 1
    depth = top = run = 0
    in_str = False
    i, n = 0, len(row)
    while i < n:
        c = row[i]
        if in_str:
            if c == 0x5C and i + 1 < n and row[i + 1] in (0x22, 0x5C):
                i += 1
            elif c == 0x22:
                in_str = False
            i += 1
            continue
        if c in _DIGITS:
            run += 1
            if run > 18:
                return 1
            i += 1
            continue
        if c in b"eE" and i > 0 and (row[i - 1] in _DIGITS or row[i - 1] == 0x2E):
            return 1
        run = 0
        if c == 0x22:
            in_str = True
        elif c in (0x5B, 0x7B):
            depth += 1
            top = max(top, depth)
        elif c in (0x5D, 0x7D):
            depth -= 1
        i += 1
    return int(top > max_depth)


@functools.cache
def c_screens() -> tuple[Optional[Callable[[bytes, int, int], bool]], Optional[Callable[[list[bytes], int, int], list[int]]]]:
    """(``screen_row``, ``screen_rows``) of the row scanner in C where it is built from this source, else Nones
    (loaded on first use: the index package imports this one)."""
    from ..index.fastindex import load_rowscan_c
    mod = load_rowscan_c()
    return getattr(mod, "screen_row", None), getattr(mod, "screen_rows", None)


# digits -> "0", "." kept, "e"/"E" -> "e", a quote kept, any other byte -> a space: the number test made with finds
_NUM_TABLE = bytes(0x30 if 0x30 <= c <= 0x39 else c if c in b'."' else 0x65 if c in b"eE" else 0x20 for c in range(256))
_RUN = b"0" * 19


def _has_number(t: bytes) -> bool:
    return b"0e" in t or b".e" in t or _RUN in t


def hint(row: bytes) -> bool:
    """Whether ``row`` may hold a number :func:`refused_py` refuses (strings not told apart: a superset)."""
    return _has_number(row.translate(_NUM_TABLE))


def number_refused(row: bytes) -> bool:
    """:func:`refused_py`'s number test alone, in C-level passes: the escaped backslashes, then the escaped quotes,
    blanked (the same length: every quote left opens or closes a string), the strings cut out, the finds of
    :func:`hint` made on what is left.  The same answer as :func:`refused_py` on every row that is JSON."""
    t = row.replace(b"\\\\", b"  ").replace(b'\\"', b"  ").translate(_NUM_TABLE)
    return _has_number(b" ".join(t.split(b'"')[::2]))


def hinted(rows: list[bytes]) -> set[int]:
    """Indexes of the rows :func:`number_refused` refuses, tested only on the rows :func:`hint` finds."""
    return {i for i, r in enumerate(rows) if hint(r) and number_refused(r)}


__all__ = ["refused_py", "c_screens", "hint", "number_refused", "hinted"]
