"""Whole-log find on a long log (issue 29): a query of several pieces (cut at the joints the field text puts
between stored strings: spaces, colons, newlines…) decodes only the rows that hold EVERY piece, not every row
holding the longest one; the window's byte search goes on from the end of a row once a needle is found in it;
a caseless field's matches are counted without a match object each.  The hits stay those of a full decode."""
from __future__ import annotations

import json
import random

import pytest

from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, FindStats, build_prefilter, find
from app.log.query.find_match import FoldMatcher
from app.log.query.find_prefilter import FOLD
from app.log.query.textview import fold_case, fold_finditer
from app.log.source.sources import RawJsonlSource
from app.tools.synth import SessionSynth, write_jsonl
from tests.test_search import _naive


@pytest.fixture(scope="module")
def v4_log(tmp_path_factory):
    """A generated v4 log with compactions, then rows holding the pieces of "step by step" apart, together,
    across a key and its value (a tool call's arguments: the field text is ``key: value``), and in a case
    variant with a long s (ſ folds to s)."""
    d = tmp_path_factory.mktemp("pieces")
    p = d / "session.v4.jsonl"
    write_jsonl(str(p), SessionSynth(seed=29, version=4, context_window=24_000), target_bytes=1_500_000)
    last = max(e.seq for e in LogReader.open(str(p)).iter_events())
    rows = []
    for k, text in enumerate(["go STEP BY STEP now", "one step, then by the way", "ſtep by ſtep",
                              "by itself", "step alone"]):
        rows.append({"type": "user/message", "seq": last + 1 + k, "time": 1, "data": {
            "turn": 999, "id": f"u{k}", "role": "user", "source": {"kind": "user"},
            "content": [{"type": "text", "text": text}]}})
    rows.append({"type": "tool/call", "seq": last + 10, "time": 1, "data": {
        "turn": 999, "step": 1, "callId": "c1", "name": "plan", "arguments": json.dumps({"step": "by step"})}})
    with open(p, "ab") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    return str(p)


def _rows_holding(path: str, *pieces: bytes) -> int:
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")[1:]
    return sum(1 for ln in lines if all(pc in ln.translate(FOLD) for pc in pieces))


@pytest.mark.parametrize("opts", [FindOptions("step by step"), FindOptions("STEP BY STEP", case=True),
                                  FindOptions("step: by step"), FindOptions("by step", word=True),
                                  FindOptions("step by step", kinds=["tool-call"]), FindOptions('by "step')])
def test_a_query_of_several_pieces_decodes_only_rows_holding_every_piece(v4_log, opts):
    st = FindStats()
    r = LogReader(RawJsonlSource(v4_log, block=65536))
    got = [(h.seq, h.kind) for h in find(r, opts, stats=st)]
    assert st.complete
    assert got == _naive(LogReader.open(v4_log), opts)
    pieces = {fold_case(p).encode() for p in opts.text.replace(":", " ").split()}
    both = _rows_holding(v4_log, *pieces)
    turns = _rows_holding(v4_log, b'"turn/start"')          # (rows decoded for a hit's turn count too)
    assert st.rows_decoded <= both + turns, (st.rows_decoded, both, turns)
    # (the longest piece alone is in many more rows: on the old code every one of them was decoded)
    assert _rows_holding(v4_log, max(pieces, key=len)) > 2 * (both + turns)


def test_the_planted_variants_are_found(v4_log):
    texts = {h.snippet for h in find(LogReader.open(v4_log), FindOptions("step by step"))}
    assert any("STEP BY STEP" in t for t in texts) and any("ſtep by ſtep" in t for t in texts)
    hits = list(find(LogReader.open(v4_log), FindOptions("step: by step")))      # a key and its value
    assert [h.kind for h in hits] == ["tool-call"] and hits[0].call == "c1"


def test_piece_gates_are_the_other_pieces():
    pre = build_prefilter(FindOptions("step by step"))
    assert pre is not None and any(b"by" in g.needles for g in pre.also)
    pre = build_prefilter(FindOptions("alone"))
    assert pre is not None and pre.also == []
    assert build_prefilter(FindOptions("step.by", regex=True)).also == []


@pytest.mark.parametrize("seed", range(6))
def test_first_place_in_each_row_gives_the_same_rows(seed):
    """``positions(rows=True)``: the same rows as every place (one needle may be in a row many times)."""
    from app.log.query.find_rows import row_starts
    rnd = random.Random(seed)
    words = ["the", "Thé", "ſtep", "STEP", "\\u00e9t\\u00e9", "été", '\\"q\\"', "by", "—", '\\\\\\"step', '"Step']
    data = b"\n".join(" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 30))).encode()
                      for _ in range(400)) + b"\n"
    for q in ["the", "thé", "step", "été", '"q"', "by", "—", "Step", "é", '"step', 'q"']:
        for case in (False, True):
            pre = build_prefilter(FindOptions(q, case=case))
            if pre is None:
                continue
            for lim in (len(data), len(data) // 2):
                every = row_starts(data, pre.positions(data, lim), lim)
                first = pre.positions(data, lim, rows=True)
                assert row_starts(data, first, lim) == every, (q, case)
                assert len(first) <= len(pre.positions(data, lim))


@pytest.mark.parametrize("text", ["the cat The THE", "Maße und MASSE, masse", "ﬁle ﬁle file", "ıİi i", "",
                                  "no match here", "thethethe", "ſtep STEP step", "—the—"])
@pytest.mark.parametrize("needle", ["the", "masse", "file", "i", "step", "thet"])
def test_first_and_count_equal_the_match_iterator(text, needle):
    for word in (False, True):
        m = FoldMatcher(needle, word)
        every = list(fold_finditer(text, fold_case(needle), word))
        fm, n = m.first_and_count(text)
        assert n == len(every)
        assert (fm.span() if fm else None) == (every[0] if every else None)


@pytest.mark.parametrize("seed", range(4))
def test_a_gate_of_many_needles_checked_row_by_row_keeps_the_same_rows(seed, monkeypatch):
    """``find.gated``: a gate of many needles (a caseless piece with a quote: its fold variants at each level of
    escaping) is checked in each row; the rows kept are those a pass over the window per needle keeps."""
    from app.log.query import find as find_mod
    from app.log.query.find_rows import row_starts
    rnd = random.Random(seed)
    words = ['"step', '\\"STEP', "ſtep", "\\u017ftep", "step", "—", "by", '\\\\\\"step']
    data = b"\n".join(" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 12))).encode()
                      for _ in range(300)) + b"\n"
    pre = build_prefilter(FindOptions('by "step'))
    assert pre is not None and pre.also and len(pre.also[0].needles) + len(pre.also[0].esc) > find_mod.GATE_PASSES
    starts = row_starts(data, list(range(0, len(data), 7)), len(data))
    by_row = find_mod.gated(data, len(data), starts, pre.also[0])
    monkeypatch.setattr(find_mod, "GATE_PASSES", 10_000)
    assert find_mod.gated(data, len(data), starts, pre.also[0]) == by_row
    assert 0 < len(by_row) < len(starts)
