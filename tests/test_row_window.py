"""The row window without Qt: paging, the exposed window, the live merge and the face switch
on real logs (shared fixtures, synthesized sessions).  Every call's change records, applied
in order to a plain list, must give exactly the window's exposed rows (what the Qt model
relies on), and the window must agree with a fresh read."""
from __future__ import annotations

import random
import subprocess
import sys

import pytest

import app.ui.history.window as W
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history.pages import live_job, older_job, _open_job
from app.ui.history.window import RowWindow, apply_changes

from fixtures_util import WorkerJob, fixture

BIG = "apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl"        # 2,098 events
RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"


JOB = WorkerJob()


class Shadow:
    """A window plus the list the Qt model would hold, kept by the change records only."""

    def __init__(self, w: RowWindow):
        self.w = w
        self.rows: list = list(w.rows)
        self.records = 0

    def apply(self, changes):
        if isinstance(changes, tuple):
            changes = changes[1]
        self.records += len(changes)
        apply_changes(self.rows, changes, self.w)
        self.check()

    def check(self):
        w = self.w
        assert self.rows == w.rows
        assert w.rows == w.all_rows[w.hidden:len(w.all_rows) - w.bottom]
        assert len(w.rows) <= W.MAX_EXPOSED
        assert all(0 <= m < len(w.rows) for m in w.matches)
        assert w.current_match_row is None or 0 <= w.current_match_row < len(w.rows)


def _open(path: str, page_size: int, physical=False, attempts=False):
    reader, lp = _open_job(JOB, path, None, page_size, physical, attempts)
    w = RowWindow(physical, attempts)
    sh = Shadow(w)
    sh.apply(w.install_tail(lp))
    return reader, sh


def _read_all(reader, sh: Shadow, page_size: int):
    w = sh.w
    while w.pages[0].page.has_more:
        lp = older_job(JOB, reader, w.pages[0].page, page_size, w.physical, w.show_attempts)
        if not lp.page.items:
            w.pages[0].page.has_more = False
            break
        sh.apply(w.add_older_page(lp))
        sh.apply(w.expose_older())


def _keys(w: RowWindow) -> list:
    return [r.key for r in w.all_rows]


@pytest.fixture(autouse=True)
def _small_window(monkeypatch):
    monkeypatch.setattr(W, "MAX_EXPOSED", 40)


def test_row_window_imports_no_qt():
    code = ("import sys, app.ui.history.window, app.ui.history.pages, app.ui.history.rows; "
            "print(sorted(m for m in sys.modules if m.startswith('PySide6')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_paging_keeps_the_window_bounded_and_the_records_exact():
    reader, sh = _open(str(fixture(BIG)), page_size=3)
    w = sh.w
    assert len(w.rows) == min(W.FIRST_ROWS, len(w.all_rows)) and w.bottom == 0
    newest = w.rows[-1]
    _read_all(reader, sh, 3)
    reader.close()
    assert len(w.pages) > 4 and len(w.events) == 2098
    while w.hidden:                                   # the user scrolls to the very top
        sh.apply(w.expose_older())
    assert w.hidden == 0 and len(w.rows) == W.MAX_EXPOSED and w.bottom > 0
    assert w.row_index(newest) is None, "the newest rows left the window"
    while w.bottom:                                   # ... and back down
        c, ch = w.expose_newer()
        assert c > 0
        sh.apply(ch)
    assert w.row_index(newest) == len(w.rows) - 1
    # every loaded seq maps to a row showing it (or covering it), wherever the window is
    rnd = random.Random(5)
    for seq in rnd.sample(sorted(w.events), 60):
        o = w.seq_ordinal(seq)
        assert o is not None
        sh.apply(w.reveal(o))
        i = w.exposed_index(o)
        assert i is not None
        r = w.rows[i]
        lo = r.first_seq if r.first_seq is not None else r.seq
        assert lo <= seq <= max(r.seq, r.last_seq if r.last_seq is not None else r.seq)
    assert sh.records > 20


def test_search_positions_follow_the_window():
    reader, sh = _open(str(fixture(BIG)), page_size=4)
    w = sh.w
    _read_all(reader, sh, 4)
    reader.close()
    term = "the"
    assert w.set_find(term.upper()) and not w.set_find(term)
    want = [i for i, r in enumerate(w.all_rows) if term in r.search_text()]
    assert len(want) > 10
    seen = []
    row, ordinal = w.find(None, forward=True)
    while True:                                       # step through every match, newest window first
        if row is None and ordinal is None:
            break
        if row is None:
            sh.apply(w.reveal(ordinal))
            row = w.exposed_index(ordinal)
        w.set_current_match(row)
        seen.append(row + w.hidden)
        row, ordinal = w.find(row, forward=True)
    assert seen == [i for i in want if i >= seen[0]]
    assert w.matches == [i for i, r in enumerate(w.rows) if term in r.search_text()]
    # the current match keeps pointing at its row while the window slides (or is dropped)
    for step in (w.expose_older, w.expose_newer):
        sh.apply(w.show_around(len(w.all_rows) // 2))
        assert w.hidden and w.bottom and w.matches
        w.set_current_match(w.matches[len(w.matches) // 2])
        row = w.rows[w.current_match_row]
        for _ in range(3):
            sh.apply(step())
            assert w.current_match_row is None or w.rows[w.current_match_row] is row
            assert w.matches == [i for i, r in enumerate(w.rows) if term in r.search_text()]


def test_face_switch_keeps_the_first_seq_on_top():
    reader, sh = _open(str(fixture(RETRY)), page_size=2)
    w = sh.w
    _read_all(reader, sh, 2)
    reader.close()
    logical = _keys(w)
    first = next(r for r in w.rows if r.seq is not None)
    sh.apply(w.set_face(False, True))
    shown = _keys(w)
    assert len(shown) > len(logical), "hidden failed attempts appear"
    assert w.hidden_attempt_count() > 0
    top = next(r for r in w.rows if r.seq is not None)
    assert (top.first_seq if top.first_seq is not None else top.seq) >= (
        first.first_seq if first.first_seq is not None else first.seq)
    sh.apply(w.set_face(False, False))
    assert _keys(w) == logical


@pytest.mark.parametrize("seed,crash", [(31, False), (32, True)])
@pytest.mark.slow
def test_live_merge_equals_a_fresh_read(tmp_path, monkeypatch, seed, crash):
    """A tail page grown batch by batch (the live job's body, split into short pages) gives
    the rows of a fresh read of the final file, in both faces; the records stay exact."""
    import app.ui.history.pages as P
    monkeypatch.setattr(P, "LIVE_SPLIT", 6)
    monkeypatch.setattr(P, "LIVE_KEEP", 3)
    src = tmp_path / "src.jsonl"
    write_jsonl(str(src), SessionSynth(seed), target_bytes=160_000, crash=crash, batch_events=(1, 8))
    lines = src.read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    first = max(2, len(lines) // 4)
    path.write_bytes(b"".join(lines[:first]))
    full = open_reader(str(src))
    events = list(full.iter_events())
    full.close()
    reader, sh = _open(str(path), page_size=4)
    w = sh.w
    todo = [e for e in events if e.seq > w.pages[-1].page.last_seq]
    assert len(todo) > 50
    rnd = random.Random(seed)
    batches = splits = 0
    while todo:
        k = rnd.randint(1, 25)
        batch, todo = todo[:k], todo[k:]
        if rnd.random() < 0.3 and w.bottom == 0 and w.hidden:      # sometimes the reader scrolled up
            sh.apply(w.show_around(max(0, len(w.all_rows) - W.MAX_EXPOSED - 5)))
        old = w.pages[-1]
        prev_calls = [e for e in w.pages[-2].events.values() if e.type == "tool/call"] if len(w.pages) > 1 else []
        new = live_job(JOB, old, batch, w.physical, w.show_attempts, prev_calls)
        splits += len(new) > 1
        added, ch = w.apply_live(old, new)
        assert added == sum(len(lp.rows_for(False, False).rows) for lp in new) - len(old.rows_for(False, False).rows)
        sh.apply(ch)
        batches += 1
    assert batches > 3 and splits > 0
    _read_all(reader, sh, 4)                          # the older pages of the prefix: the same rows
    reader.close()
    path.write_bytes(b"".join(lines))
    freader, fresh = _open(str(path), page_size=4)
    _read_all(freader, fresh, 4)
    freader.close()
    for physical in (False, True):
        sh.apply(w.set_face(physical, False))
        fresh.apply(fresh.w.set_face(physical, False))
        assert [(r.key, r.kind, tuple(sorted(r.marks))) for r in w.all_rows] == \
            [(r.key, r.kind, tuple(sorted(r.marks))) for r in fresh.w.all_rows]
        assert bool([r for r in w.all_rows if r.synthesized]) == (crash and not physical)

