"""A loaded page's surface statuses hold one shared dict for the plain "log-only" status (issue 36).

Most events of a page are chunks and other non-surface types, all "log-only"; one dict each was
about a tenth of a loaded page's heap (1.3 MB a page on the bench's 20 MB log).  On the project's
generated log, with its surface index (compactions, replaced rows): every plain log-only status
of a page is the one shared dict, the other statuses are those the core computes (equal to
``page_surface``), and a row shows the same status as before.  Fails on the old code: one dict
per event."""
from __future__ import annotations

from app.log.fold.surface import page_surface
from app.log.format.model import is_event
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history.compaction import LOG_ONLY, page_surface_of
from app.ui.history.pages import surface_job

from test_jump_window import _tail
from test_row_window import JOB


def test_plain_log_only_statuses_are_one_shared_dict(tmp_path):
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=5, context_window=24_000), turns=30)
    reader, sh = _tail(str(path), page_size=20)
    sindex = surface_job(JOB, str(path), None)
    try:
        page = sh.w.pages[-1].page
        got = page_surface_of(sindex, page)
        items = [it for it in page.items if is_event(it)] + list(page.closure or [])
        assert got == page_surface(sindex, items)
        plain = [st for st in got.values() if st == {"surface": "log-only"}]
        assert len(plain) > 100, "the page holds many chunk and other log-only events"
        assert all(st is LOG_ONLY for st in plain)
        assert {st["surface"] for st in got.values()} >= {"log-only", "current"}
    finally:
        reader.close()
