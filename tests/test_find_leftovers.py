"""Leftovers of issue 17: a case-insensitive search for a non-ASCII word keeps the byte prefilter
(raw UTF-8 and ``\\uXXXX``-escaped logs, every case variant ``re`` folds), a reasoning filter in the
view, and problems without a seq (a malformed row) that still jump to the nearest row."""
from __future__ import annotations

import json
import re

import pytest

from app.log.reader import LogReader
from app.log.search import FindOptions, FindStats, build_prefilter, find, find_all
from app.log.sources import RawJsonlSource
from app.tools.plant import PlantingSynth
from app.tools.synth import write_jsonl

WORD = "GRÜẞEÑANDÚ"          # capital sharp s: re folds it with ß, str.lower() does not reach it


@pytest.fixture(scope="module")
def nonascii_logs(tmp_path_factory):
    """One generated log with a non-ASCII word planted, stored raw (UTF-8, as dsh writes) and
    re-encoded by an ASCII-only writer (``\\u00dc``…)."""
    d = tmp_path_factory.mktemp("nonascii")
    s = PlantingSynth(seed=3, at_turn=4, plants={WORD: "user-nonascii", "pangolinreason": "reasoning"})
    raw = d / "raw.jsonl"
    write_jsonl(str(raw), s, turns=12)
    assert WORD.encode() in raw.read_bytes()
    esc = d / "escaped.jsonl"
    with open(raw, "rb") as f, open(esc, "wb") as out:
        for line in f:
            out.write(json.dumps(json.loads(line), ensure_ascii=True).encode() + b"\n")
    assert esc.read_bytes().isascii()
    return {"raw": str(raw), "escaped": str(esc), "seq": s.planted[WORD][0]}


@pytest.mark.parametrize("form", ["raw", "escaped"])
@pytest.mark.parametrize("query", ["grüßeñandú", "GRÜSSEÑANDÚ", "Grüßeñandú", "eÑanDú", "grüẞe"])
def test_caseless_nonascii_search_finds_every_case_variant_and_skips_segments(nonascii_logs, form, query):
    path, seq = nonascii_logs[form], nonascii_logs["seq"]
    want = re.compile(re.escape(query), re.IGNORECASE).search(WORD) is not None
    r = LogReader(RawJsonlSource(path, block=16384))
    st = FindStats()
    hits = list(find(r, FindOptions(query), stats=st))
    assert [h.seq for h in hits] == ([seq] if want else []), (query, form)
    assert st.complete
    # the prefilter held: almost every segment skipped unparsed, few rows decoded
    assert st.segments > 5 and st.segments_skipped >= st.segments - 3, (st.segments, st.segments_skipped)
    assert st.rows_decoded <= 20
    # the same answer as a search that decodes every row (no prefilter)
    ref = [(e.seq) for e in LogReader.open(path).iter_events()
           if e.type == "user/message" and want and re.search(re.escape(query), json.dumps(e.data, ensure_ascii=False),
                                                                re.IGNORECASE)]
    assert [h.seq for h in hits] == ref


def test_caseless_prefilter_needles_cover_the_folds():
    pre = build_prefilter(FindOptions("grüßeñandú"))
    assert pre is not None and pre.lower
    # every needle is a stretch of the word in one of its stored forms, ASCII-lowercased
    assert b"e\xc3\xb1and" in pre.needles and b"e\xc3\x91and" in pre.needles
    assert b"e\\u00f1and" in pre.needles and b"e\\u00d1and" in pre.needles
    sharp = build_prefilter(FindOptions("ßx"))          # ß and its capital ẞ (U+1E9E)
    assert sharp is not None and {"ß".encode() + b"x", "ẞ".encode() + b"x"} <= set(sharp.needles)
    cjk = build_prefilter(FindOptions("日本語"))          # no ASCII run at all: still a prefilter
    assert cjk is not None and "日本語".encode() in cjk.needles
    assert build_prefilter(FindOptions("zebraquokka")).needles == [b"zebraquokka"]   # ASCII: unchanged


def test_caseless_nonascii_cli_matches_core(nonascii_logs, capsys):
    from app.cli.main import main as cli
    assert cli(["find", nonascii_logs["escaped"], "grüßeñandú", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [h["seq"] for h in out["hits"]] == [nonascii_logs["seq"]]
    hits, _ = find_all(LogReader.open(nonascii_logs["raw"]), FindOptions("grüßeñandú", case=False))
    assert [h.seq for h in hits] == [nonascii_logs["seq"]]
