"""Lineage in a real Harness-home layout: parents and children across session and project folders,
deeper than one level, for the fork diff and the ZIP export (the demo store's own fork included)."""
from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from app.cli.main import main as cli
from app.log.query.diff import fork_diff
from app.store.faces import open_reader
from app.store.forking import fork
from app.store.lineage import descendants, find_parent, lineage, store_root

repo_root = Path(__file__).resolve().parents[1]
fixtures = repo_root.parent / "shared" / "fixtures" / "dsh"
PROJ = "--home-dev-demo-project--"


@pytest.fixture
def home(tmp_path):
    """The demo home, plus a grandchild (a fork of the demo's fork) moved to another project folder."""
    h = tmp_path / "home"
    shutil.copytree(repo_root / "resources/demo", h)
    fork_src = h / "sessions" / PROJ / "demo-long-goal-fork" / "session.jsonl"
    res = fork(open_reader(str(fork_src)), None, child_id="grandchild")
    gdir = Path(res["child"]).parent
    other = h / "sessions" / "--home-dev-other-project--"
    other.mkdir()
    shutil.move(str(gdir), other / gdir.name)
    return h


def _p(home, sid, proj=PROJ):
    return home / "sessions" / proj / sid / "session.jsonl"


def test_demo_fork_parent_found_across_session_folders(capsys):
    child = repo_root / "resources/demo/sessions" / PROJ / "demo-long-goal-fork/session.jsonl"
    assert store_root(str(child)) == str(repo_root / "resources/demo/sessions")
    assert find_parent(str(child)) == str(repo_root / "resources/demo/sessions" / PROJ / "demo-long-goal/session.jsonl")
    assert cli(["diff", str(child), "--fork", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["fork"]
    assert d["parent"]["id"] == "demo-long-goal" and d["seedLengthOk"] and d["endSeedOk"] and not d["problems"]
    assert d["commonPrefix"] == d["seedLength"] == 1054          # through turn/end 1053 (decision 0018)


def test_lineage_deeper_than_one_level_across_projects(home, capsys):
    root = _p(home, "demo-long-goal")
    grand = home / "sessions/--home-dev-other-project--/grandchild/session.jsonl"
    lin = lineage(str(root))
    assert lin["complete"] and lin["ancestors"] == []
    (kid,) = lin["descendants"]
    assert kid["id"] == "demo-long-goal-fork"
    assert [g["id"] for g in kid["children"]] == ["grandchild"]
    assert [(d["id"], d["depth"]) for d in descendants(str(root))] == [("demo-long-goal-fork", 1), ("grandchild", 2)]
    # from the grandchild: both ancestors, outward
    lg = lineage(str(grand))
    assert [a["id"] for a in lg["ancestors"]] == ["demo-long-goal-fork", "demo-long-goal"]
    assert lg["root"] == "demo-long-goal"
    # its parent lives in another project folder; the fork diff finds and compares it
    assert find_parent(str(grand)) == str(_p(home, "demo-long-goal-fork"))
    assert cli(["diff", str(grand), "--fork", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["fork"]
    assert d["parent"]["id"] == "demo-long-goal-fork" and d["seedLengthOk"] and not d["problems"]
    # the trace command shows the same lineage
    assert cli(["trace", str(root), "--json"]) == 0
    t = json.loads(capsys.readouterr().out)["session"]
    assert t["descendants"][0]["children"][0]["id"] == "grandchild"


def test_fork_diff_takes_the_parent_it_is_given(home):
    child = open_reader(str(_p(home, "demo-long-goal-fork")))
    parent = open_reader(find_parent(str(_p(home, "demo-long-goal-fork"))))
    d = fork_diff(child, parent)
    assert d["commonPrefix"] == 1054 and d["divergenceSeq"] == 1054


def test_zip_export_includes_children_at_every_depth(home, tmp_path, capsys):
    out = tmp_path / "bundle.zip"
    assert cli(["export", str(_p(home, "demo-long-goal")), "--format", "zip", "--out", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)["zip"]
    assert not res["problems"], res["problems"]
    names = zipfile.ZipFile(out).namelist()
    assert "session.jsonl" in names
    assert "subagents/demo-long-goal-fork/session.jsonl" in names
    assert "subagents/grandchild/session.jsonl" in names
    z = zipfile.ZipFile(out)
    assert z.read("subagents/grandchild/session.jsonl") == \
        (home / "sessions/--home-dev-other-project--/grandchild/session.jsonl").read_bytes()


def test_demo_subagent_child_in_zip(tmp_path):
    from app.store.export import export_zip
    parent = repo_root / "resources/demo/sessions" / PROJ / "demo-v4-advanced/session.v4.jsonl.zstd"
    res = export_zip(open_reader(str(parent)), str(tmp_path / "z.zip"))
    assert {"subagents/demo-v4-advanced-child-1/session.v4.jsonl",
            "subagents/demo-v4-advanced-child-2/session.v4.jsonl"} <= set(res["entries"])


def test_zip_names_v4_generations_after_their_files(tmp_path):
    """A v4 zstd parent and its v4 zstd children: each entry is named after its generation file
    (``session.v4.jsonl``, the compression suffix off) and holds that file's decoded text."""
    from app.log.source.zstdlib import zstd
    from app.store.export import export_zip
    sessions = repo_root / "resources/demo/sessions" / PROJ
    parent = sessions / "demo-v4-advanced/session.v4.jsonl.zstd"
    res = export_zip(open_reader(str(parent)), str(tmp_path / "z.zip"))
    kids = ["demo-v4-advanced-child-1", "demo-v4-advanced-child-2"]
    assert res["entries"] == ["session.v4.jsonl"] + [f"subagents/{k}/session.v4.jsonl" for k in kids]
    with zipfile.ZipFile(tmp_path / "z.zip") as z:
        assert z.read("session.v4.jsonl") == zstd.decompress(parent.read_bytes())
        for k in kids:
            text = z.read(f"subagents/{k}/session.v4.jsonl")
            assert text == zstd.decompress((sessions / k / "session.v4.jsonl.zstd").read_bytes())
            assert json.loads(text.split(b"\n", 1)[0])["version"] == 4


def test_fixture_folders_still_list_siblings():
    multi = fixtures / "examples/acp-agent/tests/snapshots/subagent-fork-in-process/session.1.jsonl"
    assert store_root(str(multi)) == str(multi.parent)
    assert find_parent(str(multi)) == str(multi.parent / "session.jsonl")


def test_log_core_does_not_import_the_store():
    """No store import in these core modules, except the two documented compatibility shims
    (``diff.find_parent_path`` for the audit window until the UI pass, ``trace_session`` without a listing)."""
    import ast
    shims = {"find_parent_path", "trace_session"}
    for name in ("query/diff.py", "query/trace.py", "fold/surface.py", "fold/inflight.py", "fold/lineage.py"):
        tree = ast.parse((repo_root / "app/log" / name).read_text())

        def visit(node, func=None):
            for ch in ast.iter_child_nodes(node):
                f = ch.name if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
                if isinstance(ch, ast.ImportFrom) and "store" in (ch.module or "") and ch.level >= 2:
                    assert f in shims, (name, f, ch.module)
                visit(ch, f)
        visit(tree)
