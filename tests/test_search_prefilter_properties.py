"""The byte prefilter of the whole-log search never misses a row the exact matcher finds.

Hypothesis: random words over letters with awkward case folds (ß/ẞ/"ss", ligatures ﬁ/ﬂ/ﬀ/ﬃ/ﬆ,
ŉ/"ʼn", ǰ and ΐ (which fold to a letter and combining marks), σ/ς/Σ, the Turkish ı/İ, the Kelvin
sign, the long s, Greek, Cyrillic, CJK, mixed ASCII), planted in a row in any variant the search
folds together (full case folding, ``str.casefold``, for a caseless literal: "STRASSE" is stored
as "Straße"; the case variants ``re.IGNORECASE`` accepts for a regular expression), sometimes
with a character before or after it whose folding holds the word's first or last letters (a
match may start or end inside a character: "s" in "Maße"), stored raw (UTF-8, as dsh writes), ``\\uXXXX``-escaped (an ASCII-only
writer), or doubly escaped (text inside a JSON string inside JSON: tool arguments), or in an arguments object
(a match may then span the ``key: value`` text the field adds), between other
rows: whenever the exact matcher matches the decoded text, the prefilter reports the row (by its
positions in the window, and by ``hit`` on the row alone).
"""
from __future__ import annotations

import json

from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from app.log.query.find import FindOptions, build_prefilter, compile_matcher
from app.log.query.find_needles import case_variants
from app.log.query.textview import fold_case

ALPHABET = (list("abeiknsxzABIKS019 -.") + list("ßẞσςΣıİſKΩωÅåΠπДдЀѐñÑéÉÜü日本語한ÿŸµΜ")
            + list("ftlhjFTLJﬁﬂﬀﬃﬆﬅŉʼǰΐΰιυẚʾẞ") + ["\u030c", "\u0308", "\u0301", "\u0307"]
            + ['"', "\\", "\n", "/"])
# the characters a planted variant is made of: the alphabet and its upper, lower and title cases
CHARS = sorted({c for a in ALPHABET for c in a + a.upper() + a.lower() + a.title()} | set("ſKﬅẞİıǰΐﬄ"))
FILLER = ("the quick brown fox jumps over the lazy dog; Straße, Σίσυφος, İstanbul, 日本 — "
          "ascii \\u001b[0m escapes and \\u00e9 \\u00C9 ones too")

words = st.text(alphabet=ALPHABET, min_size=1, max_size=7)


def _row(text: str, form: str) -> bytes:
    """A stored row whose decoded field holds ``text``: raw, escaped, or inside tool arguments."""
    if form in ("raw", "escaped"):
        ev = {"seq": 5, "type": "user/message", "data": {"content": text}}
        return json.dumps(ev, ensure_ascii=form == "escaped").encode()
    ascii_ = form == "args-escaped"
    args = {"q": text} if form == "args-object" else json.dumps({"q": text}, ensure_ascii=ascii_)
    ev = {"seq": 5, "type": "tool/call", "data": {"name": "t", "callId": "c", "arguments": args}}
    return json.dumps(ev, ensure_ascii=ascii_).encode()


PLAIN = "plain ASCII words, no escapes, nothing else"      # (a window whose first escape is the word's own)


def _filler(form: str) -> bytes:
    return _row(PLAIN, "raw") if form == "plain" else _row(FILLER, form)


def _fold_variant(draw, word: str) -> str:
    """A text that folds (``fold_case``) to the word's folding: each stretch of 1–3 folded
    characters stored as any character folding to it ("ss": ß, ẞ, "sS", "ſs"…)."""
    n = fold_case(word)
    out, p = [], 0
    while p < len(n):
        options = [(q, c) for q in (p + 1, p + 2, p + 3) if q <= len(n) for c in CHARS if fold_case(c) == n[p:q]]
        q, c = draw(st.sampled_from(options)) if options else (p + 1, n[p])
        out.append(c)
        p = q
    return "".join(out)


@st.composite
def planted(draw):
    word = draw(words)
    opts = draw(st.sampled_from(["caseless", "case", "word", "regex"]))
    # the stored text: some variant of the word (or of a part of it), with text around it
    if opts == "regex":
        variant = "".join(draw(st.sampled_from(case_variants(ch))) for ch in word)
    elif opts == "case":
        variant = word
    else:
        variant = _fold_variant(draw, word)
    if draw(st.booleans()):
        cut = draw(st.integers(0, len(variant)))
        variant = variant[cut:] + variant[:cut]            # sometimes a near miss
    pre = draw(st.text(alphabet=ALPHABET, max_size=5))
    post = draw(st.text(alphabet=ALPHABET, max_size=5))
    form = draw(st.sampled_from(["raw", "escaped", "args-raw", "args-escaped", "args-object"]))
    # the rows around it: written by the same or another writer (a window may mix them), few or
    # many (more rows holding a caseless needle's anchor byte than are checked one by one)
    around = (draw(st.sampled_from(["raw", "escaped", "args-raw", "args-escaped", "plain"])), draw(st.integers(1, 40)))
    return word, pre + variant + post, form, opts, around


def _options(word: str, how: str) -> FindOptions:
    if how == "regex":
        import re
        return FindOptions(re.escape(word), regex=True)
    return FindOptions(word, case=how == "case", word=how == "word")


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(planted())
# a match across the text the field adds between stored strings: "q: 0 " holds " 0" (CI, round 4)
@example((" 0", "0 ", "args-raw", "case", ("raw", 1)))
@example(("Q: 0", "0", "args-object", "caseless", ("raw", 1)))
@example(("t\nq", "x", "args-escaped", "regex", ("escaped", 3)))
# full case folding: ß for "ss", a match starting inside a character's folding, ligatures, ŉ, ǰ, ΐ
@example(("STRASSE", "Die Straße", "raw", "caseless", ("escaped", 2)))
@example(("strasse", "xẞtrasse", "escaped", "caseless", ("raw", 2)))
@example(("sse", "Maße", "args-escaped", "caseless", ("raw", 33)))
@example(("file", "ﬁle", "args-raw", "caseless", ("escaped", 1)))
@example(("ʼNx", "ŉx", "escaped", "caseless", ("raw", 1)))
@example(("J\u030cz", "ǰz", "raw", "caseless", ("raw", 40)))
@example(("\u03b9\u0308\u0301k", "ΐk", "args-object", "caseless", ("raw", 1)))
@example(("istanbul", "İSTANBUL", "escaped", "word", ("raw", 1)))
# an escaped needle starts before the window's first escape of a non-ASCII character (missed before)
@example(("eñandú", "Bitte eñandú", "escaped", "caseless", ("plain", 1)))
@example(("Grüßeñandú", "x Grüßeñandú", "escaped", "case", ("plain", 2)))
def test_prefilter_reports_every_row_the_matcher_finds(case):
    word, text, form, how, (around, n_around) = case
    opts = _options(word, how)
    matcher = compile_matcher(opts)
    field_text = text if form in ("raw", "escaped") else f"t\nq: {text}"
    if matcher.search(field_text) is None:
        event("no match")
        return
    pre = build_prefilter(opts)
    if pre is None:                                  # (every row decoded: nothing to miss)
        event("no prefilter")
        return
    event(f"checked: {form}")
    row = _row(text, form)
    assert json.loads(row)                           # (a well-formed row)
    assert pre.hit(row), (word, text, form, how, pre)
    before, after = (_filler(around) + b"\n") * n_around, b"\n" + _filler(around) + b"\n"
    window = before + row + after
    start, end = len(before), len(before) + len(row)
    assert any(start <= p < end for p in pre.positions(window, len(window))), (word, text, form, how, pre)
    # the window may be only the first part of the read (the rest: the next window's)
    tail = window + b'{"seq": 9, "type": "user/message", "data": {"content": "' + row[:20]
    assert any(start <= p < end for p in pre.positions(tail, len(window))), (word, text, form, how, pre)


@settings(max_examples=200, deadline=None)
@given(words, st.sampled_from(["raw", "escaped"]))
def test_every_case_variant_of_a_word_is_reported(word, form):
    """The word in upper case, lower case, title case and its full case folding: always reported."""
    opts = FindOptions(word)
    pre = build_prefilter(opts)
    matcher = compile_matcher(opts)
    for variant in {word, word.upper(), word.lower(), word.title(), word.swapcase(), word.casefold()}:
        if matcher.search(variant) is None or pre is None:
            continue
        assert pre.hit(_row(variant, form)), (word, variant, form)
