"""The saved timeline's spans read in C (``tl_unpack``, timelinec section of ``rowscan_c.c``): exactly msgspec's
values for every saved timeline (fixtures, generated logs) and for MessagePack of every kind a span may hold; on
damaged bytes it refuses (ValueError) or gives msgspec's own answer, never another one."""
from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest

from app.log.index.fastindex import load_rowscan_c
from app.log.query.timeline import in_log_order, timeline
from app.store.faces import open_reader
from app.store.timeline_cache import decode_spans
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

UNPACK: Any = getattr(load_rowscan_c(), "tl_unpack", None)
pytestmark = pytest.mark.skipif(UNPACK is None, reason="the row scanner in C is not built")


def _spans(tmp_path) -> list[list[dict]]:
    out = []
    for p in sorted(FIXTURES.rglob("*.jsonl"))[::3] + sorted((FIXTURES.parent / "dsh-next").rglob("*.jsonl"))[::3]:
        r = open_reader(str(p))
        if not r.fatal:
            out.append(in_log_order(timeline(r)))
    for version in (0, 4):
        p = tmp_path / f"g{version}.jsonl"
        write_jsonl(str(p), SessionSynth(81 + version, version=version, p_retry=0.3), target_bytes=300_000)
        out.append(in_log_order(timeline(open_reader(str(p)))))
    return out


def test_saved_spans_read_in_c_are_msgspecs(tmp_path):
    """Spans of fixtures and generated logs (v0, v4): the C reader gives msgspec's values (and types: an int
    stays an int, a float a float); the same strings come back as one object."""
    every = _spans(tmp_path)
    assert sum(map(len, every)) >= 500
    for spans in every:
        blob = msgspec.msgpack.encode(spans)
        got = UNPACK(blob)
        assert got == spans == msgspec.msgpack.decode(blob)
        assert decode_spans(memoryview(blob)) == spans
        assert [list(map(type, s.values())) for s in got] == [list(map(type, s.values())) for s in spans]
    kinds = [s["kind"] for s in UNPACK(msgspec.msgpack.encode(every[-1]))]
    assert len({id(k) for k in kinds}) == len(set(kinds))


def test_every_value_kind_reads_as_msgspec():
    """Every MessagePack width msgspec writes for JSON-like values (fixints, 8-64 bit signed and unsigned ints,
    floats, str/array/map of 8, 16 and 32-bit lengths, nesting, non-ASCII and long strings)."""
    vals: list[Any] = [None, True, False, 0, 127, 128, 255, 256, 65535, 65536, 2 ** 32, 2 ** 63 - 1, 2 ** 64 - 1,
                       -1, -32, -33, -128, -129, -32768, -32769, -2 ** 31 - 1, -2 ** 63, 0.0, -1.5, 1e300, float("inf"),
                       "", "a" * 31, "b" * 32, "c" * 33, "é" * 200, "x" * 70_000, "\x00\ud7ff\U0001f600",
                       list(range(20)), list(range(70_000)), {str(k): k for k in range(20)},
                       {str(k): k for k in range(70_000)}, {"a": {"b": {"c": [[[{}]]]}}}, []]
    for v in vals + [vals]:
        blob = msgspec.msgpack.encode(v)
        assert UNPACK(blob) == msgspec.msgpack.decode(blob)
    assert UNPACK(msgspec.msgpack.encode([{"a": 1}] * 3)) == [{"a": 1}] * 3


def test_damaged_bytes_are_refused_or_read_as_msgspec_reads_them(tmp_path):
    """Byte flips, cuts, insertions and kinds a saved timeline never holds (bin, ext, int keys, trailing bytes,
    deep nesting, invalid UTF-8): ValueError, or exactly msgspec's value (never a different one)."""
    spans = _spans(tmp_path)[-1][:300]
    blob = msgspec.msgpack.encode(spans)
    rng = random.Random(5)
    bad = [b"", b"\xc1", b"\xc4\x01a", b"\xd4\x01\x00", b"\x81\x01\x02", blob + b"\x00", b"\x91" * 100 + b"\xc0",
           b"\xa2\xff\xfe", b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xdb\xff\xff\xff\xff"]
    for _ in range(1500):
        b = bytearray(blob)
        for _k in range(rng.randint(1, 4)):
            at = rng.randrange(len(b))
            op = rng.random()
            if op < 0.6:
                b[at] = rng.randrange(256)
            elif op < 0.8:
                del b[at:at + rng.randint(1, 9)]
            else:
                b[at:at] = bytes([rng.randrange(256)])
        bad.append(bytes(b if rng.random() < 0.9 else b[:rng.randrange(len(b))]))
    refused = same = 0
    for b in bad:
        try:
            got = UNPACK(b)
        except ValueError:
            refused += 1
            continue
        assert got == msgspec.msgpack.decode(b), b[:40]
        same += 1
    assert refused >= 300 and same >= 100, (refused, same)
    for b in bad[:11]:
        with pytest.raises(ValueError):
            UNPACK(b)
