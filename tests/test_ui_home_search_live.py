"""The window's home search while the index is being built (issue 32 item 1): the results come
from the index where it is current and from a scan elsewhere, every hit once, and the line under
the results says how many sessions are still being indexed."""
from __future__ import annotations

import threading

import pytest

from app.store import ftswrite
from app.store.fulltext import FullTextIndex
from app.tools.plant import make_home
from app.ui import home_search as hs_mod
from tests.fixtures_util import FIXTURES

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "home"
    m = make_home(str(root), str(FIXTURES), copies=1, planted=3)
    m["root"] = str(root)
    with FullTextIndex(str(root), db_path=str(tmp_path / "ref.sqlite")) as ref:
        ref.update(workers=0)
        m["ref"] = sorted((h.session_key, h.seq, h.kind) for h in ref.search("the", limit=5000).hits)
    return m


def _hits(model):
    out = []
    for g in range(model.rowCount()):
        gi = model.index(g, 0)
        out += [model.hit_at(model.index(r, 0, gi)) for r in range(model.rowCount(gi))]
    return out


@pytest.mark.slow
def test_results_while_the_index_builds_say_what_is_not_indexed(qtbot, win, home, monkeypatch):
    monkeypatch.setattr(ftswrite, "_COMMIT_SESSIONS", 20)
    go = threading.Event()
    real = hs_mod.index_job

    def paused_index_job(job, root, db_path):           # the window's build, held half-way
        with hs_mod._open_index(root, db_path) as ix:
            def progress(done, total, _n):
                job.progress.emit(int(done), int(total))
                job.partial.emit((int(done), int(total)))      # (the sessions line; progress: the pane)
                if done == 45:
                    go.wait(60)
            rep = ix.update(progress=progress, cancel=lambda: job.cancelled, workers=0)
            return rep, ix.indexed_count(), len(ix.session_problems())
    monkeypatch.setattr(hs_mod, "index_job", paused_index_job)
    with qtbot.waitSignal(win.storeLoaded, timeout=WAIT):
        win.open_store(home["root"], remember=False)
    hs = win.home_search
    hs.update_index()
    qtbot.waitUntil(lambda: hs.building is not None and hs.building[0] >= 45, timeout=WAIT)
    try:
        hs.panel.edit.setText("the")
        with qtbot.waitSignal(hs.resultsReady, timeout=WAIT):
            hs.run_query()
        res = hs.model.result
        assert res.build == "running" and res.unindexed and not res.partial
        keys = sorted((h.session_key, h.seq, h.kind) for h in _hits(hs.model))
        assert len(set(keys)) == len(keys) and set(keys) <= set(home["ref"])
        assert res.total == len(home["ref"])              # limit 200 shown, every match counted once
        summary = hs.panel.summary.text()
        assert f"{len(res.unindexed):,} sessions being indexed: searched by a scan" in summary
        # a hit the user selected stays selected while more answers stream in (the model is reset)
        view = hs.panel.results
        picked = _hits(hs.model)[3]
        view.setCurrentIndex(hs.model.index_of_hit(picked.session_key, picked.seq, picked.kind))
        hs._on_results("the", res, final=False)
        now = hs.model.hit_at(view.currentIndex())
        assert (now.session_key, now.seq, now.kind) == (picked.session_key, picked.seq, picked.kind)
    finally:
        go.set()
    monkeypatch.setattr(hs_mod, "index_job", real)
    qtbot.waitUntil(lambda: hs.building is None, timeout=WAIT)
    with qtbot.waitSignal(hs.resultsReady, timeout=WAIT):
        hs.run_query()
    assert not hs.model.result.unindexed and "scan" not in hs.panel.summary.text()


@pytest.mark.slow
def test_an_index_whose_build_did_not_finish_says_so_in_the_window(qtbot, win, home, monkeypatch):
    from app.store.fulltext import index_path_for
    monkeypatch.setattr(ftswrite, "_COMMIT_SESSIONS", 20)
    with FullTextIndex(home["root"]) as ix:                 # a build stopped after 40 sessions
        assert ix.db_path == index_path_for(home["root"])
        rep = ix.update(cancel=lambda: ix.indexed_count() >= 40, workers=0)
        assert rep.cancelled and ix.build_state() == "interrupted"
        left = len(ix.pending())
    assert left > 0
    with qtbot.waitSignal(win.storeLoaded, timeout=WAIT):
        win.open_store(home["root"], remember=False)
    hs = win.home_search
    qtbot.waitUntil(lambda: hs.behind is not None, timeout=WAIT)
    assert hs.panel.status.text() == f"the index build did not finish: {left:,} sessions not indexed (searched by a scan)"
    hs.ready_root = hs.root                                 # no automatic update: the answer as the index is
    with qtbot.waitSignal(hs.resultsReady, timeout=WAIT):
        hs.search("the")
    assert hs.model.result.total == len(home["ref"])
    assert f"{left:,} sessions not indexed (the index build did not finish): searched by a scan" \
        in hs.panel.summary.text()
