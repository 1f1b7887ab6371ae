"""v0 difference 6 (issue 12): ``sourceEventSeqs`` that do not point strictly backwards, and a
``request/header`` without provider or model, are reported as problems."""
from __future__ import annotations

from app.log.query import analysis
from app.log.index.reader import LogReader

from fixtures_util import ev, write_log


def user(seq, **env):
    return ev(seq, "user/message", {"id": f"u{seq}", "role": "user", "content": [{"type": "text", "text": "x"}],
                                    "source": {"kind": "user"}}, surfaceOp="append", **env)


def test_forward_and_self_source_seqs_are_problems(tmp_path):
    p = write_log(tmp_path / "session.jsonl", [
        ev(0, "turn/start", {"turn": 1}), user(1, sourceEventSeqs=[0]), user(2, sourceEventSeqs=[2]),
        user(3, sourceEventSeqs=[1, 5]), ev(4, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})])
    info = analysis.inspect(LogReader.open(str(p)))
    bad = [x for x in info["problems"] if x.startswith("source-seqs-not-backwards")]
    assert len(bad) == 2 and "[2]" in bad[0] and bad[0].endswith("seq 2)") and "[5]" in bad[1]
    assert bad[1].endswith("seq 3)")
    assert info["dshWouldRefuse"] is True


def test_backward_seqs_are_fine(tmp_path):
    p = write_log(tmp_path / "session.jsonl", [     # (the user message inside a step: today's dsh loads it)
        ev(0, "turn/start", {"turn": 1}), ev(1, "step/start", {"turn": 1, "step": 1}), user(2, sourceEventSeqs=[0]),
        ev(3, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})])
    info = analysis.inspect(LogReader.open(str(p)))
    assert not any("source-seqs" in x for x in info["problems"]) and info["dshWouldRefuse"] is False


def test_request_header_without_provider_or_model(tmp_path):
    p = write_log(tmp_path / "session.jsonl", [
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "request/header", {"header": {"config": {"model": "m"}}, "reason": "initial"}),
        ev(2, "request/header", {"header": {"config": {}}, "reason": "change"}),
        ev(3, "request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "change"}),
        ev(4, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})])
    info = analysis.inspect(LogReader.open(str(p)))
    probs = [x for x in info["problems"] if x.startswith("request-header-incomplete")]
    assert len(probs) == 2
    assert "has no provider (" in probs[0] and probs[0].endswith("seq 1)")
    assert "has no provider or model (" in probs[1] and probs[1].endswith("seq 2)")
    assert info["dshWouldRefuse"] is False
