"""The window's seq index is read through a map of its cache file (issue 36).

A saved index used as is (a cache hit, and the index the scan child just saved) holds its arrays
as read-only views of a map of the ``.idx`` file: file-backed pages, not the window's anonymous
memory, and not the Python heap (``tracemalloc``).  It answers as the index scanned afresh; it
travels to a child as arrays; a grown log copies the arrays out of the map before its rows are
added.  On the old code the loaded arrays were copies on the Python heap (``array`` objects)."""
from __future__ import annotations

import mmap
import pickle
import random
import tracemalloc

import pytest

from app.log.index.mapped import INDEX_ARRAYS, MappedArray
from app.log.index.reader import LogReader
from app.store.indexcache import cached_index
from app.store.indexer import build_index_inproc, build_index_isolated
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history.pages import mapped_twin

ARRAYS = [name for name, _ in INDEX_ARRAYS]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))


def _log(path, size: int, seed: int = 3):
    write_jsonl(str(path), SessionSynth(seed=seed), target_bytes=size)
    return path


def _fields(idx) -> tuple:
    return tuple(list(getattr(idx, n)) for n in ARRAYS) + \
        (idx.monotonic, idx.events, idx.last, idx.contiguous_through)


def _in_map(idx) -> bool:
    return all(isinstance(getattr(idx, n), MappedArray) and isinstance(getattr(idx, n).view.obj, mmap.mmap)
               for n in ARRAYS)


def test_a_saved_index_is_used_from_a_map_of_its_file_not_the_heap(tmp_path):
    p = _log(tmp_path / "s.jsonl", 16 << 20)
    ref = LogReader.open(str(p)).build_index_exact()
    assert len(ref) >= 3 and len(ref.mark_seq) > 2000
    idx1, st1 = cached_index(LogReader.open(str(p)))
    assert st1 == "built" and not idx1.mapped()
    r = LogReader.open(str(p))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        idx, st = cached_index(r)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert st == "hit" and _in_map(idx) and r.index is idx
    arrays = sum(len(getattr(idx, n)) * getattr(idx, n).itemsize for n in ARRAYS)
    # the arrays are not on the Python heap (old code: copies, at least their size)
    assert grown < arrays / 2, (grown, arrays)
    assert _fields(idx) == _fields(ref)
    # it answers as the fresh index: locate, marks, the bisect of the first seqs
    for s in random.Random(5).sample(range(ref.events), 50) + [0, ref.last]:
        assert idx.locate(s) == ref.locate(s)
    assert list(idx.marks(ref.events // 3, ref.events // 2)) == list(ref.marks(ref.events // 3, ref.events // 2))
    # and reads as an array: count, index, slices, equality
    assert idx.mark_code.count(0) == ref.mark_code.count(0) > 0 and idx.mark_code.index(2) == ref.mark_code.index(2)
    assert list(idx.mark_seq[10:20]) == list(ref.mark_seq[10:20]) and idx.mark_seq == ref.mark_seq
    assert idx.mark_seq[-1] == ref.mark_seq[-1] and idx.mark_seq.tolist() == ref.mark_seq.tolist()
    # a pickled copy (a child's request) carries arrays of its own, equal
    back = pickle.loads(pickle.dumps(idx))
    assert not back.mapped() and _fields(back) == _fields(ref)
    # rows added: the arrays are copied out of the map first
    idx.add(idx.seg_end[-1], idx.seg_end[-1] + 10, ref.last + 1, ref.last + 1, None, 1, 1)
    assert not idx.mapped() and len(idx) == len(ref) + 1 and list(idx.first_seq[:-1]) == list(ref.first_seq)


def test_a_grown_log_extends_a_mapped_index_exactly(tmp_path):
    full = _log(tmp_path / "full.jsonl", 3 << 20).read_bytes()
    cut = full.index(b"\n", len(full) // 2) + 1
    p = tmp_path / "s.jsonl"
    p.write_bytes(full[:cut])
    cached_index(LogReader.open(str(p)))
    assert _in_map(cached_index(LogReader.open(str(p)))[0])
    with open(p, "ab") as f:
        f.write(full[cut:])
    idx, st = cached_index(LogReader.open(str(p)))
    ref = LogReader.open(str(p)).build_index_exact()
    assert st == "extended" and not idx.mapped()
    assert (list(idx.mark_seq), list(idx.mark_code), idx.events, idx.last, idx.seg_end[-1]) == \
        (list(ref.mark_seq), list(ref.mark_code), ref.events, ref.last, ref.seg_end[-1])
    again, st2 = cached_index(LogReader.open(str(p)))
    assert st2 == "hit" and _in_map(again) and _fields(again) == _fields(idx)


def test_the_window_keeps_the_index_the_child_saved_through_a_map(tmp_path):
    p = _log(tmp_path / "session.jsonl", 3 << 20)
    idx, mode = build_index_isolated(str(p))
    assert mode == "process" and not idx.mapped()            # (unpickled from the child: arrays)
    twin = mapped_twin(str(p), None, idx)
    assert twin is not idx and _in_map(twin)
    assert _fields(twin) == _fields(idx) == _fields(build_index_inproc(str(p), None))
    # a log changed since the child's scan: its own index is kept
    with open(p, "ab") as f:
        f.write(b'{"type":"agent/turn/start","seq":999999999}\n')
    assert mapped_twin(str(p), None, idx) is idx
