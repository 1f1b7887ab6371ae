"""An event whose payload is decoded when first read (issue 29: *Errors only*'s page of the whole log).

*Errors only* shows thousands of error rows of a long log as one page, and reads each one's payload only when its
row is shown, or inspected.  :func:`lean_event` reads a stored row through the lean records of
:mod:`app.log.format.fastrows`, which accept a row only when the exact path
(:meth:`~app.log.format.codec.RowCodec.decode_row`) would read it with no problem, no conversion and no dropped
field: the envelope (seq, type, time, surface op, cited seqs) comes from the record, and ``data`` is the exact
path's, decoded from the row's bytes on its first read (:class:`LazyEvent`).  A row the records refuse is read the
exact way by the caller.

The record itself (``lean``) stays with the event until ``data`` is read, or the page lets it go: what a page needs of
every row at once (the attempt tracker's and the summary's facts, :mod:`app.ui.history.sparse`) is read from it, never
from ``data``.
"""
from __future__ import annotations

from typing import Any, Optional

from . import fastrows as fr
from .model import Event

_DATA = Event.__dict__["data"]          # the field's slot (LazyEvent's ``data`` is a property over it)
_UNREAD: Any = object()                 # ``data`` not decoded yet


class LazyEvent(Event, kw_only=True, dict=True):
    """An :class:`~app.log.format.model.Event` whose ``data`` is decoded from ``raw`` by ``codec`` on first read
    (it is then the exact path's ``data``); ``lean``: its lean record until then."""
    codec: Any = None
    lean: Any = None

    @property  # type: ignore[misc]
    def data(self) -> Any:
        d = _DATA.__get__(self)
        if d is _UNREAD:
            d = self._decode()
        return d

    @data.setter
    def data(self, value: Any) -> None:
        _DATA.__set__(self, value)

    def load(self) -> Any:
        """``data``, decoded now where it is not yet (in a worker: not later, where it is read)."""
        return self.data

    @property
    def decoded(self) -> bool:
        return _DATA.__get__(self) is not _UNREAD

    def _decode(self) -> Any:
        items = self.codec.decode_row(self.raw, pos=self.pos, offset=self.offset, line=self.line)[0]
        d = next((it.data for it in items if type(it) is Event and it.seq == self.seq), None)
        _DATA.__set__(self, d)
        self.lean = None
        return d


def lean_event(codec: Any, decs: dict[bytes, Any], raw: bytes, pos: Any, offset: int, line: Optional[int]) -> Optional[LazyEvent]:
    """The event of stored row ``raw`` as a :class:`LazyEvent` when the lean records read it exactly (a v2+ log's
    unpacked event row: ``decs`` are :func:`~app.log.format.fastrows.timeline_decoders` of its version), else None
    (the caller reads it the exact way)."""
    return _event(codec, fr.record_of(decs, raw, False), raw, pos, offset, line)


def lean_events(codec: Any, decs: dict[bytes, Any], rows: list[tuple[bytes, Any, int, Optional[int]]]
                ) -> list[Optional[LazyEvent]]:
    """:func:`lean_event` of each ``(raw, pos, offset, line)`` of ``rows``, the row screen made once for all
    (:func:`~app.log.format.fastrows.refused_rows`) and each row then read as
    :func:`~app.log.format.fastrows.record_of` reads one that passes it."""
    refused = fr.refused_rows([r[0] for r in rows], False)
    out: list[Optional[LazyEvent]] = []
    for i, (raw, pos, offset, line) in enumerate(rows):
        dec = decs.get(raw[9:raw.find(b'"', 9)]) if raw.startswith(b'{"type":"') else None
        rec = None
        if dec is not None and i not in refused:
            try:
                rec = dec(raw)
            except fr.DECODE_ERRORS:
                rec = None
            if rec is not None and rec.K >= fr.CHECKED and not fr.record_ok(rec, False):
                rec = None
        out.append(_event(codec, rec, raw, pos, offset, line))
    return out


def _event(codec: Any, rec: Any, raw: bytes, pos: Any, offset: int, line: Optional[int]) -> Optional[LazyEvent]:
    if rec is None or rec.K <= fr.PACKED_CALL:
        return None
    return LazyEvent(seq=rec.seq, type=rec.T, time=rec.time, data=_UNREAD, surface_op=rec.surfaceOp,
                     source_event_seqs=rec.sourceEventSeqs, ignorable=rec.ignorable, raw=raw, pos=pos, offset=offset,
                     line=line, codec=codec, lean=rec)


def lean_decoders(codec: Any) -> Optional[dict[bytes, Any]]:
    """The lean decoders for the rows of ``codec``'s log, or None where its rows are never read lean (a v0/v1 log:
    legacy conversions; an envelope-free snapshot: seqs restored from positions)."""
    if codec.version < 2 or codec.envelope_seqs is not None:
        return None
    return fr.timeline_decoders(codec.version)


def lean_error(ev: Any) -> Optional[bool]:
    """Whether a tool result's or a turn end's payload says it failed (``data.error`` set, or ``data.isError``
    true; a turn end's reason of kind ``error``), from its lean record while its payload is not decoded; None where
    the record cannot say (a result without ``error``: ``isError`` is not in its record) or the payload is read."""
    rec = ev.lean if type(ev) is LazyEvent else None
    if rec is None:
        return None
    if rec.T == "turn/end":
        return bool(rec.data.reason.get("kind") == "error")
    if rec.T == "tool/result" and rec.data.error is not None:
        return True
    return None
