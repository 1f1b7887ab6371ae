"""Issue 27 item 2: refusal truth from ONE function (app.log.index.verdict.dsh_verdict), following
dsh's read path: the v2->v3 migration's refusals, native v4 admission of retired plugin sources, an
unknown required type, corruption.  inspect's dshWouldRefuse, every command's problems and warning,
the outline (the window's banner) say the same thing."""
from __future__ import annotations

import io
import json
import contextlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.cli.main import main
from app.log.index.reader import LogReader
from app.log.query import analysis
from app.log.query.outline import build_outline
from app.ui.status import banner_lines

from fixtures_util import REPO

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
VFS = "packages/experimental/webworker-runtime/tests/fixtures/vfs-example/home/sessions/--dsh-workspace--"
SHOWCASE_V2 = NEXT / f"zsagi1368+deepseek-harness-zDSH@a18d8a996c/{VFS}/preview-showcase/session.v2.jsonl"
BUILDER_V2 = NEXT / f"zsagi1368+deepseek-harness-zDSH@d128b28263/{VFS}/preview-follow-up-builder/session.v2.jsonl"
BUILDER_V3 = NEXT / f"zsagi1368+deepseek-harness-zDSH@a18d8a996c/{VFS}/preview-follow-up-builder/session.v3.jsonl"
EARLY_V4 = NEXT / "0217po+deepseek-harness@f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl"
LATE_V4 = NEXT / "Hebilicious+deepseek-harness@4934042113/snapshots/acp/cancel-tool-calls/session.v4.jsonl"


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def write(tmp: Path, version: int, rows: list[dict]) -> Path:
    hdr = {"type": "session", "version": version, "id": "s", "createdAt": 1, "isSeeded": False, "delegationDepth": 0}
    p = tmp / f"session.v{version}.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in [hdr] + [dict(r, seq=i, time=1) for i, r in enumerate(rows)]))
    return p


def user(text="hi", source=None):
    return {"type": "user/message", "surfaceOp": "append",
            "data": {"id": "u" + text, "role": "user", "content": [{"type": "text", "text": text}],
                     "source": source or {"kind": "user"}}}


HEADER = {"type": "request/header", "data": {"header": {"config": {"provider": "p", "model": "m"}, "system": "S"},
                                             "reason": "initial"}}
T1, S1 = {"type": "turn/start", "data": {"turn": 1}}, {"type": "step/start", "data": {"turn": 1, "step": 1}}
SE1 = {"type": "step/end", "data": {"turn": 1, "step": 1}}
TE1 = {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}}


def verdicts(p: Path) -> dict:
    """Every face's answer for one log: inspect, messages, the outline, the banner."""
    info = analysis.inspect(LogReader.open(str(p)))
    rc, out, err = run("messages", p, "--json")
    msgs = json.loads(out)
    outline = build_outline(LogReader.open(str(p)))
    history = SimpleNamespace(reader=LogReader.open(str(p)), pages=[], live_state=None, physical=False)
    lines, _ = banner_lines(history, SimpleNamespace(outline=outline, problem_count=lambda: len(outline.problems)))
    refusing = [x for x in info["problems"] if "refuse" in x]
    return {"inspect": info["dshWouldRefuse"], "problems": refusing,
            "messages": msgs["dshWouldRefuse"],
            "warning": "dsh would refuse to load this log" in err,
            "outline": [str(x) for x in outline.refusals],
            "banner": [ln for ln in lines if ln.startswith("dsh would refuse")]}


def agree(v: dict, refuse: bool, words: str = "") -> None:
    assert v["inspect"] is v["messages"] is v["warning"] is refuse, v
    assert bool(v["outline"]) is bool(v["banner"]) is bool(v["problems"]) is refuse, v
    if refuse:
        assert all(words in x for x in v["problems"][:1] + v["outline"][:1] + v["banner"]), (words, v)


@pytest.mark.parametrize("path", [SHOWCASE_V2, BUILDER_V2], ids=["showcase", "builder"])
def test_real_v2_logs_with_a_surface_row_before_the_first_step_are_refused(path):
    agree(verdicts(path), True, "before the first step/start")


def test_the_relabelled_v3_twin_is_not_refused():
    agree(verdicts(BUILDER_V3), False)


def test_early_v4_plugin_source_refused_by_the_newest_dsh():
    v = verdicts(EARLY_V4)
    agree(v, True, "the newest dsh refuses this; earlier v4 builds wrote it")
    assert "system/message" in v["problems"][0]
    agree(verdicts(LATE_V4), False)


def test_minimal_v2_logs(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir(), (tmp_path / "c").mkdir()
    # a changed prompt before any step: the migration refuses
    agree(verdicts(write(tmp_path / "a", 2, [HEADER, T1, S1, user(), SE1, TE1])), True, "while no step is open")
    # a user message before the first step
    agree(verdicts(write(tmp_path / "b", 2, [T1, user(), S1, SE1, TE1])), True, "before the first step/start")
    # the migration takes it: the step opens first, the prompt changes inside it
    agree(verdicts(write(tmp_path / "c", 2, [T1, S1, HEADER, user(), SE1, TE1])), False)


def test_minimal_v4_logs(tmp_path):
    for d in "abcd":
        (tmp_path / d).mkdir()
    plugin = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}
    sysmsg = {"type": "system/message", "surfaceOp": "append",
              "data": {"turn": 1, "step": 1, "message": {"id": "sys", "role": "system", "source": plugin,
                                                         "content": [{"type": "text", "text": "S"}]}}}
    agree(verdicts(write(tmp_path / "a", 4, [T1, S1, sysmsg, SE1, TE1])), True, "earlier v4 builds wrote it")
    # an unknown required type: the problem text and the flag say the same thing
    agree(verdicts(write(tmp_path / "b", 4, [T1, {"type": "vendor/x", "data": {}}, TE1])), True, "'vendor/x'")
    # ... unknown and ignorable: read past
    agree(verdicts(write(tmp_path / "c", 4, [T1, {"type": "vendor/x", "data": {}, "ignorable": True}, TE1])), False)
    # a v3 log keeps plugin sources (the v3->v4 edge renames them)
    agree(verdicts(write(tmp_path / "d", 3, [T1, S1, sysmsg, SE1, TE1])), False)


def test_request_says_the_same_as_inspect(tmp_path):
    p = write(tmp_path, 2, [T1, user(), S1, HEADER,
                            {"type": "assistant/message", "surfaceOp": "append",
                             "data": {"turn": 1, "step": 1, "stream": [],
                                      "message": {"id": "a", "role": "assistant", "content": [{"type": "text",
                                                                                               "text": "x"}]}}},
                            SE1, TE1])
    rc, out, err = run("request", p, "--at", 4, "--json")
    assert rc == 0 and json.loads(out)["dshWouldRefuse"] is True and "before the first step/start" in err
