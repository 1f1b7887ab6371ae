"""A caseless search matches with full case folding (``str.casefold``): "STRASSE" finds "Straße",
"FILIGRANWERK" finds "ﬁligranwerk" (a ligature), the Turkish İ finds i; the match's span covers the
whole original characters.  Core (raw UTF-8 and ``\\uXXXX``-escaped logs, through the byte
prefilter), ``session-lens find`` and the window (results, the jump, the highlight), on a generated
log with the words planted at known seqs.  A regular expression keeps ``re`` semantics."""
from __future__ import annotations

import json

import pytest

from app.cli.main import main as cli
from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, FindStats, find, find_all
from app.log.source.sources import RawJsonlSource
from app.log.query.textview import event_fields, fold_case
from app.tools.plant import PlantingSynth
from app.tools.synth import write_jsonl

PLANTS = {"Hauptstraße": "user-nonascii", "ﬁligranwerk": "assistant", "İSTİKLAL": "reasoning"}


@pytest.fixture(scope="module")
def fold_logs(tmp_path_factory):
    """The planted log raw (UTF-8, as dsh writes it) and re-encoded by an ASCII-only writer."""
    d = tmp_path_factory.mktemp("fold")
    s = PlantingSynth(seed=7, at_turn=4, plants=PLANTS)
    raw = d / "raw.jsonl"
    write_jsonl(str(raw), s, turns=12)
    assert set(s.planted) == set(PLANTS)
    esc = d / "escaped.jsonl"
    with open(raw, "rb") as f, open(esc, "wb") as out:
        for line in f:
            out.write(json.dumps(json.loads(line), ensure_ascii=True).encode() + b"\n")
    assert esc.read_bytes().isascii() and "Hauptstraße".encode() in raw.read_bytes()
    return {"raw": str(raw), "escaped": str(esc), "planted": dict(s.planted)}


def _field_text(path, seq, kind):
    ev = LogReader.open(path).event_at(seq)
    return next(f.text for f in event_fields(ev) if f.kind == kind)


# (query, the planted word it finds, the characters of the stored text its match covers)
FOUND = [("STRASSE", "Hauptstraße", "straße"), ("hauptstrasse", "Hauptstraße", "Hauptstraße"),
         ("HAUPTSTRAẞE", "Hauptstraße", "Hauptstraße"), ("Straße", "Hauptstraße", "straße"),
         ("tstraſſe", "Hauptstraße", "tstraße"), ("SS", "Hauptstraße", "ß"),
         ("FILIGRANWERK", "ﬁligranwerk", "ﬁligranwerk"), ("iligran", "ﬁligranwerk", "ﬁligran"),
         ("istiklal", "İSTİKLAL", "İSTİKLAL")]


@pytest.mark.parametrize("form", ["raw", "escaped"])
@pytest.mark.parametrize("query,word,covered", FOUND)
def test_caseless_search_folds_fully_with_the_exact_seq_and_span(fold_logs, form, query, word, covered):
    seq, _turn, kind = fold_logs["planted"][word]
    r = LogReader(RawJsonlSource(fold_logs[form], block=16384))
    st = FindStats()
    hits = [h for h in find(r, FindOptions(query), stats=st) if h.seq == seq]
    assert st.complete
    assert [(h.seq, h.kind) for h in hits] == [(seq, kind)], (query, form)
    h = hits[0]
    text = _field_text(fold_logs[form], seq, kind)
    assert text[h.start:h.end] == covered                       # whole characters, mapped back
    assert h.snippet[h.span[0]:h.span[1]] == covered
    assert fold_case(query) in fold_case(covered)
    # the byte prefilter held: most windows skipped unparsed ("SS": too short for one, every row decoded)
    assert len(query) < 5 or st.segments > 5 and st.segments_skipped >= st.segments // 2, (st.segments, st.segments_skipped)


@pytest.mark.parametrize("form", ["raw", "escaped"])
def test_what_full_folding_does_not_change(fold_logs, form):
    path = fold_logs[form]
    seq = fold_logs["planted"]["Hauptstraße"][0]

    def seqs(opts):
        hits, st = find_all(LogReader.open(path), opts)
        assert st.complete
        return [h.seq for h in hits]
    assert seqs(FindOptions("STRASSE", case=True)) == []                # case-sensitive: exact text
    assert seqs(FindOptions("Hauptstraße", case=True)) == [seq]
    assert seqs(FindOptions("STRASSE", regex=True)) == []               # a regex: re.IGNORECASE (simple folding)
    assert seqs(FindOptions("STRAẞE", regex=True)) == [seq]             # (ẞ: the simple case pair of ß)
    assert seqs(FindOptions("strasse", word=True)) == []                # a part of a word is not a word
    assert seqs(FindOptions("HAUPTSTRASSE", word=True)) == [seq]
    assert seqs(FindOptions("nirgendstrasse")) == []                   # not there: nothing, whole log read


def test_cli_find_strasse_and_an_honest_no_match(fold_logs, capsys):
    seq = fold_logs["planted"]["Hauptstraße"][0]
    for form in ("raw", "escaped"):
        assert cli(["find", fold_logs[form], "STRASSE", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["count"] == 1 and [h["seq"] for h in out["hits"]] == [seq], form
        assert "straße" in out["hits"][0]["snippet"]
        assert cli(["find", fold_logs[form], "STRASSE", "--case", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["count"] == 0
    assert cli(["find", fold_logs["raw"], "nirgendstrasse"]) == 0
    assert capsys.readouterr().out.startswith("no match in the whole log")


# --------------------------------------------------------------------------- in the window


from test_ui_history import WAIT, idle, make_window, open_and_wait  # noqa: E402,F401 (fixtures)
from test_find_leftovers import _config_dir, _covers  # noqa: E402,F401 (the window's config dir, a row covering a seq)


def _painted(doc, colors):
    """The characters of ``doc`` painted with one of the ``colors`` (the search highlight)."""
    from PySide6.QtGui import QTextCursor
    cur = QTextCursor(doc)
    out = []
    for pos in range(doc.characterCount() - 1):
        cur.setPosition(pos)
        cur.setPosition(pos + 1, QTextCursor.MoveMode.KeepAnchor)
        if cur.charFormat().background().color().name() in colors:
            out.append(cur.selectedText())
        elif out and out[-1] != "|":
            out.append("|")
    return "".join(out).strip("|").split("|")


def test_window_finds_strasse_jumps_to_it_and_highlights_the_sharp_s_word(qtbot, make_window, fold_logs):  # noqa: F811
    path = fold_logs["raw"]
    seq = fold_logs["planted"]["Hauptstraße"][0]
    turns = sum(1 for e in LogReader.open(path).iter_events() if e.type == "turn/start")
    win = make_window(page_size=3)
    h = open_and_wait(qtbot, win, path)
    qtbot.waitUntil(lambda: h.index_state == "ready", timeout=WAIT * 2)
    fa = win.find_actions
    assert not fa.opt_case.isChecked()
    win.open_search()
    with qtbot.waitSignal(fa.searchFinished, timeout=WAIT * 2) as b:
        win.find_edit.setText("STRASSE")
    assert [x.seq for x in fa.results.hits] == [seq]
    assert b.args[0] == f"1 match in {turns:,} turns"
    hit = fa.results.hits[0]
    assert hit.snippet[hit.span[0]:hit.span[1]] == "straße"
    qtbot.waitUntil(lambda: _covers(win.view.current_row(), seq), timeout=WAIT)
    idle(qtbot, h)
    row = win.view.current_row()
    assert "strasse" in row.search_text()
    doc = win.view.delegate.document(row, win.view.currentIndex())
    colors = {win.theme.current_match_bg, win.theme.match_bg}
    assert _painted(doc, colors) == ["straße"]                   # the whole ß painted, nothing more
    # a word that is not there: an honest answer about the whole log
    with qtbot.waitSignal(fa.searchFinished, timeout=WAIT * 2) as b:
        win.find_edit.setText("nirgendstrasse")
    assert b.args[0] == f"no match in {turns:,} turns" and fa.results.rowCount() == 0
    win.close()


@pytest.mark.parametrize("case", [True, False])
@pytest.mark.parametrize("form", ["raw", "escaped"])
def test_a_rare_byte_that_turns_out_common_gives_way_to_a_plain_find(form, case):
    """The prefilter looks for a needle by memchr of its rarest byte (ü's continuation byte, the
    G of its escaped form), checking each place; past ANCHOR_HITS places in a window a plain
    find takes over: a row after many of them is still reported, by position."""
    from app.log.query.find import build_prefilter
    from app.log.query.find_prefilter import ANCHOR_HITS
    word = "Grüßeñandú"
    pre = build_prefilter(FindOptions(word, case=case))
    ascii_ = form == "escaped"

    def row(seq, text):
        return json.dumps({"seq": seq, "type": "user/message", "data": {"content": text}}, ensure_ascii=ascii_).encode()
    filler = b"\n".join(row(i, "Gü Grü Grüß " * (ANCHOR_HITS // 4)) for i in range(1, 4)) + b"\n"
    target = row(9, f"bitte {word} prüfen")
    window = filler + target + b"\n" + row(10, "Gü" * ANCHOR_HITS) + b"\n"
    got = pre.positions(window, len(window))
    assert any(len(filler) <= p < len(filler) + len(target) for p in got), (form, case, got[:5])
    assert all(p >= len(filler) for p in got)                  # (the filler holds no whole word)
