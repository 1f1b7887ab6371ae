"""The timeline's row scan (issue 31): ``tl_scan`` in C (timelinec section of ``rowscan_c.c``) is exactly its
interpreted definition :func:`app.log.query.timeline_scan.scan_py`, and the spans read through it are those of
the exact event pass, on fixtures, generated logs and rows changed in every way the scan must notice."""
from __future__ import annotations

import random
import re
from pathlib import Path

import msgspec
import pytest

from collections.abc import Callable
from typing import Any

from app.log.format import fastrows
from app.log.format.limits import MAX_DEPTH, MAX_PACKED_MEMBERS, MAX_ROW_BYTES
from app.log.index.fastindex import load_rowscan_c
from app.log.query import timeline_scan as ts
from app.log.query.timeline import timeline
from app.log.query.timeline_rows import _SKIP_LIST
from app.store.faces import open_reader
from app.tools.hostile import deep_row
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

NEXT = FIXTURES.parent / "dsh-next"
C_SCAN: Any = getattr(load_rowscan_c(), "tl_scan", None)
needs_c = pytest.mark.skipif(C_SCAN is None, reason="the row scanner in C is not built")

P = b'{"type":"text-chunks","seq0":10,"time0":1000,"data":{"turn":1,"step":1,"index":0,"dt":[1,2],"texts":["a","b","c"]}}'
R = b'{"type":"reasoning-chunks","seq0":13,"time0":1003,"data":{"turn":1,"step":1,"index":0,"dt":[0],"texts":["d","e"]}}'
T = (b'{"type":"tool-call-chunks","seq0":15,"time0":1004,"data":{"turn":1,"step":1,"index":1,"dt":[1],"id":"c1",'
     b'"name":"bash","args":["{","}"]}}')
C = b'{"type":"assistant/chunk","seq":17,"time":1006,"data":{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"x"}}}'
S = b'{"type":"step/start","seq":18,"time":1007,"data":{"turn":1,"step":2}}'
E = b'{"type":"step/end","seq":19,"time":1008,"data":{"turn":1,"step":2}}'
U = b'{"type":"turn/start","seq":20,"time":1009,"data":{"turn":2}}'
BASE = [P, R, T, C, S, E, U]

# (old, new) edits of the base rows: each either keeps a row the scan takes or makes it one it must leave
EDITS = [
    (b'"a"', b'"a\\n\\t\\"\\\\\\/"'), (b'"a"', b'"\\u00e9"'), (b'"a"', b'"\\ud83d\\ude00"'), (b'"a"', b'"\\ud800"'),
    (b'"a"', b'"\\x"'), (b'"a"', b'"\ta"'), (b'"a"', b'"\xff"'), (b'"a"', '"é€😀"'.encode()), (b'"a"', b'"\xc0\xaf"'),
    (b'"a"', b'"\xed\xa0\x80"'), (b'"a"', b'"\xe2\x82"'), (b'"a"', b'"a\x7f"'), (b'"a"', b'"\\u12"'),
    (b'"seq0":10', b'"seq0":010'), (b'"seq0":10', b'"seq0":-1'), (b'"seq0":10', b'"seq0":1000000000000000'),
    (b'"seq0":10', b'"seq0":100000000000000'), (b'"time0":1000', b'"time0":1e3'), (b'"time0":1000', b'"time0":1000.0'),
    (b'"time0":1000', b'"time0":-1000'), (b'"time0":1000', b'"time0":0'), (b'"time0":1000', b'"time0":-0'),
    (b'"dt":[1,2]', b'"dt":[1.5,2]'), (b'"dt":[1,2]', b'"dt":["1",2]'), (b'"dt":[1,2]', b'"dt":[1]'),
    (b'"dt":[1,2]', b'"dt":[1,2,3]'), (b'"dt":[1,2]', b'"dt":[]'), (b'"dt":[1,2]', b'"dt":[1, 2]'),
    (b'"dt":[1,2]', b'"dt":[-1000,-5]'), (b'"dt":[1,2]', b'"dt":[999999999999999,999999999999999]'),
    (b'"texts":["a","b","c"]', b'"texts":[]'), (b'"texts":["a","b","c"]', b'"texts":["a"]'),
    (b'"texts":["a","b","c"]', b'"texts":["a","b",3]'), (b'"step":1,"index"', b'"index":0,"step":1,"x"'),
    (b'"turn":1,', b'"turn":1,"turn":2,'), (b'"turn":1,', b'"turn": 1,'), (b'"turn":1,', b'"turn":"1",'),
    (b'"turn":1,', b'"turn":null,'), (b'"turn":1,', b'"turn":-7,'), (b'}}', b'},"x":1}'), (b'}}', b'} }'),
    (b'"name":"bash",', b''), (b'"name":"bash"', b'"name":null'), (b'"id":"c1"', b'"id":5'),
    (b'"type":"text-delta"', b'"type":"finish"'), (b'"type":"text-delta"', b'"type":"usage"'),
    (b'"type":"text-delta"', b'"type":"block-end"'), (b'"type":"text-delta"', b'"type":"text\\u002ddelta"'),
    (b'"type":"text-delta"', b'"type":7'), (b'"index":0,"text"', b'"index":0,"type":"finish","text"'),
    (b'"index":0,"text"', b'"index":0,"typ\\u0065":"finish","text"'), (b'"index":0,', b'"index":1e2,'),
    (b'"index":0,', b'"index":1.5,'), (b'"index":0,', b'"index":12345678901234567890,'),
    (b'"index":0,', b'"index" : 0 ,'), (b'"index":0,', b'"index":[1,{"a":[true,false,null]}],'),
    (b'"index":0,', b'"index":' + b"[" * 260 + b"]" * 260 + b","),
    (b'"index":0,', b'"index":' + b"[" * 253 + b"]" * 253 + b","),
    (b'"index":0,', b'"index":' + b"[" * 254 + b"]" * 254 + b","), (b'"index":0,', b'"index":tru,'),
    (b'"index":0,', b'"index":-,'), (b'"index":0,', b'"index":01,'), (b'"index":0,', b'"index":1.,'),
    (b'"chunk":{', b'"chunk":{ '), (b',"time":1006', b''), (b'"time":1006', b'"time":"1006"'),
    (b'"seq":17', b'"seq":17.0'), (b'{"type":"', b'{"type": "'), (b'"data":{', b'"data":{"data":1,'),
    (b'}}}', b'}}}}'), (b'}}}', b'}}'), (b'"x"}', b'"x",}'),
    (b'"step":2}', b'"step":2,"x":1}'), (b'"step":2}', b'"step":"2"}'), (b'"step":2}', b'"step":2.0}'), (b'"step":2}', b'}'),
    (b'"data":{"turn":2}', b'"data":{"turn":2,"trigger":"user"}'), (b'"data":{"turn":2}', b'"data":{"turn":2,"step":1}'),
    (b'"data":{"turn":2}', b'"data":{}'), (b'"data":{"turn":2}', b'"data":{"turn":null}'), (b'"seq":18', b'"seq":-18'),
    (b'"time":1007', b'"time":1.5'), (b'"step/start"', b'"step\\u002fstart"'), (b'"turn":1,"step":2', b'"step":2,"turn":1'),
    (b'"seq":20,', b'"seq":20,"surfaceOp":"append",'), (b'"seq":18,', b'"seq":18 ,'),
]


def _variants() -> list[bytes]:
    out = list(BASE)
    for old, new in EDITS:
        out += [b.replace(old, new, 1) for b in BASE if old in b]
    return out


def _mutants(rows: list[bytes], count: int, seed: int) -> list[bytes]:
    """Rows with random byte edits from JSON's significant bytes (and some that are never valid)."""
    rng = random.Random(seed)
    alphabet = [bytes([c]) for c in b'"\\{}[],:0123456789-.eE tu\x00\x1f\x7f'] + [b"\xc3\xa9", b"\xff", b"\xed\xa0"]
    out = []
    for _ in range(count):
        b = bytearray(rng.choice(rows))
        for _k in range(rng.randint(1, 3)):
            at = rng.randrange(len(b))
            op = rng.random()
            if op < 0.4:
                b[at:at + 1] = rng.choice(alphabet)
            elif op < 0.7:
                b[at:at] = rng.choice(alphabet)
            else:
                del b[at]
        out.append(bytes(b).replace(b"\n", b" "))
    return out


def _same(data: bytes, flags: int = ts.PACKED | ts.CHUNK | ts.SMALL, skip: list[bytes] = _SKIP_LIST) -> list[ts.Item]:
    stop = data.rfind(b"\n") + 1
    got = C_SCAN(data, stop, skip, flags, MAX_DEPTH, MAX_ROW_BYTES, MAX_PACKED_MEMBERS)
    want = ts.scan_py(data, stop, skip, flags)
    assert got == want, data[:300]
    return want


def _taken(items: list[ts.Item]) -> int:
    return sum(1 for x in items if type(x) is tuple)


@needs_c
def test_c_scan_is_the_definition_on_fixtures():
    """Every fixture (dsh v0, dsh-next v2-v4) cut in ~4 KB segments, with every set of flags: the same items."""
    files = sorted(FIXTURES.rglob("*.jsonl")) + sorted(NEXT.rglob("*.jsonl"))
    runs = left = 0
    for k, p in enumerate(files):
        blob = p.read_bytes()
        at = 0
        while at < len(blob):
            nl = blob.find(b"\n", at + 4096)
            end = len(blob) if nl < 0 else nl + 1
            items = _same(blob[at:end])
            runs += _taken(items)
            left += len(items) - _taken(items)
            if k % 7 == 0:
                for flags in (0, ts.SMALL, ts.PACKED | ts.CHUNK):
                    _same(blob[at:end], flags)
            at = end
    assert runs >= 400 and left >= 2000, (runs, left)


@needs_c
def test_c_scan_is_the_definition_on_hostile_rows():
    """The base rows changed one way at a time, and random byte edits of them, alone and between others: the
    same items both ways; the changes reach both sides of every check (some rows taken, some left)."""
    variants = _variants()
    taken = sum(_taken(_same(v + b"\n")) for v in variants)
    assert 20 <= taken < len(variants) - 40, (taken, len(variants))
    mutants = _mutants(BASE, 3000, seed=7)
    taken = sum(_taken(_same(m + b"\n")) for m in mutants)
    assert 80 <= taken <= 2900, taken
    rng = random.Random(3)
    for _ in range(300):                          # (rows together: runs merged or cut, torn last rows)
        rows = [rng.choice(variants + mutants + BASE * 20) for _k in range(rng.randint(1, 12))]
        data = b"\n".join(rows) + rng.choice([b"\n", b"", b"\n" + P[:20]])
        _same(data)
    _same(b"\n".join([deep_row(7, 300), deep_row(8, 256), deep_row(9, 257)]) + b"\n")


@needs_c
def test_left_rows_carry_fastrows_refusal():
    """A row the scan leaves carries fastrows.refused_rows' verdict (size, depth, UTF-8) for every row that is
    JSON (the only rows the verdict is asked about): fixtures, hostile rows."""
    rows = [ln for p in sorted(FIXTURES.rglob("*.jsonl")) + sorted(NEXT.rglob("*.jsonl"))
            for ln in p.read_bytes().split(b"\n") if ln]
    rows += [deep_row(7, 300), deep_row(8, 256), deep_row(9, 257), b'{"x":"' + b"[{" * 400 + b'"}',
             b'{"x":"caf\xc3\xa9 \xff"}', b'{"x":"\xed\xa0\x80"}', '{"x":"ünï"}'.encode(), b'{"x":["\\\\"],"y":[[["\\""]]]}']
    rows += _mutants([deep_row(5, 257), b'{"a":["\\"[[","\\\\",[[]]]}'], 300, seed=11)
    rows += [b'{"a":1e999}', b'{"a":[1.5E3]}', b'{"a":"1e999 1234567890123456789"}', b'{"a":1234567890123456789}',
             b'{"a":123456789012345678}', b'{"true":true,"false":false}']
    refused = 0
    for row in rows:
        [x] = _same(row + b"\n", 0, [])
        assert type(x) is int
        try:
            msgspec.json.decode(row)
        except (msgspec.DecodeError, RecursionError):
            continue
        big = re.search(rb"[0-9]{19}|[0-9.][eE]", re.sub(rb'"(?:[^"\\]|\\.)*"', b'""', row)) is not None
        assert ts.unpack(x)[2] == (bool(fastrows.refused_rows([row], False)) or big), row[:200]
        refused += ts.unpack(x)[2]
    assert refused >= 3


def test_runs_merge_like_rows():
    """Consecutive delta rows of one step with consecutive seqs make one run; another step, a gap in the seqs, a
    row left between, or a run whose last time is known meeting a row whose time is not, start a new one."""
    p2 = R.replace(b'"seq0":13', b'"seq0":14')
    z = C.replace(b'"time":1006', b'"time":0')
    assert ts.scan_py(P + b"\n" + R + b"\n" + T + b"\n" + C + b"\n", 10 ** 6, [], 3) == [(1, 1, 10, 8, 1000, 1006)]
    assert len(ts.scan_py(P + b"\n" + p2 + b"\n", 10 ** 6, [], 3)) == 2
    assert len(ts.scan_py(P + b"\n" + R.replace(b'"step":1', b'"step":2') + b"\n", 10 ** 6, [], 3)) == 2
    assert len(ts.scan_py(P + b"\n" + b'{"type":"x"}\n' + R + b"\n", 10 ** 6, [], 3)) == 3
    assert len(ts.scan_py(P + b'\n{"type":"x"}\n' + R + b"\n", 10 ** 6, [b"x"], 3)) == 1
    assert len(ts.scan_py(P + b"\n" + R + b"\n" + T + b"\n" + z + b"\n", 10 ** 6, [], 3)) == 2
    assert ts.scan_py(P + b"\n" + S + b"\n" + R + b"\n" + U + b"\n", 10 ** 6, [], 7) == [
        (1, 1, 10, 3, 1000, 1003), (0, 18, 1007, 1, 2), (1, 1, 13, 2, 1003, 1003), (2, 20, 1009, 2, None)]
    assert [type(x) for x in ts.scan_py(S + b"\n" + U + b"\n", 10 ** 6, [], 3)] == [int, int]
    assert ts.scan_py(P.replace(b"1000", b"0") + b"\n" + R + b"\n", 10 ** 6, [], 3) == [(1, 1, 10, 5, 0, 1003)]


_CHANGES = [
    (rb'"texts":\["', b'"texts":["\\u00e9\\n'), (rb'"texts":\["', b'"texts":["\\ud800'), (rb'"args":\["', b'"args":[7,"'),
    (rb'"chunk":\{"type":"text-delta"', b'"chunk":{"type":"text-delta","type":"finish","reason":{"kind":"stop"}'),
    (rb'"chunk":\{"type":"reasoning-delta"', b'"chunk":{"type":"reasoning\\u002ddelta"'),
    (rb'"chunk":\{"type":"usage"', b'"chunk":{"type":"text-delta","x":1,"type":"usage"'),
    (rb'"chunk":\{"type":"block-start"', b'"chunk":{"type":"block-start","n":1e999'),
    (rb'"time0":\d+', b'"time0":0'), (rb'"time":\d+', b'"time":0'), (rb'"time":\d+', b'"time":-4'),
    (rb'"seq":(\d+)', b'"seq":1<1>'), (rb'"dt":\[\d+', b'"dt":[1.0'), (rb'"step":\d+', b'"step":9'),
    (rb'"turn":\d+', b'"turn":"1"'), (rb'"data":\{', b'"data":{"x":[' + b"[" * 256 + b"]" * 256 + b'],'),
    (rb'"data":\{', b'"data":{"x":' + b"[" * 254 + b"]" * 254 + b','), (rb'\}\}$', b'}} '), (rb'"index":\d+', b'"index":12345678901234567890123'),
]


_SMALL_CHANGES = [
    (rb'"data":\{', b'"data":{"trigger":"user",'), (rb'"data":\{', b'"data":{"x":[1],'), (rb'"time":\d+', b'"time":0'),
    (rb'"time":\d+', b'"time":"5"'), (rb'"turn":\d+', b'"turn":7'), (rb'"turn":\d+', b'"turn":null'), (rb'"step":\d+', b'"step":2.0'),
    (rb'"seq":(\d+)', b'"seq":1<1>'), (rb'\}\}$', b'}, "x":1}'), (rb'"data":\{"turn":\d+', b'"data":{"step":1'),
]


def _with(new: bytes) -> Callable[[re.Match[bytes]], bytes]:
    return lambda m: new.replace(b"<1>", m.group(1) if m.groups() else b"")


def test_changed_chunk_rows_give_the_exact_spans(tmp_path: Path):
    """A generated v0 log (retries, failed attempts) whose packed and chunk rows are changed in the ways the scan
    must notice (escapes, second type keys, exponents, times 0 in a run, seqs out of order, deep values):
    ``timeline(reader)`` gives exactly the spans of the exact event pass; raw JSONL and zstd frames."""
    from app.log.source.zstdframes import encode_session
    src = tmp_path / "g.jsonl"
    write_jsonl(str(src), SessionSynth(71, version=0, p_retry=0.3), target_bytes=600_000)
    lines = src.read_bytes().split(b"\n")
    rng = random.Random(9)
    changed = 0
    for i in range(1, len(lines)):
        ln = lines[i]
        small = re.match(rb'\{"type":"(step/start|step/end|turn/start)"', ln)
        if (small or re.match(rb'\{"type":"(assistant/chunk|[a-z-]+-chunks)"', ln)) and rng.random() < 0.3:
            pat, new = rng.choice(_SMALL_CHANGES if small else _CHANGES)
            ln2 = re.sub(pat, _with(new), ln, count=1)
            changed += ln2 != ln
            lines[i] = ln2
    assert changed >= 100
    p = tmp_path / "m" / "session.jsonl"
    p.parent.mkdir()
    p.write_bytes(b"\n".join(lines))
    z = tmp_path / "z" / "session.jsonl.zstd"
    z.parent.mkdir()
    body = [ln for ln in lines[1:] if ln]
    z.write_bytes(encode_session(lines[0], [b"\n".join(body[k:k + 50]) + b"\n" for k in range(0, len(body), 50)]))
    for path in (p, z):
        r = open_reader(str(path))
        assert not r.fatal
        spans = list(timeline(r))
        assert spans == list(timeline(r.iter_events(logical=True)))
        assert sum(s["kind"] == "attempt" for s in spans) >= 50


def test_a_number_msgspec_refuses_sends_its_row_the_exact_way(tmp_path: Path):
    """A row whose record skips a number the exact decoder refuses (``1e999`` is out of range; a 400-digit integer)
    in a field no span reads: the exact path reads it as a bad row, and so does the timeline (main took it as a
    chunk, v0 and v4: message and tool rows too)."""
    for version in (0, 4):
        src = tmp_path / f"n{version}.jsonl"
        write_jsonl(str(src), SessionSynth(73 + version, version=version), target_bytes=300_000)
        out, k = [], 0
        for ln in src.read_bytes().split(b"\n"):
            if ln.startswith((b'{"type":"assistant/chunk"', b'{"type":"assistant/message"', b'{"type":"tool/result"',
                              b'{"type":"step/start"')):
                k += 1
                ln = ln.replace(b'"data":{', b'"data":{"n":%s,' % (b"1e999" if k % 2 else b"9" * 400), 1)
            out.append(ln)
        p = tmp_path / f"m{version}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(b"\n".join(out))
        r = open_reader(str(p))
        spans = list(timeline(r))
        assert spans == list(timeline(r.iter_events(logical=True)))
        assert k >= 50
