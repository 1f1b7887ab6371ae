"""Logical versus physical tails side by side, aligned by seq, with gutter marks; the named truths."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from app.cli.main import main as cli
from app.log.index.reader import LogReader
from app.log.fold.tails import TRUTHS, align_tails, legend, truth_label

repo_root = Path(__file__).resolve().parents[1]
CRASHED = repo_root / "resources/demo/sessions/--home-dev-demo-project--/demo-crashed/session.jsonl"
COMPLETE = repo_root / "resources/demo/sessions/--home-dev-demo-project--/demo-todo/session.jsonl"


def _damaged(tmp_path) -> Path:
    """demo-crashed (open turn ending at seq 4) + a readable row out of order (seq 6: a repair
    drops it) + half a line (torn)."""
    p = tmp_path / "session.jsonl"
    shutil.copyfile(CRASHED, p)
    with open(p, "ab") as f:
        f.write(b'{"type":"step/end","seq":6,"time":0,"data":{"turn":1,"step":1}}\n')
        f.write(b'{"type":"turn/end","seq":7,"time":0,"da')
    return p


def test_alignment_by_seq_with_marks(tmp_path):
    r = LogReader.open(str(_damaged(tmp_path)))
    rows = align_tails(r.tail_page(50))
    by = {row.seq: row for row in rows if row.seq is not None}
    # the stored prefix: both sides, no marks
    for s in range(0, 5):
        assert by[s].physical is by[s].logical and not by[s].marks
    # the closure: tool/result at 5 (nothing stored there), step/end at 6 beside the dropped stored seq 6
    assert by[5].physical is None and by[5].logical.type == "tool/result" and by[5].marks == {"logical": "synthesized"}
    assert by[6].physical.type == "step/end" and not by[6].physical.synthesized
    assert by[6].marks == {"physical": "dropped", "logical": "synthesized"} and by[6].logical.synthesized
    assert by[7].physical is None and by[7].logical.type == "turn/end" and by[7].logical.data["reason"]["kind"] == "interrupted"
    # the torn line: physical only, no seq
    (torn,) = [row for row in rows if row.seq is None]
    assert torn.marks == {"physical": "torn"} and torn.logical is None
    # every logical event appears exactly once, in seq order
    logical = [row.logical.seq for row in rows if row.logical is not None]
    assert logical == sorted(logical) == list(range(0, 8))


def test_cli_tails_json(tmp_path, capsys):
    assert cli(["tails", str(_damaged(tmp_path)), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["openTail"] and obj["logical"]["name"] == "Logical history (crash closed in memory)"
    assert obj["physical"]["name"] == "Everything on disk"
    marks = [(r["seq"], r["marks"]) for r in obj["rows"] if r["marks"]]
    assert marks == [(5, {"logical": "synthesized"}), (6, {"physical": "dropped", "logical": "synthesized"}),
                     (None, {"physical": "torn"}), (7, {"logical": "synthesized"})]


def test_complete_log_has_identical_sides():
    r = LogReader.open(str(COMPLETE))
    rows = align_tails(r.tail_page(50))
    assert rows and all(row.physical is row.logical and not row.marks for row in rows)


def test_truth_names():
    assert truth_label("request", 42) == "Exact request at seq 42"
    assert truth_label("model") == "Model's view"
    names = [n for n, _ in legend()]
    for want in ("Model's view", "Everything on disk", "Logical history (crash closed in memory)", "Fork seed",
                 "Live snapshot", "Flushed load", "Raw range from seq N", "Raw artifact"):
        assert want in names
    assert all(w for _, w in legend()) and len(TRUTHS) == len(names)
