"""Writer state (live / idle / crashed / complete) for inspect --json: the v1+ session.lock flock,
recent growth for v0, a live simulated writer in another process, and the in-flight summary."""
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

from app.cli.main import main as cli
from app.store.watch import live_state
from app.store.writerlock import lock_held, lock_signal, writer_state

repo_root = Path(__file__).resolve().parents[1]
DEMO = repo_root / "resources/demo/sessions/--home-dev-demo-project--"
CRASHED = DEMO / "demo-crashed/session.jsonl"          # open turn with a tool call that has no result
COMPLETE = DEMO / "demo-todo/session.jsonl"

HOLD = ("import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\n"
        "print('locked', flush=True)\n"
        "time.sleep(60)\n")


def _inspect(capsys, path, *extra) -> dict:
    assert cli(["inspect", str(path), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture
def holder():
    procs = []

    def start(lock: Path):
        p = subprocess.Popen([sys.executable, "-c", HOLD, str(lock)], stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "locked"
        procs.append(p)
        return p
    yield start
    for p in procs:
        if p.poll() is None:
            p.kill()
        p.wait()


def _copy(src: Path, dst_dir: Path, name: str = "session.jsonl") -> Path:
    dst_dir.mkdir(parents=True, exist_ok=True)
    dst = dst_dir / name
    shutil.copyfile(src, dst)
    old = time.time() - 3600                     # quiet for an hour: growth alone would say crashed
    os.utime(dst, (old, old))
    return dst


def test_lock_held_by_another_process_means_live(tmp_path, holder, capsys):
    log = _copy(CRASHED, tmp_path / "s")
    lock = tmp_path / "s" / "session.lock"
    before = os.listdir(tmp_path / "s")
    assert lock_held(str(log)) is None                 # no lock file: v0 semantics, and none is created
    assert os.listdir(tmp_path / "s") == before
    assert _inspect(capsys, log)["writer"] == "crashed"   # quiet an hour with an open turn
    p = holder(lock)
    assert lock_held(str(log)) is True
    obj = _inspect(capsys, log)
    assert obj["writer"] == "live" and obj["writerState"]["signal"] == "lock"
    assert obj["truth"]["name"] == "Live snapshot"
    assert obj["closure"] == [] and obj["openTail"]
    fl = obj["inFlight"]
    assert fl["openTurn"] is not None and fl["openStep"] is not None
    assert [t["callId"] for t in fl["runningTools"]]          # the logged tool call is running, not "unknown"
    assert "write-behind" in fl["note"]
    p.kill()
    p.wait()
    assert lock_held(str(log)) is False                 # the kernel released it with the process
    obj = _inspect(capsys, log)
    assert obj["writer"] == "crashed" and obj["writerState"]["lockHeld"] is False
    assert obj["truth"]["name"] == "Logical history (crash closed in memory)"
    assert obj["closure"] == ["tool/result", "step/end", "turn/end"] and obj["inFlight"] is None


def test_lock_released_on_a_closed_log_is_complete_at_once(tmp_path, holder):
    log = _copy(COMPLETE, tmp_path / "c")
    os.utime(log)                                      # just written: growth alone would say live
    lock = tmp_path / "c" / "session.lock"
    p = holder(lock)
    assert writer_state(str(log))["writer"] == "live"
    p.kill()
    p.wait()
    ws = writer_state(str(log))
    assert ws["writer"] == "complete" and ws["signal"] == "lock"


def test_v1_generation_without_lock_file_has_no_writer(tmp_path):
    log = _copy(CRASHED, tmp_path / "g", name="session.v2.jsonl")
    os.utime(log)
    assert lock_signal(str(log)) is False
    assert live_state(str(log)) == "crashed"          # open turn, nobody holds (or ever took) the lock


def test_v0_growth_rule(tmp_path):
    """No lock: growth this process saw decides, never the file's age (issue 35 item 17)."""
    log = _copy(CRASHED, tmp_path / "v0")
    rows = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(rows[:-1]))                # its last row is still to come
    now = time.time()
    os.utime(log, (now - 5, now - 5))
    # modified 5 s ago, but never seen growing: an open tail is crashed at once (the old rule: live)
    assert writer_state(str(log), now=now, idle_after=15, crash_after=120)["writer"] == "crashed"
    with open(log, "ab") as fh:
        fh.write(rows[-1])                              # the writer appends its last row
    os.utime(log, (now - 5, now - 5))
    ws = writer_state(str(log), now=now, idle_after=15, crash_after=120)
    assert ws["writer"] == "live" and ws["grew"] and ws["signal"] == "growth"
    assert writer_state(str(log), now=now, idle_after=2, crash_after=120)["writer"] == "idle"
    assert writer_state(str(log), now=now, idle_after=2, crash_after=4)["writer"] == "crashed"
    done = _copy(COMPLETE, tmp_path / "done")
    assert writer_state(str(done), idle_after=2)["writer"] == "complete"


def _simulate(out: Path, *extra) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("session-lens")
    return subprocess.Popen([str(exe), "simulate", str(out), "--events", "20000", "--rate", "150",
                             "--batch-delay-ms", "50", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _wait_for_open_tail(log: Path, timeout: float = 20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if log.exists() and log.stat().st_size > 2000:
            return
        time.sleep(0.1)
    pytest.fail("the simulated writer wrote nothing")


@pytest.mark.parametrize("lock", [False, True])
@pytest.mark.slow
def test_simulated_live_writer_then_killed(tmp_path, capsys, lock):
    log = tmp_path / "sim" / "session.jsonl"
    p = _simulate(log, *(["--lock"] if lock else []))
    try:
        _wait_for_open_tail(log)
        seen_live = 0
        for _ in range(5):
            obj = _inspect(capsys, log, "--live-window", "2", "--crash-after", "3")
            if obj["writer"] == "live":
                seen_live += 1
                # while live: no synthesized closure, an in-flight summary instead
                assert obj["closure"] == []
                if obj["openTail"]:
                    assert obj["inFlight"]["openTurn"] is not None
                assert obj["writerState"]["signal"] == ("lock" if lock else "growth")
            time.sleep(0.2)
        assert seen_live >= 4
        # the tail page while live: the live face, no synthesized rows
        assert cli(["page", str(log), "--json", "--limit", "5", "--live-window", "2", "--crash-after", "3"]) == 0
        pg = json.loads(capsys.readouterr().out)
        if pg["writer"] == "live":
            assert pg["face"] == "live" and pg["truth"]["name"] == "Live snapshot" and pg["closure"] == []
            assert not any(e.get("synthesized") for e in pg["events"])
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    if lock:
        obj = _inspect(capsys, log, "--live-window", "2", "--crash-after", "3")
    else:
        time.sleep(3.5)                                 # killed and quiet past the crash threshold
        obj = _inspect(capsys, log, "--live-window", "2", "--crash-after", "3")
    assert cli(["page", str(log), "--json", "--limit", "5", "--live-window", "2", "--crash-after", "3"]) == 0
    pg = json.loads(capsys.readouterr().out)
    assert pg["face"] == "logical" and pg["inFlight"] is None
    if obj["openTail"]:
        assert obj["writer"] == "crashed" and obj["closure"] and obj["closure"][-1] == "turn/end"
        # closed once the writer is gone: the synthesized closers are rows of the logical page
        assert pg["closure"] == obj["closure"]
        assert [e["event"]["type"] for e in pg["events"] if e.get("synthesized")] == obj["closure"]
    else:                                               # killed exactly between turns
        assert obj["writer"] == "complete" and obj["closure"] == []
    assert obj["inFlight"] is None


def test_fresh_fork_child_is_not_live(tmp_path):
    from app.store.faces import open_reader
    from app.store.forking import fork
    src = _copy(COMPLETE, tmp_path / "--home-dev-demo-project--" / "demo-todo")
    res = fork(open_reader(str(src)), None)
    child = res["child"]
    assert time.time() - os.stat(child).st_mtime < 15        # just written…
    assert live_state(child) == "complete"                   # …yet a seed at rest, not a live writer
    assert writer_state(child)["seedOnly"] is True


@pytest.mark.parametrize("from_start", [True, False])
def test_fresh_fork_child_not_live_in_follower_and_list(tmp_path, capsys, from_start):
    from app.store.faces import open_reader
    from app.store.forking import fork
    from app.store.watch import Follower
    home = tmp_path / "home"
    src = _copy(COMPLETE, home / "sessions" / "--home-dev-demo-project--" / "demo-todo")
    child = fork(open_reader(str(src)), None, child_id="fresh-child")["child"]
    with Follower(child, from_start=from_start) as f:
        assert f.open()
        f.poll()
        assert f.quiet_for is None                   # just written, but never seen growing
        assert f.state() == "complete"
    assert cli(["list", str(home), "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)["sessions"]}
    assert rows["fresh-child"]["live"] is False and rows["fresh-child"]["writer"] == "complete"


def test_follower_last_batch_for_the_live_status(tmp_path):
    """The live status line: events and stored bytes the newest poll brought (a torn row is held, not counted)."""
    from app.store.watch import Follower
    lines = COMPLETE.read_bytes().split(b"\n")
    p = tmp_path / "session.jsonl"
    p.write_bytes(b"\n".join(lines[:5]) + b"\n" + lines[5][:7])
    with Follower(str(p), poll_interval=0.02) as f:
        got = f.poll()
        assert f.last_batch["events"] == len(got) == 4
        assert f.last_batch["bytes"] == sum(len(x) + 1 for x in lines[1:5])
        assert (f.last_batch["firstSeq"], f.last_batch["lastSeq"]) == (got[0].seq, got[-1].seq)
        with open(p, "ab") as fh:
            fh.write(lines[5][7:] + b"\n" + lines[6] + b"\n")
        got = f.poll()
        assert f.last_batch["events"] == len(got) == 2
        assert f.last_batch["bytes"] == len(lines[5]) + len(lines[6]) + 2
