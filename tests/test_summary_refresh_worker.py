"""The session summary's whole-log figures (turns, tool calls and problems of the outline pass) are
computed once per outline, in a worker, never on the UI thread (issue 29: they walk every turn of
the whole log, about 0.1 s at 1 GB, and *Errors only* refreshed them twice per click).  The text is
the same as the one computed the old way (every figure on the spot) at open, after *Errors only*
on and off, after older pages, and for another session opened next.
Real window (pytest-qt, offscreen), generated v4 logs with compactions and one malformed row."""
from __future__ import annotations

import threading

import pytest

import app.ui  # noqa: F401  (PySide6 refcount work-around before any Qt code)
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.outline_turns import CompactTurns
from app.ui.summary_refresh import SummaryRefresh

pytest.importorskip("PySide6")

WAIT = 120_000  # a limit on waiting for a condition, not on speed


@pytest.fixture(autouse=True)
def _dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))


def _log(tmp_path, seed: int, name: str) -> str:
    """A v4 log with compactions and errors, and a malformed row in the middle (one outline problem)."""
    p = tmp_path / name / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed, version=4), target_bytes=1_500_000)
    lines = p.read_bytes().split(b"\n")
    lines.insert(len(lines) // 2, b'{"type": "assistant/message", "seq": ')
    p.write_bytes(b"\n".join(lines))
    return str(p)


@pytest.fixture
def counted(monkeypatch):
    """Turns unpacked on the UI thread inside the summary's refresh (the whole-log walk)."""
    seen = {"ui": 0, "worker": 0, "inside": False}
    turn, refresh = CompactTurns._turn, SummaryRefresh.refresh

    def counting_turn(self, i):
        if threading.current_thread() is threading.main_thread():
            seen["ui"] += seen["inside"]
        else:
            seen["worker"] += 1
        return turn(self, i)

    def counting_refresh(self):
        seen["inside"] = True
        try:
            return refresh(self)
        finally:
            seen["inside"] = False
    monkeypatch.setattr(CompactTurns, "_turn", counting_turn)
    monkeypatch.setattr(SummaryRefresh, "refresh", counting_refresh)
    return seen


def _window(qtbot):
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=40, theme_mode="light")
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    return w


def _open(qtbot, w, path):
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.open_store(path)
    go, h = w.go_actions, w.history
    qtbot.waitUntil(lambda: not h.loading and go.outline is not None and h.index_state == "ready", timeout=WAIT)
    return h, go


def _settled(qtbot, w) -> str:
    """The summary once every scheduled refresh and the whole log's figures are in."""
    sr = w.frame_actions.summary_refresh
    qtbot.waitUntil(lambda: not sr.pending() and not w.history.loading, timeout=WAIT)
    return w.inspector.summary


def _old_way(w) -> str:
    """The summary computed the old way: every whole-log figure on the spot, from the same state."""
    from app.ui.session_model import display_title
    from app.ui.summary import session_summary, whole_log
    h, go = w.history, w.go_actions
    title = display_title(w.session, w.sessions.model.titles) if w.session is not None else ""
    busy = w.jobs.group_busy(go.job_group("outline")) > 0
    return session_summary(h, w.session, title, whole_log(go.outline, h.seq_index, busy))


def test_summary_whole_log_figures_off_the_ui_thread_and_unchanged(qtbot, tmp_path, counted):
    path = _log(tmp_path, 29, "a")
    w = _window(qtbot)
    h, go = _open(qtbot, w, path)
    assert go.outline.complete and len(go.outline.turns) > 20 and go.error_seqs
    assert go.outline.problems, "the malformed row is a problem of the whole log"
    texts = {"open": _settled(qtbot, w)}
    assert texts["open"] == _old_way(w), "at open"
    assert "in the whole log" in texts["open"] and "tool calls: " in texts["open"]
    refreshes = w.frame_actions.summary_refresh.count
    go.act_errors_only.trigger()
    qtbot.waitUntil(lambda: h.jumps.paging_done(), timeout=WAIT)
    texts["errors on"] = _settled(qtbot, w)
    assert counted["ui"] == 0, f"{counted['ui']} turns unpacked on the UI thread by the refresh (Errors only on)"
    assert texts["errors on"] == _old_way(w), "after Errors only on"
    events = [ln for ln in texts["errors on"].splitlines() if ln.startswith("events: ")]
    assert events and "(the whole log)" not in events[0], f"Errors only's page is not the whole log: {events}"
    go.act_errors_only.trigger()
    texts["errors off"] = _settled(qtbot, w)
    assert counted["ui"] == 0, f"{counted['ui']} turns unpacked on the UI thread by the refresh (Errors only off)"
    assert texts["errors off"] == _old_way(w), "after Errors only off"
    for _ in range(3):                # older pages (scrolling up)
        if h.request_older():
            qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    texts["older"] = _settled(qtbot, w)
    assert counted["ui"] == 0 and w.frame_actions.summary_refresh.count > refreshes
    assert texts["older"] == _old_way(w), "after older pages"
    assert len(set(texts.values())) > 1, "the summary followed what is loaded"
    assert counted["worker"] >= len(go.outline.turns), "the figures came from the worker"
    w.shutdown()


def test_another_session_gets_its_own_figures(qtbot, tmp_path, counted):
    """A new session drops the figures of the one before (its job group is cancelled): the summary
    states the new outline's figures, the same as computed the old way."""
    w = _window(qtbot)
    _open(qtbot, w, _log(tmp_path, 3, "a"))
    first = _settled(qtbot, w)
    assert first == _old_way(w)
    sr = w.frame_actions.summary_refresh
    _open(qtbot, w, _log(tmp_path, 8, "b"))
    second = _settled(qtbot, w)
    assert second == _old_way(w) and second != first
    known, figures = sr.figures(w.go_actions.outline)
    assert known and figures is not None and figures["turns"] == len(w.go_actions.outline.turns)
    w.shutdown()
