"""Issue 36: the background pass's memory (the scan child's "outline" task) does not grow with the log
beyond its products.

The fold checkpoints' builder folds the surface keeping the events of its nodes; the events of nodes a
replacement (a compaction) shadowed were held until the next checkpoint, so between two points its
memory grew with the log.  Here the points are set far apart (one point: the whole log is one interval)
and the pass's peak traced memory, less what its products hold at the end, is compared on generated
logs (with compactions) of 1 MB and 4 MB: it must not grow with the log (the old code: 2.8x)."""
from __future__ import annotations

import tracemalloc
from pathlib import Path

import msgspec

from app.log.fold.checkpoints import Checkpoint, build_checkpoints
from app.log.index.reader import LogReader
from app.log.query.ahead import build_ahead
from app.store.ahead_cache import cached_ahead
from app.store.indexcache import cached_checkpoints
from app.tools.synth import SessionSynth, write_jsonl

FAR = 1 << 40          # checkpoint spacing: one point for the whole log


def _transient(path: Path) -> tuple[int, int]:
    """(peak traced bytes of the pass less the bytes held at its end, checkpoints made)."""
    reader = LogReader.open(str(path))
    tracemalloc.start()
    try:
        ahead = build_ahead(reader, every=FAR)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert ahead.complete
    return peak - held, len(ahead.checkpoints.points)


def test_pass_memory_does_not_grow_between_checkpoints(tmp_path: Path) -> None:
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    write_jsonl(str(small), SessionSynth(seed=3, context_window=12_000), target_bytes=1 << 20)
    st = write_jsonl(str(big), SessionSynth(seed=3, context_window=12_000), target_bytes=4 << 20)
    assert st["turns"] > 100
    t_small, n_small = _transient(small)
    t_big, n_big = _transient(big)
    assert n_small == n_big == 1
    assert t_big < 2 * t_small, (t_small, t_big)



def test_checkpoints_streamed_to_the_same_cache_file(tmp_path: Path, monkeypatch) -> None:
    """The pass hands each final checkpoint on (it holds one), and the ``.folds`` file it streams is byte
    for byte the one :func:`cached_checkpoints` writes from its own build; a cancelled pass leaves none."""
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    log = tmp_path / "s.jsonl"
    write_jsonl(str(log), SessionSynth(seed=11, context_window=12_000), target_bytes=3 << 20)
    given: list[Checkpoint] = []
    held = build_ahead(LogReader.open(str(log)), sink=given.append).checkpoints.points
    whole = build_checkpoints(LogReader.open(str(log)))
    assert len(held) == 1 and len(given) >= 1
    assert msgspec.to_builtins(given + held) == whole.to_builtins()

    reader = LogReader.open(str(log))
    assert cached_ahead(reader, cancel=lambda: True)[1].get("cancelled")
    assert not list((tmp_path / "cache").rglob("*.folds"))
    _, status = cached_ahead(LogReader.open(str(log)))
    assert status["checkpoints"] == "built"
    (folds,) = (tmp_path / "cache").rglob("*.folds")
    streamed = folds.read_bytes()
    folds.unlink()
    cps, st = cached_checkpoints(LogReader.open(str(log)))
    assert st == "built" and folds.read_bytes() == streamed
    assert cached_checkpoints(LogReader.open(str(log)))[1] == "hit"
