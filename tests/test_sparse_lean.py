"""*Errors only*'s page (issue 29: <= 300 ms on the whole log) builds what its rows show and no more: the
attempt tracker of a page keeps no text (the rows show a failed attempt's text from its own event), and its
presenter views are made when a row is first shown; the rows are the same as with a tracker that keeps the
text and every view made first (keys, kinds, marks, ranges, attempts, texts shown)."""
from __future__ import annotations

import pytest

from app.log.fold.attempts import find_attempts
from app.log.format.model import is_event
from app.log.query.outline import build_outline
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from app.presenters.registry import views_for_page
from app.ui.history import sparse as sparse_mod
from app.ui.history.lazyviews import LazyView, lazy_views, shown_view
from app.ui.history.pages import compute_views
from app.ui.history.rows import build_rows

from fixtures_util import REPO, session_files


class Job:
    partial = None

    @staticmethod
    def check() -> None:
        return None


@pytest.fixture(scope="module")
def errors_log(tmp_path_factory):
    p = str(tmp_path_factory.mktemp("sparse-lean") / "session.jsonl")
    write_jsonl(p, SessionSynth(seed=29, version=4, context_window=24_000, p_tool_error=0.05, p_turn_error=0.02),
                target_bytes=1_200_000)
    r = open_reader(p)
    r.build_index()
    ol = build_outline(r)
    seqs = sorted(s for t in ol.turns for s in t.error_seqs)
    where = {s: w for t in ol.turns for s, w in zip(t.error_seqs, t.error_rows)}
    return r, seqs, where


@pytest.fixture(scope="module")
def errors_page(errors_log):
    return sparse_mod.sparse_job(Job(), *errors_log, False, False)


def _shown(rows: list) -> list:
    return [(r.key, r.kind, r.marks, r.seq, r.first_seq, r.last_seq, r.attempt.to_dict() if r.attempt else None,
             [c.seq for c in r.chunks], r.content().plain_text(), r.search_text(), r.copy_text()) for r in rows]


def test_the_pages_attempts_keep_no_text(errors_page):
    lp = errors_page
    tr = lp.trackers[False]
    failed = [a for a in tr.attempts if a.failed]
    assert len(failed) >= 10
    with_text = find_attempts([it for it in lp.page.items if is_event(it)])
    assert sum(1 for a in with_text.attempts if a.text) >= 3         # (there was text to keep)
    assert not tr.keep_text and all(a.text == [] for a in tr.attempts)


@pytest.mark.parametrize("show_attempts", [False, True])
def test_rows_are_those_of_a_tracker_with_text(errors_page, show_attempts):
    lp = errors_page
    items = list(lp.page.items)
    want = build_rows(items, find_attempts([it for it in items if is_event(it)]), compute_views(items), show_attempts,
                      set())
    got = lp.rows_for(False, show_attempts).rows
    assert _shown(got) == _shown(want)
    assert any(r.attempt is not None and r.attempt.failed for r in got) == show_attempts
    assert [shown_view(r) for r in got] == [r.view for r in want]


def test_no_view_is_made_before_its_row_is_shown():
    import tempfile
    path = f"{tempfile.mkdtemp(prefix='sparse-lazy-')}/session.jsonl"     # (a page no other test has shown)
    write_jsonl(path, SessionSynth(seed=7, version=4, p_tool_error=0.1), target_bytes=400_000)
    r = open_reader(path)
    r.build_index()
    ol = build_outline(r)
    seqs = sorted(s for t in ol.turns for s in t.error_seqs)
    where = {s: w for t in ol.turns for s, w in zip(t.error_seqs, t.error_rows)}
    lp = sparse_mod.sparse_job(Job(), r, seqs, where, False, False)
    cards = [row for row in lp.rows_for(False, False).rows if row.view is not None]
    assert len(cards) >= 5
    assert all(type(row.view) is LazyView and not row.view.made for row in cards)
    cards[0].content()                                   # (the row shown: its card laid out)
    assert cards[0].view.made and not any(row.view.made for row in cards[1:])


@pytest.mark.parametrize("path", session_files(REPO.parent / "shared" / "fixtures" / "dsh-next"), ids=str)
def test_lazy_views_are_the_pages_views(path):
    """On every dsh-next fixture (whole log as one page, and every 7 events as pages), each lazy view is the
    view ``views_for_page`` gives, and there is one for the same seqs."""
    r = open_reader(str(path))
    evs = [it for it in r.tail_page(10**6).items if is_event(it)]
    for part in [evs] + [evs[i:i + 7] for i in range(0, len(evs), 7)]:
        want = views_for_page(part)
        got = lazy_views(part)
        assert set(got) == set(want)
        assert {s: v.get() for s, v in got.items()} == want


class Cancelled(Exception):
    pass


def test_the_page_is_frozen_before_the_collector_is_back(errors_log):
    """The job freezes the heap (as the window does once the page is in) before it gives the collector back:
    the page's objects are never walked by a young pass that would free none of them; a cancelled job freezes
    nothing."""
    import gc

    class Cancelling:
        partial = None

        @staticmethod
        def check() -> None:
            raise Cancelled
    gc.unfreeze()
    try:
        with pytest.raises(Cancelled):
            sparse_mod.sparse_job(Cancelling(), *errors_log, False, False)
        assert gc.get_freeze_count() == 0
        page = sparse_mod.sparse_job(Job(), *errors_log, False, False)
        assert gc.isenabled()
        rows = page.rows_for(False, False).rows
        assert gc.get_freeze_count() >= len(page.page.items) + len(rows)
        assert not any(o is rows[0] for o in gc.get_objects())          # (frozen: in no generation)
    finally:
        gc.unfreeze()
