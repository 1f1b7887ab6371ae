"""Find anything in a long session, in the real window (pytest-qt, offscreen): whole-log search
with a results pane, go to (seq, turn, start, end) on logs of many pages, the outline, view
filters, next error, the problems panel.  Generated logs with planted words and shared fixtures."""
from __future__ import annotations


import pytest
from PySide6.QtCore import QPoint, Qt

from app.log.query.analysis import inspect
from app.log.index.reader import LogReader
from app.tools.plant import PLANTS, PlantingSynth
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.go_actions import parse_goto
from app.ui.find_models import FindResultsModel, OutlineModel, ProblemsModel, search_wording
from app.ui.history.window import row_category, row_is_error

from conftest import fixture
from test_ui_history import WAIT, idle, make_window, open_and_wait  # noqa: F401 (fixtures)

BIG = "apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl"
TURNS4 = "apps/web/tests/snapshots/permission-policy-context/session.jsonl"   # 4 turns
CORDIS = "apps/web/tests/snapshots/cordis-tool-round/session.jsonl"


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    d = tmp_path_factory.mktemp("planted-ui")
    s = PlantingSynth(seed=11, at_turn=3)
    path = d / "session.jsonl"
    write_jsonl(str(path), s, turns=9)
    assert set(s.planted) == set(PLANTS)
    return str(path), dict(s.planted)


@pytest.fixture(scope="module")
def long_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("long-ui") / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=5), turns=40)
    return str(path)


def _covers(r, seq):
    if r is None or r.seq is None:
        return False
    lo = r.first_seq if r.first_seq is not None else r.seq
    return lo <= seq <= max(r.seq, r.last_seq if r.last_seq is not None else r.seq)


def _index_ready(qtbot, h):
    qtbot.waitUntil(lambda: h.index_state == "ready", timeout=WAIT * 2)


def _search(qtbot, win, text):
    fa = win.find_actions
    win.open_search()
    with qtbot.waitSignal(fa.searchFinished, timeout=WAIT * 2) as blocker:
        win.find_edit.setText(text)
    return blocker.args[0]


@pytest.mark.slow
def test_planted_words_found_by_the_window_with_exact_seq_and_the_jump_lands(qtbot, make_window, planted):  # noqa: F811 (the shared fixture)
    path, where = planted
    win = make_window(page_size=3)
    h = open_and_wait(qtbot, win, path)
    _index_ready(qtbot, h)
    fa = win.find_actions
    total_turns = sum(1 for e in LogReader.open(path).iter_events() if e.type == "turn/start")
    for word, (seq, turn, kind) in where.items():
        status = _search(qtbot, win, word)
        hits = fa.results.hits
        assert any(x.seq == seq and x.kind == kind for x in hits), (word, seq, [(x.seq, x.kind) for x in hits])
        n = len(hits)
        assert status == f"{n:,} match{'es' if n != 1 else ''} in {total_turns:,} turns"
        assert fa.results_dock.isVisible() and fa.result_view.model().rowCount() == n
        i = next(i for i, x in enumerate(hits) if x.seq == seq)
        with qtbot.waitSignal(win.findMoved, timeout=WAIT):
            fa.goto_hit(i)
        idle(qtbot, h)
        row = win.view.current_row()
        assert _covers(row, seq), (word, seq, row and (row.kind, row.first_seq, row.seq))
        assert h.current_match_row == win.view.currentIndex().row()
        if word == "zebraquokka":
            # line 700 of a 900-line output: the row expanded in place, the highlight on the word,
            # the word on screen
            assert row.expanded
            ix = win.view.currentIndex()
            doc = win.view.delegate.document(row, ix)
            from PySide6.QtGui import QTextCursor  # noqa: F401
            cur = doc.find(word)
            assert not cur.isNull()
            assert cur.charFormat().background().color().name() == win.theme.current_match_bg
            def word_y():
                ix = win.view.currentIndex()
                return doc.documentLayout().blockBoundingRect(cur.block()).top() + win.view.visualRect(ix).top()
            qtbot.waitUntil(lambda: 0 <= word_y() <= win.view.viewport().height(), timeout=5000)
            # Space collapses it again, and expands it
            win.view.setFocus()
            qtbot.keyClick(win.view, Qt.Key.Key_Space)
            assert not row.expanded and row.clipped
            qtbot.keyClick(win.view, Qt.Key.Key_Space)
            assert row.expanded and "zebraquokka" in row.search_text()
        # the results pane row says seq, turn, kind and the snippet holds the word
        m = fa.results
        assert m.index(i, 0).data() == str(seq) and m.index(i, 1).data() == str(turn)
        assert m.index(i, 2).data().startswith(kind)
        m.index(i, 3).data()                                      # (asks for its snippet: made in a worker)
        qtbot.waitUntil(lambda: word.casefold() in m.index(i, 3).data().casefold(), timeout=5000)
    status = _search(qtbot, win, "okapiwombatnowhere")
    assert status == f"no match in {total_turns:,} turns" and fa.results.rowCount() == 0
    assert "not searched" not in win.history_actions.search_count.text()
    assert win.history_actions.search_count.text() == status


@pytest.mark.slow
def test_search_is_cancellable_and_a_new_query_replaces_the_old(qtbot, make_window, long_log):  # noqa: F811 (the shared fixture)
    win = make_window()
    open_and_wait(qtbot, win, long_log)
    fa = win.find_actions
    win.open_search()
    win.find_edit.setText("zzzz-never")
    fa.run("zzzz-never")
    assert fa.running
    with qtbot.waitSignal(fa.searchFinished, timeout=WAIT) as b:
        fa.cancel()
    assert b.args[0].startswith("cancelled") and not fa.running
    # a bad regular expression says so instead of searching
    fa.opt_regex.setChecked(True)
    fa.run("(unclosed")
    assert "regular expression" in fa.status and not fa.running
    fa.opt_regex.setChecked(False)


@pytest.mark.slow
def test_outline_of_a_fixture_lists_every_turn_with_its_prompt(qtbot, make_window, qtmodeltester):  # noqa: F811 (the shared fixture)
    win = make_window(page_size=2)
    ga = win.go_actions
    with qtbot.waitSignal(ga.outlineReady, timeout=WAIT * 2):
        open_and_wait(qtbot, win, fixture(TURNS4))
    # independently: every turn/start and the first line of the first user message after it
    want = []
    for ev in LogReader.open(str(fixture(TURNS4))).iter_events():
        if ev.type == "turn/start":
            want.append([ev.data["turn"], ev.seq, None])
        elif ev.type == "user/message" and want and want[-1][2] is None:
            c = ev.data.get("content")
            text = c if isinstance(c, str) else "".join(b.get("text", "") for b in c if isinstance(b, dict))
            want[-1][2] = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    m = ga.outline_model
    assert m.rowCount() == len(want) > 3
    for i, (turn, seq, prompt) in enumerate(want):
        label = m.index(i, 0).data()
        assert label.startswith(f"Turn {turn}: ") and prompt[:100] in label
        assert m.index(i, 0).data(Qt.ItemDataRole.UserRole + 1) == seq
    qtmodeltester.check(m)
    # selecting an entry jumps there (the first turn: older than the tail page)
    ga.outline_dock.show()
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        ga.outline_view.clicked.emit(m.index(0, 0))
    assert _covers(win.view.current_row(), want[0][1])


@pytest.mark.slow
def test_go_to_seq_turn_start_and_end_in_a_log_of_many_pages(qtbot, make_window, long_log):  # noqa: F811 (the shared fixture)
    win = make_window(page_size=3)
    h = open_and_wait(qtbot, win, long_log)
    _index_ready(qtbot, h)
    r = LogReader.open(long_log)
    evs = list(r.iter_events())
    last = evs[-1].seq
    for seq in (evs[len(evs) // 3].seq, evs[40].seq, evs[len(evs) * 2 // 3].seq):
        with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
            win.goto_seq(seq)
        idle(qtbot, h)
        assert _covers(win.view.current_row(), seq) or h.event_for_seq(seq) is not None
        assert len(h.pages) <= 2, "the page around the seq was read directly, not every page before it"
    # Ctrl+Home: the true start; Ctrl+End: the true end
    win.view.setFocus()
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        qtbot.keyClick(win.view, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    idle(qtbot, h)
    assert win.view.currentIndex().row() == 0 and h.rows[0].seq == 0 and not h.has_more
    qtbot.keyClick(win.view, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    idle(qtbot, h)
    assert win.view.current_row().seq == last or _covers(win.view.current_row(), last)
    assert h.window.attached
    # scrolling down from a jump reads newer pages until the log's end joins again
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.goto_seq(evs[len(evs) // 2].seq)
    idle(qtbot, h)
    assert h.window.has_newer
    for _ in range(400):
        if h.window.attached and not h.newer_hidden:
            break
        h.request_newer()
        idle(qtbot, h)
    assert h.window.attached and h.window.pages[-1].page.tail
    seqs = [x.seq for x in h.window.all_rows if x.seq is not None]
    assert seqs == sorted(seqs), "pages joined in order, no duplicate"
    # Ctrl+G: seq or turn
    ga = win.go_actions
    qtbot.waitUntil(lambda: ga.outline is not None, timeout=WAIT * 2)
    t5 = next(t for t in ga.outline.turns if t.turn == 5)
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        assert ga.goto_text("turn 5")
    idle(qtbot, h)
    assert _covers(win.view.current_row(), t5.first_seq)
    assert parse_goto("t12") == ("turn", 12) and parse_goto(" 1234 ") == ("seq", 1234)
    assert parse_goto("seq #7") == ("seq", 7) and parse_goto("abc") is None


@pytest.mark.slow
def test_filters_and_next_error_over_the_whole_log(qtbot, make_window, long_log):  # noqa: F811 (the shared fixture)
    win = make_window(page_size=6)
    h = open_and_wait(qtbot, win, long_log)
    ga = win.go_actions
    qtbot.waitUntil(lambda: ga.outline is not None, timeout=WAIT * 2)
    _index_ready(qtbot, h)
    before = {row_category(r) for r in h.window.all_rows}
    assert {"user", "assistant", "tools", "turns"} <= before
    ga.filter_actions["tools"].setChecked(False)
    assert h.window.all_rows and all(row_category(r) != "tools" for r in h.window.all_rows)
    ga.filter_actions["tools"].setChecked(True)
    assert {row_category(r) for r in h.window.all_rows} == before
    ga.act_errors_only.setChecked(True)
    assert all(row_is_error(r) for r in h.window.all_rows)
    ga.act_errors_only.setChecked(False)
    # F8 from the start: the first error of the whole log, then the next ones, in order
    errs = ga.error_seqs
    assert len(errs) >= 3
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        ga.ctl.goto_start()
    idle(qtbot, h)
    got = []
    for _ in range(3):
        with qtbot.waitSignal(win.seqSelected, timeout=WAIT) as b:
            qtbot.keyClick(win.view, Qt.Key.Key_F8)
        idle(qtbot, h)
        seq = b.args[0]
        got.append(seq)
        # the row showing it is selected, or (a hidden failed attempt) the inspector shows it
        assert _covers(win.view.current_row(), seq) or h.hidden_attempt_of(seq) is not None
    assert got == errs[:3]
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT) as b:
        qtbot.keyClick(win.view, Qt.Key.Key_F8, Qt.KeyboardModifier.ShiftModifier)
    assert b.args[0] == errs[1]


@pytest.mark.slow
def test_every_problem_of_cordis_tool_round_is_in_the_problems_panel(qtbot, make_window, qtmodeltester):  # noqa: F811 (the shared fixture)
    path = str(fixture(CORDIS))
    win = make_window()
    ga = win.go_actions
    with qtbot.waitSignal(ga.outlineReady, timeout=WAIT * 2):
        open_and_wait(qtbot, win, path)
    m = ga.problems_model
    tips = [m.index(i, 0).data(Qt.ItemDataRole.ToolTipRole) for i in range(m.rowCount())]
    for p in inspect(LogReader.open(path))["problems"]:
        assert p in tips, p
    # every seq gap, found independently, is a row with its seq and line
    prev = None
    gaps = []
    for ev in LogReader.open(path).iter_events():
        if prev is not None and ev.seq != prev + 1:
            gaps.append((ev.seq, ev.line))
        prev = ev.seq
    assert len(gaps) >= 2
    rows = {(m.index(i, 3).data(), m.index(i, 1).data()) for i in range(m.rowCount()) if m.index(i, 0).data() == "seq-gap"}
    assert rows == {(str(s), str(ln)) for s, ln in gaps}
    # the banner counts them and a click opens the panel; a row jumps to its seq
    assert f"{m.rowCount()} problem" in win.banner.text()
    assert not ga.problems_dock.isVisible()
    qtbot.mouseClick(win.banner, Qt.MouseButton.LeftButton)
    assert ga.problems_dock.isVisible()
    i = next(i for i in range(m.rowCount()) if m.index(i, 0).data() == "seq-gap")
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        ga.goto_problem(i)
    assert _covers(win.view.current_row(), gaps[0][0])
    qtmodeltester.check(m)


def test_results_model_and_wording(qtmodeltester):
    from app.log.query.find import Hit
    m = FindResultsModel()
    qtmodeltester.check(m)
    m.append([Hit(seq=s, turn=s // 10, kind="tool-output", snippet=f"x\x1b[31m{s}\ny", span=(0, 1), start=0, end=1,
                  matches=1) for s in (5, 17, 40)])
    qtmodeltester.check(m)
    assert m.index(1, 3).data() == "x\u241b[31m17 y", "control characters never reach the view (a picture: ␛)"
    assert m.row_for_seq(17, True) == 2 and m.row_for_seq(17, False) == 0 and m.row_for_seq(40, True) is None
    assert search_wording(12, True, False, 3261) == "12 matches in 3,261 turns"
    assert search_wording(1, True, False, 1) == "1 match in 1 turn"
    assert search_wording(0, True, False, None) == "no match in the whole log"
    assert search_wording(0, False, True, None, 50, 200) == "cancelled: no match in the first 25% of the log"
    qtmodeltester.check(OutlineModel())
    qtmodeltester.check(ProblemsModel())


@pytest.mark.slow
def test_clipped_output_expands_and_collapses_by_click(qtbot, make_window, long_log):  # noqa: F811 (the shared fixture)
    win = make_window()
    h = open_and_wait(qtbot, win, long_log)
    view = win.view
    i = next(i for i in range(len(h.rows) - 1, -1, -1) if h.rows[i].clipped)
    row = h.rows[i]
    ix = h.index(i, 0)
    view.scrollTo(ix, view.ScrollHint.PositionAtTop)
    hidden = row.content().blocks
    assert any("more line" in b.text for b in hidden)
    rect = view.visualRect(ix)
    h0 = rect.height()
    y = min(rect.bottom() - 6, view.viewport().height() - 2)
    if y < rect.bottom() - 40:                        # the note is below the viewport: use the key
        view.setCurrentIndex(ix)
        qtbot.keyClick(view, Qt.Key.Key_Space)
    else:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.bottomLeft() + QPoint(40, -6))
    assert row.expanded and not any("more line" in b.text for b in row.content().blocks)
    view.doItemsLayout()
    assert view.visualRect(h.index(i, 0)).height() > h0, "the row grew in place"
    view.setCurrentIndex(ix)
    qtbot.keyClick(view, Qt.Key.Key_Space)
    assert not row.expanded and row.clipped


@pytest.mark.slow
def test_reasoning_collapses_by_default_with_a_count_and_expands(qtbot, make_window, long_log):  # noqa: F811 (the shared fixture)
    win = make_window()
    h = open_and_wait(qtbot, win, long_log)

    def reasoning_of(r):
        msg = r.event.data.get("message") if r.event is not None and isinstance(r.event.data, dict) else None
        for b in (msg or {}).get("content") or []:
            if isinstance(b, dict) and b.get("type") == "reasoning":
                return b["text"]
        return None
    cands = [(i, r, reasoning_of(r)) for i, r in enumerate(h.rows) if r.kind == "assistant"]
    i, row, full = next((i, r, t) for i, r, t in cands if t and len(t.strip("\n").split("\n")) > 2)
    lines = full.strip("\n").split("\n")
    n = len(lines) - 1
    (rb,) = [b for b in row.content().blocks if b.style == "reasoning"]
    assert rb.text.startswith(lines[0][:100]) and lines[-1] not in rb.text
    assert f"… {n} more lines of reasoning hidden" in rb.text and row.clipped
    win.view.setCurrentIndex(h.index(i, 0))
    win.view.setFocus()
    qtbot.keyClick(win.view, Qt.Key.Key_Space)
    (rb,) = [b for b in row.content().blocks if b.style == "reasoning"]
    assert row.expanded and lines[-1] in rb.text and "hidden" not in rb.text
