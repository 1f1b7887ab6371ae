"""The demo store shipped in resources/ has what the app's first screen promises."""
from __future__ import annotations

from app.log import analysis
from app.store.discovery import discover
from app.store.faces import open_info
from fixtures_util import REPO

DEMO = REPO / "resources" / "demo"


def test_demo_store_covers_the_features():
    listing = discover(str(DEMO))
    assert listing.kind == "home" and not listing.problems
    infos = {s.id: s for s in listing.sessions}
    facts = {sid: analysis.inspect(open_info(s)) for sid, s in infos.items()}
    assert all(not [p for p in f["problems"] if "fatal" in p] for f in facts.values())
    assert facts["demo-retry"]["hiddenAttempts"] == 1
    assert facts["demo-crashed"]["openTail"] and facts["demo-crashed"]["closure"] == ["tool/result", "step/end", "turn/end"]
    assert "aborted" in str(open_info(infos["demo-aborted"]).events()[-1].data)
    assert infos["demo-zstd"].format == "zstd" and facts["demo-zstd"]["events"] == facts["demo-parallel"]["events"]
    tools = sum(f["types"].get("tool/call", 0) for f in facts.values())
    assert tools >= 10
    # lineage: the Session Lens fork and the dsh subagent fork sit under their parents
    tree = {s.id: [c[0].id for c in kids] for s, kids in listing.tree()}
    assert tree["demo-long-goal"] == ["demo-long-goal-fork"]
    assert tree["96cf59c9-b347-48b9-b234-a5200913ad05"] == ["ada8966c-9fa3-441b-8721-37ff1e795e6a"]
