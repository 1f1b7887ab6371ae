"""Whole-log find's turn of a row that names none, and the rows of the prefilter's places, in C (pure core, no Qt):
rowscan_c.last_turn and rowscan_c.row_starts (the find6 section) and their definitions.

A hit of a row that names no turn (a user message, a compaction summary…) takes the turn of the last ``turn/start`` row
before it (:class:`.find_rows.TurnTracker`), which asked :func:`.find_rows.last_turn_in`: passes of 16 KiB stretches
back from the row, the rows found sliced out and matched by a regex, in Python, for each ask (a common word's hits ask
in most windows, ~30,000 times in the 1 GB log).  Now each ask is one call of ``last_turn`` (the last row holding
``"turn/start"`` before the row, found backwards 16 places a step, with the turn of a row written the plain dsh way,
the one :data:`PLAIN_TURN` reads); a row not written that way is read by ``find_rows.turn_of_row`` as before, and the
ask goes on before it: the same rows read, in the same order, the same answers and counts as ``last_turn_in``.
``tests/test_find_turns.py`` holds the C to :func:`last_turn_py` and the tracker to ``last_turn_in``.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from ..format.model import MAX_SAFE_INT
from ..index.fastindex import load_rowscan_c

LAST_TURN = getattr(load_rowscan_c(), "last_turn", None)
ROW_STARTS = getattr(load_rowscan_c(), "row_starts", None)   # (find_rows.row_starts in C: find_rows.row_starts_py)
TURN_START = b'"turn/start"'
# a turn/start row as dsh writes it (no space, keys in its order, integers): its turn read with no decode (the turn
# the codec's event names: a valid seq, the payload {"turn": int}; tests/test_find_light_turn.py holds it to the decode)
PLAIN_TURN = re.compile(rb'\{"type":"turn/start","seq":(0|[1-9][0-9]{0,15}),"time":(?:0|[1-9][0-9]{0,15}),'
                        rb'"data":\{"turn":(0|[1-9][0-9]{0,15})\}\}')
ENABLED = True                     # False: the tracker asks last_turn_in, row_starts is Python's (tests compare both)


def last_turn_py(data: Any, stop: int, end: int) -> Optional[tuple[int, int, Optional[int]]]:
    """The definition of ``rowscan_c.last_turn``: (start, end, turn) of the row of the last place of ``"turn/start"``
    wholly inside ``data[stop:end]`` (its start after a newline or 0, its end its newline before ``end`` or ``end``),
    its turn where :data:`PLAIN_TURN` matches it whole with a seq of at most ``MAX_SAFE_INT``, else None; None: no
    place."""
    end = min(end, len(data))
    o = data.rfind(TURN_START, max(stop, 0), end)
    if o < 0:
        return None
    s = data.rfind(b"\n", 0, o) + 1
    e = data.find(b"\n", o, end)
    e = end if e < 0 else e
    m = PLAIN_TURN.fullmatch(bytes(data[s:e]))
    return s, e, int(m[2]) if m is not None and int(m[1]) <= MAX_SAFE_INT else None


def last_turn(data: Any, stop: int, end: int) -> Optional[tuple[int, int, Optional[int]]]:
    """rowscan_c.last_turn where the C is built, else its definition."""
    return (LAST_TURN or last_turn_py)(data, stop, end)
