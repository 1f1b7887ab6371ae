"""Whole-log find's turn/start rows of a window listed in one pass (pure core, no Qt): rowscan_c.turn_rows (the find6
section) and its definition, :func:`turn_rows_py`.

A hit of a row that names no turn (a user message, a compaction summary…) takes the turn of the last ``turn/start`` row
before it (:class:`.find_rows.TurnTracker`).  The tracker asked :func:`.find_rows.last_turn_in` for each such hit (a
pass over the bytes since the last one asked, and one more to the window's end): a common word's hits ask in most rows.
Now each window's ``turn/start`` rows are listed once, with the turn of each row written the plain dsh way (the one
``PLAIN_TURN`` reads), and the tracker answers from the list: the same rows read, in the same order, the
same answers and counts as ``last_turn_in`` (a row not written the plain way is read by ``find_rows.turn_of_row``, as
there).  ``tests/test_find_turns.py`` holds the C to :func:`turn_rows_py` and the tracker to ``last_turn_in``.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ..format.model import MAX_SAFE_INT
from ..index.fastindex import load_rowscan_c

TURN_ROWS = getattr(load_rowscan_c(), "turn_rows", None)
TURN_START = b'"turn/start"'
# a turn/start row as dsh writes it (no space, keys in its order, integers): its turn read with no decode (the turn
# the codec's event names: a valid seq, the payload {"turn": int}; tests/test_find_light_turn.py holds it to the decode)
PLAIN_TURN = re.compile(rb'\{"type":"turn/start","seq":(0|[1-9][0-9]{0,15}),"time":(?:0|[1-9][0-9]{0,15}),'
                        rb'"data":\{"turn":(0|[1-9][0-9]{0,15})\}\}')
ENABLED = True                     # False: the tracker asks last_turn_in (tests compare both)

Listed = tuple[list[int], list[int], list[Optional[int]]]


def turn_rows_py(data: Any, lim: int) -> Listed:
    """The definition of ``rowscan_c.turn_rows``: (starts, ends, turns) of the rows of ``data[:lim]`` holding
    ``"turn/start"`` (a row: from after a newline, or 0, to its newline, or ``lim``), in order; a row's turn where
    ``PLAIN_TURN`` matches it whole with a seq of at most ``MAX_SAFE_INT``, else None."""
    lim = max(0, min(lim, len(data)))
    starts: list[int] = []
    ends: list[int] = []
    turns: list[Optional[int]] = []
    pos = 0
    while True:
        o = data.find(TURN_START, pos, lim)
        if o < 0:
            break
        s = data.rfind(b"\n", 0, o) + 1
        e = data.find(b"\n", o, lim)
        e = lim if e < 0 else e
        m = PLAIN_TURN.fullmatch(bytes(data[s:e]))
        starts.append(s)
        ends.append(e)
        turns.append(int(m[2]) if m is not None and int(m[1]) <= MAX_SAFE_INT else None)
        pos = e + 1
    return starts, ends, turns


def turn_rows(data: Any, lim: int) -> Listed:
    """rowscan_c.turn_rows where the C is built, else its definition."""
    return (TURN_ROWS or turn_rows_py)(data, lim)
