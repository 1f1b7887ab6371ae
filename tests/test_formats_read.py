"""Formats v1–v4 read as one model (issue 12, reading part), over every dsh-next log on disk.

Every log opens through every read face with the right formatVersion; twins agree on user
and assistant text, and where a version step changes a message on purpose that exact change
is asserted; crash cuts give dsh's closers in the version's own shape (spec-versions §5).
"""
from __future__ import annotations

import io
import json
import re
import contextlib
from pathlib import Path

import pytest

from app.log.query import analysis
from app.log.fold.folds import derive_messages
from app.log.index.reader import LogReader
from app.log.fold.repair import NOT_STARTED_TEXT, UNKNOWN_TEXT
from app.log.query.stats import compute_stats
from app.log.query.trace import trace_event
from app.log.format.versions import decode_row, file_version, header_version
from app.presenters.registry import views_for_page
from app.store.export import export

from fixtures_util import REPO, fast_sample

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
LOGS = sorted(p for p in NEXT.rglob("*.jsonl"))
IDS = [str(p.relative_to(NEXT)).split("/", 1)[0].split("@")[1] + ":" + "/".join(p.parts[-2:]) for p in LOGS]
SPEC_UNKNOWN = ("The tool call was interrupted after it was recorded, but no result was durably recorded. "
                "Its outcome is unknown. Decide whether to retry from the tool semantics: retry only if the "
                "operation is read-only or idempotent; if it may have side effects, first verify external state "
                "or ask the user. Do not retry blindly.")


def name_version(p: Path) -> int:
    m = re.search(r"\.v(\d+)\.jsonl$", p.name)
    return int(m.group(1)) if m else 0


def find(suffix: str) -> Path:
    got = [p for p in LOGS if str(p).endswith(suffix)]
    assert len(got) == 1, (suffix, got)
    return got[0]


def rows_of(p: Path) -> list:
    return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()]


def test_corpus_is_there():
    assert len(LOGS) == 29                      # 27 newer-format logs + 2 v0 twins (MANIFEST, with the inline-image-prompt v3/v4 twins)
    assert sorted({name_version(p) for p in LOGS}) == [0, 2, 3, 4]


# --------------------------------------------------------------------------- every face, every log

@pytest.mark.parametrize("path", fast_sample(LOGS, spread=3), ids=IDS)
def test_every_face_opens(path, tmp_path):
    want = name_version(path)
    assert file_version(path) == want
    r = LogReader.open(str(path))
    assert r.fatal is None and r.format_version == want
    info = analysis.inspect(r)
    assert info["formatVersion"] == want and "fatal" not in info
    assert not [p for p in info["problems"] if p.startswith(("unknown-type", "bad-", "fold-violation"))], \
        info["problems"]
    n_rows = len(path.read_text(encoding="utf-8").splitlines()) - 1
    assert info["events"] == n_rows             # v2+ and these v0 twins: one event per row
    evs = r.events(logical=True)
    assert [e.seq for e in evs] == list(range(len(evs)))
    msgs = analysis.messages(r)
    assert msgs == derive_messages(evs, version=want)
    # request at every dispatch boundary: v2+ the settlement is the attempt; never its own response
    bounds = analysis.dispatches(r.events())
    assert len(bounds) == info["attempts"]
    for b, _a in bounds:
        if not [e for e in evs if e.type == "request/header" and e.seq < b]:     # dsh built no request (issue 27)
            with pytest.raises(analysis.RequestError, match="no request/header"):
                analysis.request_at(r, b)
            continue
        req = analysis.request_at(r, b)
        assert req["boundary"] == b
        rq = req["request"]
        assert list(rq)[-1] == "sessionId" and "messages" in rq
        if want >= 2:
            settle = next(e for e in evs if e.seq == b)
            assert settle.type in ("assistant/message", "assistant/attempt")
            own = (settle.data.get("message") or {}).get("id") if settle.type == "assistant/message" else None
            assert own is None or own not in [m.get("id") for m in rq["messages"] if m.get("role") == "assistant"] \
                or own.startswith("{{")
        assert ("system" in rq) == (want < 3 and any(
            "system" in (e.data.get("header") or {}) for e in evs if e.type == "request/header" and e.seq < b))
        assert ("toolHistory" in rq) == (want >= 3)          # v3: derived on the v4 shape (issue 27)
    # pages, both faces: older pages chain back to seq 0 and every stored row appears once
    seen = []
    page = r.tail_page(max_messages=2)
    assert page.tail
    logical = page.logical_items()
    assert logical[-len(page.closure):] == page.closure if page.closure else True
    while True:
        seen = [it.seq for it in page.events] + seen
        if not page.has_more:
            break
        page = r.page_before(page, max_messages=2)
    assert seen == list(range(info["events"]))
    # trace of every event, stats, every export
    for e in evs:
        t = trace_event(r, e.seq)
        assert t["target"]["seq"] == e.seq
    st = compute_stats(r)
    assert st is not None
    raw_out = tmp_path / "raw.jsonl"
    export(r, "raw", str(raw_out))
    assert raw_out.read_bytes() == path.read_bytes()        # the stored bytes, in the stored version's shape
    for fmt, name in (("logical", "l.jsonl"), ("markdown", "t.md"), ("html", "t.html"), ("zip", "t.zip")):
        res = export(r, fmt, str(tmp_path / name))
        assert (tmp_path / name).exists(), res


@pytest.mark.parametrize("path", fast_sample(LOGS, spread=3), ids=IDS)
def test_cli_faces(path):
    from app.cli.main import main
    want = name_version(path)
    for argv in (["inspect", str(path), "--json"], ["messages", str(path), "--json"],
                 ["page", str(path), "--json"], ["page", str(path), "--json", "--physical"]):
        buf, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
            try:
                rc = main(argv)
            except SystemExit as e:         # an option this CLI does not have
                rc = e.code
        assert rc == 0, (argv, err.getvalue())
        out = json.loads(buf.getvalue())
        if argv[0] == "inspect":
            assert out["formatVersion"] == want
        if argv[0] == "page":
            seqs = [e["event"]["seq"] for e in out["events"] if "event" in e]
            hidden = {h["firstSeq"] for h in out["hiddenAttempts"]}
            assert not hidden & set(seqs)                  # hidden attempts (v2+: assistant/attempt) left out
            r = LogReader.open(str(path))
            from app.log.fold.attempts import find_attempts
            failed = {a.first_seq for a in find_attempts(r.events()).attempts if a.failed}
            assert hidden == failed


# --------------------------------------------------------------------------- the entry point

def test_entry_point_versions_and_rows():
    assert header_version(b'{"type":"session","id":"x"}') == 0
    assert header_version({"type": "session", "version": 4}) == 4
    assert header_version(b"not json") is None
    items, probs = decode_row(b'{"type":"tool/result","seq":9,"time":1,"data":{"turn":1,"step":1,"message":'
                              b'{"role":"tool","toolCallId":"c","content":[]}},"surfaceOp":"append",'
                              b'"sourceEventSeqs":[[2,5],7]}', 4)
    (ev,) = items
    assert ev.seq == 9 and ev.source_event_seqs == [2, 3, 4, 5, 7] and ev.known and not probs
    assert b"[[2,5],7]" in ev.raw                           # stored bytes unchanged
    items, probs = decode_row(b'{"type":"assistant/chunk","seq":1,"time":0,"data":{}}', 2)
    assert not items[0].known                               # no top-level chunks from v2 on
    items, _ = decode_row(b'{"type":"text-chunks","seq0":3,"time0":0,"data":{"turn":1,"step":1,"index":0,'
                          b'"dt":[],"texts":["a"]}}', 3)
    assert items[0].kind == "bad-packed"
    # v0 keeps its own reading: pairs are not expanded there
    items, _ = decode_row(b'{"type":"user/message","seq":4,"time":0,"data":{"id":"u","role":"user","content":[]},'
                          b'"surfaceOp":"append","sourceEventSeqs":[[0,2]]}', 0)
    assert items[0].source_event_seqs == [[0, 2]]


# --------------------------------------------------------------------------- twins

def _texts(msgs, role):
    out = []
    for m in msgs:
        if m.get("role") == role:
            out.append("".join(b.get("text", "") for b in m.get("content") or []
                               if isinstance(b, dict) and b.get("type") == "text"))
    return out


TWINS = [("suite/plain-turn/session.jsonl", "suite/plain-turn/session.v2.jsonl", "suite/plain-turn/session.v3.jsonl"),
         ("suite/pin-turn/session.jsonl", "suite/pin-turn/session.v2.jsonl", "suite/pin-turn/session.v3.jsonl"),
         ("preview-showcase/session.v2.jsonl", "preview-showcase/session.v3.jsonl"),
         ("preview-follow-up-builder/session.v2.jsonl", "preview-follow-up-builder/session.v3.jsonl")]


@pytest.mark.parametrize("group", TWINS, ids=lambda g: g[0].rsplit("/", 1)[0])
def test_twins_same_user_and_assistant_text(group):
    derived = []
    for rel in group:
        r = LogReader.open(str(find(rel)))
        derived.append((r.version, analysis.messages(r, as_written=True)))     # the writer-era shapes
    base = derived[0][1]
    for v, msgs in derived[1:]:
        assert _texts(msgs, "user") == _texts(base, "user")
        assert _texts(msgs, "assistant") == _texts(base, "assistant")
        assert [m for m in msgs if m.get("role") not in ("system",)] == \
            [m for m in base if m.get("role") not in ("system",)] or v == 3


def test_twins_v2_to_v3_system_prompt_becomes_a_message():
    """suite/plain-turn: v2 carries the prompt in request/header.header.system (request key
    ``system``); v3 has it as the first surface message, and the request has no ``system``."""
    r2 = LogReader.open(str(find("suite/plain-turn/session.v2.jsonl")))
    r3 = LogReader.open(str(find("suite/plain-turn/session.v3.jsonl")))
    b2, _ = analysis.dispatches(r2.events())[0]
    b3, _ = analysis.dispatches(r3.events())[0]
    q2, q3 = analysis.request_at(r2, b2)["request"], analysis.request_at(r3, b3, as_written=True)["request"]
    assert q2["system"] == "{{system}}" and "system" not in q3
    assert [m["role"] for m in q3["messages"]] == ["system"]
    assert q3["messages"][0]["content"] == [{"type": "text", "text": q2["system"]}]
    assert [m for m in q3["messages"] if m["role"] != "system"] == q2["messages"]
    q2.pop("system")
    q3["messages"] = q3["messages"][1:]
    assert q2 == q3                                 # nothing else differs


def test_v3_request_takes_the_live_system_message_after_a_head_replacement():
    """suite/pin-turn v3: step 2 replaces the head (startSeq/endSeq): the request after it
    holds the replacing system message (seq 7), not the shadowed one (seq 3)."""
    p = find("suite/pin-turn/session.v3.jsonl")
    r = LogReader.open(str(p))
    evs = r.events()
    rep = evs[6]
    assert rep.type == "system/message" and rep.surface_op == {"op": "replace", "startSeq": 2, "endSeq": 2}
    from app.log.fold.folds import fold_surface
    sf = fold_surface(evs[:6])
    assert sf.nodes == [2] and sf.messages() == [evs[2].data["message"]]
    sf = fold_surface(evs)
    assert sf.nodes == [6] and sf.replaced == {6: [2]} and not sf.violations
    assert sf.messages() == [rep.data["message"]] and rep.data["message"]["id"] != evs[2].data["message"]["id"]


def test_tool_result_role_changes_v3_to_v4():
    """v3 tool results are role:user wrappers; v4 results are role:"tool" with a top-level
    toolCallId; both are read as the answer of their call (presenter, repair, stats)."""
    for rel, role in (("team-targets/session.v3.jsonl", "user"), ("tool-call-turn/session.v4.jsonl", "tool")):
        r = LogReader.open(str(find(rel)))
        evs = r.events()
        results = [e for e in evs if e.type == "tool/result"]
        assert results and all(e.data["message"]["role"] == role for e in results)
        views = views_for_page(evs)
        calls = {e.data["callId"] for e in evs if e.type == "tool/call"}
        for e in results:
            v = views.get(e.seq)
            assert v is not None, (rel, e.seq)
        msgs = analysis.messages(r)
        answered = {m.get("toolCallId") for m in msgs if m.get("role") == "tool"} | {
            b.get("toolCallId") for m in msgs if m.get("role") == "user"
            for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool-result"}
        assert calls <= answered
        assert not r.tail_state().closure


def test_presenter_v4_results_error_and_text():
    r = LogReader.open(str(find("cancel-tool-calls/session.v4.jsonl")))
    evs = r.events()
    views = views_for_page(evs)
    res = [e for e in evs if e.type == "tool/result"]
    assert len(res) == 2
    assert all(views[e.seq]["status"] == "error" for e in res)
    r = LogReader.open(str(find("tool-call-turn/session.v4.jsonl")))
    evs = r.events()
    views = views_for_page(evs)
    (res,) = [e for e in evs if e.type == "tool/result"]
    v = views[res.seq]
    assert v["status"] == "ok" and "SNAPSHOT_OK" in json.dumps(v)


# --------------------------------------------------------------------------- v2 attempts, v4 specials

def test_v2_assistant_attempt_is_a_hidden_attempt_with_its_reason():
    r = LogReader.open(str(find("suite/plain-turn/session.v2.jsonl")))
    info = analysis.inspect(r)
    assert info["hiddenAttempts"] == 1
    (a,) = info["failedAttempts"]
    assert a["firstSeq"] == a["lastSeq"] == 3 and a["chunks"] == 1 and a["messageSeq"] is None
    from app.log.fold.attempts import find_attempts
    (att,) = find_attempts(r.events()).attempts
    assert att.failure_reason().startswith("abandoned") and att.text == ["hi"]
    r = LogReader.open(str(find("python-sdk-single-exe/advanced/session.v4.jsonl")))
    failed = [a for a in find_attempts(r.events()).attempts if a.failed]
    assert [(a.first_seq, a.failure_reason()) for a in failed] == [(17, "IMAGE_OFFLOAD_REQUIRED: authored image budget failure")]


def test_v2_embedded_stream_attempt_matches_its_message():
    from app.log.fold.attempts import find_attempts
    r = LogReader.open(str(find("f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl")))
    evs = r.events()
    atts = find_attempts(evs).attempts
    msgs = [e for e in evs if e.type == "assistant/message"]
    assert [a.message_seq for a in atts] == [e.seq for e in msgs]
    for a, e in zip(atts, msgs):
        assert a.finish is not None and a.chunks > 1 and a.usage == e.data.get("usage", a.usage)


def test_v4_image_offload_projects_earlier_image_only_after_it():
    r = LogReader.open(str(find("f4a32dbd0a/scripts/snapshots/python-sdk-single-exe/advanced/session.v4.jsonl")))
    evs = r.events()
    assert evs[18].type == "image/offload" and evs[13].type == "user/message"
    before = analysis.request_at(r, 17)["request"]["messages"]
    after_b = next(b for b, _ in analysis.dispatches(evs) if b > 18)
    after = analysis.request_at(r, after_b)["request"]["messages"]
    img_before = [m for m in before if m.get("id") == evs[13].data["id"] and m["content"][0]["type"] == "image"]
    img_after = [m for m in after if m.get("id") == evs[13].data["id"] and m["content"][0]["type"] == "image"]
    assert img_before and "offloaded" not in img_before[0]["content"][0]
    assert img_after and img_after[0]["content"][0]["offloaded"] is True
    assert {k: v for k, v in img_after[0]["content"][0].items() if k != "offloaded"} == img_before[0]["content"][0]
    assert evs[13].data["content"][0].get("offloaded") is None          # the stored event is untouched
    hdr = [e for e in evs if e.type == "request/header" and 18 < e.seq < after_b]
    assert [e.data["reason"] for e in hdr] == ["series"]


def test_v4_tool_history_follows_developer_tool_updates():
    """dynamic-tool-prompt-updates: header 20 (change) adds snapshot_ping, developer/message 21
    (headerSeq 20) records the addition; header 27 (change) drops it, developer/message 28 the
    removal.  The series baseline stays header 11 (no series/startsSeries), so toolHistory is
    header 11's tools plus the recorded updates, in order."""
    r = LogReader.open(str(find("dynamic-tool-prompt-updates/session.v4.jsonl")))
    evs = r.events()
    tools = {e.seq: e.data["header"]["tools"] for e in evs if e.type == "request/header"}
    assert sorted(tools) == [11, 20, 27] and set(tools[20]) - set(tools[11]) == {"snapshot_ping"}
    got = {b: analysis.request_at(r, b)["request"]["toolHistory"] for b, _ in analysis.dispatches(evs)}
    add = {"messageId": evs[21].data["message"]["id"], "additions": ["snapshot_ping"]}
    rem = {"messageId": evs[28].data["message"]["id"], "additions": []}
    assert got == {14: {"tools": tools[11], "updates": []}, 22: {"tools": tools[11], "updates": [add]},
                   29: {"tools": tools[11], "updates": [add, rem]}}
    # the request's tools are still the latest header's (not the history)
    assert analysis.request_at(r, 22)["request"]["tools"] == tools[20]
    # developer messages with content are model-visible surface messages
    msgs = analysis.messages(r)
    assert [m["role"] for m in msgs].count("developer") == 2


def test_v4_early_and_late_source_kinds_both_read():
    early = LogReader.open(str(find("f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl")))
    late = LogReader.open(str(find("321a6fa740/snapshots/acp/image-compaction/session.v4.jsonl")))
    k_early = [m["source"]["kind"] for m in analysis.messages(early) if m["role"] == "system"]
    k_late = [m["source"]["kind"] for m in analysis.messages(late) if m["role"] == "system"]
    assert k_early == ["plugin"] and k_late == ["system-prompt"]


def test_v4_fork_child_inherited_cut_is_the_tagged_end_seed():
    from app.log.format.versions import inherited_count
    r = LogReader.open(str(find("subagent-fork-in-process/session.1.v4.jsonl")))
    assert r.header.isSeeded is True
    evs = r.events()
    n = inherited_count(evs, r.header)
    # the fixture has the tagged marker at seq 17 (spec §7.1; the MANIFEST table says 19)
    assert n == 17 and evs[16].type == "turn/end" and evs[n].type == "session/end-seed" and evs[n].data == {"inherited": True}
    r3 = LogReader.open(str(find("preview-architecture-review/session.v3.jsonl")))
    assert inherited_count(r3.events(), r3.header) == 169


# --------------------------------------------------------------------------- crash cuts

def _cut(path: Path, n_rows: int, tmp: Path, torn: bool = False) -> Path:
    lines = path.read_bytes().split(b"\n")[:-1]
    body = b"\n".join(lines[:1 + n_rows]) + b"\n"
    if torn and 1 + n_rows < len(lines):
        nxt = lines[1 + n_rows]
        body += nxt[: max(1, len(nxt) // 2)]
    out = tmp / f"cut{n_rows}{'t' if torn else ''}.jsonl"
    out.write_bytes(body)
    return out


def _expected_closers(evs, version):
    """Spec-versions §5.1/§5.2 written out for the test (insertion-ordered pending calls)."""
    turn = step = None
    pending: dict = {}
    for e in evs:
        d = e.data if isinstance(e.data, dict) else {}
        if e.type == "turn/start":
            turn, step, pending = d["turn"], None, {}
        elif e.type == "turn/end":
            turn, step, pending = None, None, {}
        elif e.type == "step/start":
            step = d["step"]
        elif e.type == "step/end":
            step, pending = None, {}
        elif e.type == "assistant/message":
            for b in d["message"].get("content") or []:
                if b.get("type") == "tool-call":
                    if version >= 4:
                        pending[b["id"]] = [d["turn"], d["step"], None]
                    else:
                        pending.setdefault(b["id"], [d["turn"], d["step"], None])
        elif e.type == "tool/call" and d.get("callId") in pending:
            pending[d["callId"]][2] = e.seq
        elif e.type == "tool/result":
            m = d["message"]
            cid = (m.get("source") or {}).get("callId") or m.get("toolCallId")
            if cid in pending and (version < 4 or (e.surface_op == "append" and
                                                   pending[cid][:2] == [d["turn"], d["step"]])):
                del pending[cid]
    if turn is None:
        return []
    seq = evs[-1].seq + 1
    out = []
    for cid, (t, s, cseq) in pending.items():
        text = SPEC_UNKNOWN if cseq is not None else NOT_STARTED_TEXT
        mid = f"interrupted-tool-result-{cid}-{seq}"
        if version >= 4:
            msg = {"id": mid, "role": "tool", "toolCallId": cid, "isError": True,
                   "source": {"kind": "tool", "callId": cid}, "content": [{"type": "text", "text": text}]}
        else:
            msg = {"id": mid, "role": "user", "source": {"kind": "tool", "callId": cid},
                   "content": [{"type": "tool-result", "toolCallId": cid, "isError": True,
                                "content": [{"type": "text", "text": text}]}]}
        err = ({"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"} if cseq is not None
               else {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"})
        env = {"type": "tool/result", "seq": seq, "time": evs[-1].time,
               "data": {"turn": t if version >= 4 else turn, "step": s if version >= 4 else step,
                        "message": msg, "error": err}}
        if cseq is not None:
            env["sourceEventSeqs"] = [cseq]
        env["surfaceOp"] = "append"
        out.append(env)
        seq += 1
    if step is not None:
        out.append({"type": "step/end", "seq": seq, "time": evs[-1].time, "data": {"turn": turn, "step": step}})
        seq += 1
    out.append({"type": "turn/end", "seq": seq, "time": evs[-1].time,
                "data": {"turn": turn, "reason": {"kind": "interrupted"}}})
    return out


def test_unknown_text_is_dsh_text():
    assert UNKNOWN_TEXT == SPEC_UNKNOWN


@pytest.mark.parametrize("path", fast_sample([p for p in LOGS if name_version(p) >= 2], spread=3), ids=[
    i for p, i in zip(LOGS, IDS) if name_version(p) >= 2])
def test_crash_cuts_give_the_versions_closers(path, tmp_path):
    version = name_version(path)
    full = LogReader.open(str(path)).events()
    inside = [i for i in range(1, len(full) + 1)
              if _expected_closers(full[:i], version)]      # cuts that end inside a turn
    assert inside or all(e.type != "turn/start" for e in full)
    n_tool = 0
    for n in inside:
        for torn in (False, True):
            p = _cut(path, n, tmp_path, torn)
            r = LogReader.open(str(p))
            assert r.format_version == version
            st = r.tail_state()
            evs = r.events()
            assert len(evs) == n
            want = _expected_closers(evs, version)
            got = [e.envelope() for e in st.closure]
            assert got == want, (n, torn)
            assert all(e.synthesized for e in st.closure)
            n_tool += sum(1 for e in got if e["type"] == "tool/result")
            if torn and n < len(full):
                assert len(st.dropped) == 1 and st.dropped[0].kind == "torn"
            # the logical face ends with the closers; the request after a crash sees them
            msgs = analysis.messages(r, as_written=True)        # (the closers in the version's own shape)
            for e in st.closure:
                if e.type == "tool/result":
                    assert e.data["message"] in msgs
    if any(e.type == "tool/call" for e in full):
        assert n_tool > 0


def test_crash_cut_v4_after_tool_call_exact_closers(tmp_path):
    p = find("f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl")
    r = LogReader.open(str(_cut(p, 15, tmp_path)))           # through seq 14, the tool/call
    cid = "call_00_Rn2Mz1y8uZN62ukEXiNO2077"
    got = [e.envelope() for e in r.tail_state().closure]
    assert [e["type"] for e in got] == ["tool/result", "step/end", "turn/end"]
    res = got[0]
    assert res["seq"] == 15 and res["sourceEventSeqs"] == [14] and res["surfaceOp"] == "append"
    assert list(res["data"]["message"]) == ["id", "role", "toolCallId", "isError", "source", "content"]
    assert res["data"]["message"]["id"] == f"interrupted-tool-result-{cid}-15"
    assert res["data"]["message"]["role"] == "tool" and res["data"]["message"]["toolCallId"] == cid
    assert res["data"]["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    assert got[2]["data"] == {"turn": 1, "reason": {"kind": "interrupted"}}
    # cut before the tool/call: not started
    r = LogReader.open(str(_cut(p, 14, tmp_path)))
    res = r.tail_state().closure[0]
    assert res.data["error"]["code"] == "TOOL_NOT_STARTED" and res.source_event_seqs is None
    assert res.data["message"]["content"][0]["text"] == NOT_STARTED_TEXT


def test_crash_cut_v3_keeps_the_user_wrapper_shape(tmp_path):
    p = find("team-targets/session.v3.jsonl")
    full = LogReader.open(str(p)).events()
    call = next(e for e in full if e.type == "tool/call")
    r = LogReader.open(str(_cut(p, call.seq + 1, tmp_path)))
    res = r.tail_state().closure[0]
    m = res.data["message"]
    assert m["role"] == "user" and m["content"][0]["type"] == "tool-result" and "toolCallId" not in m
    assert m["id"] == f"interrupted-tool-result-{call.data['callId']}-{call.seq + 1}"


# --------------------------------------------------------------------------- history rows (v2+ streams)

def test_history_rows_hide_a_v2_attempt_and_show_embedded_chunks():
    from app.log.fold.attempts import find_attempts
    from app.ui.history.rows import build_rows
    r = LogReader.open(str(find("suite/plain-turn/session.v2.jsonl")))
    items = r.items()
    tr = find_attempts(r.events())
    rows = build_rows(items, tr, {}, False, set())
    assert [x.seq for x in rows] == [0, 1, 2]                  # the attempt (seq 3) is hidden
    rows = build_rows(items, tr, {}, True, set())
    (row,) = [x for x in rows if x.kind == "attempt-failed"]
    assert row.seq == 3 and "hidden" in row.marks and row.copy_text() == "hi"
    assert "abandoned" in row.search_text() or "without a message" in row.search_text()
    # a v4 assistant message row carries its embedded chunks (text and reasoning as streamed)
    r = LogReader.open(str(find("f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl")))
    evs = r.events()
    rows = build_rows(r.items(), find_attempts(evs), {}, False, set())
    arows = [x for x in rows if x.kind == "assistant"]
    assert len(arows) == 2
    for x in arows:
        streamed = "".join(c.data["chunk"].get("text", "") for c in x.chunks
                           if c.data["chunk"]["type"] in ("text-delta", "reasoning-delta"))
        stored = "".join(b.get("text", "") for b in x.event.data["message"]["content"]
                         if b["type"] in ("text", "reasoning"))
        assert x.chunks and streamed == stored and all(c.seq == x.seq for c in x.chunks)


def test_v1_reads_as_v0_with_range_encoded_source_seqs(tmp_path):
    """v1 has no real log (spec §1): a v0 log relabelled v1, with one sourceEventSeqs run
    written as a [start,end] pair, derives the same messages as the v0 original."""
    from fixtures_util import fixture
    src = fixture("examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl")
    lines = src.read_bytes().split(b"\n")
    hdr = json.loads(lines[0])
    hdr["version"] = 1
    out, changed = [json.dumps(hdr).encode()], 0
    for ln in lines[1:]:
        if ln and b'"sourceEventSeqs"' in ln:
            row = json.loads(ln)
            ses = row["sourceEventSeqs"]
            if len(ses) >= 3 and ses == list(range(ses[0], ses[0] + len(ses))):
                row["sourceEventSeqs"] = [[ses[0], ses[-1]]]
                ln = json.dumps(row).encode()
                changed += 1
        out.append(ln)
    v1 = tmp_path / "session.v1.jsonl"
    v1.write_bytes(b"\n".join(out))
    r0, r1 = LogReader.open(str(src)), LogReader.open(str(v1))
    assert r1.format_version == 1 and r1.fatal is None
    assert analysis.messages(r1) == analysis.messages(r0)
    e0, e1 = r0.events(), r1.events()
    assert [e.source_event_seqs for e in e1] == [e.source_event_seqs for e in e0]
    assert len(e0) == len(e1) and changed == 2


# --------------------------------------------------------------------------- synth v4

@pytest.mark.parametrize("seed", [3, 8])
@pytest.mark.slow
def test_synth_v4_is_the_v0_session_in_v4_shape(seed, tmp_path):
    from app.tools.synth import SessionSynth, write_jsonl
    p4, p0 = tmp_path / "session.v4.jsonl", tmp_path / "session.jsonl"
    s4 = write_jsonl(str(p4), SessionSynth(seed, version=4), turns=25)
    write_jsonl(str(p0), SessionSynth(seed), turns=25)
    r4, r0 = LogReader.open(str(p4)), LogReader.open(str(p0))
    i4, i0 = analysis.inspect(r4), analysis.inspect(r0)
    assert i4["formatVersion"] == 4 and i4["problems"] == [] and s4["rows"] == s4["events"] == i4["events"]
    for k in ("turns", "attempts", "hiddenAttempts"):
        assert i4[k] == i0[k]
    assert all(json.loads(x).get("type") not in ("assistant/chunk", "text-chunks", "reasoning-chunks",
                                                 "tool-call-chunks") for x in p4.read_text().splitlines()[1:])
    m4, m0 = analysis.messages(r4), analysis.messages(r0)
    assert [m for m in m4 if m["role"] == "system"][0]["content"][0]["text"] == \
        json.loads(p0.read_text().splitlines()[next(i for i, x in enumerate(p0.read_text().splitlines())
                                                     if '"request/header"' in x)])["data"]["header"]["system"]
    def norm(m):        # a v0 tool result (role user + tool-result wrapper) vs v4 role:"tool"
        if m["role"] == "user" and (m.get("source") or {}).get("kind") == "tool":
            (blk,) = m["content"]
            return ("tool", m["id"], blk["toolCallId"], blk["content"], bool(blk.get("isError")))
        if m["role"] == "tool":
            return ("tool", m["id"], m["toolCallId"], m["content"], m["isError"])
        return (m["role"], m["id"], m["content"])
    assert [norm(m) for m in m4 if m["role"] != "system"] == [norm(m) for m in m0 if m["role"] != "system"]
    # (today's dsh reads the v0 log through its migration chain: the prompt is its system-prompt head too)
    assert [(m["role"], m["source"], m["content"]) for m in m0 if m["role"] == "system"] == \
        [(m["role"], m["source"], m["content"]) for m in m4 if m["role"] == "system"][:1]
    assert [norm(m) for m in analysis.messages(r0, as_written=True)] == [norm(m) for m in m0 if m["role"] != "system"]
    assert any(m["role"] == "tool" for m in m4)
    # a crash of the v4 log gives v4 closers
    pc = tmp_path / "crash.v4.jsonl"
    write_jsonl(str(pc), SessionSynth(seed, version=4), turns=6, crash="torn")
    rc = LogReader.open(str(pc))
    evs = rc.events()
    st = rc.tail_state()
    assert st.closure and [e.envelope() for e in st.closure] == _expected_closers(evs, 4)


def test_inspect_inherited_cut_and_seed_marker_check(tmp_path):
    r = LogReader.open(str(find("preview-architecture-review/session.v3.jsonl")))
    i = analysis.inspect(r)
    assert i["inheritedEvents"] == 169 and not [p for p in i["problems"] if p.startswith("seed-marker")]
    # the same child with isSeeded false: a format error dsh refuses, reported
    p = find("preview-architecture-review/session.v3.jsonl")
    lines = p.read_text(encoding="utf-8").split("\n")
    hdr = json.loads(lines[0])
    hdr["isSeeded"] = False
    bad = tmp_path / "session.v3.jsonl"
    bad.write_text("\n".join([json.dumps(hdr)] + lines[1:]), encoding="utf-8")
    i = analysis.inspect(LogReader.open(str(bad)))
    assert any(p.startswith("seed-marker") and "169" in p for p in i["problems"])
    i = analysis.inspect(LogReader.open(str(find("rec-child/session.1.v3.jsonl"))))
    assert i["inheritedEvents"] == 0 and not [p for p in i["problems"] if p.startswith("seed-marker")]


def test_diffs_on_newer_formats():
    from app.log.query.diff import attempt_diff, fork_diff, request_diff
    r = LogReader.open(str(find("f4a32dbd0a/scripts/snapshots/python-sdk-single-exe/advanced/session.v4.jsonl")))
    (step,) = [d for d in attempt_diff(r) if d["failed"]]
    assert step["failed"][0]["firstSeq"] == 17 and step["failed"][0]["failure"]["code"] == "IMAGE_OFFLOAD_REQUIRED"
    assert step["committed"]["streamed"]["toolCalls"] == step["committed"]["toolCalls"]   # stream = message
    bounds = [b for b, _ in analysis.dispatches(r.events())]
    d = request_diff(r, bounds[0], bounds[1])
    assert d["requests"]["a"] == analysis.request_at(r, bounds[0])["request"]
    assert d["requests"]["b"] == analysis.request_at(r, bounds[1])["request"]
    assert "toolHistory" in d["requests"]["a"] and d["messages"]["changed"]          # the offloaded image
    child = LogReader.open(str(find("preview-architecture-review/session.v3.jsonl")))
    parent = LogReader.open(str(find("30f71de5f3/packages/experimental/webworker-runtime/tests/fixtures/vfs-example/"
                                     "home/sessions/--dsh-workspace--/preview-showcase/session.v3.jsonl")))
    fd = fork_diff(child, parent)
    assert fd["seedLength"] == fd["endSeedSeq"] == 169 and fd["seedLengthOk"] and fd["endSeedOk"]
    assert fd["commonPrefix"] == 169 and not fd["problems"]


def test_stats_v4_equal_the_v0_twin_and_fixture_outcomes(tmp_path):
    from app.tools.synth import SessionSynth, write_jsonl
    p4, p0 = tmp_path / "session.v4.jsonl", tmp_path / "session.jsonl"
    write_jsonl(str(p4), SessionSynth(5, version=4), turns=20)
    write_jsonl(str(p0), SessionSynth(5), turns=20)
    s4, s0 = compute_stats(LogReader.open(str(p4))), compute_stats(LogReader.open(str(p0)))

    def strip(s):       # seqs differ (one event per row); tokens, latencies, outcomes must not
        return [{k: v for k, v in st.items() if k != "startSeq"} for st in s["steps"]]
    assert strip(s4) == strip(s0) and s4["totals"] == s0["totals"] and s4["turns"] == s0["turns"]
    st = compute_stats(LogReader.open(str(find("cancel-tool-calls/session.v4.jsonl"))))
    outs = [x["toolOutcomes"] for x in st["steps"] if x["toolOutcomes"]]
    assert outs == [{"bash": {"error:ABORTED": 1, "error:ABORTED_BEFORE_DISPATCH": 1}}]
    st = compute_stats(LogReader.open(str(find("f4a32dbd0a/scripts/snapshots/python-sdk-single-exe/advanced/"
                                                "session.v4.jsonl"))))
    assert st["steps"][0]["errors"] == ["IMAGE_OFFLOAD_REQUIRED"] and st["steps"][0]["failedAttempts"] == 1


@pytest.mark.slow
def test_trace_v4_matches_the_v0_twin(tmp_path):
    """The same synthetic session in v0 and v4: every message is part of as many requests,
    and has the same surface status, whatever the seqs are."""
    from app.tools.synth import SessionSynth, write_jsonl
    p4, p0 = tmp_path / "session.v4.jsonl", tmp_path / "session.jsonl"
    write_jsonl(str(p4), SessionSynth(9, version=4), turns=8)
    write_jsonl(str(p0), SessionSynth(9), turns=8)
    r4, r0 = LogReader.open(str(p4)), LogReader.open(str(p0))

    def by_id(r):
        out = {}
        for e in r.events():
            m = e.data if e.type == "user/message" else (e.data.get("message") if e.type in (
                "assistant/message", "tool/result") else None)
            if isinstance(m, dict) and m.get("id"):
                out[m["id"]] = e.seq
        return out
    i4, i0 = by_id(r4), by_id(r0)
    assert set(i4) == set(i0) and len(i4) > 20
    for mid in list(i4)[::3]:
        t4, t0 = trace_event(r4, i4[mid]), trace_event(r0, i0[mid])
        assert t4["surface"] == t0["surface"] and t4["requests"]["count"] == t0["requests"]["count"], mid
        assert t4["requests"]["dispatches"] == t0["requests"]["dispatches"]
