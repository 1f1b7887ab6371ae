"""Issue 35, command-line items: a mistyped command (24) and readable stats totals (19)."""
from __future__ import annotations

import contextlib
import io
import re

from app.cli.main import main
from fixtures_util import REPO

DEMO = REPO / "resources" / "demo" / "sessions" / "--home-dev-demo-project--"


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


def _fake_gui(monkeypatch) -> list:
    """The window's command replaced by a recorder (the test never starts Qt)."""
    import app.cli.gui_cmd  # noqa: F401  (registers "gui")
    from app.cli import main as cli_main
    seen: list = []
    gui = cli_main.COMMANDS["gui"]
    monkeypatch.setitem(cli_main.COMMANDS, "gui", (gui[0], gui[1], lambda args: seen.append(args.path) or 0))
    return seen


def test_mistyped_command_prints_usage_with_nearest_and_exits_2(tmp_path, monkeypatch):
    """Item 24: `session-lens stast` is a typo, not a folder to open in the window."""
    monkeypatch.chdir(tmp_path)                      # (no file named like the word)
    seen = _fake_gui(monkeypatch)
    rc, out, err = run("stast", "--json")
    assert rc == 2 and out == ""
    assert err.startswith("usage: session-lens")
    assert "did you mean 'stats'?" in err
    rc, _out, err = run("lsit")
    assert rc == 2 and "did you mean 'list'?" in err
    rc, _out, err = run("doctr")                     # (the example: `doctor` where it exists)
    assert rc == 2 and "'doctr' is neither a command nor a path" in err
    rc, _out, err = run("zzqqxx")                    # nothing close: the commands are listed
    assert rc == 2 and "'zzqqxx' is neither a command nor a path; commands:" in err and "inspect" in err
    assert seen == []


def test_existing_path_still_opens_the_window(tmp_path, monkeypatch):
    """A first word that is a path on disk is still the window's argument (not a typo)."""
    seen = _fake_gui(monkeypatch)
    assert run(DEMO / "demo-v4-advanced")[0] == 0
    assert seen == [str(DEMO / "demo-v4-advanced")]


def test_stats_totals_are_readable_not_a_dict():
    """Item 19: the totals line printed a Python dict ("total tokens {'input': 18, …}")."""
    rc, out, _err = run("stats", DEMO / "demo-v4-advanced")
    assert rc == 0
    assert "{" not in out and "'" not in out
    assert re.search(r"total tokens: 18 in, 18 out, 0 cache read, 0 cache write, 0 reasoning", out)
    assert "attempts 7 (1 failed)" in out
    assert "tool calls: run_code 2, snapshot_double 1, subagent 1, workflow 1" in out


def test_seq_lists_as_ranges():
    """Item 2 (the words): runs are ranges, repeats once ("chunks: 23 23 23 23 23" was printed),
    a long list is summarised with its count."""
    from app.log.format.seqranges import seq_runs, seqs_text
    assert seq_runs([23, 23, 23, 23, 23]) == [(23, 23)] and seqs_text([23, 23, 23]) == "23"
    assert seqs_text(list(range(735, 1051))) == "735–1050"
    assert seqs_text([4, 9, 12, 13, 14]) == "4, 9, 12–14"
    chain = [2600 + 1012 * k for k in range(131)]
    text = seqs_text(chain)
    assert text == f"2600, 3612, 4624, … {chain[-1]} (131 seqs)"
    assert seqs_text([1, "x", None, True, 2]) == "1–2"          # hostile members are not seqs


import pytest  # noqa: E402


@pytest.mark.parametrize("version", [0, 4])
def test_planted_logs_are_valid_and_find_finds_every_word(tmp_path, version):
    """Item 22: with v4 output, plant.py wrote the tool output as a nested `content` inside a v4
    text block that nobody reads, so a search test built on it measured nothing.  Every planted
    word is found now, at its seq, in a log that loads without problems."""
    from app.log.index.reader import LogReader
    from app.log.query.find import FindOptions, find
    from app.tools.plant import PLANTS, PlantingSynth
    from app.tools.synth import write_jsonl
    s = PlantingSynth(seed=11, at_turn=2, version=version)
    name = "session.v4.jsonl" if version == 4 else "session.jsonl"
    path = tmp_path / "s" / name
    write_jsonl(str(path), s, turns=6)
    assert set(s.planted) == set(PLANTS)
    r = LogReader.open(str(path))
    evs = list(r.iter_events())
    assert not [p for p in r.problems if getattr(p, "fatal", False)]
    tool_seq = s.planted["zebraquokka"][0]
    res = next(e for e in evs if e.seq == tool_seq)
    blocks = res.data["message"]["content"]
    assert not [b for b in blocks if b.get("type") == "text" and "content" in b]      # no nested content
    for word, (seq, _turn, _kind) in s.planted.items():
        hits = list(find(LogReader.open(str(path)), FindOptions(word)))
        assert seq in {h.seq for h in hits}, (word, seq, [h.seq for h in hits])


def test_idle_writer_status_says_why_the_window_waits():
    """Item 15: without a lock, after the writer died the window said "◌ writer idle" for about
    30 s with no reason.  It says what it knows (no growth for N s, no lock to ask), after how long
    without growth the open turn is closed (the rule's own constant) and how long is left."""
    from app.store.watch import CRASH_AFTER_S, IDLE_AFTER_S
    from app.ui.truth_views import live_status_text
    now = 1_000_000.0
    facts = {"lock": None, "grewAt": now - 12, "idleAfter": IDLE_AFTER_S, "crashAfter": CRASH_AFTER_S}
    text = live_status_text("idle", {"at": now - 12, "events": 3, "bytes": 400}, now=now, facts=facts)
    assert "no growth for 12 s" in text and "no session.lock to ask" in text
    assert f"closed after {CRASH_AFTER_S:g} s without growth (in {int(CRASH_AFTER_S) - 12} s)" in text
    assert "(12 s ago)" in text
    live = live_status_text("live", {"at": now, "events": 1, "bytes": 9}, now=now, facts={**facts, "grewAt": now})
    assert f"idle after {IDLE_AFTER_S:g} s without growth" in live
    locked = live_status_text("live", {"at": now, "events": 1, "bytes": 9}, now=now, facts={**facts, "lock": True})
    assert "session.lock held" in locked and "growth" not in locked


def test_demo_sessions_are_never_idle_just_after_a_checkout(monkeypatch):
    """Item 17: a fresh clone's demo showed a session "◌ idle", then "✕ crashed" two minutes
    later: an open tail younger than 120 s counted as idle.  No writer ever appends to the
    demo's files: its open tails are crashed at once, its other sessions complete."""
    import os

    from app.store.discovery import discover
    from app.ui import session_model
    from app.ui.main_window import demo_store
    from app.ui.workers import Job
    listing = discover(str(demo_store()))
    newest = max(os.stat(s.path).st_mtime for s in listing.sessions)
    monkeypatch.setattr(session_model.time, "time", lambda: newest + 5)     # as if just checked out
    # every demo session judged (a checkout that rewrote only some files leaves the others older)
    monkeypatch.setattr(session_model, "RECENT_S", float("inf"))
    states = session_model.live_states_job(Job("t"), listing.sessions, {})
    by_id = {s.id: states.get(s.key) for s in listing.sessions}
    assert by_id["demo-crashed"] == "crashed", by_id
    assert "idle" not in states.values() and "live" not in states.values(), by_id
