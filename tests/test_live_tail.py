"""Core of the live history view: the tail page grows by appended rows exactly as a fresh
read of the grown log would give it (closure, dropped rows, paging cut)."""
from __future__ import annotations

import random

import pytest

from app.log.format.model import BadRow, is_event
from app.log.index.reader import LogReader, extend_tail_page, split_page
from app.log.fold.repair import TailTracker
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import session_files

FILES = [p for p in session_files() if len(p.read_bytes().splitlines()) >= 4]     # long enough to grow


def _lines(path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def _tail(path, max_messages=50):
    r = LogReader.open(str(path))
    try:
        return r.tail_page(max_messages), r.tail_state()
    finally:
        r.close()


def _shape(ev) -> tuple:
    return (ev.seq, ev.type, ev.synthesized, ev.raw)


def _grow(tmp_path, lines, cut, max_messages=50):
    """Tail page of the first ``cut`` lines, extended by the events of the rest."""
    p = tmp_path / "session.jsonl"
    p.write_bytes(b"".join(lines[:cut]))
    page, st = _tail(p, max_messages)
    p.write_bytes(b"".join(lines))
    r = LogReader.open(str(p))
    try:
        rest = []
        for it in r.iter_items():
            if is_event(it) and it.seq > (page.last_seq if page.last_seq is not None else -1) or not is_event(it) and it.offset >= sum(len(x) for x in lines[:cut]):
                rest.append(it)
        fresh_page = r.tail_page(max_messages)
        fresh_st = r.tail_state()
    finally:
        r.close()
    grown = extend_tail_page(page, st.tracker.copy(), rest)
    return grown, fresh_page, fresh_st


@pytest.mark.parametrize("path", FILES[::7], ids=lambda p: p.parent.name + "/" + p.name)
def test_extended_tail_equals_fresh_tail(tmp_path, path):
    lines = _lines(path)
    rnd = random.Random(len(lines))
    for cut in sorted({2, len(lines) // 2, rnd.randrange(2, len(lines)), len(lines) - 1}):
        grown, fresh, fresh_st = _grow(tmp_path, lines, cut, max_messages=10_000)
        assert [_shape(e) for e in grown.closure] == [_shape(e) for e in fresh.closure], cut
        assert [(d.pos, is_event(d)) for d in grown.dropped] == [(d.pos, is_event(d)) for d in fresh.dropped], cut
        assert grown.tail_state.open_turn == fresh_st.open_turn
        # the grown page holds every row of the fresh whole-log page, in order
        assert [it.pos for it in grown.items][-len(fresh.items):] == [it.pos for it in fresh.items]


def test_torn_last_line_is_replaced_by_the_completed_row(tmp_path):
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(11), target_bytes=40_000)
    lines = _lines(p)
    full = b"".join(lines)
    torn = b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2]
    p.write_bytes(torn)
    page, st = _tail(p)
    assert page.dropped and not is_event(page.items[-1])
    p.write_bytes(full)
    r = LogReader.open(str(p))
    last = list(r.iter_items())[-1]
    fresh = r.tail_page()
    r.close()
    grown = extend_tail_page(page, st.tracker.copy(), [last])
    assert all(is_event(it) for it in grown.items)
    assert [it.pos for it in grown.items][-len(fresh.items):] == [it.pos for it in fresh.items]
    assert [_shape(e) for e in grown.closure] == [_shape(e) for e in fresh.closure]
    assert not grown.dropped


def test_defect_then_turn_end_leaves_the_tail_clean():
    from app.log.format.model import Event
    tt = TailTracker()
    tt.apply(Event(seq=0, type="turn/start", time=1, data={"turn": 1}))
    tt.apply(BadRow(pos=10, line=2, offset=10, raw=b"{oops", reason="malformed", kind="malformed"))
    tt.apply(Event(seq=1, type="user/message", time=1, data={}))
    assert len(tt.dropped) == 2 and tt.open_turn == 1
    tt.apply(Event(seq=2, type="turn/end", time=1, data={"turn": 1}))
    assert tt.dropped == [] and tt.open_turn is None and tt.closure() == []
    c = tt.copy()
    c.apply(Event(seq=3, type="turn/start", time=2, data={"turn": 2}))
    assert c.open_turn == 2 and tt.open_turn is None        # copies are independent
    assert [e.type for e in c.closure()] == ["turn/end"]


@pytest.mark.slow
def test_split_page_cuts_like_the_host(tmp_path):
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(4), target_bytes=300_000)
    r = LogReader.open(str(p))
    try:
        big = r.tail_page(60)
        want_newer = r.tail_page(20)
        want_older = r.page_before(want_newer, 40)
    finally:
        r.close()
    older, newer = split_page(big, 20)
    assert [it.pos for it in newer.items] == [it.pos for it in want_newer.items]
    assert [it.pos for it in older.items] == [it.pos for it in big.items][: len(older.items)]
    assert [it.pos for it in older.items][-len(want_older.items):] == [it.pos for it in want_older.items]
    assert newer.tail and not older.tail and newer.messages == 20
    assert split_page(newer, 20) is None or split_page(newer, 20)[1].messages == 20
    assert split_page(want_newer, 50) is None
