"""Jumps and filters of the row window, without Qt, on generated logs of many pages: a page
read around any seq through the seq index (no page in between), then grown in both
directions until it meets the log's end again; view filters by row kind."""
from __future__ import annotations

import random

import pytest

import app.ui.history.window as W
from app.log.format.model import is_event
from app.log.index.reader import LogReader
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history.pages import _open_job, range_job, range_around, read_range, bound_after
from app.ui.history.window import FILTERS, RowWindow, row_category, row_is_error

from test_row_window import JOB, Shadow, _read_all


@pytest.fixture(autouse=True)
def _small_window(monkeypatch):
    monkeypatch.setattr(W, "MAX_EXPOSED", 40)


@pytest.fixture(scope="module")
def long_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("jump") / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=7), turns=60)
    return str(path)


def _tail(path, page_size=4):
    reader, lp = _open_job(JOB, path, None, page_size, False, False)
    reader.index = reader.build_index()
    w = RowWindow()
    sh = Shadow(w)
    sh.apply(w.install_tail(lp))
    return reader, sh


def _covers(r, seq):
    lo = r.first_seq if r.first_seq is not None else r.seq
    return lo <= seq <= max(r.seq, r.last_seq if r.last_seq is not None else r.seq)


@pytest.mark.slow
def test_range_pages_tile_the_log_like_a_full_read(long_log):
    reader = LogReader.open(long_log)
    idx = reader.build_index()
    all_seqs = [e.seq for e in reader.iter_events()]
    # ranges chained from the start cover every seq once, in order, each page bounded
    lo, got, pages = 0, [], 0
    while True:
        hi = bound_after(idx, lo, 3)
        p = read_range(reader, lo, hi)
        got += [e.seq for e in p.events]
        pages += 1
        if hi is None:
            break
        assert p.events and p.events[-1].seq < hi <= all_seqs[-1] + 1
        lo = hi
    assert got == all_seqs and pages > 10


@pytest.mark.slow
def test_jump_reads_the_page_around_a_seq_and_grows_both_ways(long_log):
    reader, sh = _tail(long_log)
    w = sh.w
    r2, sh2 = _tail(long_log)
    _read_all(r2, sh2, 4)
    r2.close()
    want_keys = [r.key for r in sh2.w.all_rows]
    rnd = random.Random(3)
    for seq in rnd.sample(range(0, max(w.events) // 2), 5):
        if seq not in sh2.w.events:
            continue
        lo, hi = range_around(reader.index, seq, 4)
        assert lo <= seq and (hi is None or seq < hi)
        lp = range_job(JOB, reader, lo, hi, False, False)
        assert lp.page.base_seq == lo and not lp.page.tail
        sh.apply(w.install_range(lp, seq))
        assert w.has_newer and not w.attached and w.tail_pages
        o = w.seq_ordinal(seq)
        i = w.exposed_index(o)
        assert i is not None and _covers(w.rows[i], seq), "the jump lands on the row"
        assert len(w.pages) == 1, "no page in between was read"
    # grow older to the start and newer to the end: the rows equal a full read
    _read_all(reader, sh, 4)
    while w.has_newer:
        _f, last = w.loaded_range()
        tb = w.tail_base_seq
        if last + 1 >= tb:
            sh.apply(w.attach_tail())
            break
        hi = min(bound_after(reader.index, last, 4) or tb, tb)
        sh.apply(w.add_newer_page(range_job(JOB, reader, last + 1, hi, False, False)))
        while w.bottom:
            sh.apply(w.expose_newer())
    assert w.attached and w.pages[-1].page.tail
    assert [r.key for r in w.all_rows] == want_keys
    # back to the end: jump_to_tail puts the kept tail pages on screen
    seq = min(w.events) + 5
    lo, hi = range_around(reader.index, seq, 4)
    sh.apply(w.install_range(range_job(JOB, reader, lo, hi, False, False), seq))
    sh.apply(w.jump_to_tail())
    assert w.attached and w.pages[-1].page.tail and w.rows[-1].key == want_keys[-1]
    reader.close()


def test_filters_hide_and_show_the_right_kinds(long_log):
    reader, sh = _tail(long_log, page_size=30)
    w = sh.w
    _read_all(reader, sh, 30)
    reader.close()
    every = list(w.all_rows)
    cats = {row_category(r) for r in every}
    assert {"user", "assistant", "tools", "turns"} <= cats
    for hide in FILTERS:
        sh.apply(w.set_filter({hide}))
        assert all(row_category(r) != hide for r in w.all_rows)
        assert [r.key for r in w.all_rows] == [r.key for r in every if row_category(r) != hide]
        for seq in list(w.events)[::97]:
            o = w.seq_ordinal(seq)
            assert o is None or row_category(w.all_rows[o - w.origin]) != hide
    sh.apply(w.set_filter(frozenset(), errors_only=True))
    errs = [r for r in every if row_is_error(r)]
    assert errs, "the synth log has failed tools"
    assert [r.key for r in w.all_rows] == [r.key for r in errs]
    assert all(r.kind in ("tool-result", "attempt-failed", "turn-end", "bad", "gap") for r in w.all_rows)
    sh.apply(w.set_filter())
    assert [r.key for r in w.all_rows] == [r.key for r in every]


def _same_page(a, b):
    def key(it):      # (a backward read knows no line numbers: a bad row's line is checked apart)
        return (it.seq, it.member, it.pos) if hasattr(it, "seq") and it.seq is not None else ("bad", it.pos)
    assert [key(it) for it in a.items] == [key(it) for it in b.items]
    assert (a.has_more, a.messages) == (b.has_more, b.messages)


@pytest.mark.slow
def test_a_range_read_forward_equals_the_backward_read(tmp_path):
    """Go to start and jumps read a range forward from the segment holding its first seq when
    that decodes less; the page (rows, bad rows between them, counts) and the older pages its
    token continues to are the same as the backward read's, on a log with malformed rows."""
    import app.ui.history.pages as P
    src = tmp_path / "clean.jsonl"
    write_jsonl(str(src), SessionSynth(seed=11), turns=120)
    lines = src.read_bytes().split(b"\n")
    rnd = random.Random(5)
    for k in sorted(rnd.sample(range(2, len(lines) - 2), 12), reverse=True):
        lines.insert(k, b'{"seq": not json')                     # malformed rows among the stored rows
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(lines))
    reader = LogReader.open(str(path))
    reader.index = idx = reader.build_index()
    reader.source.block = P.UI_READ_BLOCK
    assert len(idx) >= 3 and idx.monotonic
    last = idx.last
    pairs = [(0, bound_after(idx, 0, n)) for n in (1, 3, 6)]
    pairs += [range_around(idx, s, 24) for s in rnd.sample(range(last), 12)]
    pairs += [(a, a + rnd.randint(1, 4000)) for a in rnd.sample(range(last - 4000), 8)]
    bad_lines = {it.pos: it.line for it in reader.iter_items() if not is_event(it)}
    assert len(bad_lines) == 12
    forward = 0
    for lo, hi in pairs:
        if hi is None:
            continue
        i = P._forward_segment(reader, lo, hi)
        if i is None:
            i = idx.locate(lo)
        if i is None:
            continue
        fwd = P._read_forward(reader, i, lo, hi)
        saved = P._forward_segment
        P._forward_segment = lambda *a: None
        try:
            back = read_range(reader, lo, hi)
        finally:
            P._forward_segment = saved
        _same_page(fwd, back)
        assert all(it.line == bad_lines[it.pos] for it in fwd.items if not is_event(it)), "lines of bad rows"
        forward += 1
        if fwd.token is not None:
            _same_page(reader.page_before(fwd.token, 5), reader.page_before(back.token, 5))
        else:
            assert back.token is None
    assert forward >= 20
    # the start of the log is read forward, from its first segment
    assert P._forward_segment(reader, 0, bound_after(idx, 0, 6)) == 0
