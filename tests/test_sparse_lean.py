"""*Errors only*'s page (issue 29: <= 300 ms on the whole log) builds what its rows show and no more: the
attempt tracker of a page keeps no text (the rows show a failed attempt's text from its own event), and the
rows are the same as with a tracker that keeps it (keys, kinds, marks, ranges, attempts, texts shown)."""
from __future__ import annotations

import pytest

from app.log.fold.attempts import find_attempts
from app.log.format.model import is_event
from app.log.query.outline import build_outline
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history import sparse as sparse_mod
from app.ui.history.rows import build_rows


class Job:
    partial = None

    @staticmethod
    def check() -> None:
        return None


@pytest.fixture(scope="module")
def errors_page(tmp_path_factory):
    p = str(tmp_path_factory.mktemp("sparse-lean") / "session.jsonl")
    write_jsonl(p, SessionSynth(seed=29, version=4, context_window=24_000, p_tool_error=0.05, p_turn_error=0.02),
                target_bytes=1_200_000)
    r = open_reader(p)
    r.build_index()
    ol = build_outline(r)
    seqs = sorted(s for t in ol.turns for s in t.error_seqs)
    where = {s: w for t in ol.turns for s, w in zip(t.error_seqs, t.error_rows)}
    return sparse_mod.sparse_job(Job(), r, seqs, where, False, False)


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
    want = build_rows(items, find_attempts([it for it in items if is_event(it)]), lp.views, show_attempts, set())
    got = lp.rows_for(False, show_attempts).rows
    assert _shown(got) == _shown(want)
    assert any(r.attempt is not None and r.attempt.failed for r in got) == show_attempts
