"""Issue 29 (the background pass's cost): the read-path check's scan of a segment (the row types it starts with, and
whether it holds a plugin source) in one C call, ``seg_types``, held equal to its interpreted definition
(:func:`app.log.index.verdict.seg_types_py`: the regular expressions' ``row_types`` and a substring test) on every
fixture at every cut, on generated logs and on hostile bytes; and the verdict of every fixture the same either way."""
from __future__ import annotations

import random

import pytest

from app.log.index import verdict
from app.log.index.fastindex import load_rowscan_c
from app.log.index.reader import LogReader
from app.log.index.verdict import dsh_verdict, row_types, seg_types_py
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import REPO, session_files

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
CASES = session_files() + sorted(NEXT.rglob("*.v[1234].jsonl"))
_C = getattr(load_rowscan_c(), "seg_types", None)
needs_c = pytest.mark.skipif(_C is None, reason="the C row scanner is not built")


def _same(data: bytes) -> None:
    for plugin in (True, False):
        want = seg_types_py(data, plugin)
        assert want[0] == row_types(data)
        got = _C(data, plugin)
        assert got == want, (data[:200], plugin)
        assert type(got[0]) is set and type(got[1]) is bool


HOSTILE = [
    b"", b"\n", b"\n\n", b"{", b'{"type":', b'{"type":"', b'{"type":""', b'{"type":"a"', b'{"type": "a"',
    b'{"type":  "a"', b'{"type":\t"a"', b'\n{"type":"a"', b'x\n{"type":"a"}\n{"type": "b"}\n', b'{"type":"a\nb"}\n',
    b'{"type":"a\n{"type":"hidden"}\n{"type":"c"}\n', b'{"type":"a\\"b"}\n', b'{"type":"a\\\\"}\n',
    b'{"type":"\xff\xfe"}\n{"type":"\xc3\xa9"}\n', b' {"type":"a"}\n', b'{"Type":"a"}\n', b'{"type" :"a"}\n',
    b'{"type":"a"}\n{"type":"a"}\n{"type":"a"', b'{"type":"a"}\n{"type":"', b'{"type":"a"}\n{"type": ',
    b'"plugin"', b'"plugin', b'plugin"', b'{"type":"x","source":{"kind":"plugin"}}\n', b'\n"plugin"\n',
    b'{"type":"t"}' + b"\n" * 3 + b'{"type":"u"',
    # more distinct types than the C side keeps in its small table
    b"".join(b'{"type":"t%d"}\n' % (k % 150) for k in range(600)),
    b"".join(b'{"type": "t%d"}\n{"type":"t%d' % (k, k) for k in range(100)),
]


@needs_c
@pytest.mark.parametrize("data", HOSTILE, ids=range(len(HOSTILE)))
def test_c_equals_its_definition_on_hostile_bytes(data):
    _same(data)
    for cut in range(min(len(data), 64) + 1):           # (every alignment of the short ones, and their tails)
        _same(data[cut:])
        _same(data[:cut])


@needs_c
def test_c_equals_its_definition_on_random_bytes():
    rng = random.Random(29)
    parts = [b'{"type":', b'"', b" ", b"\n", b"a", b"b", b"\\", b"plugin", b'"plugin"', b"{", b"}", b":", b"\xc3"]
    for _ in range(3000):
        _same(b"".join(rng.choice(parts) for _ in range(rng.randrange(40))))


@needs_c
@pytest.mark.parametrize("path", CASES, ids=lambda p: "/".join(p.parts[-3:]))   # (stable: xdist workers must collect the same ids)
def test_c_equals_its_definition_on_every_fixture_at_every_cut(path):
    data = path.read_bytes()
    _same(data)
    rng = random.Random(len(data))
    rows = [k + 1 for k in range(len(data)) if data[k:k + 1] == b"\n"][:8]
    cuts = sorted({0, len(data)} | {rng.randrange(len(data) + 1) for _ in range(24)} | set(rows))
    for a in cuts:
        _same(data[a:])
        _same(data[:a])
        _same(data[a:a + 4096])


@needs_c
@pytest.mark.parametrize("version", [0, 4])
def test_c_equals_its_definition_on_generated_segments(tmp_path, version):
    p = tmp_path / f"session.v{version}.jsonl"
    write_jsonl(str(p), SessionSynth(seed=7, version=version, context_window=12_000), target_bytes=400_000)
    r = LogReader.open(str(p))
    for seg in r.source.forward():
        if not seg.bad and seg.rows is None:
            _same(seg.data)


@pytest.mark.parametrize("path", CASES[::3], ids=lambda p: "/".join(p.parts[-3:]))   # (stable: xdist workers must collect the same ids)
def test_the_verdict_is_the_same_without_the_c_scan(path, monkeypatch):
    got = [p.message for p in dsh_verdict(LogReader.open(str(path)))]
    monkeypatch.setattr(verdict, "seg_types", seg_types_py)
    assert [p.message for p in dsh_verdict(LogReader.open(str(path)))] == got
