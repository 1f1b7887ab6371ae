"""rowscan_c.find_hits reads compaction summaries and failed attempts itself (the find6 section, app/log/query/find_more):
rowscan_c.more_text gives what its definition, find_more.more_text_py, gives wherever it gives anything (and it gives
something for the rows as dsh writes them); find_hits given these types gives what its definition gives (find_c2's
find_hits_py, reading them through more_items); and find's hits through it are the exact way's on generated, hostile
and edited summary and attempt rows (every shape of failure, error, code and message; escaped keys and types; keys
twice; non-ASCII, quotes, control characters and the characters the caseless C refuses), for ASCII, caseless,
non-ASCII and quoted queries; a planted difference is caught."""
from __future__ import annotations

import json
import random

import pytest

from app.log.query import find_c2, find_more
from app.log.query.find import FindOptions
from app.log.query.find_c2 import C2_KINDS, find_hits_py
from app.log.query.find_fast import READ_T, LazyHit
from app.log.query.find_more import C2_TYPES, MORE_TEXT, more_text, more_text_py
from app.log.query.textrow import text_row_c
from app.tools.synth import SessionSynth, write_jsonl
from tests.test_find_text_fast import _open, same_both_ways

C = find_c2.FIND_HITS if text_row_c() is not None else None    # (text_row_c: the C's types set up, as find has)
pytestmark = pytest.mark.skipif(C is None or MORE_TEXT is None, reason="the row scanner in C is not built")
FR, SRC, BASE = object(), object(), 1 << 20

ERRS = [
    {"message": "the stream stalled", "code": "TIMEOUT"}, {"message": "the x", "code": ""}, {"message": "the", "code": None},
    {"message": "The end"}, {"code": "THE_CODE"}, {"code": "C", "message": None}, {"code": 5, "message": "the"},
    {"code": True, "message": "the"}, {"code": ["x"], "message": "the"}, {"message": 7, "code": "C"},
    {"message": {"a": "the"}}, {}, {"other": "the"}, {"message": "th\u212ae \u017f \u0130 caf\u00e9 \u2014 \"q\" \\ t\u0000h\te\nthe"},
    {"message": "\u00e9the\u2014", "code": "\u00c9"}, "the bare string", "", None, 0, 1, True, False, [], ["the"], 1.5,
]


def _attempt(seq: int, stream: object, turn: object = 3, extra: str = "") -> str:
    data = {"turn": turn, "step": 1, "stream": stream} if turn is not ... else {"step": 1, "stream": stream}
    return json.dumps({"type": "assistant/attempt", "seq": seq, "time": 1000 + seq, "data": data},
                      ensure_ascii=False, separators=(",", ":"))[:-2] + extra + "}}"


def _finish(reason: object, rtype: object = "chunk", ctype: object = "finish") -> dict:
    return {"type": rtype, "time": 5, "chunk": {"type": ctype, "reason": reason}}


def _summary(seq: int, data: dict) -> str:
    return json.dumps({"type": "compaction/summary", "seq": seq, "time": 9, "data": data}, ensure_ascii=False,
                      separators=(",", ":"))


def hostile_rows() -> list[str]:
    """Attempt and summary rows in every shape the C reads or must leave to the exact way."""
    rows: list[str] = []
    seq = 100
    text_run = {"type": "text-chunks", "time0": 1, "index": 0, "dt": [1, 2], "texts": ["the", " x", "y"]}
    for e in ERRS:
        for key in ("failure", "error"):
            for other in (None, "", {}, {"message": "other the", "code": "O"}):
                reason: dict = {"kind": "error", key: e}
                if key == "failure" and other is not None:
                    reason["error"] = other
                if key == "error" and other is not None:
                    reason["failure"] = other
                seq += 1
                rows.append(_attempt(seq, [text_run, _finish(reason)]))
    for stream in ([_finish({"kind": "error", "failure": ERRS[0]}), _finish({"kind": "error", "error": ERRS[3]})],
                   [_finish({"kind": "stop"}), _finish({"kind": "error"})], [_finish({"kind": 5, "failure": ERRS[0]})],
                   [_finish("error")], [_finish({"kind": "error", "failure": ERRS[0]}, rtype=5)],
                   [_finish({"kind": "error", "failure": ERRS[0]}, ctype="the")], [{"type": "chunk", "chunk": "the"}],
                   [1, "the", None, [_finish({"kind": "error", "failure": ERRS[0]})]], {"the": 1}, "the", None, 5, [],
                   [text_run] * 3, [{"type": "chunk"}], [{"type": "chunk", "chunk": {"type": "finish"}}]):
        for turn in (3, "3", 3.0, None, ..., -2, 12345678901234567890, True):
            seq += 1
            rows.append(_attempt(seq, stream, turn))
    base = _attempt(1, [_finish({"kind": "error", "failure": ERRS[0]})])
    rows += [base.replace('"kind":"error"', '"kind":"\\u0065rror"'), base.replace('"type":"finish"', '"type":"fin\\u0069sh"'),
             base.replace('{"type":"chunk"', '{"type":"ch\\u0075nk"'), base.replace('"kind":"error"', '"kind":"error","kind":"error"'),
             base.replace('"code":"TIMEOUT"', '"code":"TIMEOUT","code":"X"'), base.replace('"failure":', '"f\\u0061ilure":'),
             base.replace('"message":"the', '"message":"\\u0074he \\ud83d\\ude00 \\\\ \\" the'),
             base.replace('"the stream', '"\\u017fhe stream'), base.replace('"time":5,', '"time":5,"time":6,'),
             base.replace('"data":{', '"data":{"usage":{"the":[1,2,{"x":"the"}]},'), base.replace('"seq":1,', '"seq":-1,'),
             base.replace('"seq":1,', '"seq":9007199254740992,'), base.replace('"time":1001', '"time":1.5'),
             base.replace('"time":1001', '"time":123456789012345678901'), base.replace('{"type":"assistant/attempt"', '{"type":"assistant/attempt" '),
             base.replace('"data":{', '"data":{"stream":[],'), base[:-1], base + "}", base.replace("the", "\u2014the\u2014")]
    blocks = [[{"type": "text", "text": "the summary"}], [{"type": "text", "text": "a"}, {"type": "reasoning", "text": "the b"}],
              [{"type": "image", "text": "the"}], [{"type": "tool-result", "content": [{"type": "text", "text": "the r"}]}],
              [{"type": "other", "text": "the o"}], [{"type": "other"}], [{"type": 5, "text": "the t"}], ["the bare", None],
              [3], [{"type": "text", "text": None}], [{"type": "text", "text": ""}], [{"type": "text", "text": 4}],
              [{"type": "text", "text": "th\u212ae\nthe\u0001\u2028x"}], "the plain", "", None, 5, {"text": "the"}, True, []]
    for b in blocks:
        for key in ("summary", "content"):
            for turn in (..., 4, "4"):
                seq += 1
                data = {"compactionId": "c", key: b}
                if key == "content":
                    data["summary"] = None if turn == "4" else data.pop("summary", None)
                    if turn == "4":
                        data.pop("summary")
                if turn is not ...:
                    data["turn"] = turn
                rows.append(_summary(seq, data))
    seq += 10
    for e in ERRS + [..., None]:
        for msg in ({"role": "tool", "content": [{"type": "text", "text": "the out"}], "toolCallId": "c1"},
                    {"role": "tool", "content": "the plain out"}, {"content": []}, {"content": None}, None, "the",
                    {"content": 5}, {"content": [{"type": "tool-result", "content": [{"type": "text", "text": "the n"}]}]},
                    {"content": [{"type": "image"}]}, {"source": {"callId": ["x"]}, "content": "the s"}):
            seq += 1
            data: dict = {"turn": 2, "step": 1}
            if msg is not None:
                data["message"] = msg
            if e is not ...:
                data["error"] = e
            rows.append(json.dumps({"type": "tool/result", "seq": seq, "time": 3, "data": data}, ensure_ascii=False,
                                   separators=(",", ":")))
    for typ in ("request/header", "turn/start", "step/start", "step/end", "request/context", "session/end-seed",
                "llm/retry-started", "steering/message"):
        seq += 1
        row = json.dumps({"type": typ, "seq": seq, "time": 3, "data": {"turn": 1, "text": "the", "x": ["the"]}},
                         separators=(",", ":"))
        rows += [row, row.replace('"data":', '"type":"user/message","data":'), row.replace(typ, typ + "x"),
                 row.replace('"type":"' + typ, '"type":"' + typ.replace("t", "\\u0074", 1)), row[:-1],
                 row.replace('"seq":', '"seq":"', 1).replace(',"time"', '","time"', 1)]
    rows.append(_summary(seq + 1, {"summary": [{"type": "text", "text": "the"}], "summary2": 1}).replace("summary2", "summary"))
    rows.append(_summary(seq + 2, {"content": [{"type": "text", "text": "the c"}], "summary": [{"type": "text", "text": "the s"}]}))
    rows.append(_summary(seq + 3, {"compactionId": [1], "summary": [{"type": "text", "text": "the s"}]}))
    rows.append(_summary(seq + 4, {"summary": [{"type": "text", "text": "the s"}]}).replace('"type":"text"', '"t\\u0079pe":"text"'))
    return rows


def _generated(tmp_path, seed: int = 5, size: int = 1_200_000) -> list[str]:
    p = tmp_path / f"g{seed}.jsonl"
    write_jsonl(str(p), SessionSynth(seed=seed, version=4, context_window=24_000), target_bytes=size)
    return [ln for ln in p.read_text().split("\n") if ln]


def test_more_text_in_c_is_its_definition(tmp_path):
    gen = [ln for ln in _generated(tmp_path)[1:] if '"compaction/summary"' in ln[:40] or '"assistant/attempt"' in ln[:40]]
    assert len(gen) > 15 and any("compaction/summary" in ln[:40] for ln in gen), len(gen)
    read = 0
    for ln in gen:
        raw = ln.encode()
        got, want = more_text(raw), more_text_py(raw)
        assert got is not None and got == want, ln
        read += 1
    left = 0
    for ln in hostile_rows():
        raw = ln.encode()
        got = more_text(raw)
        if got is None:
            left += 1
            continue
        assert got == more_text_py(raw), ln
        read += 1
    assert read > 300 and left > 20, (read, left)
    assert more_text(b'{"type":"user/message","seq":1,"data":{}}') is None
    assert more_text(b"") is None and more_text(b'{"type":"assistant/attempt"') is None


NEEDLES = [(0, "the"), (0, "e"), (0, '"q'), (0, "timeout"), (1, "\u2014"), (1, "The"), (1, "\u00e9"), (0, "\\"),
           (1, '"'), (0, "code")]


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


def _same(data: bytes, rng: random.Random) -> int:
    starts = _starts(data)
    hits = 0
    for types, kinds in ((C2_TYPES, C2_KINDS), (C2_TYPES, C2_KINDS[:2]), (READ_T, C2_KINDS)):
        for mode, needle in NEEDLES:
            for torn in (False, True):
                some = sorted(rng.sample(starts, len(starts) // 2)) if torn else starts
                args = (data, some, len(data), torn, 1 << 25, types, needle.encode(), mode, kinds,
                        (LazyHit, FR, SRC, BASE))
                got, want = C(*args), find_hits_py(*args)
                assert (_plain(got[0]), got[1:]) == (_plain(want[0]), want[1:]), (needle, mode, torn, types, kinds)
                hits += sum(1 for it in got[0] if type(it) is not int)
    return hits


def test_find_hits_given_the_two_types_is_its_definition(tmp_path):
    rng = random.Random(3)
    gen = _generated(tmp_path)
    hits = _same(("\n".join(gen) + "\n").encode(), rng)
    rows = hostile_rows()
    hits += _same(("\n".join(rows) + "\n" + rows[0][:40]).encode(), rng)
    assert hits > 2000, hits


QUERIES = [FindOptions("the"), FindOptions("THE"), FindOptions("timeout"), FindOptions("\u2014"), FindOptions('"q'),
           FindOptions("The", case=True), FindOptions("code"), FindOptions("s"), FindOptions("\u00e9"), FindOptions("k"),
           FindOptions("the", kinds=["error"]), FindOptions("summary", kinds=["assistant"])]


def test_find_through_the_c_is_the_exact_way(tmp_path):
    gen = _generated(tmp_path, seed=7)
    head, rows = gen[0], gen[1:]
    mixed = []
    hostile = hostile_rows()
    for i, r in enumerate(rows):
        mixed.append(r)
        if i % 5 == 0 and hostile:
            mixed.append(hostile.pop())
    q = tmp_path / "e.jsonl"
    q.write_text("\n".join([head] + mixed + hostile) + "\n")
    fast = 0
    for opts in QUERIES:
        fast += same_both_ways(lambda: _open(str(q)), opts)
    assert fast > 1000, fast


def test_the_comparison_catches_a_planted_difference(tmp_path, monkeypatch):
    """The error kind given as another, or the two types not read (their rows left): the first is caught, the second
    finds the same."""
    gen = _generated(tmp_path, seed=9, size=300_000)
    q = tmp_path / "e.jsonl"
    q.write_text("\n".join(gen + hostile_rows()[:60]) + "\n")
    make = lambda: _open(str(q))                                  # noqa: E731
    assert same_both_ways(make, FindOptions("the")) > 0
    monkeypatch.setattr(find_c2, "C2_KINDS", C2_KINDS[:2] + ("event",))
    monkeypatch.setattr("app.log.query.find.C2_KINDS", C2_KINDS[:2] + ("event",))
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the"))
    monkeypatch.undo()
    monkeypatch.setattr(find_more, "C2_TYPES", READ_T)
    monkeypatch.setattr("app.log.query.find.C2_TYPES", READ_T)
    assert same_both_ways(make, FindOptions("the")) > 0


def _list_edits(line: str) -> list[str]:
    """An assistant message's row with a list of its stream (a run's "dt" or "texts", which find6's f6_array reads
    a plain way) holding each item f2_skim accepts or refuses, at its start, middle and end."""
    if '"assistant/message"' not in line[:40] or '"texts":[' not in line or '"dt":[' not in line:
        return []
    items = ['01', '-0', '-01', '-', '1.5', '1e3', '1E3', ' 1', '1 ', '\t2', '0', '-7', '9' * 300, '9' * 301, '-' + '9' * 300,
             '"a\\x"', '"\x01"', '"\x7f"', '"\\ud800"', '"\\ud83d\\ude00"', '"\\u00e9"', '"\u00e9"', '"\xe2\x80"', '"a"b',
             '', ',', '"the"', '"th\\"e"', '"' + 'x' * 40 + '"', '"' + 'y' * 15 + '\\n"', 'true', 'null', '[1]', '{}',
             '"\\"', '"a', '1,', '1]', '"x",', '"\u2028"']
    out = []
    for key in ('"texts":[', '"dt":['):
        at = line.index(key) + len(key)
        end = line.index("]", at)
        for x in items:
            out.append(line[:at] + x + "," + line[at:])             # (first)
            out.append(line[:end] + "," + x + line[end:])           # (last)
            out.append(line[:at] + x + line[end:])                  # (alone)
        out.append(line[:at] + line[end:])                          # (empty)
    return out


def test_find_hits_reads_plain_lists_as_the_exact_decoder_accepts_them(tmp_path):
    """f6_array (the stream's runs read a plain way inside f2_skim) accepts what ft_value accepts: find_hits (which
    skims the stream) is its definition (whose text_row reads the whole row with ft_value) on lists edited every way."""
    gen = _generated(tmp_path, seed=12, size=300_000)
    edited = [e for ln in gen[1:200] for e in _list_edits(ln)]
    assert len(edited) > 2000, len(edited)
    data = ("\n".join(edited) + "\n").encode("utf-8", "surrogatepass")
    starts = _starts(data)
    read = left = 0
    for mode, needle in ((0, "the"), (1, "\u2014")):
        args = (data, starts, len(data), False, 1 << 25, C2_TYPES, needle.encode(), mode, C2_KINDS,
                (LazyHit, FR, SRC, BASE))
        got, want = C(*args), find_hits_py(*args)
        assert (_plain(got[0]), got[1:]) == (_plain(want[0]), want[1:]), needle
        read += got[1]
        left += sum(1 for it in got[0] if type(it) is int)
    assert read > 1000 and left > 500, (read, left)
