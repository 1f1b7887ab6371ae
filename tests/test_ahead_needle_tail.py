"""Issue 29: the C ``ahead_rows`` looks for a row's ``"surfaceOp"`` in its last bytes first (a surface row as dsh
writes it ends with it) before its scan of every quote.  Its records stay equal to the interpreted definition
(:func:`app.log.query.ahead_scan.ahead_rows_py`, which tests every needle anywhere) with the needle, a near miss, or
both, at every place near the end of a row and far from it, in rows of every length around the window."""
from __future__ import annotations

import pytest

from app.log.format.limits import MAX_DEPTH, MAX_ROW_BYTES
from app.log.index.fastindex import load_rowscan_c
from app.log.query.ahead_rows import LEAN_TYPES, SURFACE_TYPES
from app.log.query.ahead_scan import NEEDLE, W, ahead_rows_py

C = getattr(load_rowscan_c(), "ahead_rows", None)
needs_c = pytest.mark.skipif(C is None, reason="the C module is not built")
TYPES = tuple(t.encode() for t in sorted(LEAN_TYPES | SURFACE_TYPES))

NEAR = [b'"surfaceOp"', b'"surfaceOp', b'surfaceOp"', b'"surfaceop"', b'\\"surfaceOp\\"', b'"surface Op"',
        b'"sourceEventSeqs"', b'"step/', b'"compaction/', b'"image/offload"', b'"surfaceOp":"append"']


def _rows() -> list[bytes]:
    out = []
    for head in (b'{"type":"tool/result","seq":5,"data":{"x":"', b'{"type":"tool/call","seq":5,"data":{"x":"',
                 b'{"type":"todo/write"', b'{"type":"tool/result"'):
        for pad in (0, 1, 2, 10, 20, 30, 36, 37, 38, 47, 48, 49, 60, 200):
            for n in NEAR:
                fill = b"a" * pad
                out.append(head + n + fill)                 # (the needle ``pad`` bytes before the end)
                out.append(head + fill + n)                 # (the needle at the very end)
                out.append(head + fill + n[:-1])            # (cut by the end of the row)
                out.append(head + n + fill + n[1:])
                out.append(head + b'","surfaceOp":"append"}' + fill)
        out.append(head)
        out += [head[:k] for k in range(len(head))]
    out += [b'"surfaceOp"', b'{"type":"tool/result"}"surfaceOp"', b"surfaceOp", b""]
    return out


@needs_c
def test_c_equals_its_definition_with_the_needle_near_the_end():
    rows = _rows()
    data = b"\n".join(rows) + b"\n"
    got = memoryview(C(data, TYPES, MAX_ROW_BYTES, MAX_DEPTH)).cast("q").tolist()
    assert got == ahead_rows_py(data, TYPES, MAX_ROW_BYTES, MAX_DEPTH)
    info = got[2::W]
    assert sum(1 for x in info if x & NEEDLE) > 500 and sum(1 for x in info if not x & NEEDLE) > 500
    for k in range(0, len(rows), 97):                       # (rows alone, and every alignment of the buffer)
        for lead in (b"", b"\n", b"x\n"):
            one = lead + b"\n".join(rows[k:k + 97]) + b"\n"
            assert memoryview(C(one, TYPES, MAX_ROW_BYTES, MAX_DEPTH)).cast("q").tolist() == \
                ahead_rows_py(one, TYPES, MAX_ROW_BYTES, MAX_DEPTH)
