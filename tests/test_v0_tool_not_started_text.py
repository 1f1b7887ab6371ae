"""v0 difference 1 (issue 12): the synthesized not-started tool result uses dsh's exact text.

It is model-visible, so the derived messages, the request after a crash and a fork's seed
all carry it."""
from __future__ import annotations

import json

from app.log.query import analysis
from app.log.index.reader import LogReader
from app.store.forking import fork

from fixtures_util import ev, write_log

DSH_TEXT = ("The tool call was interrupted before the Harness recorded it as started. "
            "Retry it if it is still needed.")


def crashed_log(tmp_path):
    call = {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}
    return write_log(tmp_path / "store" / "session.jsonl", [
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "user/message", {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hi"}],
                               "source": {"kind": "user"}}, surfaceOp="append"),
        ev(2, "step/start", {"turn": 1, "step": 1}),
        ev(3, "assistant/message", {"turn": 1, "step": 1, "message": {
            "id": "a1", "role": "assistant", "content": [call], "source": {"kind": "model", "provider": "p",
                                                                              "model": "m"}}},
           surfaceOp="append", sourceEventSeqs=[]),
    ])                                                    # crash: the call never logged tool/call


def test_closer_text_in_messages_and_closure(tmp_path):
    r = LogReader.open(str(crashed_log(tmp_path)))
    closure = r.tail_state().closure
    assert [e.type for e in closure] == ["tool/result", "step/end", "turn/end"]
    res = closure[0]
    assert res.data["error"] == {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    assert res.data["message"]["content"][0]["content"] == [{"type": "text", "text": DSH_TEXT}]
    assert res.data["message"]["id"] == "interrupted-tool-result-c1-4" and res.source_event_seqs is None
    last = analysis.messages(r)[-1]
    assert last["content"][0]["content"][0]["text"] == DSH_TEXT


def test_fork_seed_carries_the_exact_text(tmp_path):
    r = LogReader.open(str(crashed_log(tmp_path)))
    res = fork(r)
    assert res["synthesized"] == [4, 5, 6]
    rows = [json.loads(x) for x in open(res["child"], "rb").read().splitlines()]
    assert rows[5]["type"] == "tool/result"
    assert rows[5]["data"]["message"]["content"][0]["content"][0]["text"] == DSH_TEXT
