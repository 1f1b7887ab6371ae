"""The window's Python heap is flat in the log's size (issue 36).

One window goes through the reading session of ``bench/window_memory.py`` (open, scroll older
pages, whole-log find, outline, go to start) on a generated 4 MB log and on a generated 40 MB
log (the project's generator, same seed; ``SESSION_LENS_MEMORY_SIZES=20MB,200MB`` for the
issue's sizes); the Python heap (``sys.getallocatedblocks``) after the last step may not grow
more than 20 % from the small log to the big one.  Fails on the old code (main at c4f61ee: 1.67x
at 4/40 MB, 1.92x at 20/200 MB): the delegate's row-height cache kept every row laid out (and the
events of every dropped page), a find kept one ``Hit``, the outline one ``TurnEntry`` object each.
Both logs are read in this one process, the big one second: what the first window did not let go
counts on the big log's side (in two fresh processes main reads 1.07x at 4/40 MB, the branch 1.00x)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = int(os.environ.get("SESSION_LENS_MEMORY_PAGES", "6"))   # older pages read by scrolling up (~8 K events a page)
SIZES = os.environ.get("SESSION_LENS_MEMORY_SIZES", "4MB,40MB").split(",")

pytestmark = pytest.mark.slow     # (~20-35 s: two generated logs, each opened, scrolled, searched)


def _generate(path: Path, size: str) -> None:
    import subprocess
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen.py"), str(path), "--size", size, "--seed", "3"],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def _heap_after_steps(path: Path) -> list[dict]:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from window_memory import window_steps
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return window_steps(path, PAGES, 0)


def test_python_heap_flat_from_20mb_to_200mb(tmp_path):
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    _generate(small, SIZES[0])
    _generate(big, SIZES[1])
    try:
        s = _heap_after_steps(small)
        b = _heap_after_steps(big)
    finally:
        big.unlink()
    assert [r["step"] for r in b] == ["open", "scroll", "find", "outline", "start"]
    # the scroll really read the pages, and the big log has more pages than were read
    assert s[1]["pages_loaded"] >= 1 and b[1]["pages_loaded"] >= 1
    small_heap, big_heap = s[-1]["py_blocks"], b[-1]["py_blocks"]
    print(f"heap blocks {SIZES[0]} {[r['py_blocks'] for r in s]} vs {SIZES[1]} {[r['py_blocks'] for r in b]}: "
          f"{big_heap / small_heap:.2f}x")
    assert big_heap <= 1.2 * small_heap, (
        f"Python heap after open/scroll/find/outline/start: {big_heap:,} blocks on {SIZES[1]} vs "
        f"{small_heap:,} on {SIZES[0]} ({big_heap / small_heap:.2f}x; steps {[r['py_blocks'] for r in b]} vs "
        f"{[r['py_blocks'] for r in s]})")
    # scrolling does not keep every page read
    assert b[1]["py_blocks"] <= 1.2 * s[1]["py_blocks"]
