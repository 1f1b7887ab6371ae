"""The real window on dsh fixtures: tail page, older pages, faces, attempts, inspector, search.

Run offscreen: QT_QPA_PLATFORM=offscreen pytest tests/test_ui_*.py
"""
from __future__ import annotations

import json
import shutil

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QLabel

from conftest import fixture

BIG = "apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl"        # 2,098 events
PIN = "packages/test-support/acp-snapshot/tests/fixtures/suite/pin-turn/session.jsonl"   # open last turn
RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"         # 9-10 failed
WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def make_window(qtbot):
    made = []

    def make(page_size=50, theme="light"):
        from app.ui.main_window import MainWindow
        w = MainWindow(page_size=page_size, theme_mode=theme)
        qtbot.addWidget(w)
        w.resize(1200, 800)
        w.show()
        made.append(w)
        return w
    yield make
    for w in made:
        w.shutdown()


def open_and_wait(qtbot, win, path):
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(path))
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    return win.history


def rows_of(h, kind=None):
    return [r for r in h.rows if kind is None or r.kind == kind]


def idle(qtbot, h, view=None):
    if view is None:
        qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    else:
        qtbot.waitUntil(view.settled, timeout=WAIT)


# --------------------------------------------------------------------------- open + tail

def test_open_session_file_shows_tail_newest_last(qtbot, make_window):
    win = make_window(page_size=3)
    h = open_and_wait(qtbot, win, fixture(BIG))
    assert h.rows, "tail rows installed"
    assert h.rows[-1].kind == "turn-end" and h.rows[-1].seq == 2097, "newest row at the bottom"
    assert h.has_more, "a small page size leaves older pages"
    # chunks are collapsed: no row per assistant/chunk; the message row covers its attempt
    assert not [r for r in h.rows if r.event is not None and r.event.type == "assistant/chunk"]
    a = rows_of(h, "assistant")[-1]
    assert a.chunks and a.first_seq < a.seq and a.attempt.status == "committed"
    assert "tokens:" in a.content().plain_text(), "usage shown on the assistant row"
    # view is scrolled to the bottom, the status bar names face and format
    sb = win.view.verticalScrollBar()
    qtbot.waitUntil(lambda: sb.value() >= sb.maximum() - 2, timeout=WAIT)
    assert "face: logical" in win.status_face.text() and "jsonl" in win.status_face.text()
    assert "rows" in win.status_counts.text()


@pytest.mark.slow
def test_scroll_up_loads_older_pages_and_keeps_position(qtbot, make_window):
    win = make_window(page_size=2)
    h = open_and_wait(qtbot, win, fixture(BIG))
    view = win.view
    sb = view.verticalScrollBar()
    assert h.has_more
    seen_pages = len(h.pages)
    for _ in range(60):
        if not h.has_more:
            break
        idle(qtbot, h, view)
        state = (len(h.pages), h.hidden_rows)     # an older page read, or loaded rows slid in
        view.doItemsLayout()
        sb.setValue(0)                        # the user scrolls to the top (fetch is queued)
        top = view.indexAt(QPoint(8, 40))
        assert top.isValid()
        key, y0 = h.rows[top.row()].key, view.visualRect(top).top()
        qtbot.waitUntil(lambda: (len(h.pages), h.hidden_rows) != state or not h.has_more, timeout=WAIT)
        idle(qtbot, h, view)
        r = h.row_for_key(key)
        assert r is not None
        y1 = view.visualRect(h.index(r, 0)).top()
        assert abs(y1 - y0) <= 2, f"prepending moved the anchored row from {y0} to {y1}"
    assert len(h.pages) > seen_pages
    assert not h.has_more and h.base_seq == 0, "paging reached the start of the log"
    assert h.stats()["events"] == 2098
    seqs = [r.seq for r in h.rows if r.seq is not None]
    assert seqs == sorted(seqs) and len({r.key for r in h.rows}) == len(h.rows)


def test_index_builds_in_a_worker_with_progress(qtbot, make_window):
    win = make_window(page_size=5)
    with qtbot.waitSignal(win.history.indexReady, timeout=WAIT):
        win.open_store(str(fixture(BIG)))
    assert win.history.index_state == "ready"
    assert win.history.stats()["indexedEvents"] == 2098
    assert "of 2,098 events loaded" in win.status_counts.text()
    assert not win.progress.isVisible()


# --------------------------------------------------------------------------- faces

def test_logical_tail_marks_synthesized_closure_physical_shows_stored_rows(qtbot, make_window):
    win = make_window()
    h = open_and_wait(qtbot, win, fixture(PIN))
    last = h.rows[-1]
    assert last.kind == "turn-end" and last.synthesized and "synthesized" in last.marks
    assert any("synthesized" in p[0] for p in last.content().pills)
    assert "synthesized" in win.status_face.text() and "open" in win.banner.text()
    win.act_physical.trigger()                 # the one switch
    assert h.physical and win.act_physical.isChecked() and win.act_physical.text() == "&Physical tail"
    assert [r.seq for r in h.rows] == [0, 1, 2] and not any(r.synthesized for r in h.rows)
    assert "face: physical" in win.status_face.text()
    win.act_physical.trigger()
    assert h.rows[-1].synthesized


def torn_copy(tmp_path):
    src = fixture(RETRY)
    dst = tmp_path / "torn" / "session.jsonl"
    dst.parent.mkdir()
    shutil.copy(src, dst)
    with open(dst, "ab") as f:
        f.write(b'{"type":"turn/start","seq":21,"time":17853')       # no newline: torn
    return dst


@pytest.mark.slow
def test_physical_face_shows_torn_row_as_text(qtbot, make_window, tmp_path):
    win = make_window()
    h = open_and_wait(qtbot, win, torn_copy(tmp_path))
    assert not rows_of(h, "bad"), "the logical face drops the torn tail"
    assert "torn" in win.banner.text()
    win.set_physical(True)
    bad = rows_of(h, "bad")
    assert len(bad) == 1 and h.rows[-1] is bad[0]
    b = bad[0]
    assert b.bad.kind == "torn"
    c = b.content()
    assert c.status == "error" and ("torn row", "bad") in c.pills
    assert '{"type":"turn/start","seq":21' in c.plain_text()
    win.select_row(len(h.rows) - 1)
    assert '"seq":21,"time":17853' in win.inspector.raw.toPlainText()
    assert "torn" in win.inspector.title.text()
    assert "bad/torn" in win.status_face.text()
    # the painted document of the bad row carries its raw text, as text
    doc = win.view.delegate.document(b)
    assert '{"type":"turn/start","seq":21,"time":17853' in doc.toPlainText()


# --------------------------------------------------------------------------- attempts

def test_failed_attempt_hidden_by_default_shown_in_place(qtbot, make_window):
    win = make_window()
    h = open_and_wait(qtbot, win, fixture(RETRY))
    assert h.row_for_seq(9) is None and h.row_for_seq(10) is None
    assert not rows_of(h, "attempt-failed")
    assert "1 hidden attempt" in win.status_counts.text()
    win.act_attempts.trigger()
    failed = rows_of(h, "attempt-failed")
    assert len(failed) == 1
    f = failed[0]
    assert (f.first_seq, f.last_seq) == (9, 10) and "hidden" in f.marks
    assert "EMPTY_RESPONSE" in f.content().plain_text()
    assert f.attempt.failure_reason().startswith("EMPTY_RESPONSE")
    i = h.row_index(f)
    assert h.rows[i + 1].seq == 11 and h.rows[i - 1].seq == 8, "in place: after request/context, before llm/retry"
    assert h.row_for_seq(10) == i
    win.act_attempts.trigger()
    assert not rows_of(h, "attempt-failed")


# --------------------------------------------------------------------------- inspector

def tool_row(h):
    for r in h.rows:
        if r.kind == "tool-call":
            return r
    raise AssertionError("no tool row")


def test_select_tool_row_shows_presenter_view_and_raw_json(qtbot, make_window):
    win = make_window()
    h = open_and_wait(qtbot, win, fixture(BIG))
    r = tool_row(h)
    win.select_row(h.row_index(r))
    raw = win.inspector.raw.toPlainText()
    assert json.loads(raw) == json.loads(r.event.raw), "raw JSON pretty-printed from the stored bytes"
    assert f"seq {r.seq}" in win.inspector.title.text()
    try:
        from app.presenters import views_for_page  # noqa: F401
        have_presenters = True
    except ImportError:
        have_presenters = False
    if have_presenters:
        assert isinstance(r.view, dict) and r.view.get("for") == "call"
        assert win.inspector.view_box.isVisible()
        shown = win.inspector.view_box.toPlainText()
        assert str(r.view.get("card")) in shown
        assert r.content().badge == "TOOL CALL"
        res = next(x for x in h.rows if x.kind == "tool-result" and x.seq > r.seq)
        assert isinstance(res.view, dict) and res.view.get("for") == "result"
    else:
        assert ("generic", "card") in r.content().pills       # generic card without presenters
        assert "arguments" in r.content().plain_text()


@pytest.mark.slow
def test_source_event_links_select_rows_and_fetch_older(qtbot, make_window):
    win = make_window()
    h = open_and_wait(qtbot, win, fixture(RETRY))
    a = next(r for r in h.rows if r.kind == "assistant")
    win.select_row(h.row_index(a))
    assert win.inspector.link_seqs[:5] == [13, 14, 15, 16, 17]
    assert 'href="seq:13"' in win.inspector.links.text()
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.inspector.links.linkActivated.emit("seq:13")
    assert win.view.current_row() is a, "a collapsed chunk selects its message row"
    assert "assistant/chunk · seq 13" in win.inspector.title.text()
    # a seq inside a hidden attempt: shown in the inspector, noted
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.goto_seq(9)
    assert "seq 9" in win.inspector.title.text() and "hidden" in win.inspector.title.text()
    # a seq on an older page: pages are fetched until it is loaded
    win2 = make_window(page_size=2)
    h2 = open_and_wait(qtbot, win2, fixture(BIG))
    assert not h2.is_loaded(5)
    with qtbot.waitSignal(win2.seqSelected, timeout=WAIT):
        win2.goto_seq(5)
    row = win2.view.current_row()
    assert row is not None and row.first_seq <= 5 <= max(row.seq, row.last_seq)
    assert "seq 5" in win2.inspector.title.text()


def test_request_inspector_computes_in_worker(qtbot, make_window):
    win = make_window()
    h = open_and_wait(qtbot, win, fixture(RETRY))
    a = next(r for r in h.rows if r.kind == "assistant")
    win.select_row(h.row_index(a))
    with qtbot.waitSignal(win.request_view.computed, timeout=WAIT):
        win.show_request_tab()
    res = win.request_view.result
    assert res["boundary"] == 13 and res["headerSeq"] == 7
    req = res["request"]
    assert req["messages"] and req["model"] == "deepseek-v4-flash"
    assert "13" in win.request_view.status.text()
    assert win.request_view.tree_model.rowCount() >= 3


# --------------------------------------------------------------------------- search, keys, copy

@pytest.mark.slow
def test_search_highlights_and_steps_into_older_pages(qtbot, make_window):
    win = make_window(page_size=2)
    h = open_and_wait(qtbot, win, fixture(BIG))
    qtbot.keyClick(win.view, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert win.find_bar.isVisible()
    term = "get_goal"
    with qtbot.waitSignal(win.findMoved, timeout=WAIT):
        win.find_edit.setText(term)
    assert h.matches and h.current_match_row in h.matches
    from app.ui.history.model import MATCH_ROLE
    ix = h.index(h.current_match_row, 0)
    assert ix.data(MATCH_ROLE) is True
    doc = win.view.delegate.document(h.rows[h.current_match_row], ix)
    assert term in doc.toPlainText().casefold()
    # the highlight is a character background on the match
    cur = doc.find(term)
    assert not cur.isNull() and cur.charFormat().background().color().name() in (
        win.theme.match_bg, win.theme.current_match_bg)
    # step to older matches until pages had to be fetched
    first0 = h.window.loaded_range()[0]
    first = h.rows[h.current_match_row].key
    for _ in range(30):
        with qtbot.waitSignal(win.findMoved, timeout=WAIT):
            win.search_step(forward=False)
        idle(qtbot, h)
        if h.window.loaded_range()[0] < first0:
            break
    # the hit's page was read (an older page, or the page around it once the seq index is built)
    assert h.window.loaded_range()[0] < first0, "search continued into older pages"
    assert h.rows[h.current_match_row].key != first
    assert term in h.rows[h.current_match_row].search_text()
    # and back to a newer one
    older = h.rows[h.current_match_row].seq
    with qtbot.waitSignal(win.findMoved, timeout=WAIT):
        win.search_step(forward=True)
    idle(qtbot, h)
    # (rows are compared by seq: the newer hit may be on another page than the older one)
    assert h.current_match_row is None or h.rows[h.current_match_row].seq > older
    qtbot.keyClick(win.find_edit, Qt.Key.Key_Escape)
    assert not win.find_bar.isVisible() and h.find_term == ""


@pytest.mark.slow
def test_turn_navigation_keys(qtbot, make_window):
    win = make_window()
    h = open_and_wait(qtbot, win, fixture(BIG))
    view = win.view

    def current_turn():
        r = view.current_row()
        return r.event.data["turn"] if r is not None and r.kind == "turn-start" else None
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Up, Qt.KeyboardModifier.ControlModifier)
    last = current_turn()
    assert last == 2
    # turn 1 starts in rows not shown yet: they are exposed / fetched as needed
    qtbot.keyClick(view, Qt.Key.Key_BracketLeft)
    qtbot.waitUntil(lambda: current_turn() == 1, timeout=WAIT)
    qtbot.keyClick(view, Qt.Key.Key_BracketRight)
    assert current_turn() == 2
    qtbot.keyClick(view, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
    assert view.currentIndex().row() == len(h.rows) - 1


def test_copy_message_text(qtbot, make_window):
    win = make_window()
    h = open_and_wait(qtbot, win, fixture(RETRY))
    u = next(r for r in h.rows if r.kind == "user")
    win.select_row(h.row_index(u))
    win.view.setFocus()
    qtbot.keyClick(win.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    text = QApplication.clipboard().text()
    expected = "".join(b["text"] for b in u.event.data["content"] if b.get("type") == "text")
    assert text == expected
    win.view.copy_current("raw")
    assert json.loads(QApplication.clipboard().text())["seq"] == u.seq


# --------------------------------------------------------------------------- untrusted text

HOSTILE = "<script>alert('x')</script> and <b>not bold</b> &amp; <img src=x onerror=alert(1)>"


def hostile_session(tmp_path):
    d = tmp_path / "hostile"
    d.mkdir()
    rows = [
        {"type": "session", "version": 0, "id": "hostile-1", "createdAt": 1783352137161, "cwd": "/tmp/x",
         "delegationDepth": 0},
        {"type": "turn/start", "seq": 0, "time": 1783352137162, "data": {"turn": 1}},
        {"type": "user/message", "seq": 1, "time": 1783352137163, "surfaceOp": "append",
         "data": {"id": "m1", "role": "user", "content": [{"type": "text", "text": HOSTILE}],
                  "source": {"kind": "user"}}},
        {"type": "session/title", "seq": 2, "time": 1783352137164,
         "data": {"title": "<b>title</b><script>x()</script>", "messageSeqs": [1], "source": {"kind": "fallback"}}},
        {"type": "turn/end", "seq": 3, "time": 1783352137165, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    p = d / "session.jsonl"
    p.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")
    return p


def test_hostile_markup_is_shown_as_text(qtbot, make_window, tmp_path):
    win = make_window()
    h = open_and_wait(qtbot, win, hostile_session(tmp_path))
    u = next(r for r in h.rows if r.kind == "user")
    doc = win.view.delegate.document(u)
    plain = doc.toPlainText()
    assert "<script>alert('x')</script>" in plain and "<b>not bold</b>" in plain
    html = doc.toHtml()
    assert "<script>" not in html and "<b>not bold" not in html and "&lt;b&gt;not bold" in html
    # no run of the text was made bold by the markup
    from PySide6.QtGui import QFont, QTextCursor
    i = plain.index("not bold")
    cur = QTextCursor(doc)
    cur.setPosition(i + 1)
    assert cur.charFormat().fontWeight() != QFont.Weight.Bold
    win.select_row(h.row_index(u))
    assert "<script>" in win.inspector.raw.toPlainText()
    # every label that can hold transcript text is plain text
    for lab in win.findChildren(QLabel):
        if lab is win.inspector.links or lab.objectName() == "surfaceWhy":   # integers and fixed words only
            assert "<script" not in lab.text() and "<b>" not in lab.text()
            continue
        assert lab.textFormat() == Qt.TextFormat.PlainText, lab.objectName() or lab.text()[:40]
    t = next(r for r in h.rows if r.event is not None and r.event.type == "session/title")
    assert "<b>title</b><script>x()</script>" in win.view.delegate.document(t).toPlainText()
    # the window title shows the session title as plain text too (titles come from a worker)
    qtbot.waitUntil(lambda: bool(win.sessions.model.titles), timeout=WAIT)
    assert "<b>title</b><script>x()</script>" in win.sessions.model.label(win.sessions.model.sessions()[0])


# --------------------------------------------------------------------------- row window

@pytest.mark.slow
def test_row_window_slides_over_loaded_rows(qtbot, make_window, monkeypatch):
    """The view holds at most MAX_EXPOSED rows; older/newer loaded rows slide in and out."""
    import app.ui.history.window as hm
    monkeypatch.setattr(hm, "MAX_EXPOSED", 60)
    monkeypatch.setattr(hm, "EXPOSE_CHUNK", 15)
    import app.ui.history.shed as shed
    monkeypatch.setattr(shed, "KEEP_PAGES", 10 ** 6)   # every page stays loaded here (dropping: test_window_shed)
    win = make_window(page_size=2)
    h = open_and_wait(qtbot, win, fixture(BIG))
    view, sb = win.view, win.view.verticalScrollBar()
    newest = h.rows[-1].key
    for _ in range(200):
        if not h.has_more:
            break
        idle(qtbot, h, view)
        sb.setValue(0)
        qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
    idle(qtbot, h, view)
    assert not h.has_more and len(h.rows) <= 60 and h.newer_hidden > 0
    assert h.row_for_key(newest) is None, "the newest rows left the window"
    assert h.stats()["events"] == 2098, "but stay loaded"
    # navigation to a row outside the window re-centres it
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.goto_seq(2097)
    assert win.view.current_row().seq == 2097 and len(h.rows) <= 60
    # scrolling to the top again and back down slides newer rows back in
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.goto_seq(5)
    assert h.newer_hidden > 0
    before = h.newer_hidden
    sb.setValue(sb.maximum())
    qtbot.waitUntil(lambda: h.newer_hidden < before, timeout=WAIT)
    # turn navigation and search find rows beyond the window
    win.view.setFocus()
    seen = []
    for _ in range(5):
        qtbot.keyClick(win.view, Qt.Key.Key_Down, Qt.KeyboardModifier.ControlModifier)
        seen.append(win.view.current_row().kind)
        if win.view.current_row().key == newest:
            break
    assert win.view.current_row().key == newest and h.newer_hidden == 0
    assert "turn-start" in seen, "Ctrl+Down stops at the next turn first"
    win.open_search()
    with qtbot.waitSignal(win.findMoved, timeout=WAIT):
        win.find_edit.setText("bash")            # 10 hits in the whole log, seqs 266..1388
    seqs = [h.rows[h.current_match_row].seq]
    for _ in range(20):
        with qtbot.waitSignal(win.findMoved, timeout=WAIT):
            win.search_step(forward=False)
        s = h.rows[h.current_match_row].seq if h.current_match_row is not None else None
        if s is None or s == seqs[-1]:
            break
        seqs.append(s)
    assert seqs == sorted(seqs, reverse=True) and len(seqs) >= 3
    assert seqs[0] - seqs[-1] > 1000, "older matches were found outside the window"
    assert all("bash" in r.search_text() for r in [h.rows[h.current_match_row]])


def streaming_session(tmp_path):
    d = tmp_path / "streaming"
    d.mkdir()
    t = 1783352137161
    rows = [
        {"type": "session", "version": 0, "id": "stream-1", "createdAt": t, "cwd": "/tmp/x", "delegationDepth": 0},
        {"type": "turn/start", "seq": 0, "time": t, "data": {"turn": 1}},
        {"type": "user/message", "seq": 1, "time": t, "surfaceOp": "append",
         "data": {"id": "m1", "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}},
        {"type": "step/start", "seq": 2, "time": t, "data": {"turn": 1, "step": 1}},
    ]
    for i, w in enumerate(["Hel", "lo ", "wor"]):
        rows.append({"type": "assistant/chunk", "seq": 3 + i, "time": t, "data": {
            "turn": 1, "step": 1, "chunk": {"type": "text-delta", "index": 0, "text": w}}})
    p = d / "session.jsonl"
    p.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows), encoding="utf-8")
    return p


@pytest.mark.slow
def test_in_flight_chunks_collapse_into_one_streaming_row(qtbot, make_window, tmp_path):
    win = make_window()
    h = open_and_wait(qtbot, win, streaming_session(tmp_path))
    win.set_physical(True)                         # the stored rows: an attempt still streaming
    qtbot.waitUntil(lambda: h.live_state == "crashed", timeout=WAIT)   # (the follower's first verdict)
    st = rows_of(h, "streaming")
    assert len(st) == 1 and (st[0].first_seq, st[0].last_seq) == (3, 5)
    # no lock and never seen growing: its writer is gone (issue 35 item 17's rule), so the attempt says so
    assert "Hello wor" in st[0].content().plain_text() and ("writer gone · never finished", "warn") in st[0].content().pills
    assert not [r for r in h.rows if r.event is not None and r.event.type == "assistant/chunk" and r.kind != "streaming"]
    win.set_physical(False)                        # logical: the closure ends the step, the attempt is cut off
    assert not rows_of(h, "streaming")
    cut = rows_of(h, "attempt-open")
    assert len(cut) == 1 and "Hello wor" in cut[0].content().plain_text()
    assert [r.kind for r in h.rows[-2:]] == ["step-end", "turn-end"] and all(r.synthesized for r in h.rows[-2:])
