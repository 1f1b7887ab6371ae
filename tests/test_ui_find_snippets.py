"""The Find results pane makes the snippets of the hits it shows (issue 29): a common word's hits come from the
window's find child without their snippets (the C's text hits: no row decoded per hit), and each row's snippet is
made in a worker when the row is first shown, from its row read again the exact way.  What the pane shows, once
made, is what the exact way's hits say, row for row; the rows not shown are never made; another search drops the
snippets still coming for the old one."""
from __future__ import annotations

import pytest

from app.log.query import find_fast, find_match
from app.log.query.find import FindOptions, find_all
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.find_models import PENDING, one_line

from test_ui_find import _search
from test_ui_history import WAIT, make_window, open_and_wait  # noqa: F401 (fixtures)


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


def _exact(path: str, word: str) -> list:
    from app.store.faces import open_reader
    old = find_fast.ENABLED, find_match.FAST
    find_fast.ENABLED = find_match.FAST = False
    r = open_reader(path)
    try:
        return find_all(r, FindOptions(word))[0]
    finally:
        find_fast.ENABLED, find_match.FAST = old
        r.close()


def test_the_pane_makes_the_snippets_it_shows_and_they_are_the_exact_ones(qtbot, make_window, tmp_path):  # noqa: F811
    path = str(tmp_path / "session.jsonl")
    write_jsonl(path, SessionSynth(seed=8, version=4), target_bytes=2_500_000)
    exact = _exact(path, "the")
    assert len(exact) > 400
    win = make_window()
    open_and_wait(qtbot, win, path)
    _search(qtbot, win, "the")
    m = win.find_actions.results
    assert m.rowCount() == len(exact)
    hits = m.hits
    pending = [i for i in range(len(hits)) if hits[i].row is not None]
    assert len(pending) > len(exact) // 2                  # (the child sent most without their snippets)
    # the hits themselves (all but the snippets) are the exact way's
    assert [(h.seq, h.turn, h.kind, h.start, h.end, h.matches, h.tool, h.call, h.block) for h in hits] == \
        [(h.seq, h.turn, h.kind, h.start, h.end, h.matches, h.tool, h.call, h.block) for h in exact]
    shown = list(range(0, 40)) + list(range(len(exact) - 30, len(exact)))
    asked = [m.index(i, 3).data() for i in shown]
    assert PENDING in asked
    qtbot.waitUntil(lambda: all(m.index(i, 3).data() != PENDING for i in shown), timeout=WAIT)
    for i in shown:
        h = exact[i]
        assert m.index(i, 3).data() == one_line(h.snippet) + (f"   (+{h.matches - 1} more here)" if h.matches > 1 else "")
        assert m.index(i, 3).data(0x03) == one_line(h.snippet, 400)          # (the tool tip)
        assert (hits[i].snippet, hits[i].span) == (h.snippet, h.span)
    # rows never shown stay unmade
    middle = len(exact) // 2
    assert hits[middle].row is not None or middle in shown


def test_another_search_drops_the_snippets_still_coming_for_the_old_one(qtbot, make_window, tmp_path):  # noqa: F811
    path = str(tmp_path / "session.jsonl")
    write_jsonl(path, SessionSynth(seed=9, version=4), target_bytes=600_000)
    win = make_window()
    open_and_wait(qtbot, win, path)
    _search(qtbot, win, "the")
    m = win.find_actions.results
    old = m.items
    made = [(0, "stale", (0, 1))]
    _search(qtbot, win, "and")
    assert m.items is not old
    before = m.index(0, 3).data()
    m.set_snippets(old, made)                              # (the old search's worker answering late)
    assert m.index(0, 3).data() == before and "stale" not in (m.hits[0].snippet or "")
