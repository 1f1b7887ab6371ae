"""Whole-log find on a long log (issue 29): ``find_shown.quick_shown`` (an assistant message's blocks read once, a
tool result's and a user message's plain content) gives exactly ``shown_fields``, or None (read the usual way)."""
from __future__ import annotations

import copy
import json
import random

from app.log.index.reader import LogReader
from app.log.query.find_shown import quick_shown
from app.log.query.textview import shown_fields
from app.tools.hostile import hostile_names_session, hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES, session_files

NEXT = FIXTURES.parent / "dsh-next"
ODD = [None, 5, 3.5, "", "x", [], {}, ["a"], {"type": "text"}, {"type": "text", "text": 7},
       {"type": "text", "text": ""}, {"type": "reasoning", "text": "r"}, {"type": "image", "attachment": {"name": "n"}},
       {"type": "tool-result", "content": "nested"}, {"type": "tool-call", "name": "t", "arguments": '{"a": 1}'},
       {"type": "tool-call", "id": 3, "arguments": {"k": "v"}}, {"type": ["text"], "text": "t"}, "bare", 9]


def _same(ev) -> bool:
    q = quick_shown(ev.type, ev.data)
    if q is not None:
        assert q == shown_fields(ev), (ev.type, ev.data)
    return q is not None


def test_quick_fields_are_shown_fields_on_every_fixture_and_generated_log(tmp_path):
    files = session_files(FIXTURES) + session_files(NEXT)
    for seed, version in ((3, 4), (4, 4), (5, 0)):
        p = tmp_path / f"g{seed}.jsonl"
        write_jsonl(str(p), SessionSynth(seed=seed, version=version, context_window=12_000), target_bytes=300_000)
        files.append(p)
    quick = 0
    for p in files:
        r = LogReader.open(str(p))
        if r.fatal:
            continue
        quick += sum(_same(ev) for ev in r.iter_events())
    assert quick > 1000, quick


def test_edited_content_shapes_read_alike_or_left_to_shown_fields():
    """Every odd block or content in each place a quick reader reads: the same fields, or None."""
    class Ev:
        def __init__(self, typ, data):
            self.type, self.data = typ, data
    base = {"assistant/message": {"turn": 1, "message": {"role": "assistant", "content": [
                {"type": "reasoning", "text": "why"}, {"type": "text", "text": "the answer"},
                {"type": "tool-call", "id": "c1", "name": "read", "arguments": '{"path": "a"}'}]}},
            "tool/result": {"turn": 1, "message": {"role": "tool", "toolCallId": "c1", "content": [
                {"type": "text", "text": "out"}]}, "error": None},
            "user/message": {"turn": 1, "content": [{"type": "text", "text": "hi"}]}}
    rnd = random.Random(36)
    quick = left = 0
    for typ, d in base.items():
        for _ in range(300):
            e = copy.deepcopy(d)
            holder = e.get("message", e)
            k = rnd.random()
            if k < 0.5 and isinstance(holder.get("content"), list):
                holder["content"].insert(rnd.randrange(len(holder["content"]) + 1), copy.deepcopy(rnd.choice(ODD)))
            elif k < 0.7:
                holder["content"] = copy.deepcopy(rnd.choice(ODD))
            elif k < 0.8:
                e["message"] = copy.deepcopy(rnd.choice(ODD))
            elif k < 0.9:
                e["error"] = rnd.choice([None, "boom", {"code": "E", "message": "m"}, 5])
            else:
                e = rnd.choice(ODD)
            ev = Ev(typ, e)
            try:
                want = shown_fields(ev)
            except Exception as x:                 # (an odd payload shown_fields itself fails on: so must we)
                try:
                    quick_shown(typ, e)
                except type(x):
                    continue
                assert quick_shown(typ, e) is None
                continue
            q = quick_shown(typ, e)
            if q is None:
                left += 1
            else:
                assert q == want, (typ, json.dumps(e, default=str))
                quick += 1
    assert quick > 100 and left > 100, (quick, left)


def test_hostile_events_read_alike(tmp_path):
    """Hostile and mutated sessions (a generated v4 log's rows edited by the project's hostile generators)."""
    g = tmp_path / "g.jsonl"
    write_jsonl(str(g), SessionSynth(seed=8, version=4), target_bytes=200_000)
    data = g.read_bytes()
    lines = [ln for ln in data.decode().split("\n") if ln.strip()]
    variants = [hostile_session(lines, seed=k) for k in range(3)] + [hostile_names_session(data)]
    variants += [m for _, m, _ in jsonl_mutants(data, seed=2, count=6)]
    quick = 0
    for k, v in enumerate(variants):
        path = tmp_path / f"h{k}.jsonl"
        path.write_bytes(v)
        r = LogReader.open(str(path))
        if not r.fatal:
            quick += sum(_same(ev) for ev in r.iter_events())
    assert quick > 300, quick
