"""Issue 27 item 1 (decision 0022): a v0 log that today's dsh accepts is derived as dsh derives it after
migrating it v0 -> v1 -> v2 -> v3 -> v4.  The expected messages and requests below are worked out by hand
from the edges' rules (spec-versions §4.1-§4.4, dsh's ``session-format-v0-to-v1/src/migration.ts``), not by
Session Lens's code:

* v0 -> v1: a bare ``steering/message`` loses ``turn`` and gets ``id: legacy-message:<sid>:<seq>``, ``role``;
  a wrapped one becomes its inner message; a legacy ``assistant/message {content, provenance}`` and
  ``tool/result {callId, content, isError}`` get a ``message`` with the legacy id, a replacing legacy tool
  result the id of the result it replaces; a compact-plugin user message made while a compaction is open
  gets ``source.compactionId`` (``legacy-compaction:<sid>:<start seq>`` for a start without an id);
* v2 -> v3: the system head after the first ``step/start``, replaced before each header that changes the
  prompt (id: SHA-256 over ``["session-format-v2-to-v3", sid, anchor seq, anchor type]``), and no
  ``system`` in the request;
* v3 -> v4: tool results are ``role: "tool"``, plugin sources get direct kinds; requests carry toolHistory.

``--as-written`` keeps the v0-spec shape.  Over the corpus: every v0 log dsh accepts has a
system-prompt head, tool results as role "tool" and the same user/assistant text as as written."""
from __future__ import annotations

import contextlib
import hashlib
import io
import json
from pathlib import Path

from app.cli.main import main
from app.log.fold.asof import as_of
from app.log.fold.checkpoints import build_checkpoints, request_at as request_at_cp
from app.log.index.reader import LogReader
from app.log.index.verdict import dsh_verdict
from app.log.query import analysis
from app.log.source.sources import RawJsonlSource

from fixtures_util import REPO, ev, write_log

V0 = REPO.parent / "shared" / "fixtures" / "dsh"
TOOL = {"name": "t", "description": "d", "inputSchema": {}}
STEP1, STEP2 = {"turn": 1, "step": 1}, {"turn": 1, "step": 2}


def text(t: str) -> list:
    return [{"type": "text", "text": t}]


def header(seq: int, system: str, reason: str) -> dict:
    return ev(seq, "request/header", {"header": {"config": {"provider": "p", "model": "m"}, "system": system,
                                                 "tools": [TOOL], "messagePrefix": []}, "reason": reason})


def chunk(seq: int, where: dict, c: dict) -> dict:
    return ev(seq, "assistant/chunk", {**where, "chunk": c})


ROWS = [
    ev(0, "turn/start", {"turn": 1, "trigger": {"kind": "user"}}),
    ev(1, "step/start", STEP1),
    ev(2, "user/message", {"content": text("hi"), "source": {"kind": "user"}}, surfaceOp="append"),
    header(3, "S1", "initial"),
    chunk(4, STEP1, {"type": "text-delta", "index": 0, "text": "ok"}),
    chunk(5, STEP1, {"type": "finish", "reason": {"kind": "tool-calls"}}),
    ev(6, "assistant/message", {**STEP1, "content": text("ok") + [{"type": "tool-call", "id": "c1", "name": "t",
                                                                   "input": {}}],
                                "provenance": {"provider": "p", "model": "m"}},
       surfaceOp="append", sourceEventSeqs=[4, 5]),
    ev(7, "tool/result", {**STEP1, "callId": "c1", "content": text("out"), "isError": False}, surfaceOp="append"),
    ev(8, "tool/result", {**STEP1, "callId": "c1", "content": text("out2"), "isError": True},
       surfaceOp={"op": "replace", "start": 7, "end": 7}, sourceEventSeqs=[7]),
    ev(9, "step/end", STEP1),
    ev(10, "step/start", STEP2),
    ev(11, "steering/message", {"turn": 1, "message": {"id": "u11", "role": "user", "content": text("steer"),
                                                       "source": {"kind": "user"}}}, surfaceOp="append"),
    header(12, "S2", "step"),
    chunk(13, STEP2, {"type": "text-delta", "index": 0, "text": "fine"}),
    chunk(14, STEP2, {"type": "finish", "reason": {"kind": "stop"}}),
    ev(15, "assistant/message", {**STEP2, "message": {"id": "a15", "role": "assistant", "content": text("fine"),
                                                      "source": {"kind": "model", "provider": "p", "model": "m"}}},
       surfaceOp="append", sourceEventSeqs=[13, 14]),
    ev(16, "compaction/start", {"turn": 1}),
    ev(17, "user/message", {"id": "u17", "role": "user", "content": text("summary"),
                            "source": {"kind": "plugin", "plugin": "compact"}},
       surfaceOp={"op": "replace", "start": 2, "end": 8}, sourceEventSeqs=[2, 6, 8]),
    ev(18, "compaction/end", {"turn": 1}),
    ev(19, "steering/message", {"turn": 1, "content": text("more"), "source": {"kind": "user"}}, surfaceOp="append"),
    ev(20, "step/end", STEP2),
    ev(21, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
]


def system_id(seq: int, typ: str) -> str:
    return "v2-to-v3-system-" + hashlib.sha256(
        json.dumps(["session-format-v2-to-v3", "s0", seq, typ], separators=(",", ":")).encode()).hexdigest()


def head(seq: int, prompt: str) -> dict:
    return {"id": system_id(seq, "request/header"), "role": "system", "source": {"kind": "system-prompt"},
            "content": text(prompt)}


U2 = {"content": text("hi"), "source": {"kind": "user"}, "id": "legacy-message:s0:2", "role": "user"}
A6 = {"id": "legacy-message:s0:6", "role": "assistant",
      "content": text("ok") + [{"type": "tool-call", "id": "c1", "name": "t", "input": {}}],
      "source": {"provider": "p", "model": "m", "kind": "model"}}
T8 = {"role": "tool", "source": {"kind": "tool", "callId": "c1"}, "toolCallId": "c1", "content": text("out2"),
      "isError": True, "id": "legacy-message:s0:7"}          # (the replaced result's identity)
U11 = {"id": "u11", "role": "user", "content": text("steer"), "source": {"kind": "user"}}
A15 = {"id": "a15", "role": "assistant", "content": text("fine"), "source": {"kind": "model", "provider": "p",
                                                                               "model": "m"}}
U17 = {"id": "u17", "role": "user", "content": text("summary"),
       "source": {"kind": "compact-checkpoint", "compactionId": "legacy-compaction:s0:16"}}
U19 = {"content": text("more"), "source": {"kind": "user"}, "id": "legacy-message:s0:19", "role": "user"}
TOOL_HISTORY = {"tools": [TOOL], "updates": []}


def _log(tmp_path: Path) -> LogReader:
    r = LogReader.open(str(write_log(tmp_path / "session.jsonl", ROWS)))
    assert not [p for p in dsh_verdict(r) if "migration chain" in p.message]          # dsh accepts it
    return r


def _request(msgs: list) -> dict:
    return {"provider": "p", "model": "m", "messages": msgs, "toolHistory": TOOL_HISTORY, "tools": [TOOL],
            "sessionId": "s0"}


def test_a_hand_derived_v0_log_through_the_chain(tmp_path):
    r = _log(tmp_path)
    msgs = analysis.messages(r)
    assert msgs == [head(12, "S2"), U17, U11, A15, U19]
    assert [list(m) for m in msgs] == [list(m) for m in [head(12, "S2"), U17, U11, A15, U19]]      # key order too
    first = analysis.request_at(r, 4)                       # step 1's dispatch: the prompt S1, from its header
    assert first["boundary"] == 4 and first["request"] == _request([head(3, "S1"), U2])
    assert list(first["request"]) == ["provider", "model", "messages", "toolHistory", "tools", "sessionId"]
    second = analysis.request_at(r, 15)                     # step 2's: the prompt S2 replaced the head before 12
    assert second["boundary"] == 13 and second["request"] == _request([head(12, "S2"), U2, A6, T8, U11])
    assert [list(m) for m in second["request"]["messages"]] == [list(m) for m in [head(12, "S2"), U2, A6, T8, U11]]
    # the same from checkpoints (one per 64-byte segment: the chain's state is restored mid-compaction and
    # after the replaced tool result), and the as-of face (its head links to the stored header row)
    r = LogReader(RawJsonlSource(str(tmp_path / "session.jsonl"), block=64))
    r.build_index()
    cps = build_checkpoints(r, every=0)
    assert len(cps.points) > 10 and any(p.v0chain and p.v0chain[0] == 16 for p in cps.points)
    assert any(p.v0chain and p.v0chain[1] == [[8, "id", 7]] for p in cps.points)
    for at, want in ((4, first), (15, second)):
        assert request_at_cp(r, at, cps)["request"] == want["request"]
    st = as_of(r, 21, cps)
    assert st["messages"] == msgs and st["messageSeqs"] == [12, 17, 11, 15, 19]
    st = as_of(r, 13, cps)
    assert st["request"] == second["request"] and st["messageSeqs"][0] == 12
    assert all(s in {row["seq"] for row in ROWS} for s in st["messageSeqs"])


def test_the_hand_derived_log_as_written(tmp_path):
    """``--as-written``: the v0 spec's derivation (the prompt in ``system``, tool results as user messages,
    the codec's legacy ids) and no toolHistory."""
    r = _log(tmp_path)
    req = analysis.request_at(r, 15, as_written=True)["request"]
    assert req["system"] == "S2" and "toolHistory" not in req
    roles = [(m["role"], m["id"]) for m in req["messages"]]
    assert roles[:3] == [("user", "legacy-message:s0:2"), ("assistant", "legacy-message:s0:6"),
                         ("user", "legacy-message:s0:8")]
    assert req["messages"][2]["content"][0]["type"] == "tool-result"
    written = analysis.messages(r, as_written=True)
    assert [m["role"] for m in written] == ["user", "user", "assistant", "user"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["messages", str(tmp_path / "session.jsonl"), "--json"]) == 0
    assert json.loads(out.getvalue())["messages"] == [head(12, "S2"), U17, U11, A15, U19]
    out = io.StringIO()         # (the CLI's flat-memory stream reads the replaced result's row back for its id)
    with contextlib.redirect_stdout(out):
        assert main(["messages", str(tmp_path / "session.jsonl"), "--json", "--through", "12"]) == 0
    assert json.loads(out.getvalue())["messages"] == [head(12, "S2"), U2, A6, T8, U11]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["messages", str(tmp_path / "session.jsonl"), "--json", "--as-written"]) == 0
    assert json.loads(out.getvalue())["messages"] == written


def _texts(msgs: list) -> list:
    return [(m["role"], [b["text"] for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "text"])
            for m in msgs if m.get("role") in ("user", "assistant")
            and any(isinstance(b, dict) and b.get("type") == "text" for b in m.get("content") or [])]


def test_every_accepted_v0_fixture_through_the_chain():
    """Every v0 corpus log dsh accepts (137): a system-prompt head first (where any header sets a prompt),
    every tool result a ``role: "tool"`` message, the same user and assistant text as as written, and no
    request ``system``; a log dsh refuses (32) stays as written."""
    accepted = refused = 0
    for p in sorted(V0.rglob("*.jsonl")):
        r = LogReader.open(str(p))
        if r.header is None or r.version != 0 or r.fatal:
            continue
        norm, written = analysis.messages(r), analysis.messages(r, as_written=True)
        if [x for x in dsh_verdict(r) if "migration chain" in x.message]:
            refused += 1
            assert norm == written, p
            continue
        accepted += 1
        prompts = [e.data["header"].get("system") for e in r.iter_events() if e.type == "request/header"]
        if any(isinstance(s, str) and s for s in prompts):
            assert norm[0]["role"] == "system" and norm[0]["source"] == {"kind": "system-prompt"}, p
            assert norm[0]["id"].startswith("v2-to-v3-system-") and norm[0]["content"][0]["text"] == prompts[-1], p
        assert not any(m["role"] == "system" for m in norm[1:]), p
        wrapped = [m for m in written if m.get("source", {}).get("kind") == "tool"]
        lifted = [m for m in norm if m["role"] == "tool"]
        assert len(lifted) == len(wrapped), p
        assert [m["toolCallId"] for m in lifted] == [m["content"][0]["toolCallId"] for m in wrapped], p
        assert not any(isinstance(b, dict) and b.get("type") == "tool-result" for m in norm for b in m["content"]), p
        assert _texts(norm) == _texts(written), p
    assert (accepted, refused) == (137, 32)
