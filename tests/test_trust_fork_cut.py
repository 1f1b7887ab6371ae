"""Issue 27 item 4: the fork cut is the newest dsh host's, right after the boundary turn's turn/end, for
every source version; the seed's marker follows at B+1 with the time of event B (decision 0018)."""
from __future__ import annotations

import json
import shutil

import pytest

from app.log.fold.fork import plan_fork
from app.log.index.reader import LogReader
from app.store.forking import fork

from fixtures_util import REPO

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
VFS = "packages/experimental/webworker-runtime/tests/fixtures/vfs-example/home/sessions/--dsh-workspace--"
CASES = [NEXT / f"zsagi1368+deepseek-harness-zDSH@a18d8a996c/{VFS}/preview-showcase/session.v2.jsonl",
         NEXT / f"zsagi1368+deepseek-harness-zDSH@30f71de5f3/{VFS}/preview-showcase/session.v3.jsonl",
         NEXT / "Hebilicious+deepseek-harness@4934042113/snapshots/session/dynamic-tool-prompt-updates/session.v4.jsonl"]


@pytest.mark.parametrize("src", CASES, ids=["v2", "v3", "v4"])
def test_cut_right_after_the_turn_end(tmp_path, src):
    p = tmp_path / "s" / src.name
    p.parent.mkdir()
    shutil.copy(src, p)
    r = LogReader.open(str(p))
    evs = r.events()
    msgs = [e.seq for e in evs if e.type == "assistant/message"]
    anchor = msgs[0]
    te = next(e for e in evs if e.type == "turn/end" and e.seq >= anchor)
    plan = plan_fork(r, anchor)
    assert plan.boundary == te.seq and plan.stored_through == te.seq
    res = fork(r, anchor, out_store=str(tmp_path / "forks"))
    child = LogReader.open(res["child"])
    ce = child.events()
    same = [(e.seq, e.type, e.data) for e in evs[:te.seq + 1]]     # (an envelope-free snapshot's child has envelopes)
    assert [(e.seq, e.type, e.data) for e in ce[:te.seq + 1]] == same
    marker = ce[te.seq + 1]
    assert marker.type == "session/end-seed" and marker.data == {"inherited": True} and marker.time == te.time
    # what the parent logged between the turn/end and the next turn/start is not inherited
    assert len(ce) == te.seq + 2                       # the marker ends the seed, nothing after the turn/end
    assert res["seedLength"] == te.seq + 1


def test_the_corpus_fork_child_inherits_through_the_turn_end():
    """The real v4 subagent_fork child: the tagged marker directly follows the parent's turn/end."""
    p = NEXT / "Hebilicious+deepseek-harness@4934042113/snapshots/sdk/subagent-fork-in-process/session.1.v4.jsonl"
    rows = [json.loads(x) for x in p.read_text().splitlines()[1:]]
    k = next(i for i, x in enumerate(rows) if x["type"] == "session/end-seed" and x["data"].get("inherited"))
    assert rows[k - 1]["type"] == "turn/end"
