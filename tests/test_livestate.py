"""Issue 35 items 15 and 17: a writer without ``session.lock`` is judged by growth the window saw,
never by the file's age, and the status line says what the window knows and why it waits.

One rule (``app.store.watch.writer_verdict``) for the follower, the session list and the CLI; the
waits the status line names come from the follower that applies it (IDLE_AFTER_S, CRASH_AFTER_S)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import app.ui  # noqa: F401  (PySide6 work-around first)
from app.store.watch import IDLE_AFTER_S

from test_live import first_mid_turn_seq

REPO = Path(__file__).resolve().parents[1]
CRASHED = REPO / "resources/demo/sessions/--home-dev-demo-project--/demo-crashed/session.jsonl"
WAIT = 120_000  # a limit on waiting for a condition, not on speed
CRASH_AFTER = 4.0            # the window's wait after growth stops (CRASH_AFTER_S is 30 s: too long for a test)


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    made = []

    def make(live_options=None):
        monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))
        from app.ui.main_window import MainWindow
        w = MainWindow(page_size=20, theme_mode="light", live_options=live_options)
        qtbot.addWidget(w)
        w.resize(1400, 860)
        w.show()
        made.append(w)
        return w
    yield make
    for w in made:
        w.shutdown()


def _record(h) -> list:
    seen: list = []
    h.liveStateChanged.connect(lambda s: seen.append((time.monotonic(), s)))
    return seen


def _open(qtbot, w, path):
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.open_store(str(path))
    return w.history


def test_a_fresh_copy_of_an_open_tail_is_crashed_at_once_never_idle_first(qtbot, window, tmp_path):
    """Item 17: a log just checked out (or copied) with an open turn read "● live", then "◌ idle",
    and only 30 s (the list: 120 s) later "✕ crashed": its recent mtime was taken for a writer.
    Without a lock, only growth the window sees makes a writer: it is crashed at once."""
    home = tmp_path / "home" / "sessions" / "--proj--" / "fresh"
    home.mkdir(parents=True)
    shutil.copyfile(CRASHED, home / "session.jsonl")          # mtime: now
    w = window()                                               # the real waits (IDLE_AFTER_S, CRASH_AFTER_S)
    t0 = time.monotonic()
    h = _open(qtbot, w, home / "session.jsonl")
    seen = _record(h)
    qtbot.waitUntil(lambda: h.live_state == "crashed", timeout=IDLE_AFTER_S * 1000)
    assert time.monotonic() - t0 < IDLE_AFTER_S
    assert not any(s in ("live", "idle") for _t, s in seen), seen
    qtbot.waitUntil(lambda: "crashed" in w.sessions.model.label(w.session), timeout=WAIT)
    assert "writer gone" in w.status_face.text()
    assert h.pages[-1].page.closure, "the open turn is closed in the logical face at once"


def test_cli_judges_a_fresh_copy_by_growth_and_a_writer_by_a_second_look(tmp_path):
    """Item 17 from the command line: ``inspect`` said "live" for a copy modified seconds ago.
    A one-shot command looks twice (SECOND_LOOK_S apart) at a lockless open tail: a copy does not
    grow (crashed), a ``simulate`` writer does (live), whatever the event times it writes."""
    d = tmp_path / "copy"
    d.mkdir()
    shutil.copyfile(CRASHED, d / "session.jsonl")

    def inspect(p):
        out = subprocess.run([sys.executable, "-m", "app", "inspect", str(p), "--json"], cwd=REPO,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)
    obj = inspect(d / "session.jsonl")
    assert obj["writer"] == "crashed" and obj["writerState"]["signal"] == "growth", obj["writerState"]
    live = tmp_path / "sim" / "session.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "app", "simulate", str(live), "--events", "3000", "--rate", "60"],
                            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not (live.exists() and live.stat().st_size > 2000) and time.monotonic() < deadline:
            time.sleep(0.05)
        ws = inspect(live)["writerState"]
        assert ws["writer"] == "live" and ws["grew"] and ws["signal"] == "growth", ws
    finally:
        proc.kill()
        proc.wait(10)


@pytest.mark.slow
def test_killed_lockless_writer_says_what_the_window_knows_and_why_it_waits(qtbot, window, tmp_path):
    """Item 15: after SIGKILL a writer without a lock read "● live" for about 10 s and "◌ writer
    idle" until about 35 s, with no reason given.  Now: live only while the window sees growth,
    idle IDLE_AFTER_S after the last growth, the status line names what it knows (no growth for
    N s, no session.lock to ask) and the wait (the follower's own crash_after), then crashed."""
    import re
    seed = 3
    crash = first_mid_turn_seq(seed, 240)                      # about 4 s of writing at 60 events/s
    out = tmp_path / "home" / "sessions" / "--proj--" / "live" / "session.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "app", "simulate", str(out), "--events", "3000", "--rate", "60",
                             "--seed", str(seed), "--crash-at", str(crash)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not (out.exists() and out.stat().st_size > 2000) and time.monotonic() < deadline:
            time.sleep(0.05)
        w = window(live_options={"crash_after": CRASH_AFTER})
        h = _open(qtbot, w, out)
        seen = _record(h)
        label = w.truth_actions.live_label
        qtbot.waitUntil(lambda: "writer live" in label.text(), timeout=WAIT)
        assert "no session.lock to ask" in label.text() and f"idle after {IDLE_AFTER_S:g} s" in label.text()
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=WAIT)   # killed itself (SIGKILL) mid-turn
        assert proc.returncode == -signal.SIGKILL
        killed = time.monotonic()
        qtbot.waitUntil(lambda: h.live_state == "idle", timeout=int((IDLE_AFTER_S + 2) * 1000))
        assert time.monotonic() - killed < IDLE_AFTER_S + 2
        qtbot.waitUntil(lambda: "no growth for" in label.text(), timeout=30_000)
        text = label.text()
        assert "no session.lock to ask" in text
        assert f"the open turn is closed after {CRASH_AFTER:g} s without growth" in text, text
        m = re.search(r"no growth for (\d+) s.*\(in (\d+) s\)", text)
        assert m and int(m.group(1)) + int(m.group(2)) in (int(CRASH_AFTER), int(CRASH_AFTER) - 1), text
        qtbot.waitUntil(lambda: h.live_state == "crashed", timeout=int((CRASH_AFTER + 2) * 1000))
        assert time.monotonic() - killed < CRASH_AFTER + 2
        states = [s for _t, s in seen]
        assert states[states.index("idle"):] == ["idle", "crashed"], states   # never back to live
        assert label.text() == ""                              # the writer is gone: no live line
        assert h.pages[-1].page.closure
        assert os.path.getsize(out) > 2000
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


@pytest.mark.parametrize("torn", [False, True])
def test_a_row_left_half_written_is_a_cut_write_not_a_quiet_turn(tmp_path, torn):
    """Item 15, the waits the growth rule can shorten: a writer writes each batch whole, so a torn
    last row that stays torn through idle_after without growth is a write that was cut (crashed
    then); a quiet open turn (a long tool call) keeps the long wait (idle until crash_after)."""
    from app.store.watch import Follower
    lines = CRASHED.read_bytes().splitlines(keepends=True)
    p = tmp_path / "s" / "session.jsonl"
    p.parent.mkdir()
    p.write_bytes(b"".join(lines[:-2]))                       # an open turn
    with Follower(str(p), from_start=False, poll_interval=0.02, idle_after=0.3, crash_after=30.0) as f:
        assert f.open() and f.state() == "crashed"            # never seen growing: crashed at once
        with open(p, "ab") as fh:
            fh.write(lines[-2][:20] if torn else lines[-2])   # it grows: a writer is there
        f.poll()
        assert f.state() == "live" and f.held == (20 if torn else 0)
        time.sleep(0.45)
        f.poll()
        assert f.state() == ("crashed" if torn else "idle")
        assert f.facts()["lock"] is None and f.facts()["crashAfter"] == 30.0
