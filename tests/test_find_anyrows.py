"""rowscan_c.rows_any (the find5 section) is its definition, find_anyrows.rows_any_py; Prefilter.rows_of finds the
rows the prefilter's passes find (positions with rows) and keeps those hit keeps."""
from __future__ import annotations

import random

import pytest
from hypothesis import example, given, settings, strategies as st

from app.log.query.find_anyrows import ROWS_ANY, AnyRows, probe_offsets, rows_any_py
from app.log.query.find_match import FindOptions
from app.log.query.find_needles import build_prefilter
from app.log.query.find_prefilter import FOLD, SAME, Prefilter
from app.log.query.find_rows import row_starts

needs_c = pytest.mark.skipif(ROWS_ANY is None, reason="rowscan_c not built")

PIECES = [b"the", b"The", b"THE", b"\\u00e9", b"\\\\u00E9", b"\xc3\xa9", b"\xc3\x89", b"\xe2\x80\x94", b'"', b'\\"',
          b"\n", b"x" * 17, b" ", b"t", b"h", b"\xc4\xb0", b"\xef\xac\x85", b"\\", b"u"]
windows = st.lists(st.sampled_from(PIECES), max_size=40).map(b"".join)
NEEDLES = [b"the", b"\xc3\xa9", b"\\u00e9", b'"the', b"t", b"he\xc3", b"\xe2\xa0\xb4", b"x" * 20, b'\\"t', b"th\xc4"]


def _ks(needles, table, data):
    return probe_offsets(tuple(needles), table, data, len(data))


@needs_c
@settings(max_examples=300, deadline=None)
@given(data=windows, picks=st.lists(st.sampled_from(NEEDLES), min_size=1, max_size=4, unique=True),
       fold=st.booleans(), lead=st.integers(0, 17), cut=st.integers(0, 8), rows=st.booleans())
@example(data=b"the the\nthe", picks=[b"the"], fold=False, lead=0, cut=0, rows=False)
@example(data=b"xx\\u00e9\n", picks=[b"\\u00e9", b"\xc3\xa9"], fold=True, lead=3, cut=1, rows=True)
def test_the_c_is_its_definition(data, picks, fold, lead, cut, rows):
    data = b"y" * lead + data
    table = FOLD if fold else SAME
    needles = tuple(n.translate(table) for n in picks)
    ks = _ks(needles, table, data)
    end = max(len(data) - cut, 0)
    starts = row_starts(data, list(range(len(data))), len(data)) if rows else None
    for start in (0, 1, lead):
        want = rows_any_py(data, start, end, needles, ks, table, starts)
        assert ROWS_ANY(data, start, end, needles, ks, table, starts) == want, (start, end)
        assert ROWS_ANY(bytearray(data), start, end, needles, ks, table, starts) == want


@needs_c
def test_every_probe_at_every_alignment_of_a_16_byte_step():
    needles = (b"summarize", b"ummar\xc4\xb0ze", b"\\u00e9t")
    for at in range(0, 60):
        buf = bytearray(b"z" * 90)
        for n in needles:
            for k in range(len(n)):
                for g in range(0, min(3, len(n) - 1 - k) + 1):
                    data = bytearray(buf)
                    data[at:at + len(n)] = n.upper() if n.isascii() else n
                    data = bytes(data)
                    ks = ((k, g),) + tuple(_ks(needles[1:], FOLD, data))
                    want = rows_any_py(data, 0, len(data), tuple(x.translate(FOLD) for x in needles), ks, FOLD, None)
                    got = ROWS_ANY(data, 0, len(data), tuple(x.translate(FOLD) for x in needles), ks, FOLD, None)
                    assert got == want and (got == [at] if n == needles[0] else True), (at, n, k, g)


@needs_c
def test_what_it_refuses():
    assert ROWS_ANY(b"a\nb", 0, 3, (b"a\nb",), ((0, 1),), SAME, None) is None            # (a newline in a needle)
    many = tuple(bytes([65 + i, 66 + i]) for i in range(17))
    assert ROWS_ANY(b"abc", 0, 3, many, tuple((0, 1) for _ in many), SAME, None) is None  # (17 probes)
    wide = bytes([0x61 if c < 5 else c for c in range(256)])                               # (5 bytes onto "a")
    assert ROWS_ANY(b"abc", 0, 3, (b"ab",), ((0, 1),), wide, None) is None
    with pytest.raises(ValueError):
        ROWS_ANY(b"abc", 0, 3, (b"ab",), ((1, 1),), SAME, None)                            # (k + g past the needle)
    with pytest.raises(ValueError):
        ROWS_ANY(b"abc", 0, 3, (b"ab",), ((0, 1),), b"short", None)


def _window(rnd: random.Random, escapes: bool = True) -> bytes:
    words = ["the", "Thé", "ſtep", "STEP", "\\u00e9t\\u00e9", "été", '\\"q\\"', "by", "—", '\\\\\\"step', '"Step',
             "\\u2014", "summarize", "SUMMAR\u0130ZE", "ummari", '{"type":"x"}', "\\\\u00e9"]
    words = [w for w in words if escapes or "\\u" not in w]
    return b"\n".join(" ".join(rnd.choice(words) for _ in range(rnd.randint(0, 30))).encode()
                      for _ in range(300)) + b"\n"


def _row(data: bytes, s: int, lim: int) -> bytes:
    e = data.find(b"\n", s, lim)
    return data[s:lim if e < 0 else e]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("escapes", [True, False])
def test_rows_of_finds_the_rows_of_the_passes_and_keeps_the_rows_hit_keeps(seed, escapes):
    """Prefilter.rows_of against the passes (its rows_of off) and Prefilter.hit, on every query kind, in windows
    with and without escapes of non-ASCII characters (the raw needles alone looked for)."""
    data = _window(random.Random(seed), escapes)
    for q in ["the", "thé", "step", "été", '"q"', "by", "—", "Step", "é", '"step', 'q"', "summarize", '"the']:
        for case in (False, True):
            pre = build_prefilter(FindOptions(q, case=case))
            if pre is None:
                continue
            for p in [pre, *pre.also]:
                assert isinstance(p, Prefilter)
                for lim in (len(data), len(data) // 2):
                    every = row_starts(data, list(range(lim)), lim)
                    kept = [s for s in every if p.hit(_row(data, s, lim))]
                    got = p.rows_of(data, lim, every)
                    if got is not None:
                        assert got == kept, (q, case)
                    one = p.rows_of(data, lim)
                    if one is not None:
                        off = Prefilter(p.needles, p.fold, p.gate, p.esc, p.anchor)
                        off._any = off._any_raw = AnyRows((), SAME)
                        assert row_starts(data, one, lim) == row_starts(data, off.positions(data, lim, rows=True),
                                                                        lim), (q, case)
