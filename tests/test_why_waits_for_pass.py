"""The inspector's "why" waits for the whole-log pass rather than start a second one (issue 36).

A row selected while the open's whole-log pass runs (it saves the checkpoints and surface index the trace
reads) is traced without building anything (``build=False``); when they are not saved yet it says so,
and traces the row again once the pass has ended, building what is missing only then.  Before, the trace
built the checkpoints in a child of its own, a second whole-log pass beside the window's (a 103 MB child
at 4.3 GB), and decoded them whole in the window."""
from __future__ import annotations

import shutil

from conftest import fixture

COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


class _Pass:
    """The whole-log pass job as the truth views see it (``finished``, ``cancelled``)."""
    finished = False
    cancelled = False


def test_the_why_of_a_row_selected_during_the_pass_waits_for_it(qtbot, win, tmp_path, monkeypatch):
    import app.store.trace_points as tp
    calls: list[bool] = []
    real = tp.window_trace

    def traced(path, session_id, seq, cancelled=None, check=None, build=True):
        calls.append(build)
        return real(path, session_id, seq, cancelled, check, build) if build else None    # (nothing saved yet)
    monkeypatch.setattr(tp, "window_trace", traced)
    src = tmp_path / "s" / "session.jsonl"
    src.parent.mkdir()
    shutil.copy(fixture(COMPACTION), src)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(src))
    h = win.history
    qtbot.waitUntil(lambda: not h.loading and h.window.sindex is not None, timeout=WAIT)
    qtbot.waitUntil(lambda: win.go_actions.outline is not None, timeout=WAIT)
    running = _Pass()
    win.go_actions.outline_job = running             # (a pass still running)
    ta = win.truth_actions
    i4 = next(i for i, r in enumerate(h.rows) if r.seq == 4)
    win.select_row(i4)
    qtbot.waitUntil(lambda: "after the whole-log pass" in ta.why.text(), timeout=WAIT)
    assert calls == [False] and ta.trace_result is None
    qtbot.wait(600)                                   # (the pass still runs: the row still waits)
    assert calls == [False]
    running.finished = True                           # the pass ends
    qtbot.waitUntil(lambda: ta.trace_result is not None, timeout=WAIT)
    assert calls == [False, True]
    assert ta.trace_result["replacementChain"] == [21] and "Replacement chain:" in ta.why.text()
