"""Issue 27 (the v0 question, decision 0022): today's dsh reads a v0 ``session.jsonl`` only through its migration
chain (v0 -> v1 -> v2 -> v3 -> v4).  The chain's v2->v3 edge refuses a surface event (a user message, or a
steering message that v0->v1 turns into one) before the first ``step/start``, and a prompt change outside an
open step; the earlier edges keep the relative order of those events.  So does the verdict: inspect, messages
and the banner say dsh would refuse such a v0 log, naming the chain.  A v0 log with its user message inside
the step (as dsh's own v0 snapshots have it) is loaded.  SQLite stores are not judged by the chain (dsh's
v1+ trees read no SQLite store)."""
from __future__ import annotations

import collections
import json
from pathlib import Path

from app.log.index.reader import LogReader
from app.log.query import analysis

from fixtures_util import REPO, ev, write_log

V0 = REPO.parent / "shared" / "fixtures" / "dsh"
CHAIN = "the newest dsh reads a v0 log only through its migration chain"


def user(seq: int, kind: str = "user/message") -> dict:
    data = {"id": f"u{seq}", "role": "user", "content": [{"type": "text", "text": "q"}], "source": {"kind": "user"}}
    if kind == "steering/message":
        return ev(seq, kind, {"turn": 1, "message": data})
    return ev(seq, kind, data, surfaceOp="append")


def header(seq: int, system: str) -> dict:
    return ev(seq, "request/header", {"header": {"config": {"provider": "p", "model": "m"}, "system": system},
                                      "reason": "initial"})


def refusal(p: Path) -> list[str]:
    info = analysis.inspect(LogReader.open(str(p)))
    why = [x for x in info["problems"] if CHAIN in x]
    assert bool(why) is info["dshWouldRefuse"], info["problems"]
    return why


def test_v0_chain_refusals_and_loads(tmp_path):
    end = [ev(4, "step/end", {"turn": 1, "step": 1}), ev(5, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})]
    cases = {
        "user-first": ([ev(0, "turn/start", {"turn": 1}), user(1), ev(2, "step/start", {"turn": 1, "step": 1}),
                        header(3, "S")], "user/message at seq 1 comes before the first step/start"),
        "steering-first": ([ev(0, "turn/start", {"turn": 1}), user(1, "steering/message"),
                            ev(2, "step/start", {"turn": 1, "step": 1}), header(3, "S")],
                           "user/message at seq 1 comes before the first step/start"),
        "prompt-outside-step": ([header(0, "S"), ev(1, "turn/start", {"turn": 1}),
                                 ev(2, "step/start", {"turn": 1, "step": 1}), user(3)],
                                "request/header at seq 0 changes the system prompt while no step is open"),
        "loaded": ([ev(0, "turn/start", {"turn": 1}), ev(1, "step/start", {"turn": 1, "step": 1}), user(2),
                    header(3, "S")], None),
        "empty-prompt-outside-step": ([header(0, ""), ev(1, "turn/start", {"turn": 1}),
                                       ev(2, "step/start", {"turn": 1, "step": 1}), user(3)], None),
    }
    for name, (rows, want) in cases.items():
        p = write_log(tmp_path / name / "session.jsonl", rows + end)
        why = refusal(p)
        if want is None:
            assert why == [], (name, why)
        else:
            assert len(why) == 1 and want in why[0] and "(v0 -> ... -> v4)" in why[0], (name, why)
            # every face says it: messages (stderr warning, JSON), as the v2 refusals do
            from app.cli.main import main
            import contextlib
            import io
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                assert main(["messages", str(p), "--json"]) == 0
            assert json.loads(out.getvalue())["dshWouldRefuse"] is True and CHAIN in err.getvalue()


def test_the_v0_corpus_by_the_chain():
    """Of dsh's 169 v0 snapshot logs, 32 put a surface event before the first step (24: the apps/web seeds and
    headless expected logs) or set a prompt outside a step (8: the snapshot tool's own suite inputs)."""
    got: collections.Counter[str] = collections.Counter()
    for p in sorted(V0.rglob("*.jsonl")):
        try:
            r = LogReader.open(str(p))
        except Exception:           # noqa: BLE001 - (headless event streams are not logs)
            continue
        if r.header is None or (r.version or 0) != 0:
            continue
        why = refusal(p)
        got["refused" if why else "loaded"] += 1
        if why:
            got["before-step" if "before the first step/start" in why[0] else "prompt-outside-step"] += 1
    assert got == {"loaded": 137, "refused": 32, "before-step": 24, "prompt-outside-step": 8}
