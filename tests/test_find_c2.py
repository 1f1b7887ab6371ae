"""rowscan_c.find_hits (the findc2 section: whole-log find's hits of a window's candidate rows made in C) gives what
its definition, app/log/query/find_c2.find_hits_py (text_hits_py's answer made into hits), gives: the same hits
(every attribute) and rows left to the caller in the same order, the same rows read and flags; on every fixture,
generated, hostile and edited logs (an assistant message's stream, which the C checks without storing, broken in
each way ft_value refuses), both modes, torn or not.  And find's hits through it are the exact way's for ASCII,
non-ASCII, quoted and caseless queries (the Kelvin sign, the long s, the Turkish i's)."""
from __future__ import annotations

import json
import random

import pytest

from app.log.query import find_c2
from app.log.query.find import FindOptions
from app.log.query.find_c2 import C2_KINDS, find_hits_py
from app.log.query.find_fast import READ_T, LazyHit
from app.log.query.textrow import text_row_c
from app.tools.hostile import hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES, session_files
from tests.test_find_text_fast import _open, same_both_ways

C = find_c2.FIND_HITS if text_row_c() is not None else None    # (text_row_c: the C's types set up, as find has)
pytestmark = pytest.mark.skipif(C is None, reason="the row scanner in C is not built")
NEEDLES = [(0, "the"), (0, "e"), (0, '"p'), (0, '"tests'), (0, "summarize"), (0, "call"), (1, "\u2014"),
           (1, "The"), (1, "\u00e9"), (1, "\u2014 the"), (0, "\\"), (1, '"')]
FR, SRC, BASE = object(), object(), 1 << 20


def _starts(data: bytes) -> list[int]:
    out, s = [], 0
    while s < len(data):
        out.append(s)
        e = data.find(b"\n", s)
        if e < 0:
            break
        s = e + 1
    return out


def _plain(items: list) -> list:
    return [it if type(it) is int else (type(it), it.__dict__) for it in items]


def same(data: bytes, rng: random.Random, needles=NEEDLES) -> int:
    starts = _starts(data)
    hits = 0
    for mode, needle in needles:
        for torn in (False, True):
            some = sorted(rng.sample(starts, len(starts) // 2)) if torn else starts
            args = (data, some, len(data), torn, 1 << 25, READ_T, needle.encode(), mode, C2_KINDS,
                    (LazyHit, FR, SRC, BASE))
            got, want = C(*args), find_hits_py(*args)
            g, w = _plain(got[0]), _plain(want[0])
            assert (g, got[1:]) == (w, want[1:]), \
                (needle, mode, torn, got[1:], want[1:], next(((a, b) for a, b in zip(g, w) if a != b), None))
            hits += sum(1 for it in got[0] if type(it) is not int)
        # places in rows (the prefilter's), several a row, a newline's own, none past the end: the rows found as
        # row_starts finds them
        places = sorted(rng.sample(range(len(data)), min(len(data), 3 * len(starts))))
        args = (data, places, len(data), False, 1 << 25, READ_T, needle.encode(), mode, C2_KINDS,
                (LazyHit, FR, SRC, BASE), True)
        got, want = C(*args), find_hits_py(*args)
        assert (_plain(got[0]), got[1:]) == (_plain(want[0]), want[1:]), (needle, mode, "places")
    return hits


def test_find_hits_in_c_are_its_definition_on_the_fixtures():
    rng = random.Random(1)
    hits = 0
    for p in session_files(FIXTURES) + session_files(FIXTURES.parent / "dsh-next"):
        if p.suffix == ".jsonl":
            hits += same(p.read_bytes(), rng)
    assert hits > 1000, hits


def _stream_edits(line: str) -> list[str]:
    """An assistant message's row with its stream (or another key the C checks without storing) broken in each way
    ft_value refuses, or holding what it accepts."""
    if '"assistant/message"' not in line or '"stream":[' not in line:
        return []
    at = line.index('"stream":[') + len('"stream":[')
    bad = ['1,', '01,', '1.,', '-,', '1e,', '"\x01",', '"\\x",', '"\\ud800",', '"\\udc00x",', 'tru,', 'nul,',
           '[' * 70 + ']' * 70 + ',', '{"a" 1},', '{"a":1,},', '[1,],', '1e999,', '9' * 301 + ',', '"\xff",']
    good = ['[' * 60 + ']' * 60 + ',', '1e300,', '-0.5e-3,', '"\\u00e9 the \\ud83d\\ude00",', '{"a":{"a":[]}},',
            '9' * 300 + ',', ' \t\n1 ,', 'true,false,null,']
    out = [line[:at] + x + line[at:] for x in bad + good]
    out.append(line.replace('"stream":[', '"stream":{"the":[', 1).replace(']}}', ']}}}', 1))
    out.append(line.replace('"data":{', '"data":{"usage":{"the":1},', 1))
    out.append(line.replace('"data":{', '"data":{"stream":[],', 1))                 # a key given twice
    out.append(line.replace('{"type":', '{"provenance":[1,2,{"x":"the"}],"type":', 1))
    out.append(line[:-1] + ',"more":[1,2,"\\u0041"]}')
    return out


def test_find_hits_in_c_are_its_definition_on_generated_hostile_and_edited_logs(tmp_path):
    rng = random.Random(2)
    g = tmp_path / "g.jsonl"
    write_jsonl(str(g), SessionSynth(seed=11, version=4), target_bytes=300_000)
    data = g.read_bytes()
    hits = same(data, rng)
    lines = [ln for ln in data.decode().split("\n") if ln.strip()]
    hits += same(hostile_session(lines, seed=3), rng)
    for _, m, _ in jsonl_mutants(data, seed=4, count=6):
        hits += same(m, rng)
    # characters some of whose case forms hold ASCII (the row is left to the caller), control characters, a torn
    # last row, an escaped type, a row over the size given, a stream broken or odd
    streams = [e for ln in lines[200:320] for e in _stream_edits(ln)]
    assert len(streams) > 300, len(streams)
    edited = [ln.replace("the", "\u017fhe").replace("call", "ca\\u0000ll") for ln in lines[:100]] + \
        [ln.replace("the", "th\u212ae \u0130 \u0131 \u00df \ufb01").replace("e", "\\u00e9") for ln in lines[100:160]] + \
        [ln.replace('"type":', '"\\u0074ype":', 1) for ln in lines[160:200]] + streams + lines[320:-1]
    hits += same(("\n".join(edited) + "\n" + lines[-1][:50]).encode(), rng)
    big = ("\n".join(lines[:50]) + "\n").encode()
    starts = _starts(big)
    args = (big, starts, len(big), False, 200, READ_T, b"the", 0, C2_KINDS, (LazyHit, FR, SRC, 0))
    assert _plain(C(*args)[0]) == _plain(find_hits_py(*args)[0]) and all(type(it) is int for it in C(*args)[0])
    assert hits > 1000, hits


def test_a_row_of_more_hits_than_the_c_holds_is_the_callers(tmp_path):
    block = {"type": "tool-call", "id": "c", "name": "the", "arguments": {}}
    row = {"type": "assistant/message", "seq": 3, "time": 1, "data": {"turn": 1, "message": {
        "role": "assistant", "content": [{"type": "text", "text": "the"}] + [block] * (find_c2.MAX_HITS + 1)}}}
    data = (json.dumps(row, separators=(",", ":")) + "\n").encode()
    for n in (find_c2.MAX_HITS - 1, find_c2.MAX_HITS, find_c2.MAX_HITS + 1):
        row["data"]["message"]["content"] = [{"type": "text", "text": "the"}] + [block] * n
        data = (json.dumps(row, separators=(",", ":")) + "\n").encode()
        args = (data, [0], len(data), False, 1 << 25, READ_T, b"the", 0, C2_KINDS, (LazyHit, FR, SRC, 0))
        got, want = C(*args), find_hits_py(*args)
        assert (_plain(got[0]), got[1:]) == (_plain(want[0]), want[1:])
        assert (got[0] == [0]) == (n + 1 > find_c2.MAX_HITS)


def test_a_bad_needle_or_make_is_refused():
    data = b'{"type":"user/message","seq":1,"time":1,"data":{"content":"the"}}\n'
    ok = (data, [0], len(data), False, 1 << 25, READ_T, b"the", 0, C2_KINDS, (LazyHit, FR, SRC, 0))
    assert len(C(*ok)[0]) == 1
    for k, bad in ((6, b"The"), (6, b""), (6, "\u00e9".encode()), (7, 2), (8, ("a",)), (9, (LazyHit, FR, SRC)),
                   (9, (type, FR, SRC, 0)), (9, (int, FR, SRC, 0))):
        args = list(ok)
        args[k] = bad
        with pytest.raises(ValueError):
            C(*args)


# find's hits through find_hits are the exact way's (tests/test_find_text_fast.py: hits, snippets, stats)
QUERIES = [FindOptions("the"), FindOptions("\u2014"), FindOptions('"tests'), FindOptions('"p'), FindOptions("k"),
           FindOptions("s"), FindOptions("i"), FindOptions("\u0130"), FindOptions("\u212a"), FindOptions("\u00e9"),
           FindOptions("THE", case=True), FindOptions("\u2014 the"), FindOptions("t\\\\"), FindOptions("a\\")]


def test_find_through_find_hits_is_the_exact_way(tmp_path):
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=21, version=4), target_bytes=200_000)
    head, *rows = p.read_text().split("\n")
    rows = [r for r in rows if r]
    edited = [r.replace("the", "th\u212ae", 1).replace("s", "\u017f", 1) for r in rows[:40]] + \
        [r.replace("file", "fi\u0130le \u0131 t\\\\ a\\\\").replace("e", "\\u00e9", 2) for r in rows[40:80]] + \
        [e for r in rows[80:200] for e in _stream_edits(r)] + rows[200:]
    q = tmp_path / "e.jsonl"
    q.write_text("\n".join([head] + edited) + "\n")
    fast = 0
    for opts in QUERIES:
        fast += same_both_ways(lambda: _open(str(q)), opts)
    assert fast > 1000, fast


def test_the_comparison_catches_a_planted_difference(tmp_path, monkeypatch):
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=4, version=4), target_bytes=300_000)
    make = lambda: _open(str(p))                                  # noqa: E731
    assert same_both_ways(make, FindOptions("the")) > 20
    real = find_c2.find_hits_of

    def planted(change):
        def f(*a, **kw):
            items, read, flags = real(*a, **kw)
            return change(items), read, flags
        monkeypatch.setattr(find_c2, "find_hits_of", f)
        monkeypatch.setattr("app.log.query.find.find_hits_of", f)
        with pytest.raises(AssertionError):
            same_both_ways(make, FindOptions("the"))
        monkeypatch.undo()

    planted(lambda items: items[:-1])                              # a window's last hit lost

    def turn_off(items):
        for it in items:
            if type(it) is not int:
                it.turn = 999 if it.turn is None else it.turn + 1
        return items
    planted(turn_off)                                              # another turn

    def next_hit(items):
        for it in items:
            if type(it) is not int:
                s = it.__dict__["_source"]
                it.__dict__["_source"] = s[:4] + (s[4] + 1,)
        return items
    planted(next_hit)                                              # another hit's snippet


def test_a_limited_find_through_find_hits_stops_where_the_exact_way_does(tmp_path, monkeypatch):
    """find(limit=n): the hits made in C are handed on one by one (no batch), the n-th the last, as the exact way's."""
    import dataclasses

    from app.log.query import find_fast, find_match
    from app.log.query.find import find
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=8, version=4), target_bytes=200_000)
    seen = 0
    for q in ("the", "\u2014", '"p'):
        for n in (1, 7, 100):
            got = {}
            for fast in (True, False):
                monkeypatch.setattr(find_fast, "ENABLED", fast)
                monkeypatch.setattr(find_match, "FAST", fast)
                r = _open(str(p))
                got[fast] = [dataclasses.astuple(h) for h in find(r, FindOptions(q), limit=n)]
                r.close()
            assert got[True] == got[False] and len(got[True]) <= n, (q, n)
            seen += len(got[True])
    assert seen > 40, seen


def test_a_row_of_a_type_showing_no_text_is_read_by_its_type_alone(tmp_path, monkeypatch):
    """find_fast.quiet_type: a request/header (or another type showing no text) holding the word has no hit, its
    type read without a decode; the same row whose last ``type`` key (plain or escaped) says otherwise, or that
    msgspec does not read, takes the exact way: both ways give the same hits."""
    from app.log.query import find_fast
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=12, version=4), target_bytes=150_000)
    head, *rows = [r for r in p.read_text().split("\n") if r]
    quiet = [r for r in rows if r.startswith('{"type":"request/header"') and "the" in r]
    assert quiet
    q = quiet[0]
    edited = [q, q[:-1] + ',"type":"user/message"}', q[:-1] + ',"typ\\u0065":"user/message"}',
              q.replace('"data":{', '"data":{"content":"the word",', 1)[:-1] + ',"type":"user/message"}',
              q[:-1] + ',"x":1e999}', q[:-1] + ',"x":"\\ud800"}', q.replace("the", "th\\u0065")]
    f = tmp_path / "e.jsonl"
    f.write_text("\n".join([head] + edited + rows[:50]) + "\n")
    assert same_both_ways(lambda: _open(str(f)), FindOptions("the")) > 10
    assert find_fast.quiet_type(q.encode()) and not find_fast.quiet_type(edited[1].encode())
    assert not find_fast.quiet_type(edited[2].encode()) and not find_fast.quiet_type(edited[5].encode())
    decoded = []
    real = find_fast.light_event
    monkeypatch.setattr(find_fast, "light_event", lambda raw, *a: decoded.append(raw) or real(raw, *a))
    same_both_ways(lambda: _open(str(f)), FindOptions("the"))
    assert q.encode() not in decoded and edited[3].encode() in decoded


def test_a_needle_at_every_place_of_a_16_byte_step_of_a_field():
    """The field's needle (mode 1: f2_memmem, first and last bytes 16 places a step) at each place of a field, with
    its first and last bytes planted apart around it: the definition's places and counts."""
    rows = []
    for at in range(0, 40):
        for filler in ("x", "\u2014", "e\u00e9"):
            text = (filler * 30)[:at] + "\u2014\u00e9" + "\u2014 \u00e9" * (at % 3) + "tail \u00e9\u2014\u00e9"
            rows.append(json.dumps({"type": "user/message", "seq": len(rows), "time": 1,
                                    "data": {"content": text, "turn": 1}}, ensure_ascii=False,
                               separators=(",", ":")).encode())
    data = b"\n".join(rows) + b"\n"
    assert same(data, random.Random(3), [(1, "\u2014\u00e9"), (1, "\u00e9\u2014\u00e9"), (1, "\u2014"), (1, "e")]) > 100
