"""A whole turn in C whose ``turn/end`` reason holds more than its kind (issue 31, the tl5 helper: ``t5_turn_end`` in
the tl5 section of ``rowscan_c.c``): the turn's span (its ``reason`` and ``error``) and everything after it are what
the Builder makes of the rows one by one (``timeline_rows.TURN_C`` off), for reasons as dsh writes them (a nested
reason, an error object) and for hostile ones (every kind of error value, repeated and escaped keys, deep nesting,
blanks, non-ASCII); the reasons the C reader takes are taken whole."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from app.log.query import timeline_rows as tr
from app.log.query import timeline_scan
from app.log.query.timeline import Builder, timeline
from app.log.query.timeline_summary import in_log_order, summarize
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl

PRICES = {"deepseek-*": {"input": 0.28, "cacheRead": 0.028, "output": 0.42}}
needs_c = pytest.mark.skipif(timeline_scan._c_scan is None, reason="the row scanner in C is not built")

TAKEN = [                        # (reasons the C reader takes: the text after {"kind":"…")
    '', ',"reason":{"kind":"user"}', ',"error":{"message":"boom","code":"SERVER","status":500}', ',"error":null',
    ',"error":""', ',"error":{}', ',"error":{"code":null}', ',"error":{"message":"m"}', ',"error":"plain text"',
    ',"error":{"code":""}', ',"error":{"code":"É – ünïcode"}', ',"x":[1,2,{"y":null}],"error":{"code":"A","z":1.5}',
    ' , "error" : { "code" : "B" } ', ',"error":{"requestId":"r","code":"C","details":{"a":[[],{}]}}',
    ',"reason":{"kind":"user"},"error":{"code":"D"}', ',"error":{"nested":' + "[" * 20 + "]" * 20 + ',"code":"E"}',
]
DECLINED = [                     # (read row by row: the C reader leaves them)
    ',"error":5', ',"error":true', ',"error":false', ',"error":[1]', ',"error":[]', ',"error":{"code":5}',
    ',"error":{"code":"\\u0041"}', ',"error":"esc\\n"', ',"error":{"code":"A","code":"B"}', ',"error":null,"error":"x"',
    ',"kind":"again"', ',"\\u006bind":"k"', ',"error":{"code":{"x":1}}', ',"error":{"\\u0063ode":"x"}',
    ',"deep":' + "[" * 300 + "]" * 300, ',"n":1e5', ',"n":12345678901234567890123', ',"error":0',
]


def _answer(p: Path, whole: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(tr, "TURN_C", whole)
    r = open_reader(str(p))
    assert not r.fatal
    out = summarize(in_log_order(timeline(r)), PRICES, ordered=True)
    return json.dumps(out["spans"]), json.dumps(out["turns"]), json.dumps(out["totals"])


def _with_reasons(src: Path, dst: Path, tails: list[str], rng: random.Random) -> Path:
    """``src`` with each turn/end row's reason given one of ``tails`` after its kind (its kind kept)."""
    out = []
    for line in src.read_bytes().split(b"\n"):
        if line.startswith(b'{"type":"turn/end",'):
            row = json.loads(line)
            kind = json.dumps(row["data"]["reason"].get("kind"), ensure_ascii=False)
            head = line[:line.index(b',"reason":')]
            line = head + (',"reason":{"kind":' + kind + rng.choice(tails) + "}}}").encode()
        out.append(line)
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(b"\n".join(out))
    return dst


@needs_c
def test_turn_end_reasons_read_in_c_are_the_builders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    taken = {"n": 0}
    real = Builder.turn_c

    def turn_c(b: Builder, x: Any, data: bytes) -> bool:
        ok = real(b, x, data)
        taken["n"] += ok
        return ok
    monkeypatch.setattr(Builder, "turn_c", turn_c)
    base = []
    for k, mix in enumerate(({"p_retry": 0.3}, {"p_retry": 0.2, "context_window": 24_000, "p_header_change": 0.3})):
        g = tmp_path / f"g{k}" / "session.jsonl"
        write_jsonl(str(g), SessionSynth(95 + k, version=4, **mix), target_bytes=300_000)
        base.append(g)
    for name, tails in (("taken", TAKEN), ("declined", DECLINED), ("mixed", TAKEN + DECLINED)):
        for k, g in enumerate(base):
            p = _with_reasons(g, tmp_path / f"{name}{k}" / "session.jsonl", tails, random.Random(k))
            turns = p.read_bytes().count(b'{"type":"turn/end",')
            taken["n"] = 0
            want = _answer(p, False, monkeypatch)
            assert taken["n"] == 0
            got = _answer(p, True, monkeypatch)
            assert got == want, (name, k)
            if name == "taken":
                assert taken["n"] >= turns * 0.9, (taken["n"], turns)
            elif name == "declined":
                assert taken["n"] <= turns * 0.1, (taken["n"], turns)
    spans = json.loads(_answer(_with_reasons(base[0], tmp_path / "e" / "session.jsonl",
                                             [',"error":{"code":"X1"}'], random.Random(0)), True, monkeypatch)[0])
    turns = [s for s in spans if s["kind"] == "turn"]
    assert turns and all(s["error"] == "X1" for s in turns)
