"""Small defects seen in screenshots of the demo store (``make run``), each checked on the demo's
own sessions: a badge cut in mid-word, a Request tab whose one-line heading widened the inspector
for good (the history shrank to a sliver), the outline dock squeezing the history, counts with
"(s)" or a wrong plural, a "latency unknown for 0 steps" clause, and a fork dialog whose spare
height was spread between its lines."""
from __future__ import annotations

import pytest
from PySide6.QtGui import QTextFormat
from PySide6.QtWidgets import QApplication, QLabel

from test_ui_history import WAIT, make_window  # noqa: F401 (fixtures)


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


def _demo(qtbot, make_window, size=(1400, 860), session="demo-v4-advanced"):  # noqa: F811 (the shared fixture)
    """The demo store with one of its v4 sessions open (default: the advanced one ``make run`` shows)."""
    from app.ui.main_window import demo_store
    store = demo_store()
    path = store / "sessions" / "--home-dev-demo-project--" / session / "session.v4.jsonl.zstd"
    win = make_window(page_size=50)
    win.resize(*size)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(store), select_path=str(path))
    qtbot.waitUntil(lambda: win.history.path == str(path) and not win.history.loading, timeout=WAIT)
    return win, win.history


def _history_share(win) -> float:
    sizes = win.split.sizes()
    return sizes[1] / max(1, sum(sizes))


@pytest.mark.slow
def test_demo_badges_are_never_cut_in_mid_word(qtbot, make_window):  # noqa: F811 (the shared fixture)
    win, h = _demo(qtbot, make_window)
    badges = {r.event.type: r.content().badge for r in h.window.all_rows
              if r.event is not None and "/" in r.event.type}
    assert badges.get("session-log-deepseek/delivery-accepted") == "SESSION-LOG", badges
    assert badges.get("tool-workflow/run-end") == "TOOL-WORKFLOW", badges
    assert not [b for b in badges.values() if b.endswith("-")]


@pytest.mark.slow
def test_request_heading_and_outline_leave_the_history_its_width(qtbot, make_window):  # noqa: F811 (the shared fixture)
    win, h = _demo(qtbot, make_window)
    qtbot.waitUntil(lambda: win.start._split_sized, timeout=WAIT)
    i = max(i for i, r in enumerate(h.rows) if r.event is not None and r.event.type == "assistant/message")
    win.select_row(i)
    with qtbot.waitSignal(win.request_view.computed, timeout=WAIT):
        win.show_request_tab()
    chip = win.truth_actions.request_chip
    assert chip.text().startswith("Exact request at seq") and len(chip.text()) > 60
    QApplication.processEvents()
    # the heading wraps: the inspector's minimum stays that of its content, not of one long line
    assert win.tabs.minimumSizeHint().width() < chip.fontMetrics().horizontalAdvance(chip.text()) * 0.7
    assert _history_share(win) > 0.35, win.split.sizes()
    win.tabs.setCurrentIndex(0)
    # the outline dock takes 380 px: the three columns share the loss, the history keeps a readable width
    ga = win.go_actions
    ga.outline_dock.show()
    qtbot.waitUntil(lambda: win.split.width() < 1400 - 300, timeout=WAIT)
    qtbot.waitUntil(lambda: _history_share(win) >= 0.35, timeout=WAIT)
    assert win.split.sizes()[1] >= 400, win.split.sizes()


def test_counts_are_worded_with_their_number():
    from app.ui.audit.stats_panel import totals_text
    from app.ui.json_model import preview
    t = {"turns": 1, "steps": 6, "attempts": 7, "failedAttempts": 1, "retries": 0,
         "tokens": {"input": 18, "output": 18, "cacheRead": 0, "reasoning": 0}, "toolCalls": {"run_code": 2, "x": 3},
         "latencyUnknown": 0}
    text = totals_text(t)
    assert text.startswith("1 turn · 6 steps · 7 attempts (1 failed) · 0 retries") and "5 tool calls" in text
    assert "latency unknown" not in text
    t["latencyUnknown"] = 1
    assert "latency unknown for 1 step (" in totals_text(t)
    assert preview({"role": "assistant", "content": [{"type": "tool-call"}]}) == "assistant · 1 block (tool-call)"
    assert preview({"a": 1}) == "{1 key}" and preview([1, 2]) == "[2 items]"


@pytest.mark.slow
def test_fork_dialog_keeps_its_lines_together(qtbot, make_window):  # noqa: F811 (the shared fixture)
    from app.ui.fork_action import ForkDialog, _preview_job
    win, h = _demo(qtbot, make_window)
    row = next(r for r in reversed(h.rows) if win.fork_action.eligible(r)[0])
    pv = _preview_job(None, h.path, h.session_id, row.event.seq, False)
    d = ForkDialog(win, pv)
    qtbot.addWidget(d)
    d.show()
    QApplication.processEvents()
    assert "1 completed turn," in d.findChildren(QLabel)[0].text()
    labels = [lb for lb in d.findChildren(QLabel) if lb.isVisible() and lb.wordWrap()]
    assert len(labels) >= 4
    # each line of text is as tall as its text (the spare height is not spread between them)
    tall = [(lb.text()[:30], lb.height(), lb.heightForWidth(lb.width())) for lb in labels
            if lb.height() > lb.heightForWidth(lb.width()) + 4]
    assert not tall, tall
    d.close()


def _luminance(c) -> float:
    def ch(v: float) -> float:
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * ch(c.redF()) + 0.7152 * ch(c.greenF()) + 0.0722 * ch(c.blueF())


def _contrast(a, b) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_diff_highlights_stay_readable_in_the_dark_theme(qtbot):
    from PySide6.QtGui import QPalette
    from app.ui.audit.diff_view import DiffView
    from app.ui.theme import Theme
    dark = Theme.current("dark")
    v = DiffView()
    qtbot.addWidget(v)
    pal = v.palette()
    pal.setColor(QPalette.ColorRole.Text, dark.color("fg"))
    pal.setColor(QPalette.ColorRole.Base, dark.color("base"))
    v.setPalette(pal)
    v.set_sides("failed", "[finish]\n{\"kind\": \"error\"}\n[usage]\nnull", "committed",
                "[tool call run_code]\n{\"code\": 1}\n[finish]\n{\"kind\": \"tool-calls\"}\n[usage]\n{}")
    sels = v.left.extraSelections() + v.right.extraSelections()
    assert len(sels) >= 3
    for sel in sels:
        fmt = sel.format
        fg = fmt.foreground().color() if fmt.hasProperty(QTextFormat.Property.ForegroundBrush) else \
            v.left.palette().color(QPalette.ColorRole.Text)
        assert _contrast(fg, fmt.background().color()) >= 4.5, (fg.name(), fmt.background().color().name())


def test_a_home_never_indexed_says_so():
    from app.ui.home_search_model import index_status
    assert index_status(0, 22) == "22 sessions not indexed yet"
    assert index_status(5, 1) == "5 sessions indexed · index is 1 session behind"
    assert index_status(7, 0) == "7 sessions indexed"


@pytest.mark.slow
def test_crashed_demo_banner_and_summary_count_one_closure_row(qtbot, make_window):  # noqa: F811 (the shared fixture)
    win, _h = _demo(qtbot, make_window, session="demo-v4-crashed")
    assert win.history.stats()["closure"] == 1
    qtbot.waitUntil(lambda: "closure row" in win.inspector.summary, timeout=WAIT)
    assert "The last turn is open: 1 closure row is synthesized" in win.banner.text(), win.banner.text()
    assert "open last turn: 1 closure row synthesized" in win.inspector.summary
    assert "(s)" not in win.banner.text() + win.inspector.summary


@pytest.mark.slow
def test_a_finished_jump_leaves_no_reading_message(qtbot, make_window):  # noqa: F811 (the shared fixture)
    win, h = _demo(qtbot, make_window, session="demo-v4-long")
    qtbot.waitUntil(lambda: h.index_state == "ready", timeout=WAIT * 2)
    assert 2000 not in h.window.events
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.goto_seq(2000)
        assert win.statusBar().currentMessage().startswith("Reading the page around seq 2000")
    assert h.window.has_newer, "a jump (the page around the seq, read by index)"
    assert not win.statusBar().currentMessage().startswith("Reading"), win.statusBar().currentMessage()
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.go_actions.ctl.goto_start()
    assert not win.statusBar().currentMessage().startswith("Reading"), win.statusBar().currentMessage()
