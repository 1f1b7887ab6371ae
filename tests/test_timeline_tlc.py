"""The timeline's fast first pass (issue 31, the tlc helper): with its fast paths switched off (the settlement rows
read by the row scanner in C, ``timeline_rows.SETTLE_C``; the turns and totals summed in one pass,
``timeline.ONE_PASS``) the spans, the turns and the totals are exactly the same, on every fixture (v0 to v4), on
generated logs (v0 and v4, with retries and failed attempts) and on hostile ones (mutants of real logs, changed
settlement rows)."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from app.log.format.limits import MAX_DEPTH, MAX_PACKED_MEMBERS, MAX_ROW_BYTES
from app.log.index.fastindex import load_rowscan_c
from app.log.query import timeline_summary as tls
from app.log.query import timeline_lean as tl
from app.log.query import timeline_rows as tr
from app.log.query import timeline_scan as ts
from app.log.query.timeline import Settlement, timeline
from app.log.query.timeline_summary import in_log_order, summarize
from app.store.faces import open_reader
from app.tools.hostile import deep_row, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

NEXT = FIXTURES.parent / "dsh-next"
PRICES = {"deepseek-*": {"input": 0.28, "cacheRead": 0.028, "output": 0.42}, "gpt-4o": {"input": 2.5, "output": 10}}


def _all(p: Path, fast: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """(spans, turns, totals) of the log at ``p``, read with the fast paths on or off."""
    monkeypatch.setattr(tls, "ONE_PASS", fast)
    monkeypatch.setattr(tr, "SETTLE_C", fast)
    r = open_reader(str(p))
    if r.fatal:
        return None
    spans = in_log_order(timeline(r))
    out = summarize(spans, PRICES, ordered=True)
    return json.dumps(out["spans"]), json.dumps(out["turns"]), json.dumps(out["totals"])


def _same(p: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    fast = _all(p, True, monkeypatch)
    assert fast == _all(p, False, monkeypatch), p
    return fast is not None


def _generated(tmp_path: Path) -> list[Path]:
    out = []
    for version in (0, 4):
        g = tmp_path / f"g{version}" / "session.jsonl"
        g.parent.mkdir()
        write_jsonl(str(g), SessionSynth(31 + version, version=version, p_retry=0.3), target_bytes=400_000)
        out.append(g)
    return out


def test_fast_paths_off_give_the_same_on_fixtures_and_generated_logs(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch):
    logs = sorted(FIXTURES.rglob("*.jsonl")) + sorted(NEXT.rglob("*.jsonl")) + _generated(tmp_path)
    read = sum(_same(p, monkeypatch) for p in logs)
    assert read >= 60


def _changed(raw: bytes, rng: random.Random) -> bytes:
    """A settlement row changed where the C reader must refuse it or read it as the exact way does."""
    row = json.loads(raw)
    d = row.get("data")
    if not isinstance(d, dict):
        return raw
    pick = rng.randrange(14)
    if pick == 0:
        d["usage"] = rng.choice([{"inputTokens": 1.5}, {"outputTokens": None}, {"cacheReadTokens": "7"}, [], 3, None,
                                 {"inputTokens": 5, "outputTokens": 2, "cacheReadTokens": None, "x": [1, {"y": 2}]}])
    elif pick == 1:
        d["interrupted"] = rng.choice([True, False, None, 1, "yes"])
    elif pick == 2:
        d["turn"] = rng.choice([None, "1", 1.0, -3, 2 ** 60])
    elif pick == 3:
        row["sourceEventSeqs"] = rng.choice([[], [row.get("seq", 0)], [3, 2], [1, 1], None, "x", [[1, 2]], [-4, 0]])
    elif pick == 4:
        row["surfaceOp"] = rng.choice(["replace", None, {"op": "append"}])
    elif pick == 5:
        row["ignorable"] = rng.choice([True, None, {"a": [1]}, "x"])
    elif pick == 6:
        row["extra"] = 1
    elif pick == 7:
        d["stream"] = rng.choice([None, [], "x", [{"type": "chunk", "time": 5, "chunk": {"type": "finish"}}],
                                  [{"type": "text-chunks", "time0": 9, "texts": ["a", "b"], "dt": [1.5]}]])
    elif pick == 8:
        d.pop(rng.choice(["turn", "step", "message", "stream"]), None)
    elif pick == 9:
        row.pop(rng.choice(["time", "surfaceOp", "seq"]), None)
    elif pick == 10:
        d["type"] = rng.choice(["assistant/message", "other", 5])
    elif pick == 11:
        row["time"] = rng.choice([0, -1, 1.5, None, 10 ** 16])
    elif pick == 12:
        d["message"] = {"n": 12345678901234567890, "f": 1e5, "deep": [[[[1]]]]}
    else:
        text = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
        return text.replace('"step"', ' "step" ', 1).encode()
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode()


def test_fast_paths_off_give_the_same_on_hostile_logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Mutants of a real log and of generated v0 and v4 logs (truncated, flipped, garbage, deep, huge rows), and
    generated logs whose settlement rows are changed in every field the C reader reads or checks."""
    read = 0
    srcs = [FIXTURES / "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"] + _generated(tmp_path)
    for s, src in enumerate(srcs):
        data = src.read_bytes() + deep_row(10 ** 6, 300) + b"\n"
        for k, (_name, blob, _kept) in enumerate(jsonl_mutants(data, seed=s, count=12)):
            p = tmp_path / f"m{s}-{k}" / "session.jsonl"
            p.parent.mkdir()
            p.write_bytes(blob)
            read += _same(p, monkeypatch)
    rng = random.Random(31)
    for g in srcs[1:]:
        lines = g.read_bytes().split(b"\n")
        out = [lines[0]] + [_changed(ln, rng) if ln.startswith((b'{"type":"assistant/message"',
                                                                 b'{"type":"assistant/attempt"')) and rng.random() < 0.5
                            else ln for ln in lines[1:]]
        p = tmp_path / f"c-{g.parent.name}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(b"\n".join(out))
        read += _same(p, monkeypatch)
    assert read >= 30


C: Any = load_rowscan_c()
needs_c = pytest.mark.skipif(getattr(C, "tl_scan", None) is None, reason="the row scanner in C is not built")
_SETTLE_TAGS = (b'{"type":"assistant/message"', b'{"type":"assistant/attempt"')


def _settlement_rows(tmp_path: Path) -> list[bytes]:
    rows = []
    for p in sorted(FIXTURES.rglob("*.jsonl")) + sorted(NEXT.rglob("*.jsonl")) + _generated(tmp_path):
        rows += [ln for ln in p.read_bytes().split(b"\n")[1:] if ln.startswith(_SETTLE_TAGS)]
    return rows


def _edge_rows(base: bytes) -> list[bytes]:
    """Settlement rows at the edges of what the C reader checks: nesting about the limit, long numbers, exponents,
    escapes in keys and values, invalid UTF-8, blanks, repeated keys."""
    row = json.loads(base)
    out = []
    for depth in (MAX_DEPTH - 4, MAX_DEPTH - 3, MAX_DEPTH - 2, MAX_DEPTH - 1, MAX_DEPTH):
        r = json.loads(base)
        r["data"]["message"] = json.loads("[" * depth + "]" * depth)
        out.append(json.dumps(r, separators=(",", ":")).encode())
        r = json.loads(base)
        st = r["data"].get("stream") or []
        if st:
            st[0]["extra"] = json.loads("[" * (depth - 3) + "]" * (depth - 3))
            out.append(json.dumps(r, separators=(",", ":")).encode())
    text = json.dumps(row, separators=(",", ":"))
    for old, new in [('"turn":', '"turn" :'), ('"step":', '"st\\u0065p":'), ('"usage":{', '"usage":{"x":1.5e3,'),
                     ('"data":{', '"data":{"n":0.1234567890123456789,'), ('"data":{', '"data":{"n":0.123456789012345678,'),
                     ('"data":{', '"data":{"n":1234567890123456789,'), ('"data":{', '"data":{"n":123456789012345678,'),
                     ('"data":{', '"data":{"s":"\\ud800",'), ('"data":{', '"data":{"s":"\\u00e9\\n",'),
                     ('"data":{', '"data":{"turn":1,'), ('"seq":', '"seq": '), ('{"type":', '{"type" :'),
                     ('"data":{', '"data":{"message":null,'), ('"time":', '"time":1,"time":'),
                     ('"usage":{', '"usage":{"inputTokens":7,'), ('"usage":{', '"usage":{"inputTokens":7.0,'),
                     ('"usage":{', '"usage":{"cacheReadTokens":null,'), ('"usage":{', '"usage":{"inputTok\\u0065ns":"x",')]:
        if old in text:
            out.append(text.replace(old, new, 1).encode())
    raw = text.encode()
    i = raw.find(b'"text":"')
    if i > 0:
        out += [raw[:i + 8] + b"\xff\xfe" + raw[i + 8:], raw[:i + 8] + "é€😀".encode() + raw[i + 8:],
                raw[:i + 8] + b"\x01" + raw[i + 8:]]
    return out


@needs_c
def test_c_settlements_are_what_the_lean_reader_reads(tmp_path: Path):
    """Every settlement row of the fixtures and generated logs, changed copies and rows at the edges of its checks:
    where tl_scan's SETTLE path takes a row, the row is one the row screen passes and timeline_lean.settlement takes,
    and timeline_lean.settled of its tuple is exactly that record (event and stream summary); it takes the writer's
    rows."""
    rows = _settlement_rows(tmp_path)
    rng = random.Random(5)
    changed = [_changed(r, rng) for r in rows[::2] for _ in range(2)]
    edges = [e for r in rows[::40] for e in _edge_rows(r)]
    taken = 0
    for raw in rows + changed + edges:
        got = C.tl_scan(raw + b"\n", len(raw) + 1, [], ts.SETTLE, MAX_DEPTH, MAX_ROW_BYTES, MAX_PACKED_MEMBERS)
        assert len(got) == 1
        if not isinstance(got[0], tuple):
            continue
        taken += 1
        screen = C.tl_scan(raw + b"\n", len(raw) + 1, [], 0, MAX_DEPTH, MAX_ROW_BYTES, MAX_PACKED_MEMBERS)
        assert not screen[0] & 1, raw                 # (not a row the exact way must read)
        want = tl.settlement(raw)
        mine = tl.settled(got[0], raw + b"\n")
        assert want is not None, raw
        assert type(mine) is type(want), raw
        if isinstance(want, Settlement):
            assert isinstance(mine, Settlement)
            assert repr(mine.summ) == repr(want.summ), raw
            mine, want = mine.ev, want.ev
        assert repr(mine) == repr(want), raw
    assert taken >= len(rows) * 0.9
    assert taken < len(rows) + len(changed) + len(edges)


@needs_c
def test_string_scan_finds_every_special_byte_at_every_offset():
    """The C scan reads a string's plain bytes 8 at a time: a quote, an escape, a control byte, valid and invalid
    UTF-8 at every offset of a string (and of the 8-byte words around it) give what the definition gives, in rows
    the scan leaves (their screen) and in delta chunk rows it reads (their string checks)."""
    specials = [b'\\"', b"\\n", b"\\u00e9", b"\\ud800", b"\\x", b"\x01", b"\x7f", "é".encode(), "€".encode(),
                "😀".encode(), b"\xff", b"\xe2\x82", b"\xc0\xaf", b"\xed\xa0\x80", b"\x80"]
    rows = []
    for n in range(0, 19):
        for sp in specials:
            text = b"a" * n + sp + b"b" * (17 - n % 9)
            rows.append(b'{"type":"x","seq":1,"data":{"s":"' + text + b'"}}')
            rows.append(b'{"type":"assistant/chunk","seq":%d,"time":5,"data":{"turn":1,"step":1,"chunk":'
                        b'{"type":"text-delta","text":"' % n + text + b'"}}}')
    data = b"\n".join(rows) + b"\n"
    flags = ts.CHUNK
    got = C.tl_scan(data, len(data), [], flags, MAX_DEPTH, MAX_ROW_BYTES, MAX_PACKED_MEMBERS)
    assert got == ts.scan_py(data, len(data), [], flags)
    assert any(isinstance(x, tuple) for x in got) and any(isinstance(x, int) and x & 1 for x in got)
