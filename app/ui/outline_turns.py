"""The outline's turns as the window keeps them: packed (:mod:`app.log.query.outline_packed`, where the
outline child packs them before sending; issue 36), their blocks in a temporary file
(:func:`keep_small`)."""
from __future__ import annotations

from array import array
from typing import Any

from ..log.query.outline_packed import TURN_BLOCK, CompactTurns, ErrorRows, SeqArray
from ..log.blockfile import BlockFile

__all__ = ["TURN_BLOCK", "CompactTurns", "ErrorRows", "SeqArray", "keep_small"]


def _narrow(a: Any) -> Any:
    """``a`` as 32-bit ints when every value fits (turn numbers, first seqs, offsets in a block; turn numbers past
    64 bits are a list, kept as it is)."""
    return array("i", a) if isinstance(a, array) and a.typecode == "q" and (not a or min(a) > -(1 << 31) and max(a) < 1 << 31) else a


def keep_small(turns: CompactTurns) -> CompactTurns:
    """What the window keeps of the whole log's turns (issue 36): the compressed blocks move to a
    :class:`~app.log.blockfile.BlockFile` (an unlinked temporary file, read back through a memory
    map when the outline view shows a row), the per-turn columns to 32 bits where they fit.
    On a 4 GB log's ~96 K turns that is ~2 MB of heap instead of ~9.5 MB.  In place; returns ``turns``."""
    if not isinstance(turns.blocks, BlockFile):
        turns.blocks = BlockFile(turns.blocks)
    turns.ends = _narrow(turns.ends)
    turns.numbers = _narrow(turns.numbers)
    turns.first_seqs = _narrow(turns.first_seqs)
    return turns
