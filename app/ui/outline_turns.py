"""The outline's turns as the window keeps them: packed (:mod:`app.log.query.outline_packed`, where the
outline child packs them before sending; issue 36)."""
from __future__ import annotations

from ..log.query.outline_packed import TURN_BLOCK, CompactTurns, ErrorRows, SeqArray

__all__ = ["TURN_BLOCK", "CompactTurns", "ErrorRows", "SeqArray"]
