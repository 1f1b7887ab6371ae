"""The window part of home search (app/ui/home_search.py, app/ui/home_search_model.py), on a
generated home with planted words (app.tools.plant.make_home): a hit opens the right session at
the right row with the match highlighted, results are grouped by session with counts, the
view model passes qtmodeltester, and "index is N sessions behind" shows after a session grows."""
from __future__ import annotations

import json

import pytest

from app.store.fulltext import FullTextIndex
from app.tools.plant import make_home
from app.ui.home_search_model import MARKS_ROLE, SNIPPET_ROLE
from tests.fixtures_util import FIXTURES

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "home"
    # planted synth sessions of 12 turns: the planted words sit in turn 2, pages of 20 messages away
    # from the tail, so opening a hit has to load older pages
    m = make_home(str(root), str(FIXTURES), copies=1, planted=3, synth_turns=12)
    m["root"] = str(root)
    return m


def _open_home(qtbot, win, home):
    with qtbot.waitSignal(win.storeLoaded, timeout=WAIT):
        win.open_store(home["root"], remember=False)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        pass


def _search(qtbot, win, text):
    hs = win.home_search
    with qtbot.waitSignal(hs.resultsReady, timeout=WAIT):
        hs.search(text)
    return hs


def _build(qtbot, win):
    hs = win.home_search
    with qtbot.waitSignal(hs.indexUpdated, timeout=WAIT):
        hs.update_index()
    return hs


def test_ctrl_shift_f_is_home_search_and_fork_moved(win):
    from PySide6.QtGui import QKeySequence
    assert win.home_search.action.shortcut() == QKeySequence("Ctrl+Shift+F")
    assert win.fork_action.action.shortcut() != QKeySequence("Ctrl+Shift+F")
    keys = [a.shortcut().toString() for a in win.findChildren(type(win.home_search.action)) if not a.shortcut().isEmpty()]
    assert keys.count("Ctrl+Shift+F") == 1


@pytest.mark.slow
def test_hit_opens_the_right_session_at_the_right_row(qtbot, win, home):
    _open_home(qtbot, win, home)
    _build(qtbot, win)
    for word in ("plant1reason", "plant2output"):
        sid, seq, kind = home["planted"][word]
        hs = _search(qtbot, win, word)
        assert hs.panel.stack.currentIndex() == 1          # results page shown over the session list
        hits = [hs.model.hit_at(hs.model.index(r, 0, hs.model.index(0, 0)))
                for r in range(hs.model.rowCount(hs.model.index(0, 0)))]
        assert [(h.session, h.seq, h.kind) for h in hits] == [(sid, seq, kind)]
        ix = hs.model.first_hit_index()
        assert word in ix.data()          # "seq N · kind  …snippet…"
        text, marks = hs.model.data(ix, SNIPPET_ROLE), hs.model.data(ix, MARKS_ROLE)
        assert [text[a:b].lower() for a, b in marks] == [word]
        with qtbot.waitSignal(hs.hitOpened, timeout=WAIT) as sig:
            hs.panel.results.setCurrentIndex(ix)
            hs.activate(ix)
        assert sig.args == [seq]
        assert win.session.id == sid
        # older pages were loaded to reach it, or the page around it was read directly (a jump)
        assert win.history.stats()["pages"] > 1 or win.history.window.has_newer
        row = win.view.current_row()
        assert row is not None and row.first_seq is not None
        assert row.first_seq <= seq <= max(row.seq or 0, row.last_seq or 0)
        # the match is highlighted: the in-session search holds the word and this row is the current match
        h = win.history
        assert h.find_term == word
        r = win.view.currentIndex().row()
        # line 700 of a 900-line output, folded reasoning: the row is expanded in place to show it
        assert r in h.matches and h.current_match_row == r
        assert word in h.row_at(r).search_text()
        if kind == "tool-output":
            assert h.row_at(r).expanded
        assert not win.history_actions.find_bar.isHidden()


@pytest.mark.slow
def test_hit_in_the_open_session_selects_its_row(qtbot, win, home):
    _open_home(qtbot, win, home)
    _build(qtbot, win)
    sid, seq, _ = home["planted"]["plant0text"]
    hs = _search(qtbot, win, "plant0text")
    with qtbot.waitSignal(hs.hitOpened, timeout=WAIT):
        hs.activate(hs.model.first_hit_index())
    other_sid, other_seq, _ = home["planted"]["plant0output"]
    assert other_sid == sid
    hs = _search(qtbot, win, "plant0output")
    with qtbot.waitSignal(hs.hitOpened, timeout=WAIT) as sig:
        hs.activate(hs.model.first_hit_index())
    assert sig.args == [other_seq] and win.session.id == sid
    row = win.view.current_row()
    assert row.first_seq <= other_seq <= max(row.seq or 0, row.last_seq or 0)


@pytest.mark.slow
def test_results_grouped_by_session_with_counts(qtbot, win, home, qtmodeltester):
    _open_home(qtbot, win, home)
    _build(qtbot, win)
    hs = _search(qtbot, win, "plant*")
    m = hs.model
    qtmodeltester.check(m, force_py=True)
    planted_sessions = {sid for sid, _, _ in home["planted"].values()}
    groups = [m.group_at(m.index(g, 0)) for g in range(m.rowCount())]
    assert {g.session for g in groups} == planted_sessions
    # each session's count is the number of its hits, and every hit sits under its own session
    with FullTextIndex(home["root"]) as ix:
        res = ix.search("plant*", limit=500)
    want = {}
    for h in res.hits:
        want[h.session] = want.get(h.session, 0) + 1
    for g in range(m.rowCount()):
        gi = m.index(g, 0)
        grp = m.group_at(gi)
        assert grp.count == want[grp.session]
        kids = [m.hit_at(m.index(r, 0, gi)) for r in range(m.rowCount(gi))]
        assert kids and all(k.session == grp.session for k in kids)
        assert len(kids) == grp.count                     # under the result limit: all shown
        assert [k.seq for k in kids] == sorted(k.seq for k in kids)
        label = gi.data()
        assert f"{grp.count} matches" in label
    assert f"{res.total} matches in {len(planted_sessions)} sessions" in hs.panel.summary.text()
    # a query with no match, and a bad one, say so in the panel
    _search(qtbot, win, "nosuchwordanywhere")
    assert m.rowCount() == 0 and "no match" in hs.panel.summary.text()
    with qtbot.waitSignal(hs.queryFailed, timeout=WAIT):
        hs.search("after:yesterday plant0")
    assert "date" in hs.panel.summary.text()


def test_snippets_are_plain_one_line_text(qtbot, qtmodeltester):
    """Log text reaches the results list as plain text: control characters become spaces
    (same length, the match ranges stay right), and no role returns rich text."""
    from app.store.fulltext import SearchHit, SearchResult, SessionGroup
    from app.ui.home_search_model import MARKS_ROLE, SNIPPET_ROLE, HomeSearchModel
    text = "a\x1b[31m <b>bold</b>\nwordx\ttail"
    a = text.index("wordx")
    hit = SearchHit(session="s1", session_key="/k", path="/k", seq=7, turn=1, kind="tool-output", tool="bash",
                    time=None, snippet="", marks=[(a, a + 5)], text=text)
    m = HomeSearchModel()
    m.set_result("wordx", SearchResult(hits=[hit], sessions=[SessionGroup(key="/k", session="s1", path="/k",
                                                                           title="t\nx", created=0, count=3)],
                                       total=3))
    qtmodeltester.check(m, force_py=True)
    ix = m.first_hit_index()
    s = m.data(ix, SNIPPET_ROLE)
    assert len(s) == len(text) and "\n" not in s and "\x1b" not in s and "\t" not in s
    a, b = m.data(ix, MARKS_ROLE)[0]
    assert s[a:b] == "wordx"
    assert "\n" not in m.index(0, 0).data() and "(1 shown)" in m.index(0, 0).data()


@pytest.mark.slow
def test_behind_shown_after_a_session_grows(qtbot, win, home):
    _open_home(qtbot, win, home)
    hs = _build(qtbot, win)
    assert "index is" not in hs.panel.status.text()
    assert f"{len(home['sessions'])} sessions indexed" in hs.panel.status.text()
    sid, _, _ = home["planted"]["plant1text"]
    path = home["sessions"][sid]
    with open(path, "rb") as f:
        last = json.loads(f.read().rstrip(b"\n").rsplit(b"\n", 1)[1])
    row = {"type": "user/message", "seq": last["seq"] + 1, "time": 1_800_000_000_000,
           "data": {"content": [{"type": "text", "text": "grownwordzz"}], "source": {"kind": "user"},
                    "role": "user", "id": "m-grown"}, "surfaceOp": "append"}
    with open(path, "ab") as f:
        f.write(json.dumps(row).encode() + b"\n")
    with qtbot.waitSignal(hs.behindChanged, timeout=WAIT) as sig:
        hs.poll_behind()
    assert sig.args == [1]
    assert "index is 1 session behind" in hs.panel.status.text()
    assert hs.panel.update_btn.isVisible()
    # Update: the grown session is indexed, the note goes away, the new word is found
    with qtbot.waitSignal(hs.indexUpdated, timeout=WAIT) as sig:
        hs.panel.update_btn.click()
    assert sig.args[0].grown == 1 and sig.args[0].indexed == 0
    assert "behind" not in hs.panel.status.text() and not hs.panel.update_btn.isVisible()
    hs = _search(qtbot, win, "grownwordzz")
    assert [(h.session, h.seq) for h in hs.model.result.hits] == [(sid, last["seq"] + 1)]


@pytest.mark.slow
def test_first_query_builds_the_index_in_the_background(qtbot, win, home):
    """Typing in the box before any index exists starts the build (progress shown), and the
    query runs again when it is done."""
    _open_home(qtbot, win, home)
    hs = win.home_search
    seen = []
    hs.panel.status.setText("")
    sid, seq, _ = home["planted"]["plant2text"]
    with qtbot.waitSignal(hs.indexUpdated, timeout=WAIT):
        hs.search("plant2text")
        seen.append(hs.panel.status.text())
        assert hs.panel.tasks.isVisible() and hs.panel.tasks.panes[hs.index_job].cancel.isVisible()
    assert seen[0].startswith("indexing")
    qtbot.waitUntil(lambda: hs.model.result is not None and hs.model.result.total == 1, timeout=WAIT)
    assert [(h.session, h.seq) for h in hs.model.result.hits] == [(sid, seq)]


def test_snippet_is_cut_so_the_match_shows():
    from app.ui.home_search import fit_first_mark
    text = "x" * 300 + " needle tail"
    a = text.index("needle")
    t, marks = fit_first_mark(text, [(a, a + 6)], len, 80)     # one unit per character
    (x, y), = marks
    assert t.startswith("…") and t[x:y] == "needle" and y <= 80
    assert fit_first_mark("short needle", [(6, 12)], len, 80) == ("short needle", [(6, 12)])


@pytest.mark.slow
def test_activating_a_session_row_opens_its_first_hit(qtbot, win, home):
    _open_home(qtbot, win, home)
    _build(qtbot, win)
    sid, seq, _ = home["planted"]["plant1output"]
    hs = _search(qtbot, win, "plant1output OR plant1text")
    assert hs.model.rowCount() == 1
    g = hs.model.index(0, 0)
    first = hs.model.hit_at(hs.model.index(0, 0, g))
    with qtbot.waitSignal(hs.hitOpened, timeout=WAIT) as sig:
        hs.activate(g)
    assert sig.args == [first.seq] and win.session.id == sid
