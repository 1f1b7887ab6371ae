"""Issue 29 (the background pass's cost): the v4 tool history tells a redeclared tool by comparing JSON keys
(:func:`app.log.fold.folds.json_key`, msgspec's encoding) instead of ``json.dumps`` texts (:func:`_json`).  Two
keys are equal exactly when the two texts are: held here on hostile value pairs, and the whole tool history
(every checkpoint, every request's ``toolHistory``) held equal to the one built with the texts on every fixture
with request headers and on generated logs with tools redeclared in every way."""
from __future__ import annotations

import itertools
import json

import msgspec
import pytest

from app.log.fold import folds
from app.log.fold.checkpoints import build_checkpoints
from app.log.fold.folds import HeaderFold, _json, json_key
from app.log.index.reader import LogReader
from fixtures_util import REPO, session_files

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"

_NAN, _INF = float("nan"), float("inf")
VALUES = [
    None, True, False, 0, 1, -1, 1.0, -0.0, 0.0, 1e16, 1e-7, 5e-324, 2 ** 53, 2 ** 64, 2 ** 70, -(2 ** 70),
    _NAN, _INF, -_INF, "", "null", "a:null", "[null", ",null", "é", "\u2028", "\ud800", "\x00", '"', "\\",
    [], [None], [_NAN], [None, 1], [1, None], [_INF, None], [1], [1.0], [True], {}, {"a": None}, {"a": _NAN},
    {"a": -_INF}, {"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": [None]}, {"a": "null"}, {"a": {"b": [1, {"c": None}]}},
    {"a": {"b": [1, {"c": _NAN}]}}, {"a": {"b": [1.0, {"c": None}]}}, {"name": "x", "parameters": {"type": "object"}},
    {"name": "x", "parameters": {"type": ["string", "null"]}}, {"name": "x", "parameters": {"type": ["string", None]}},
    {"name": "\ud800"}, {"name": "x", "k": 2 ** 70}, {"name": "x", "k": 2 ** 70 + 1},
]


def test_keys_equal_exactly_when_the_json_texts_are():
    for a, b in itertools.product(VALUES, repeat=2):
        assert (json_key(a) == json_key(b)) == (_json(a) == _json(b)), (a, b)


def test_keys_of_decoded_tools_equal_exactly_when_the_json_texts_are():
    """Values as the codec's JSON decoding gives them (string keys only), near misses of one another."""
    texts = ['{"name":"t","p":1}', '{"name":"t","p":1.0}', '{"name":"t","p":true}', '{"p":1,"name":"t"}',
             '{"name":"t","p":null}', '{"name":"t","p":NaN}', '{"name":"t","p":Infinity}', '{"name":"t","p":"1"}',
             '{"name":"t","p":[1,null]}', '{"name":"t","p":[1,NaN]}', '{"name":"t","p":1e400}',
             '{"name":"t","p":-1e400}', '{"name":"t","p":10000000000000000}', '{"name":"t","p":1e16}',
             '{"name":"t","p":"\\ud800"}', '{"name":"t","p":"\\u00e9"}', '{"name":"t","p":"é"}',
             '{"name":"t","p":-0}', '{"name":"t","p":-0.0}', '{"name":"t","p":0}', '{"name":"t","p":{}}',
             '{"name":"t","p":[]}', '{"name":"t","p":18446744073709551616}']
    vals = [json.loads(t) for t in texts]
    for a, b in itertools.product(vals, repeat=2):
        assert (json_key(a) == json_key(b)) == (_json(a) == _json(b)), (a, b)


def _history(reader):
    """Every checkpoint (with its tool fields) and the tool history after each event, built as the fold does."""
    hf = HeaderFold()
    snaps = []
    for ev in reader.events():
        hf.apply(ev)
        if ev.type in ("request/header", "developer/message"):
            snaps.append((ev.seq, hf.tool_history.snapshot(), hf.tool_history.baseline))
    return msgspec.to_builtins(snaps), build_checkpoints(reader).to_builtins()


def _both(path, monkeypatch):
    got = _history(LogReader.open(str(path)))
    with monkeypatch.context() as m:
        m.setattr(folds, "json_key", _json)          # (the texts, as before issue 29's change)
        want = _history(LogReader.open(str(path)))
    assert got == want


def _with_headers():
    out = []
    for p in session_files() + sorted(NEXT.rglob("*.v[1234].jsonl")):
        if b'"request/header"' in p.read_bytes():
            out.append(p)
    return out


@pytest.mark.parametrize("path", _with_headers(), ids=lambda p: "/".join(p.parts[-3:]))   # (stable: xdist workers must collect the same ids)
def test_tool_history_equals_the_json_texts_way_on_the_fixtures(path, monkeypatch):
    _both(path, monkeypatch)


def _tool(name, **kw):
    return {"name": name, "description": f"{name} tool", "parameters": {"type": "object", **kw}}


@pytest.mark.parametrize("twist", ["same", "reordered", "int-float", "null-nan", "null-inf", "extra", "text-null",
                                   "surrogate", "big-int", "bool-int"])
def test_tool_history_equals_the_json_texts_way_on_redeclared_tools(tmp_path, monkeypatch, twist):
    """A v4 log whose headers list the same tools and then each twist of one of them (a redeclaration or not)."""
    base = [_tool("bash", n=1, t=None), _tool("read", d="x:null")]
    first = json.dumps(base, allow_nan=True)
    tw = {"same": first,
          "reordered": json.dumps([{"description": "bash tool", "name": "bash",
                                    "parameters": {"type": "object", "n": 1, "t": None}}, base[1]]),
          "int-float": first.replace('"n": 1', '"n": 1.0'), "null-nan": first.replace('"t": null', '"t": NaN'),
          "null-inf": first.replace('"t": null', '"t": Infinity'), "extra": json.dumps(base + [_tool("x")]),
          "text-null": first.replace('x:null', 'x:nul'), "surrogate": first.replace('bash tool', 'bash \\ud800'),
          "big-int": first.replace('"n": 1', '"n": 18446744073709551617'),
          "bool-int": first.replace('"n": 1', '"n": true')}[twist]
    rows = ['{"type":"session","version":4,"id":"s","createdAt":0,"cwd":"/","isSeeded":false,"delegationDepth":0}']
    seq = 1
    for k, tools in enumerate([first, tw, first, tw, tw]):
        rows.append(f'{{"type":"request/header","seq":{seq},"time":{seq},"data":{{"reason":"change","header":'
                    f'{{"config":{{"model":"m"}},"tools":{tools}}}}}}}')
        seq += 1
        if k == 2:
            rows.append(f'{{"type":"developer/message","seq":{seq},"time":{seq},"data":{{"headerSeq":{seq - 1},'
                        f'"message":{{"role":"developer","id":"d{seq}","content":[{{"type":"tool-addition",'
                        f'"toolName":"bash"}}]}}}}}}')
            seq += 1
    p = tmp_path / "session.v4.jsonl"
    p.write_text("\n".join(rows) + "\n", encoding="utf-8")
    _both(p, monkeypatch)
