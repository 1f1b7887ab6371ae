"""Issue 27 item 0 / item 2 (vocabulary part): one known-type set per dsh build, written into any
generation (spec-versions §3.5 correction), and ``image/offload`` applied in every version.

The fixture ``inline-image-prompt`` (a v3 log of the Hebilicious line and its v4 twin) carries
``agent/harness`` and ``image/offload`` in v3: both are known, and the exact request at seq 17
offloads images 0-2 in v3 exactly as in v4.
"""
from __future__ import annotations

import json
from pathlib import Path

from app.log.fold.checkpoints import build_checkpoints, request_at as request_at_cp
from app.log.format.versions import known_types
from app.log.index.reader import LogReader
from app.log.query import analysis

from fixtures_util import REPO

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
V3 = NEXT / "Hebilicious+deepseek-harness@52b7fb8494/snapshots/sdk/inline-image-prompt/session.v3.jsonl"
V4 = NEXT / "Hebilicious+deepseek-harness@4934042113/snapshots/sdk/inline-image-prompt/session.v4.jsonl"


def _images(req: dict) -> list:
    return [b.get("offloaded") for m in req["request"]["messages"] for b in m.get("content") or []
            if isinstance(b, dict) and b.get("type") == "image"]


def test_one_vocabulary_for_every_newer_version():
    for v in (1, 2, 3, 4):
        assert {"agent/harness", "image/offload", "subagent/catalog", "developer/message",
                "agent-tool-bridge/exposed"} <= known_types(v)
    assert "tool/code-dispatch" in known_types(2) and "tool/code-dispatch" not in known_types(3)
    assert "assistant/chunk" in known_types(1) and "assistant/chunk" not in known_types(2)
    assert known_types(3) == known_types(4)


def test_inline_image_prompt_v3_offloads_as_its_v4_twin():
    got = {}
    for p in (V3, V4):
        r = LogReader.open(str(p))
        info = analysis.inspect(r)
        assert not [x for x in info["problems"] if x.startswith(("unknown-type", "fold-violation"))], info["problems"]
        assert info["dshWouldRefuse"] is False
        req = analysis.request_at(r, 17)
        assert _images(req) == [True, True, True, None, None, None]
        # the checkpoint path (large logs) says the same
        cps = build_checkpoints(r, every=4)
        assert _images(request_at_cp(r, 17, cps)) == _images(req)
        got[p] = req["request"]["messages"]
    # the user message carrying the images is the same object in both twins
    user3 = [m for m in got[V3] if m.get("role") == "user"]
    user4 = [m for m in got[V4] if m.get("role") == "user"]
    assert user3[0] == user4[0]


def test_minimal_v3_log_with_newer_types_is_not_refused(tmp_path: Path):
    rows = [{"type": "session", "version": 3, "id": "s", "createdAt": 1, "isSeeded": False, "delegationDepth": 0},
            {"type": "agent/harness", "seq": 0, "time": 1, "data": {"harness": "dsh"}},
            {"type": "agent-tool-bridge/exposed", "seq": 1, "time": 1, "data": {"tools": ["a"]}},
            {"type": "turn/start", "seq": 2, "time": 1, "data": {"turn": 1}},
            {"type": "turn/end", "seq": 3, "time": 1, "data": {"turn": 1, "reason": {"kind": "completed"}}}]
    p = tmp_path / "session.v3.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in rows))
    info = analysis.inspect(LogReader.open(str(p)))
    assert info["dshWouldRefuse"] is False and not [x for x in info["problems"] if "unknown" in x]
