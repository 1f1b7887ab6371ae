"""The history view's own match check and highlight fold case as the whole-log search does
(:func:`~app.log.query.textview.fold_case`): "istiklal" finds "İSTİKLAL" (the Turkish dotted capital I,
which plain ``str.casefold`` turns into "i" plus a combining dot), "strasse" finds "Straße".  On a
generated log with the words planted at known seqs: the find bar's count is the core's count, the
row the view marks as a match is the hit's row, and the painted span is the core's span."""
from __future__ import annotations

import pytest

from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, find_all
from app.log.query.textview import event_fields, fold_case, fold_spans
from app.tools.plant import PlantingSynth
from app.tools.synth import write_jsonl

from test_ui_history import WAIT, idle, make_window, open_and_wait  # noqa: F401 (fixtures)
from test_find_leftovers import _config_dir, _covers  # noqa: F401 (the window's config dir, a row covering a seq)
from test_find_fold import _painted

PLANTS = {"İSTİKLAL": "user-nonascii", "Straße": "assistant"}


@pytest.fixture(scope="module")
def planted_log(tmp_path_factory):
    d = tmp_path_factory.mktemp("foldview")
    s = PlantingSynth(seed=11, at_turn=5, plants=PLANTS)
    p = d / "session.jsonl"
    write_jsonl(str(p), s, turns=14)
    assert set(s.planted) == set(PLANTS)
    return {"path": str(p), "planted": dict(s.planted)}


def test_plain_casefold_misses_what_the_core_finds():
    """Why the view must not use ``str.casefold``: the cases this test file covers."""
    assert "istiklal" not in "İSTİKLAL".casefold()
    assert "istiklal" in fold_case("İSTİKLAL") and "ıstıklal" not in "istiklal".casefold()
    assert fold_case("ıstıklal") == "istiklal"
    assert fold_spans("Bitte İSTİKLAL prüfen", "istiklal") == [(6, 14)]


# (query, planted word, the characters the match covers in the stored text)
CASES = [("istiklal", "İSTİKLAL", "İSTİKLAL"), ("ıstıklal", "İSTİKLAL", "İSTİKLAL"),
         ("strasse", "Straße", "Straße"), ("STRASSE", "Straße", "Straße")]


@pytest.mark.parametrize("query,word,covered", CASES)
def test_view_match_and_highlight_equal_the_core_hits(qtbot, make_window, planted_log, query, word, covered):  # noqa: F811
    path = planted_log["path"]
    seq, _turn, kind = planted_log["planted"][word]
    core, st = find_all(LogReader.open(path), FindOptions(query))
    assert st.complete and [(h.seq, h.kind) for h in core] == [(seq, kind)]
    ev = LogReader.open(path).event_at(seq)
    text = next(f.text for f in event_fields(ev) if f.kind == kind)
    assert text[core[0].start:core[0].end] == covered

    win = make_window(page_size=3)
    h = open_and_wait(qtbot, win, path)
    qtbot.waitUntil(lambda: h.index_state == "ready", timeout=WAIT * 2)
    fa = win.find_actions
    win.open_search()
    with qtbot.waitSignal(fa.searchFinished, timeout=WAIT * 2) as b:
        win.find_edit.setText(query)
    # the find bar's count and results: the core's
    assert [(x.seq, x.kind) for x in fa.results.hits] == [(h_.seq, h_.kind) for h_ in core]
    assert b.args[0].startswith("1 match in ")
    qtbot.waitUntil(lambda: _covers(win.view.current_row(), seq), timeout=WAIT)
    idle(qtbot, h)
    row = win.view.current_row()
    # the view's own match check (the find bar's term, folded as the core folds) holds the row
    assert h.find_term == fold_case(query)
    assert h.find_term in row.search_text()
    i = win.view.currentIndex().row()
    assert i in h.window.matches
    # the highlight: exactly the characters the core's hit covers, painted as the current match
    doc = win.view.delegate.document(row, win.view.currentIndex())
    assert _painted(doc, {win.theme.current_match_bg}) == [covered]
    win.close()
