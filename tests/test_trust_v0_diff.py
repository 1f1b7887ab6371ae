"""Issue 27 item 3: ``diff --steps`` compares the requests as today's dsh derives them (a v0 log through its
migration chain: the prompt is the system-prompt head, no ``system``, tool results as tool messages,
toolHistory), the writer-era requests with ``--as-written``.  The expected requests are the hand-derived ones
of :mod:`test_trust_v0_normalized`."""
from __future__ import annotations

import json

from app.cli.main import main as cli
from app.log.index.reader import LogReader
from app.log.query.analysis import request_at
from app.log.query.diff import request_diff

from fixtures_util import REPO, write_log
from test_trust_v0_normalized import A6, ROWS, T8, U11, U2, _request, head

PACKED = REPO.parent / "shared" / "fixtures" / "dsh" / "examples/acp-agent/tests/snapshots/packed-chunks/session.jsonl"


def test_diff_of_a_hand_derived_v0_log(tmp_path):
    p = write_log(tmp_path / "session.jsonl", ROWS)
    r = LogReader.open(str(p))
    d = request_diff(r, "1.1", "1.2")
    assert (d["a"]["boundary"], d["b"]["boundary"]) == (4, 13)
    assert d["requests"]["a"] == _request([head(3, "S1"), U2])
    assert d["requests"]["b"] == _request([head(12, "S2"), U2, A6, T8, U11])
    # the prompt changed (S1 -> S2): said by the system part, and the head (message 0, a new id) changed
    assert d["system"]["changed"] and "-S1" in d["system"]["diff"] and "+S2" in d["system"]["diff"]
    m = d["messages"]
    assert (m["countA"], m["countB"], m["commonPrefix"], m["changed"]) == (2, 5, 0, [0])
    assert m["changedSeqs"] == [{"index": 0, "from": 3, "to": 12}]      # stored rows: the two headers
    assert m["addedSeqs"] == [6, 8, 11]
    # as written: the v0 spec's requests (the prompt in ``system``, the tool result a user message)
    w = request_diff(r, "1.1", "1.2", as_written=True)
    assert w["requests"]["a"]["system"] == "S1" and w["requests"]["b"]["system"] == "S2"
    assert "toolHistory" not in w["requests"]["b"] and w["system"]["changed"]
    assert [x["role"] for x in w["requests"]["b"]["messages"]][:3] == ["user", "assistant", "user"]
    wm = w["messages"]
    assert (wm["countA"], wm["commonPrefix"], wm["changed"], wm["addedSeqs"]) == (1, 1, [], [6, 8, 11])


def test_diff_of_an_accepted_fixture_equals_the_request_face(capsys):
    r = LogReader.open(str(PACKED))
    for aw in (False, True):
        d = request_diff(r, "1.1", "1.2", as_written=aw)
        for side in ("a", "b"):
            assert d["requests"][side] == request_at(r, d[side]["boundary"], as_written=aw)["request"]
        assert ("system" in d["requests"]["b"]) is aw and ("toolHistory" in d["requests"]["b"]) is not aw
        assert not d["system"]["changed"] and d["messages"]["commonPrefix"] == d["messages"]["countA"]
    assert cli(["diff", str(PACKED), "--steps", "1.1", "1.2", "--json", "--full"]) == 0
    got = json.loads(capsys.readouterr().out)["requests"]
    assert got["requests"]["b"]["messages"][0]["source"] == {"kind": "system-prompt"}
    assert got["requests"]["b"]["messages"][-1]["role"] == "tool"
    assert cli(["diff", str(PACKED), "--steps", "1.1", "1.2", "--json", "--full", "--as-written"]) == 0
    got = json.loads(capsys.readouterr().out)["requests"]
    assert "system" in got["requests"]["b"] and got["requests"]["b"]["messages"][-1]["role"] == "user"
