"""Would dsh refuse to load this log?  (spec §5 physical tail, §1.8, v0 store rules)

dsh's store scanner reads the rows in order; the first row that does not decode as an
event with the next seq (malformed, bad envelope, seq gap or disorder) ends the kept
prefix.  If any *later* row holds a ``turn/end`` (it parses as a JSON object whose
``type`` is ``turn/end``, whatever its envelope), the defect is a corrupt committed row
and dsh refuses the whole log; otherwise it is a torn tail that a repair truncates.

Session Lens still opens such a log (every face answers), but says that dsh would not:
:func:`dsh_refusals` gives the reasons, one fast forward scan that decodes only the
envelope keys.  :class:`EventChecks` adds per-event checks dsh makes on load that the
row codec does not (``sourceEventSeqs`` pointing forwards, a request header without
provider/model).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import msgspec

from ..format.codec import DecodeError, decode_js, decode_json
from ..format.model import BadRow, Event, Item, Problem
from ..format.versions import decode_seq_ranges

if TYPE_CHECKING:
    from .reader import LogReader
    from ..source.sources import Segment



def holds_turn_end(row: Item) -> bool:
    """A row that holds a ``turn/end``: a decoded turn/end event, or a bad row whose JSON
    is an object with ``type: "turn/end"`` (its envelope may be bad)."""
    if type(row) is Event:
        return row.type == "turn/end"
    if isinstance(row, BadRow) and row.kind in ("bad-envelope", "bad-utf8"):
        try:
            obj, _ = decode_json(row.raw)
        except DecodeError:
            return False
        return isinstance(obj, dict) and bool(obj.get("type") == "turn/end")
    return False


class _Defect:
    __slots__ = ("why", "line", "offset", "seq")

    def __init__(self, why: str, line: Optional[int] = None, offset: Optional[int] = None,
                 seq: Optional[int] = None):
        self.why, self.line, self.offset, self.seq = why, line, offset, seq


def _row_holds_turn_end_raw(raw: bytes) -> bool:
    if b"turn/end" not in raw:
        return False
    try:
        obj = decode_js(raw)                     # (1e999 in its data: still a turn/end; issue 27)
    except msgspec.DecodeError:
        return False
    return isinstance(obj, dict) and obj.get("type") == "turn/end"


def dsh_refusals(reader: LogReader) -> list[Problem]:
    """Problems (code ``dsh-would-refuse``) when dsh would refuse to load the log, else [].

    Segments without a defect are checked with the envelope-only scan; only the segment
    holding the first defect is split row by row to name it.  A reader whose seq index shows
    every stored row readable and contiguous (an unreadable row stops ``contiguous_through``
    before any later row) has no defect but perhaps its last row, which alone is never a
    refusal: no scan."""
    idx = getattr(reader, "index", None)
    if idx is not None and idx.events and idx.contiguous_through == idx.last:
        return []
    expected = 0
    first: Optional[_Defect] = None
    corrupt_by: Optional[_Defect] = None
    for seg in reader.source.forward():
        if first is None:
            if seg.bad:
                first = _Defect(f"unreadable segment: {seg.bad}", offset=seg.pos if isinstance(seg.pos, int) else None)
                continue
            rows = reader.scan_segment_rows(seg, [])
            exp, clean = expected, True
            for _typ, s, n in rows:
                if s is None or s != exp:
                    clean = False
                    break
                exp = s + n
            if clean:
                expected = exp
                continue
            first, corrupt_by, expected = _locate(reader, seg, expected)
        elif not seg.bad and (seg.rows is not None or b"turn/end" in seg.data):
            # Segment.split_rows is annotated by the sources typing pass (perf2 branch)
            for _pos, off, line, raw, complete in seg.split_rows():
                if complete and _row_holds_turn_end_raw(raw):
                    corrupt_by = _Defect("turn/end", line=line, offset=off if off >= 0 else None)
                    break
        if corrupt_by is not None:
            break
    if first is None or corrupt_by is None:
        return []
    where = f"line {first.line}" if first.line is not None else (f"byte {first.offset}" if first.offset is not None
                                                                  else "a row")
    later = f"line {corrupt_by.line}" if corrupt_by.line is not None else "a later row"
    return [Problem(code="dsh-would-refuse",
                    message=f"corrupt committed row at {where} ({first.why}): {later} still holds a turn/end, so "
                            "this is not a torn tail; dsh refuses to load this log and a repair would not truncate it",
                    line=first.line, offset=first.offset, seq=first.seq)]


def _locate(reader: LogReader, seg: Segment, expected: int) -> tuple[Optional[_Defect], Optional[_Defect], int]:
    """(first defect, a later turn/end in the same segment or None, expected seq) of one segment."""
    first: Optional[_Defect] = None
    # Segment.split_rows is annotated by the sources typing pass (perf2 branch)
    for pos, off, line, raw, complete in seg.split_rows():
        o = off if off >= 0 else None
        if first is not None:
            if complete and _row_holds_turn_end_raw(raw):
                return first, _Defect("turn/end", line=line, offset=o), expected
            continue
        if not complete:
            if raw:
                first = _Defect("torn last row", line=line, offset=o)
            continue
        if not raw.strip():
            first = _Defect("empty line", line=line, offset=o)
            continue
        items: list[Item]
        items, _ = reader.codec.decode_row(raw, pos=pos, offset=off, line=line)
        for it in items:
            if isinstance(it, BadRow) and it.kind == "over-limit":
                # Session Lens's own limit, not a defect dsh sees: the row's seqs (when known) continue
                if it.seqs is not None and it.seqs[0] == expected:
                    expected = it.seqs[0] + it.seqs[1]
                    continue
                if it.seqs is None:
                    expected = -1                 # unknown: the next row's seq is taken as it comes
                    continue
            if isinstance(it, BadRow):
                first = _Defect(f"{it.kind} row: {it.reason}", line=line, offset=o)
                break
            if expected == -1:
                expected = it.seq
            if it.seq != expected:
                first = _Defect(f"seq {it.seq} where {expected} was expected", line=line, offset=o, seq=it.seq)
                break
            expected = it.seq + 1
    return first, None, expected


def _expand_seqs(v: object) -> Optional[list[int]]:
    """Logical list of a stored ``sourceEventSeqs`` (numbers and inclusive [start, end] pairs)."""
    if not isinstance(v, list):
        return None
    seqs: list[Any]
    seqs, why = decode_seq_ranges(v)
    if why or not all(type(s) is int for s in seqs):
        return None
    return seqs


class EventChecks:
    """Per-event load checks: ``sourceEventSeqs`` strictly backwards; request config names
    provider and model.  ``refusing`` lists the problems that make dsh refuse the log."""

    def __init__(self) -> None:
        self.problems: list[Problem] = []
        self.refusing: list[Problem] = []

    def apply(self, ev: Event) -> None:
        if ev.synthesized:
            return
        ses = ev.source_event_seqs
        if ses is not None:
            seqs = _expand_seqs(ses)
            if seqs is None:
                self._add(ev, "bad-source-seqs", f"sourceEventSeqs {ses!r} is not a list of seqs", refuse=True)
            else:
                ahead = [s for s in seqs if s >= ev.seq]
                if ahead:
                    self._add(ev, "source-seqs-not-backwards",
                              f"sourceEventSeqs {ahead} do not point strictly backwards (each must be < {ev.seq}); "
                              "dsh refuses such an envelope", refuse=True)
                elif len(set(seqs)) != len(seqs):
                    self._add(ev, "source-seqs-not-unique", "sourceEventSeqs repeats a seq; dsh refuses such an "
                                                            "envelope", refuse=True)
        if ev.type == "request/header" and isinstance(ev.data, dict):
            hdr = ev.data.get("header")
            cfg = hdr.get("config") if isinstance(hdr, dict) else None
            missing = [k for k in ("provider", "model")
                       if not (isinstance(cfg, dict) and isinstance(cfg.get(k), str) and cfg.get(k))]
            if missing:
                self._add(ev, "request-header-incomplete",
                          f"request/header config has no {' or '.join(missing)}", refuse=False)

    def _add(self, ev: Event, code: str, msg: str, refuse: bool) -> None:
        p = Problem(code=code, message=msg, seq=ev.seq, line=ev.line, offset=ev.offset if ev.offset >= 0 else None)
        self.problems.append(p)
        if refuse:
            self.refusing.append(p)
