"""The log core on the real dsh corpus: facts established from the fixtures themselves."""
from __future__ import annotations

import json

import pytest

from app.log.fold.normalize import v4_message
from app.log.query import analysis
from app.log.fold.attempts import find_attempts
from app.log.format.codec import expand_packed, pack_events
from app.log.fold.folds import exact_request, fold_request_header, fold_surface
from app.log.format.model import PACKED_TAGS, is_event, typed
from app.log.index.reader import LogReader
from fixtures_util import fast_sample, fixture, manifest_counts, raw_rows, rel, session_files

SESSIONS = session_files()
COUNTS = manifest_counts()


def test_corpus_is_present():
    assert len(SESSIONS) == 169, "the corpus MANIFEST lists 169 session logs"


@pytest.mark.parametrize("path", fast_sample(SESSIONS, spread=3), ids=rel)
def test_every_fixture_opens_with_manifest_counts(path):
    r = LogReader.open(str(path))
    assert r.header is not None and r.fatal is None
    items = r.items()
    events = [i for i in items if is_event(i)]
    rows = {(i.pos) for i in items}
    want_rows, want_events = COUNTS[rel(path)]
    assert len(events) == want_events
    assert len(rows) == want_rows
    assert not [i for i in items if not is_event(i)], "no fixture row is unreadable"
    info = analysis.inspect(r)
    # every known core payload has its documented typed shape (legacy shapes converted),
    # except in the synthetic invalid inputs of dsh's snapshot tool, where it is reported
    bad = [p for p in info["problems"] if p.startswith("bad-payload")]
    if rel(path).endswith("suite/authored-error/session.jsonl"):
        assert bad == ["bad-payload: turn/end payload: Object missing required field `turn` (line 2, byte 124, seq 1)"]
    else:
        assert bad == []
        for ev in events:
            typed(ev)
    assert info["events"] == want_events
    for key in ("id", "format", "events", "lastSeq", "turns", "messages", "attempts", "hiddenAttempts",
                "openTail", "closure", "problems"):
        assert key in info


def test_seq_gap_is_reported_not_fatal():
    r = LogReader.open(str(fixture("apps/web/tests/snapshots/cordis-tool-round/session.jsonl")))
    info = analysis.inspect(r)
    assert info["events"] == 60
    assert any("seq 87 where 6 was expected" in p for p in info["problems"])


def test_open_tails_are_exactly_the_two_pin_fixtures():
    open_ones = []
    for p in SESSIONS:
        st = LogReader.open(str(p)).tail_state()
        if st.is_open:
            open_ones.append(rel(p))
            # turn open, no step: the closure is exactly one interrupted turn/end
            assert [e.type for e in st.closure] == ["turn/end"]
            assert st.closure[0].data == {"turn": 1, "reason": {"kind": "interrupted"}}
            assert st.closure[0].synthesized and st.closure[0].seq == 3
    assert sorted(open_ones) == sorted([
        "packages/test-support/acp-snapshot/tests/fixtures/suite/pin-turn/session.jsonl",
        "packages/test-support/acp-snapshot/tests/fixtures/suite/shared-pin/session.jsonl"])


def test_closure_reproduces_dsh_repair_of_tool_outcome_unknown(tmp_path):
    src = fixture("examples/headless-agent/tests/semantic-checkpoint-snapshots/tool-outcome-unknown/session.expected.jsonl")
    lines = src.read_bytes().split(b"\n")
    # rows 1..5 = header + seq 0..4 (the tool/call); dsh's repair appended seq 5, 6, 7
    crashed = tmp_path / "session.jsonl"
    crashed.write_bytes(b"\n".join(lines[:6]) + b"\n")
    st = LogReader.open(str(crashed)).tail_state()
    assert st.is_open
    got = [e.envelope() for e in st.closure]
    want = [json.loads(l) for l in lines[6:9]]
    assert got == want
    assert all(e.synthesized for e in st.closure)


def test_failed_attempt_and_same_step_retry():
    r = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl")))
    evs = r.events()
    tr = find_attempts(evs)
    assert [(a.first_seq, a.last_seq, a.status) for a in tr.attempts] == [(9, 10, "failed"), (13, 17, "committed")]
    failed = tr.attempts[0]
    assert failed.hidden_by_default and failed.failure["code"] == "EMPTY_RESPONSE"
    assert (failed.retry_seq, failed.retry_started_seq, failed.retry_number) == (11, 12, 1)
    assert tr.attempts[1].message_seq == 18
    msgs = analysis.messages(r, as_written=True)            # the v0 spec's derivation
    assert [m["role"] for m in msgs] == ["user", "user", "assistant"]
    assert msgs[-1]["content"] == [{"type": "text", "text": "Recovered."}]
    # today's dsh (through its migration chain, decision 0022): the prompt is the first message
    norm = analysis.messages(r)
    assert [m["role"] for m in norm] == ["system", "user", "user", "assistant"]
    assert norm[1:] == [v4_message(m) for m in msgs]          # (plugin sources: direct kinds, the v3 -> v4 edge)


def test_exact_request_at_dispatch_boundaries():
    r = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl")))
    first = analysis.request_at(r, 9, as_written=True)          # the failed attempt
    retry = analysis.request_at(r, 18, as_written=True)         # the committed message -> its first cited chunk 13
    assert first["boundary"] == 9 and retry["boundary"] == 13
    assert analysis.request_at(r, 15)["boundary"] == 13
    assert analysis.request_at(r, 3)["boundary"] == 9     # step/start: the step's first dispatch
    req = retry["request"]
    assert req["provider"] == "deepseek-official" and req["model"] == "deepseek-v4-flash"
    assert req["system"] == "{{system}}" and req["tools"] == "{{tools}}"     # snapshot placeholders tolerated
    assert req["sessionId"] == "{{sessionId}}"
    assert [m["id"] for m in req["messages"]] == ["04a4b0d6-8873-4ec0-bed5-75de910b556f",
                                                  "1bbd9bae-e790-4b83-8425-2f042dd37908"]
    # a retry re-sends the same request
    assert first["request"] == req
    # today's dsh: no ``system``, the prompt a system-prompt message, then the same messages; toolHistory
    norm = analysis.request_at(r, 18)["request"]
    assert "system" not in norm and norm["tools"] == "{{tools}}" and norm["toolHistory"] == {"tools": [], "updates": []}
    assert norm["messages"][0]["source"] == {"kind": "system-prompt"} and norm["messages"][1:] == [v4_message(m) for m in req["messages"]]
    assert norm["messages"][0]["content"] == [{"type": "text", "text": "{{system}}"}]


def test_exact_request_second_step_carries_tool_round():
    path = fixture("examples/acp-agent/tests/snapshots/packed-chunks/session.jsonl")
    r = LogReader.open(str(path))
    evs = r.events()
    step2_first_chunk = next(e.seq for e in evs if e.type == "assistant/chunk" and e.data["step"] == 2)
    q = analysis.request_at(r, step2_first_chunk, as_written=True)
    roles = [m["role"] for m in q["request"]["messages"]]
    assert roles == ["user", "user", "assistant", "user"]
    tool_result = q["request"]["messages"][-1]["content"][0]
    assert tool_result["type"] == "tool-result" and tool_result["isError"] is True
    # same as folding the prefix by hand
    assert q["request"] == exact_request([e for e in evs if e.seq < step2_first_chunk], r.header.id)
    # today's dsh: the result is a tool message (the v3 -> v4 edge), after the system-prompt head
    norm = analysis.request_at(r, step2_first_chunk)["request"]["messages"]
    assert [m["role"] for m in norm] == ["system", "user", "user", "assistant", "tool"]
    assert norm[-1]["isError"] is True and norm[-1]["toolCallId"] == tool_result["toolCallId"]


def test_compaction_replace_shadows_and_overflow_attempt_fails():
    r = LogReader.open(str(fixture("examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl")))
    evs = r.events()
    sf = fold_surface(evs)
    assert sf.replaced_by == {4: 21} and sf.replaced[21] == [4]
    assert 4 not in sf.nodes and sf.nodes[0] == 21
    tr = find_attempts(evs)
    failed = [a for a in tr.attempts if a.failed]
    assert [(a.first_seq, a.failure["code"], a.retry_seq) for a in failed] == [(18, "CONTEXT_WINDOW_EXCEEDED", None)]
    # the request after compaction: the checkpoint (21) stands where the user prompt (4) was
    q = analysis.request_at(r, 23, as_written=True)
    assert q["boundary"] == 23
    first_text = q["request"]["messages"][0]["content"][0]["text"]
    assert first_text.startswith("This is an automatically generated checkpoint")
    norm = analysis.request_at(r, 23)["request"]["messages"]        # (today's dsh: after the system head)
    assert norm[0]["role"] == "system" and norm[1]["content"][0]["text"] == first_text


def test_empty_assistant_message_is_not_a_model_message():
    r = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/subagent-max-tokens-partial/session.1.jsonl")))
    evs = r.events()
    empties = [e.seq for e in evs if e.type == "assistant/message" and not e.data["message"]["content"]]
    assert len(empties) == 1
    sf = fold_surface(evs)
    assert empties[0] in sf.nodes and empties[0] not in sf.message_seqs()
    assert len(sf.messages()) == len(sf.nodes) - 1
    ends = [e.data["reason"]["kind"] for e in evs if e.type == "turn/end"]
    assert ends == ["max-tokens"]


def test_interrupted_assistant_message_on_cancel():
    r = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/cancel/session.jsonl")))
    evs = r.events()
    tr = find_attempts(evs)
    msg = next(e for e in evs if e.type == "assistant/message")
    a = tr.attempt_of(min(msg.source_event_seqs))
    assert msg.data.get("interrupted") is True and a.status == "interrupted"
    assert evs[-1].type == "turn/end" and evs[-1].data["reason"]["kind"] == "aborted"


def test_packed_rows_round_trip_on_every_fixture():
    n = 0
    for p in SESSIONS:
        for row in raw_rows(p):
            if row.get("type") in PACKED_TAGS:
                members = [e.envelope() for e in expand_packed(row)]
                assert [m["seq"] for m in members] == list(range(row["seq0"], row["seq0"] + len(members)))
                assert pack_events(members) == [row]
                n += 1
    assert n == 144 + 75 + 43       # reasoning-chunks + tool-call-chunks + text-chunks in the corpus


def test_legacy_shapes_are_converted_in_memory():
    r = LogReader.open(str(fixture("apps/web/tests/snapshots/feedback-command/session.jsonl")))
    am = [e for e in r.events() if e.type == "assistant/message"]
    assert am and all(e.legacy == "assistant-message-content-provenance" for e in am)
    m = am[-1].data["message"]
    assert m["role"] == "assistant" and m["source"]["kind"] == "model" and m["source"]["provider"] == "deepseek-official"
    assert [b["type"] for b in m["content"]] == ["reasoning", "text"] and m["content"][1]["text"] == "LIGHTHOUSE"
    assert b'"provenance"' in am[-1].raw            # the stored bytes are untouched
    r = LogReader.open(str(fixture("apps/web/tests/snapshots/code-mode-round/session.jsonl")))
    tr = [e for e in r.events() if e.type == "tool/result"]
    assert tr[0].legacy == "tool-result-callid-content"
    assert tr[0].data["message"]["source"] == {"kind": "tool", "callId": "call_00_6VNoF1gDSerTBKoCfYSH3765"}
    assert all("trigger" not in e.data for e in r.events() if e.type == "turn/start")
    r = LogReader.open(str(fixture("examples/headless-agent/tests/subagent-inheritance-snapshots/parent-override/child.replay.jsonl")))
    um = [e for e in r.events() if e.type == "user/message"]
    assert um[0].data["id"] == f"legacy-message:{r.header.id}:{um[0].seq}"
    r = LogReader.open(str(fixture("packages/test-support/acp-snapshot/tests/fixtures/suite/authored-error/session.jsonl")))
    te = r.events()[0]
    assert te.data["reason"] == {"kind": "error", "error": {"message": "model exploded", "code": "UNKNOWN"}}


def test_request_header_fold_last_wins():
    r = LogReader.open(str(fixture("scripts/snapshots/python-sdk-single-exe/advanced/session.jsonl")))
    evs = r.events()
    hdrs = [e for e in evs if e.type == "request/header"]
    assert [e.data["reason"] for e in hdrs] == ["initial", "change", "change"]
    assert fold_request_header(evs) == {k: v for k, v in hdrs[-1].data["header"].items()
                                        if not (k in ("system", "tools") and v in ("", [], None))}
    before_last = [e for e in evs if e.seq < hdrs[-1].seq]
    assert fold_request_header(before_last)["config"] == hdrs[1].data["header"]["config"]


def test_fork_child_fixture_seed_equals_parent_prefix():
    d = "examples/acp-agent/tests/snapshots/subagent-fork-in-process/"
    parent = LogReader.open(str(fixture(d + "session.jsonl")))
    child = LogReader.open(str(fixture(d + "session.1.jsonl")))
    assert child.header.parentSession == parent.header.id and child.header.seedLength == 42
    ce = child.events()
    pe = parent.events()
    assert [e.raw for e in ce[:42]] == [e.raw for e in pe[:42]]
    assert ce[42].type == "session/end-seed"
    assert analysis.messages(child, through=41, as_written=True) == analysis.messages(parent, through=41, as_written=True)
    # today's dsh migrates each log with its own header id: the same messages, but the system head's id
    # (a hash over the session id) is the child's own
    c, p = analysis.messages(child, through=41), analysis.messages(parent, through=41)
    assert c[1:] == p[1:] and c[0]["role"] == "system" and c[0]["id"] != p[0]["id"]
    assert {k: v for k, v in c[0].items() if k != "id"} == {k: v for k, v in p[0].items() if k != "id"}


def _page_all(r, limit):
    pages = [r.tail_page(limit)]
    while pages[-1].has_more:
        pages.append(r.page_before(pages[-1], limit))
    return pages


@pytest.mark.parametrize("limit", [1, 3, 7, 50])
@pytest.mark.slow
def test_pages_tile_the_log_exactly(limit):
    path = fixture("apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl")
    r = LogReader.open(str(path))
    allev = r.events()
    pages = _page_all(r, limit)
    seqs = [e.seq for p in reversed(pages) for e in p.events]
    assert seqs == [e.seq for e in allev]
    for p in pages:
        counted = [e for e in p.events if e.type in ("user/message", "assistant/message") and e.surface_op == "append"]
        assert len(counted) == p.messages
        if p.has_more:
            assert p.messages == limit
            # the host rule: the page starts at the oldest counted message's group start
            oldest = counted[0]
            assert p.base_seq == min([oldest.seq] + list(oldest.source_event_seqs or []))
    assert not pages[-1].has_more and pages[-1].base_seq == 0


def test_page_before_seq_matches_token_paging():
    r = LogReader.open(str(fixture("apps/web/tests/snapshots/approval-composer/session.jsonl")))
    tail = r.tail_page(5)
    by_token = r.page_before(tail, 5)
    by_seq = r.page_before(tail.base_seq, 5)
    assert [e.seq for e in by_token.events] == [e.seq for e in by_seq.events]
    assert by_token.events[-1].seq == tail.base_seq - 1


def test_index_locates_every_seq():
    path = fixture("apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl")
    from app.log.source.sources import RawJsonlSource
    r = LogReader(RawJsonlSource(str(path), block=4096))     # many small segments
    idx = r.build_index()
    assert len(idx) > 10 and idx.events == 2098 and idx.last == 2097
    for seq in (0, 1, 500, 1234, 2097):
        ev = r.event_at(seq)
        assert ev is not None and ev.seq == seq
    assert r.event_at(5000) is None
