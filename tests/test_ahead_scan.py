"""Issue 29: the background pass reads a segment's rows in one C call (``ahead_rows``, the passc section of
app/log/index/rowscan_c.c).  The C function equals its interpreted definition (:func:`ahead_scan.ahead_rows_py`) on
every fixture, on generated v0 and v4 logs and on hostile mutants; a row it calls a canonical boundary is one its
lean record accepts, with the same seq, turn and step; and the pass equals its exact way with either."""
from __future__ import annotations

import pytest

from app.log.format import fastrows as fr
from app.log.format.limits import MAX_DEPTH, MAX_ROW_BYTES
from app.log.index.fastindex import load_rowscan_c
from app.log.index.reader import LogReader
from app.log.query import ahead_scan
from app.log.query.ahead import build_ahead
from app.log.query.ahead_rows import LEAN_TYPES, SURFACE_TYPES
from app.log.query.ahead_scan import NEEDLE, NONE, REFUSED, SHIFT, TURN_END, W, ahead_rows_py
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import session_files
from test_ahead_pass import assert_same, separate

C = getattr(load_rowscan_c(), "ahead_rows", None)
needs_c = pytest.mark.skipif(C is None, reason="the C module is not built")
TYPES = tuple(t.encode() for t in sorted(LEAN_TYPES | SURFACE_TYPES))


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[int, bytes]:
    d = tmp_path_factory.mktemp("scan")
    out = {}
    for v in (0, 4):
        p = d / f"v{v}.jsonl"
        write_jsonl(str(p), SessionSynth(seed=5, version=v, context_window=6_000), target_bytes=400_000)
        out[v] = p.read_bytes()
    return out


def _c(data: bytes, types: tuple[bytes, ...] = TYPES, max_row: int = MAX_ROW_BYTES,
       max_depth: int = MAX_DEPTH) -> list[int]:
    assert C is not None
    return memoryview(C(data, types, max_row, max_depth)).cast("q").tolist()


def _same(data: bytes, types: tuple[bytes, ...] = TYPES, max_row: int = MAX_ROW_BYTES,
          max_depth: int = MAX_DEPTH) -> list[int]:
    got = _c(data, types, max_row, max_depth)
    assert got == ahead_rows_py(data, types, max_row, max_depth)
    return got


def _mutants(row: bytes) -> list[bytes]:
    """Every one-byte deletion of ``row``, and insertions of a blank, a digit, a zero, a quote and a brace at every
    place; bad UTF-8, an escape, a long number in place of each number."""
    out = []
    for i in range(len(row) + 1):
        if i < len(row):
            out.append(row[:i] + row[i + 1:])
        for b in (b" ", b"7", b"0", b'"', b"}", b"\xff", b"\\"):
            out.append(row[:i] + b + row[i:])
    for k in range(len(row)):
        if row[k:k + 1].isdigit() and (k == 0 or not row[k - 1:k].isdigit()):
            for num in (b"1234567890123456", b"123456789012345", b"9007199254740991", b"00", b"-1", b"1.0", b"1e3"):
                j = k
                while j < len(row) and row[j:j + 1].isdigit():
                    j += 1
                out.append(row[:k] + num + row[j:])
    out += [row[:k] for k in range(0, len(row), max(1, len(row) // 40))]          # (truncated rows)
    for a, b in ((b'"turn":1', b'"turn":"1"'), (b'"turn":1', b'"turn":1.5'), (b'"turn":1', b'"turn":null'),
                 (b'"seq":', b'"seq":-'), (b'"seq":', b'"seq":9007199254740992'), (b'"step":1', b'"step":[1]'),
                 (b'"data":{', b'"data":{"zz":1,'), (b'}}', b'},"zz":1}'), (b'"time":', b'"time":"'),
                 (b'"reason":{"kind":"completed"}', b'"reason":"completed"'), (b'{"type"', b'{ "type"')):
        out.append(row.replace(a, b, 1))
    out.append(row.replace(b'"kind":"completed"', b'"kind":"compl\\u0065ted"'))
    out.append(row.replace(b'"type":"', b'"type":"\\u0073'))
    return out


CANON = [b'{"type":"step/start","seq":3,"time":1786239516690,"data":{"turn":1,"step":1}}',
         b'{"type":"step/end","seq":0,"time":0,"data":{"turn":0,"step":0}}',
         b'{"type":"turn/start","seq":26,"time":1786239532838,"data":{"turn":2}}',
         b'{"type":"turn/end","seq":23,"time":1786239524547,"data":{"turn":1,"reason":{"kind":"completed"}}}',
         b'{"type":"turn/end","seq":23,"time":1786239524547,"data":{"turn":1,"reason":{"kind":"error"}}}']


@needs_c
def test_c_equals_its_definition_on_the_fixtures():
    files = session_files()
    assert len(files) > 20
    typed = 0
    for p in files:
        data = p.read_bytes()
        for types in (TYPES, (), (b"step/start", b"text-chunks", b"session")):
            got = _same(data, types)
            typed += sum(1 for x in got[2::W] if x & 0xFF != NONE)
    assert typed > 100


@needs_c
@pytest.mark.parametrize("version", [0, 4])
def test_c_equals_its_definition_on_generated_logs(logs, version):
    data = logs[version]
    got = _same(data)
    info = got[2::W]
    assert sum(1 for x in info if x >> SHIFT) > 50           # (canonical boundaries)
    assert sum(1 for x in info if x & NEEDLE) > 100
    assert len(got) // W == data.count(b"\n")
    _same(data + b'{"type":"step/end","seq":1')             # (a torn tail is not read)
    _same(data, TYPES, 2000, 3)                             # (tighter limits: more rows refused)


@needs_c
def test_c_equals_its_definition_on_hostile_rows(logs):
    rows = CANON + [r for r in logs[4].splitlines()[:60] if len(r) < 3000]
    mutants = [m for r in rows for m in _mutants(r)]
    mutants += [b"", b"{", b'{"type":"', b'{"type":"step/start', b'{"type":"step/start"', b'{"type":"\xff"}',
                b'{"type":"turn/end","x":"\\"step/"}', b'{"type":"tool/call","a":"\\"surfaceOp\\""}' + b"[" * 80,
                b'{"type":"tool/call","seq":1' + b"9" * 30 + b"}"]
    assert len(mutants) > 10_000
    data = b"\n".join(mutants) + b"\n"
    got = _same(data)
    assert any(x & REFUSED for x in got[2::W])
    screen = load_rowscan_c().screen_row                   # (its screen answers as the fast paths' screen does)
    typed = [(m, x) for m, x in zip(mutants, got[2::W]) if x & 0xFF != NONE]
    assert len(typed) > 1000
    assert all(bool(x & REFUSED) == screen(m, MAX_ROW_BYTES, MAX_DEPTH) for m, x in typed)
    for k in range(0, len(mutants), 500):                   # (a row alone: no neighbour to read past into)
        _same(b"\n".join(mutants[k:k + 500]) + b"\n")


def _eq(a, b) -> None:
    """Two passes give the same products."""
    assert b.complete
    assert_same(a, (b.checkpoints, b.surface, b.surface_end, b.outline))


def _lean(raw: bytes, version: int):
    return fr.record_of(fr.decoders(version), raw, version < 2)


@pytest.mark.parametrize("version", [0, 4])
def test_a_canonical_row_is_one_its_lean_record_accepts(logs, version):
    rows = CANON + [r for r in logs[version].splitlines() if len(r) < 3000]
    rows += [m for r in CANON + rows[:40] for m in _mutants(r)]
    canon = 0
    for raw in rows:
        got = ahead_rows_py(raw + b"\n", TYPES, MAX_ROW_BYTES, MAX_DEPTH)
        shape = got[2] >> SHIFT
        if not shape:
            continue
        canon += 1
        rec = _lean(raw, version)
        assert rec is not None, raw
        assert (rec.seq, rec.data.turn) == (got[3], got[4]), raw
        assert TYPES[got[2] & 0xFF].decode() == rec.T
        if rec.K == fr.STEP:
            assert rec.data.step == got[5]
        if shape == TURN_END:
            assert rec.data.reason == {"kind": "completed"}
    assert canon > 200


@pytest.mark.parametrize("version", [0, 4])
def test_the_pass_equals_its_exact_way_without_the_c_module(logs, tmp_path, monkeypatch, version):
    p = tmp_path / "log.jsonl"
    p.write_bytes(logs[version])
    with_c = build_ahead(LogReader.open(str(p)))
    monkeypatch.setattr(ahead_scan, "_c_rows", lambda: None)
    _eq(build_ahead(LogReader.open(str(p))), build_ahead(LogReader.open(str(p)), fast=False))
    _eq(build_ahead(LogReader.open(str(p))), with_c)


def test_the_pass_equals_its_exact_way_on_hostile_boundaries(logs, tmp_path):
    """Boundary rows bent near the canonical shape, in a generated log: the pass equals its exact way."""
    out = []
    for k, raw in enumerate(logs[4].splitlines()):
        if raw.startswith((b'{"type":"step/', b'{"type":"turn/')) and k % 3 == 0:
            ms = _mutants(raw)
            raw = ms[(k * 7919) % len(ms)]
        out.append(raw)
    p = tmp_path / "bent.jsonl"
    p.write_bytes(b"\n".join(out) + b"\n")
    _eq(build_ahead(LogReader.open(str(p))), build_ahead(LogReader.open(str(p)), fast=False))
    assert_same(build_ahead(LogReader.open(str(p))), separate(LogReader.open(str(p))))
