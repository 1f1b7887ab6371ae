"""The timeline's settlement records (issue 31, :mod:`app.log.query.timeline_lean`): the C helpers equal their
definitions, the records give what fastrows' records gave wherever both take a row, and logs whose settlement rows
are changed in the fields they leave unparsed or check give exactly the spans of the exact event pass."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest

from app.log.format import fastrows
from app.log.index.fastindex import load_rowscan_c
from app.log.query import timeline_lean as tl
from app.log.query import timeline_rows as tr
from app.log.query.timeline import Settlement, timeline
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

NEXT = FIXTURES.parent / "dsh-next"
C: Any = load_rowscan_c()
needs_c = pytest.mark.skipif(getattr(C, "tl_seqs", None) is None, reason="the row scanner in C is not built")


def _rows(tmp_path: Path) -> list[tuple[bytes, int]]:
    """Settlement rows of every fixture and of generated v0 and v4 logs, with their log's version."""
    out = []
    gens = []
    for version in (0, 4):
        g = tmp_path / f"g{version}.jsonl"
        write_jsonl(str(g), SessionSynth(91 + version, version=version, p_retry=0.3), target_bytes=300_000)
        gens.append(g)
    for p in sorted(FIXTURES.rglob("*.jsonl")) + sorted(NEXT.rglob("*.jsonl")) + gens:
        lines = p.read_bytes().split(b"\n")
        try:
            v = json.loads(lines[0]).get("version", 0)
        except (ValueError, AttributeError):
            continue
        out += [(ln, v if type(v) is int else 0) for ln in lines[1:]
                if ln.startswith((b'{"type":"assistant/message"', b'{"type":"assistant/attempt"'))]
    return out


RAWS = [b"null", b" null ", b"[]", b"[ ]", b"[1]", b"[1,2,3]", b"[3,2]", b"[1,1]", b"[-5,0,7]", b"[1.0]", b"[1e2]",
        b'["a"]', b"[[1,2]]", b"[01]", b"[1,]", b"{}", b'"x"', b"true", b"[123456789012345678]",
        b"[1234567890123456789]", b"[9223372036854775807,1]", b"[-0]", b"[ 1 , 2 ]", b'["a,b","]",["x"],{"y":"]"}]',
        b'["\\"",",",""]', b"[null]", b"[1,null]", b"[999999999999999999,999999999999999999,999999999999999999,"
        b"999999999999999999,999999999999999999,999999999999999999,999999999999999999,999999999999999999,"
        b"999999999999999999,999999999999999999]"]


@needs_c
def test_c_helpers_are_their_definitions(tmp_path: Path):
    """tl_count, tl_dtsum and tl_seqs equal count_py, dtsum_py and seqs_py on every stream run's texts/args/dt and
    every message's sourceEventSeqs of the fixtures and generated logs, and on hostile values."""
    raws = list(RAWS)
    for raw, _v in _rows(tmp_path):
        try:
            row = json.loads(raw)
        except ValueError:
            continue
        d = row.get("data") if isinstance(row, dict) else None
        if "sourceEventSeqs" in row:
            raws.append(json.dumps(row["sourceEventSeqs"]).encode())
        for rec in d.get("stream") or [] if isinstance(d, dict) else []:
            if isinstance(rec, dict):
                raws += [json.dumps(rec[k], separators=(",", ":")).encode() for k in ("dt", "texts", "args") if k in rec]
    assert len(raws) >= 300
    for raw in raws:
        r = msgspec.Raw(raw)
        assert C.tl_seqs(r) == tl.seqs_py(r), raw
        for k in (0, 1, 2, 5, 100):
            assert C.tl_dtsum(r, k) == tl.dtsum_py(r, k), (raw, k)
        try:
            want = tl.count_py(r)
        except ValueError:
            continue
        assert C.tl_count(r) == want, raw


def _old(raw: bytes, version: int) -> Any:
    dec = fastrows.timeline_decoders(version).get(raw[9:raw.find(b'"', 9)])
    return tr._event(dec, raw, legacy=version < 2) if dec is not None else None


def _view(x: Any) -> Any:
    """What the spans read of a lean item (the cited seqs as :meth:`AttemptTracker.cite` reads them)."""
    if x is None:
        return None
    ev, summ = (x.ev, x.summ) if isinstance(x, Settlement) else (x, None)
    ses = ev.source_event_seqs
    return (type(x), ev.seq, ev.type, ev.time, ev.data, ev.surface_op, ev.ignorable, summ,
            None if ses is None else ([min(ses)] if ses else []))


def test_records_read_what_fastrows_records_read(tmp_path: Path):
    """Every settlement row of the fixtures and generated logs, and changed copies of them: where fastrows'
    record takes a row, these take it too and read the same (the seqs a message cites as cite() reads them)."""
    rows = _rows(tmp_path)
    rng = random.Random(4)
    changed = []
    for raw, v in rows[::3]:
        row = json.loads(raw)
        d = row.get("data")
        if not isinstance(d, dict):
            continue
        pick = rng.random()
        if pick < 0.15 and isinstance(d.get("message"), dict):
            d["message"]["content"] = rng.choice([5, [{"type": 7}], "text", None])
        elif pick < 0.3 and row.get("sourceEventSeqs"):
            row["sourceEventSeqs"] = rng.choice([list(reversed(row["sourceEventSeqs"])), [row["seq"]], [1, 1], [[1, 3]]])
        elif pick < 0.5 and d.get("stream"):
            rec = rng.choice(d["stream"])
            if isinstance(rec, dict):
                k, val = rng.choice([("dt", [1.5]), ("dt", None), ("dt", "x"), ("texts", "abc"), ("texts", []),
                                     ("args", None), ("index", "x"), ("time0", None), ("time", "7"), ("id", [1]),
                                     ("dt", [2 ** 62, 2 ** 62, 2 ** 62]), ("texts", ["only"]), ("args", ["a"])])
                rec[k] = val
        elif pick < 0.6:
            d["usage"] = rng.choice([{"inputTokens": "1"}, None, 5])
        elif pick < 0.7:
            d["interrupted"] = rng.choice([True, 1, None])
        changed.append((json.dumps(row, separators=(",", ":")).encode(), v))
        runs = [r for r in (d.get("stream") or []) if isinstance(r, dict) and isinstance(r.get("texts"), list)
                and len(r["texts"]) > 1 and r.get("dt")]
        if runs:                    # (the stream ending in a run shorter than its dt: the sum stops at its members)
            d["stream"] = d["stream"][:d["stream"].index(runs[0]) + 1]
            runs[0]["texts"] = runs[0]["texts"][:2]
            runs[0]["dt"] = [7] + runs[0]["dt"]
            changed.append((json.dumps(row, separators=(",", ":")).encode(), v))
    taken = both = 0
    for raw, v in rows + changed:
        old, new = _old(raw, v), tl.settlement(raw)
        if old is not None:
            both += new is not None
            assert _view(new) == _view(old), raw[:300]
        taken += new is not None
    assert both >= 100 and taken >= both


def test_changed_settlements_give_the_exact_spans(tmp_path: Path):
    """Generated v0 and v4 logs whose settlement rows are changed in the fields these records leave unparsed or
    check (message content, stream runs' texts/args/dt, record index/id, cited seqs, usage): the row pass gives
    exactly the spans of the exact event pass."""
    for version in (0, 4):
        src = tmp_path / f"s{version}.jsonl"
        write_jsonl(str(src), SessionSynth(95 + version, version=version, p_retry=0.3), target_bytes=900_000)
        lines = src.read_bytes().split(b"\n")
        rng = random.Random(version)
        n = 0
        for i, ln in enumerate(lines):
            if not ln.startswith((b'{"type":"assistant/message"', b'{"type":"assistant/attempt"')) or rng.random() > 0.8:
                continue
            row = json.loads(ln)
            d = row["data"]
            pick = rng.random()
            if pick < 0.3 and isinstance(d.get("message"), dict):
                d["message"]["content"] = rng.choice([5, [{"type": 7, "text": 1}], "text"])
            elif pick < 0.5 and row.get("sourceEventSeqs"):
                ses = row["sourceEventSeqs"]
                row["sourceEventSeqs"] = rng.choice([ses[::-1], ses + [ses[-1]], [ses[0] - 1000] + ses, [],
                                                     [[ses[0], ses[-1]]]])
            elif pick < 0.8 and d.get("stream"):
                for rec in d["stream"]:
                    if isinstance(rec, dict) and rng.random() < 0.5:
                        k, val = rng.choice([("dt", [1.5]), ("texts", "abc"), ("index", "x"), ("id", [1]),
                                             ("time0", None), ("texts", []), ("dt", None), ("texts", ["x"])])
                        rec[k] = val
            else:
                d["usage"] = rng.choice([{"inputTokens": 9, "outputTokens": 2}, {"inputTokens": "1"}, None])
            lines[i] = json.dumps(row, separators=(",", ":")).encode()
            n += 1
        assert n >= 25, n
        p = tmp_path / f"m{version}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(b"\n".join(lines))
        r = open_reader(str(p))
        assert not r.fatal
        spans = list(timeline(r))
        assert spans == list(timeline(r.iter_events(logical=True)))
        assert sum(s["kind"] == "attempt" for s in spans) >= 25


def _every_attempt_turn_end(b: Any, ev: Any, d: Any) -> None:
    """The turn end as it was: a walk over every attempt the tracker keeps (the definition of the incremental one)."""
    from app.log.format.payloads import obj
    t = d.get("turn")
    start = b.open.pop(("turn", t), None)
    reason = obj(d.get("reason"))
    extra: dict[str, Any] = {"turn": t, "reason": reason.get("kind")}
    err = reason.get("error")
    if err:
        extra["error"] = err.get("code") if isinstance(err, dict) else str(err)
    b.span("turn", f"turn {t}", start, ev, **extra)
    for a in b.at.attempts:
        if a.first_seq not in b.done and a.turn == t:
            b.emit_attempt(a, None)
    b.turn = None
    b.at.prune()


def test_turn_end_walks_only_new_and_left_attempts(tmp_path: Path, monkeypatch):
    """A turn end gives out the turn's attempts from those left by the last one and those added since: the same
    spans as the walk over every attempt kept, on fixtures, generated logs with many failed attempts, and logs
    whose turns repeat numbers, end out of order or never end."""
    from app.log.query import timeline as tmod
    from app.tools.hostile import jsonl_mutants
    logs = [p for p in sorted(FIXTURES.rglob("*.jsonl")) + sorted(NEXT.rglob("*.jsonl"))
            if b'"turn/end"' in p.read_bytes()]
    for version in (0, 4):
        g = tmp_path / f"t{version}" / "session.jsonl"
        g.parent.mkdir()
        write_jsonl(str(g), SessionSynth(97 + version, version=version, p_retry=0.5), target_bytes=600_000)
        logs.append(g)
        lines = g.read_bytes().split(b"\n")
        rng = random.Random(version)
        ends = [i for i, ln in enumerate(lines) if ln.startswith(b'{"type":"turn/end"')]
        for k in range(5):          # turn numbers changed: repeated, out of order, ends dropped, two ends swapped
            out = list(lines)
            if k >= 3:                                  # (and, for 4, messages dropped: attempts left uncited)
                for i, j in zip(ends[::2], ends[1::2]):
                    ti, tj = (json.loads(out[x])["data"]["turn"] for x in (i, j))
                    out[i] = out[i].replace(b'"turn":%d' % ti, b'"turn":%d' % tj, 1)
                    out[j] = out[j].replace(b'"turn":%d' % tj, b'"turn":%d' % ti, 1)
                if k == 4:
                    out = [ln for ln in out if not ln.startswith(b'{"type":"assistant/message"') or rng.random() < 0.6]
            for i, ln in enumerate(out):
                if k < 3 and ln.startswith((b'{"type":"turn/end"', b'{"type":"turn/start"')) and rng.random() < 0.3:
                    out[i] = b"" if k == 2 and ln.startswith(b'{"type":"turn/end"') else \
                        ln.replace(b'"turn":', b'"turn":1', 1) if k == 0 else ln.replace(b'"turn":', b'"turn":-', 1)
            out = [ln for ln in out if ln]
            m = tmp_path / f"t{version}{k}" / "session.jsonl"
            m.parent.mkdir()
            m.write_bytes(b"\n".join(out))
            logs.append(m)
    src = FIXTURES / "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
    for k, (_n, blob, _kept) in enumerate(jsonl_mutants(src.read_bytes(), seed=9, count=10)):
        m = tmp_path / f"mm{k}" / "session.jsonl"
        m.parent.mkdir()
        m.write_bytes(blob)
        logs.append(m)
    compared = 0
    for p in logs:
        r = open_reader(str(p))
        if r.fatal:
            continue
        got = list(timeline(r))
        with monkeypatch.context() as mp:
            mp.setitem(tmod._HANDLERS, "turn/end", _every_attempt_turn_end)
            want = list(timeline(open_reader(str(p))))
        assert got == want, p
        compared += sum(s["kind"] == "attempt" for s in got)
    assert compared >= 500


STREAMS = [
    '[]', '[{"type":"chunk","time":5,"chunk":{"type":"finish"}}]', '[{"type":"chunk","time":5,"chunk":{"type":"finish","reason":"stop"}}]',
    '[{"type":"chunk","chunk":{"type":"finish","reason":{"kind":"error"}}},{"type":"chunk","time":null,"chunk":{"type":"usage"}}]',
    '[{"type":"chunk","time":5,"chunk":{"type":"usage","usage":{"inputTokens":3}}},{"type":"chunk","time":6,"chunk":null}]',
    '[{"type":"text-chunks","time0":10,"dt":[1,2],"texts":["a","b","c"]},{"type":"tool-call-chunks","time0":20,"dt":[5],"args":["{","}"]}]',
    '[{"type":"text-chunks","time0":10,"dt":[1,2,3,4],"texts":["a","b"]}]', '[{"type":"text-chunks","time0":10,"dt":[1],"texts":["a","b","c"]}]',
    '[{"type":"text-chunks","time0":10,"texts":["a"]}]', '[{"type":"text-chunks","time0":null,"dt":null,"texts":["a","b"]}]',
    '[{"type":"text-chunks","time0":10,"dt":[1.5],"texts":["a","b"]}]', '[{"type":"text-chunks","time0":1.5,"texts":["a"]}]',
    '[{"type":"text-chunks","time0":10,"dt":"x","texts":["a","b"]}]', '[{"type":"text-chunks","time0":10,"texts":"abc"}]',
    '[{"type":"text-chunks","time0":10,"texts":[]}]', '[{"type":"text-chunks","time0":10,"texts":[1,[2],{"a":"]"}],"dt":[1,1]}]',
    '[{"type":"tool-call-chunks","time0":10,"texts":["a"],"args":null}]', '[{"type":"reasoning-chunks","texts":["a","b"],"dt":[3],"time0":7}]',
    '[{"type":"other","texts":["a"],"dt":[1]}]', '[{"type":null,"time":3}]', '[{"time":3}]', '[null]', '[3]', '{"a":1}', 'null',
    '[{"type":5}]', '[{"type":"chunk","chunk":[1]}]', '[{"type":"chunk","time":"7","chunk":{"type":"finish"}}]',
    '[{"type":"chunk","type":"text-chunks","texts":["a"]}]', '[{"type":"chunk","chunk":{"type":"usage","type":"finish"}}]',
    '[{"type":"\\u0063hunk","chunk":{"type":"finish"}}]', '[{"type":"chunk","chunk":{"type":"fin\\u0069sh"}}]',
    '[{"type":"chunk","chunk":{"type":"finish","reason":[1,{"a":null}]},"time":4}]', '[ { "type" : "text-chunks" , "texts" : [ "a" , "b" ] , "dt" : [ 1 ] } ]',
    '[{"type":"text-chunks","time0":9223372036854775,"dt":[999999999999999999,999999999999999999,999999999999999999,'
    '999999999999999999,999999999999999999,999999999999999999,999999999999999999,999999999999999999,999999999999999999,'
    '999999999999999999],"texts":["a","b","c","d","e","f","g","h","i","j","k"]}]',
    '[{"type":"text-chunks","time0":1,"dt":[1234567890123456789],"texts":["a","b"]}]', '[{"type":"text-chunks","time0":1234567890123456,"texts":["a"]}]',
    '[{"type":"text-chunks","texts":["\\ud83d\\ude00","\\u00e9","é"],"dt":[0,0],"time0":1}]', '[{"type":"text-chunks","texts":["\\ud800"],"time0":1}]',
    '[{"type":"chunk","index":"x","id":[1],"time":2,"chunk":{"type":"text-delta","text":5}}]', '[{"type":"chunk","time":2,"chunk":{}}]',
    '[{"type":"text-chunks","dt":[1,2],"dt":[3],"texts":["a","b"]}]', '[{"type":"chunk","time":1,"time":2,"chunk":{"type":"x"}}]',
]


def _attempt(stream: str, k: int) -> bytes:
    return ('{"type":"assistant/attempt","seq":' + str(5 + k) + ',"time":9,"data":{"turn":1,"step":1,"stream":' + stream
            + "}}").encode()


@needs_c
def test_streams_summed_in_c_are_the_records(tmp_path: Path, monkeypatch):
    """tl_stream's summary of a settlement's stream is what the records' stream_summary gives, or it declines and the
    records decide: every settlement of the fixtures and generated logs, hostile streams and byte edits of them."""
    rows = [raw for raw, _v in _rows(tmp_path)] + [_attempt(s, k) for k, s in enumerate(STREAMS)]
    rng = random.Random(6)
    for k in range(600):
        s = bytearray(rng.choice(STREAMS).encode())
        for _e in range(rng.randint(1, 2)):
            at = rng.randrange(len(s))
            s[at:at + rng.randint(0, 1)] = bytes([rng.choice(b'"\\{}[],:0123456789-. tunlx')])
        rows.append(_attempt(s.decode("utf-8", "replace"), 100 + k))
    fast = [tl.settlement(raw) for raw in rows]
    with monkeypatch.context() as mp:
        mp.setattr(tl, "_stream_c", None)
        slow = [tl.settlement(raw) for raw in rows]
    summed = declined = 0
    for raw, a, b in zip(rows, fast, slow):
        assert _view(a) == _view(b), raw[:300]
        rec = tl._RAW.get(raw[9:raw.find(b'"', 9)], lambda r: None)
        try:
            got = rec(raw)
        except msgspec.DecodeError:
            continue
        if got is not None and type(got.data.stream) is msgspec.Raw and bytes(got.data.stream) != b"null":
            if tl.summary_c(got.data.stream) is None:
                declined += 1
            else:
                summed += 1
    assert summed >= 200 and declined >= 30, (summed, declined)
