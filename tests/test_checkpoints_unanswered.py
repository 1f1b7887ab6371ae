"""Issue 15 leftover: a fold checkpoint taken while a v4 step holds an unanswered tool call.

The checkpoint keeps the step mark (the last ``step/start``/``step/end``) and no payloads; the
v4 rule that drops a closed step's unanswered tool calls from the request (spec-versions §6.1
rule 4) then depends on what comes after the checkpoint.  Two generated v4 logs
(:mod:`app.tools.synth`): one where the call is answered after the checkpoint (as the synth writes
it: ``tool/call``, ``todo/write``, ``tool/result``), one where the answer is dropped by hand (the
``tool/result`` row replaced by an ignorable event of the same seq) so the step closes with the
call unanswered.  Folds, messages and requests restored from every checkpoint that falls inside
the unanswered stretch equal the from-scratch ones at every seq after it.
"""
from __future__ import annotations

import json

import pytest

from app.log.query import analysis
from app.log.fold.checkpoints import Checkpoints, build_checkpoints, folds_at, request_at
from app.log.fold.folds import HeaderFold, SurfaceFold
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.tools.synth import SessionSynth, write_jsonl


def _scratch(events, b):
    sf, hf = SurfaceFold(version=4), HeaderFold()
    for ev in events:
        if ev.seq >= b:
            break
        sf.apply(ev)
        hf.apply(ev)
    return sf, hf


def _same(a, b) -> bool:
    (sa, ha), (sb, hb) = a, b
    return sa.nodes == sb.nodes and sa.message_seqs() == sb.message_seqs() and sa.messages() == sb.messages() \
        and [str(v) for v in sa.violations] == [str(v) for v in sb.violations] \
        and (ha.header, ha.seq, ha.reason, ha.history) == (hb.header, hb.seq, hb.reason, hb.history) \
        and ha.tool_history.snapshot() == hb.tool_history.snapshot()


def _calls(events):
    """(call seq, call id, answer seq or None, seq of the step/end closing its step) of every tool call."""
    out = []
    for i, ev in enumerate(events):
        if ev.type != "tool/call":
            continue
        cid = ev.data.get("callId")
        answer = close = None
        for later in events[i + 1:]:
            if later.type == "tool/result" and (later.data.get("message") or {}).get("toolCallId") == cid:
                answer = later.seq
            if later.type in ("step/end", "turn/end"):
                close = later.seq
                break
        out.append((ev.seq, cid, answer, close))
    return out


def _referenced(events) -> set:
    refs = set()
    for ev in events:
        refs.update(ev.source_event_seqs or ())
        op = ev.surface_op
        if isinstance(op, dict):
            refs.update(v for k, v in op.items() if k != "op")
    return refs


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    d = tmp_path_factory.mktemp("unanswered")
    answered = d / "answered.jsonl"
    write_jsonl(str(answered), SessionSynth(seed=5, version=4), turns=14)
    events = LogReader.open(str(answered)).events()
    refs = _referenced(events)
    # a tool/result nothing later cites (no compaction shadows it): drop it, keeping its seq
    victim = next(a for _c, _cid, a, _close in _calls(events) if a is not None and a not in refs and a > 40)
    rows = answered.read_text().splitlines(keepends=True)
    dropped = d / "dropped.jsonl"
    out = []
    for line in rows:
        row = json.loads(line)
        if row.get("seq") == victim and row.get("type") == "tool/result":
            line = json.dumps({"type": "plugin:test/dropped-result", "seq": victim, "time": row["time"], "data": {},
                               "ignorable": True}, separators=(",", ":")) + "\n"
        out.append(line)
    dropped.write_text("".join(out))
    return {"answered": str(answered), "dropped": str(dropped), "victim": victim}


def _reader(path):
    r = LogReader(RawJsonlSource(path, block=512))           # a checkpoint at (nearly) every row
    r.build_index()
    return r


@pytest.mark.parametrize("which", ["answered", "dropped"])
def test_checkpoint_inside_an_unanswered_call_restores_the_from_scratch_fold(logs, which):
    r = _reader(logs[which])
    assert r.version == 4
    # as the index cache saves and loads them
    cps = Checkpoints.from_builtins(json.loads(json.dumps(build_checkpoints(r, every=0).to_builtins())))
    events = r.events()
    calls = _calls(events)
    if which == "dropped":
        gone = [c for c in calls if c[2] is None]
        assert gone, "the dropped answer leaves a call unanswered when its step closes"
        stretches = [(c, s, close) for c, _cid, _a, close in gone for s in [c]]
    else:
        stretches = [(c, c, a) for c, _cid, a, _close in calls if a is not None and a - c >= 2]
    across = []
    for call, _s, end in stretches:
        for cp in cps.points:
            if call < cp.seq <= end:                      # the call is unanswered when this point is taken
                across.append((cp, call, end))
    assert across, "a checkpoint falls inside an unanswered call"
    for cp, call, end in across:
        assert cp.step_mark is not None and cp.step_mark[1] < call     # (the open step's start)
        for b in range(cp.seq, min(len(events), end + 6) + 1):
            assert _same(folds_at(r, cps, b), _scratch(events, b)), (which, cp.seq, b)
    if which == "dropped":
        # the scenario holds: after the step closed, the unanswered call is gone from the request
        call, close = gone[0][0], gone[0][3]
        cid = gone[0][1]
        sf, _hf = folds_at(r, cps, close + 1)
        blocks = [b for m in sf.messages() if m.get("role") == "assistant" for b in m.get("content") or []
                  if isinstance(b, dict) and b.get("type") == "tool-call"]
        assert cid not in {b.get("id") for b in blocks}
        sf, _hf = folds_at(r, cps, close)                 # while the step is open it is still there
        blocks = [b for m in sf.messages() if m.get("role") == "assistant" for b in m.get("content") or []
                  if isinstance(b, dict) and b.get("type") == "tool-call"]
        assert cid in {b.get("id") for b in blocks}


@pytest.mark.parametrize("which", ["answered", "dropped"])
def test_requests_after_an_unanswered_call_equal_the_full_pass(logs, which):
    r = _reader(logs[which])
    cps = build_checkpoints(r, every=0)
    events = r.events()
    victim = logs["victim"]
    # every dispatch from the turn of the (un)answered call to the end of the next turn
    turn = next(ev.data.get("turn") for ev in events if ev.seq > victim and isinstance(ev.data, dict)
                and ev.data.get("turn") is not None)
    ats = [ev.seq for ev in events if ev.type in ("assistant/message", "assistant/attempt")
           and isinstance(ev.data, dict) and ev.data.get("turn") in (turn, turn + 1)]
    assert ats
    for at in ats:
        assert request_at(r, at, cps) == analysis.request_at(r, at), (which, at)
