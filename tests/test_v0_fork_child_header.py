"""v0 difference 4 (issue 12): a fork child's header is top level (``delegationDepth`` 0, no
``origin``), as dsh writes it, even when the parent is a subagent."""
from __future__ import annotations

import json

from app.log.index.reader import LogReader
from app.store.forking import fork

from fixtures_util import ev, write_log


def test_child_of_a_subagent_is_top_level(tmp_path):
    hdr = {"type": "session", "version": 0, "id": "sub-1", "createdAt": 5, "cwd": "/w", "parentSession": "root-1",
           "origin": "subagent", "delegationDepth": 2, "agentPreset": "code"}
    p = write_log(tmp_path / "store" / "session.jsonl", [
        ev(0, "turn/start", {"turn": 1}), ev(1, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})],
        header=hdr)
    res = fork(LogReader.open(str(p)), child_id="kid")
    child_hdr = json.loads(open(res["child"], "rb").readline())
    assert child_hdr == {"type": "session", "version": 0, "id": "kid", "createdAt": child_hdr["createdAt"],
                         "cwd": "/w", "parentSession": "sub-1", "seedLength": 2, "delegationDepth": 0,
                         "agentPreset": "code"}
    assert list(child_hdr)[:4] == ["type", "version", "id", "createdAt"]
