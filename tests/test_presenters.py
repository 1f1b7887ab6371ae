"""Presenters on real fixture data: every tool row gets a view; the host's same-page rule holds."""
from __future__ import annotations

import json

from app.log.model import Event
from app.log.reader import LogReader
from app.presenters import present_call, views_for_page
from fixtures_util import fixture, session_files


def test_every_tool_row_of_the_corpus_gets_a_view_without_errors():
    for p in session_files():
        evs = LogReader.open(str(p)).events()
        views = views_for_page(evs)
        for e in evs:
            if e.type in ("tool/call", "tool/result"):
                v = views[e.seq]
                assert v["for"] == ("call" if e.type == "tool/call" else "result")
                assert not str(v.get("fallback") or "").startswith("presenter-error"), (p, e.seq, v)
                assert all(isinstance(s["text"], str) for s in v["sections"])


def test_bash_call_and_blocked_result():
    evs = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/packed-chunks/session.jsonl"))).events()
    views = views_for_page(evs)
    call = next(e for e in evs if e.type == "tool/call")
    res = next(e for e in evs if e.type == "tool/result")
    assert views[call.seq]["card"] == "terminal" and views[call.seq]["command"] == "echo HELLO"
    rv = views[res.seq]
    assert rv["status"] == "error" and rv["sections"][0]["text"] == "Error: bash is disabled by policy in this session"


def test_edit_yields_a_diff_and_todo_items():
    evs = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/fs-edit/session.jsonl"))).events()
    views = views_for_page(evs)
    diffs = [views[e.seq] for e in evs if e.type == "tool/call" and views[e.seq]["card"] == "diff"]
    assert diffs and diffs[0]["path"] and diffs[0]["sections"][0]["text"].startswith("--- a/")
    evs = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/todo-write/session.jsonl"))).events()
    views = views_for_page(evs)
    todo = next(views[e.seq] for e in evs if e.type == "tool/call" and e.data["name"] == "todo_write")
    args = json.loads(next(e for e in evs if e.type == "tool/call").data["arguments"])
    assert [i["content"] for i in todo["items"]] == [t["content"] for t in args["todos"]]


def test_result_whose_call_is_on_another_page_is_generic():
    evs = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl"))).events()
    first_result = next(i for i, e in enumerate(evs) if e.type == "tool/result")
    page = evs[first_result:]
    v = views_for_page(page)[evs[first_result].seq]
    assert v["card"] == "generic" and v["fallback"] == "call-not-on-page"
    assert v["sections"][0]["text"]          # the raw result content is still shown


def test_hostile_and_broken_inputs_stay_plain_text():
    hostile = "<script>alert(1)</script><b>x</b>"
    v = present_call("bash", json.dumps({"command": hostile}))
    assert v["command"] == hostile and v["title"] == "$ " + hostile
    assert present_call("bash", "{not json")["fallback"] == "bad-json"
    assert present_call("no_such_tool", "{}")["fallback"] == "unknown-tool"
    big = present_call("write", json.dumps({"file_path": "/x", "content": "y" * 200_000}))
    assert len(big["sections"][0]["text"]) < 70_000 and "more bytes" in big["sections"][0]["text"]
