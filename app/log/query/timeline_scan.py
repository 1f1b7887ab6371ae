"""The timeline's row scan: the rows of a JSONL segment sorted for the timeline's pass (issue 31).

This module is the definition (:func:`scan_py`, interpreted); the pass runs the same walk written in C
(``tl_scan`` in the timelinec section of ``app/log/index/rowscan_c.c``) when the row scanner is built.
``tests/test_timeline_scan.py`` holds the two equal on every fixture and on hostile rows.

For ``data[:stop]`` (rows ending in a newline; a torn last row is not looked at) the scan gives a list:

* nothing for a row whose type (the bytes after ``{"type":"`` up to the next quote) is in ``skip``;
* a tuple ``(turn, step, seq0, n, t0, t1)``: a *run* of rows that are each, for the timeline, ``n``
  delta chunks of one step: a packed chunk row (``flags & PACKED``: ``text-chunks``, ``reasoning-chunks``,
  ``tool-call-chunks``; members ``seq0..seq0+n-1`` at times ``t0 .. t0 + sum(dt)``) or an ``assistant/chunk``
  row whose chunk type is neither ``finish`` nor ``usage`` (``flags & CHUNK``; one member at its time).  A row
  is taken only in the writer's exact layout (keys, order, no blank), every integer of at most 15 digits, and
  valid JSON (no number with an exponent, no ``\\u`` escape of a surrogate, nesting within ``max_depth``) and
  UTF-8 within ``max_row`` bytes: then the exact decoder reads it with no problem and the same fields (a
  chunk row's other members may hold anything valid, never a second ``type``).  Rows of consecutive seqs of
  the same step are merged into one run, except that a run whose last time is > 0 does not take a row whose
  last time is not (so the builder's *last time* is the same as row by row: see
  :meth:`app.log.query.timeline.Builder.block`);
* a tuple ``(code, seq, time, turn, step)`` (``flags & SMALL``): a ``step/start``, ``step/end`` (data exactly
  ``turn`` and ``step``) or ``turn/start`` (data exactly ``turn``; ``step`` None) row in the writer's exact layout
  (integers of at most 15 digits), ``code`` its index in :data:`SMALL_TYPES` (it ends the run before it);
* for any other row the int ``(index << 32 | start) << 1 | refused``: its index in ``data``, its first byte
  and whether :func:`app.log.format.fastrows.refused_rows` refuses it (over ``max_row`` bytes, nested deeper
  than ``max_depth`` outside strings, not UTF-8): the caller reads it as before.
"""
from __future__ import annotations

from typing import Any, Optional, Union

from ..format.limits import MAX_DEPTH, MAX_PACKED_MEMBERS, MAX_ROW_BYTES
from ..format.model import MAX_SAFE_INT
from ..format.rowscreen import refused_py as refused       # (the rule of the rows the scan leaves)
from ..index.fastindex import load_rowscan_c

PACKED, CHUNK, SMALL, SETTLE = 1, 2, 4, 8
# (the tlc2 helper, C only) TURN: a whole turn read and built into its spans by the C scan, when it can be (an item
# (spans, attempts, (start, end, seq, index, request state | None), turn, last time, dispatch, attempt seqs,
# prompts | None, tracker ops | None) that
# app.log.query.timeline.Builder.turn_c takes, else reads the turn's rows again without TURN); TIMED: the log has times
TURN, TIMED = 16, 32
SMALL_TYPES = ("step/start", "step/end", "turn/start")          # (the code of a small row: its index here)
_BOUND = 1 << 62
_TEXT = (b"text-chunks", b"reasoning-chunks")
_WS = b" \t\r\n"
_DIGITS = frozenset(b"0123456789")
_ESC1 = frozenset(b'"\\/bfnrt')
_HEX = frozenset(b"0123456789abcdefABCDEF")
Run = tuple[int, int, int, int, int, int]
Small = tuple[int, int, int, int, Optional[int]]
# a settlement row the C scan read (flags & SETTLE; the tlc helper): (code 3 message / 4 attempt, seq, time, turn,
# step, interrupted, usage range, cited seqs, stream summary, ignorable range): read into its lean record by
# app.log.query.timeline_lean.settled, which is what timeline_lean.settlement gives of the row (its definition:
# without the C scan, or when it leaves the row, the row goes out as an int and settlement reads it)
Settled = tuple[int, int, int, int, int, Optional[bool], Optional[tuple[int, int]], Optional[list[int]], Any,
                Optional[tuple[int, int]]]
Item = Union[int, Run, Small, Settled]

_c = load_rowscan_c()
_c_scan = getattr(_c, "tl_scan", None)


def scan(data: bytes, stop: int, skip: list[bytes], flags: int, start: int = 0, index: int = 0) -> list[Item]:
    """The scan of ``data[start:stop]`` (``start``: a row's start, ``index`` its row's index in ``data``; in C where
    built; ``flags & SETTLE`` and ``flags & TURN`` only there, see :data:`Settled` and :data:`TURN`)."""
    if _c_scan is not None and len(data) < 1 << 32:
        out: list[Item] = _c_scan(data, stop, skip, flags, MAX_DEPTH, MAX_ROW_BYTES, MAX_PACKED_MEMBERS, start, index)
        return out
    return scan_py(data, stop, skip, flags & ~(SETTLE | TURN | TIMED), start=start, index=index)


def scan_py(data: bytes, stop: int, skip: list[bytes], flags: int, max_depth: int = MAX_DEPTH,
            max_row: int = MAX_ROW_BYTES, max_members: int = MAX_PACKED_MEMBERS, start: int = 0,
            index: int = 0) -> list[Item]:
    """The definition of the scan (see the module's doc), from the row at ``start`` (``index``: its row's)."""
    out: list[Item] = []
    skips = set(skip)
    run: Optional[list[int]] = None
    p = start
    while p < stop:
        nl = data.find(b"\n", p, stop)
        if nl < 0:
            break
        row = data[p:nl]
        q = row.find(b'"', 9) if row[:9] == b'{"type":"' else -1
        if q >= 0:
            tag = row[9:q]
            if tag in skips:
                p, index = nl + 1, index + 1
                continue
            r: Optional[Run] = None
            if len(row) <= max_row:
                if flags & PACKED and tag in _TEXT + (b"tool-call-chunks",):
                    r = _packed(row, q, tag == b"tool-call-chunks", max_members)
                elif flags & CHUNK and tag == b"assistant/chunk":
                    r = _chunk(row, q, max_depth)
            code = _SMALL_CODES.get(tag, -1) if flags & SMALL and len(row) <= max_row else -1
            sm = _small(row, q, code) if r is None and code >= 0 else None
            if sm is not None:
                if run is not None:
                    out.append(tuple(run))          # type: ignore[arg-type]
                    run = None
                out.append(sm)
                p, index = nl + 1, index + 1
                continue
            if r is not None:
                if run is not None and r[0] == run[0] and r[1] == run[1] and r[2] == run[2] + run[3] \
                        and not (run[5] > 0 and r[5] <= 0):
                    run[3] += r[3]
                    run[5] = r[5]
                else:
                    if run is not None:
                        out.append(tuple(run))      # type: ignore[arg-type]
                    run = list(r)
                p, index = nl + 1, index + 1
                continue
        if run is not None:
            out.append(tuple(run))                  # type: ignore[arg-type]
            run = None
        out.append((((index << 32) | p) << 1) | refused(row, max_row, max_depth))
        p, index = nl + 1, index + 1
    if run is not None:
        out.append(tuple(run))                      # type: ignore[arg-type]
    return out


# ----------------------------------------------------------------------------- the writer's layouts

def _lit(row: bytes, i: int, s: bytes) -> int:
    return i + len(s) if i >= 0 and row.startswith(s, i) else -1


def _int(row: bytes, i: int) -> tuple[int, Optional[int]]:
    """``-?(0|[1-9][0-9]{0,14})`` at ``i`` followed by a byte that is not a digit, ``.``, ``e`` or ``E``."""
    if i < 0:
        return -1, None
    s = i + (row[i:i + 1] == b"-")
    e = s
    while e < len(row) and row[e] in _DIGITS:
        e += 1
    if e == s or e - s > 15 or (e - s > 1 and row[s] == 0x30) or e >= len(row) or row[e] in b".eE":
        return -1, None
    return e, int(row[i:e])


def _string(row: bytes, i: int) -> tuple[int, bool]:
    """A JSON string at ``i``: (its end or -1, whether it holds an escape); a ``\\u`` escape of a surrogate, a
    control character or bytes that are not UTF-8: -1."""
    n = len(row)
    if i < 0 or i >= n or row[i] != 0x22:
        return -1, False
    j = i + 1
    esc = False
    while j < n:
        c = row[j]
        if c == 0x22:
            try:
                row[i:j].decode("utf-8")
            except UnicodeDecodeError:
                return -1, esc
            return j + 1, esc
        if c < 0x20:
            return -1, esc
        if c == 0x5C:
            esc = True
            x = row[j + 1] if j + 1 < n else -1
            if x in _ESC1:
                j += 2
                continue
            if x != 0x75 or j + 6 > n or not all(h in _HEX for h in row[j + 2:j + 6]) \
                    or 0xD800 <= int(row[j + 2:j + 6], 16) <= 0xDFFF:
                return -1, esc
            j += 6
            continue
        j += 1
    return -1, esc


def _ws(row: bytes, i: int) -> int:
    while i < len(row) and row[i] in _WS:
        i += 1
    return i


def _number(row: bytes, i: int) -> int:
    """``-?(0|[1-9][0-9]{0,17})(\\.[0-9]{1,30})?``, no exponent."""
    n = len(row)
    s = i + (row[i:i + 1] == b"-")
    e = s
    while e < n and row[e] in _DIGITS:
        e += 1
    if e == s or e - s > 18 or (e - s > 1 and row[s] == 0x30):
        return -1
    if e < n and row[e] == 0x2E:
        f = e + 1
        while f < n and row[f] in _DIGITS:
            f += 1
        if f == e + 1 or f - e - 1 > 30:
            return -1
        e = f
    return -1 if e < n and row[e] in b"eE." else e


def _value(row: bytes, i: int, depth: int, max_depth: int) -> int:
    """Any JSON value at ``i`` (its brackets counted from ``depth + 1``): its end or -1."""
    if i >= len(row):
        return -1
    c = row[i]
    if c == 0x22:
        return _string(row, i)[0]
    if c in (0x7B, 0x5B):
        if depth + 1 > max_depth:
            return -1
        close = 0x7D if c == 0x7B else 0x5D
        i = _ws(row, i + 1)
        if i < len(row) and row[i] == close:
            return i + 1
        while True:
            if c == 0x7B:
                i = _string(row, i)[0]
                if i < 0:
                    return -1
                i = _ws(row, i)
                if i >= len(row) or row[i] != 0x3A:
                    return -1
                i = _ws(row, i + 1)
            i = _value(row, i, depth + 1, max_depth)
            if i < 0:
                return -1
            i = _ws(row, i)
            if i < len(row) and row[i] == 0x2C:
                i = _ws(row, i + 1)
                continue
            return i + 1 if i < len(row) and row[i] == close else -1
    if c == 0x2D or c in _DIGITS:
        return _number(row, i)
    for word in (b"true", b"false", b"null"):
        if row.startswith(word, i):
            return i + len(word)
    return -1


def _packed(row: bytes, q: int, tool: bool, max_members: int) -> Optional[Run]:
    i, seq0 = _int(row, _lit(row, q, b'","seq0":'))
    i, t0 = _int(row, _lit(row, i, b',"time0":'))
    i, turn = _int(row, _lit(row, i, b',"data":{"turn":'))
    i, step = _int(row, _lit(row, i, b',"step":'))
    i, _index = _int(row, _lit(row, i, b',"index":'))
    i = _lit(row, i, b',"dt":[')
    if i < 0 or seq0 is None or seq0 < 0 or t0 is None or turn is None or step is None:
        return None
    ndt, t = 0, t0
    if row[i:i + 1] == b"]":
        i += 1
    else:
        while True:
            i, v = _int(row, i)
            if i < 0 or v is None:
                return None
            ndt += 1
            t += v
            if abs(t) > _BOUND:
                return None
            if row[i] == 0x5D:
                i += 1
                break
            if row[i] != 0x2C:
                return None
            i += 1
            if ndt > max_members:
                return None
    if tool:
        i = _string(row, _lit(row, i, b',"id":'))[0]
        j = _lit(row, i, b',"name":')
        if j >= 0:
            i = _string(row, j)[0]
        i = _lit(row, i, b',"args":[')
    else:
        i = _lit(row, i, b',"texts":[')
    if i < 0:
        return None
    n = 0
    while True:
        i = _string(row, i)[0]
        if i < 0:
            return None
        n += 1
        if row[i:i + 1] == b",":
            i += 1
            continue
        break
    if _lit(row, i, b"]}}") != len(row) or n > max_members or ndt != n - 1 or seq0 + n - 1 > MAX_SAFE_INT \
            or abs(t) > MAX_SAFE_INT:
        return None
    return (turn, step, seq0, n, t0, t)


def _chunk(row: bytes, q: int, max_depth: int) -> Optional[Run]:
    i, seq = _int(row, _lit(row, q, b'","seq":'))
    i, time = _int(row, _lit(row, i, b',"time":'))
    i, turn = _int(row, _lit(row, i, b',"data":{"turn":'))
    i, step = _int(row, _lit(row, i, b',"step":'))
    i = _lit(row, i, b',"chunk":{"type":')
    if i < 0 or seq is None or seq < 0 or time is None or turn is None or step is None:
        return None
    e, esc = _string(row, i)
    if e < 0 or esc or row[i:e] in (b'"finish"', b'"usage"'):
        return None
    i = e
    while i < len(row) and row[i] == 0x2C:
        k = _ws(row, i + 1)
        ke, esc = _string(row, k)
        if ke < 0 or esc or row[k:ke] == b'"type"':
            return None
        ke = _ws(row, ke)
        if ke >= len(row) or row[ke] != 0x3A:
            return None
        i = _value(row, _ws(row, ke + 1), 3, max_depth)
        if i < 0:
            return None
        i = _ws(row, i)
    if _lit(row, i, b"}}}") != len(row):
        return None
    return (turn, step, seq, 1, time, time)


_SMALL_CODES = {t.encode(): k for k, t in enumerate(SMALL_TYPES)}


def _small(row: bytes, q: int, code: int) -> Optional[Small]:
    i, seq = _int(row, _lit(row, q, b'","seq":'))
    i, time = _int(row, _lit(row, i, b',"time":'))
    i, turn = _int(row, _lit(row, i, b',"data":{"turn":'))
    step = None
    if code < 2:
        i, step = _int(row, _lit(row, i, b',"step":'))
        if step is None:
            return None
    if i < 0 or seq is None or seq < 0 or time is None or turn is None or _lit(row, i, b"}}") != len(row):
        return None
    return (code, seq, time, turn, step)


def unpack(x: int) -> tuple[int, int, bool]:
    """(index, start, refused) of a row the scan leaves to the caller."""
    return x >> 33, (x >> 1) & 0xFFFFFFFF, bool(x & 1)


__all__ = ["PACKED", "CHUNK", "SMALL", "SETTLE", "TURN", "TIMED", "SMALL_TYPES", "scan", "scan_py", "refused", "unpack"]
