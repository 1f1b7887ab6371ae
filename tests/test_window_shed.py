"""Pages far from the exposed window are dropped and read again (issue 36), without Qt, on a
generated log of many pages: scrolling up to the start keeps a bounded number of pages loaded,
and scrolling back down reads the dropped pages again through the seq index, showing the same
rows as a window that kept everything."""
from __future__ import annotations

import pytest

import app.ui.history.window as W
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history.pages import older_job, range_job, bound_after
from app.ui.history.shed import KEEP_PAGES, shed_newer, shed_older

from test_jump_window import _tail
from test_row_window import JOB, _read_all


@pytest.fixture(autouse=True)
def _small_window(monkeypatch):
    monkeypatch.setattr(W, "MAX_EXPOSED", 40)


def _spanned(w) -> int:
    """Loaded pages holding an exposed row (those always stay)."""
    shown = {id(r) for r in w.rows}
    return sum(1 for lp in w.pages if shown.intersection(id(r) for r in lp.rows_for(w.physical, w.show_attempts).rows))


def test_far_pages_are_dropped_and_read_again(tmp_path):
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=11), turns=60)
    r_full, full = _tail(str(path))
    _read_all(r_full, full, 4)
    r_full.close()
    want = [r.key for r in full.w.all_rows]
    assert len(full.w.pages) > 3 * KEEP_PAGES, "the log spans many pages"

    reader, sh = _tail(str(path))
    w = sh.w
    most = 0
    while w.pages[0].page.has_more:
        lp = older_job(JOB, reader, w.pages[0].page, 4, False, False)
        if not lp.page.items:
            break
        sh.apply(w.add_older_page(lp))
        while w.hidden:
            sh.apply(w.expose_older())
        shed_newer(w)
        most = max(most, len(w.pages) - max(KEEP_PAGES, _spanned(w)))
    assert most <= 1, f"{most} pages more than the exposed rows span (or KEEP_PAGES) loaded while scrolling up"
    assert w.has_newer and w.tail_pages and w.tail_pages[-1].page.tail, "the page ending the log is kept aside"
    assert set(w.events) <= {e for lp in w.pages for e in lp.events}, "no event of a dropped page is held"
    assert w.rows[0].key == want[0], "the start of the log is shown"

    # back down to the end: dropped pages are read again, the rows shown are the full read's, in order
    shown = [r.key for r in w.rows]
    while True:
        while w.bottom:
            c, changes = w.expose_newer()
            sh.apply(changes)
            shown += [r.key for r in w.rows[len(w.rows) - c:]]
        if not w.has_newer:
            break
        _f, last = w.loaded_range()
        tb = w.tail_base_seq
        if last + 1 >= tb:
            sh.apply(w.attach_tail())
            continue
        hi = min(bound_after(reader.index, last, 4) or tb, tb)
        sh.apply(w.add_newer_page(range_job(JOB, reader, last + 1, hi, False, False)))
        shed_older(w)
        assert len(w.pages) <= max(KEEP_PAGES, _spanned(w)) + 1
    assert w.attached and w.pages[-1].page.tail
    assert shown == want
    reader.close()
