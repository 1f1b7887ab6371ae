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

from app.log.index.reader import LogReader
from app.log.query.ahead import build_ahead
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

