"""Whole-log find on a long log (issue 29): a caseless field's first match and count without its folded copy.

* an ASCII needle: the C ``rowscan_c.fold_count`` (one pass over the text, ASCII capitals lowered), except in a
  text holding a character some of whose case forms hold ASCII (ß, ſ, K, ﬁ, İ…), which goes through the folded
  text as before;
* a needle no character folds into and which folds to itself ("—", "→"): the text's own ``find``/``count``;
* a gate of many needles (a caseless piece with a quote): its ASCII needles found in a pass each, the other rows
  checked for the rest only when they hold a byte those are looked for by.

Each answer is held to its definition (the match iterator over the folded text, ``Prefilter.hit`` row by row) on
random and hostile texts."""
from __future__ import annotations

import random
import sys

import pytest

from app.log.query import find as find_mod
from app.log.query import find_match
from app.log.query.find import FindOptions, build_prefilter
from app.log.query.find_match import FC_Q, FoldMatcher, fold_count_py, inert
from app.log.query.find_rows import row_starts
from app.log.query.textview import fold_case, fold_finditer

fold_count_c = find_match._FOLD_COUNT
PIECES = ["the", "The", "THE", "tHe", "—", "é", "É", "ß", "ẞ", "ſ", "K", "k", "ﬁ", "ﬅ", "İ", "ı", "i", "I", "ŉ", "ǰ",
          "ẖ", "ẚ", " ", "\n", "\x00", "\ud800", "😀", "Σ", "ς", "ÿ", "Ÿ", "µ", "x", "ss", "st", "→", "✓", "tests",
          '"', "\\", "ab", "AB", "é—", "a\u0307"]
NEEDLES = ["the", "t", "ss", "st", "k", "i", "tests", '"tests', "ab", "a b", "x", "ffi", "hé", "—", "→✓", "é—",
           "ʼn", "\u0307", "σ"]


def _texts(seed: int, n: int = 400) -> list[str]:
    rnd = random.Random(seed)
    out = ["", "the", "THE THE", "thethe", "ßtHe", "ſt", "Kk", "ﬁ ﬁ", "ÿthe", "\ud800the", "😀THE😀"]
    for _ in range(n):
        out.append("".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 30))))
    for _ in range(n // 4):       # (long: the C's 16-character steps; Latin-1 and ASCII ones among them)
        pool = rnd.choice([PIECES, ["the", "The", "tHe", "t", "h", "e", " ", "x", "ÿ", "µ"], ["the", "THE", "he", "t"]])
        out.append("".join(rnd.choice(pool) for _ in range(rnd.randint(20, 400))))
    return out


@pytest.mark.skipif(fold_count_c is None, reason="the row scanner in C is not built")
@pytest.mark.parametrize("seed", range(3))
def test_the_c_count_is_its_definition(seed):
    """``rowscan_c.fold_count`` == ``fold_count_py`` (the match iterator over the folded text), on texts of every
    string width (ASCII, Latin-1, UCS-2, astral, lone surrogates) with every character that folds into ASCII."""
    for text in _texts(seed):
        for needle in ("the", "t", "ss", "st", "k", "i", "tests", '"tests', "a b", "x", "ffi"):
            assert fold_count_c(text, needle) == fold_count_py(text, needle), (text, needle)
    with pytest.raises(ValueError):
        fold_count_c("abc", "The")
    with pytest.raises(ValueError):
        fold_count_c("abc", "—")
    with pytest.raises(ValueError):
        fold_count_c("abc", "")


def test_the_c_count_answers_where_it_may_and_only_there():
    """It answers for a text with no character of FC_Q (whatever its width), and leaves one holding any to Python."""
    if fold_count_c is None:
        pytest.skip("the row scanner in C is not built")
    assert fold_count_c("Some text — with The words the THE" * 50, "the") == (17, 150)
    assert fold_count_c("ÿ" * 1000 + "THE", "the") == (1000, 1)
    assert fold_count_c("\U0001F600THE", "the") == (1, 1)
    for q in sorted(FC_Q):
        assert fold_count_c("the " + q, "the") is None, hex(ord(q))
    # every character some of whose case forms hold ASCII is in FC_Q (the C's list)
    made = [chr(c) for c in range(0x80, sys.maxunicode + 1) if not 0xD800 <= c < 0xE000
            and (any(x < "\x80" for x in fold_case(chr(c))) or any(x < "\x80" for x in chr(c).lower())
                 or len(chr(c).lower()) != 1)]
    assert set(made) == FC_Q


@pytest.mark.parametrize("seed", range(3))
def test_first_and_count_equal_the_folded_match_iterator(seed, monkeypatch):
    """Each needle (ASCII through the C, an inert one by ``str.find``, the rest through the folded text), whole
    words or not, gives the first match and count of the match iterator over the folded text."""
    for text in _texts(seed, 250):
        for needle in NEEDLES:
            for word in (False, True):
                every = list(fold_finditer(text, fold_case(needle), word))
                for fast in (True, False):
                    monkeypatch.setattr(find_match, "FAST", fast)
                    fm, n = FoldMatcher(needle, word).first_and_count(text)
                    assert (fm.span() if fm else None, n) == (every[0] if every else None, len(every)), \
                        (text, needle, word, fast)


def test_inert_needles():
    """Inert: no character of the needle folds, nor is any other character folded into it; nothing above U+1F000
    folds (the table's bound)."""
    assert inert("—") and inert("→✓") and inert("😀")
    for n in ("the", "é", "σ", "ʼ", "\u0307", "i", "ι", "—a"):
        assert not inert(n), n
    assert all(chr(c).casefold() == chr(c) for c in range(0x1F000, sys.maxunicode + 1))
    m = FoldMatcher("—")
    assert m._inert and m._c is None
    assert FoldMatcher("the")._c is fold_count_c and not FoldMatcher("the", word=True)._c


WORDS = ['"tests', '\\"TESTS', '\\\\\\"tests', "tests", "ſtests", '"teſts', '"te\\u017fts', '"te\\\\u017fts',
         '"TEﬅS', '"teﬆs', '"step', '"tests"', '\\"TEſTS\\"', '\\"Step', '"ſtep', "—", "é", "\\u00e9", "\\U017F", "by", '"test', "x"]


@pytest.mark.parametrize("query", ['"tests', 'by "step', '"Tests" ok'])
@pytest.mark.parametrize("seed", range(3))
def test_a_gate_of_many_needles_keeps_the_rows_its_hit_keeps(query, seed):
    """``find.gated`` for a gate of many needles keeps exactly the rows ``Prefilter.hit`` keeps, on rows of ASCII,
    non-ASCII, escaped and doubly escaped forms, ``\\U``, ligatures and long s; rows ending at the window's end."""
    rnd = random.Random(seed)
    data = b"\n".join(" ".join(rnd.choice(WORDS) for _ in range(rnd.randint(0, 9))).encode()
                      for _ in range(600))
    pre = build_prefilter(FindOptions(query))
    assert pre is not None and pre.also
    for g in pre.also:
        if len(g.needles) + len(g.esc) <= find_mod.GATE_PASSES:
            continue
        for lim in (len(data), len(data) - 7):
            starts = row_starts(data, list(range(0, lim, 5)), lim)
            want = []
            for x in starts:
                e = data.find(b"\n", x, lim)
                if g.hit(data[x:lim if e < 0 else e]):
                    want.append(x)
            assert find_mod.gated(data, lim, starts, g) == want
            assert 0 < len(want) < len(starts)


def test_the_c_bracket_count_is_its_definition():
    """``rowscan_c.brackets`` (one pass, 16 bytes a step) == the two counts, at every length around the step and on
    random bytes, a bytearray and a memoryview."""
    from app.log.index.fastindex import load_rowscan_c
    from app.log.query.find_light import brackets_py
    c = getattr(load_rowscan_c(), "brackets", None)
    if c is None:
        pytest.skip("the row scanner in C is not built")
    rnd = random.Random(5)
    for n in list(range(40)) + [255, 256, 257, 4096, 100_003]:
        raw = bytes(rnd.choice(b'[{]}"\\ax\x00\xff') for _ in range(n))
        assert c(raw) == brackets_py(raw) == c(bytearray(raw)) == c(memoryview(raw)), n


@pytest.mark.parametrize("seed", range(4))
def test_the_c_ascii_search_is_find_folded(seed):
    """``rowscan_c.find_ascii`` (16 places a step) == ``find_folded_py`` for ASCII needles through FOLD and the
    identity, rows or not, any bounds; None for a table that maps other bytes onto a needle's first or last byte."""
    from app.log.index.fastindex import load_rowscan_c
    from app.log.query.find_prefilter import FOLD, SAME, find_folded_py
    c = getattr(load_rowscan_c(), "find_ascii", None)
    if c is None:
        pytest.skip("the row scanner in C is not built")
    rnd = random.Random(seed)
    alphabet = b'tTeEsShH"\\\n {}x@`\x00\xc3\xa9\x9f'
    for _ in range(60):
        data = bytes(rnd.choice(alphabet) for _ in range(rnd.randint(0, 3000)))
        for needle in (b"the", b"te", b'"tests', b'\\"t', b"tt", b"@x", b"``", b"x{", b"tes" * 7):
            for table in (FOLD, SAME):
                for rows in (False, True):
                    for start, end in ((0, len(data)), (3, len(data) - 5), (-4, len(data) + 9), (50, 20)):
                        got = c(bytearray(data), start, end, needle, table, rows)
                        assert got == find_folded_py(data, start, end, needle, table, rows), (needle, rows, start)
    odd = bytearray(SAME)
    odd[ord("Q")] = ord("t")
    assert c(b"Qhe the", 0, 7, b"the", bytes(odd), False) is None
    assert c(b"the", 0, 3, b"t\xc3", FOLD, False) is None
    with pytest.raises(ValueError):
        c(b"the", 0, 3, b"t", FOLD, False)


def test_the_changed_characters_by_blocks_are_those_a_call_each_finds():
    """``changed_chars`` (a block of 256 passed over when the mapping leaves it alone) == one call a character."""
    from itertools import compress
    from operator import ne
    from app.log.query.find_match import changed_chars
    for fn in (str.casefold, str.lower, str.upper):
        chars = list(map(chr, range(0x1F000)))
        folds = list(map(fn, chars))
        assert changed_chars(fn) == list(compress(zip(chars, folds), map(ne, chars, folds)))
    assert changed_chars(str.casefold, 0x100) == [(chr(c), chr(c).casefold()) for c in range(0x100)
                                                  if chr(c).casefold() != chr(c)]
