"""The session generator makes valid, realistic, deterministic logs (benchmarks, live simulator, UI tests)."""
from __future__ import annotations

import json

import pytest

from app.log.query import analysis
from app.log.fold.attempts import find_attempts
from app.log.format.codec import RowCodec, encode_row, pack_events
from app.log.fold.folds import fold_surface
from app.log.index.reader import LogReader
from app.tools.synth import SessionSynth, batches, crash_after, open_turn, write_jsonl
from app.tools.synth_base import RETRYABLE
from app.tools.synth_items import cut_items, expand_items, pack_items

from fixtures_util import FIXTURES

# a mix that exercises every rare branch within a few dozen turns
BUSY = dict(p_retry=0.25, p_abort=0.08, p_turn_error=0.04, p_max_tokens=0.04, p_header_change=0.15,
            p_resume=0.1, p_parallel=0.3, context_window=30_000)


def _events(seed=5, turns=40, **kw):
    return list(SessionSynth(seed, **kw).events(turns))


@pytest.mark.slow
def test_deterministic_for_a_seed(tmp_path):
    assert _events(5, 15) == _events(5, 15)
    assert _events(5, 15) != _events(6, 15)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    sa = write_jsonl(str(a), SessionSynth(5, **BUSY), turns=25)
    sb = write_jsonl(str(b), SessionSynth(5, **BUSY), turns=25)
    assert a.read_bytes() == b.read_bytes() and sa == sb
    assert sa["bytes"] == a.stat().st_size and sa["turns"] == 25
    # batching never changes the content
    assert list(SessionSynth(5).events(10)) == [ev for t in SessionSynth(5).turns(10) for ev in t]


@pytest.mark.slow
def test_contiguous_seq_and_turn_structure():
    evs = _events(7, 40, **BUSY)
    assert [e["seq"] for e in evs] == list(range(len(evs)))
    starts = [e["data"]["turn"] for e in evs if e["type"] == "turn/start"]
    ends = [e["data"]["turn"] for e in evs if e["type"] == "turn/end"]
    assert starts == ends == list(range(1, 41))
    assert open_turn(evs) is None
    # the envelope: surface keys only on surface types, in the fixtures' key order
    for e in evs:
        if e["type"] in ("user/message", "assistant/message", "tool/result"):
            assert list(e)[:4] == ["type", "seq", "time", "data"] and list(e)[-1] == "surfaceOp"
        else:
            assert list(e) == ["type", "seq", "time", "data"]
    # continuing a synth continues the log
    s = SessionSynth(3)
    first = [e for t in s.turns(2) for e in t]
    more = [e for t in s.turns(2) for e in t]
    assert more[0]["seq"] == first[-1]["seq"] + 1 and more[0]["type"] == "agent/inbox/spliced"


@pytest.mark.slow
def test_messages_cite_their_own_chunks_and_results_cite_calls():
    evs = _events(11, 40, **BUSY)
    by_seq = {e["seq"]: e for e in evs}
    n_msg = n_res = 0
    for e in evs:
        if e["type"] == "assistant/message":
            n_msg += 1
            ts = (e["data"]["turn"], e["data"]["step"])
            cited = e["sourceEventSeqs"]
            assert cited == list(range(cited[0], cited[-1] + 1)) and cited[-1] == e["seq"] - 1
            for c in cited:
                ch = by_seq[c]
                assert ch["type"] == "assistant/chunk" and (ch["data"]["turn"], ch["data"]["step"]) == ts
            # the winning attempt only: no failed finish among the cited chunks
            kinds = [by_seq[c]["data"]["chunk"]["type"] for c in cited]
            if not e["data"].get("interrupted"):
                assert kinds[-1] == "finish" and kinds[-2] == "usage"
                assert by_seq[cited[-1]]["data"]["chunk"]["reason"]["kind"] in ("stop", "tool-calls", "max-tokens")
                assert by_seq[cited[0] - 1]["type"] != "assistant/chunk" or \
                    by_seq[cited[0] - 1]["data"]["chunk"]["type"] == "finish"
        elif e["type"] == "tool/result":
            n_res += 1
            (cseq,) = e["sourceEventSeqs"]
            call = by_seq[cseq]
            cid = e["data"]["message"]["source"]["callId"]
            assert call["type"] == "tool/call" and call["data"]["callId"] == cid
            assert (call["data"]["turn"], call["data"]["step"]) == (e["data"]["turn"], e["data"]["step"])
            assert e["data"]["message"]["content"][0]["toolCallId"] == cid
    assert n_msg > 40 and n_res > 20
    names = {e["data"]["name"] for e in evs if e["type"] == "tool/call"}
    assert {"bash", "read", "edit"} <= names


def test_failed_attempts_are_followed_by_retry_in_the_same_step():
    evs = _events(13, 50, **{**BUSY, "p_abort": 0.15, "p_turn_error": 0.08})
    fails = [i for i, e in enumerate(evs) if e["type"] == "assistant/chunk"
             and e["data"]["chunk"]["type"] == "finish" and e["data"]["chunk"]["reason"]["kind"] == "error"]
    retried = [i for i in fails if evs[i]["data"]["chunk"]["reason"]["failure"]["code"] in RETRYABLE]
    assert retried
    exhausted = 0
    for i in retried:
        r, started = evs[i + 1], evs[i + 2]
        if r["type"] == "step/end":            # the failure after retry 5 (= maxRetries) ends the turn
            j = i
            while evs[j - 1]["type"] == "assistant/chunk":     # the attempt may hold a partial stream
                j -= 1
            assert evs[j - 1]["type"] == "llm/retry-started" and evs[j - 1]["data"]["retry"] == 5
            assert evs[i + 2]["type"] == "turn/end" and evs[i + 2]["data"]["reason"]["kind"] == "error"
            exhausted += 1
            continue
        ts = (evs[i]["data"]["turn"], evs[i]["data"]["step"])
        assert r["type"] == "llm/retry" and started["type"] == "llm/retry-started"
        assert (r["data"]["turn"], r["data"]["step"]) == ts and r["data"]["retryId"] == started["data"]["retryId"]
        assert r["data"]["failure"] == evs[i]["data"]["chunk"]["reason"]["failure"]
        # then a new attempt (or another failure) of the same step, not a step/end
        nxt = evs[i + 3]
        assert nxt["type"] == "assistant/chunk" and (nxt["data"]["turn"], nxt["data"]["step"]) == ts
    reasons = {e["data"]["reason"]["kind"] for e in evs if e["type"] == "turn/end"}
    assert {"completed", "aborted"} <= reasons
    aborted = [e for e in evs if e["type"] == "assistant/message" and e["data"].get("interrupted")]
    assert aborted and all("usage" not in e["data"] for e in aborted)


@pytest.mark.slow
def test_reader_accepts_the_log(tmp_path):
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), SessionSynth(5, **BUSY), turns=40)
    r = LogReader.open(str(p))
    info = analysis.inspect(r)
    assert info["problems"] == [] and info["turns"] == 40 and not info["openTail"]
    evs = r.events()
    assert [e.seq for e in evs] == list(range(len(evs)))
    assert any(e.packed for e in evs)
    assert fold_surface(evs).violations == []                  # incl. compaction replacements
    assert any(e.type == "compaction/summary" for e in evs)
    tr = find_attempts(evs)
    assert tr.failed and all(a.retry_seq is not None for a in tr.failed
                             if (a.failure or {}).get("code") in RETRYABLE and a.last_seq + 2 < len(evs)
                             and evs[a.last_seq + 1].type != "step/end")


@pytest.mark.parametrize("kw", [dict(batch_events=(1, 64)), dict(batch_events=(200, 2000)),
                                dict(batch_events=None), dict(batch_ms=200)])
@pytest.mark.slow
def test_packed_rows_expand_to_the_unpacked_events(tmp_path, kw):
    p = tmp_path / "s.jsonl"
    st = write_jsonl(str(p), SessionSynth(21, **BUSY), turns=12, **kw)
    lines = p.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert json.loads(lines[0]) == SessionSynth(21).header()
    codec = RowCodec(SessionSynth(21).session_id)
    decoded, packed_rows = [], 0
    for ln in lines[1:-1]:
        items, problems = codec.decode_row(ln)
        assert problems == []
        packed_rows += len(items) > 1 or bool(items[0].packed)
        decoded.extend(ev.envelope() for ev in items)
    expected = _events(21, 12, **BUSY)
    assert decoded == expected
    assert packed_rows > 0 and st["rows"] == len(lines) - 2 and st["events"] == len(expected)
    assert st["lastSeq"] == expected[-1]["seq"]


def test_fast_packing_equals_pack_events():
    s = SessionSynth(8, **BUSY)
    for _ in range(10):
        items = s.turn_items()
        for k in (1, 2, 3, 7, 50, 10**9):                       # also cuts inside delta runs
            part = cut_items(items, k)
            assert [encode_row(r) for r in pack_items(part)] == \
                [encode_row(r) for r in pack_events(expand_items(part))]
        assert [encode_row(r) for r in pack_items(items)] == [encode_row(r) for r in pack_events(expand_items(items))]


def test_batches_match_the_file(tmp_path):
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), SessionSynth(4), turns=6)
    stats: dict = {}
    bs = list(batches(SessionSynth(4), turns=6, stats=stats))
    assert bs[0] == [SessionSynth(4).header_line()]
    assert all(ln.endswith(b"\n") for b in bs for ln in b)
    assert b"".join(b"".join(b) for b in bs) == p.read_bytes()
    assert stats["bytes"] == p.stat().st_size


def test_crash_tail_leaves_an_open_turn(tmp_path):
    evs = _events(9, 4)
    for k in (0, 1, 2, 5, 40, len(evs) - 1, len(evs)):
        cut = crash_after(evs, k)
        assert cut == evs[:len(cut)] and open_turn(cut) is not None
    p = tmp_path / "c.jsonl"
    st = write_jsonl(str(p), SessionSynth(3), turns=4, crash=True)
    assert st["turns"] == 4
    r = LogReader.open(str(p))
    tail = r.tail_state()
    assert tail.is_open and tail.closure[-1].data["reason"] == {"kind": "interrupted"}
    assert analysis.inspect(r)["problems"] == []
    t = tmp_path / "t.jsonl"
    write_jsonl(str(t), SessionSynth(3), turns=4, crash="torn")
    raw = t.read_bytes()
    assert not raw.endswith(b"\n") and raw.startswith(p.read_bytes())
    assert LogReader.open(str(t)).tail_state().is_open


@pytest.mark.slow
def test_shapes_mirror_the_fixtures():
    """Key order of each event kind (envelope, data, chunk) is the one dsh writes."""
    want: dict = {}
    for rel in ("examples/acp-agent/tests/snapshots/packed-chunks/session.jsonl",
                "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl",
                "examples/acp-agent/tests/snapshots/cancel/session.jsonl",
                "examples/acp-agent/tests/snapshots/todo-write/session.jsonl",
                "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"):
        p = FIXTURES / rel
        if not p.exists():
            pytest.skip("dsh fixtures not available")
        for ln in p.read_bytes().splitlines()[1:]:
            o = json.loads(ln)
            want.setdefault(_shape(o), o["type"])
    got = {_shape(e) for e in _events(5, 40, **BUSY)}
    kinds = {}
    for sh in want:
        kinds.setdefault(sh[0], set()).add(sh)
    for sh in got:
        if sh[0] in kinds and sh[0] not in ("request/header", "request/context", "session/title", "llm/retry"):
            assert sh in kinds[sh[0]], f"{sh} not among fixture shapes {kinds[sh[0]]}"


def _shape(o: dict) -> tuple:
    d = o.get("data") if isinstance(o.get("data"), dict) else {}
    sub = ()
    if o["type"] == "assistant/chunk":
        c = d["chunk"]
        sub = (c["type"], tuple(c))
    elif o["type"] in ("assistant/message", "tool/result"):
        sub = tuple(d["message"])
    return (o["type"], tuple(o), tuple(k for k in d if k not in ("error", "meta", "usage", "interrupted")), sub)


def test_options():
    with pytest.raises(TypeError):
        SessionSynth(1, no_such_option=1)
    evs = _events(2, 20, p_retry=0, p_abort=0, p_turn_error=0, tool_weights={"read": 1})
    assert not any(e["type"] == "llm/retry" for e in evs)
    assert {e["data"]["name"] for e in evs if e["type"] == "tool/call"} == {"read"}
    h = SessionSynth(1, session_id="child", parent_session="parent", seed_length=0, origin="subagent",
                     delegation_depth=1).header()
    assert list(h) == ["type", "version", "id", "createdAt", "cwd", "parentSession", "seedLength", "origin",
                       "delegationDepth"]


# --------------------------------------------------------------------------- v4 compaction

DSH_COMPACTION = ("0217po+deepseek-harness@321a6fa740/snapshots/session/compaction-output-reserve/"
                  "session.v4.jsonl")


def _compactions(evs):
    """(start, summary, replacement, end) events of every compaction bracket, log order."""
    out, cur = [], {}
    for e in evs:
        if e.type.startswith("compaction/"):
            cur[e.type] = e
        elif e.type == "user/message" and isinstance(e.surface_op, dict) and "compaction/summary" in cur:
            cur["replace"] = e
        if e.type == "compaction/end":
            out.append((cur["compaction/start"], cur["compaction/summary"], cur["replace"], e))
            cur = {}
    return out


def _check_compaction_shape(evs):
    """Every compaction replaces a run of current surface nodes exactly as dsh writes it; -> count."""
    from app.log.fold.folds import SurfaceFold
    fold = SurfaceFold(keep_events=False, version=4)
    brackets = {b[2].seq: b for b in _compactions(evs)}
    for e in evs:
        if e.seq in brackets:
            start, summ, rep, _end = brackets[e.seq]
            op = rep.surface_op
            assert set(op) == {"op", "startSeq", "endSeq"} and op["op"] == "replace"
            nodes = list(fold.nodes)
            i, j = nodes.index(op["startSeq"]), nodes.index(op["endSeq"])
            removed = nodes[i:j + 1]
            assert i >= 1 and next(x for x in evs if x.seq == nodes[0]).type == "system/message"   # head kept
            assert rep.source_event_seqs == [start.seq, summ.seq] + removed
            assert summ.data["shadowedRange"] == {"start": op["startSeq"], "end": op["endSeq"]}
            assert summ.data["shadowedSeqs"] == removed
            assert rep.data["source"] == {"kind": "compact-checkpoint", "compactionId": start.data["compactionId"]}
        n = len(fold.violations)
        fold.apply(e)
        assert len(fold.violations) == n, fold.violations[-1]
    return len(brackets)


def test_dsh_compaction_fixture_has_the_checked_shape():
    from fixtures_util import REPO
    r = LogReader.open(str(REPO.parent / "shared" / "fixtures" / "dsh-next" / DSH_COMPACTION))
    assert _check_compaction_shape(r.events()) == 1


@pytest.mark.parametrize("seed", [0, 1, 5])
def test_v4_compaction_replaces_valid_ranges(seed, tmp_path):
    """synth v4 writes compactions as dsh does: the system prompt is surface node 0 (right after the
    first step/start), the replacement names a run of current nodes after it by startSeq/endSeq, and
    the surface, request and messages faces agree with the same session written as v0."""
    from app.log.index.integrity import dsh_refusals
    from app.log.fold.surface import index_for, page_surface
    p4, p0 = tmp_path / "session.v4.jsonl", tmp_path / "session.jsonl"
    kw = dict(context_window=6_000 + 500 * seed, p_retry=0.3)
    write_jsonl(str(p4), SessionSynth(seed, version=4, **kw), turns=10)
    write_jsonl(str(p0), SessionSynth(seed, **kw), turns=10)
    r4, r0 = LogReader.open(str(p4)), LogReader.open(str(p0))
    evs = r4.events()
    assert _check_compaction_shape(evs) >= 1
    assert analysis.inspect(r4)["problems"] == [] and dsh_refusals(r4) == []
    si = index_for(r4, exact=True)
    assert si.rejected == {}
    shadowed = {s for s, st in page_surface(si, evs).items() if st.get("surface") == "shadowed"}
    assert shadowed == {s for b in _compactions(evs) for s in b[1].data["shadowedSeqs"]}
    # the series header after each compaction (the surface changed)
    for _s, _m, _rep, end in _compactions(evs):
        nxt = next(e for e in evs if e.seq == end.seq + 1)
        assert nxt.type == "request/header" and nxt.data["reason"] == "series"

    def ids(msgs):
        return [m.get("id") for m in msgs if m.get("role") != "system"]
    assert ids(analysis.messages(r4)) == ids(analysis.messages(r0))
    b4 = [b for b, _a in analysis.dispatches(evs)]
    b0 = [b for b, _a in analysis.dispatches(r0.events())]
    assert len(b4) == len(b0)
    for x4, x0 in zip(b4, b0):
        q4, q0 = analysis.request_at(r4, x4)["request"], analysis.request_at(r0, x0)["request"]
        assert q4["messages"][0]["role"] == "system" and ids(q4["messages"]) == ids(q0["messages"])
