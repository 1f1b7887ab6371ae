"""Diffs (failed vs committed attempt, consecutive requests, fork child vs parent) and stats."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.main import main as cli
from app.log.query.analysis import request_at
from app.log.query.diff import DiffError, attempt_diff, fork_diff, request_diff
from app.store.lineage import find_parent_path
from app.log.index.reader import LogReader
from app.log.query.stats import compute_stats

repo_root = Path(__file__).resolve().parents[1]
fixtures = repo_root.parent / "shared" / "fixtures" / "dsh"
SNAP = fixtures / "examples/acp-agent/tests/snapshots"
RETRY = SNAP / "empty-response-retry/session.jsonl"
PACKED = SNAP / "packed-chunks/session.jsonl"
FORK = SNAP / "subagent-fork-in-process"
COMPACTION = fixtures / "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"


def test_failed_vs_committed_attempt():
    d = attempt_diff(LogReader.open(str(RETRY)))
    assert len(d) == 1
    step = d[0]
    assert (step["turn"], step["step"]) == (1, 1)
    (f,) = step["failed"]
    assert (f["firstSeq"], f["lastSeq"]) == (9, 10)
    assert f["failure"]["code"] == "EMPTY_RESPONSE" and f["text"] == ""
    assert f["usage"] == {"inputTokens": 0, "outputTokens": 0}
    assert f["retrySeq"] == 11 and f["retryStartedSeq"] == 12
    c = step["committed"]
    assert c["messageSeq"] == 18 and c["attemptFirstSeq"] == 13 and c["text"] == "Recovered."
    assert c["streamed"]["text"] == c["text"]
    assert "+Recovered." in f["textDiff"]


def test_overflow_attempt_in_compaction():
    d = attempt_diff(LogReader.open(str(COMPACTION)))
    (step,) = d
    assert step["failed"][0]["failure"]["code"] == "CONTEXT_WINDOW_EXCEEDED"
    assert step["committed"]["text"] == "COMPACTION RECOVERED"


def test_consecutive_step_requests():
    r = LogReader.open(str(PACKED))
    d = request_diff(r, "1.1", "1.2")
    assert d["a"]["boundary"] < d["b"]["boundary"]
    # boundaries match the exact request computed by the core
    ra, rb = request_at(r, d["a"]["boundary"]), request_at(r, d["b"]["boundary"])
    assert d["requests"]["a"] == ra["request"] and d["requests"]["b"] == rb["request"]
    m = d["messages"]
    assert m["countA"] == len(ra["request"]["messages"]) and m["countB"] == len(rb["request"]["messages"])
    assert m["commonPrefix"] == m["countA"] and m["removed"] == [] and m["changed"] == []
    assert m["added"] == list(range(m["countA"], m["countB"])) and len(m["addedSeqs"]) == len(m["added"])
    assert not d["system"]["changed"] and not d["tools"]["changed"]
    assert d["config"] == {"added": {}, "removed": {}, "changed": {}}
    # same request by boundary seqs
    d2 = request_diff(r, d["a"]["boundary"], d["b"]["boundary"])
    assert d2["messages"] == m


def test_request_diff_across_compaction_marks_change():
    r = LogReader.open(str(COMPACTION))
    d = request_diff(r, 18, 23)           # failed overflow attempt vs the retry after compaction
    # (today's dsh: the system-prompt head first, unchanged, anchored at its stored row)
    assert d["messages"]["changed"] == [1] and d["messages"]["commonPrefix"] == 1
    assert d["messages"]["changedSeqs"][0] == {"index": 1, "from": 4, "to": 21}
    d = request_diff(r, 18, 23, as_written=True)          # the v0 spec's requests
    assert d["messages"]["changed"] == [0]
    assert d["messages"]["changedSeqs"][0] == {"index": 0, "from": 4, "to": 21}


def test_request_diff_errors():
    with pytest.raises(DiffError):
        request_diff(LogReader.open(str(PACKED)), "1.1", "7.7")


def test_fork_child_vs_parent():
    child = FORK / "session.1.jsonl"
    parent = find_parent_path(str(child))
    assert parent and Path(parent).name == "session.jsonl"
    d = fork_diff(LogReader.open(str(child)), LogReader.open(parent))
    assert d["commonPrefix"] == 42 and d["divergenceSeq"] == 42
    assert d["seedLength"] == 42 and d["seedLengthOk"]
    assert d["endSeedSeq"] == 42 and d["endSeedOk"] and d["childAtDivergence"] == "session/end-seed"
    assert d["problems"] == []


def test_stats_retry_and_tokens():
    s = compute_stats(LogReader.open(str(RETRY)))
    (st,) = s["steps"]
    assert st["attempts"] == 2 and st["failedAttempts"] == 1 and st["retries"] == 1
    assert st["errors"] == ["EMPTY_RESPONSE"]
    assert st["tokens"]["input"] == 12 and st["tokens"]["output"] == 3
    assert st["latencyMs"] is None                    # step/start time is 0 in the fixture


def test_stats_packed_and_tools():
    s = compute_stats(LogReader.open(str(PACKED)))
    t = s["totals"]
    assert t["tokens"]["cacheRead"] > 0 and t["tokens"]["reasoning"] > 0
    assert t["toolCalls"] == {"bash": 1}
    assert sum(sum(v.values()) for v in t["toolOutcomes"].values()) == 1
    for st in s["steps"]:
        assert st["latencyMs"] is None or st["latencyMs"] >= 0
    assert s["turns"][0]["tokens"] == t["tokens"]


def test_stats_compaction_latency():
    s = compute_stats(LogReader.open(str(COMPACTION)))
    assert [x["latencyMs"] for x in s["steps"]] == [13, 20]
    assert s["totals"]["toolOutcomes"] == {"bash": {"ok": 1}}


def test_cli_diff_and_stats(capsys):
    assert cli(["diff", str(PACKED), "--steps", "1.1", "1.2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "requests" in out and out["requests"]["messages"]["added"]
    assert cli(["diff", str(FORK / "session.1.jsonl"), "--fork", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["fork"]["commonPrefix"] == 42
    assert cli(["diff", str(RETRY), "--attempts", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["attempts"][0]["committed"]["messageSeq"] == 18
    assert cli(["stats", str(RETRY), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["retries"] == 1
