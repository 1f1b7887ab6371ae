"""The timeline's spans by column (issue 31, ``app/log/query/timeline_table.py``): what the cache saves gives back
the spans byte for byte (keys, order, value types) on fixtures, generated and hostile logs; a cache file of the
previous format (a list of dicts) is computed again, not read."""
from __future__ import annotations

import json
import os
import pickle
import zlib
from pathlib import Path

import msgspec
import pytest

from app.log.query.timeline import timeline

from app.log.query.timeline_summary import in_log_order
from app.log.query.timeline_table import NULL_INT, SpanTable
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

FIXTURE_LOGS = [FIXTURES / p for p in (
    "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl",
    "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl",
    "examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl",
    "examples/acp-agent/tests/snapshots/cancel-tool-calls/session.jsonl",
    "examples/acp-agent/tests/snapshots/subagent-mixed/session.jsonl",
    "examples/acp-agent/tests/snapshots/escalation-approved/session.jsonl",
    "apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl",
)] + sorted((FIXTURES.parent / "dsh-next").rglob("preview-*/session.v*.jsonl"))


def round_trip(spans: list) -> SpanTable:
    return SpanTable.unpack(msgspec.msgpack.decode(msgspec.msgpack.encode(SpanTable.of(spans).pack())))


def same(spans: list, t: SpanTable) -> None:
    """``t`` gives ``spans`` back: the JSON text of every span (keys, their order, value types), one span at a time
    and all at once, and every column."""
    assert len(t) == len(spans)
    assert [json.dumps(t[i]) for i in range(len(spans))] == [json.dumps(s) for s in spans]
    assert json.dumps(t.dicts()) == json.dumps(spans)
    for key in {k for s in spans for k in s}:
        assert json.dumps(t.column(key)) == json.dumps([s.get(key) for s in spans]), key
    for kind in ("turn", "tool", "subagent", "compaction", "attempt", "nope"):
        assert t.has_kind(kind) == any(s["kind"] == kind for s in spans)
        mine = [s for s in spans if s["kind"] == kind]
        keys = ("kind", "seq", "tokens", "model")
        for tab in (t, SpanTable.unpack(t.pack())):          # (its dicts built, and not)
            assert json.dumps(tab.of_kind(kind)) == json.dumps(mine)
            assert tab.of_kind(kind, keys) == [{k: v for k, v in s.items() if k in keys} for s in mine]
    assert json.dumps(pickle.loads(pickle.dumps(t)).dicts()) == json.dumps(spans)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("tltable")
    out = []
    for seed, version in ((21, 0), (22, 4)):
        p = d / f"v{version}.jsonl"
        write_jsonl(str(p), SessionSynth(seed, version=version, p_retry=0.2), target_bytes=600_000)
        out.append(p)
    return out


def test_the_table_gives_the_spans_back_on_fixtures_and_generated_logs(generated):
    shapes = set()
    for p in FIXTURE_LOGS + generated:
        spans = in_log_order(timeline(open_reader(str(p))))
        assert spans, p
        t = round_trip(spans)
        same(spans, t)
        shapes |= {tuple(s.keys) for s in t.shapes}
        codes = {c[0] for s in t.shapes for c in s.cols}
        assert {"c", "i", "v"} <= codes, p              # (kinds constant, seqs as integers, labels as they are)
    assert any("tokens" in s for s in shapes) and any("overlaps" in s for s in shapes)


def test_values_keep_their_types():
    """Integers stay integers (never floats or bools), bools and floats stay theirs, nulls stay nulls; objects
    with the same keys are a table of their own, others are kept as they are."""
    spans = [
        {"kind": "a", "seq": 1, "n": True, "f": 1.0, "big": (1 << 62) + 5, "lo": -(1 << 63), "o": {"x": 1, "y": None},
         "mix": 1, "l": [1, 2], "none": None, "s": "x"},
        {"kind": "a", "seq": 2, "n": 1, "f": 2, "big": None, "lo": None, "o": {"x": None, "y": 2.5},
         "mix": "1", "l": [], "none": None, "s": "x"},
        {"kind": "a", "seq": 3, "n": False, "f": None, "big": 7, "lo": 0, "o": {"y": 1, "x": 2},
         "mix": None, "l": None, "none": None, "s": "y"},
        {"kind": "b", "seq": NULL_INT + 1, "end": None},
        {"kind": "b", "seq": None, "end": 3},
        {"kind": "c"},
        {"kind": "d", "seq": 5, "o": {}, "p": {"k": {"z": 1}}},
        {"kind": "d", "seq": 6, "o": {}, "p": {"k": {"z": 1.5}}},
    ]
    same(spans, round_trip(spans))
    assert type(round_trip(spans).dicts()[1]["f"]) is int and type(round_trip(spans).dicts()[0]["n"]) is bool
    assert round_trip([]).dicts() == []


def test_a_damaged_table_is_refused():
    spans = [{"kind": "a", "seq": i} for i in range(5)] + [{"kind": "b"}]
    order, shapes = SpanTable.of(spans).pack()
    for bad in ([order[:-1], shapes], [order + b"\x05", shapes], [order, shapes[:1]], [order, [[["kind"], 5, []]]],
                [order, [[["kind", "seq"], 5, [["c", "a"], ["i", b"\x00" * 39]]], shapes[1]]],
                [order, [[["kind", "seq"], 5, [["c", "a"], ["v", [1, 2]]]], shapes[1]]],
                [order, [[["kind", "seq"], 5, [["c", "a"], ["d", ["x"], []]]], shapes[1]]],
                [order, [[["kind", "seq"], 5, [["c", "a"], ["q", []]]], shapes[1]]],
                [order, [[["kind", 3], 5, [["c", "a"], ["v", [1] * 5]]], shapes[1]]], "x", [order]):
        with pytest.raises(ValueError):
            SpanTable.unpack(bad)


def test_a_cache_file_of_the_previous_format_is_computed_again(tmp_path, monkeypatch):
    """The cache of main before the table (format 5: the spans as a list of dicts) is not read: the spans are
    computed again and saved in the new format."""
    from app.store.timeline_cache import cached_spans
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = FIXTURE_LOGS[2]
    spans, status = cached_spans(open_reader(str(p)))
    assert status == "built"
    (f,) = list(Path(os.environ["SESSION_LENS_CACHE_DIR"], "index").glob("*.timeline"))
    blob = f.read_bytes()
    m = len(b"SLTIM\x00\x06\n")
    assert blob[:m] == b"SLTIM\x00\x06\n"
    end = m + 4 + int.from_bytes(blob[m:m + 4], "little")
    head = msgspec.msgpack.decode(blob[m + 4:end])
    head[0] = 5
    hb = msgspec.msgpack.encode(head)
    old = b"SLTIM\x00\x05\n" + len(hb).to_bytes(4, "little") + hb + msgspec.msgpack.encode(spans.dicts())
    f.write_bytes(old + zlib.crc32(old).to_bytes(4, "little"))
    again, status = cached_spans(open_reader(str(p)))
    assert status == "built" and json.dumps(again.dicts()) == json.dumps(spans.dicts())
    assert f.read_bytes()[:m] == b"SLTIM\x00\x06\n"
    third, status = cached_spans(open_reader(str(p)))
    assert status == "hit" and json.dumps(list(third)) == json.dumps(spans.dicts())


def test_the_columns_in_c_are_their_definition():
    """``tl_columns`` (the row scanner's: each dict read once) gives what :func:`columns_py` gives: a column of
    integers and nulls as the bytes of :func:`encode_column`'s ``i`` column, any other as its values (bools,
    floats, strings, big integers, all nulls, lists); None for rows that are not dicts of exactly those keys."""
    from app.log.index.fastindex import load_rowscan_c
    from app.log.query.timeline_table import columns_py
    c = load_rowscan_c()
    if c is None or not hasattr(c, "tl_columns"):
        pytest.skip("row scanner not built")
    cases = [[1, 2, 3], [None, 5, None], [None, None], [True, 1], [1, 1.0], [1, "1"], [(1 << 62) - 1, -(1 << 62) + 1],
             [1 << 62], [-(1 << 62)], [1 << 70], [0], [], [-5, None, 7, 0], [NULL_INT], [[1], 2], [{"a": 1}, 1]]
    for vals in cases:
        rows = [{"k": v, "x": 0, "s": str(v)} for v in vals]
        want = columns_py(rows, ["k", "x", "s"])
        assert want is not None and c.tl_columns(rows, ["k", "x", "s"]) == want, vals
    for bad in ([{"k": 1}, {"j": 2}], [{"k": 1}, 5], [{"k": 1, "j": 2, "z": 3}], [{"j": 1, "k": 2}], [{"k": 1}]):
        assert c.tl_columns(bad, ["k", "j"]) is None and columns_py(bad, ["k", "j"]) is None, bad
    spans = in_log_order(timeline(open_reader(str(FIXTURE_LOGS[2]))))
    tools = [s for s in spans if s["kind"] == "tool"]
    keys = list(tools[0])
    same_keys = [s for s in tools if list(s) == keys]
    assert c.tl_columns(same_keys, keys) == columns_py(same_keys, keys)


def test_cli_json_streams_the_bytes_of_one_dump(tmp_path, monkeypatch, capsys):
    """``timeline --json`` written a batch of spans at a time (batches of 3 here; a log with no span at all too)
    is byte for byte one ``json.dumps`` of ``{"spans", "turns", "totals", "cache"}`` computed from the rows."""
    from app.cli import timeline_cmd
    from app.cli.main import main
    from app.cli.termtext import json_safe
    from app.log.query.timeline_summary import summarize
    from app.store.timeline_cache import load_prices
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setattr(timeline_cmd, "BATCH", 3)
    empty = tmp_path / "e" / "session.jsonl"
    empty.parent.mkdir()
    empty.write_bytes(FIXTURE_LOGS[2].read_bytes().split(b"\n")[0] + b"\n")
    for p in (FIXTURE_LOGS[2], FIXTURE_LOGS[6], empty):
        out = summarize(timeline(open_reader(str(p))), load_prices())
        for status in ("built", "hit"):
            assert main(["timeline", str(p), "--json"]) == 0
            got = capsys.readouterr().out
            want = {"spans": out["spans"], "turns": out["turns"], "totals": out["totals"], "cache": status}
            assert got == json_safe(json.dumps(want, ensure_ascii=False)) + "\n", (p, status)
    assert '"spans": []' in got


def test_the_summary_of_a_table_reads_columns(generated):
    """Turns and totals of a table are those of its spans as dicts, and reading them builds no span dict."""
    from app.log.query.timeline_summary import summarize
    prices = {"deepseek-*": {"input": 0.3, "output": 0.5, "cacheRead": 0.03}}
    for p in FIXTURE_LOGS[:3] + generated:
        spans = in_log_order(timeline(open_reader(str(p))))
        t = round_trip(spans)
        got = summarize(t, prices, ordered=True)
        assert t._dicts is None                                  # (no span made a dict)
        want = summarize(spans, prices, ordered=True)
        assert json.dumps([got["turns"], got["totals"]]) == json.dumps([want["turns"], want["totals"]]), p
        assert got["turns"] and want["totals"]["counts"]["attempt"]
