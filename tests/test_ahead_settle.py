"""Issue 29 (the pass3 helper): the background pass reads a settlement row (``assistant/message``,
``assistant/attempt``) with its stream's ``texts``, ``args`` and ``dt`` left raw (:func:`fastrows.pass_decoders`,
:func:`fastrows.pass_stream`).  It must accept exactly the rows :func:`fastrows.decoders`' records accept and give
the same stream summary (C ``tl_count`` and its interpreted definition alike), on the fixtures, generated logs and
settlement rows whose streams are bent every way; and the pass over logs of such rows equals the separate builds."""
from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from app.log.format import fastrows as fr
from app.log.index.reader import LogReader
from app.log.query.ahead import build_ahead
from app.tools.synth import SessionSynth, write_jsonl

from fixtures_util import FIXTURES, REPO, session_files
from test_ahead_pass import assert_same, separate

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
TAGS = (b"assistant/message", b"assistant/attempt")


def _old(raw: bytes, version: int):
    """The record of ``fr.decoders`` (None: refused) and its summary."""
    dec = fr.decoders(version).get(raw[9:raw.find(b'"', 9)])
    if dec is None:
        return None
    try:
        rec = dec(raw)
    except fr.DECODE_ERRORS:
        return None
    st = rec.data.stream
    return rec, (fr.stream_summary(st) if st is not None else None)


def _new(raw: bytes, version: int):
    """The record of ``fr.pass_decoders`` (None: refused, as ``LeanRows.ok`` refuses it) and its summary."""
    dec = fr.pass_decoders(version).get(raw[9:raw.find(b'"', 9)])
    if dec is None:
        return None
    try:
        rec = dec(raw)
    except fr.DECODE_ERRORS:
        return None
    st = rec.data.stream
    if st is None:
        return rec, None
    summ = fr.pass_stream(st)
    return (rec, summ) if summ is not None else None


def _same(raw: bytes, version: int) -> bool:
    """Both ways accept ``raw`` or neither; -> whether they accept it (then everything the pass reads is equal)."""
    a, b = _old(raw, version), _new(raw, version)
    assert (a is None) == (b is None), raw[:300]
    if a is None or b is None:
        return False
    (ra, sa), (rb, sb) = a, b
    assert sa == sb, raw[:300]
    assert (ra.seq, ra.T, ra.K, ra.time) == (rb.seq, rb.T, rb.K, rb.time)
    da, db = ra.data, rb.data
    assert (da.turn, da.step, da.usage) == (db.turn, db.step, db.usage)
    if ra.K == fr.MESSAGE:
        assert (da.interrupted, ra.sourceEventSeqs, bool(da.message.content)) == \
            (db.interrupted, rb.sourceEventSeqs, bool(db.message.content))
        assert fr.record_ok(ra, version < 2) == fr.record_ok(rb, version < 2)
    else:                       # (what the outline reads of an attempt's stream: its finish chunks)
        assert [(x.type, x.chunk) for x in da.stream] == [(x.type, x.chunk) for x in db.stream]
    return True


def _settlements(paths) -> list[tuple[bytes, int]]:
    out = []
    for p in paths:
        lines = p.read_bytes().split(b"\n")
        try:
            version = int(json.loads(lines[0]).get("version") or 0)
        except (ValueError, AttributeError):
            continue
        out += [(ln, version) for ln in lines[1:] if ln[9:26] in (b"assistant/message", b"assistant/attemp")]
    return out


@pytest.fixture(scope="module")
def v4_log(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("settle") / "v4.jsonl"
    write_jsonl(str(p), SessionSynth(seed=11, version=4, context_window=8_000), target_bytes=500_000)
    return p


# each bends the stream of a settlement row (``None``: the record removed); some keep the row lean, most refuse it
_ODD = [{"type": "chunk", "chunk": None}, {"type": "text-chunks", "texts": "x"},
        {"type": "text-chunks", "texts": {"a": [1, 2]}}, {"type": "tool-call-chunks", "args": ["a,b", "[c]", "{"]},
        {"type": "reasoning-chunks", "texts": [], "dt": []}, {"type": "reasoning-chunks", "texts": [["x", "y"], {}]},
        {"type": "chunk", "chunk": {"type": "finish", "reason": "error"}},
        {"type": "chunk", "chunk": {"type": "usage", "usage": {"a": [1]}}}, {"type": 7, "texts": ["a"]},
        {"type": "tool-call-chunks", "args": "notalist"}, {"type": "text-chunks", "texts": ["\\\"", "]"]}]
BENDS = {
    "dt-str": ("dt", "x"), "dt-obj": ("dt", {"a": 1}), "dt-num": ("dt", 3), "dt-null": ("dt", None),
    "dt-nested": ("dt", [[1], {"a": 2}, "x"]), "dt-float": ("dt", [1.5, 2]), "dt-bool": ("dt", True),
    "dt-gone": ("dt", None), "texts-str": ("texts", "abc"), "texts-obj": ("texts", {"x": ["a", "b"]}),
    "texts-empty": ("texts", []), "texts-nested": ("texts", [["a", "b"], "c,d", {"e": "]"}]),
    "texts-null": ("texts", None), "args-num": ("args", 5), "args-many": ("args", ["x"] * 40),
    "index-str": ("index", "0"), "id-obj": ("id", {"a": 1}), "time-float": ("time", 1.5),
    "type-num": ("type", 3), "chunk-list": ("chunk", [1]),
}


def _bend_row(row: dict, name: str, k: int) -> bool:
    d = row.get("data")
    st = d.get("stream") if isinstance(d, dict) else None
    if name == "odd-records":
        if isinstance(d, dict):
            d["stream"] = (st if isinstance(st, list) else [])[:2] + [_ODD[k % len(_ODD)], _ODD[(k * 7 + 3) % len(_ODD)]]
            return True
        return False
    if name == "stream-null" and isinstance(d, dict):
        d["stream"] = None
        return True
    if not isinstance(st, list) or not st:
        return False
    key, value = BENDS[name]
    for rec in st[k % len(st)::3]:
        if isinstance(rec, dict) and (key in rec or key in ("index", "id", "time", "dt", "texts", "args")):
            if name == "dt-gone":
                rec.pop("dt", None)
            else:
                rec[key] = value
    return True


ALL_BENDS = sorted(BENDS) + ["odd-records", "stream-null"]


def _bent(src: Path, dst: Path, name: str) -> int:
    out, n, k = [], 0, 0
    for line in src.read_bytes().splitlines():
        if line[9:26] in (b"assistant/message", b"assistant/attemp"):
            k += 1
            row = json.loads(line)
            if k % 2 == 0 and _bend_row(row, name, k):
                line = json.dumps(row, separators=(",", ":"), ensure_ascii=False).encode()
                n += 1
        out.append(line)
    dst.write_bytes(b"\n".join(out) + b"\n")
    return n


def test_the_settlement_records_agree_on_the_fixtures_and_a_generated_log(v4_log):
    rows = _settlements(session_files(FIXTURES) + session_files(NEXT) + [v4_log])
    assert len(rows) > 300
    taken = sum(_same(raw, version) for raw, version in rows)
    assert taken > 200


@pytest.mark.parametrize("name", ALL_BENDS)
def test_the_settlement_records_agree_on_bent_streams(v4_log, tmp_path, name):
    p = tmp_path / "bent.jsonl"
    assert _bent(v4_log, p, name) > 5
    rows = _settlements([p])
    assert sum(_same(raw, 4) for raw, _v in rows) > 0


@pytest.mark.parametrize("name", ["dt-str", "dt-null", "dt-gone", "texts-nested", "odd-records", "args-many"])
def test_the_pass_equals_the_separate_builds_on_bent_streams(v4_log, tmp_path, name):
    p = tmp_path / "bent.jsonl"
    assert _bent(v4_log, p, name) > 5
    assert_same(build_ahead(LogReader.open(str(p))), separate(LogReader.open(str(p))))


def test_the_c_count_equals_its_definition():
    count = fr._count_fn()
    values = [[], [1], [1, 2, 3], ["a,b", "]", "\\\"", "[{"], [[1, [2]], {"a": [3, 4]}], None, 1, "x", {"a": 1},
              [None, True, False, -1.5e3], ["\u00e9\u4e2d", ""], [{}] * 50]
    for v in values:
        for text in (json.dumps(v), json.dumps(v, indent=1), json.dumps(v, separators=(",", ":"))):
            raw = msgspec.Raw(text.encode())
            assert count(raw) == fr.count_py(raw) == (len(v) if isinstance(v, list) else -1), text
