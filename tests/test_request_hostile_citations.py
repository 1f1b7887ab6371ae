"""A hostile ``sourceEventSeqs`` on one message (a null or a string among the seqs) no longer ends the exact
request with an internal error: the row's integers still cite its attempt, the row is reported
(``bad-source-seqs``), and every other request is the one of the unchanged log.  The same values ended
``inspect``, ``page``, ``trace`` and ``stats`` (the attempt tracker) and the request's checkpoints (the
cited span) with a TypeError."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.log.query import analysis

from app.log.fold import checkpoints
from app.log.index.integrity import EventChecks
from app.log.index.reader import LogReader

from conftest import REPO_ROOT, fixture

SRC = "scripts/snapshots/python-sdk-single-exe/advanced/session.jsonl"
MESSAGE = 13                     # an assistant/message citing [8..12] (its attempt's chunks)


def mutated(tmp_path: Path, value: object, name: str = "bad") -> Path:
    """The fixture with message ``MESSAGE``'s ``sourceEventSeqs`` replaced by ``value`` (the row re-encoded)."""
    lines = fixture(SRC).read_bytes().split(b"\n")
    done = 0
    for i, line in enumerate(lines):
        if line.startswith(b'{"type":"assistant/message","seq":%d,' % MESSAGE):
            obj = json.loads(line)
            assert obj["sourceEventSeqs"] == [8, 9, 10, 11, 12]
            obj["sourceEventSeqs"] = value
            lines[i] = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
            done += 1
    assert done == 1
    p = tmp_path / name / "session.jsonl"
    p.parent.mkdir(parents=True)
    p.write_bytes(b"\n".join(lines))
    return p


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "SESSION_LENS_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=REPO_ROOT,
                          env=env)


def message_seqs(path: Path) -> list[int]:
    return [e.seq for e in LogReader.open(str(path)).events() if e.type == "assistant/message"]


@pytest.mark.parametrize("value", [[None, 8, 9, 10, 11, 12], [8, 9, "x", 10, 11, 12]], ids=["null", "string"])
def test_request_through_the_cli_names_the_bad_row_and_answers_the_others(tmp_path, value):
    bad = mutated(tmp_path, value)
    clean = fixture(SRC)
    seqs = message_seqs(clean)
    assert MESSAGE in seqs and len(seqs) >= 3
    wants = {}
    for seq in seqs:
        want = cli(tmp_path / "clean", "request", str(clean), "--at", str(seq), "--json")
        assert want.returncode == 0, want.stderr
        wants[seq] = json.loads(want.stdout)
    for _run in (1, 2):                                # first run builds the checkpoints, the second reads them
        for seq in seqs:
            got = cli(tmp_path, "request", str(bad), "--at", str(seq), "--json")
            assert got.returncode == 0, got.stderr
            assert "internal error" not in got.stderr
            g, w = json.loads(got.stdout), wants[seq]
            # the request itself is the unchanged log's: the integers still cite the attempt 8..12
            assert (g["boundary"], g["attempt"], g["request"]) == (w["boundary"], w["attempt"], w["request"])
            if seq >= MESSAGE:                         # the bad row is named (or folded) at or after it
                assert g["dshWouldRefuse"] is True
                assert any(p.startswith("bad-source-seqs") and f"seq {MESSAGE})" in p for p in g["problems"])
                assert "bad-source-seqs" in got.stderr
            else:
                assert not w["dshWouldRefuse"]
    assert json.loads(cli(tmp_path, "request", str(bad), "--at", str(MESSAGE), "--json").stdout)["boundary"] == 8


@pytest.mark.parametrize("value", [[None, 8, 9, 10, 11, 12], ["x", "y"], [None], "abc", 7, {"a": 1}],
                         ids=["null", "strings", "only-null", "text", "number", "object"])
def test_request_in_the_core_from_scratch_and_from_checkpoints(tmp_path, value):
    bad = mutated(tmp_path, value)
    clean = LogReader.open(str(fixture(SRC)))
    r = LogReader.open(str(bad))
    r.build_index()
    cps = checkpoints.build_checkpoints(r, 1)
    for seq in message_seqs(fixture(SRC)):
        outcomes = []
        for how in ("scratch", "checkpoints"):
            checks = EventChecks()
            try:
                got = analysis.request_at(r, seq, checks=checks) if how == "scratch" else \
                    checkpoints.request_at(r, seq, cps, checks=checks)
            except analysis.RequestError as e:         # a message citing no seq at all names no attempt
                assert seq == MESSAGE and not analysis.cited_ints(value), e
                outcomes.append(("refused", str(e)))
                continue
            if seq != MESSAGE or analysis.cited_ints(value):
                want = analysis.request_at(clean, seq)
                assert (got["boundary"], got["request"]) == (want["boundary"], want["request"])
            if seq >= MESSAGE and isinstance(value, list):     # (any other value is read as no citation)
                assert [p.seq for p in checks.refusing if p.code == "bad-source-seqs"] == [MESSAGE]
            outcomes.append((got["boundary"], got["attempt"], got["request"]))
        assert outcomes[0] == outcomes[1]              # both paths agree


@pytest.mark.parametrize("value", [[None, 8, 9, 10, 11, 12], ["x", "y"]], ids=["null", "strings"])
def test_other_commands_read_a_hostile_citation(tmp_path, value):
    bad = mutated(tmp_path, value)
    for args in (["inspect"], ["page"], ["page", "--attempts"], ["trace", "--seq", str(MESSAGE)],
                 ["trace", "--seq", "9"], ["stats"], ["messages"]):
        got = cli(tmp_path, args[0], str(bad), *args[1:], "--json")
        assert got.returncode == 0, (args, got.stderr)
        assert "internal error" not in got.stderr
    ins = json.loads(cli(tmp_path, "inspect", str(bad), "--json").stdout)
    assert ins["dshWouldRefuse"] and any(f"seq {MESSAGE})" in p for p in ins["problems"] if "bad-source-seqs" in p)
    assert ins["attempts"] == json.loads(cli(tmp_path, "inspect", str(fixture(SRC)), "--json").stdout)["attempts"]
