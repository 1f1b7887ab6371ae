"""The find bar never stalls the UI thread (issue 17, item 5), in the real window on a generated log.

* The loaded rows' match check for a new term runs in slices
  (:class:`~app.ui.history.match_pass.MatchPass`): no slice checks more than ``ROWS_PER_SLICE``
  rows (counted, not timed), the event loop runs between slices, the final matches are a plain
  core count over the same rows (:func:`~app.log.query.textview.fold_case` of each row's visible text),
  the first match (the newest at or above the current row) is selected and painted as the current
  match after its slice, and the status wording is the exact "N in loaded rows" one.
* A second character cancels the first term's pass: no slice of it runs after the new term.
* Typing a word in the find bar starts one pass (debounced), not one per keystroke.
* Opening the find bar and its growing count change only the history view's height: no row is
  laid out again (the count label used to widen the history column, re-wrapping every row).
"""
from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer

from app.log.query.textview import fold_case
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history import match_pass as mp_mod

from test_ui_history import WAIT, idle, make_window, open_and_wait  # noqa: F401 (fixtures)
from test_find_leftovers import _config_dir  # noqa: F401 (the window's config dir)
from test_find_fold import _painted


@pytest.fixture(scope="module")
def many_rows_log(tmp_path_factory):
    p = tmp_path_factory.mktemp("slices") / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=5), turns=60)
    return str(p)


def _visible_text(r) -> str:
    """What a row shows (badge, title, blocks and their labels), folded by the core."""
    c = r.content()
    return fold_case("\n".join([c.badge, c.title] + [b.text for b in c.blocks] + [b.label or "" for b in c.blocks]))


def _plain_matches(rows, term: str) -> list:
    t = fold_case(term)
    return [i for i, r in enumerate(rows) if t in _visible_text(r)]


def _window_with_rows(qtbot, make_window, path, n=120):  # noqa: F811
    win = make_window(page_size=400)
    h = open_and_wait(qtbot, win, path)
    # at the top the view asks for older rows (hidden loaded rows exposed a chunk at a time)
    qtbot.waitUntil(lambda: (win.view.scrollToTop(), len(h.rows) >= n)[1], timeout=WAIT)
    # then away from the top (no more older rows exposed) and every row's surface status in: the
    # rows stay as they are while a pass runs (a change of rows ends a pass with complete matches)
    win.view.scrollToBottom()
    qtbot.waitUntil(lambda: h.window.sindex is not None and not h.loading and win.view.settled(), timeout=WAIT)
    idle(qtbot, h, win.view)
    return win, h


def _record(mp):
    """(term, rows checked so far) at every slice's progress."""
    seen: list = []
    mp.progress.connect(lambda _n, checked: seen.append((mp.term, checked)))
    return seen


def test_match_check_runs_in_bounded_slices_and_selects_the_first_match(qtbot, make_window, many_rows_log):  # noqa: F811
    win, h = _window_with_rows(qtbot, make_window, many_rows_log)
    ctl = win.history_actions.controller
    rows = list(h.rows)
    term = "e"                                   # in most rows: every slice finds some
    expect = _plain_matches(rows, term)
    assert len(expect) > mp_mod.ROWS_PER_SLICE
    mp = h.match_pass
    seen = _record(mp)
    between: list = []
    cur = len(rows) - 30
    ctl.select_row(cur)

    def probe(_n, _checked):                         # a zero timer queued after the first slice runs
        if not between:                              # before the pass ends: it is not one long call
            between.append(None)
            QTimer.singleShot(0, lambda: between.append(mp.checked))
    mp.progress.connect(probe)
    with qtbot.waitSignal(mp.finished, timeout=WAIT) as done:
        ctl.apply_find(term.upper())
    # rows per slice: counted, never more than the budget; the check was split into many slices
    assert mp.slices and max(mp.slices) <= mp_mod.ROWS_PER_SLICE
    assert sum(mp.slices) == len(rows) and len(mp.slices) >= len(rows) // mp_mod.ROWS_PER_SLICE
    assert len(between) == 2 and 0 < between[1] < len(rows)
    assert [c for _t, c in seen] == sorted(c for _t, c in seen) and seen[-1][1] == len(rows)
    # the final count: a plain core count over the same rows (and what the one-go check gave)
    assert h.rows == rows and done.args == [len(expect)]
    assert h.matches == expect
    assert h.matches == [i for i, r in enumerate(rows) if fold_case(term) in r.search_text()]
    # the first match: the newest at or above the current row, selected and painted as current
    first = max(i for i in expect if i <= cur)
    assert h.current_match_row == first and win.view.currentIndex().row() == first
    doc = win.view.delegate.document(rows[first], win.view.currentIndex())
    painted = _painted(doc, {win.theme.current_match_bg})
    assert painted and all(fold_case(x) == term * len(x) for x in painted)     # ("ee": two adjacent spans)
    # the wording: exact, as the one-go check said it
    more = " (older pages not searched yet)" if h.has_more else ""
    assert win.history_actions.search_count.text() == f"{expect.index(first) + 1}/{len(expect)} in loaded rows{more}"


def test_a_second_character_cancels_the_first_pass(qtbot, make_window, many_rows_log):  # noqa: F811
    win, h = _window_with_rows(qtbot, make_window, many_rows_log)
    ctl = win.history_actions.controller
    mp = h.match_pass
    seen = _record(mp)
    for _attempt in range(3):
        seen.clear()
        with qtbot.waitSignal(mp.progress, timeout=WAIT):
            ctl.apply_find("e")
        first_done = mp.checked
        assert mp.running and 0 < first_done < len(h.rows)
        with qtbot.waitSignal(mp.finished, timeout=WAIT):
            ctl.apply_find("er")
        if any(t == "er" for t, _c in seen):
            break
        # no slice of "er": the window's rows changed under it (a late page or status on a loaded machine),
        # which ends a pass with the window's own complete matches, by design; then the scenario again
        assert h.find_term == "er" and h.matches == _plain_matches(h.rows, "er")
        idle(qtbot, h, win.view)
    switch = next(k for k, (t, _c) in enumerate(seen) if t == "er")
    # no slice of "e" after "er" started; "e" stopped where it was
    assert all(t == "e" for t, _c in seen[:switch]) and all(t == "er" for t, _c in seen[switch:])
    assert seen[switch - 1][1] == first_done < len(h.rows)
    assert sum(mp.slices) == len(h.rows)           # "er" checked every row once
    assert h.find_term == "er" and h.matches == _plain_matches(h.rows, "er")


def test_typing_in_the_find_bar_starts_one_pass_and_counts_exactly(qtbot, make_window, many_rows_log):  # noqa: F811
    win, h = _window_with_rows(qtbot, make_window, many_rows_log)
    mp = h.match_pass
    started: list = []
    start = mp.start
    mp.start = lambda window, term, row: (started.append(term), start(window, term, row))
    fa = win.find_actions
    win.open_search()
    with qtbot.waitSignal(fa.searchFinished, timeout=WAIT * 2):
        qtbot.keyClicks(win.find_edit, "error")
    qtbot.waitUntil(lambda: not mp.running, timeout=WAIT)
    assert started == ["error"]                      # debounced: one pass, not one per keystroke
    assert max(mp.slices) <= mp_mod.ROWS_PER_SLICE
    assert h.matches == _plain_matches(h.rows, "error")


def test_opening_the_find_bar_and_its_count_lay_out_no_row(qtbot, make_window, many_rows_log):  # noqa: F811
    win, h = _window_with_rows(qtbot, make_window, many_rows_log)
    view, d = win.view, win.view.delegate
    width, height = view.viewport().width(), view.viewport().height()
    asked = {"n": 0}
    size_hint = d.sizeHint

    def counted(option, index):
        asked["n"] += 1
        return size_hint(option, index)
    d.sizeHint = counted
    win.open_search()
    fa = win.find_actions
    fa.results_dock.show()
    # the longest count wording the bar shows while a search runs
    win.history_actions.search_count.setText("12,345/100,000 matches so far, 100% of the log searched…")
    qtbot.waitUntil(lambda: view.viewport().height() < height and not win.find_bar.isHidden(), timeout=WAIT)
    view.executeDelayedItemsLayout()                 # a layout QListView scheduled runs now
    assert view.viewport().width() == width          # the column did not widen: no row re-wrapped
    # no layout of every row (it asks each of them: >= 120 here; the odd single row may be asked)
    assert len(h.rows) >= 120 and asked["n"] <= 4
    # the view still scrolls over every row (the scroll range follows the new height)
    view.scrollToBottom()
    last = h.index(len(h.rows) - 1, 0)
    assert view.visualRect(last).bottom() <= view.viewport().height() + 1


def test_rows_changing_during_a_pass_end_it_with_the_windows_complete_matches(qtbot, make_window, many_rows_log):  # noqa: F811
    win, h = _window_with_rows(qtbot, make_window, many_rows_log)
    ctl = win.history_actions.controller
    mp = h.match_pass
    with qtbot.waitSignal(mp.progress, timeout=WAIT):
        ctl.apply_find("e")
    assert mp.running
    with qtbot.waitSignal(mp.finished, timeout=WAIT) as done:
        win.act_attempts.trigger()                   # a face toggle rebuilds the rows mid-pass
    idle(qtbot, h, win.view)
    assert not mp.running and h.find_term == "e"
    assert done.args[0] > 0
    assert h.matches == _plain_matches(h.rows, "e")
    # the count says the final figure, not "so far"
    assert "so far" not in win.history_actions.search_count.text()
    assert " in loaded rows" in win.history_actions.search_count.text()
