"""Issue 36: the background pass does not send the window the surface index it saved.  It says so
(``("surface", None)``) and the window's surface job reads the index from its cache file, its columns a map
of the file (not the window's anonymous memory); an index the pass could not save is sent as before.  Either way
the window's row statuses are those of the index built alone."""
from __future__ import annotations

import msgspec
import pytest

from app.log.fold.surface import ScanEnd, SurfaceIndex, extend_index
from app.log.index.reader import LogReader
from app.tools.synth import SessionSynth, write_jsonl

from test_ui_history import WAIT, make_window, open_and_wait  # noqa: F401 (fixtures)


@pytest.fixture
def log(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))   # (nothing cached: a first open)
    monkeypatch.setenv("SESSION_LENS_SCAN_INPROC", "1")
    path = tmp_path / "session.v4.jsonl"
    write_jsonl(str(path), SessionSynth(seed=29, version=4, context_window=12_000), target_bytes=500_000)
    return path


def _state(idx):
    from app.ui.history.compaction import SUMMARY_BLOCK, summary_of
    st = idx.to_state()
    cols = {k: list(v) for k, v in (st.columns or {}).items()}
    st.columns = None
    out = msgspec.to_builtins(st)
    for rec, c in zip(idx.compactions, out["compactions"]):
        c["summary"] = summary_of(idx, rec)
        c.pop(SUMMARY_BLOCK, None)
    return out, cols


def _pass_messages(path):
    from app.store.scan_child import scan
    msgs: list = []
    ol = scan("outline", str(path), None, {}, msgs.append)
    assert ol.complete
    return [m for m in msgs if m[0] == "surface"]


def test_the_pass_sends_none_for_a_saved_index_and_the_index_when_not_saved(log, monkeypatch):
    from app.store import surface_cache
    from app.store.faces import open_reader
    want = extend_index(LogReader.open(str(log)), SurfaceIndex(4), None, ScanEnd())
    assert want.compactions
    assert _pass_messages(log) == [("surface", None)]
    r = open_reader(str(log), None)
    assert surface_cache.surface_on_disk(r)
    got, how = surface_cache.cached_surface(r, make=lambda end: pytest.fail("read again"))
    assert how == "hit" and isinstance(got.fold.columns.shadowed, memoryview)      # (a map of the file)
    assert _state(got) == _state(want)
    r.close()

    def fail(*_a, **_k):
        raise OSError("disk full")
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(log.parent / "cache2"))
    monkeypatch.setattr(surface_cache, "_save_surface", fail)
    (msg,) = _pass_messages(log)
    assert isinstance(msg[1], SurfaceIndex) and _state(msg[1]) == _state(want)


def test_a_saved_index_of_another_revision_is_not_on_disk(log):
    from app.store.faces import open_reader
    from app.store.surface_cache import surface_on_disk
    assert _pass_messages(log) == [("surface", None)]
    with open(log, "ab") as f:             # (the log grew: the saved index is no longer this revision's)
        f.write(b"\n")
    r = open_reader(str(log), None)
    try:
        assert not surface_on_disk(r)
    finally:
        r.close()


@pytest.mark.parametrize("saved", [True, False])
def test_the_window_takes_the_saved_index_from_its_file(qtbot, make_window, log, monkeypatch, saved):  # noqa: F811
    from app.store import surface_cache
    want = extend_index(LogReader.open(str(log)), SurfaceIndex(4), None, ScanEnd())
    if not saved:
        def fail(*_a, **_k):
            raise OSError("disk full")
        monkeypatch.setattr(surface_cache, "_save_surface", fail)
    win = make_window(page_size=20)
    with qtbot.waitSignal(win.go_actions.outlineReady, timeout=WAIT * 4):
        h = open_and_wait(qtbot, win, log)
    qtbot.waitUntil(lambda: h.window.sindex is not None, timeout=WAIT * 2)
    qtbot.waitUntil(lambda: not win.jobs.busy, timeout=WAIT * 2)
    assert isinstance(h.window.sindex.fold.columns.shadowed, memoryview) == saved
    assert _state(h.window.sindex) == _state(want)
    from app.ui.history.compaction import page_surface_of
    assert all(lp.surface == page_surface_of(want, lp.page) for lp in h.window.pages)
