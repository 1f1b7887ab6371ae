"""Issue 29, the one background pass made lean: a clean packed chunk row is read through a narrow record and
counted, never expanded into events (:mod:`app.log.query.ahead_lean`).  Whenever the lean read answers, the
codec must expand that row cleanly to the same extent; and the pass's products stay EXACTLY equal to the
separate builds on v0 fixtures, generated v0 logs with compactions, hostile and mutated logs, and packed rows
made to fall just outside the lean read."""
from __future__ import annotations

import json

import pytest

import app.log.format.codec as codec_mod
from app.log.format.lazyrows import PACKED_PREFIXES
from app.log.format.model import MAX_SAFE_INT, is_event
from app.log.index.reader import LogReader
from app.log.query.ahead import build_ahead
from app.log.query.ahead_lean import lean_block
from app.tools.hostile import hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import session_files
from test_ahead_pass import assert_same, separate

_TEXT = {"type": "text-chunks", "seq0": 5, "time0": 100,
         "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 2], "texts": ["a", "b", "c"]}}
_CALL = {"type": "tool-call-chunks", "seq0": 5, "time0": 100,
         "data": {"turn": 1, "step": 1, "index": 0, "id": "c1", "name": "bash", "dt": [3], "args": ["{", "}"]}}


def _with(base, path, value, drop=False):
    row = json.loads(json.dumps(base))
    d = row
    for k in path[:-1]:
        d = d[k]
    if drop:
        del d[path[-1]]
    else:
        d[path[-1]] = value
    return json.dumps(row, separators=(",", ":")).encode()


def near_misses() -> list[bytes]:
    """Packed rows just inside and just outside what the codec expands cleanly."""
    out = [json.dumps(_TEXT, separators=(",", ":")).encode(), json.dumps(_CALL, separators=(",", ":")).encode(),
           _with(_CALL, ("data", "name"), None, drop=True), _with(_CALL, ("data", "id"), {"x": [1]}),
           _with(_TEXT, ("type",), "reasoning-chunks"), _with(_CALL, ("data", "name"), None)]
    for base in (_TEXT, _CALL):
        pay = "texts" if base is _TEXT else "args"
        for path, value in [(("seq0",), -1), (("seq0",), 1.0), (("seq0",), True), (("seq0",), "5"),
                            (("seq0",), MAX_SAFE_INT - 1), (("seq0",), MAX_SAFE_INT), (("time0",), MAX_SAFE_INT),
                            (("time0",), -MAX_SAFE_INT), (("time0",), 2.5), (("time0",), None), (("time0",), 2 ** 70),
                            (("data", "turn"), False), (("data", "turn"), 2 ** 63), (("data", "turn"), 2 ** 64),
                            (("data", "step"), "1"), (("data", "index"), None), (("data", "dt"), [1]),
                            (("data", "dt"), [1, 2, 3]), (("data", "dt"), [1, 2.0]), (("data", "dt"), "12"),
                            (("data", "dt"), [MAX_SAFE_INT, 1]), (("data", pay), []), (("data", pay), ["a", 1, "c"]),
                            (("data", pay), "abc"), (("data", "extra"), 1), (("extra",), 1), (("data",), [1]),
                            (("data", "name"), "x"), (("data", "id"), None)]:
            out.append(_with(base, path, value))
        for key in ("seq0", "time0", "data"):
            out.append(_with(base, (key,), None, drop=True))
        for key in ("turn", "step", "index", "dt", pay):
            out.append(_with(base, ("data", key), None, drop=True))
    good = json.dumps(_TEXT, separators=(",", ":")).encode()
    out += [good.replace(b'"a"', b'"\xff"'), good.replace(b'"a"', b'"\\ud800"'),
            good.replace(b'"seq0":5', b'"seq0":5,"seq0":6'), good.replace(b'"turn":1', b'"turn":1,"turn":"x"'),
            good + b" ", b" " + good, good[:-1], good.replace(b'"a"', b'"\\u0000\\n\\""'),
            good.replace(b'"a"', b'"[[[[[[[[{{{{{"')]
    return out


def _agrees(reader, raw: bytes) -> bool:
    """lean_block(raw) against the codec's exact decode of the same row; True when the lean read took it."""
    blk = lean_block(reader, raw, 7, 70)
    items, probs = reader.codec.decode_row(raw, pos=70, offset=70, line=7)
    if blk is None:
        return False
    evs = [it for it in items if is_event(it)]
    assert not probs and len(evs) == len(items) == blk.n, raw[:200]
    assert [e.seq for e in evs] == list(range(blk.seq0, blk.seq0 + blk.n)), raw[:200]
    assert all(e.type == "assistant/chunk" and e.data["turn"] == blk.turn and e.data["step"] == blk.step
               and e.data["chunk"]["type"] != "finish" for e in evs), raw[:200]
    return True


def _v0_log(tmp_path, rows: list[bytes], name="near.jsonl", version=0):
    p = tmp_path / name
    hdr = {"type": "session", "version": version, "id": "s-near", "createdAt": 0, "cwd": "/"}
    p.write_bytes(json.dumps(hdr).encode() + b"\n" + b"\n".join(rows) + b"\n")
    return p


def test_lean_read_agrees_with_the_codec_on_near_misses(tmp_path):
    rows = near_misses()
    r = LogReader.open(str(_v0_log(tmp_path, rows[:1])))
    took = [_agrees(r, raw) for raw in rows]
    assert sum(took) >= 6 and not all(took)
    r2 = LogReader.open(str(_v0_log(tmp_path, rows[:1], "v2.jsonl", version=2)))
    assert r2.codec.version == 2 and lean_block(r2, rows[0], 1, 0) is None   # (packed rows are bad rows from v2 on)


def test_lean_read_agrees_on_every_fixture_and_generated_packed_row(tmp_path):
    p = tmp_path / "gen.jsonl"
    write_jsonl(str(p), SessionSynth(seed=11), target_bytes=600_000)
    took = n = 0
    for f in [*session_files(), p]:
        r = LogReader.open(str(f))
        for ln in f.read_bytes().split(b"\n")[1:]:
            if ln.startswith(PACKED_PREFIXES):
                n += 1
                took += _agrees(r, ln)
    assert n > 500 and took == n          # (every packed row a real writer wrote is a clean one)


def test_pass_equals_separate_builds_on_near_misses(tmp_path):
    """Every near miss in a log of its own between real rows (seq gaps and bad rows included)."""
    rows = near_misses()
    lines = [json.dumps({"type": "turn/start", "seq": 0, "time": 0, "data": {"turn": 1}}).encode(), *rows,
             json.dumps({"type": "step/start", "seq": 8, "time": 0, "data": {"turn": 1, "step": 1}}).encode()]
    p = _v0_log(tmp_path, lines)
    assert_same(build_ahead(LogReader.open(str(p))), separate(LogReader.open(str(p))))


def test_pass_equals_separate_builds_on_generated_hostile_and_mutated_v0(tmp_path):
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=13, context_window=12_000), target_bytes=1_200_000)
    a = build_ahead(LogReader.open(str(p)))
    assert_same(a, separate(LogReader.open(str(p))))
    assert a.surface.compactions and a.outline.events > 3 * len(p.read_bytes().split(b"\n"))  # (packed rows)
    lines = p.read_bytes().split(b"\n")
    h = tmp_path / "hostile.jsonl"
    h.write_bytes(hostile_session([ln for ln in lines if ln], seed=3))
    assert_same(build_ahead(LogReader.open(str(h))), separate(LogReader.open(str(h))))
    small = tmp_path / "small.jsonl"
    write_jsonl(str(small), SessionSynth(seed=17), target_bytes=120_000)
    for name, data, _kept in jsonl_mutants(small.read_bytes(), seed=7, count=20):
        m = tmp_path / f"m-{name}.jsonl"
        m.write_bytes(data)
        assert_same(build_ahead(LogReader.open(str(m))), separate(LogReader.open(str(m))))


@pytest.mark.parametrize("every", [1 << 14, 1 << 20])
def test_pass_builds_no_event_of_a_clean_packed_row(tmp_path, monkeypatch, every):
    """The lean pass: no clean packed row is expanded into events (before: each was, then counted again)."""
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=19), target_bytes=400_000)
    want = separate(LogReader.open(str(p)), every)
    calls = [0]
    real = codec_mod.expand_packed

    def counting(row):
        calls[0] += 1
        return real(row)
    monkeypatch.setattr(codec_mod, "expand_packed", counting)
    a = build_ahead(LogReader.open(str(p)), every=every)
    assert calls[0] == 0
    assert_same(a, want)


def test_settle_summary_equals_stream_summary():
    """The attempt tracker without text sums an embedded stream's chunks, finish and usage as stream_summary does,
    on every v2-v4 fixture's and a generated v4 log's streams, and on random hostile streams."""
    import random

    from app.log.fold.attempts import settle_summary
    from app.log.format.versions import stream_summary
    from fixtures_util import REPO
    streams = []
    for p in sorted((REPO.parent / "shared" / "fixtures" / "dsh-next").rglob("*.v[234].jsonl")):
        for ev in LogReader.open(str(p)).iter_events():
            if isinstance(ev.data, dict) and "stream" in ev.data:
                streams.append(ev.data["stream"])
    assert len(streams) > 20
    rng = random.Random(3)
    parts = [{"type": "chunk", "chunk": {"type": "finish", "reason": {"kind": "error"}}},
             {"type": "chunk", "chunk": {"type": "finish", "reason": "stop"}}, {"type": "chunk", "chunk": None},
             {"type": "chunk", "chunk": {"type": "usage", "usage": {"inputTokens": 3}}}, {"type": "chunk"},
             {"type": "text-chunks", "texts": ["a", "b"], "dt": [1]}, {"type": "tool-call-chunks", "args": ["x"]},
             {"type": "tool-call-chunks", "texts": ["x"]}, {"type": "reasoning-chunks", "texts": []},
             {"type": "text-chunks", "texts": "ab"}, {"type": ["chunk"]}, {"type": 7}, [], None, "chunk",
             {"type": "chunk", "chunk": {"type": "usage"}}, {"type": "other-chunks", "texts": ["a"]}]
    streams += [[rng.choice(parts) for _ in range(rng.randint(0, 6))] for _ in range(3000)] + [None, "x", {}]
    for s in streams:
        full = stream_summary(s)
        assert settle_summary(s) == (full["chunks"], full["finish"], full["usage"]), s


def test_lean_checks_equal_the_load_checks(tmp_path):
    """LeanChecks finds exactly EventChecks' problems (and refusals) on every fixture, a generated v0 log, and
    events citing seqs every way a hostile log can (ahead, repeated, not integers, ranges, empty, not a list)."""
    import msgspec

    from app.log.format.model import Event
    from app.log.index.integrity import EventChecks
    from app.log.query.ahead_lean import LeanChecks
    from test_ahead_pass import CASES
    p = tmp_path / "gen.jsonl"
    write_jsonl(str(p), SessionSynth(seed=29), target_bytes=300_000)
    events = [ev for f in [*CASES, p] for ev in LogReader.open(str(f)).iter_events()]
    cites = [[1, 2], [1, 9], [9], [3, 3], [1, True], [1.0], [[1, 2]], [], None, "x", {"a": 1}, [2 ** 70], [-1, 0],
             [0, 1, 2, 3, 4], [4, 3, 4]]
    for k, c in enumerate(cites * 3):
        events.append(Event(seq=9, type=["assistant/message", "request/header", "x/y"][k // len(cites)],
                            time=0, data={"header": {"config": {}}}, source_event_seqs=c))
    a, b = EventChecks(), LeanChecks()
    for ev in events:
        a.apply(ev)
        b.apply(ev)
    assert len(events) > 10_000 and len(a.problems) > 20
    assert msgspec.to_builtins(a.problems) == msgspec.to_builtins(b.problems)
    assert msgspec.to_builtins(a.refusing) == msgspec.to_builtins(b.refusing)


def test_pass_equals_separate_builds_on_hostile_and_mutated_v4(tmp_path):
    """v4 (embedded streams, the lean load checks and stream sums): hostile and mutated generated logs."""
    p = tmp_path / "session.v4.jsonl"
    write_jsonl(str(p), SessionSynth(seed=31, version=4, context_window=10_000), target_bytes=250_000)
    lines = p.read_bytes().split(b"\n")
    h = tmp_path / "hostile.v4.jsonl"
    h.write_bytes(hostile_session([ln for ln in lines if ln], seed=5))
    logs = [p, h]
    for name, data, _kept in jsonl_mutants(p.read_bytes(), seed=11, count=6):
        m = tmp_path / f"m-{name}.v4.jsonl"
        m.write_bytes(data)
        logs.append(m)
    for f in logs:
        assert_same(build_ahead(LogReader.open(str(f))), separate(LogReader.open(str(f))))
