"""The whole-log search reads a raw JSONL log into one reused buffer (``RawJsonlSource.pread_into``)
window by window: the hits are those of a search that decodes every row, whatever the window size
(rows cut by a window's end are read again with the next), a row of an ASCII-only writer (``\\uXXXX``
escapes) appended to a UTF-8 log is found, a row over the row limit is one problem and memory stays
bounded, and a log that shrinks under the search is reported."""
from __future__ import annotations

import json

import pytest

import app.log.query.find_rows as find_rows
import app.log.source.sources as sources
from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, FindStats, compile_matcher, find, find_all
from app.log.source.sources import RawJsonlSource, SourceChanged
from app.log.query.textview import event_fields
from app.tools.plant import PlantingSynth
from app.tools.synth import write_jsonl

WORDS = {"Grüßeñandú": "user-nonascii", "zebraquokka": "tool-output-line-700", "pangolinreason": "reasoning"}


def _row(seq, text, ascii_only):
    ev = {"seq": seq, "time": 1700000000000 + seq, "type": "user/message",
          "data": {"id": f"m{seq}", "source": {"kind": "user"}, "content": [{"type": "text", "text": text}]}}
    return json.dumps(ev, ensure_ascii=ascii_only, separators=(",", ":")).encode()


@pytest.fixture(scope="module")
def mixed_log(tmp_path_factory):
    """A generated UTF-8 log (words planted), then rows of an ASCII-only writer appended (the
    non-ASCII word escaped), then UTF-8 rows again."""
    d = tmp_path_factory.mktemp("bytes")
    s = PlantingSynth(seed=5, at_turn=3, plants=WORDS)
    p = d / "session.jsonl"
    write_jsonl(str(p), s, turns=10)
    assert set(s.planted) == set(WORDS)
    last = max(e.seq for e in LogReader.open(str(p)).iter_events())
    extra = [_row(last + 1, "noch einmal: GRÜSSEÑANDÚ, bitte", True),
             _row(last + 2, "plain ASCII row " * 20, True),
             _row(last + 3, "wieder roh: grüßeñandú und zebraQUOKKA", False)]
    with open(p, "ab") as f:
        f.write(b"\n".join(extra) + b"\n")
    assert b"GR\\u00dcSSE\\u00d1AND\\u00da" in p.read_bytes()
    return {"path": str(p), "planted": dict(s.planted), "appended": [last + 1, last + 3]}


def _decode_all(path, opts):
    """(seq, kind) of every field matching ``opts``: every event decoded, no prefilter."""
    m = compile_matcher(opts)
    return [(e.seq, f.kind) for e in LogReader.open(path).iter_events() for f in event_fields(e)
            if m.search(f.text)]


QUERIES = [FindOptions("grüßeñandú"), FindOptions("GRÜSSEÑANDÚ"), FindOptions("Grüßeñandú", case=True),
           FindOptions("zebraquokka"), FindOptions("zebraquokka", case=True), FindOptions("pangolinreason"),
           FindOptions("wordnotinthelog"), FindOptions("Ñ"), FindOptions("ú"), FindOptions("Ú", case=True)]


@pytest.mark.parametrize("block", [4096, 5003, 65536, 1 << 20])
def test_windows_of_any_size_find_what_a_full_decode_finds(mixed_log, block):
    path = mixed_log["path"]
    for q in QUERIES:
        st = FindStats()
        got = [(h.seq, h.kind) for h in find(LogReader(RawJsonlSource(path, block=block)), q, stats=st)]
        assert st.complete and got == _decode_all(path, q), (q, block)
    # the appended rows: the ASCII-only writer's (escaped) and the UTF-8 one after it
    seqs = [h.seq for h, in zip(find(LogReader(RawJsonlSource(path, block=block)), FindOptions("grüssEñandú")))]
    assert seqs == [mixed_log["planted"]["Grüßeñandú"][0]] + mixed_log["appended"]


def test_a_row_over_the_row_limit_is_one_problem_and_reads_stay_bounded(tmp_path, monkeypatch):
    limit = 64 << 10
    monkeypatch.setattr(find_rows, "MAX_ROW_BYTES", limit)
    monkeypatch.setattr(sources, "MAX_ROW_BYTES", limit)
    rows = [_row(1, "vorher zebraquokka", False), _row(2, "riesig zebraquokka " * 20000, False),
            _row(3, "nachher zebraquokka und grüßeñandú", False)]
    assert len(rows[1]) > 4 * limit
    p = tmp_path / "session.jsonl"
    header = json.dumps({"type": "session/header", "version": 0}).encode()
    p.write_bytes(header + b"\n" + b"\n".join(rows) + b"\n")
    src = RawJsonlSource(str(p), block=4096)
    asked = []
    real = src.pread
    monkeypatch.setattr(src, "pread", lambda n, at: asked.append(n) or real(n, at))
    st = FindStats()
    hits = list(find(LogReader(src), FindOptions("zebraquokka"), stats=st))
    assert [h.seq for h in hits] == [1, 3] and st.complete
    big_at = len(header) + 1 + len(rows[0]) + 1
    assert [(x.code, x.offset) for x in st.problems] == [("over-limit", big_at)]
    assert max(asked) <= limit + 1                  # never the whole long row in memory
    hits, st = find_all(LogReader(RawJsonlSource(str(p), block=4096)), FindOptions("grüßeñandú"))
    assert [h.seq for h in hits] == [3]


def test_a_log_that_shrinks_under_the_search_is_reported(mixed_log, tmp_path):
    p = tmp_path / "session.jsonl"
    data = open(mixed_log["path"], "rb").read()
    p.write_bytes(data)
    r = LogReader(RawJsonlSource(str(p), block=4096))
    it = find(r, FindOptions("wordnotinthelog"))
    with open(p, "r+b") as f:
        f.truncate(len(data) // 3)
    with pytest.raises(SourceChanged):
        list(it)


@pytest.mark.parametrize("query", ["Ñ", "ñ", "Ú"])
def test_a_one_character_nonascii_query_keeps_the_byte_prefilter(mixed_log, query):
    """A caseless query of one non-ASCII character (the find bar's first keystroke): two bytes,
    but a rare lead byte; the prefilter holds (before: every row of the log decoded)."""
    path = mixed_log["path"]
    st = FindStats()
    got = [(h.seq, h.kind) for h in find(LogReader(RawJsonlSource(path, block=16384)), FindOptions(query), stats=st)]
    assert st.complete and got == _decode_all(path, FindOptions(query))
    assert mixed_log["appended"][0] in [s for s, _k in got]         # (the ASCII-only writer's escaped row)
    assert st.segments > 5 and st.segments_skipped >= st.segments // 2, (st.segments, st.segments_skipped)
    assert st.rows_decoded < 40


def _expected_turns(path, opts):
    """(seq, turn) of every matching field, the turn tracked over every decoded event."""
    from app.log.query.textview import event_turn
    m = compile_matcher(opts)
    out, cur = [], None
    for e in LogReader.open(path).iter_events():
        if e.type == "turn/start" and event_turn(e) is not None:
            cur = event_turn(e)
        for f in event_fields(e):
            if m.search(f.text):
                t = event_turn(e)
                out.append((e.seq, t if t is not None else cur))
    return out


def test_the_turn_of_a_hit_after_many_skipped_windows_and_decoy_turn_starts(tmp_path):
    """A skipped window's turn is found only when a later hit asks (the window read again);
    decoys (the text "turn/start" in a message, quoted or not) never stand for a turn."""
    s = PlantingSynth(seed=9, at_turn=2, plants={"zebraquokka": "tool-output-line-700"})
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), s, turns=8)
    last = max(e.seq for e in LogReader.open(str(p)).iter_events())
    decoys = [_row(last + 1 + i, f'log line {i}: "turn/start" seen, then turn/start again ' * 40, i % 2 == 0)
              for i in range(40)]
    tail = [_row(last + 41, "after the decoys: zebraquokka", False)]
    with open(p, "ab") as f:
        f.write(b"\n".join(decoys + tail) + b"\n")
    want = _expected_turns(str(p), FindOptions("zebraquokka"))
    assert len(want) == 2 and want[0][1] is not None and want[1][1] == max(t for _s, t in want)
    for block in (4096, 5003, 1 << 20):
        st = FindStats()
        got = [(h.seq, h.turn) for h in find(LogReader(RawJsonlSource(str(p), block=block)),
                                             FindOptions("zebraquokka"), stats=st)]
        assert got == want, block
        assert st.complete and (block > 5003 or st.segments_skipped > 20)
