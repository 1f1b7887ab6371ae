"""The window's row trace from the checkpoints' bookkeeping alone (issue 36).

:func:`app.store.trace_points.window_trace` (the inspector's "why" job) reads of the saved fold
checkpoints only what the trace needs (:func:`app.store.trace_points.trace_points`), never the folds;
its answers equal the from-scratch :func:`app.log.query.trace.trace_event` on generated v0 and v4 logs
with compactions, with no pass over the log; without saved checkpoints it waits (``build=False``:
None) rather than start a second whole-log pass beside the window's.
"""
from __future__ import annotations

import tracemalloc

import pytest

from app.log.index.reader import LogReader
from app.log.query.trace import trace_event
from app.store.trace_points import trace_points, window_trace
from app.tools.synth import SessionSynth, write_jsonl


@pytest.fixture(scope="module", params=[0, 4], ids=["v0", "v4"])
def saved(request, tmp_path_factory):
    """A generated log with compactions, its seq index, checkpoints and surface index saved as the
    window's open and whole-log pass save them; (path, cache folder, its events)."""
    root = tmp_path_factory.mktemp("tp")
    p = root / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=21, version=request.param), target_bytes=3_000_000)
    mp = pytest.MonkeyPatch()
    mp.setenv("SESSION_LENS_CACHE_DIR", str(root / "cache"))
    import app.log.fold.checkpoints as cp_mod
    mp.setattr(cp_mod, "EVERY", 60_000)         # (a checkpoint every 60 KB: dozens in a small log)
    from app.store.indexcache import cached_checkpoints, cached_index
    from app.store.surface_cache import cached_surface
    r = LogReader.open(str(p))
    try:
        assert cached_index(r)[0] is not None
        assert trace_points(r) is None                        # (nothing saved yet)
        cps = cached_checkpoints(r)[0]
        cached_surface(r)
    finally:
        r.close()
    assert len(cps.points) >= 3                # (one at most per index segment of ~1 MB)
    events = LogReader.open(str(p)).events(logical=True)
    assert any(e.type == "compaction/end" for e in events)
    yield str(p), cps, events
    mp.undo()


def test_trace_points_are_the_checkpoints_bookkeeping(saved):
    path, cps, _events = saved
    r = LogReader.open(path)
    try:
        pts = trace_points(r)
    finally:
        r.close()
    assert pts is not None
    assert [(p.seq, p.pos, p.turn_seq, p.dispatches, p.cited, [tuple(t) for t in p.turns]) for p in pts.points] == \
        [(p.seq, p.pos, p.turn_seq, p.dispatches, tuple(p.cited) if p.cited else None, [tuple(t) for t in p.turns])
         for p in cps.points]
    for s in (0, 1, cps.points[2].seq - 1, cps.points[2].seq, cps.points[-1].seq + 5):
        assert pts.nearest_index(s) == cps.nearest_index(s)


def test_window_trace_equals_scratch_without_a_pass_over_the_log(saved, monkeypatch):
    path, _cps, events = saved
    seqs = [e.seq for e in events if not e.synthesized][::max(1, len(events) // 15)]
    want = {s: trace_event(LogReader.open(path), s) for s in seqs}
    import app.log.fold.checkpoints as cp_mod
    import app.log.query.trace as trace_mod

    def no_pass(*a, **kw):
        raise AssertionError("a whole-log pass")
    monkeypatch.setattr(trace_mod, "trace_event", no_pass)
    monkeypatch.setattr(cp_mod, "build_checkpoints", no_pass)
    for s in seqs:
        assert window_trace(path, None, s, build=False) == want[s], s


def test_trace_points_decode_no_fold(saved):
    """The bookkeeping is a small part of the checkpoints: decoding it allocates a fraction of what the
    whole checkpoints take (both read the same file)."""
    path, _cps, _events = saved
    from app.store.indexcache import cached_checkpoints

    def peak(fn) -> int:
        r = LogReader.open(path)
        try:
            tracemalloc.start()
            got = fn(r)
            _cur, top = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            assert got is not None
            return top
        finally:
            r.close()
    light = peak(trace_points)
    whole = peak(lambda r: cached_checkpoints(r, build=False)[0])
    assert light * 2 < whole, (light, whole)


def test_without_saved_checkpoints_the_window_waits_then_builds(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=22, version=0), target_bytes=400_000)
    events = LogReader.open(str(p)).events(logical=True)
    s = events[len(events) // 2].seq
    assert window_trace(str(p), None, s, build=False) is None          # (no pass of its own beside the window's)
    assert window_trace(str(p), None, s, build=True) == trace_event(LogReader.open(str(p)), s)
    assert window_trace(str(p), None, s, build=False) == trace_event(LogReader.open(str(p)), s)   # (now saved)
