"""A number JavaScript reads but msgspec refuses (``1e999``, ``-1E400``: "Number out of range"; an integer of
more than 4300 digits) in an event's ``data``: dsh's newest reader (``JSON.parse``, then checks of the envelope
only) keeps the row with +-Infinity there (/work/notes/issue-27-numbers.md), so Session Lens reads it as an
event with +-inf (:func:`app.log.format.codec.decode_json`), never as a bad row; every path and export stays
safe with the inf.  In a field dsh checks (seq, time, sourceEventSeqs, a packed row, the header) the row is
refused as before, with the same message."""
from __future__ import annotations

import json
import math
from pathlib import Path

import msgspec
import pytest

from app.log.format.codec import DecodeError, RowCodec, decode_json
from app.log.format.model import BadRow
from app.log.index.reader import LogReader
from app.log.query import analysis
from app.log.query.timeline import timeline
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl

BIG = b"9" * 5000
NUMS = [b"1e999", b"-1E400", BIG, b"-" + BIG]
WANT = [math.inf, -math.inf, math.inf, -math.inf]


def _row(**kw: bytes) -> bytes:
    return b"{" + b",".join(b'"%s":%s' % (k.encode(), v) for k, v in kw.items()) + b"}"


def test_decode_json_reads_them_as_javascript_does():
    for num, want in zip(NUMS, WANT):
        raw = _row(type=b'"user/message"', seq=b"3", time=b"5", data=b'{"a":[1,{"b":' + num + b'}],"c":"1e999"}')
        with pytest.raises(msgspec.DecodeError):
            msgspec.json.decode(raw)
        obj, replaced = decode_json(raw)
        assert obj == {"type": "user/message", "seq": 3, "time": 5, "data": {"a": [1, {"b": want}], "c": "1e999"}}
        assert not replaced
    # everything else exactly as msgspec: a 400-digit integer, -0, floats, unicode
    rest = b'"x":' + b"7" * 400 + b',"y":-0,"z":-0.0,"w":0.1,"v":1.5e300,"u":"\\ud83d\\ude00\\u00e9"'
    obj, _ = decode_json(_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,' + rest + b"}"))
    assert {k: v for k, v in obj["data"].items() if k != "n"} == msgspec.json.decode(b"{" + rest + b"}")
    assert repr(obj["data"]) == repr({"n": math.inf, **msgspec.json.decode(b"{" + rest + b"}")})
    # invalid UTF-8 elsewhere in the row: still read with U+FFFD, the number as inf
    obj, replaced = decode_json(_row(type=b'"x"', seq=b"1", data=b'{"s":"\xff","n":-1e999}'))
    assert replaced and obj["data"] == {"s": "\ufffd", "n": -math.inf}


REFUSED = [  # (row, why): msgspec refuses these for more than the number, or dsh checks the number's field
    (_row(type=b'"x"', seq=b"1e999", data=b"{}"), "seq"),
    (_row(type=b'"x"', seq=BIG, data=b"{}"), "seq"),
    (_row(type=b'"x"', seq=b"1", time=b"-1e999", data=b"{}"), "time"),
    (_row(type=b'"x"', seq=b"1", time=BIG, data=b"{}"), "time"),
    (_row(type=b'"x"', seq=b"1", data=b"{}", sourceEventSeqs=b"[1e999]"), "sourceEventSeqs"),
    (_row(type=b'"x"', seq=b"1", data=b"{}", surfaceOp=b'{"n":1e999}'), "surfaceOp"),
    (_row(type=b'"text-chunks"', seq0=b"1", time0=b"0",
          data=b'{"turn":1,"step":1,"index":0,"dt":[1e999],"texts":["a"]}'), "packed dt"),
    (_row(type=b'"session"', id=b'"s"', version=b"4", createdAt=b"1e999"), "header"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,"m":NaN}'), "NaN literal"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,"m":Infinity}'), "Infinity literal"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,"m":"\\ud800"}'), "lone surrogate"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,}'), "trailing comma"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999,"m":"\x01"}'), "control character"),
    (_row(type=b'"x"', seq=b"1", data=b'{"n":1e999}') + b" x", "trailing bytes"),
    (b"[1e999]", "no event"),
]


@pytest.mark.parametrize("raw,why", REFUSED, ids=[w for _r, w in REFUSED])
def test_refused_as_before_with_the_same_message(raw, why):
    with pytest.raises(msgspec.DecodeError) as before:
        msgspec.json.decode(raw)
    with pytest.raises(DecodeError) as now:
        decode_json(raw)
    assert str(now.value) == str(before.value), why
    for version in (0, 4):
        items, problems = RowCodec("s", version).decode_row(raw, line=2)
        assert len(items) == 1 and isinstance(items[0], BadRow) and items[0].kind == "malformed"
        assert items[0].reason == f"not a JSON row: {before.value}" and problems[0].message == items[0].reason


# --------------------------------------------------------------------------- whole logs

def _inject(line: bytes, k: int, num: bytes) -> bytes:
    """A tool result's first text block gains ``"zz":num``; other event rows (not packed) gain it in data."""
    if b'"type":"tool/result"' in line[:30]:
        at = line.find(b'[{"type":"text",')
        assert at > 0
        return line[:at + 2] + b'"zz":' + num + b"," + line[at + 2:]
    if line.startswith(b'{"type":') and b'"seq":' in line[:60] and k % 3 == 0:
        at = line.index(b'"data":{') + 8
        return line[:at] + b'"zz":' + num + (b"," if line[at:at + 1] != b"}" else b"") + line[at:]
    return line


def _logs(tmp_path: Path, version: int) -> tuple[Path, Path, int]:
    """(a generated log with the numbers, the same log with 0 in their place, rows changed)."""
    src = tmp_path / f"src{version}.jsonl"
    write_jsonl(str(src), SessionSynth(seed=7 + version, version=version), target_bytes=60_000)
    lines = src.read_bytes().split(b"\n")
    out = []
    for nums, name in ((NUMS, "inf"), ([b"0"], "zero")):
        new = [lines[0]] + [_inject(ln, k, nums[k % len(nums)]) if ln else ln for k, ln in enumerate(lines[1:])]
        p = tmp_path / name / ("session.jsonl" if version == 0 else f"session.v{version}.jsonl")
        p.parent.mkdir()
        p.write_bytes(b"\n".join(new))
        out.append(p)
    changed = sum(a != b for a, b in zip(lines, out[0].read_bytes().split(b"\n")))
    assert changed > 20
    return out[0], out[1], changed


@pytest.fixture(params=[0, 4], ids=["v0", "v4"])
def logs(request, tmp_path):
    return _logs(tmp_path, request.param)


def _events(p: Path) -> list:
    return list(LogReader.open(str(p)).iter_events(logical=False))


def test_rows_decode_as_events_with_inf(logs):
    inf, zero, changed = logs
    a, b = _events(inf), _events(zero)
    assert not [x for x in a if isinstance(x, BadRow)]
    assert [(x.seq, x.type) for x in a] == [(x.seq, x.type) for x in b]
    infs = [x for x in a if "inf" in repr(x.data)]
    assert len(infs) >= changed - 2     # (every changed row: a packed row is never changed)


def test_inspect_reports_nothing_new_fast_equals_exact(logs):
    inf, zero, _changed = logs
    fast = analysis.inspect(open_reader(str(inf)), fast=True)
    exact = analysis.inspect(open_reader(str(inf)), fast=False)
    assert json.dumps(fast) == json.dumps(exact)
    base = analysis.inspect(open_reader(str(zero)), fast=False)
    assert fast["problems"] == base["problems"]
    assert not any("out of range" in p for p in fast["problems"])
    assert fast.get("dshWouldRefuse") == base.get("dshWouldRefuse")


def test_timeline_fast_equals_exact(logs):
    inf, _zero, _changed = logs
    r = open_reader(str(inf))
    assert list(timeline(r)) == list(timeline(r.iter_events(logical=True)))
