"""The outline's turns as the window keeps them: packed (:mod:`app.log.query.outline_packed`, where the
outline child packs them before sending; issue 36), their blocks in a temporary file
(:func:`keep_small`)."""
from __future__ import annotations

from ..log.query.outline_packed import TURN_BLOCK, CompactTurns, ErrorRows, SeqArray
from ..log.blockfile import BlockFile

__all__ = ["TURN_BLOCK", "CompactTurns", "ErrorRows", "SeqArray", "keep_small"]


def keep_small(turns: CompactTurns) -> CompactTurns:
    """What the window keeps of the whole log's turns (issue 36): the compressed blocks in a
    :class:`~app.log.blockfile.BlockFile` (an unlinked temporary file, read back through a memory
    map when the outline view shows a row; the pass's child sends them so), the per-turn columns in 32 bits where
    they fit (:meth:`CompactTurns.narrow`).  On a 4 GB log's ~96 K turns that is ~2 MB of heap instead of ~9.5 MB.
    In place; returns ``turns``."""
    if not isinstance(turns.blocks, BlockFile):
        turns.blocks = BlockFile(turns.blocks)
    return turns.narrow()
