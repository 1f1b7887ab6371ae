"""rowscan_c.last_turn (the find6 section) is its definition, find_turns.last_turn_py, on hostile windows at every
alignment of its 16-byte step; the turn tracker asking it (find_rows.TurnTracker) gives what
find_rows.last_turn_in gives for every stretch asked (the same turns, the same rows counted as decoded), on plain,
near-miss and escaped turn/start rows; and find's hits and stats are the same with the list and without it.  And
rowscan_c.row_starts is find_rows.row_starts_py."""
from __future__ import annotations

import random

import pytest

from app.log.format.codec import RowCodec
from app.log.query import find_turns
from app.log.query.find import FindOptions, find_all
from app.log.query.find_match import FindStats
from app.log.query.find_rows import TurnTracker, Win, last_turn_in
from app.log.query.find_turns import LAST_TURN, last_turn_py
from app.tools.synth import SessionSynth, write_jsonl
from tests.test_find_text_fast import _open

needs_c = pytest.mark.skipif(LAST_TURN is None, reason="rowscan_c not built")


def _plain(seq: int, turn: int, time: int = 17) -> str:
    return f'{{"type":"turn/start","seq":{seq},"time":{time},"data":{{"turn":{turn}}}}}'


ROWS = [
    _plain(5, 2), _plain(0, 0), _plain(9007199254740991, 3), _plain(9007199254740992, 4),      # (seq over the safe)
    _plain(1234567890123456, 99), '{"type":"turn/start","seq":12345678901234567,"time":1,"data":{"turn":5}}',
    _plain(7, 1234567890123456), '{"type":"turn/start","seq":7,"time":1,"data":{"turn":12345678901234567}}',
    '{"type":"turn/start","seq":07,"time":1,"data":{"turn":5}}', '{"type":"turn/start","seq":7,"time":01,"data":{"turn":5}}',
    '{"type":"turn/start","seq":7,"time":1,"data":{"turn":05}}', '{"type":"turn/start","seq":-7,"time":1,"data":{"turn":5}}',
    '{"type":"turn/start","seq":7,"time":1,"data":{"turn":-5}}', '{"type":"turn/start","seq":7,"time":1.5,"data":{"turn":5}}',
    '{"type":"turn/start","seq":7,"time":1,"data":{"turn":5.0}}', '{"type":"turn/start","seq":7,"data":{"turn":5}}',
    '{"type": "turn/start","seq":7,"time":1,"data":{"turn":5}}', '{"seq":8,"type":"turn/start","time":1,"data":{"turn":6}}',
    '{"type":"turn/start","seq":7,"time":1,"data":{"turn":5}} ', '{"type":"turn/start","seq":7,"time":1,"data":{"turn":5}}\r',
    '{"type":"turn/start","seq":7,"time":1,"data":{"turn":5,"x":1}}', '{"type":"turn/start","seq":7,"time":1,"data":{}}',
    '{"type":"turn/start","seq":7,"time":1,"data":{"turn":"5"}}', '{"type":"turn/start","seq":7,"time":1,"data":{"turn":null}}',
    '{"type":"turn\\/start","seq":7,"time":1,"data":{"turn":5}}', '{"type":"turn/start","seq":7,"time":1,"data":{"turn":5}',
    '{"type":"turn/start","seq":7,"time":1,"data":{"turn":5}}}', '{"type":"user/message","seq":3,"data":{"x":"\\"turn/start\\""}}',
    '{"type":"x","seq":3,"data":{"turn/start":1}}', '{"type":"x","seq":3,"data":{"a":"turn/start"}}',
    '{"type":"turn/start","seq":7,"time":1,"data":{"turn":5}}"turn/start"', '{"type":"turn/start","seq":8,"time":1,"data":{"turn":6},"data":{"turn":7}}',
    '{"type":"step/start","seq":4,"time":1,"data":{"turn":3,"step":1}}', '{"type":"user/message","seq":6,"data":{"content":"the"}}',
    '', 'not json "turn/start" at all', '{"type":"turn/start","seq":7,"time":1,"data":{"turn":5}}x',
    '{"type":"turn/st\u00e4rt","seq":7,"time":1,"data":{"turn":5}}', '{"type":"turn/start","seq":7,"time":1,"data":{"turn":5}}\u2014',
]


def _window(rng: random.Random, n: int) -> bytes:
    out = [rng.choice(ROWS) for _ in range(n)]
    return ("\n".join(out) + ("\n" if rng.random() < 0.5 else "")).encode()


@needs_c
def test_last_turn_in_c_is_its_definition():
    rng = random.Random(1)
    for k in range(400):
        data = b"y" * (k % 19) + _window(rng, rng.randint(0, 30))
        for _ in range(4):
            stop, end = sorted((rng.randint(-2, len(data) + 3), rng.randint(-2, len(data) + 3)))
            for st_, en in ((stop, end), (0, len(data)), (stop, len(data)), (0, end)):
                want = last_turn_py(data, st_, en)
                assert LAST_TURN(data, st_, en) == want, (data, st_, en)
                assert LAST_TURN(bytearray(data), st_, en) == want
                assert LAST_TURN(memoryview(data), st_, en) == want


@needs_c
def test_every_place_of_a_16_byte_step():
    row = _plain(3, 8).encode()
    for at in range(0, 70):
        for pad in (b"z", b"/", b"a", b'"', b"\n"):
            data = pad * at + row + b"\n" + b"a/aa" * 9
            got = LAST_TURN(data, 0, len(data))
            assert got == last_turn_py(data, 0, len(data)), (at, pad)
            if pad != b"\n":
                assert got[2] == (8 if at == 0 else None)
            for stop in range(max(0, at - 2), at + 3):
                for end in range(at + len(row) - 2, at + len(row) + 2):
                    assert LAST_TURN(data, stop, end) == last_turn_py(data, stop, end), (at, pad, stop, end)


def _starts(data: bytes) -> list[int]:
    out, s = [0], 0
    while True:
        e = data.find(b"\n", s)
        if e < 0 or e + 1 >= len(data):
            return out
        s = e + 1
        out.append(s)


def _asks(rng: random.Random, data: bytes, lim: int) -> list[int]:
    """Row starts asked in order (a tracker's use), some more than once."""
    some = [s for s in _starts(data) if s < lim]
    got = sorted(rng.sample(some, min(len(some), rng.randint(1, 6))))
    return sorted(got + got[:1])


def _track(codec: RowCodec, win: Win, asks: list[int], listed: bool, monkeypatch) -> tuple[list, list, int]:
    monkeypatch.setattr(find_turns, "ENABLED", listed)
    st = FindStats()
    tb = TurnTracker(codec, win, 41, st, win.limit)
    got = [tb.before(rs) for rs in asks]
    return got, [tb.at_end()], st.rows_decoded


def test_the_tracker_from_the_list_is_last_turn_in(monkeypatch):
    rng = random.Random(2)
    codec = RowCodec("s", version=4)
    seen = set()
    for k in range(500):
        data = _window(rng, rng.randint(1, 40))
        lim = len(data) if rng.random() < 0.7 else data.rfind(b"\n", 0, len(data) - 1) + 1
        win = Win(1000 + k, data, lim, not data.endswith(b"\n"))
        asks = _asks(rng, data, lim)
        new = _track(codec, win, asks, True, monkeypatch)
        old = _track(codec, win, asks, False, monkeypatch)
        assert new == old, (data, lim, asks)
        seen.update(x for x in new[0] + new[1] if isinstance(x, int))
    assert {0, 2, 3, 5, 6, 41, 99} <= seen and 4 not in seen, seen


def test_the_tracker_asked_inside_a_turn_row_asks_last_turn_in(monkeypatch):
    """A stop or end inside a turn/start row (no tracker asks so, but a caller may): the answer is last_turn_in's."""
    codec = RowCodec("s", version=4)
    data = ("\n".join([_plain(1, 1), _plain(2, 2), '{"type":"x","seq":3}', _plain(4, 4)]) + "\n").encode()
    for end in range(1, len(data) + 1):
        for stop in range(0, end, 7):
            monkeypatch.setattr(find_turns, "ENABLED", True)
            st, st2 = FindStats(), FindStats()
            win = Win(0, data, len(data), False)
            tb = TurnTracker(codec, win, None, st, len(data))
            assert tb._last(end, stop) == last_turn_in(codec, win, end, st2, stop=stop), (stop, end)
            assert st.rows_decoded == st2.rows_decoded


def test_find_is_the_same_with_the_list_and_without(tmp_path, monkeypatch):
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=6, version=4), target_bytes=400_000)
    head, *rows = p.read_text().split("\n")
    rows = [r for r in rows if r]
    rows = [r.replace('"type":"turn/start","seq":', '"type":"turn/start", "seq":') if i % 3 == 0 else r
            for i, r in enumerate(rows)]                                     # (a third of them not written plain)
    q = tmp_path / "e.jsonl"
    q.write_text("\n".join([head] + rows) + "\n")
    hits = 0
    for opts in (FindOptions("the"), FindOptions("summarize"), FindOptions("\u2014"), FindOptions('"tests'),
                 FindOptions("review")):
        for path in (p, q):
            got = {}
            for listed in (True, False):
                monkeypatch.setattr(find_turns, "ENABLED", listed)
                r = _open(str(path))
                hs, st = find_all(r, opts)
                r.close()
                got[listed] = ([(h.seq, h.turn, h.kind, h.start, h.end, h.matches, h.snippet) for h in hs],
                               (st.hits, st.rows_decoded, st.complete))
            assert got[True] == got[False], (opts, path)
            hits += len(got[True][0])
    assert hits > 300, hits


def test_a_wrong_listed_turn_is_caught_by_the_comparison(tmp_path, monkeypatch):
    """The fast way's hits of rows naming no turn take the list's turns: one off is caught by find's comparison of
    both ways (the exact way never reads the list)."""
    from tests.test_find_text_fast import same_both_ways
    p = tmp_path / "g.jsonl"
    write_jsonl(str(p), SessionSynth(seed=4, version=4), target_bytes=300_000)
    make = lambda: _open(str(p))                                  # noqa: E731
    assert same_both_ways(make, FindOptions("the")) > 0
    real = find_turns.last_turn
    monkeypatch.setattr(find_turns, "last_turn",
                        lambda d, a, b: (lambda g: g if g is None or g[2] is None else g[:2] + (g[2] + 1,))(real(d, a, b)))
    with pytest.raises(AssertionError):
        same_both_ways(make, FindOptions("the"))


@needs_c
def test_row_starts_in_c_is_its_definition():
    from app.log.query.find_rows import row_starts, row_starts_py
    from app.log.query.find_turns import ROW_STARTS
    rng = random.Random(5)
    for k in range(600):
        data = bytes(rng.choice(b"ab\n\n\xc3") for _ in range(rng.randint(0, 60)))
        lim = rng.randint(0, len(data))
        cands = sorted(rng.sample(range(len(data) + 3), min(len(data) + 3, rng.randint(0, 20))))
        if k % 7 == 0:
            cands = sorted(cands + cands[:3])                     # (a place twice)
        want = row_starts_py(data, cands, lim)
        for d in (data, bytearray(data), memoryview(data)):
            assert ROW_STARTS(d, cands, lim) == want, (data, cands, lim)
            assert row_starts(d, cands, lim) == want
    assert ROW_STARTS(b"ab\ncd", [-1, 3], 5) is None and row_starts(b"ab\ncd", [-1, 3], 5) == row_starts_py(b"ab\ncd", [-1, 3], 5)
    assert ROW_STARTS(b"ab\ncd", [1], 9) is None and row_starts(b"ab\ncd", [1, 7], 9) == row_starts_py(b"ab\ncd", [1, 7], 9)
    assert ROW_STARTS(b"ab\ncd\nef", [0, 1, 4, 7], 8) == [0, 3, 6]
