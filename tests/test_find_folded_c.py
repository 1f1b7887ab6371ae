"""The whole-log find's byte search in C (``rowscan_c.find_folded``, issue 29) returns exactly its definition
(``find_prefilter.find_folded_py``: the window translated through the table, then searched left to right, not
overlapping; the first place of each row with ``rows``), for any bytes, any needle and anchor, any range
(inside, past the buffer, empty), the fold table, the identity table and a many-to-one table, and through
bytes and bytearray; and a search finds the same with and without it."""
from __future__ import annotations

import random

import pytest
from scanners_util import C_SCANNER

from app.log.index.reader import LogReader
from app.log.query import find_prefilter
from app.log.query.find import FindOptions, find
from app.log.query.find_prefilter import FOLD, SAME, anchor_of, find_folded_py
from app.tools.plant import PlantingSynth
from app.tools.synth import write_jsonl

pytestmark = pytest.mark.skipif(C_SCANNER is None or not hasattr(C_SCANNER, "find_folded"),
                                reason="set-up did not build the C row scanner here")

# every letter and digit onto "a" (many bytes onto one: the byte loop instead of memchr)
CRUDE = bytes(0x61 if chr(c).isalnum() and c < 0x80 else c for c in range(256))
ALPHABET = b"aAbBsStT\n\"\\\xc3\x9f\xc5\xbf\xe2\x80\x94 xyz"


def _case(rnd: random.Random) -> tuple[bytes, bytes, int, int, bool, bytes]:
    data = bytes(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 400)))
    table = rnd.choice([FOLD, SAME, CRUDE])
    n = bytes(rnd.choice(ALPHABET) for _ in range(rnd.randint(1, 5))).translate(table).replace(b"\n", b"a")
    start = rnd.randint(-3, len(data) + 3)
    end = rnd.randint(start - 2, len(data) + 10)
    return data, n, start, end, rnd.random() < 0.5, table


@pytest.mark.parametrize("seed", range(40))
def test_c_search_equals_its_definition(seed):
    rnd = random.Random(seed)
    for _ in range(250):
        data, n, start, end, rows, table = _case(rnd)
        want = find_folded_py(data, start, end, n, table, rows)
        for k in {0, len(n) - 1, anchor_of(n), rnd.randrange(len(n))}:
            for buf in (data, bytearray(data)):
                got = C_SCANNER.find_folded(buf, start, end, n, table, k, rows)
                assert got == want, (data, n, start, end, rows, k)


def test_repeats_and_overlaps():
    for data, n in [(b"aaaaaaa", b"aa"), (b"abababab", b"abab"), (b"ssSSss\nSS", b"ss"), (b"\n\n\n", b"a")]:
        for rows in (False, True):
            for table in (FOLD, SAME):
                want = find_folded_py(data, 0, len(data), n, table, rows)
                assert C_SCANNER.find_folded(data, 0, len(data), n, table, 0, rows) == want
    assert C_SCANNER.find_folded(b"aaaaaaa", 0, 7, b"aa", SAME, 1, False) == [0, 2, 4]
    assert C_SCANNER.find_folded(b"aXa\naa", 0, 6, b"a", SAME, 0, True) == [0, 4]
    with pytest.raises(ValueError):
        C_SCANNER.find_folded(b"abc", 0, 3, b"", SAME, 0, False)
    with pytest.raises(ValueError):
        C_SCANNER.find_folded(b"abc", 0, 3, b"ab", b"short", 0, False)


def test_a_search_finds_the_same_without_the_c_search(tmp_path, monkeypatch):
    s = PlantingSynth(seed=8, at_turn=2, plants={"Grüßeñandú": "user-nonascii", "zebraquokka": "tool-output-line-700"})
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), s, turns=12)
    qs = [FindOptions("zebraquokka"), FindOptions("ZEBRAquokka"), FindOptions("the"), FindOptions("grüsseñandú"),
          FindOptions("Grüßeñandú", case=True), FindOptions("step by step"), FindOptions('"path"'),
          FindOptions("the", case=True), FindOptions("nowhere-word")]
    with_c = [[(h.seq, h.kind, h.matches) for h in find(LogReader.open(str(p)), q)] for q in qs]
    monkeypatch.setattr(find_prefilter, "_C_FOLDED", None)
    without = [[(h.seq, h.kind, h.matches) for h in find(LogReader.open(str(p)), q)] for q in qs]
    assert with_c == without
    assert with_c[0] and with_c[3] and with_c[2]
