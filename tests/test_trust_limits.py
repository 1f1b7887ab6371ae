"""Issue 27 item 5: Session Lens's own resource limits are not dsh's rules.

A legal packed chunk row of 5,000 members (dsh's JSONL packer has a minimum run of 3 and no
maximum) reads clean and forks.  A row over Session Lens's member limit is reported as "over
Session Lens's limit (...)": never corrupt, never dsh-refused, and it does not cut contiguity, so
a fork (which copies bytes) still works through it."""
from __future__ import annotations

import io
import json
import contextlib
from pathlib import Path

from app.cli.main import main
from app.log.format.limits import MAX_PACKED_MEMBERS
from app.log.index.reader import LogReader
from app.log.query import analysis


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    assert rc != 3, err.getvalue()
    return rc, out.getvalue(), err.getvalue()


def packed_log(path: Path, members: int) -> Path:
    """A v0 log: turn 1 holds one text-chunks row of ``members`` members cited by its message; turn 2
    is a plain completed turn (so a turn/end follows the big row)."""
    rows: list[dict] = []

    def ev(typ, data, **kw):
        rows.append({"type": typ, "seq": len_seq(), "time": 1, "data": data, **kw})

    seq = [0]

    def len_seq():
        s = seq[0]
        seq[0] += 1
        return s
    ev("turn/start", {"turn": 1})
    ev("step/start", {"turn": 1, "step": 1})
    ev("user/message", {"id": "u1", "role": "user", "content": [{"type": "text", "text": "go"}],
                        "source": {"kind": "user"}}, surfaceOp="append")
    ev("request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"})
    first = seq[0]
    ev("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}})
    s0 = seq[0]
    rows.append({"type": "text-chunks", "seq0": s0, "time0": 1,
                 "data": {"turn": 1, "step": 1, "index": 0, "dt": [0] * (members - 1), "texts": ["x"] * members}})
    seq[0] += members
    ev("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {"kind": "stop"}}})
    cited = list(range(first, seq[0]))
    ev("assistant/message", {"turn": 1, "step": 1, "message": {"id": "a1", "role": "assistant",
                                                               "content": [{"type": "text", "text": "x" * members}]}},
       surfaceOp="append", sourceEventSeqs=cited)
    ev("step/end", {"turn": 1, "step": 1})
    ev("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    ev("turn/start", {"turn": 2})
    ev("turn/end", {"turn": 2, "reason": {"kind": "completed"}})
    hdr = {"type": "session", "version": 0, "id": "big", "createdAt": 1, "delegationDepth": 0}
    p = path / "session.jsonl"
    p.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [hdr] + rows))
    return p


def test_a_5000_member_packed_row_reads_clean_and_forks(tmp_path):
    (tmp_path / "s").mkdir()
    p = packed_log(tmp_path / "s", 5000)
    info = analysis.inspect(LogReader.open(str(p)))
    assert info["problems"] == [] and info["dshWouldRefuse"] is False and info["lastSeq"] == 5010
    rc, out, _ = run("messages", p, "--json")
    assert rc == 0
    rc, out, err = run("fork", p, "--out", tmp_path / "forks", "--json")
    assert rc == 0, err
    child = json.loads(out)["child"]
    cinfo = analysis.inspect(LogReader.open(child))
    assert cinfo["dshWouldRefuse"] is False and not [x for x in cinfo["problems"] if "corrupt" in x]


def test_a_row_over_session_lens_limit_is_ours_not_dsh(tmp_path):
    (tmp_path / "s").mkdir()
    n = MAX_PACKED_MEMBERS + 10
    p = packed_log(tmp_path / "s", n)
    info = analysis.inspect(LogReader.open(str(p)))
    assert info["dshWouldRefuse"] is False, info["problems"]
    assert any("over Session Lens's limit" in x for x in info["problems"]), info["problems"]
    assert not [x for x in info["problems"] if "corrupt" in x or "refuse" in x or x.startswith("seq-")]
    assert info["lastSeq"] == n + 10                      # contiguity is not cut there
    rc, out, err = run("fork", p, "--out", tmp_path / "forks", "--json")
    assert rc == 0, err                                   # a fork copies bytes: our limit does not stop it
    child = Path(json.loads(out)["child"])
    assert child.read_bytes().split(b"\n")[6] == p.read_bytes().split(b"\n")[6]    # the big row, byte for byte
