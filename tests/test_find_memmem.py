"""The escape pass of the whole-log search by glibc ``strstr``/``memmem`` (``app.log.index.cfind``, through
ctypes) gives exactly what the regex gives: the first ``\\uXXXX`` escape of a non-ASCII character
wholly inside ``data[start:lim]``, on ``bytes`` and on the reused ``bytearray`` window, escapes
planted at the window's ends and at odd offsets, ``start`` and ``lim`` at every edge, embedded NULs
(``strstr`` stops there), a window crowded with escapes of ASCII characters (the regex takes over),
and with the C library's path switched off; and a whole search finds the same hits either way."""
from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import app.log.index.cfind as cfind
import app.log.query.find_prefilter as find_prefilter
from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, find_all
from app.log.query.find_prefilter import first_escape
from app.log.source.sources import RawJsonlSource
from test_find_bytes import _row  # (a user row as a UTF-8 or an ASCII-only writer stores it)

needs_memmem = pytest.mark.skipif(not cfind.AVAILABLE, reason="no memmem in this C library")

# pieces of a window: escapes of non-ASCII characters (Latin-1, Cyrillic, CJK, surrogates, upper-case
# hex), escapes of ASCII ones (\u001b, \u0041, \u007f), cut escapes, doubled backslashes, filler
PIECES = [b"\\u00e9", b"\\u00C9", b"\\u00fc", b"\\u0080", b"\\u041f", b"\\u0438", b"\\u4e2d", b"\\ud83d",
          b"\\u001b", b"\\u0041", b"\\u007f", b"\\u0078", b"\\u00", b"\\u0", b"\\u", b"\\u00g1", b"\\\\u00e9",
          b"\\\\", b"\\", b"u00", b"00e9", b"abc", b" ", b'"', b"\n", b"x" * 7, "é".encode(), b"\0", b"\\\0u00e9"]
_HEXD = b"0123456789abcdefABCDEF"


def naive(data, start, lim):
    """Every offset checked, straight from the definition."""
    lim = min(lim, len(data))
    for p in range(max(start, 0), lim - 5):
        e = bytes(data[p:p + 6])
        if e[:2] == b"\\u" and all(c in _HEXD for c in e[2:]) and int(e[2:], 16) >= 0x80:
            return p
    return -1


windows = st.lists(st.sampled_from(PIECES), max_size=14).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(data=windows, places=st.sampled_from([0, 1, 2, 32]), as_array=st.booleans(), lead=st.integers(0, 3))
@example(data=b"\\u00e9", places=32, as_array=False, lead=0)
@example(data=b"\\u001b" * 5 + b"\\u00e9", places=2, as_array=True, lead=0)
@example(data=b"\0" * 12 + b"\\u00e9", places=32, as_array=True, lead=0)
@example(data=b"abc\\u00e", places=32, as_array=True, lead=1)
def test_strstr_and_regex_give_the_same_first_escape_at_every_edge(data, places, as_array, lead):
    data = b"y" * lead + data                     # (odd alignments of the escapes)
    buf = bytearray(data) if as_array else data
    n = len(buf)
    for start in range(0, n + 2):
        for lim in range(start, n + 3):
            want = naive(data, start, lim)
            assert first_escape(buf, start, lim, use_c=False) == want, (start, lim)
            assert first_escape(buf, start, lim, places=places) == want, (start, lim, places)
            assert first_escape(buf, start, lim) == want, (start, lim)
            if find_prefilter._C_UESC is not None:
                assert find_prefilter._C_UESC(buf, start, lim) == want, (start, lim)
    if as_array:                                  # (the window's buffer is exported only during a call)
        buf.extend(b"more")
        buf[:] = b""


@needs_memmem
@given(data=st.binary(max_size=40) | windows, needle=st.sampled_from([b"\\u", b"\\u00", b"ab", b"a", b"", b"\\u00e9x"]),
       start=st.integers(0, 45), end=st.integers(0, 45), as_array=st.booleans(), nuls=st.sampled_from([0, 1, 99]))
@settings(max_examples=400, deadline=None)
@example(data=b"xab", needle=b"ab", start=0, end=3, as_array=False, nuls=0)       # (ends at ``end``)
@example(data=b"x\\u", needle=b"\\u", start=1, end=3, as_array=True, nuls=0)
@example(data=b"x\\u\0\\u", needle=b"\\u", start=0, end=2, as_array=True, nuls=0)
@example(data=b"\0\0\\u", needle=b"\\u", start=0, end=4, as_array=False, nuls=1)
def test_pinned_find_and_scan_are_bytes_find_clamped_to_the_buffer(data, needle, start, end, as_array, nuls):
    buf = bytearray(data) if as_array else data
    with cfind.Pinned(buf) as pin:
        assert pin.find(needle, start, end) == data.find(needle, start, end)
        assert pin.find(needle, start) == data.find(needle, start)
        assert pin._z == (len(data) > 0)          # (CPython's NUL after the last byte: strstr is used)
        got = pin.scan(needle, start, end, nuls=nuls)
        assert got == data.find(needle, start, end) or (got == cfind.GIVE_UP and data.count(b"\0", start, end) > nuls)
        assert pin.scan(needle, start, end, nuls=99) == data.find(needle, start, end)
    assert pin.find(needle) == pin.scan(needle) == (-1 if needle else 0)   # (closed: nothing is read)


@needs_memmem
def test_a_planted_escape_at_the_end_of_a_big_reused_window():
    buf = bytearray(b"plain ascii, no escape; \\u001b[0m \\\\path " * 60000)
    n = len(buf)
    assert first_escape(buf, 0, n) == -1
    buf[n - 6:] = b"\\u00fc"
    assert first_escape(buf, 0, n) == n - 6 == find_prefilter._ESC_NONASCII.search(buf).start()
    assert first_escape(buf, 0, n - 1) == -1                  # (cut by the window's end)
    assert first_escape(bytes(buf), 1, n + 100) == n - 6      # (a limit past the end is clamped)
    buf[100:100 + 4096] = bytes(4096)                          # (a zeroed stretch: strstr gives up, the regex)
    assert first_escape(buf, 0, n) == n - 6
    buf[50:56] = b"\\u0438"
    assert first_escape(buf, 0, n) == 50 and first_escape(buf, 51, n) == n - 6
    with cfind.Pinned(buf) as pin:                            # (a short range of a big buffer: memmem)
        for a, b in [(0, 60), (40, 5000), (n - 5000, n - 10), (n - 7, n)]:
            assert pin.scan(b"\\u", a, b) == buf.find(b"\\u", a, b)
    buf.extend(b"x")                                          # (not exported any more)


@pytest.fixture(scope="module")
def escaped_log(tmp_path_factory):
    """Rows of a UTF-8 writer and of an ASCII-only writer (escapes), ANSI colours (\\u001b) in
    between, the word stored raw, escaped, and in other scripts' escapes, at every row length."""
    rows, seq = [_row(0, "header-ish first row", False)], 1
    for i in range(400):
        text = "\x1b[1m" * (i % 40) + "x" * (i % 13)
        if i % 37 == 5:
            text += " Grüßeñandú "
        if i % 53 == 7:
            text += " привет мир 中文 "
        rows.append(_row(seq, text, ascii_only=(i % 3 == 0)))
        seq += 1
    p = tmp_path_factory.mktemp("memmem") / "session.jsonl"
    p.write_bytes(b"\n".join(rows) + b"\n")
    assert b"\\u00fc" in p.read_bytes() and b"\\u001b" in p.read_bytes()
    return str(p)


@pytest.mark.parametrize("query,case", [("Grüßeñandú", True), ("grüssEñandú", False), ("GRÜSSEÑANDÚ", False),
                                        ("Ñ", False), ("ПРИВЕТ", False), ("中文", True), ("мир 中", False)])
def test_a_search_finds_the_same_with_and_without_memmem(escaped_log, monkeypatch, query, case):
    def hits(block):
        got, st = find_all(LogReader(RawJsonlSource(escaped_log, block=block)), FindOptions(query, case=case))
        assert st.complete
        return [(h.seq, h.kind, h.span) for h in got]
    with_c = {b: hits(b) for b in (4096, 5003, 1 << 20)}
    assert with_c[4096] and with_c[4096] == with_c[5003] == with_c[1 << 20]
    want = sorted({i + 1 for i in range(400) if (i % 37 == 5 if re.search("[a-zñ]", query, re.I) else i % 53 == 7)})
    assert sorted({s for s, _k, _sp in with_c[4096]}) == want
    monkeypatch.setattr(cfind, "AVAILABLE", False)
    for b, got in with_c.items():
        assert hits(b) == got, b
    monkeypatch.setattr(cfind, "AVAILABLE", True)
    monkeypatch.setattr(find_prefilter, "ESC_PLACES", 0)          # (the regex takes over at the first ANSI escape)
    for b, got in with_c.items():
        assert hits(b) == got, b


@pytest.mark.skipif(find_prefilter._C_UESC is None, reason="rowscan_c not built")
def test_the_c_first_escape_at_every_alignment_of_a_16_byte_step():
    for at in range(0, 58):
        for decoy in (b"\\u007f", b"\\u00g9", b"\\\\u", b"\\u0"):
            buf = bytearray(b"x" * 80)
            buf[at:at + 6] = b"\\u00E9"
            d = max(0, at - 6)
            if at >= 6:
                buf[d:d + len(decoy)] = decoy
            data = bytes(buf)
            for lim in (at + 5, at + 6, at + 7, 80):
                want = find_prefilter._ESC_NONASCII.search(data, 0, lim)
                assert find_prefilter._C_UESC(data, 0, lim) == (-1 if want is None else want.start()), (at, decoy, lim)
