"""The seq index built in a child process (app.store.indexer) equals the in-process scan."""
from __future__ import annotations

import pytest

from app.store.faces import open_reader
from app.store.indexer import IndexFailed, build_index_inproc, build_index_isolated
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import session_files

INDEX_FIELDS = ("seg_pos", "seg_end", "first_seq", "last_seq", "line0", "rows", "monotonic", "events",
                "last", "contiguous_through", "mark_seq", "mark_code")


@pytest.fixture(autouse=True)
def _empty_index_cache(tmp_path, monkeypatch):
    """No saved index: every build below is a scan (the saved one is tested in test_index_cache)."""
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))


def _fields(idx) -> dict:
    return {k: (list(v) if not isinstance(v, (int, bool)) else v) for k, v in
            ((k, getattr(idx, k)) for k in INDEX_FIELDS)}


@pytest.mark.parametrize("path", session_files()[::17], ids=lambda p: p.parent.name + "/" + p.name)
@pytest.mark.slow
def test_child_index_equals_inprocess(path):
    idx, mode = build_index_isolated(str(path))
    assert mode == "process"
    assert _fields(idx) == _fields(build_index_inproc(str(path), None))


def test_child_index_of_a_multi_segment_log_drives_event_at(tmp_path):
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(3), target_bytes=3 << 20)        # several 1 MiB segments
    seen = []
    idx, mode = build_index_isolated(str(p), progress=lambda d, t: seen.append((d, t)))
    assert mode == "process" and len(idx.seg_pos) >= 3
    assert _fields(idx) == _fields(build_index_inproc(str(p), None))
    assert all(0 <= d <= t for d, t in seen)
    r = open_reader(str(p))
    try:
        r.index = idx
        mid = idx.events // 2
        ev = r.event_at(mid)
        assert ev is not None and ev.seq == mid
    finally:
        r.close()


def test_missing_file_is_reported_not_raised_from_the_child(tmp_path):
    with pytest.raises(IndexFailed) as e:
        build_index_isolated(str(tmp_path / "nope" / "session.jsonl"))
    assert "no such file" in str(e.value).lower() and "nope" in str(e.value)


def test_cancel_kills_the_child(tmp_path):
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(5), target_bytes=2 << 20)
    with pytest.raises(InterruptedError):
        build_index_isolated(str(p), cancelled=lambda: True)


def test_inproc_switch(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_INDEX_INPROC", "1")
    path = session_files()[0]
    idx, mode = build_index_isolated(str(path))
    assert mode == "thread" and idx.events > 0


def test_a_saved_index_is_taken_without_a_child(tmp_path):
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(4), target_bytes=1 << 20)
    first, mode1 = build_index_isolated(str(p))
    again, mode2 = build_index_isolated(str(p))
    assert (mode1, mode2) == ("process", "cache")
    assert _fields(first) == _fields(again) == _fields(build_index_inproc(str(p), None))
