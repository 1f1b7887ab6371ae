"""Issue 19: the bugs a new user hit (one test each) and the frame around the history.

Every test opens real fixtures (or files derived from them) in the real window.
"""
from __future__ import annotations

import os
import re
import shutil
import time

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from conftest import fixture

PIN = "packages/test-support/acp-snapshot/tests/fixtures/suite/pin-turn/session.jsonl"   # open last turn
RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
BIG = "apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl"                    # 2,098 events
WRITE = "examples/acp-agent/tests/snapshots/session-sandbox-root/session.jsonl"          # write call + result
WRITE_FAILED = "examples/headless-agent/tests/subagent-inheritance-snapshots/parent-override/child.expected.jsonl"
UNKNOWN = "examples/headless-agent/tests/semantic-checkpoint-snapshots/tool-outcome-unknown/session.expected.jsonl"
WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower
PY_NAME = re.compile(r"\b[A-Z]\w*(Error|Exception)\b")


def open_and_wait(qtbot, win, path):
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(path))
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    return win.history


def copy_to(tmp_path, rel, name="s"):
    d = tmp_path / name
    d.mkdir(parents=True)
    dst = d / "session.jsonl"
    shutil.copy(fixture(rel), dst)
    return dst


# --------------------------------------------------------------------------- bug 1

@pytest.mark.slow
def test_open_with_a_filter_typed_still_opens(qtbot, win, tmp_path):
    """A session filter typed for the previous store must not hide the file being opened."""
    open_and_wait(qtbot, win, fixture("examples/acp-agent/tests/snapshots/subagent-fork-in-process"))
    win.sessions.filter.setText("no-such-title-zzz")
    qtbot.waitUntil(lambda: win.sessions.proxy.rowCount() == 0, timeout=WAIT)
    for rel in (RETRY, PIN):                  # and every later Open too
        h = open_and_wait(qtbot, win, fixture(rel))
        assert h.path == str(fixture(rel)) and h.rowCount() > 0
        assert win.session.path == str(fixture(rel))
        assert win.sessions.filter.text() == ""


# --------------------------------------------------------------------------- bug 2

@pytest.mark.slow
def test_crash_banner_follows_the_face(qtbot, win, make_physical_window):
    h = open_and_wait(qtbot, win, fixture(PIN))
    assert win.banner.isVisible() and "closure row" in win.banner.text() and "synthesized" in win.banner.text()
    win.set_physical(True)
    qtbot.waitUntil(lambda: h.physical, timeout=WAIT)
    text = win.banner.text()
    assert win.banner.isVisible() and "Physical tail: only the stored rows" in text and "synthesized in memory" not in text
    win.set_physical(False)
    assert "synthesized in memory" in win.banner.text()
    # opened on the physical face, the banner says so from the start
    w2 = make_physical_window()
    open_and_wait(qtbot, w2, fixture(PIN))
    assert w2.history.physical
    assert w2.banner.isVisible() and "The last turn is open" in w2.banner.text()
    assert "Physical tail" in w2.banner.text()


@pytest.fixture
def make_physical_window(qtbot):
    made = []

    def make():
        from app.ui.main_window import MainWindow
        w = MainWindow(page_size=20, theme_mode="light")
        qtbot.addWidget(w)
        w.resize(1200, 800)
        w.show()
        w.act_physical.setChecked(True)          # as `session-lens gui --physical` does
        made.append(w)
        return w
    yield make
    for w in made:
        w.shutdown()


# --------------------------------------------------------------------------- bug 3

@pytest.mark.slow
def test_status_bar_messages_elide_and_counters_agree(qtbot, win):
    h = open_and_wait(qtbot, win, fixture(PIN))
    # one count of stored events: the closure row is not counted as loaded from the log
    stored = len([e for e in h.window.events.values() if not e.synthesized])
    assert f"{stored} of {stored} events loaded" in win.status_counts.text()
    assert "synthesized" in win.status_face.text()
    long = "Exported Markdown to " + "/very/long/path/" * 30 + "session.md (12,345 bytes)"
    win.statusBar().showMessage(long, 5000)
    QApplication.processEvents()
    msg = win.statusBar().message_label
    assert msg.full_text() == long and win.statusBar().currentMessage() == long
    shown = msg.shown_text()
    assert shown.endswith("…") and long.startswith(shown[:-1]), "elided at the end, not cut mid-word"
    assert msg.toolTip() == long
    mg, cg = msg.geometry(), win.status_counts.geometry()
    assert mg.right() < cg.left(), "the message never runs into the counters"
    # a big log: the index count and the loaded count speak of the same events
    win.history.page_size = 200
    win.open_store(str(fixture(BIG)))
    qtbot.waitUntil(lambda: win.history.path == str(fixture(BIG)) and win.history.index_state == "ready"
                    and not win.history.loading, timeout=WAIT)
    s = win.history.stats()
    qtbot.waitUntil(lambda: f"{s['storedEvents']:,} of 2,098 events loaded" in win.status_counts.text(), timeout=WAIT)


# --------------------------------------------------------------------------- bug 4

@pytest.mark.slow
def test_find_and_faces_do_not_leak_into_the_next_session(qtbot, win, tmp_path):
    store = tmp_path / "store"
    a = copy_to(store, RETRY, "a")
    b = copy_to(store, PIN, "b")
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(store), select_path=str(a))
    qtbot.waitUntil(lambda: win.history.path == str(a) and not win.history.loading, timeout=WAIT)
    win.open_search()
    win.find_edit.setText("zzz-nothing-matches")
    qtbot.waitUntil(lambda: "no match" in win.history_actions.search_count.text(), timeout=WAIT)
    win.set_physical(True)
    win.set_show_attempts(True)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.sessions.select_key(str(b))
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    assert win.find_edit.text() == "" and win.history_actions.search_count.text() == ""
    assert not win.find_bar.isVisible() and win.history.find_term == ""
    assert not win.history.physical and not win.act_physical.isChecked()
    assert not win.history.show_attempts and not win.act_attempts.isChecked()
    # keeping them is a deliberate choice, and the window says it kept them
    win.history_actions.act_keep_faces.setChecked(True)
    win.set_physical(True)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.sessions.select_key(str(a))
    assert win.history.physical and win.act_physical.isChecked()
    assert "Kept from the previous session: physical tail" in win.statusBar().currentMessage()


# --------------------------------------------------------------------------- bug 5

@pytest.mark.slow
def test_crash_marker_does_not_flicker_between_polls(qtbot, win, tmp_path):
    store = tmp_path / "store"
    crashed = copy_to(store, PIN, "crashed")
    copy_to(store, RETRY, "done")
    old = time.time() - 300                      # quiet for 5 minutes: past the list's crash delay
    os.utime(crashed, (old, old))
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(store), select_path=str(crashed))
    m = win.sessions.model
    info = next(i for i in m.sessions() if i.path == str(crashed))
    win.live_actions.poll_states()
    qtbot.waitUntil(lambda: m.states.get(info.key) == "crashed", timeout=WAIT)
    labels = []
    m.dataChanged.connect(lambda *_: labels.append(m.label(info)))
    # the open session's follower has a shorter clock: it says "idle" before "crashed"
    for st in ("idle", "crashed", "idle"):
        win.live_actions._on_live_state(st)
        win.live_actions.poll_states()
        qtbot.waitUntil(lambda: win.live_actions._states_job is None, timeout=WAIT)
    assert m.label(info).startswith("✕ crashed")
    assert all(lbl.startswith("✕ crashed") for lbl in labels), labels
    # a log that grows again clears it
    m.set_states({info.key: "live"})
    assert m.label(info).startswith("● live")


# --------------------------------------------------------------------------- bug 6

@pytest.mark.slow
def test_errors_are_sentences_with_details_on_demand(qtbot, win, tmp_path):
    # a file that is not a session log, opened first: the welcome page says why, in words
    bad = tmp_path / "broken" / "session.jsonl.zstd"
    bad.parent.mkdir()
    bad.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00garbage not a frame" * 20)
    with qtbot.waitSignal(win.storeFailed, timeout=WAIT) as sig:
        win.open_store(str(bad))
    assert PY_NAME.search(sig.args[0]), "the worker's text names the exception"
    assert "not a session file" in win.welcome.notice.text()
    for text in (win.welcome.notice.text(), win.statusBar().currentMessage()):
        assert not PY_NAME.search(text), text
    # a listed session whose file went away: the banner says so, the details hold the rest
    store = tmp_path / "store"
    a = copy_to(store, RETRY, "a")
    b = copy_to(store, PIN, "b")
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(store), select_path=str(a))
    b.unlink()
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.sessions.select_key(str(b))
    assert win.history.open_error and PY_NAME.search(win.history.open_error)
    assert win.banner.isVisible() and win.banner.text().startswith("Cannot open this session: No such file")
    for text in (win.banner.text(), win.statusBar().currentMessage()):
        assert not PY_NAME.search(text), text
    assert win.banner_details.isVisible()
    box = win.show_error_details()
    assert box is not None and box.detailedText() == win.history.open_error
    assert box.textFormat() == Qt.TextFormat.PlainText
    box.close()


def test_humane_error_drops_exception_names():
    from app.ui.status import humane_error, strip_exception_names
    assert humane_error("ValueError: bad header")[0] == "Bad header"
    assert humane_error("FileNotFoundError: [Errno 2] No such file: 'x'")[0] == "No such file: 'x'"
    assert humane_error("FileNotFoundError")[0] == "The file is not there any more"
    assert humane_error("error: OpenError: app.log.source.sources.SourceChanged: moved")[0] == "Moved"
    assert strip_exception_names("Fork failed: PermissionError: denied") == "Fork failed: Denied"
    assert humane_error("plain words")[0] == "plain words"


# --------------------------------------------------------------------------- bug 7

@pytest.mark.slow
def test_header_only_session_has_an_empty_state(qtbot, win, tmp_path):
    src = fixture(RETRY).read_bytes().split(b"\n", 1)[0] + b"\n"
    p = tmp_path / "empty" / "session.jsonl"
    p.parent.mkdir()
    p.write_bytes(src)
    h = open_and_wait(qtbot, win, p)
    assert h.rowCount() == 0
    assert win.empty_state.isVisible() and not win.view.isVisible()
    assert "no events yet" in win.empty_state.text() and "header" in win.empty_state.text()
    assert win.empty_state.textFormat() == Qt.TextFormat.PlainText
    open_and_wait(qtbot, win, fixture(RETRY))
    assert not win.empty_state.isVisible() and win.view.isVisible()


# --------------------------------------------------------------------------- bug 8

def _card_rows(qtbot, win, rel):
    h = open_and_wait(qtbot, win, fixture(rel))
    return [r for r in h.rows if r.kind == "tool-result"]


@pytest.mark.slow
def test_result_cards_say_each_thing_once(qtbot, win):
    def norm(t):
        return " ".join(t.split())
    # a write result: "Created file" once, the written content not again under the result
    res = _card_rows(qtbot, win, WRITE)[0]
    text = res.content().plain_text()
    assert text.count("Created file") == 1, text
    assert "session root" not in text and "as in the call (seq 15)" in text
    # a failed write: the error once
    res = [r for r in _card_rows(qtbot, win, WRITE_FAILED) if r.content().status == "error"][0]
    text = norm(res.content().plain_text())
    assert text.count("file access denied under read-only mode") == 1, text
    # a failed generic result: its message once, its code once
    res = [r for r in _card_rows(qtbot, win, UNKNOWN) if r.content().status == "error"][0]
    text = norm(res.content().plain_text())
    assert text.count("no result was durably recorded") == 1, text
    assert text.count("TOOL_OUTCOME_UNKNOWN") == 1


# --------------------------------------------------------------------------- bug 9

@pytest.mark.slow
def test_find_bar_and_status_bar_agree_when_the_page_budget_runs_out(qtbot, win, monkeypatch):
    # the in-session search reads the whole log in a child process (find_actions): with only
    # a few pages loaded, "no match" is said of the whole log, in the find bar and the status bar
    win.history.page_size = 5
    h = open_and_wait(qtbot, win, fixture(BIG))
    win.open_search()
    win.find_edit.setText("zzz-not-in-this-log")
    fa = win.find_actions
    qtbot.waitUntil(lambda: "no match" in win.history_actions.search_count.text() and not fa.running, timeout=WAIT)
    assert h.has_more                                   # older pages are not loaded, yet they were searched
    count = win.history_actions.search_count.text()
    assert "no match in" in count and "so far" not in count
    win.search_step(True)                               # Enter: the status bar says the same thing
    assert win.statusBar().currentMessage() == count
