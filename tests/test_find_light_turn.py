"""Whole-log find on a long log (issue 29): the turn a hit belongs to, read from a ``turn/start`` row the light way
(``find_light.light_turn``: a struct of its seq and turn only) instead of the codec's whole event, where the codec
reads it alike; any other row, or one the light way refuses, is decoded by the codec as before."""
from __future__ import annotations

import json
import re

import pytest

from app.log.format.codec import RowCodec
from app.log.format.model import Event
from app.log.query import find_rows, find_turns
from app.log.query.find import FindOptions
from app.log.query.find_light import NO_TURN, light_turn
from app.log.query.find_match import FindStats
from app.log.query.textview import event_turn
from app.tools.synth import SessionSynth, write_jsonl
from tests.test_find_text_fast import _open, same_both_ways

OK = b'{"type":"turn/start","seq":5,"time":1,"data":{"turn":3,"id":"t"}}'
PLAIN = b'{"type":"turn/start","seq":5,"time":1,"data":{"turn":3}}'


def _codec_turn(raw: bytes, version: int = 4):
    items, _ = RowCodec("s", version=version).decode_row(raw)
    for it in items:
        if type(it) is Event and it.type == "turn/start" and event_turn(it) is not None:
            return event_turn(it)
    return None


def _variants() -> list[bytes]:
    obj = json.loads(OK)
    out = [OK, OK.replace(b"turn/start", b"turn/end"), OK.replace(b'"seq":5', b'"seq":-5'),
           OK.replace(b'"seq":5', b'"seq":"5"'), OK.replace(b'"seq":5,', b""), OK.replace(b'"turn":3', b'"turn":-3'),
           OK.replace(b'"turn":3', b'"turn":3.0'), OK.replace(b'"turn":3', b'"turn":1e999'),
           OK.replace(b'"turn":3', b'"turn":99999999999999999999'), OK.replace(b'"turn":3', b'"turn":true'),
           OK.replace(b'"turn":3,', b""), OK.replace(b'"data":{', b'"data":{"turn":9,'),
           OK.replace(b'"type":', b'"\\u0074ype":'), OK.replace(b'"t"}', b'"\xff"}'), b"[" * 300 + OK + b"]" * 300,
           OK.replace(b'"type":"turn/start"', b'"type":"turn/start","type":"user/message"'),
           OK.replace(b'"type":"turn/start"', b'"type":"user/message","type":"turn/start"'),
           OK.replace(b'{"turn":3,"id":"t"}', b'"x"'), OK.replace(b'{"turn":3,"id":"t"}', b"[3]"), OK[:-1]]
    for bad in (3.5, "3", [3], {"a": 3}, None, 7):
        out.append(json.dumps({**obj, "data": {**obj["data"], "turn": bad}}).encode())
    # the plain shape find_rows reads with no decode (_PLAIN_TURN), and its near misses
    out += [PLAIN, PLAIN.replace(b'"turn":3', b'"turn":0'), PLAIN.replace(b'"seq":5', b'"seq":0'),
            PLAIN.replace(b'"seq":5', b'"seq":9007199254740991'), PLAIN.replace(b'"seq":5', b'"seq":9007199254740992'),
            PLAIN.replace(b'"seq":5', b'"seq":05'), PLAIN.replace(b'"turn":3', b'"turn":03'),
            PLAIN.replace(b'"turn":3', b'"turn":9999999999999999'), PLAIN.replace(b'"turn":3', b'"turn":-3'),
            PLAIN.replace(b'"time":1', b'"time":1.5'), PLAIN.replace(b'"time":1', b'"time":01'),
            PLAIN.replace(b'"time":1', b'"time":0'), PLAIN + b" ", PLAIN.replace(b":3}", b":3 }"),
            PLAIN.replace(b'"seq":5,"time":1', b'"time":1,"seq":5'), PLAIN.replace(b"}}", b"}}}"),
            PLAIN.replace(b'"time":1,', b""), PLAIN.replace(b"turn/start", b"turn/starts")]
    return out


@pytest.mark.parametrize("raw", _variants())
def test_the_light_turn_is_the_codecs_or_left_to_it(raw):
    t = light_turn(raw)
    if t is not NO_TURN:
        assert t == _codec_turn(raw), raw
    st = FindStats()
    assert find_rows.turn_of_row(RowCodec("s", version=4), raw, st) == _codec_turn(raw)
    assert st.rows_decoded == 1


def test_a_plain_turn_row_is_read_with_no_decode(monkeypatch):
    monkeypatch.setattr(find_rows, "light_turn", lambda *a: -1)
    assert find_rows.turn_of_row(RowCodec("s", version=4), PLAIN, FindStats()) == 3 == _codec_turn(PLAIN)
    assert find_rows.turn_of_row(RowCodec("s", version=4), PLAIN.replace(b":3}", b":3 }"), FindStats()) == -1


def test_the_light_turn_reads_the_plain_row_and_not_a_legacy_one(monkeypatch):
    assert light_turn(OK) == 3
    assert light_turn(b'{"type":"user/message","seq":5,"data":{"turn":3}}') is NO_TURN
    # a v0/v1 log: always the codec (its rows' shapes are converted)
    monkeypatch.setattr(find_rows, "light_turn", lambda *a: -1)
    assert find_rows.turn_of_row(RowCodec("s", version=0), OK, FindStats()) == 3
    assert find_rows.turn_of_row(RowCodec("s", version=4), OK, FindStats()) == -1


def test_a_wrong_light_turn_is_caught_by_the_comparison(tmp_path, monkeypatch):
    """Generic rows (no turn of their own) take the turn of the last turn/start: a light turn one off is caught."""
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=4, version=4), target_bytes=300_000)
    make = lambda: _open(str(p))                                  # noqa: E731
    q = FindOptions("e", kinds=["event"])
    assert same_both_ways(make, q) > 0
    monkeypatch.setattr(find_rows, "light_turn", lambda *a: 10_000)
    monkeypatch.setattr(find_rows, "_PLAIN_TURN", re.compile(b"(?!)"))    # (the plain rows the light way too)
    monkeypatch.setattr(find_turns, "ENABLED", False)                      # (and not read from find6's list)
    with pytest.raises(AssertionError):
        same_both_ways(make, q)


def _turns_by_reading(reader, opts):
    """(seq, kind, turn) of every hit by a full read: the event's own turn, else the last turn/start's."""
    from app.log.query.find import compile_matcher, find_all
    from app.log.query.textview import shown_fields
    m = compile_matcher(opts)
    cur, want = None, {}
    for ev in reader.iter_events():
        if ev.type == "turn/start" and event_turn(ev) is not None:
            cur = event_turn(ev)
        for sh in shown_fields(ev):
            if (opts.kinds is None or sh.field.kind in opts.kinds) and m.search(sh.field.text):
                t = event_turn(ev)
                want[(ev.seq, sh.field.kind)] = cur if t is None else t
    return want, find_all


@pytest.mark.parametrize("block", [4096, 1 << 20])
def test_every_hit_has_the_turn_a_full_read_gives(tmp_path, monkeypatch, block):
    """The turn of each hit (its own, else the last turn/start before it, across windows, skipped windows and
    rows asked far apart) is the one a full read of the log tracks, on a v4 and a v0 log, common and rare words
    and generic rows (which name no turn)."""
    from app.log.index.reader import LogReader
    from app.log.source.sources import RawJsonlSource
    monkeypatch.setattr(RawJsonlSource, "block", block)
    checked = generic = 0
    for seed, version in ((11, 4), (12, 0)):
        p = tmp_path / f"g{seed}.jsonl"
        write_jsonl(str(p), SessionSynth(seed=seed, version=version, context_window=12_000), target_bytes=600_000)
        for q in (FindOptions("the"), FindOptions("summarize"), FindOptions("e", kinds=["event"]),
                  FindOptions("error")):
            want, find_all = _turns_by_reading(LogReader.open(str(p)), q)
            hits, _st = find_all(LogReader.open(str(p)), q)
            got = {(h.seq, h.kind): h.turn for h in hits}
            assert all(want[k] == t for k, t in got.items()), q
            checked += sum(t is not None for t in got.values())
            generic += sum(k == "event" for _s, k in got)
    assert checked > 200 and generic > 20, (checked, generic)


@pytest.mark.parametrize("seed", range(3))
def test_the_last_turn_found_forwards_is_the_one_found_backwards(monkeypatch, seed):
    """find_rows.last_turn_in: the turn/start rows found forwards in C (rows_any) give what rfind gives, at every
    stop and end (rows naming no turn, a turn/start in another row's text, cut rows, blank rows)."""
    import random
    from app.log.query.find_rows import Win
    rnd = random.Random(seed)
    rows = [PLAIN, OK, PLAIN.replace(b":3}", b":%d}" % 7), b'{"type":"turn/start","seq":9,"data":{}}',
            b'{"type":"user/message","seq":2,"data":{"content":"a \\"turn/start\\" b"}}', b"", b'"turn/start"',
            b'{"type":"turn/start","seq":4,"time":0,"data":{"turn":11}}', b"x" * 50]
    data = b"\n".join(rnd.choice(rows) for _ in range(300)) + b"\n"
    seg = Win(0, data, len(data), False)
    codec = RowCodec("s", version=4)
    cuts = sorted(rnd.sample(range(len(data) + 1), 40)) + [0, len(data)]
    for stop in cuts:
        for end in cuts:
            if end < stop:
                continue
            monkeypatch.setattr(find_rows, "FORWARD_FROM", 1 << 60)
            b, sb = find_rows.last_turn_in(codec, seg, end, (s2 := FindStats()), stop), s2.rows_decoded
            for step in (0, 13, 37, 500):                 # (stretches shorter than a row, than the type, longer)
                monkeypatch.setattr(find_rows, "FORWARD_FROM", step)
                a, sa = find_rows.last_turn_in(codec, seg, end, (s1 := FindStats()), stop), s1.rows_decoded
                assert (a, sa) == (b, sb), (stop, end, step)
