"""The seq index's per-row scan: one typed loop over a buffer of JSONL rows (issue 15, item 2).

It is the definition of the scan.  The index runs the same walk written in C (``rowscan_c.c``,
decision 0017) where set-up built it, and this module interpreted elsewhere, and for the rare segment
whose numbers do not fit 64 bits (:data:`app.log.index.fastindex.SCANNER` says which one runs); the two
accept exactly the same rows.  (Set-up once also compiled this module with mypyc; decision 0021 dropped
that build: the C scanner does the same with the same compiler, faster.)

:func:`scan` walks the rows of ``data[start:stop]`` (complete lines) and checks, per row, what
the byte-level index relies on (the dsh writer's envelope, key order included):

* the row ends in ``}`` (no blank line), and no NUL is in the buffer;
* its first :data:`HEAD` bytes read ``{"type":"T","seq":N`` or ``{"type":"T","seq0":N`` then
  ``,`` or ``}``, ``T`` holding no quote, backslash or newline and ``N`` digits without a
  leading zero;
* a packed row (``seq0``) is of a chunk type and reads on
  ``,"time0":I,"data":{"turn":I,"step":I,"index":I,"dt":[...]`` (``I`` an optional minus and
  digits), its ``dt`` holding only digits, minus signs and commas; its members are the dt's
  length + 1 (below ``max_members``);
* every seq continues the one before exactly (the first one ``expected``, unless that is -1).

With ``legacy`` (v0/v1 logs), a row of a type that may be in a legacy shape is listed to be
probed (by the caller: an exact typed decode) unless it is in the shape its kind names, one that
is not legacy (:func:`not_legacy`, the same shapes as ``app.log.index.fastindex.NOT_LEGACY``'s
patterns, which tests hold them to).

Every index stays bounds-checked; no check above reads past a row's newline.  Nothing here knows the
row types: ``kinds`` gives each type of ``types`` its :data:`MARK`, :data:`CHUNK`,
:data:`LEGACY` and shape bits (:mod:`app.log.index.fastindex` makes the table).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Final, Optional

if TYPE_CHECKING:                  # (annotations only: 64-bit offsets, as the C scanner holds them)
    from mypy_extensions import i64

HEAD: Final = 64           # bytes of a row's head in which its type and seq must be
WINDOW: Final = 128 << 10  # bytes of the buffer decoded at a time (see scan)
MARK: Final = 7            # kind & MARK: a mark row's code + 1 (0: not a mark)
CHUNK: Final = 8           # a type a packed (seq0) row may have
LEGACY: Final = 16         # a type whose rows may be in a legacy shape (v0/v1)
SHAPE: Final = 96          # kind & SHAPE: the shape of the type's rows that is not legacy (0: none)
HAS_MESSAGE: Final = 32    # ,"time":I,"data":{"turn":I,"step":I,"message":{  (assistant/message, tool/result)
TURN_START: Final = 64     # ,"time":J,"data":{"turn":J}}  and the row ends  (J: an integer without leading zero)
TURN_END: Final = 96       # ,"time":J,"data":{"turn":J,"reason":{"kind":"K"}}}  and the row ends, K of a-z and
                           # "-" holding none of aborted, disposed, error

# (first seq, last seq, rows, mark seqs, mark codes, [start, end) of each row to probe for a legacy shape)
Block = tuple[int, int, int, list[int], list[int], list[int]]

_TIME0: Final = b',"time0":'
_TURN: Final = b',"data":{"turn":'
_STEP: Final = b',"step":'
_INDEX: Final = b',"index":'
_DT: Final = b',"dt":['
_TIME: Final = b',"time":'
_STEP_MESSAGE: Final = b',"message":{'
_CLOSE2: Final = b'}}'
_REASON: Final = b',"reason":{"kind":"'
_CLOSE3: Final = b'"}}}'
# the bytes of a dt: 2 a digit or "-", 3 ",", 4 "]", 0 anything else
_DT_BYTES: Final = bytes(2 if c == 45 or 48 <= c <= 57 else 3 if c == 44 else 4 if c == 93 else 0 for c in range(256))


def _lit(data: bytes, i: i64, lim: i64, lit: bytes) -> i64:
    """The end of ``lit`` when it is at ``data[i:]`` before ``lim``, else -1."""
    n: i64 = len(lit)
    if i + n > lim:
        return -1
    for k in range(n):
        if data[i + k] != lit[k]:
            return -1
    return i + n


def _digits(data: bytes, i: i64, lim: i64) -> i64:
    """The end of the run of ASCII digits at ``data[i:]`` before ``lim``."""
    while i < lim:
        c = data[i]
        if c < 48 or c > 57:
            break
        i += 1
    return i


def _number(data: bytes, i: i64, lim: i64) -> i64:
    """The end of ``-?[0-9]+`` at ``data[i:]`` before ``lim``, else -1."""
    if i < lim and data[i] == 45:
        i += 1
    e = _digits(data, i, lim)
    if e > i:                                  # (statements, not `a if c else b`: mypyc boxes that into an int)
        return e
    return -1


def _integer(data: bytes, i: i64, lim: i64) -> i64:
    """The end of ``-?(0|[1-9][0-9]*)`` at ``data[i:]`` before ``lim`` (the longest), else -1."""
    if i < lim and data[i] == 45:
        i += 1
    e = _digits(data, i, lim)
    if e > i and (e == i + 1 or data[i] != 48):
        return e
    return -1


def not_legacy(data: bytes, text: str, shape: i64, i: i64, nl: i64, off: i64 = 0) -> bool:
    """Whether the row from just after its seq (``i``) to its newline (``nl``) is in the ``shape``
    (:data:`HAS_MESSAGE`, :data:`TURN_START`, :data:`TURN_END`), one that is not legacy
    (``text``: ``data`` from ``off`` on read as Latin-1, at least to ``nl``)."""
    if shape == 0:
        return False
    i = _lit(data, i, nl, _TIME)
    if i >= 0:
        if shape == HAS_MESSAGE:
            i = _number(data, i, nl)
        else:
            i = _integer(data, i, nl)
    if i >= 0:
        i = _lit(data, i, nl, _TURN)
    if i >= 0:
        if shape == HAS_MESSAGE:
            i = _number(data, i, nl)
        else:
            i = _integer(data, i, nl)
    if i < 0:
        return False
    if shape == HAS_MESSAGE:
        i = _lit(data, i, nl, _STEP)
        if i >= 0:
            i = _number(data, i, nl)
        return i >= 0 and _lit(data, i, nl, _STEP_MESSAGE) >= 0
    if shape == TURN_START:
        return _lit(data, i, nl, _CLOSE2) == nl
    i = _lit(data, i, nl, _REASON)
    if i < 0:
        return False
    k = i
    while k < nl:                              # the kind: a-z and "-"
        c = data[k]
        if c != 45 and (c < 97 or c > 122):
            break
        k += 1
    return k > i and _lit(data, k, nl, _CLOSE3) == nl and text.find("aborted", i - off, k - off) < 0 \
        and text.find("disposed", i - off, k - off) < 0 and text.find("error", i - off, k - off) < 0


def _members(data: bytes, i: i64, nl: i64, max_members: i64) -> i64:
    """A packed row's member count from just after its seq0 digits at ``i`` (``nl``: its newline),
    -1 when the row is in another shape or its dt is too long or holds something else."""
    i = _lit(data, i, nl, _TIME0)
    if i >= 0:
        i = _number(data, i, nl)
    if i >= 0:
        i = _lit(data, i, nl, _TURN)
    if i >= 0:
        i = _number(data, i, nl)
    if i >= 0:
        i = _lit(data, i, nl, _STEP)
    if i >= 0:
        i = _number(data, i, nl)
    if i >= 0:
        i = _lit(data, i, nl, _INDEX)
    if i >= 0:
        i = _number(data, i, nl)
    if i >= 0:
        i = _lit(data, i, nl, _DT)
    if i < 0:
        return -1
    j = i
    commas: i64 = 0
    ok: i64 = 2
    while j < nl:                              # (no branch on the kind of each byte: they do not predict)
        k: i64 = _DT_BYTES[data[j]]
        if k == 4:                             # "]"
            break
        commas += k & 1
        ok &= k
        j += 1
    if j >= nl or not ok:
        return -1                              # (no "]", or a byte other than a digit, "-" or ",")
    extra: i64 = 0                             # the dt's length
    if j > i:
        extra = commas + 1
    if extra >= max_members:
        return -1
    return extra + 1


def scan(data: bytes, start: int, stop: int, expected: int, types: list[bytes], kinds: list[int],
         max_members: int, legacy: bool) -> Optional[Block]:
    """The rows of ``data[start:stop]`` (``stop`` just after a newline) as a :data:`Block` when
    every row passes the checks above and their seqs continue ``expected`` (-1: from the first
    row's), else None.  With ``legacy``, the rows of a :data:`LEGACY` type not in the shape of its
    kind (:func:`not_legacy`) are listed to be probed."""
    if start >= stop or stop > len(data):
        return None
    # newlines and NULs are looked for in a window of the buffer read as Latin-1 (one character per
    # byte: offset in the window + its start = offset in the buffer): str.find is a direct call of the
    # compiled module (memchr), bytes.find a method lookup.  A window of WINDOW bytes stays in the
    # core's cache while its rows are parsed (the whole buffer decoded at once did not: read + scan -9 %)
    wa: i64 = start                            # the window: data[wa:wb] is text, NUL-free
    wb: i64 = start
    text = ""
    n_types: i64 = len(types)
    by_len: list[i64] = [-1] * (HEAD + 1)      # the first type of each length, then the next of the same
    same: list[i64] = [-1] * n_types
    x: i64
    for x in range(n_types - 1, -1, -1):
        n: i64 = len(types[x])
        if n <= HEAD:
            same[x] = by_len[n]
            by_len[n] = x
    marks_s: list[int] = []
    marks_c: list[int] = []
    probes: list[int] = []
    first = -1
    nxt = expected
    rows = 0
    p: i64 = start
    stop_: i64 = stop
    while p < stop_:
        nl: i64 = -1
        if p < wb:
            nl = text.find("\n", p - wa)
        if nl < 0:                             # (the row runs past the window: the next one starts at it)
            wa = p
            wb = p + WINDOW
            if wb > stop_:
                wb = stop_
            text = data[wa:wb].decode("latin-1")
            nl = text.find("\n")
            if nl < 0 and wb < stop_:          # (a row longer than a window: the rest of the range)
                wb = stop_
                text = data[wa:wb].decode("latin-1")
                nl = text.find("\n")
            if text.find("\x00") >= 0:
                return None
        if nl >= 0:
            nl += wa
        if nl <= p or data[nl - 1] != 125:
            return None                        # (no newline before stop, a blank line, a row not ending in "}")
        lim: i64 = p + HEAD
        if lim > nl:
            lim = nl + 1
        if p + 9 > lim or data[p] != 123 or data[p + 1] != 34 or data[p + 2] != 116 or data[p + 3] != 121 \
                or data[p + 4] != 112 or data[p + 5] != 101 or data[p + 6] != 34 or data[p + 7] != 58 \
                or data[p + 8] != 34:
            return None                        # (not {"type":")
        ts = p + 9
        te = ts
        while te < lim:
            c = data[te]
            if c == 34 or c == 92 or c == 10:  # '"', "\\", "\n"
                break
            te += 1
        if te + 6 > lim or data[te] != 34 or data[te + 1] != 44 or data[te + 2] != 34 or data[te + 3] != 115 \
                or data[te + 4] != 101 or data[te + 5] != 113:
            return None                        # (not ","seq)
        q = te + 6
        packed = q < lim and data[q] == 48     # "seq0"
        if packed:
            q += 1
        if q + 2 > lim or data[q] != 34 or data[q + 1] != 58:
            return None
        q += 2
        e = _digits(data, q, lim)
        if e == q or e >= lim or (e - q > 1 and data[q] == 48):
            return None                        # (no digits, cut by the head, a leading zero)
        c = data[e]
        if c != 44 and c != 125:               # "," or "}"
            return None
        k: i64
        if e - q <= 18:                        # (fits 64 bits: native arithmetic)
            v: i64 = 0
            d: i64
            for k in range(q, e):
                d = data[k]
                v = v * 10 + d - 48
            seq = int(v)
        else:
            seq = 0
            for k in range(q, e):
                seq = seq * 10 + (data[k] - 48)
        if rows == 0:
            if expected >= 0 and seq != expected:
                return None
            first = seq
        elif seq != nxt:
            return None
        n = te - ts
        kind = 0
        x = -1
        if n <= HEAD:
            x = by_len[n]
        while x >= 0:                          # (the known types of this length; no bytes object made per row)
            if _lit(data, ts, te, types[x]) == te:
                kind = kinds[x]
                break
            x = same[x]
        members: i64 = 1
        if packed:
            if not kind & CHUNK:
                return None
            members = _members(data, e, nl, max_members)
            if members < 0:
                return None
        nxt = seq + int(members)           # (int: a seq may be longer than 64 bits)
        code = kind & MARK
        if code:
            marks_s.append(seq)
            marks_c.append(code - 1)
        if legacy and kind & LEGACY and not not_legacy(data, text, kind & SHAPE, e, nl, wa):
            probes.append(p)
            probes.append(nl + 1)
        rows += 1
        p = nl + 1
    return first, nxt - 1, rows, marks_s, marks_c, probes
