"""The surface index's pass over the rows it reads, on the lean records of :mod:`app.log.format.fastrows` (issue 29:
``page`` on a fresh cache waits for this pass).

:func:`app.log.fold.surface._surface_rows` decodes every stored row whose bytes can hold a surface event, a
compaction marker, a step boundary or an image offload: in a long log most of them are step boundaries and plain
appends of messages, each built as a whole :class:`~app.log.format.model.Event` (its content as Python objects) to
read a few fields.  :func:`lean_feeder` takes those rows from their lean record instead, only where
:func:`~app.log.format.fastrows.accepts` says the exact decode would read the row with no problem, no conversion and
no dropped field, and does to the index exactly what :meth:`~app.log.fold.surface.SurfaceIndex.apply` does with
the event:

* a ``step/start`` or ``step/end``: the event counted, the last seq, the fold's step mark;
* an ``append`` of a user message, a tool result or an assistant message (its surfaceOp exactly ``"append"``): the
  event counted, the last seq, a new surface node (an assistant message with no content is an empty one) and its
  estimated tokens (the row's length / 4, as ``_estimate`` reads ``Event.raw``).

Every other row (a replacement, a compaction, an offload, a packed row, a row the Struct refuses) takes the exact
way, in its place.  A v2 log never comes here (its fold follows the v2 head on every event).
``tests/test_surface_fast.py`` checks that the index is the same both ways.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional
from collections.abc import Callable

from ..format import fastrows as fr

if TYPE_CHECKING:
    from .surface import SurfaceIndex


def lean_feeder(idx: SurfaceIndex, version: int) -> Optional[Callable[[bytes], bool]]:
    """``take(raw)``: True when the stored row ``raw`` was folded into ``idx`` from its lean record (the caller
    skips it), False when it must take the exact way; None: every row takes the exact way (a v2 log)."""
    if version == 2:
        return None
    fold = idx.fold
    if fold.v2 is not None or fold.v0 is not None or fold.keep_events or fold.columns is None:
        return None
    step, surface, message, errors = fr.STEP, fr.SURFACE, fr.MESSAGE, fr.DECODE_ERRORS
    lean_step, lean_append = idx.lean_step, idx.lean_append
    decs = fr.decoders(version)

    def take(raw: bytes) -> bool:
        # (fastrows.accepts of one row)
        if not raw.startswith(b'{"type":"') or fr.row_refused(raw):
            return False
        dec = decs.get(raw[9:raw.find(b'"', 9)])
        if dec is None:
            return False
        try:
            rec = dec(raw)
        except errors:
            return False
        k = rec.K
        if k >= fr.CHECKED and not fr.record_ok(rec, version < 2):
            return False
        if k == step:
            lean_step(rec.T, rec.seq)
        elif k == surface:
            lean_append(rec.seq, False, len(raw))
        elif k == message:                 # (an assistant message: with no content, an empty one)
            lean_append(rec.seq, not rec.data.message.content, len(raw))
        else:
            return False
        return True
    return take

