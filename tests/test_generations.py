"""Generations (issue 12 item 1; spec-versions §2): a session folder may hold one file per
format version.  The newest canonical generation is the session, as dsh selects it; its
header must agree with its name; a damaged newest generation is reported, never silently
replaced by an older one; the others are listed; a file path opens exactly that file; and
nothing is ever written (no migrated generation)."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from app.cli.main import main
from app.store.discovery import discover, parse_generation
from app.store.faces import OpenError, open_reader

from fixtures_util import REPO

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
SUITE = "packages/test-support/session-snapshot/tests/fixtures/suite"
PIN_V0 = NEXT / f"zsagi1368+deepseek-harness-zDSH@3a10855f19/{SUITE}/pin-turn/session.jsonl"
PIN_V2 = NEXT / f"zsagi1368+deepseek-harness-zDSH@30f71de5f3/{SUITE}/pin-turn/session.v2.jsonl"
PIN_V3 = NEXT / f"zsagi1368+deepseek-harness-zDSH@30f71de5f3/{SUITE}/pin-turn/session.v3.jsonl"
PLAIN_CHILD_V2 = NEXT / f"zsagi1368+deepseek-harness-zDSH@85e854eadf/{SUITE}/plain-turn/session.1.v2.jsonl"


def home_with(tmp_path, files: dict):
    """A Harness home holding one session folder with the given generation files."""
    d = tmp_path / "home" / "sessions" / "--rec-pin-cwd--" / "pin"
    d.mkdir(parents=True)
    for name, src in files.items():
        if isinstance(src, bytes):
            (d / name).write_bytes(src)
        else:
            shutil.copy(src, d / name)
    return tmp_path / "home", d


def tree_bytes(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_names_that_are_generations():
    assert parse_generation("session.jsonl") == ("session", 0, False)
    assert parse_generation("session.v4.jsonl.zstd") == ("session", 4, True)
    assert parse_generation("session.v12.jsonl") == ("session", 12, False)
    assert parse_generation("session.1.v3.jsonl") == ("session.1", 3, False)        # fixture child naming
    for not_one in ("session.v0.jsonl", "session.v02.jsonl", "session.V2.jsonl", "session.v4.jsonl.a1b2c3d4e5f6.tmp",
                    "session.migration.7b634e51633faa1d.jsonl.zstd.tmp", "session.lock", "session.expected.jsonl"):
        assert parse_generation(not_one) is None, not_one


def test_newest_generation_is_the_session_and_the_others_are_listed(tmp_path):
    home, d = home_with(tmp_path, {"session.jsonl": PIN_V0, "session.v2.jsonl": PIN_V2, "session.v3.jsonl": PIN_V3})
    before = tree_bytes(home)
    listing = discover(str(home))
    assert len(listing.sessions) == 1 and listing.problems == []
    s = listing.sessions[0]
    assert s.path == str(d / "session.v3.jsonl") and s.version == 3 and s.generation == "session.v3.jsonl"
    assert [g["name"] for g in s.generations] == ["session.v2.jsonl", "session.jsonl"]
    assert [(g["version"], g["headerVersion"]) for g in s.generations] == [(2, 2), (0, 0)]
    row = s.to_dict()
    assert row["formatVersion"] == 3 and row["generation"] == "session.v3.jsonl" and len(row["generations"]) == 2
    r = open_reader(str(d))                                   # a session folder opens its newest generation
    assert r.path == str(d / "session.v3.jsonl") and r.version == 3 and r.fatal is None
    r = open_reader(str(d / "session.v2.jsonl"))              # a file path opens exactly that file
    assert r.version == 2 and not any(p.code == "generation-mismatch" for p in r.problems)
    assert tree_bytes(home) == before                         # never a migrated generation, nothing written


def test_damaged_newest_generation_is_reported_not_replaced(tmp_path):
    home, d = home_with(tmp_path, {"session.v2.jsonl": PIN_V2, "session.v3.jsonl": b"\x00garbage\n"})
    s, = discover(str(home)).sessions
    assert s.path == str(d / "session.v3.jsonl") and s.id == "{{session:1}}"
    assert any(p.startswith("generation-damaged") and "does not fall back to session.v2.jsonl" in p for p in s.problems)
    assert [g["name"] for g in s.generations] == ["session.v2.jsonl"]
    with pytest.raises(OpenError):
        r = open_reader(str(d))
        if r.fatal:
            raise OpenError(str(r.fatal))
    assert open_reader(str(d / "session.v2.jsonl")).fatal is None     # the older one stays openable explicitly


def test_too_new_generation_hides_the_session(tmp_path):
    v5 = PIN_V3.read_bytes().replace(b'"version":3', b'"version":5', 1)
    home, d = home_with(tmp_path, {"session.v3.jsonl": PIN_V3, "session.v5.jsonl": v5})
    s, = discover(str(home)).sessions
    assert s.path == str(d / "session.v5.jsonl")
    assert any("format-unsupported" in p and "upgrade" in p for p in s.problems)
    assert open_reader(str(d)).fatal.code == "format-unsupported"


def test_header_version_must_match_the_name(tmp_path):
    home, d = home_with(tmp_path, {"session.v3.jsonl": PIN_V2})          # a v2 header under a v3 name
    s, = discover(str(home)).sessions
    assert any(p.startswith("generation-mismatch") and "v3" in p and "v2" in p for p in s.problems)
    r = open_reader(str(d / "session.v3.jsonl"))
    assert [p.code for p in r.problems if p.code == "generation-mismatch"] == ["generation-mismatch"]


def test_both_encodings_in_one_folder_is_reported(tmp_path):
    home, d = home_with(tmp_path, {"session.v2.jsonl": PIN_V2, "session.v3.jsonl.zstd": b"\x28\xb5\x2f\xfd"})
    s, = discover(str(home)).sessions
    assert any("both encodings" in p for p in s.problems)


def test_child_generations_group_by_their_own_stem(tmp_path):
    d = tmp_path / "loose"
    d.mkdir()
    for src in (PIN_V2, PIN_V3, PLAIN_CHILD_V2):
        shutil.copy(src, d / src.name)
    shutil.copy(PLAIN_CHILD_V2, d / "session.1.v3.jsonl")
    (d / "session.1.v3.jsonl").write_bytes(PLAIN_CHILD_V2.read_bytes().replace(b'"version":2', b'"version":3', 1))
    listing = discover(str(d))
    got = sorted((os.path.basename(s.path), [g["name"] for g in s.generations]) for s in listing.sessions)
    assert got == [("session.1.v3.jsonl", ["session.1.v2.jsonl"]), ("session.v3.jsonl", ["session.v2.jsonl"])]


def test_inspect_json_names_the_generation_read_and_the_others(tmp_path, capsys):
    home, d = home_with(tmp_path, {"session.jsonl": PIN_V0, "session.v3.jsonl": PIN_V3})
    assert main(["inspect", str(d / "session.v3.jsonl"), "--json"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["formatVersion"] == 3 and obj["generation"] == "session.v3.jsonl"
    assert [(g["name"], g["version"]) for g in obj["generations"]] == [("session.jsonl", 0)]
    assert not any(p.startswith("older-generation") for p in obj["problems"])
    assert main(["inspect", str(d / "session.jsonl"), "--json"]) == 0            # an older one, explicitly
    obj = json.loads(capsys.readouterr().out)
    assert obj["formatVersion"] == 0 and obj["generation"] == "session.jsonl"
    assert [g["name"] for g in obj["generations"]] == ["session.v3.jsonl"]
    assert any(p.startswith("older-generation") for p in obj["problems"])
    assert main(["list", str(home), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["sessions"]
    assert len(rows) == 1 and rows[0]["formatVersion"] == 3 and rows[0]["generations"][0]["name"] == "session.jsonl"
