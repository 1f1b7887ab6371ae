"""v0 difference 7 (issue 12): when dsh would refuse to load a log (a seq gap, an unparsable
committed row or a bad envelope before a later turn/end), ``messages``, ``request`` and
``fork`` still answer, but say so: one warning line on stderr and ``problems`` /
``dshWouldRefuse`` in ``--json``.  A log dsh loads gets no warning."""
from __future__ import annotations

import json

import pytest

from app.cli.main import main

from fixtures_util import ev, write_log


def turn(t, base, gap_at=None):
    """One completed turn (user, chunk, assistant reply) starting at seq ``base``; the user message inside the
    step, as dsh's v0 snapshots have it (one before the first step/start is refused by today's dsh's
    migration chain: tests/test_trust_v0_chain.py)."""
    rows = [ev(base, "turn/start", {"turn": t}),
            ev(base + 1, "step/start", {"turn": t, "step": 1}),
            ev(base + 2, "user/message", {"id": f"u{t}", "role": "user", "content": [{"type": "text", "text": f"q{t}"}],
                                          "source": {"kind": "user"}}, surfaceOp="append"),
            ev(base + 3, "request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}),
            ev(base + 4, "assistant/chunk", {"turn": t, "step": 1, "chunk": {"type": "text-delta", "index": 0,
                                                                           "text": f"a{t}"}}),
            ev(base + 5, "assistant/message", {"turn": t, "step": 1, "message": {
                "id": f"a{t}", "role": "assistant", "content": [{"type": "text", "text": f"a{t}"}],
                "source": {"kind": "model", "provider": "p", "model": "m"}}}, surfaceOp="append",
               sourceEventSeqs=[base + 4]),
            ev(base + 6, "step/end", {"turn": t, "step": 1}),
            ev(base + 7, "turn/end", {"turn": t, "reason": {"kind": "completed"}})]
    return rows


def logs(tmp_path):
    good = turn(1, 0) + turn(2, 8)
    gap = turn(1, 0) + [dict(r, seq=r["seq"] + 1) for r in turn(2, 8)]                 # seq 8 missing
    bad_row = turn(1, 0) + [b'{"type":"turn/start","seq":8,'] + turn(2, 8)[1:]           # unparsable committed row
    bad_env = turn(1, 0) + [dict(turn(2, 8)[0], seq="8")] + turn(2, 8)[1:]                # bad envelope
    return {name: write_log(tmp_path / name / "session.jsonl", rows)
            for name, rows in (("good", good), ("gap", gap), ("bad-row", bad_row), ("bad-env", bad_env))}


@pytest.mark.parametrize("name", ["gap", "bad-row", "bad-env"])
def test_answers_but_says_dsh_would_refuse(tmp_path, capsys, name):
    p = str(logs(tmp_path)[name])
    assert main(["messages", p, "--json"]) == 0
    out, err = capsys.readouterr()
    obj = json.loads(out)
    assert obj["dshWouldRefuse"] is True and obj["problems"][0].startswith("dsh-would-refuse")
    assert [m["id"] for m in obj["messages"]][:2] == ["u1", "a1"]
    assert err.count("\n") == 1 and "warning: dsh would refuse to load this log" in err
    assert main(["request", p, "--at", "5", "--json"]) == 0
    out, err = capsys.readouterr()
    req = json.loads(out)
    assert req["dshWouldRefuse"] is True and req["problems"] and req["boundary"] == 4
    assert [m["id"] for m in req["request"]["messages"]] == ["u1"] and "warning" in err
    assert main(["fork", p, "--at", "5", "--json"]) == 0
    out, err = capsys.readouterr()
    fk = json.loads(out)
    assert fk["dshWouldRefuse"] is True and fk["boundary"] == 7 and "warning" in err
    assert main(["inspect", p, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dshWouldRefuse"] is True


def test_a_log_dsh_loads_says_nothing(tmp_path, capsys):
    p = str(logs(tmp_path)["good"])
    assert main(["messages", p, "--json"]) == 0
    out, err = capsys.readouterr()
    obj = json.loads(out)                           # one shape whatever the log (issue 27 item 8)
    assert obj["dshWouldRefuse"] is False and obj["problems"] == [] and err == ""
    assert [m["id"] for m in obj["messages"]] == ["u1", "a1", "u2", "a2"]
    assert main(["request", p, "--at", "13", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["dshWouldRefuse"] is False and json.loads(out)["problems"] == [] and err == ""
    assert main(["fork", p, "--preview", "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["dshWouldRefuse"] is False and err == ""
