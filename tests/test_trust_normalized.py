"""Issue 27 item 1: a v3 log's logical faces are derived as today's dsh derives them (it migrates v3 to
v4 first): the system message's source is ``system-prompt``, tool results are ``role: "tool"``
messages, requests carry ``toolHistory``.  ``--as-written`` gives the writer-era shape."""
from __future__ import annotations

import io
import json
import contextlib

from app.cli.main import main
from app.log.fold.checkpoints import build_checkpoints, request_at as request_at_cp
from app.log.index.reader import LogReader
from app.log.query import analysis

from fixtures_util import REPO

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
V3S = sorted(NEXT.rglob("*.v3.jsonl"))
TEAM = NEXT / "0217po+deepseek-harness@507e0e6dfe/snapshots/session/team-targets/session.v3.jsonl"
IMG3 = NEXT / "Hebilicious+deepseek-harness@52b7fb8494/snapshots/sdk/inline-image-prompt/session.v3.jsonl"
IMG4 = NEXT / "Hebilicious+deepseek-harness@4934042113/snapshots/sdk/inline-image-prompt/session.v4.jsonl"


def test_every_v3_log_derives_the_v4_shape():
    assert len(V3S) >= 8
    for p in V3S:
        r = LogReader.open(str(p))
        msgs = analysis.messages(r)
        for m in msgs:
            src = m.get("source") or {}
            assert src.get("kind") != "plugin", (p, m)
            assert not any(isinstance(b, dict) and b.get("type") == "tool-result" for b in m.get("content") or [])
            if m.get("role") == "system":
                assert src.get("kind") == "system-prompt"
        written = analysis.messages(LogReader.open(str(p)), as_written=True)
        assert len(written) >= len(msgs)             # (rule 4 may hide unanswerable calls; ids stay)
        assert {m.get("id") for m in msgs} <= {m.get("id") for m in written}


def test_tool_results_are_lifted_in_the_edge_key_order():
    msgs = analysis.messages(LogReader.open(str(TEAM)))
    tools = [m for m in msgs if m.get("role") == "tool"]
    assert len(tools) == 2
    for m in tools:
        assert list(m)[:4] == ["role", "source", "toolCallId", "content"] and m["toolCallId"] == m["source"]["callId"]
        assert list(m)[-1] == "id" or list(m)[-2] == "id"
    written = analysis.messages(LogReader.open(str(TEAM)), as_written=True)
    assert [m["role"] for m in written if m.get("source", {}).get("kind") == "tool"] == ["user", "user"]


def test_v3_request_equals_its_v4_twin_toolhistory_included():
    r3, r4 = LogReader.open(str(IMG3)), LogReader.open(str(IMG4))
    q3, q4 = analysis.request_at(r3, 17)["request"], analysis.request_at(r4, 17)["request"]
    assert "toolHistory" in q3 and q3 == q4
    cp = request_at_cp(r3, 17, build_checkpoints(r3, every=4))["request"]
    assert cp == q3                                       # the checkpoint path too
    old = analysis.request_at(LogReader.open(str(IMG3)), 17, as_written=True)["request"]
    assert "toolHistory" not in old and old["messages"][0]["source"]["kind"] == "plugin"


def test_cli_as_written():
    def run(*argv):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            assert main([str(a) for a in argv]) == 0
        return json.loads(out.getvalue())
    now = run("messages", TEAM, "--json")["messages"]
    then = run("messages", TEAM, "--json", "--as-written")["messages"]
    assert [m["role"] for m in now].count("tool") == 2 and [m["role"] for m in then].count("tool") == 0
    assert "toolHistory" in run("request", IMG3, "--at", 17, "--json")["request"]
    assert "toolHistory" not in run("request", IMG3, "--at", 17, "--json", "--as-written")["request"]


def test_request_tab_toggle(qtbot):
    from app.ui.request_view import RequestView
    from app.ui.workers import Jobs
    view = RequestView(Jobs())
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.computed, timeout=30_000):
        view.compute(str(IMG3), None, 17)
    assert "toolHistory" in view.result["request"]
    with qtbot.waitSignal(view.computed, timeout=30_000):
        view.as_written.setChecked(True)                 # the writer-era shape, recomputed
    assert "toolHistory" not in view.result["request"]
    assert view.result["request"]["messages"][0]["source"]["kind"] == "plugin"
