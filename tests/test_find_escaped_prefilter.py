"""Issue 27 item 7: characters JSON escapes (quote, backslash, tab) go through the byte
prefilter in their escaped forms (each level of escaping), so a query holding one keeps the
prefilter: a miss is skipped unparsed, and a hit is found as a full decode finds it."""
from __future__ import annotations

import json

import pytest

from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, FindStats, build_prefilter, find
from app.log.source.sources import RawJsonlSource
from app.tools.plant import PlantingSynth
from app.tools.synth import write_jsonl


@pytest.fixture(scope="module")
def quoted_log(tmp_path_factory):
    """A generated log with a quoted word in a user message (stored ``\\"x\\"``) and in a tool
    call's arguments (stored twice escaped), and a list in the arguments (its field text is
    compact JSON: its quotes are stored at the arguments' level)."""
    d = tmp_path_factory.mktemp("quoted")
    s = PlantingSynth(seed=5, at_turn=3, plants={"plainmarker": "user"})
    path = d / "q.jsonl"
    write_jsonl(str(path), s, turns=14)
    lines = path.read_bytes().splitlines()
    seq = json.loads(lines[-1])["seq"]
    extra = [
        {"type": "turn/start", "seq": seq + 1, "time": 1, "data": {"turn": 99}},
        {"type": "user/message", "seq": seq + 2, "time": 1,
         "data": {"turn": 99, "id": "u9", "role": "user", "source": {"kind": "user"},
                  "content": [{"type": "text", "text": 'please say "x" and C:\\tmp\\cassowary\tend'}]}},
        {"type": "tool/call", "seq": seq + 3, "time": 1,
         "data": {"turn": 99, "step": 1, "callId": "q1", "name": "grep",
                  "arguments": json.dumps({"pattern": 'echo "y"', "tags": ["emu", "kiwi"]})}},
    ]
    with open(path, "ab") as f:
        for e in extra:
            f.write(json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    return {"path": str(path), "user": seq + 2, "call": seq + 3}


def _find(path, opts):
    st = FindStats()
    hits = list(find(LogReader(RawJsonlSource(path, block=16384)), opts, stats=st))
    assert st.complete
    return [h.seq for h in hits], st


@pytest.mark.parametrize("case", [False, True])
@pytest.mark.parametrize("query,where", [
    ('say "x"', "user"), ('"x"', "user"), ('echo "y"', "call"), ('"y"', "call"),
    ('["emu"', "call"), ('"kiwi"]', "call"), ("C:\\tmp\\cassowary", "user"), ("cassowary\tend", "user"),
    ('say "q"', None), ('"zz"', None), ("C:\\nowhere", None), ('"emu"]', None)])
def test_escaped_characters_keep_the_prefilter_and_find_what_a_decode_finds(quoted_log, query, where, case):
    pre = build_prefilter(FindOptions(query, case=case))
    assert pre is not None
    seqs, st = _find(quoted_log["path"], FindOptions(query, case=case))
    assert seqs == ([quoted_log[where]] if where else []), query
    # the prefilter held: almost every segment skipped unparsed, few rows decoded
    assert st.segments > 5 and st.segments_skipped >= st.segments - 4, (query, st.segments, st.segments_skipped)
    assert st.rows_decoded <= 8, (query, st.rows_decoded)


@pytest.mark.parametrize("query", ['"x"', '"zz"', 'a"b', "\\qz", '"y"]'])
def test_a_query_of_short_pieces_between_escaped_characters_keeps_a_needle_holding_them(query):
    for case in (False, True):
        pre = build_prefilter(FindOptions(query, case=case))
        assert pre is not None, (query, case)
        assert all(b'"' in n or b"\\" in n for n in pre.needles), (query, case, pre.needles)


def test_quoted_queries_on_fixtures_equal_a_full_decode():
    """Real fixtures: a quoted query (its quotes stored escaped once, twice, or as the stored
    JSON's own) finds exactly what a full decode finds."""
    from tests.fixtures_util import session_files
    from tests.test_search import _naive
    qs = [FindOptions('"path"'), FindOptions('"path"', case=True), FindOptions('"command":'),
          FindOptions("\\n", case=True), FindOptions('"type"'), FindOptions('"'), FindOptions('\\"')]
    checked = 0
    for p in session_files()[:60]:
        r = LogReader.open(str(p))
        if r.fatal:
            continue
        for q in qs:
            assert [(h.seq, h.kind) for h in find(r, q)] == _naive(r, q), (p, q)
            checked += 1
    assert checked > 100
