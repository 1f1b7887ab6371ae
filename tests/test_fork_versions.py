"""Forks in the source's format (issue 12 item 3; spec-versions §7.1, §5): a fork of a vN
session writes a vN child (``isSeeded``, the tagged ``session/end-seed {inherited:true}`` at
the inherited count, ``forked`` closers after it when the cut is inside a turn), with every v0
guarantee: the inclusive prefix as stored, atomic publication, never clobbering."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from app.log.query import analysis
from app.log.fold.fork import ForkError, plan_core_fork
from app.log.index.reader import LogReader
from app.log.format.versions import inherited_count
from app.store.forking import fork
from app.store.writer import SessionWriter

from fixtures_util import REPO, fast_sample

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
LOGS = sorted(p for p in NEXT.rglob("*.jsonl") if ".v" in p.name)
IDS = [str(p.relative_to(NEXT)).split("/", 1)[0].split("@")[1] + ":" + "/".join(p.parts[-2:]) for p in LOGS]
CANCEL = NEXT / "Hebilicious+deepseek-harness@4934042113/snapshots/acp/cancel-tool-calls/session.v4.jsonl"
FORKED_STARTED = ("The history inherited by this branch records this tool call starting but does not include its "
                  "result. The parent session may have completed it after the fork point. Decide whether to retry "
                  "from the tool semantics: retry only if the operation is read-only or idempotent; if it may have "
                  "side effects, first verify external state or ask the user. Do not retry blindly.")
FORKED_NOT_STARTED = ("The history inherited by this branch has no record of this tool call starting. The parent "
                      "session may have executed it after the fork point. Decide whether to retry from the tool "
                      "semantics: retry only if the operation is read-only or idempotent; if it may have side "
                      "effects, first verify external state or ask the user. Do not retry blindly.")


def copy(tmp_path, src: Path) -> Path:
    d = tmp_path / "store"
    d.mkdir(exist_ok=True)
    p = d / src.name
    shutil.copy(src, p)
    return p


def check_child(parent: LogReader, res: dict) -> LogReader:
    child = LogReader.open(res["child"])
    b = res["boundary"]
    assert child.fatal is None, child.fatal
    assert child.version == parent.version >= 2
    raw_hdr = json.loads(child.source.header_raw)
    assert list(raw_hdr) == ["type", "version", "id", "createdAt"] + (["cwd"] if "cwd" in raw_hdr else []) + \
        ["parentSession", "isSeeded", "delegationDepth"] + (["agentPreset"] if "agentPreset" in raw_hdr else [])
    assert raw_hdr["isSeeded"] is True and raw_hdr["delegationDepth"] == 0 and "origin" not in raw_hdr
    assert raw_hdr["parentSession"] == parent.header.id and "seedLength" not in raw_hdr
    pe, ce = parent.events(logical=True), child.events()
    assert not child.envelope_free                       # a child is a store: every row has its envelope
    assert [e.envelope() for e in ce[:b + 1]] == [e.envelope() for e in pe[:b + 1]]
    marker = ce[b + 1]
    assert (marker.seq, marker.type, marker.data, marker.time) == (b + 1, "session/end-seed", {"inherited": True},
                                                                    pe[b].time)
    assert inherited_count(ce, child.header) == b + 1 == res["seedLength"]
    # the child re-reads with the parent's derived messages through the boundary, in its version
    assert analysis.messages(child, through=b) == analysis.messages(parent, through=b)
    return child


@pytest.mark.parametrize("path", fast_sample(LOGS, spread=3), ids=IDS)
def test_fork_of_every_v2_v4_log_is_a_child_in_the_same_version(tmp_path, path):
    p = copy(tmp_path, path)
    before = p.read_bytes()
    parent = LogReader.open(str(p))
    try:
        res = fork(parent)
    except ForkError as e:
        assert e.code == "FORK_UNAVAILABLE"
        assert not any(x.type == "turn/end" for x in parent.events(logical=True))
        return
    child = check_child(parent, res)
    assert os.path.basename(res["child"]) == f"session.v{parent.version}.jsonl"
    assert p.read_bytes() == before
    # a crashed (open) source is forked from its logical view: its closers are copied, marked child-owned
    # after the marker only when the cut was inside a turn, which a host fork never leaves
    assert child.events()[-1].type == "session/end-seed"


def test_child_file_name_is_the_versions_generation_name(tmp_path):
    p = copy(tmp_path, CANCEL)
    res = fork(LogReader.open(str(p)))
    assert os.path.basename(res["child"]) == "session.v4.jsonl"


def test_core_fork_inside_a_v4_turn_gets_forked_closers_after_the_marker(tmp_path):
    p = copy(tmp_path, CANCEL)
    parent = LogReader.open(str(p))
    pe = parent.events()
    assert (pe[14].type, pe[15].type, pe[16].type) == ("assistant/message", "tool/call", "tool/result")
    plan = plan_core_fork(parent, 15)                  # call_wait started, call_skipped never started
    res = fork(parent, plan=plan)
    child = LogReader.open(res["child"])
    ce = child.events()
    assert [e.envelope() for e in ce[:16]] == [e.envelope() for e in pe[:16]]
    assert (ce[16].type, ce[16].data, ce[16].time) == ("session/end-seed", {"inherited": True}, pe[15].time)
    rows = [json.loads(x) for x in open(res["child"], "rb").read().splitlines()[18:]]
    assert [r["type"] for r in rows] == ["tool/result", "tool/result", "step/end", "turn/end"]
    wait, skipped = rows[0], rows[1]
    assert wait["data"]["message"] == {"id": "forked-tool-result-call_wait-17", "role": "tool",
                                       "toolCallId": "call_wait", "isError": True,
                                       "source": {"kind": "tool", "callId": "call_wait"},
                                       "content": [{"type": "text", "text": FORKED_STARTED}]}
    assert wait["data"]["error"] == {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert wait["sourceEventSeqs"] == [15] and wait["surfaceOp"] == "append" and wait["seq"] == 17
    assert skipped["data"]["message"]["id"] == "forked-tool-result-call_skipped-18"
    assert skipped["data"]["message"]["content"][0]["text"] == FORKED_NOT_STARTED
    assert skipped["data"]["error"]["code"] == "TOOL_NOT_STARTED" and "sourceEventSeqs" not in skipped
    assert rows[2]["data"] == {"turn": 1, "step": 1} and rows[3]["data"] == {"turn": 1, "reason": {"kind": "forked"}}
    assert all(r["time"] == pe[15].time for r in rows)
    assert inherited_count(ce, child.header) == 16
    # the child's turn is closed: its own messages are the parent's prefix plus the two closers
    msgs = analysis.messages(child)
    assert msgs[:-2] == analysis.messages(parent, through=15)
    assert [m["id"] for m in msgs[-2:]] == ["forked-tool-result-call_wait-17", "forked-tool-result-call_skipped-18"]


def test_core_fork_refused_on_v0(tmp_path):
    v0 = NEXT / "zsagi1368+deepseek-harness-zDSH@3a10855f19/packages/test-support/session-snapshot/tests/fixtures/suite/pin-turn/session.jsonl"
    with pytest.raises(ForkError) as e:
        plan_core_fork(LogReader.open(str(copy(tmp_path, v0))), 2)
    assert e.value.code == "INVALID_BOUNDARY"


def zstd_store(tmp_path, src: Path, name="session.v4.jsonl.zstd") -> Path:
    """A real (enveloped) zstd v4 store holding ``src``'s events, one frame per few events."""
    r = LogReader.open(str(src))
    hdr = json.loads(r.source.header_raw)
    out = tmp_path / "zstore" / "--p--" / "s" / name
    w = SessionWriter(str(out), hdr, fmt="zstd", pack=False, batch_delay_ms=1, exists=False)
    evs = [e.envelope() for e in r.events()]
    try:
        for i in range(0, len(evs), 4):
            w.append(evs[i:i + 4])
            w.flush()
    finally:
        w.close()
    return out


def test_zstd_v4_fork_copies_whole_frames_and_verifies(tmp_path):
    p = zstd_store(tmp_path, CANCEL)
    before = p.read_bytes()
    parent = LogReader.open(str(p))
    assert parent.source.kind == "zstd" and parent.version == 4
    res = fork(parent)
    assert res["child"].endswith("session.v4.jsonl.zstd") and res["format"] == "zstd" and res["bytesCopied"] > 0
    check_child(parent, res)
    assert p.read_bytes() == before


@pytest.mark.parametrize("zst", [False, True], ids=["jsonl", "zstd"])
@pytest.mark.slow
def test_large_v4_fork_copies_the_prefix_as_stored(tmp_path, zst):
    """A multi-block / multi-frame v4 store: the rows before the cut are copied as stored
    (byte range / whole frames, not re-read), the cut block through the boundary row."""
    from app.log.source.zstdframes import encode_session
    from app.tools.synth import SessionSynth, write_jsonl
    raw = tmp_path / "gen" / "session.v4.jsonl"
    raw.parent.mkdir()
    write_jsonl(str(raw), SessionSynth(seed=7, version=4), target_bytes=3_000_000)
    p = raw
    if zst:
        head, body = raw.read_bytes().split(b"\n", 1)
        rows = body.split(b"\n")[:-1]
        p = tmp_path / "z" / "session.v4.jsonl.zstd"
        p.parent.mkdir()
        p.write_bytes(encode_session(head + b"\n", [b"\n".join(rows[i:i + 64]) + b"\n"
                                                    for i in range(0, len(rows), 64)]))
    parent = LogReader.open(str(p))
    pe = parent.events()
    ends = [e.seq for e in pe if e.type == "turn/end"]
    anchor = next(e.seq for e in pe if e.type == "assistant/message" and e.seq > ends[len(ends) // 2])
    res = fork(parent, anchor)
    assert res["bytesCopied"] > (100_000 if zst else 1_000_000)   # most of the seed copied without decoding
    child = check_child(parent, res)
    b = res["boundary"]
    assert [e.raw for e in child.events()[:b + 1]] == [e.raw for e in pe[:b + 1]]


@pytest.mark.slow
def test_v4_fork_killed_at_every_publication_step_is_complete_or_absent(tmp_path):
    """Durable before success, never a half child: SIGKILL at each step of the child's
    publication leaves either no child or a complete v4 child (the v0 guarantee)."""
    import signal
    import subprocess
    import sys
    from app.store.discovery import discover
    from app.store.publish import PUBLISH_STEPS
    p = copy(tmp_path, CANCEL)
    before = p.read_bytes()
    steps = ("before-publish",) + PUBLISH_STEPS + ("after-publish",)
    parent = LogReader.open(str(p))
    for i, step in enumerate(steps + (None,)):
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        if step:
            env["SESSION_LENS_FAULT_STEP"] = step
        res = subprocess.run([sys.executable, "-m", "app", "fork", str(p), "--id", f"k{i}", "--json"],
                             capture_output=True, text=True, cwd=REPO, env=env)
        assert res.returncode == (-signal.SIGKILL if step else 0), (step, res.stderr)
        assert p.read_bytes() == before
        kids = {s.id: s for s in discover(str(p.parent)).sessions if s.id != parent.header.id}
        published = step is None or steps.index(step) >= steps.index("linked")
        assert (f"k{i}" in kids) == published, step
        for s in kids.values():
            child = LogReader.open(s.path)
            assert child.version == 4 and all(type(x).__name__ == "Event" for x in child.items())
            ce = child.events()
            assert ce[-1].data == {"inherited": True} and inherited_count(ce, child.header) == len(ce) - 1
            assert analysis.messages(child, through=len(ce) - 2) == analysis.messages(parent, through=len(ce) - 2)
