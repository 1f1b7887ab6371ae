"""The logical export's fast path for plain rows (issue 29, export speed): a row the exact decode would take
as it is goes out as its decoded self, with no Event built (:func:`app.store.export_rows.plain_envelope`).
Whenever the fast path answers, its envelope must be the exact decode's, byte for byte, on every stored row of
every fixture (v0-v4), a generated log, hostile and mutated logs, and rows made to fall just outside it."""
from __future__ import annotations

import json

import pytest

from app.log.index.reader import LogReader
from app.store.export_rows import _enc, exact_events, logical_rows, plain_envelope
from app.tools.hostile import hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import FIXTURES, REPO, session_files

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"


def _check(reader) -> tuple[int, int]:
    """(rows the fast path took, rows) of ``reader``'s log; asserts it agrees with the exact decode."""
    took = n = 0
    for row in logical_rows(reader, logical=False):
        if not row[4]:
            continue
        n += 1
        env = plain_envelope(reader, row[3])
        if env is None:
            continue
        took += 1
        evs = list(exact_events(reader, row))
        assert len(evs) == 1, row[3][:200]
        assert _enc.encode(env) == _enc.encode(evs[0].envelope()), row[3][:200]
    return took, n


@pytest.mark.parametrize("corpus", ["dsh", "dsh-next"])
def test_every_fixture_row(corpus):
    files = session_files() if corpus == "dsh" else sorted(NEXT.rglob("*.v[1234].jsonl"))
    took = n = 0
    for p in files:
        a, b = _check(LogReader.open(str(p)))
        took, n = took + a, n + b
    assert len(files) > 5 and n > 500
    if corpus == "dsh":               # (the fast path is the common one; the v1-v4 fixtures are envelope-free
        assert took > n // 3          # snapshots, which always take the exact way)


def test_generated_hostile_and_mutated(tmp_path):
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=9), target_bytes=800_000)
    took, n = _check(LogReader.open(str(p)))
    assert took > n // 2
    p4 = tmp_path / "session.v4.jsonl"
    write_jsonl(str(p4), SessionSynth(seed=9, version=4, context_window=16_000), target_bytes=800_000)
    took, n = _check(LogReader.open(str(p4)))
    assert took > n // 2
    lines = p.read_bytes().split(b"\n")
    h = tmp_path / "hostile.jsonl"
    h.write_bytes(hostile_session([ln for ln in lines if ln], seed=3))
    _check(LogReader.open(str(h)))
    src = (FIXTURES / "examples").rglob("*.jsonl")
    for base in list(src)[:3]:
        for i, (_name, data, _kept) in enumerate(jsonl_mutants(base.read_bytes(), seed=5, count=12)):
            m = tmp_path / f"m{i}.jsonl"
            m.write_bytes(data)
            r = LogReader.open(str(m))
            if not r.fatal:
                _check(r)


ROWS = [
    b'{"type":"user/message","seq":%d,"time":5,"data":{"id":"u","role":"user","content":"hi"}}',
    b'{"type":"user/message", "seq":%d,"time":5,"data":{"id":"u","role":"user","content":"hi"}}',   # spacing
    b'{"seq":%d,"type":"user/message","time":5,"data":{"id":"u","role":"user","content":"hi"}}',    # key order
    b'{"type":"user/message","seq":%d,"time":5.5,"data":{"id":"u","content":"hi"}}',               # float time
    b'{"type":"user/message","seq":%d,"data":{"id":"u","content":"hi"}}',                          # no time
    b'{"type":"user/message","seq":%d,"time":5,"data":{"role":"user","content":"hi"}}',            # legacy: no id
    b'{"type":"steering/message","seq":%d,"time":5,"data":{"id":"s","content":"hi"}}',             # legacy type
    b'{"type":"turn/end","seq":%d,"time":5,"data":{"turn":1,"reason":"aborted"}}',                 # legacy reason
    b'{"type":"turn/start","seq":%d,"time":5,"data":{"turn":1,"trigger":"user"}}',                 # legacy trigger
    b'{"type":"tool/result","seq":%d,"time":5,"data":{"callId":"c","content":[]}}',                # legacy result
    b'{"type":"x/y","seq":%d,"time":5,"data":{},"ignorable":false}',                               # ignorable false
    b'{"type":"x/y","seq":%d,"time":5,"data":{},"ignorable":true}',
    b'{"type":"user/message","seq":%d,"time":5,"data":{"id":"u","content":"hi"},"surfaceOp":{"op":"append"}}',
    b'{"type":"user/message","seq":%d,"time":5,"data":{"id":"u","content":"hi"},"sourceEventSeqs":[[0,1]],'
    b'"surfaceOp":"append"}',
    b'{"type":"user/message","seq":%d,"time":5,"data":{"id":"u","content":"hi"},"sourceEventSeqs":null}',
    b'{"type":"user/message","seq":%d,"time":5,"data":{"id":7,"content":"hi"}}',                   # hostile field
    b'{"type":"user/message","seq":%d,"time":true,"data":{"id":"u","content":"hi"}}',
    b'{"type":"user/message","seq":%d,"time":5,"data":{"id":"u","content":"\\u00e9\\ud800"}}',       # escapes
    b'{"type":"user/message","seq":%d,"time":5,"data":{"id":"u","content":"\xff"}}',               # bad UTF-8
    b'{"type":"user/message","seq":%d,"time":5,"data":' + b'[' * 300 + b']' * 300 + b'}',          # too deep
    b'{"type":"user/message","seq":%d,"time":5,"data":{"id":"u"},"data":{"id":"v"}}',              # twice
]


@pytest.mark.parametrize("version", [0, 1, 4])
def test_rows_at_the_edge(tmp_path, version):
    """Rows made to miss one condition each: the fast path declines or agrees with the exact decode."""
    hdr = {"type": "session", "version": version, "id": "s", "createdAt": 0, "cwd": "/"} if version else \
        {"type": "session", "id": "s", "createdAt": 0, "cwd": "/"}
    rows = [r % i if b"%d" in r else r for i, r in enumerate(ROWS)]
    p = tmp_path / "edge.jsonl"
    p.write_bytes(json.dumps(hdr).encode() + b"\n" + b"\n".join(rows) + b"\n")
    r = LogReader.open(str(p))
    took, n = _check(r)
    assert n == len(ROWS) and 0 < took < n
    assert plain_envelope(r, rows[0]) is not None and plain_envelope(r, rows[1]) is not None
    assert all(plain_envelope(r, rows[i]) is None for i in (2, 3, 4, 10, 12, 14, 16, 18, 19))


def test_native_packed_lines_equal_the_python_lines():
    """The C writer of a packed row's lines (rowscan_c.packed_lines) equals the Python template on hostile
    strings (quotes, backslashes, every control character, non-ASCII, U+2028) and declines what it cannot
    write (a lone surrogate, numbers past 64 bits), leaving those to the Python way."""
    import random
    from itertools import accumulate, count

    from app.log.index.fastindex import load_rowscan_c
    native = load_rowscan_c()
    if native is None:
        pytest.skip("the C scanner module is not built")
    rng = random.Random(4)
    alpha = ['"', "\\", "a", "é", "\u2028", "😀", "%", "%d", ",", "}"] + [chr(c) for c in range(0x20)] + ["\x7f"]
    head, mid, tail = b'{"type":"assistant/chunk","seq":', b',"data":{"x":1,"text":', b"}}}"
    for _ in range(3000):
        strs = ["".join(rng.choice(alpha) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(1, 6))]
        dt = [rng.choice([0, 1, 7, -3, 10**12]) for _ in range(rng.randint(0, len(strs) + 1))]
        seq0, t0 = rng.choice([0, 5, 2**40]), rng.choice([0, -5, 1787276503845])
        line = head + b'%d,"time":%d' + mid + b"%s" + tail
        want = [line % (s, t, _enc.encode(x)) for s, t, x in zip(count(seq0), accumulate(dt, initial=t0), strs)]
        assert native.packed_lines(head, mid, tail, seq0, t0, dt, strs) == b"\n".join(want)
    assert native.packed_lines(head, mid, tail, 0, 0, [], ["\ud800"]) is NotImplemented
    assert native.packed_lines(head, mid, tail, 2**63, 0, [], ["a"]) is NotImplemented
    assert native.packed_lines(head, mid, tail, 0, 2**62, [2**62, 2**62], ["a", "b", "c"]) is NotImplemented


def test_native_packed_lines_write_every_64_bit_number():
    """Seqs and times at the ends of 64 bits, negative times and every power of ten are written as the
    Python template writes them (the C writer formats its numbers itself)."""
    from itertools import accumulate, count

    from app.log.index.fastindex import load_rowscan_c
    native = load_rowscan_c()
    if native is None:
        pytest.skip("the C scanner module is not built")
    head, mid, tail = b'{"seq":', b',"text":', b"}"
    line = head + b'%d,"time":%d' + mid + b"%s" + tail
    lo, hi = -(2 ** 63), 2 ** 63 - 1
    cases = [(hi - 1, lo, [hi, 0]), (0, lo, [0, hi]), (0, hi, [-1, lo + 1]), (7, -1, [-(10 ** k) for k in range(18)]),
             (10 ** 18, 0, [10 ** k for k in range(18)]), (hi - 3, -9, [9, -1, 1])]
    for seq0, t0, dt in cases:
        strs = ["x"] * (len(dt) + 1)
        times = list(accumulate(dt, initial=t0))
        n = len(strs) if all(lo <= t <= hi for t in times) and seq0 <= hi - len(strs) else None   # (else declined)
        got = native.packed_lines(head, mid, tail, seq0, t0, dt, strs)
        if n is None:
            assert got is NotImplemented
            continue
        want = [line % (s, t, _enc.encode(x)) for s, t, x in zip(count(seq0), times, strs)]
        assert got == b"\n".join(want), (seq0, t0, dt)


def test_native_depth_over_equals_its_definition():
    """rowscan_c.depth_over (the ahead3 section) equals limits.nesting_depth(raw, limit) > limit on every
    fixture row and on random bracket, quote and backslash soups (strings left open, escapes at the end)."""
    import random

    from app.log.format.limits import nesting_depth
    from app.log.index.fastindex import load_rowscan_c
    native = load_rowscan_c()
    if native is None:
        pytest.skip("the C scanner module is not built")
    rows = [ln for p in session_files()[:40] for ln in p.read_bytes().split(b"\n")]
    rng = random.Random(8)
    alpha = [b"[", b"]", b"{", b"}", b'"', b"\\", b"a", b"\n", b",", b"\xff"]
    for _ in range(20_000):
        rows.append(b"".join(rng.choice(alpha) for _ in range(rng.randint(0, 40))))
    rows += [b"[" * 257, b"[" * 256, b'"' + b"[" * 300, b'"\\"' + b"[" * 300, b'"a\\' + b"[" * 300,
             b'["' + b"[" * 300 + b'"]', b"{" * 200 + b"]" * 50 + b"[" * 107, b"{" * 200 + b"]" * 50 + b"[" * 106]
    from app.log.format.limits import MAX_DEPTH, LimitError, check_row
    for raw in rows:
        for limit in (0, 1, 2, 3, 256):
            assert native.depth_over(raw, limit) == (nesting_depth(raw, limit) > limit), (raw[:80], limit)
        try:                                       # (the row limits use it: the same verdict as the definition)
            check_row(bytearray(raw))
            refused = False
        except LimitError:
            refused = True
        assert refused == (nesting_depth(raw) > MAX_DEPTH)
