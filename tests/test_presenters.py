"""Presenter layer on real fixture data (spec §8 "Tool views").

Every tool/call and tool/result of every fixture session gets a JSON-able view, no presenter
raises, the host's same-page rule holds, hostile and huge inputs stay plain (clipped) text.
"""
from __future__ import annotations

from fixtures_util import fast_sample, session_files  # noqa: E402  (shared corpus discovery)

import copy
import json
import re
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.log.format.model import Event
from app.log.index.reader import LogReader
from app.presenters import present_call, present_result, register, registered, views_for_page
from app.presenters.registry import MAX_SECTION, unregister

REPO_ROOT = Path(__file__).resolve().parents[1]
FIXTURES = REPO_ROOT.parent / "shared" / "fixtures" / "dsh"

CARDS = {"terminal", "diff", "read", "write", "search", "web", "todo", "subagent", "generic"}
FALLBACKS = re.compile(r"^(bad-json|unknown-tool|no-presenter|call-not-on-page|presenter-error: .+)$", re.S)


@cache
def _events(rel: str) -> tuple:
    return tuple(LogReader.open(str(FIXTURES / rel)).events())


def events(rel: str) -> list:
    return list(_events(rel))


def rel(p: Path) -> str:
    return str(p.relative_to(FIXTURES))


def call_id(e: Event):
    m = e.data.get("message") or {}
    return (m.get("source") or {}).get("callId")


def pair(evs: list, name: str, nth: int = 0):
    """The nth (tool/call, tool/result) pair of tool ``name``."""
    calls = [e for e in evs if e.type == "tool/call" and e.data["name"] == name]
    c = calls[nth]
    r = next(e for e in evs if e.type == "tool/result" and call_id(e) == c.data["callId"])
    return c, r


def views_of(rel_path: str, name: str, nth: int = 0):
    evs = events(rel_path)
    views = views_for_page(evs)
    c, r = pair(evs, name, nth)
    return views[c.seq], views[r.seq]


def check_view(v: dict, for_: str):
    assert isinstance(v, dict)
    json.dumps(v)                                           # JSON-able
    assert v["for"] == for_
    assert v["card"] in CARDS
    assert isinstance(v["tool"], str)
    assert isinstance(v["title"], str) and "\n" not in v["title"] and v["title"]
    assert isinstance(v["summary"], str) and "\n" not in v["summary"]
    assert v["status"] in (("ok", "error", None) if for_ == "call" else ("ok", "error"))
    assert isinstance(v["sections"], list)
    for s in v["sections"]:
        assert set(s) == {"label", "text", "mono", "lang"}
        assert isinstance(s["label"], str) and isinstance(s["text"], str) and isinstance(s["mono"], bool)
        assert s["lang"] in ("diff", "json", None)
        assert len(s["text"].encode("utf-8")) <= MAX_SECTION + 64
    for k in ("command", "path", "query", "agent"):
        if k in v:
            assert isinstance(v[k], str)
    if "exitCode" in v:
        assert v["exitCode"] is None or isinstance(v["exitCode"], int)
    if "items" in v:
        assert isinstance(v["items"], list) and all(isinstance(i, dict) for i in v["items"])
    if v["card"] == "generic" and "fallback" in v:
        assert FALLBACKS.match(v["fallback"]), v["fallback"]
    else:
        assert "fallback" not in v


def all_text(v: dict) -> str:
    parts = [v.get("title", ""), v.get("summary", ""), str(v.get("command", "")), str(v.get("path", ""))]
    parts += [s["text"] for s in v["sections"]]
    return "\n".join(parts)


# --------------------------------------------------------------------------- whole corpus

SESSIONS = session_files()


def test_corpus_is_there():
    assert len(SESSIONS) > 100
    names = set()
    for p in SESSIONS:
        names |= {e.data["name"] for e in events(rel(p)) if e.type == "tool/call"}
    # every tool name of the corpus but the deliberately unknown one has a presenter
    assert names - set(registered()) == {"write_remote"}, names - set(registered())


@pytest.mark.parametrize("path", fast_sample(SESSIONS, spread=3), ids=rel)
def test_every_tool_row_gets_a_view(path):
    evs = events(rel(path))
    before = [copy.deepcopy(e.data) for e in evs]
    views = views_for_page(evs)
    tool_rows = [e for e in evs if e.type in ("tool/call", "tool/result")]
    assert set(views) == {e.seq for e in tool_rows}, "views for tool/call and tool/result rows only"
    calls = {e.data["callId"]: e for e in evs if e.type == "tool/call"}
    for e in tool_rows:
        v = views[e.seq]
        check_view(v, "call" if e.type == "tool/call" else "result")
        assert not str(v.get("fallback", "")).startswith("presenter-error"), (e.seq, v)
        if e.type == "tool/result":
            c = calls.get(call_id(e))
            assert c is not None
            assert v["tool"] == c.data["name"]
            blk = next(b for b in e.data["message"]["content"] if b["type"] == "tool-result")
            if blk.get("isError"):
                assert v["status"] == "error", (e.seq, v)
        else:
            assert v["tool"] == e.data["name"]
        if v["tool"] != "write_remote":
            assert "fallback" not in v, (e.seq, v)
    assert [e.data for e in evs] == before, "views are computed, the events are not touched"


# --------------------------------------------------------------------------- specific fixtures

def test_bash_call_and_policy_error_result():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/packed-chunks/session.jsonl", "bash")
    assert cv["card"] == "terminal" and cv["command"] == "echo HELLO" and cv["title"] == "$ echo HELLO"
    assert cv["summary"] == "Run echo HELLO" and cv["status"] is None
    assert rv["card"] == "terminal" and rv["status"] == "error" and rv["command"] == "echo HELLO"
    assert rv["sections"][0]["text"] == "Error: bash is disabled by policy in this session"
    assert rv["sections"][0]["label"] == "error"
    assert rv["exitCode"] is None


def test_bash_output_exit_code_and_stderr_split():
    cv, rv = views_of("apps/web/tests/snapshots/fresh-round-trip/session.jsonl", "bash")
    assert rv["status"] == "ok" and rv["sections"][0] == {"label": "output", "text": "WEB_E2E_OK\n",
                                                          "mono": True, "lang": None}
    # pwsh: "[stderr]\n…\n[exit code: 1]"
    cv, rv = views_of("apps/web/tests/snapshots/pwsh-terminal/seed.jsonl", "pwsh")
    assert cv["command"] == "Get-Item missing.txt" and cv["summary"] == "Fail deliberately"
    assert rv["exitCode"] == 1 and rv["status"] == "error" and rv["summary"] == "exit 1"
    by = {s["label"]: s["text"] for s in rv["sections"]}
    assert by["stderr"] == "Get-Item : Cannot find path 'missing.txt' because it does not exist."
    assert by["notes"] == "[exit code: 1]" and "output" not in by
    # sandbox denial: stderr, sandbox notes and the exit code
    cv, rv = views_of("apps/web/tests/snapshots/approval-composer/session.jsonl", "bash")
    by = {s["label"]: s["text"] for s in rv["sections"]}
    assert by["stderr"] == "bash: notes.txt: Operation not permitted" and rv["exitCode"] == 1
    assert by["notes"].startswith("[sandbox: file access denied under read-only mode]\n[sandbox: escalation")
    assert by["notes"].endswith("[exit code: 1]")
    # a persistent shell that exited: "[shell exited: code 9]" inside the text
    evs = events("examples/jsonrpc-agent/tests/snapshots/persistent-tools/session.jsonl")
    views = views_for_page(evs)
    c = next(e for e in evs if e.type == "tool/call" and e.data["callId"] == "bash-exit")
    r = next(e for e in evs if e.type == "tool/result" and call_id(e) == "bash-exit")
    assert views[c.seq]["command"] == "exit 9"
    assert views[r.seq]["exitCode"] == 9 and views[r.seq]["status"] == "error"


def test_background_job_output_killed_is_an_error():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/missing-sandbox-runner/session.jsonl", "job_output")
    assert cv["card"] == "terminal" and cv["title"] == "job bash-1 output (wait)"
    assert rv["status"] == "error" and rv["summary"] == "killed, killed before exit"
    assert any(s["label"] == "stderr" and "spawn failed" in s["text"] for s in rv["sections"])


def test_pty_tools_are_terminal_cards():
    rel_path = "examples/acp-agent/tests/snapshots/pty-tools/session.jsonl"
    cv, rv = views_of(rel_path, "terminal_send")
    assert cv["card"] == "terminal" and cv["command"] == "printf 'PTY_OK\\n'"
    screen = next(s for s in rv["sections"] if s["label"] == "screen")
    assert screen["text"] == "printf 'PTY_OK\\n'\nPTY_OK\ndsh> "                  # meta.viewport
    cv, rv = views_of(rel_path, "terminal_open")
    assert cv["title"] == "open terminal main [shell]"
    assert rv["summary"].startswith("started terminal session pty-1 (main)")


def test_read_file_path_range_and_content():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/fs-read-window/session.jsonl", "read")
    assert cv["card"] == "read" and cv["path"] == "big.txt" and cv["range"] == {"offset": 5, "limit": 4}
    assert cv["summary"] == "lines 5–8"
    assert rv["card"] == "read" and rv["path"] == "{{cwd}}/big.txt" and rv["status"] == "ok"
    assert rv["range"] == {"start": 5, "end": 8, "total": 10} and rv["summary"] == "lines 5–8 of 10"
    content = rv["sections"][0]
    assert content["label"] == "content"
    assert content["text"].startswith("5: line five\n6: line six\n7: line seven\n8: line eight\n")
    assert "<content>" not in content["text"] and "<path>" not in content["text"]
    cv, rv = views_of("examples/acp-agent/tests/snapshots/fs-read/session.jsonl", "read")
    assert cv["path"] == "greeting.txt" and rv["path"] == "{{cwd}}/greeting.txt"
    assert rv["sections"][0]["text"].startswith("1: hello")


def test_read_image_and_its_error():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/read-image/session.jsonl", "read_image")
    assert rv["card"] == "read" and rv["path"] == "{{cwd}}/red.png"
    assert rv["summary"] == "image/png image, 1x1 px, 69 bytes"
    assert any(s["label"] == "image" and "red.png" in s["text"] for s in rv["sections"])
    cv, rv = views_of("examples/acp-agent/tests/snapshots/read-image-dimension/session.jsonl", "read_image")
    assert rv["status"] == "error" and "exceeds the 2000px limit" in rv["sections"][0]["text"]


def test_edit_yields_a_diff_from_the_strings_and_from_meta():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/fs-edit/session.jsonl", "edit")
    assert cv["card"] == "diff" and cv["path"] == "config.txt" and cv["title"] == "edit config.txt"
    assert cv["sections"][0]["lang"] == "diff"
    assert cv["sections"][0]["text"] == "--- a/config.txt\n+++ b/config.txt\n@@ -1 +1 @@\n-DEBUG\n+RELEASE"
    assert rv["card"] == "diff" and rv["status"] == "ok" and rv["summary"] == "+1 −1"
    diff = rv["sections"][0]["text"]                     # from meta.diffs: whole-file context
    assert diff.splitlines()[3:] == ["-mode=DEBUG", "+mode=RELEASE", " level=info"]
    assert rv["sections"][-1]["text"] == "The file {{cwd}}/config.txt has been updated successfully."


def test_edit_rejected_by_policy_keeps_the_diff():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/fs-policy-reject/session.jsonl", "edit")
    assert rv["status"] == "error" and rv["card"] == "diff"
    assert rv["sections"][0]["label"] == "error" and "edit requires reading" in rv["sections"][0]["text"]
    assert any(s["label"] == "error code" and "FS_NOT_OBSERVED" in s["text"] for s in rv["sections"])
    assert any(s["lang"] == "diff" and "-blue\n+green" in s["text"] for s in rv["sections"])


def test_write_content_and_overwrite_diff():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/fs-delete-recreate/session.jsonl", "write")
    assert cv["card"] == "write" and cv["path"] == "deleted.txt"
    assert cv["sections"][0] == {"label": "content", "text": "fresh\n", "mono": True, "lang": None}
    assert rv["card"] == "write" and rv["summary"] == "Created file" and rv["path"] == "{{cwd}}/deleted.txt"
    cv, rv = views_of("examples/acp-agent/tests/snapshots/fs-write-overwrite/session.jsonl", "write")
    assert cv["card"] == "write" and cv["sections"][0]["text"] == "replaced"
    assert rv["card"] == "diff" and rv["path"] == "{{cwd}}/data.txt"
    assert "-original contents\n+replaced" in rv["sections"][0]["text"]
    # sandbox denial: error first, the intended content kept
    cv, rv = views_of("apps/web/tests/snapshots/permission-policy-context/session.jsonl", "write")
    assert rv["status"] == "error" and rv["sections"][0]["label"] == "error"
    assert rv["sections"][-1]["text"] == "POLICY_NEUTRAL_OK"


def test_str_replace_editor_commands():
    rel_path = "examples/jsonrpc-agent/tests/snapshots/persistent-tools/session.jsonl"
    create, _ = views_of(rel_path, "str_replace_editor", 0)
    view, view_r = views_of(rel_path, "str_replace_editor", 1)
    repl, repl_r = views_of(rel_path, "str_replace_editor", 2)
    assert create["card"] == "write" and create["path"] == "{{cwd}}/note.txt"
    assert create["sections"][0]["text"] == "target:\n\told\n"
    assert view["card"] == "read" and view_r["summary"] == "3 lines"
    assert repl["card"] == "diff"
    assert repl["sections"][0]["text"].endswith("@@ -1 +1 @@\n-\told\n+\tnew")
    assert repl["sections"][0]["text"].startswith("--- {{cwd}}/note.txt\n+++ {{cwd}}/note.txt")


def test_todo_write_items():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/todo-write/session.jsonl", "todo_write")
    expected = [{"content": "read the code", "status": "in_progress"},
                {"content": "watch the background build", "status": "in_progress"},
                {"content": "write the fix", "status": "pending"}]
    assert cv["card"] == "todo" and cv["items"] == expected
    assert cv["title"] == "todos: 0/3 done" and cv["summary"] == "1 pending, 2 in progress, 0 completed"
    assert cv["sections"][0]["text"] == "[~] read the code\n[~] watch the background build\n[ ] write the fix"
    assert rv["items"] == expected and rv["status"] == "ok"


def test_web_fetch():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/web-fetch/session.jsonl", "web_fetch")
    url = "http://127.0.0.1:43117/menu.html"
    assert cv["card"] == "web" and cv["query"] == url and cv["title"] == f"fetch {url}"
    assert rv["card"] == "web" and rv["status"] == "ok" and rv["summary"].startswith("HTTP 200")
    assert rv["items"][0]["url"] == url and rv["items"][0]["title"] == "Menu"
    assert rv["sections"][0]["text"].startswith("Menu\n\n# Café menu")       # the "Fetched …" line is cut


def test_web_search_arguments_from_the_fixture_stream():
    # the web-search-round fixture holds the call only as a streamed tool-call block
    evs = events("apps/web/tests/snapshots/web-search-round/session.jsonl")
    block = next(e.data["chunk"]["block"] for e in evs
                 if e.type == "assistant/chunk" and e.data["chunk"].get("type") == "block-end")
    assert block["name"] == "web_search"
    v = present_call("web_search", block["arguments"])
    assert v["card"] == "search"
    assert v["query"] == "DeepSeek Harness snapshot search | DeepSeek Harness multi-query search"
    assert views_for_page(evs) == {}, "only tool/call and tool/result events get views"
    fake = {"message": {"content": [{"type": "tool-result", "toolCallId": "x", "content": [{"type": "text", "text":
            "1. [DeepSeek Harness](https://example.invalid/dsh)\n   A harness for agents.\n"
            "2. Snapshot docs - https://example.invalid/snap\n   How snapshots work."}]}]}}
    r = present_result("web_search", block["arguments"], fake)
    assert r["items"] == [
        {"title": "DeepSeek Harness", "url": "https://example.invalid/dsh", "snippet": "A harness for agents."},
        {"title": "Snapshot docs", "url": "https://example.invalid/snap", "snippet": "How snapshots work."}]
    js = {"message": {"content": [{"type": "tool-result", "toolCallId": "x", "content": [{"type": "text", "text":
          json.dumps({"results": [{"title": "T", "url": "https://u.invalid", "snippet": "S"}]})}]}]}}
    assert present_result("web_search", '{"query": "q"}', js)["items"] == [
        {"title": "T", "url": "https://u.invalid", "snippet": "S"}]


def test_glob_items_from_meta():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/fs-glob-sampling/session.jsonl", "glob")
    assert cv["card"] == "search" and cv["query"] == "*" and cv["path"] == "tree"
    assert [i["title"] for i in rv["items"]] == ["tree/archive/a.ts", "tree/docs/guide.md", "tree/src/index.ts",
                                                 "tree/test/spec.ts"]
    assert rv["summary"] == "4 matches of 8"


def test_subagent_tools():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/advanced-toolchain/session.jsonl", "subagent")
    assert cv["card"] == "subagent" and cv["agent"] == "subagent" and cv["title"] == "subagent: Check direct child"
    assert cv["sections"][0] == {"label": "prompt", "text": "Reply with exactly DIRECT_CHILD_OK and nothing else.",
                                 "mono": False, "lang": None}
    assert rv["status"] == "ok" and rv["sections"][-1]["text"] == "DIRECT_CHILD_OK"
    rel_path = "examples/acp-agent/tests/snapshots/product-subagent-result-diagnostic/session.jsonl"
    cv, rv = views_of(rel_path, "subagent_codex", 0)
    assert cv["agent"] == "codex" and rv["status"] == "error"
    assert rv["sections"][0]["text"].startswith("Error: subagent run failed\nDiagnostic:")
    cv, rv = views_of(rel_path, "subagent_codex", 1)
    assert "background" in cv["summary"] and rv["summary"] == "background job subagent-1"
    cv, rv = views_of("examples/acp-agent/tests/snapshots/subagent-fork-in-process/session.jsonl", "subagent_fork")
    assert cv["agent"] == "fork" and rv["sections"][-1]["text"] == "MARMALADE"
    cv, rv = views_of("examples/acp-agent/tests/snapshots/subagent-continuable/session.jsonl", "send_message")
    assert cv["card"] == "subagent" and cv["agent"] == "33333333-3333-4333-8333-333333333333"
    cv, rv = views_of("examples/acp-agent/tests/snapshots/workflow-run/session.jsonl", "workflow")
    assert cv["card"] == "subagent" and cv["sections"][0]["label"] == "script"


def test_other_known_tools_get_generic_cards_without_fallback():
    cv, rv = views_of("examples/acp-agent/tests/snapshots/advanced-toolchain/session.jsonl", "cordis_define")
    assert cv["card"] == "generic" and "fallback" not in cv and cv["title"] == "cordis define Snapshot Marker"
    assert any(s["label"] == "meta" and '"packageId": "pkg-1"' in s["text"] for s in rv["sections"])
    cv, rv = views_of("apps/web/tests/snapshots/code-mode-round/session.jsonl", "run_code")
    assert cv["sections"][0]["label"] == "code" and "tools.bash" in cv["sections"][0]["text"]
    assert rv["sections"][-1]["lang"] == "json" and '"bash": "CODE_ROUND_OK"' in rv["sections"][-1]["text"]
    cv, rv = views_of("apps/web/tests/snapshots/question-composer/session.jsonl", "ask_user_question")
    assert cv["title"] == "ask the user: Which color do you prefer?"
    assert "  - Blue: A cool" in cv["sections"][0]["text"]


def test_unknown_tool_in_a_fixture_is_generic():
    rel_path = "examples/headless-agent/tests/semantic-checkpoint-snapshots/tool-outcome-unknown/session.expected.jsonl"
    cv, rv = views_of(rel_path, "write_remote")
    assert cv["card"] == "generic" and cv["fallback"] == "unknown-tool" and cv["tool"] == "write_remote"
    assert json.loads(cv["sections"][0]["text"]) == {"value": 1} and cv["sections"][0]["lang"] == "json"
    assert rv["fallback"] == "unknown-tool" and rv["status"] == "error"
    assert rv["sections"][0]["text"].startswith("The tool call was interrupted after it was recorded")
    assert any(s["label"] == "error code" and "TOOL_OUTCOME_UNKNOWN" in s["text"] for s in rv["sections"])


def test_patch_multi_edit_and_argument_variants():
    patch = "*** Begin Patch\n*** Update File: src/a.py\n@@\n-x = 1\n+x = 2\n*** Add File: src/b.py\n+print('b')\n*** End Patch"
    v = present_call("apply_patch", json.dumps({"input": patch}))
    assert v["card"] == "diff" and v["path"] == "src/a.py" and v["sections"][0] == {
        "label": "diff", "text": patch, "mono": True, "lang": "diff"}
    assert v["title"] == "patch src/a.py (+1 more)" and v["summary"] == "+2 −1 in 2 files"
    v = present_call("multi_edit", json.dumps({"file_path": "f.py", "edits": [
        {"old_string": "a", "new_string": "b"}, {"old_string": "c\nd", "new_string": "c"}]}))
    assert v["card"] == "diff" and "-a\n+b" in v["sections"][0]["text"] and " c\n-d" in v["sections"][0]["text"]
    v = present_call("str_replace_editor", json.dumps({"command": "insert", "path": "f.py", "insert_line": 3,
                                                       "new_str": "hello"}))
    assert v["sections"][0]["text"].endswith("@@ insert after line 3 @@\n+hello")
    v = present_call("Bash", json.dumps({"command": ["bash", "-lc", "ls -la"]}))      # case and argv variants
    assert v["card"] == "terminal" and v["command"] == "ls -la"
    v = present_call("update_plan", json.dumps({"plan": [{"step": "a", "status": "completed"},
                                                         {"step": "b", "status": "in_progress"}]}))
    assert v["card"] == "todo" and v["items"] == [{"content": "a", "status": "completed"},
                                                  {"content": "b", "status": "in_progress"}]
    v = present_call("edit", json.dumps({"path": "p", "old_str": "same", "new_str": "same"}))
    assert v["sections"][0]["text"] == "(no change)"


def test_register_as_a_decorator():
    @register("t_deco")
    def _call(args):
        return {"card": "terminal", "title": "deco " + str(args.get("n")), "command": 5}

    @register(["t_deco"], result=True)
    def _result(args, result):
        return {"card": "bogus", "title": "r\nsecond line", "status": "weird", "sections": ["plain"]}

    try:
        c = present_call("t_deco", '{"n": 1}')
        check_view(c, "call")
        assert c["title"] == "deco 1" and c["command"] == "5" and c["sections"] == []
        r = present_result("t_deco", "{}", {"message": {"content": [
            {"type": "tool-result", "toolCallId": "x", "content": [], "isError": True}]}})
        check_view(r, "result")
        assert r["card"] == "generic" and r["title"] == "r …" and r["status"] == "error"
        assert r["sections"] == [{"label": "", "text": "plain", "mono": True, "lang": None}]
    finally:
        unregister("t_deco")


# --------------------------------------------------------------------------- the same-page rule

def test_result_whose_call_is_on_an_earlier_page_is_generic():
    evs = events("examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl")
    first_result = next(i for i, e in enumerate(evs) if e.type == "tool/result")
    page = evs[first_result:]
    views = views_for_page(page)
    for e in page:
        if e.type == "tool/result":
            v = views[e.seq]
            check_view(v, "result")
            assert v["card"] == "generic" and v["fallback"] == "call-not-on-page" and v["tool"] == ""
            raw = e.data["message"]["content"][0]["content"][0]["text"]
            assert v["sections"][0]["text"] == raw, "the raw result content is shown"
            assert call_id(e) in v["summary"]
    # the same results with their calls on the page get their read cards
    full = views_for_page(evs)
    assert all(full[e.seq]["card"] == "read" for e in page if e.type == "tool/result")


@pytest.mark.parametrize("path", fast_sample([p for p in SESSIONS if b'"tool/result"' in p.read_bytes()][:40], spread=3), ids=rel)
def test_splitting_after_each_call(path):
    evs = events(rel(path))
    for k, c in enumerate(evs):
        if c.type != "tool/call":
            continue
        older, newer = evs[:k + 1], evs[k + 1:]
        vn = views_for_page(newer)
        vo = views_for_page(older)
        assert vo[c.seq]["for"] == "call"
        for e in newer:
            if e.type == "tool/result" and call_id(e) == c.data["callId"]:
                assert vn[e.seq]["fallback"] == "call-not-on-page"


def test_real_pages_follow_the_host_rule():
    path = FIXTURES / "apps/web/tests/snapshots/approval-composer/session.jsonl"
    reader = LogReader.open(str(path))
    page = reader.tail_page(max_messages=2)
    seen = 0
    while True:
        evs = page.events
        views = views_for_page(evs)
        on_page = {e.data["callId"] for e in evs if e.type == "tool/call"}
        for e in evs:
            if e.type == "tool/result":
                seen += 1
                v = views[e.seq]
                if call_id(e) in on_page:
                    assert "fallback" not in v and v["tool"] in ("bash", "read", "write")
                else:
                    assert v["fallback"] == "call-not-on-page"
        if not page.has_more:
            break
        page = reader.page_before(page.token, max_messages=2)
    assert seen


def test_duplicate_call_ids_match_the_nearest_earlier_call():
    def call(seq, name, args):
        return Event(seq=seq, type="tool/call", time=0,
                     data={"turn": 1, "step": 1, "callId": "dup", "name": name, "arguments": json.dumps(args)})

    def result(seq, text):
        return Event(seq=seq, type="tool/result", time=0, surface_op="append", data={
            "turn": 1, "step": 1, "message": {"role": "user", "source": {"kind": "tool", "callId": "dup"},
                                              "content": [{"type": "tool-result", "toolCallId": "dup",
                                                           "content": [{"type": "text", "text": text}]}]}})
    evs = [call(0, "bash", {"command": "one"}), result(1, "1"), call(2, "bash", {"command": "two"}), result(3, "2")]
    v = views_for_page(evs)
    assert v[1]["command"] == "one" and v[3]["command"] == "two"


def test_result_matched_by_tool_call_id_when_source_is_missing():
    c = Event(seq=0, type="tool/call", time=0, data={"turn": 1, "step": 1, "callId": "c1", "name": "bash",
                                                     "arguments": '{"command": "ls"}'})
    r = Event(seq=1, type="tool/result", time=0, surface_op="append", data={
        "turn": 1, "step": 1, "message": {"role": "user", "content": [
            {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "a\nb\n"}]}]}})
    v = views_for_page([c, r])
    assert v[1]["card"] == "terminal" and v[1]["command"] == "ls" and v[1]["status"] == "ok"


# --------------------------------------------------------------------------- hostile input

HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)>&amp;<b>bold</b>"


def test_bad_json_arguments():
    v = present_call("bash", "{not json" + HOSTILE)
    check_view(v, "call")
    assert v["card"] == "generic" and v["fallback"] == "bad-json" and v["tool"] == "bash"
    assert v["sections"][0]["text"] == "{not json" + HOSTILE, "raw arguments verbatim"
    assert present_call("bash", "[1, 2]")["fallback"] == "bad-json", "arguments must be a JSON object"
    assert present_call("bash", None)["fallback"] == "bad-json"
    c = Event(seq=0, type="tool/call", time=0, data={"turn": 1, "step": 1, "callId": "c", "name": "read",
                                                     "arguments": "{"})
    r = Event(seq=1, type="tool/result", time=0, data={"turn": 1, "step": 1, "message": {
        "role": "user", "source": {"kind": "tool", "callId": "c"},
        "content": [{"type": "tool-result", "toolCallId": "c", "content": [{"type": "text", "text": HOSTILE}]}]}})
    views = views_for_page([c, r])
    assert views[0]["fallback"] == "bad-json" and views[1]["fallback"] == "bad-json"
    assert views[1]["sections"][0]["text"] == HOSTILE


def test_unknown_and_missing_tool_names():
    v = present_call("no_such_tool" + HOSTILE, json.dumps({"a": HOSTILE}))
    check_view(v, "call")
    assert v["fallback"] == "unknown-tool" and v["tool"] == "no_such_tool" + HOSTILE
    assert json.loads(v["sections"][0]["text"]) == {"a": HOSTILE}
    assert present_call("", "{}")["fallback"] == "unknown-tool"
    assert present_call(None, "{}")["fallback"] == "unknown-tool"


def test_no_presenter_and_presenter_errors():
    def boom(args):
        raise RuntimeError("kaput " + HOSTILE)

    register("t_call_only", call=lambda a: {"card": "generic", "title": "t", "sections": []})
    register("t_boom", call=boom, result=lambda a, r: 42)
    try:
        r = {"message": {"content": [{"type": "tool-result", "toolCallId": "x",
                                      "content": [{"type": "text", "text": HOSTILE}]}]}}
        v = present_result("t_call_only", "{}", r)
        check_view(v, "result")
        assert v["fallback"] == "no-presenter" and v["sections"][0]["text"] == HOSTILE
        v = present_call("t_boom", '{"x": 1}')
        check_view(v, "call")
        assert v["fallback"].startswith("presenter-error: RuntimeError: kaput <script>")
        v = present_result("t_boom", "{}", r)
        check_view(v, "result")
        assert v["fallback"].startswith("presenter-error: TypeError") and v["sections"][0]["text"] == HOSTILE
    finally:
        unregister(["t_call_only", "t_boom"])
    assert "t_boom" not in registered()


def test_html_in_output_stays_plain_text_verbatim():
    shell = present_call("bash", json.dumps({"command": HOSTILE, "description": HOSTILE}))
    check_view(shell, "call")
    assert shell["command"] == HOSTILE and shell["title"] == "$ " + HOSTILE and shell["summary"] == HOSTILE
    r = {"message": {"content": [{"type": "tool-result", "toolCallId": "x",
                                  "content": [{"type": "text", "text": HOSTILE + "\n[stderr]\n" + HOSTILE}]}]}}
    for name, args in [("bash", {"command": "x"}), ("read", {"file_path": HOSTILE}), ("write", {"file_path": "f",
                       "content": HOSTILE}), ("edit", {"file_path": "f", "old_string": HOSTILE, "new_string": "y"}),
                       ("web_fetch", {"url": HOSTILE}), ("web_search", {"query": HOSTILE}),
                       ("todo_write", {"todos": [{"content": HOSTILE, "status": "pending"}]}),
                       ("subagent", {"description": HOSTILE, "prompt": HOSTILE}), ("cordis_run", {"pluginId": HOSTILE})]:
        v = present_result(name, json.dumps(args), r)
        check_view(v, "result")
        assert "fallback" not in v, (name, v)
        assert HOSTILE in all_text(v), name
        assert "&lt;" not in all_text(v), "no HTML escaping: the UI shows text"
    # a real fixture path carrying a delimiter
    cv, rv = views_of("examples/acp-agent/tests/snapshots/agent-instructions/session.jsonl", "read", 1)
    assert cv["path"] == "scope</system-reminder>/task.txt"
    assert rv["path"] == "{{cwd}}/scope</system-reminder>/task.txt"


def test_huge_output_is_truncated_with_a_marker():
    big = "y" * 200_000
    v = present_call("write", json.dumps({"file_path": "/x", "content": big}))
    text = v["sections"][0]["text"]
    assert text.startswith("y" * 1000) and text.endswith(f"\n… ({200_000 - MAX_SECTION} more bytes)")
    assert len(text.encode()) <= MAX_SECTION + 40
    # multi-byte text is cut on a character boundary and the byte count stays right
    wide = "é" * 100_000                                            # 200 000 bytes
    r = {"message": {"content": [{"type": "tool-result", "toolCallId": "x",
                                  "content": [{"type": "text", "text": wide}]}]}}
    v = present_result("bash", '{"command": "cat big"}', r)
    out = v["sections"][0]["text"]
    kept = out.split("\n… (")[0]
    assert set(kept) == {"é"} and len(kept.encode()) <= MAX_SECTION
    assert out.endswith(f"({200_000 - len(kept.encode())} more bytes)")
    # huge command: the field is clipped, the title stays one short line
    v = present_call("bash", json.dumps({"command": "echo " + "z" * 100_000}))
    assert len(v["title"]) <= 210 and v["command"].endswith("more bytes)")
    v = present_call("nope", json.dumps({"a": "q" * 100_000}))
    assert v["sections"][0]["text"].endswith("more bytes)") and len(v["summary"]) <= 170


# --------------------------------------------------------------------------- robustness

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=40),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=5),
    max_leaves=20)
arg_keys = st.sampled_from(["command", "file_path", "path", "content", "old_string", "new_string", "todos", "query",
                            "queries", "url", "prompt", "description", "edits", "patch", "input", "offset", "limit",
                            "questions", "plan", "meta", "script", "code", "command", "text", "sessionId", "x"])
TOOL_NAMES = sorted(set(registered()) | {"write_remote", "nope"})


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(TOOL_NAMES), args=st.dictionaries(arg_keys, json_values, max_size=6),
       content=st.lists(json_values | st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=60)),
                        max_size=3),
       is_error=json_values, meta=json_values, raw=st.booleans())
def test_presenters_never_raise_on_arbitrary_shapes(name, args, content, is_error, meta, raw):
    arguments = json.dumps(args) if not raw else json.dumps(args)[:-1]
    c = Event(seq=0, type="tool/call", time=0, data={"turn": 1, "step": 1, "callId": "c", "name": name,
                                                     "arguments": arguments})
    r = Event(seq=1, type="tool/result", time=0, data={"turn": 1, "step": 1, "meta": meta, "message": {
        "role": "user", "source": {"kind": "tool", "callId": "c"},
        "content": [{"type": "tool-result", "toolCallId": "c", "content": content, "isError": is_error}]}})
    views = views_for_page([c, r])
    check_view(views[0], "call")
    check_view(views[1], "result")
    for v in views.values():
        assert not str(v.get("fallback", "")).startswith("presenter-error"), v


@settings(max_examples=100, deadline=None)
@given(data=json_values, typ=st.sampled_from(["tool/call", "tool/result"]))
@pytest.mark.slow
def test_malformed_event_payloads_get_generic_views(data, typ):
    views = views_for_page([Event(seq=7, type=typ, time=0, data=data)])
    check_view(views[7], "call" if typ == "tool/call" else "result")


def test_views_for_page_accepts_a_scope_and_skips_other_rows():
    evs = events("examples/acp-agent/tests/snapshots/packed-chunks/session.jsonl")
    assert views_for_page(evs, scope="some-agent") == views_for_page(evs)
    assert views_for_page([]) == {}


def test_no_qt_in_the_presenter_layer():
    for p in (REPO_ROOT / "app" / "presenters").glob("*.py"):
        src = p.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(from|import)\s+(PySide\d?|PyQt\d?|shiboken\d?)", src, re.M), p
