"""Issue 29: a first open reads the log once.  The window's row statuses take the whole-log pass's surface
index (:mod:`app.store.ahead_cache`, handed over by the ``scan`` child) instead of a surface job reading the
log beside it; a reopen takes it from the cache; a pass that ends without one (cancelled) still gets the
statuses, read as before."""
from __future__ import annotations

import msgspec
import pytest

from app.log.fold.surface import ScanEnd, SurfaceIndex, extend_index
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.tools.synth import SessionSynth, write_jsonl

from test_ui_history import WAIT, make_window, open_and_wait  # noqa: F401 (fixtures)


@pytest.fixture
def log(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))   # (nothing cached: a first open)
    monkeypatch.setenv("SESSION_LENS_SCAN_INPROC", "1")         # (the pass in this process: its reads counted)
    path = tmp_path / "session.v4.jsonl"
    write_jsonl(str(path), SessionSynth(seed=23, version=4, context_window=12_000), target_bytes=600_000)
    return path


def _count_whole_reads(monkeypatch) -> list:
    """Forward reads of the log from its first row to its end (whoever makes them), one entry each."""
    reads: list = []
    fwd = RawJsonlSource.forward

    def forward(self, pos=None, *a, **kw):
        start = self.header_end if pos is None else pos
        seen = 0
        for seg in fwd(self, pos, *a, **kw):
            seen = seg.end
            yield seg
        if start <= self.header_end and seen >= self.size:
            reads.append(start)
    monkeypatch.setattr(RawJsonlSource, "forward", forward)
    return reads


def _state(idx):
    from app.ui.history.compaction import SUMMARY_BLOCK, summary_of
    st = idx.to_state()
    cols = {k: list(v) for k, v in (st.columns or {}).items()}
    st.columns = None
    out = msgspec.to_builtins(st)
    for rec, c in zip(idx.compactions, out["compactions"]):    # (the window's summaries: out of line, issue 36)
        c["summary"] = summary_of(idx, rec)
        c.pop(SUMMARY_BLOCK, None)
    return out, cols


def _wait_all(qtbot, win, path):
    with qtbot.waitSignal(win.go_actions.outlineReady, timeout=WAIT * 4):
        h = open_and_wait(qtbot, win, path)
    qtbot.waitUntil(lambda: h.window.sindex is not None, timeout=WAIT * 2)
    qtbot.waitUntil(lambda: not win.jobs.busy, timeout=WAIT * 2)
    return h


def test_first_open_reads_the_log_once(qtbot, make_window, log, monkeypatch):  # noqa: F811
    want = extend_index(LogReader.open(str(log)), SurfaceIndex(4), None, ScanEnd())
    assert want.compactions
    reads = _count_whole_reads(monkeypatch)
    win = make_window(page_size=20)
    h = _wait_all(qtbot, win, log)
    assert len(reads) == 1, f"the log was read whole {len(reads)} times on a first open"
    assert _state(h.window.sindex) == _state(want)
    from app.ui.history.compaction import page_surface_of
    assert all(lp.surface == page_surface_of(want, lp.page) for lp in h.window.pages)
    shown = [r.surface for r in h.window.all_rows if r.event is not None and not r.synthesized]
    assert sum(s is not None for s in shown) > len(shown) // 2, "the loaded rows have their statuses"
    reads.clear()
    h2 = _wait_all(qtbot, make_window(page_size=20), log)            # a reopen: everything from the cache
    assert reads == [] and _state(h2.window.sindex) == _state(want)


def test_a_cancelled_pass_still_gets_the_statuses(qtbot, make_window, log, monkeypatch):  # noqa: F811
    import app.store.ahead_cache as ac
    real = ac.build_ahead

    def cut_short(reader, progress=None, cancel=None):
        return real(reader, progress, lambda: True)               # (as a Cancel at its first look)
    want = extend_index(LogReader.open(str(log)), SurfaceIndex(4), None, ScanEnd())
    monkeypatch.setattr(ac, "build_ahead", cut_short)
    reads = _count_whole_reads(monkeypatch)
    win = make_window(page_size=20)
    h = open_and_wait(qtbot, win, log)
    qtbot.waitUntil(lambda: h.window.sindex is not None, timeout=WAIT * 2)
    assert _state(h.window.sindex) == _state(want)
    assert len(reads) == 1                    # (the cancelled pass stopped early; the statuses read it whole)


def test_the_pass_in_its_child_hands_the_index_over(qtbot, make_window, log, monkeypatch):  # noqa: F811
    """With the pass in its own process (as the window runs it), the statuses arrive pickled from the child and
    the window's process reads the log whole not once."""
    monkeypatch.setenv("SESSION_LENS_SCAN_INPROC", "0")
    want = extend_index(LogReader.open(str(log)), SurfaceIndex(4), None, ScanEnd())
    reads = _count_whole_reads(monkeypatch)
    h = _wait_all(qtbot, make_window(page_size=20), log)
    assert reads == [] and _state(h.window.sindex) == _state(want)


def test_a_reopen_with_the_pass_in_its_child_still_gets_the_outline(qtbot, make_window, log, monkeypatch):  # noqa: F811
    """A reopen finds the surface index in the cache, where it is read lazily (views of the cache file, which
    cannot be pickled): the child must not hand that one over, or the whole pass fails and the outline, F8 and
    the problems never come."""
    monkeypatch.setenv("SESSION_LENS_SCAN_INPROC", "0")
    want = extend_index(LogReader.open(str(log)), SurfaceIndex(4), None, ScanEnd())
    _wait_all(qtbot, make_window(page_size=20), log)                    # (the first open fills the cache)
    win = make_window(page_size=20)
    h = _wait_all(qtbot, win, log)
    assert win.go_actions.outline is not None and win.go_actions.outline.complete
    assert _state(h.window.sindex) == _state(want)
