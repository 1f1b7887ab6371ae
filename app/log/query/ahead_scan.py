"""The background pass's rows of a segment read in one C call (issue 29: the pass spent most of its time per row
in Python): :func:`ahead_rows` splits a segment's bytes into its complete rows and says of each, at C level,

* its type, when it is one the pass reads from a lean record (the keys of ``LeanRows.decs``), and whether the row
  screen (:func:`app.log.format.fastrows.row_refused`) refuses it;
* whether such a row holds one of the surface index's needles (:data:`app.log.fold.surface.SURFACE_NEEDLES`);
* a canonical step or turn boundary: exactly ``{"type":"step/start","seq":S,"time":M,"data":{"turn":A,"step":B}}``
  (and ``step/end``, ``turn/start`` without the step, ``turn/end`` with the reason ``{"kind":"completed"}``), no
  blank, plain integers of at most 15 digits -- a row its lean record accepts (a subset of its Struct's shape; the
  tests hold the two equal), its seq, turn and step read without decoding it.

:func:`ahead_rows_py` is the interpreted definition (and the fallback where the C module is not built);
``tests/test_ahead_scan.py`` holds the two equal.  :func:`batch_rows` is the pass's loop over one segment with
them: a canonical boundary goes straight to the builders, a typed row to its lean decoder, any other row the exact
way (:meth:`app.log.query.ahead.AheadPass.row`).  Pure core.
"""
from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any, Optional

from ..fold.surface import SURFACE_NEEDLES
from ..format import fastrows as fr
from ..format.limits import MAX_DEPTH, MAX_ROW_BYTES
from ..format.rowscreen import refused_py
from ..source.sources import Segment
from .ahead_rows import count_event
from .outline import TurnEntry

if TYPE_CHECKING:
    from .ahead import AheadPass

W = 6                                   # int64 fields a row: start, end, info, seq, turn, step
NONE, REFUSED, NEEDLE, SHIFT = 255, 256, 512, 12
STEP_START, STEP_END, TURN_START, TURN_END = 1, 2, 3, 4
SHAPES = {b"step/start": STEP_START, b"step/end": STEP_END, b"turn/start": TURN_START, b"turn/end": TURN_END}
_INT = rb"(0|[1-9][0-9]{0,14})"
_CANON = re.compile(rb'","seq":' + _INT + rb',"time":' + _INT + rb',"data":\{"turn":' + _INT +
                    rb'(?:,"step":' + _INT + rb'\}\}|\}\}|,"reason":\{"kind":"completed"\}\}\})\Z')


def _canon(raw: bytes, at: int, shape: int) -> Optional[tuple[int, int, int]]:
    """(seq, turn, step) of a canonical row of ``shape`` whose type's closing quote is at ``at``, else None."""
    m = _CANON.match(raw, at)
    if m is None:
        return None
    tail = raw[m.end(3):]
    want = b"}}" if shape == TURN_START else b',"reason":{"kind":"completed"}}}' if shape == TURN_END else None
    if want is None:
        return (int(m.group(1)), int(m.group(3)), int(m.group(4))) if m.group(4) is not None else None
    return (int(m.group(1)), int(m.group(3)), -1) if tail == want else None


def ahead_rows_py(data: bytes, types: tuple[bytes, ...], max_row: int, max_depth: int) -> list[int]:
    """The interpreted definition of the C ``ahead_rows`` (its records as one flat list of ints)."""
    out: list[int] = []
    a = 0
    idx = {t: k for k, t in reversed(list(enumerate(types)))}
    while True:
        e = data.find(b"\n", a)
        if e < 0:
            return out
        raw = data[a:e]
        info, f = NONE, (-1, -1, -1)
        z = raw.find(b'"', 9) if len(raw) > 9 and raw.startswith(b'{"type":"') else -1
        k = idx.get(raw[9:z]) if z >= 0 else None
        if k is not None:
            info = k
            if refused_py(raw, max_row, max_depth):
                info |= REFUSED
            else:
                shape = SHAPES.get(types[k], 0)
                got = _canon(raw, z, shape) if shape else None
                if got is not None:
                    info |= shape << SHIFT
                    f = got
            if any(n in raw for n in SURFACE_NEEDLES):
                info |= NEEDLE
        out += (a, e, info, *f)
        a = e + 1


@functools.cache
def _c_rows() -> Any:
    """The C ``ahead_rows`` (None: not built), looked up once (``load_rowscan_c`` hashes the C source to check
    its build: about a millisecond, which per segment was ~1 s of a 1 GB pass)."""
    from ..index.fastindex import load_rowscan_c
    return getattr(load_rowscan_c(), "ahead_rows", None)


def ahead_rows(data: bytes, types: tuple[bytes, ...]) -> list[int]:
    """The records of ``data``'s complete rows (see the module doc), in C where built."""
    c = _c_rows()
    if c is None:
        return ahead_rows_py(data, types, MAX_ROW_BYTES, MAX_DEPTH)
    return memoryview(c(data, types, MAX_ROW_BYTES, MAX_DEPTH)).cast("q").tolist()


_TYPES = {STEP_START: "step/start", STEP_END: "step/end", TURN_START: "turn/start", TURN_END: "turn/end"}


def _boundary(p: AheadPass, shape: int, seq: int, turn: int, pos: Any, off: int, line: Optional[int], hit: bool) -> None:
    """What ``LeanRows.take`` and ``_Surface.lean`` do with the lean record of a canonical boundary (``shape``)."""
    ob = p.ob
    typ = _TYPES[shape]
    count_event(ob, seq, line, off)
    cur = ob.cur
    if shape <= STEP_END:
        ob.sf.step_mark = (typ, seq)
        if cur is not None:
            cur.last_seq = seq
            if shape == STEP_START:
                cur.steps += 1
    elif shape == TURN_START:
        ob.cur = TurnEntry(turn=turn, first_seq=seq, last_seq=seq)
        ob.turns.append(ob.cur)
    elif cur is not None:                   # (a turn/end whose reason is {"kind": "completed"})
        cur.last_seq = seq
        cur.end = "completed"
        cur.open = False
        ob.cur = None
    if p.cp_on:
        cb = p.cb
        if cb.done or seq != cb.nxt:
            cb.done = True
            p.cp_on = False
        else:
            cb.nxt = seq + 1
            if shape == TURN_START:
                cb.turn_seq, cb.disp_turn = seq, cb.at.count
                if cb.cps.points:
                    cb.cps.points[-1].turns.append((cb.turn_seq, cb.disp_turn))
            if cb.at.open_attempts:         # (none open: ``boundary`` closes nothing)
                cb.at.boundary(typ, turn)
            if shape <= STEP_END:
                cb.sf.step_mark = (typ, seq)
    su = p.su
    if not su.stopped and (hit or su.cut is not None):      # (else ``lean`` does nothing)
        su.lean(pos, line, hit, 0, typ, seq)


def batch_rows(p: AheadPass, seg: Segment) -> Optional[int]:
    """The pass ``p`` over the rows of ``seg`` (a segment of bytes); -> its complete rows, None: cancelled."""
    data = seg.data
    lean, su = p.lean, p.su
    decs = [lean.decs[t] for t in p.types]
    recs = ahead_rows(data, p.types)
    cancel, ok, take, row_pos, text_pos = p.cancel, lean.ok, lean.take, seg.row_pos, seg.text_pos
    attempt, message, errors = fr.ATTEMPT, fr.MESSAGE, fr.DECODE_ERRORS
    # (a plain segment's row places, as its methods give them, without a call per row)
    plain = type(seg).row_pos is Segment.row_pos and type(seg).text_pos is Segment.text_pos
    base, toff = seg.pos, seg.text_offset
    line = seg.line0
    n = p.n
    pos: Any
    for s, e, info, seq, turn in zip(recs[0::W], recs[1::W], recs[2::W], recs[3::W], recs[4::W]):
        n += 1
        if cancel is not None and n % 64 == 0 and cancel():
            return None
        if plain:
            pos, off = base + s, (toff + s if toff >= 0 else -1)
        else:
            pos, off = row_pos(s), text_pos(s)
        shape = info >> SHIFT
        if shape:
            _boundary(p, shape, seq, turn, pos, off, line, info & NEEDLE != 0)
        else:
            raw = data[s:e]
            rec = None
            if info & 0xFF != NONE and not info & REFUSED:
                try:
                    rec = decs[info & 0xFF](raw)
                except errors:
                    pass
                if rec is not None and attempt <= rec.K and not ok(rec):
                    rec = None
            row = (pos, off, line, raw, True)
            if rec is None:
                p.row(row)
            else:
                p.cp_on = take(rec, pos, off, line, row, p.cp_on)
                if not su.stopped and (info & NEEDLE or su.cut is not None):     # (else ``lean`` does nothing)
                    su.lean(pos, line, info & NEEDLE != 0, e - s, rec.T, rec.seq,
                            message == rec.K and not rec.data.message.content)
        if line is not None:
            line += 1
    p.n = n
    rows = len(recs) // W
    tail = data[recs[-W + 1] + 1:] if recs else data
    if tail:
        p.n += 1
        if cancel is not None and p.n % 64 == 0 and cancel():
            return None
        at = len(data) - len(tail)
        p.row((row_pos(at), text_pos(at), line, tail, False))
    return rows
