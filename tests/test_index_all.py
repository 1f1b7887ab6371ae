"""``session-lens index PATH --all``: the seq index and the work done ahead (fold checkpoints and surface
index, cached beside it, and the outline), built once and reused."""
from __future__ import annotations

import json

from app.cli.main import main as cli
from app.log.index.reader import LogReader
from app.log.query.outline import build_outline
from app.tools.synth import SessionSynth, write_jsonl


def test_index_all_builds_then_reuses(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(8), target_bytes=600_000)
    assert cli(["index", str(p), "--all", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["status"] == "built"
    a = first["ahead"]
    assert a["checkpoints"]["status"] == a["surface"]["status"] == a["outline"]["status"] == "built"
    ol = build_outline(LogReader.open(str(p)))
    assert a["outline"]["turns"] == len(ol.turns) == first["turns"]
    assert a["outline"]["errors"] == sum(len(t.error_seqs) for t in ol.turns) > 0
    assert cli(["index", str(p), "--all", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["status"] == "hit" and again["ahead"]["checkpoints"]["status"] == "hit"
    assert again["ahead"]["surface"]["status"] == again["ahead"]["outline"]["status"] == "hit"
    assert cli(["index", str(p), "--json"]) == 0                  # without --all: the index only
    assert "ahead" not in json.loads(capsys.readouterr().out)
