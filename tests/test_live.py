"""Live follow: a writer process appends while a Follower (or the ``follow`` CLI) reads.

The followed seqs must equal the final file's seqs (read cold with LogReader) exactly: no
duplicate, no gap, no torn row, for JSONL and zstd, clean ends and crashes.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.log.format.codec import encode_row
from app.log.index.reader import LogReader
from app.log.source.zstdframes import encode_frame
from app.store.filewatch import Watcher, inotify_available
from app.store.watch import Follower, live_state
from app.tools.synth import SessionSynth
from fixtures_util import fast_sample

REPO = Path(__file__).resolve().parents[1]


def simulate(out, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "app", "simulate", str(out), "--json", *map(str, args)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def cold_seqs(path) -> list:
    r = LogReader.open(str(path))
    try:
        return [e.seq for e in r.iter_events()]
    finally:
        r.close()


class Collector(threading.Thread):
    """Runs a Follower in a thread, checking the stream itself stays contiguous."""

    def __init__(self, follower: Follower):
        super().__init__(daemon=True)
        self.f = follower
        self.seqs: list = []
        self.stop = threading.Event()
        self.errors: list = []

    def run(self):
        try:
            for batch in self.f.follow(stop=self.stop, tick=0.05):
                for e in batch:
                    if self.seqs and e.seq != self.seqs[-1] + 1:
                        self.errors.append(f"seq {e.seq} after {self.seqs[-1]}")
                    self.seqs.append(e.seq)
        except Exception as e:  # surfaced by the test
            self.errors.append(repr(e))

    def catch_up(self, last_seq: int, timeout: float = 10.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end and (not self.seqs or self.seqs[-1] < last_seq):
            time.sleep(0.02)
        self.stop.set()
        self.f.wake()
        self.join(5)


def first_mid_turn_seq(seed: int, at: int) -> int:
    """A seq >= ``at`` inside a turn (its predecessor is not a turn/end)."""
    evs = []
    for t in SessionSynth(seed).turns():
        evs.extend(t)
        if len(evs) > at + 50:
            break
    s = at
    while evs[s - 1]["type"] == "turn/end" or evs[s]["type"] == "turn/start":
        s += 1
    return s


CASES = [
    # fmt, rate, max_burst, batch_delay_ms, crash, torn, start follower before the file exists
    ("jsonl", 3000, 1, 5, None, False, True),
    ("zstd", 3000, 16, 20, None, False, True),
    ("jsonl", 800, 8, 50, 700, False, False),
    ("zstd", 1500, 4, 1, 900, False, True),
    ("jsonl", 2000, 32, 30, 1100, True, True),
    ("zstd", 2000, 8, 30, 600, True, False),
]


@pytest.mark.parametrize("fmt,rate,burst,delay,crash,torn,early", fast_sample(CASES),
                         ids=[f"{c[0]}-r{c[1]}-b{c[2]}-d{c[3]}-crash{c[4]}{'-torn' if c[5] else ''}" for c in CASES])
def test_follower_equals_final_file(tmp_path, fmt, rate, burst, delay, crash, torn, early):
    seed = rate + burst
    name = "session.jsonl.zstd" if fmt == "zstd" else "session.jsonl"
    path = tmp_path / "proj" / "sess" / name
    args = ["--events", 1200, "--rate", rate, "--max-burst", burst, "--batch-delay-ms", delay, "--seed", seed]
    if fmt == "zstd":
        args.append("--zstd")
    if crash is not None:
        crash = first_mid_turn_seq(seed, crash)
        args += ["--crash-at", crash] + (["--torn"] if torn else [])
    f = Follower(str(path), from_start=True, poll_interval=0.05, idle_after=0.3, crash_after=0.8)
    col = Collector(f)
    if early:
        col.start()
    proc = simulate(path, *args)
    if not early:
        while not path.exists():
            time.sleep(0.01)
        time.sleep(0.15)
        col.start()
    out, err = proc.communicate(timeout=40)
    if crash is None:
        assert proc.returncode == 0, err.decode()
        assert json.loads(out)["path"] == str(path)
    else:
        assert proc.returncode == -9, err.decode()            # SIGKILL
    final = cold_seqs(path)
    assert final, "nothing written"
    # a torn zstd frame is held while live (finish() later releases what a cold read recovers)
    held_last = crash - 1 if (torn and fmt == "zstd") else final[-1]
    col.catch_up(held_last)
    assert not col.errors, col.errors
    live_count = len(col.seqs)
    assert live_count > 0
    assert f.poll() == []
    tail = f.finish()
    seqs = col.seqs + [e.seq for e in tail]
    assert seqs == final, (len(seqs), len(final), seqs[-3:], final[-3:])
    assert seqs == list(range(len(seqs)))
    assert not f.bad, f.bad
    if crash is None:
        assert f.state() in ("complete", "live") and not f.open_tail
        time.sleep(0.35)
        assert f.state() == "complete"
    else:
        assert final[-1] >= crash - 1
        if not torn:
            assert final[-1] == crash - 1
        assert f.open_tail
        if torn and fmt == "jsonl":
            assert f.held > 0 and f.recovered == 0              # the torn line is never emitted
        if torn and fmt == "zstd":
            assert f.recovered > 0 and len(tail) == f.recovered  # held while live, released by finish()
        time.sleep(0.85)
        assert f.state() == "crashed"
    f.close()


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["jsonl", "zstd"])
def test_follow_cli_from_start_and_tail(tmp_path, fmt):
    """``follow --json`` started before the file exists, and tail-then-follow started midway."""
    name = "session.jsonl.zstd" if fmt == "zstd" else "session.jsonl"
    path = tmp_path / "s" / name
    cmd = [sys.executable, "-m", "app", "follow", str(path), "--json", "--idle", "1.5", "--poll-ms", "50"]
    early = subprocess.Popen(cmd + ["--from-start"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sim = simulate(path, "--events", 1500, "--rate", 1500, "--max-burst", 12, "--batch-delay-ms", 40,
                   "--seed", 11, *(["--zstd"] if fmt == "zstd" else []))
    while not path.exists():
        time.sleep(0.01)
    time.sleep(0.4)                                           # some rows are already there
    mid = subprocess.Popen(cmd + ["--max-messages", "3"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sim.communicate(timeout=40)
    assert sim.returncode == 0
    final = cold_seqs(path)
    e_out, e_err = early.communicate(timeout=30)
    m_out, m_err = mid.communicate(timeout=30)
    assert early.returncode == 0 and mid.returncode == 0, (e_err, m_err)
    got = [json.loads(line)["seq"] for line in e_out.decode().splitlines()]
    assert got == final
    lines = [json.loads(line) for line in m_out.decode().splitlines()]
    got = [x["seq"] for x in lines]
    assert got and got[-1] == final[-1]
    assert got == final[got[0]:], "tail then follow: duplicate or gap"
    assert got[0] > 0                                         # started from a tail page, not seq 0
    assert set(lines[0]) >= {"type", "seq", "time", "data"}
    status = json.loads(m_err.decode().strip().splitlines()[-1])
    assert status["follow"] == "end" and status["openTurn"] is None and status["lastSeq"] == final[-1]


# --------------------------------------------------------------------------- unit cases

def _header_and_rows(n=12, seed=3):
    syn = SessionSynth(seed)
    evs = []
    for t in syn.turns():
        evs.extend(t)
        if len(evs) >= n:
            break
    return syn.header(), evs[:n]


def test_torn_line_is_held_until_complete(tmp_path):
    hdr, evs = _header_and_rows()
    p = tmp_path / "session.jsonl"
    lines = [encode_row(hdr) + b"\n"] + [encode_row(e) + b"\n" for e in evs]
    p.write_bytes(b"".join(lines[:4]) + lines[4][:10])
    f = Follower(str(p), poll_interval=0.02)
    assert [e.seq for e in f.poll()] == [0, 1, 2] and f.held == 10 and f.open_tail
    with open(p, "ab") as fh:
        fh.write(lines[4][10:-1])                              # still no newline
    assert f.poll() == [] and f.held == len(lines[4]) - 1
    with open(p, "ab") as fh:
        fh.write(b"\n" + b"".join(lines[5:7]))
    assert [e.seq for e in f.poll()] == [3, 4, 5] and f.held == 0
    assert f.line == 8
    f.close()


def test_torn_zstd_frame_is_held_then_released(tmp_path):
    hdr, evs = _header_and_rows(20)
    p = tmp_path / "session.jsonl.zstd"
    h = encode_frame(encode_row(hdr) + b"\n")
    b1 = encode_frame(b"".join(encode_row(e) + b"\n" for e in evs[:5]))
    b2 = encode_frame(b"".join(encode_row(e) + b"\n" for e in evs[5:12]))
    p.write_bytes(h + b1 + b2[:len(b2) - 3])
    f = Follower(str(p), poll_interval=0.02)
    assert [e.seq for e in f.poll()] == [0, 1, 2, 3, 4] and f.held == len(b2) - 3
    assert f.poll() == []
    with open(p, "ab") as fh:
        fh.write(b2[-3:])
    assert [e.seq for e in f.poll()] == list(range(5, 12)) and f.held == 0
    # a torn frame released by finish() (writer dead) is not emitted twice when completed later
    b3 = encode_frame(b"".join(encode_row(e) + b"\n" for e in evs[12:20]))
    with open(p, "ab") as fh:
        fh.write(b3[:-4])
    assert f.poll() == []
    rec = [e.seq for e in f.finish()]
    assert rec == [e.seq for e in LogReader.open(str(p)).iter_events()][12:]
    with open(p, "ab") as fh:
        fh.write(b3[-4:])
    rest = [e.seq for e in f.poll()]
    assert rec + rest == list(range(12, 20))
    f.close()


@pytest.mark.parametrize("use_inotify", [True, False])
def test_file_appears_later_and_watcher_wakes(tmp_path, use_inotify):
    if use_inotify and not inotify_available():
        pytest.skip("no inotify")
    hdr, evs = _header_and_rows()
    p = tmp_path / "a" / "b" / "session.jsonl"
    f = Follower(str(p), poll_interval=0.05 if not use_inotify else 5.0, use_inotify=use_inotify)
    assert f.poll() == [] and f.state() == "waiting"
    assert f.watcher.uses_inotify == use_inotify
    got: list = []

    def follow():
        for b in f.follow(idle=3.0, tick=5.0):
            got.extend(e.seq for e in b)
            if got and got[-1] == len(evs) - 1:
                return
    t = threading.Thread(target=follow)
    t.start()
    time.sleep(0.1)
    from app.store.writer import SessionWriter
    w = SessionWriter(str(p), hdr, batch_delay_ms=1)
    t0 = time.monotonic()
    w.append(evs[:5])
    w.flush()
    w.append(evs[5:])
    w.close()
    t.join(5)
    assert got == list(range(len(evs)))
    # with inotify the 5 s poll never had to fire: the directory watches woke the follower
    assert time.monotonic() - t0 < (2.0 if use_inotify else 3.0)
    f.close()


def test_watcher_wake_and_timeout(tmp_path):
    w = Watcher(str(tmp_path / "x.jsonl"), poll_interval=0.05)
    t0 = time.monotonic()
    assert w.wait(0.1 if w.uses_inotify else 0.2) is False
    assert time.monotonic() - t0 < 0.5
    threading.Timer(0.05, w.wake).start()
    t0 = time.monotonic()
    assert w.wait(5.0) is True and time.monotonic() - t0 < 2.0
    w.close()


def test_from_end_and_replaced_file(tmp_path):
    hdr, evs = _header_and_rows(30)
    p = tmp_path / "session.jsonl"
    rows = [encode_row(e) + b"\n" for e in evs]
    p.write_bytes(encode_row(hdr) + b"\n" + b"".join(rows[:10]) + rows[10][:5])
    f = Follower(str(p), from_start=False)
    assert f.open() and f.subscribed_last == 9 and f.last_seq == 9 and f.held == 5
    assert f.poll() == []
    with open(p, "ab") as fh:
        fh.write(rows[10][5:] + rows[11])
    assert [e.seq for e in f.poll()] == [10, 11]
    # replaced (a repair rewrote it elsewhere and renamed): re-read, nothing emitted twice
    q = tmp_path / "new.jsonl"
    q.write_bytes(encode_row(hdr) + b"\n" + b"".join(rows[:15]))
    os.replace(q, p)
    assert [e.seq for e in f.poll()] == [12, 13, 14] and f.resets == 1
    f.close()


def test_sqlite_follower(tmp_path):
    from app.store.sqlite_writer import append_batch, create_store
    hdr, evs = _header_and_rows(40)
    db = tmp_path / "store.sqlite"
    create_store(str(db))
    f = Follower(str(db), hdr["id"], poll_interval=0.02)
    assert f.poll() == [] and f.state() == "waiting"      # the session is not in the store yet
    append_batch(str(db), hdr, evs[:10])
    assert [e.seq for e in f.poll()] == list(range(10))
    append_batch(str(db), hdr, evs[10:25])
    assert f.wait(1.0) or True
    assert [e.seq for e in f.poll()] == list(range(10, 25))
    assert f.poll() == []
    g = Follower(str(db), hdr["id"], from_start=False)
    assert g.open() and g.subscribed_last == 24
    append_batch(str(db), hdr, evs[25:])
    assert [e.seq for e in g.poll()] == list(range(25, 40))
    assert [e.seq for e in f.poll()] == list(range(25, 40))
    f.close()
    g.close()


def test_live_state(tmp_path):
    """The session list's writer state goes by growth it saw between two of its own looks, never by
    the file's age (issue 35 item 17): a file just written but never seen growing is complete
    (closed) or crashed (open tail) at once; seen growing, it is live, then idle, then crashed."""
    hdr, evs = _header_and_rows(3000)
    closed = [e["seq"] for e in evs if e["type"] == "turn/end"]
    assert closed, "need a whole turn"
    p = tmp_path / "c" / "session.jsonl"
    p.parent.mkdir()
    body = [encode_row(e) + b"\n" for e in evs]
    p.write_bytes(encode_row(hdr) + b"\n" + b"".join(body[:closed[0] + 1]))
    mt = p.stat().st_mtime
    assert live_state(str(p), now=mt + 1) == "complete"     # just written, never seen growing (the old rule: live)
    q = tmp_path / "o" / "session.jsonl"
    q.parent.mkdir()
    q.write_bytes(encode_row(hdr) + b"\n" + b"".join(body[:closed[0] + 5]))
    mt = q.stat().st_mtime
    assert live_state(str(q), now=mt + 1) == "crashed"      # open tail, no growth seen: at once (old: live, idle)
    with open(q, "ab") as fh:                               # the writer appends: the next look sees it grow
        fh.write(body[closed[0] + 5])
    mt = q.stat().st_mtime
    assert live_state(str(q), now=mt + 1) == "live"
    assert live_state(str(q), now=mt + 10) == "idle"        # seen growing, quiet since, the turn still open
    assert live_state(str(q), now=mt + 60) == "crashed"     # (the follower's waits: 3 s, 30 s)
    # a torn tail after a closed turn is an open tail too
    r = tmp_path / "t" / "session.jsonl"
    r.parent.mkdir()
    r.write_bytes(encode_row(hdr) + b"\n" + b"".join(body[:closed[0] + 1]) + body[closed[0] + 1][:7])
    assert live_state(str(r), now=r.stat().st_mtime + 1) == "crashed"
    with open(r, "ab") as fh:
        fh.write(body[closed[0] + 1][7:])                   # the torn row completed: grown, between turns
    assert live_state(str(r), now=r.stat().st_mtime + 1) == "live"
    assert live_state(str(r), now=r.stat().st_mtime + 60) == "complete"
