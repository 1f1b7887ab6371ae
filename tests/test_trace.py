"""Query trace on the compaction and retry fixtures, session lineage and cycles."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.main import main as cli
from app.log.index.reader import LogReader
from app.log.query.trace import TraceError, trace_event
from app.store.lineage import trace_session

repo_root = Path(__file__).resolve().parents[1]
fixtures = repo_root.parent / "shared" / "fixtures" / "dsh"
COMPACTION = fixtures / "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
RETRY = fixtures / "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
MULTI = fixtures / "examples/acp-agent/tests/snapshots/subagent-multi"


@pytest.fixture(scope="module")
def compaction():
    return LogReader.open(str(COMPACTION))


@pytest.fixture(scope="module")
def retry():
    return LogReader.open(str(RETRY))


def test_shadowed_through_compaction(compaction):
    t = trace_event(compaction, 4)
    assert t["surface"] == "shadowed"
    assert t["replacedBy"] == 21 and t["replacementChain"] == [21]
    assert t["derivedEventSeqs"] == [21]
    c = t["compaction"]
    assert c["compactionId"].startswith("338e88fa")
    assert (c["startSeq"], c["summarySeq"], c["replacementSeq"], c["endSeq"]) == (19, 20, 21, 22)
    assert c["shadowedRange"] == {"start": 4, "end": 4} and c["shadowedSeqs"] == [4]
    # seq 4 was a message of the requests before the compaction only
    assert t["requests"]["boundaries"] == [8, 18]


def test_replacement_event(compaction):
    t = trace_event(compaction, 21)
    assert t["surface"] == "current"
    assert t["sourceEventSeqs"] == [19, 20, 4]
    assert t["replacedEventSeqs"] == [4]
    assert t["replacedBy"] is None and t["replacementChain"] == []
    assert t["compaction"]["replacementSeq"] == 21
    assert t["requests"]["boundaries"] == [23]


def test_compaction_event_and_log_only(compaction):
    t = trace_event(compaction, 19)
    assert t["surface"] == "log-only"
    assert t["derivedEventSeqs"] == [21]
    assert t["compaction"]["compactionId"].startswith("338e88fa")


def test_failed_attempt_chunks(retry):
    for s in (9, 10):
        t = trace_event(retry, s)
        a = t["attempt"]
        assert t["surface"] == "log-only"
        assert (a["firstSeq"], a["lastSeq"], a["status"]) == (9, 10, "failed")
        assert a["failure"]["code"] == "EMPTY_RESPONSE"
        assert a["retrySeq"] == 11 and a["retryStartedSeq"] == 12
        assert t["derivedEventSeqs"] == []


def test_committed_attempt_chunks(retry):
    for s in range(13, 18):
        t = trace_event(retry, s)
        assert t["attempt"]["firstSeq"] == 13 and t["attempt"]["status"] == "committed"
        assert t["derivedEventSeqs"] == [18]
    m = trace_event(retry, 18)
    assert m["sourceEventSeqs"] == [13, 14, 15, 16, 17]
    assert m["surface"] == "current" and m["attempt"]["messageSeq"] == 18


def test_user_message_requests(retry):
    t = trace_event(retry, 4)
    assert t["surface"] == "current"
    assert t["requests"] == {"boundaries": [9, 13], "count": 2, "capped": False, "dispatches": 2}
    capped = trace_event(retry, 4, request_cap=1)
    assert capped["requests"]["boundaries"] == [9] and capped["requests"]["count"] == 2
    assert capped["requests"]["capped"]


def test_missing_seq(retry):
    with pytest.raises(TraceError):
        trace_event(retry, 10_000)


def test_session_lineage():
    root = trace_session(str(MULTI / "session.jsonl"))
    assert root["complete"] and root["root"] == root["target"]["id"]
    kids = root["descendants"]
    assert [k["path"].rsplit("/", 1)[1] for k in kids] == ["session.1.jsonl", "session.2.jsonl"]
    assert [k["createdAt"] for k in kids] == sorted(k["createdAt"] for k in kids)
    child = trace_session(str(MULTI / "session.1.jsonl"))
    assert [a["id"] for a in child["ancestors"]] == [root["target"]["id"]]
    assert child["complete"] and child["root"] == root["target"]["id"]


def _write_session(path: Path, sid: str, parent: str | None):
    hdr = {"type": "session", "version": 0, "id": sid, "createdAt": 1}
    if parent:
        hdr["parentSession"] = parent
    path.write_text(json.dumps(hdr) + "\n")


def test_unresolved_and_cycle(tmp_path):
    d = tmp_path / "u"
    d.mkdir()
    _write_session(d / "session.jsonl", "child", "missing-parent")
    t = trace_session(str(d / "session.jsonl"))
    assert not t["complete"] and t["unresolvedParentId"] == "missing-parent"
    c = tmp_path / "c"
    c.mkdir()
    _write_session(c / "session.jsonl", "a", "b")
    _write_session(c / "session.1.jsonl", "b", "a")
    with pytest.raises(TraceError) as e:
        trace_session(str(c / "session.jsonl"))
    assert e.value.code == "SESSION_QUERY_INVALID_LINEAGE"


def test_cli_trace(capsys):
    assert cli(["trace", str(COMPACTION), "--seq", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["replacedBy"] == 21 and out["compaction"]["compactionId"].startswith("338e88fa")
    assert cli(["trace", str(RETRY), "--seq", "999", "--json"]) == 2
