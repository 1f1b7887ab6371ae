"""LiveFollower (Qt): a simulate process writes, the view built from the signals equals the file."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from app.log.index.reader import LogReader  # noqa: E402
from app.ui.live import LiveFollower  # noqa: E402

from test_live import cold_seqs, first_mid_turn_seq, simulate  # noqa: E402
from fixtures_util import fast_sample  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


class ViewModel:
    """What the history model does with LiveFollower's signals (and checks on the way)."""

    def __init__(self, live: LiveFollower, rows=None):
        self.rows = list(rows or [])
        self.states: list = []
        self.reinstalls = 0
        self.errors: list = []
        live.tail_reinstalled.connect(self.reinstall)
        live.rows_appended.connect(self.append)
        live.state_changed.connect(self.states.append)

    def reinstall(self, page):
        self.reinstalls += 1
        self.rows = [e.seq for e in page.events]

    def append(self, events):
        for e in events:
            if self.rows and e.seq != self.rows[-1] + 1:
                self.errors.append(f"appended {e.seq} after {self.rows[-1]}")
            self.rows.append(e.seq)


def _wait_file(path, timeout=10):
    end = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < end
        time.sleep(0.01)


CASES = [("jsonl", None, 2500, 12), ("zstd", None, 2000, 6), ("jsonl", 800, 1500, 20), ("zstd", 700, 3000, 4)]


@pytest.mark.parametrize("fmt,crash,rate,burst", fast_sample(CASES), ids=[f"{c[0]}-crash{c[1]}-r{c[2]}" for c in CASES])
def test_live_follower_equals_file(qtbot, tmp_path, fmt, crash, rate, burst):
    name = "session.jsonl.zstd" if fmt == "zstd" else "session.jsonl"
    path = tmp_path / "p" / name
    seed = rate + burst
    args = ["--events", 1500, "--rate", rate, "--max-burst", burst, "--batch-delay-ms", 30, "--seed", seed]
    if fmt == "zstd":
        args.append("--zstd")
    if crash is not None:
        crash = first_mid_turn_seq(seed, crash)
        args += ["--crash-at", crash]
    proc = simulate(path, *args)
    _wait_file(path)
    reader = LogReader.open(str(path))
    live = LiveFollower(reader, poll_interval=0.05, idle_after=0.3, crash_after=0.8, max_messages=5)
    vm = ViewModel(live)
    live.start()
    try:
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=40_000)   # the Qt loop runs meanwhile
        proc.communicate()
        shown_while_writing = len(vm.rows)
        final = cold_seqs(path)
        qtbot.waitUntil(lambda: bool(vm.rows) and vm.rows[-1] == final[-1], timeout=10_000)
        want = "complete" if crash is None else "crashed"
        qtbot.waitUntil(lambda: live.state == want, timeout=5_000)
    finally:
        live.stop()
    assert not vm.errors, vm.errors
    assert vm.reinstalls >= 1
    assert vm.rows == final[vm.rows[0]:], "duplicate or gap in the view"
    assert live.stats["appended"] > 0                     # rows arrived live, not only in pages
    assert shown_while_writing > 0, "nothing reached the view while the writer ran"
    # several batches, not one read at the end (a crash at ~700 events at 3,000 events/s leaves the
    # writer a quarter of a second: on a loaded machine that may be only two or three polls)
    assert live.stats["batches"] >= 2
    assert vm.states[0] == "waiting" and "loading" in vm.states and vm.states[-1] == "stopped"
    assert want in vm.states
    reader.close()


@pytest.mark.slow
def test_live_follower_continues_a_shown_page(qtbot, tmp_path):
    """The view already shows a tail page: no reinstall, rows continue from it (refetch-once rule)."""
    path = tmp_path / "s" / "session.jsonl"
    proc = simulate(path, "--events", 1500, "--rate", 2000, "--max-burst", 8, "--batch-delay-ms", 20, "--seed", 4)
    _wait_file(path)
    time.sleep(0.2)
    reader = LogReader.open(str(path))
    page = reader.tail_page(3)
    time.sleep(0.2)                                       # rows written after the page was read
    live = LiveFollower(reader, page=page, poll_interval=0.05, idle_after=0.3)
    vm = ViewModel(live, rows=[e.seq for e in page.events])
    live.start()
    try:
        qtbot.waitUntil(lambda: proc.poll() is not None, timeout=40_000)
        final = cold_seqs(path)
        qtbot.waitUntil(lambda: vm.rows[-1] == final[-1], timeout=10_000)
    finally:
        live.stop()
    assert vm.reinstalls == 0 and not vm.errors
    assert vm.rows == final[page.base_seq:]
    # the caller's reader can page older from its own page after a refresh
    reader.source.refresh()
    older = reader.page_before(page)
    assert older.last_seq == page.base_seq - 1
    reader.close()


def test_stop_is_prompt_and_idempotent(qtbot, tmp_path):
    path = tmp_path / "w" / "session.jsonl"
    path.parent.mkdir()
    from app.store.writer import write_session
    from app.tools.synth import SessionSynth
    syn = SessionSynth(2)
    write_session(str(path), syn.header(), [list(next(syn.turns(1)))])
    reader = LogReader.open(str(path))
    live = LiveFollower(reader, poll_interval=5.0, idle_after=0.2)
    vm = ViewModel(live)
    live.start()
    qtbot.waitUntil(lambda: vm.reinstalls == 1, timeout=5_000)
    qtbot.waitUntil(lambda: live.state == "complete", timeout=5_000)
    t0 = time.monotonic()
    live.stop()
    live.stop()
    assert time.monotonic() - t0 < 1.0
    assert vm.states[-1] == "stopped" and vm.rows == cold_seqs(path)
    reader.close()
