"""Fork from here on a generated 12 MB log in the real window (pytest-qt, offscreen): the task strip shows the
fork's bar (copy then verify) moving monotonically to 100 % with the bytes; Cancel stops the worker within
200 ms and leaves nothing (no child session folder, no temporary).  Both copy on a slow disk (each 256 KiB
step waits 20 ms, as the writeback of a slow device would): on this machine's page cache a 12 MB copy ends
before its first report reaches the window."""
from __future__ import annotations

import time

import pytest

import app.ui  # noqa: F401  (PySide6 refcount work-around before any Qt code)

pytest.importorskip("PySide6")

from app.tools.synth import SessionSynth, write_jsonl  # noqa: E402

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    p = tmp_path_factory.mktemp("forkprog") / "store" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(33), target_bytes=12 << 20)
    return p


def _window(qtbot, path, out):
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=50, theme_mode="light")
    qtbot.addWidget(w)
    w.show()
    fa = w.fork_action

    def confirm(_win, pv):
        pv["outStore"] = str(out)                  # the folder the user chose in the dialog
        return True
    fa.confirm = confirm
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.open_store(str(path))
    qtbot.waitUntil(lambda: not w.history.loading, timeout=WAIT)
    rows = w.history.rows
    i = next(i for i in range(len(rows) - 1, -1, -1) if fa.eligible(rows[i])[0])
    w.select_row(i)
    assert fa.action.isEnabled()
    return w, fa


def _start(qtbot, w, fa):
    fa.action.trigger()
    qtbot.waitUntil(lambda: fa.last_job is not None, timeout=WAIT)     # (after the preview)
    job = fa.last_job
    return job, w.tasks.panes.get(job)


@pytest.fixture
def slow_disk(monkeypatch):
    """Each copied step written back by a slow disk (20 ms); yields when each step began."""
    import app.store.publish as publish
    monkeypatch.setattr(publish, "COPY_STEP", 256 << 10)
    real = publish.start_writeback
    steps: list[float] = []

    def slow(fd, offset, length):
        steps.append(time.perf_counter())
        time.sleep(0.02)
        real(fd, offset, length)
    monkeypatch.setattr(publish, "start_writeback", slow)
    return steps


def test_fork_bar_moves_monotonically_to_100(qtbot, tmp_path, big_log, slow_disk):
    out = tmp_path / "out"
    w, fa = _window(qtbot, big_log, out)
    values: list[int] = []
    details: list[str] = []
    with qtbot.waitSignal(fa.forked, timeout=WAIT) as blocker:
        job, pane = _start(qtbot, w, fa)
        assert pane is not None and pane.cancel.isVisible() and w.tasks.isVisible()
        pane.bar.valueChanged.connect(values.append)
        pane.bar.valueChanged.connect(lambda _v: details.append(pane.detail.text()))
    assert values and values == sorted(values) and values[-1] == 100
    assert len(set(values)) > 2, values                            # moved in steps, not a jump to the end
    assert any(" of " in d and "MB" in d for d in details)
    res = blocker.args[0]
    assert res["child"].startswith(str(out))
    qtbot.waitUntil(lambda: not w.tasks.panes, timeout=WAIT)
    w.shutdown()


def test_cancel_stops_the_fork_at_the_next_step_and_leaves_nothing(qtbot, tmp_path, big_log, slow_disk):
    out = tmp_path / "out"
    out.mkdir()
    w, fa = _window(qtbot, big_log, out)
    job, pane = _start(qtbot, w, fa)
    qtbot.waitUntil(lambda: pane.bar.value() >= 5, timeout=WAIT)       # well under way
    assert not job.finished
    t = time.perf_counter()
    pane.cancel.click()
    assert not w.tasks.panes                                           # the pane goes at once
    qtbot.waitUntil(lambda: job.finished, timeout=WAIT)
    stopped = job.ended_at - t
    after = [s for s in slow_disk if s > t]
    print(f"cancel: the worker ended {stopped * 1000:.0f} ms after the click, {len(after)} step(s) after it")
    assert len(after) <= 1, f"the fork copied {len(after)} steps after Cancel"   # (counted, not timed)
    assert sorted(p.name for p in out.rglob("*")) == []                # no child folder, no temporary
    # (said when the job's end reaches the UI thread: a queued call after the worker has left)
    qtbot.waitUntil(lambda: "cancelled" in w.statusBar().currentMessage().lower(), timeout=WAIT)
    w.shutdown()
