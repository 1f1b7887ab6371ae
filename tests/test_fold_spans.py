"""Match spans of a caseless search over characters whose case folding expands (ß → ss, ŉ → ʼn,
ﬁ → fi): the core's :func:`app.log.query.textview.fold_spans`, and the window's highlight that uses it."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.log.query.textview import fold_case, fold_spans


def test_strasse_matches_strasse_with_sharp_s_both_ways_and_covers_the_whole_word():
    text = "Die straße ist lang; DIE STRASSE AUCH; die STRAẞE"
    spans = fold_spans(text, "STRASSE")
    assert [text[a:b] for a, b in spans] == ["straße", "STRASSE", "STRAẞE"]
    spans = fold_spans(text, "straße")
    assert [text[a:b] for a, b in spans] == ["straße", "STRASSE", "STRAẞE"]


def test_a_match_inside_an_expansion_covers_the_whole_character():
    assert fold_spans("Maße", "s") == [(2, 3)]                    # one s of ß's "ss": the ß
    assert fold_spans("Maße", "ss") == [(2, 3)]
    assert fold_spans("ﬁle", "FI") == [(0, 1)]                     # the ligature ﬁ
    assert fold_spans("xŉy", "ʼN") == [(1, 2)]


def test_utf16_offsets_count_astral_characters_twice():
    text = "😀 straße 😀 STRASSE"
    got = fold_spans(text, "strasse", utf16=True)
    enc = text.encode("utf-16-le")
    assert [enc[2 * a:2 * b].decode("utf-16-le") for a, b in got] == ["straße", "STRASSE"]


def test_no_match_and_limit():
    assert fold_spans("abc", "x") == [] and fold_spans("", "x") == [] and fold_spans("abc", "") == []
    assert len(fold_spans("ß" * 50, "ß", limit=7)) == 7


ALPHA = list("aAsSßẞtTfFﬁﬂﬀﬃiIİıŉnN ʼ😀σςΣǰjJ\u030cΐι\u0308\u0301ẚʾkK")


def test_fold_case_is_casefold_with_the_turkish_i_folded_to_i():
    assert fold_case("STRAẞE Straße ǰ ΐ ﬁ") == "STRAẞE Straße ǰ ΐ ﬁ".casefold()
    assert fold_case("İSTANBUL ıI") == "istanbul ii"                 # (casefold: "i̇stanbul ıi")
    assert fold_case("KELVIN K ſ") == "kelvin k s"


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=ALPHA, max_size=30), st.text(alphabet=ALPHA, min_size=1, max_size=4))
def test_every_span_holds_the_term_casefolded_and_every_match_has_a_span(text, term):
    needle = fold_case(term)
    spans = fold_spans(text, term, limit=1000)
    for (_a, b), (c, _d) in zip(spans, spans[1:]):
        assert b <= c                                              # ordered, not overlapping
    for a, b in spans:
        assert needle in fold_case(text[a:b])                      # whole characters holding the match
        # and no smaller span of whole characters would hold it
        assert needle not in fold_case(text[a + 1:b]) and needle not in fold_case(text[a:b - 1])
    # the same spans in UTF-16 code units (Qt positions; 😀 counts twice)
    enc = text.encode("utf-16-le")
    got16 = fold_spans(text, term, limit=1000, utf16=True)
    assert [enc[2 * a:2 * b].decode("utf-16-le") for a, b in got16] == [text[a:b] for a, b in spans]
    # every match of the folded text lies in a span
    folded = fold_case(text)
    owner = [i for i, ch in enumerate(text) for _ in fold_case(ch)]
    assert len(owner) == len(folded)
    at = folded.find(needle)
    while at >= 0:
        assert any(a <= owner[at] < b for a, b in spans), (text, term, at)
        at = folded.find(needle, at + 1)


def test_window_highlight_covers_the_sharp_s_word(qtbot):
    """The history delegate's highlight (the row matched by its casefolded text) paints exactly the
    matching characters, a ß and a character outside the BMP before it included."""
    from PySide6.QtGui import QColor, QFont, QTextCursor, QTextDocument
    from app.ui.history.delegate import DocBuilder
    from app.ui.theme import LIGHT
    b = DocBuilder(LIGHT, QFont())
    doc = QTextDocument()
    text = "😀 Die straße, DIE STRASSE."
    doc.setPlainText(text)
    b.highlight(doc, "STRASSE".casefold(), False)
    want = QColor(LIGHT.match_bg)
    painted = []
    cur = QTextCursor(doc)
    for pos in range(doc.characterCount() - 1):
        cur.setPosition(pos)
        cur.setPosition(pos + 1, QTextCursor.MoveMode.KeepAnchor)
        if cur.charFormat().background().color() == want:
            painted.append(cur.selectedText())
    assert "".join(painted) == "straßeSTRASSE"
