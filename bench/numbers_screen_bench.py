"""The fast paths' row screen (issue 27: a number the exact decoder refuses sends the row the exact way): what the
screen costs beside the checks it replaced, and what it does to ``inspect``'s fast path, on a generated log.

Figures (medians of N runs, same log, same run):
* the screen of every row of the log, in C (``screen_rows``), against the bytes checks fastrows made before (size,
  depth, UTF-8: ``refused_split``'s C-level passes without the number test) and against the interpreted screen
  (those checks, ``hint`` and ``number_refused``); the same row by row (``row_refused``, what ``accepts`` and the
  surface index's feeder call) against the old checks of one row;
* ``inspect`` fast with the new screen against ``inspect`` fast with the old checks, and the exact path
  (``fast=False``) as the reference both are measured against.

Usage: ``python bench/numbers_screen_bench.py [MB] [RUNS] [VERSION]`` (defaults 20 MB, 3 runs, v0)."""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from app.log.format import fastrows, rowscreen
from app.log.query import analysis
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl


def _median(fn: Callable[[], Any], runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def _without(hint: bool, native: bool) -> tuple[Any, Any]:
    """Patch the screen to the old checks (``hint`` False: no number test) or the interpreted one."""
    saved = rowscreen.c_screens, rowscreen.hinted
    if not native:
        rowscreen.c_screens = lambda: (None, None)          # type: ignore[assignment]
    if not hint:
        rowscreen.hinted = lambda rows: set()               # type: ignore[assignment]
    return saved


def _restore(saved: tuple[Any, Any]) -> None:
    rowscreen.c_screens, rowscreen.hinted = saved           # type: ignore[assignment]


def main(mb: int = 20, runs: int = 3, version: int = 0) -> None:
    d = tempfile.mkdtemp(prefix="numbench-")
    p = os.path.join(d, "session.jsonl")
    info = write_jsonl(p, SessionSynth(seed=5, version=version), target_bytes=mb << 20)
    data = open(p, "rb").read()
    data = data[:data.rfind(b"\n") + 1]
    rows = data.split(b"\n")[:-1]
    screen = _median(lambda: fastrows.refused_split(data, rows), runs)
    saved = _without(hint=False, native=False)
    old = _median(lambda: fastrows.refused_split(data, rows), runs)
    _restore(saved)
    saved = _without(hint=True, native=False)
    interp = _median(lambda: fastrows.refused_split(data, rows), runs)
    _restore(saved)
    one_new = _median(lambda: [fastrows.row_refused(r) for r in rows], runs)
    saved = _without(hint=False, native=False)
    one_old = _median(lambda: [fastrows.row_refused(r) for r in rows], runs)
    _restore(saved)
    exact = _median(lambda: analysis.inspect(open_reader(p), fast=False), runs)
    fast_new = _median(lambda: analysis.inspect(open_reader(p), fast=True), runs)
    saved = _without(hint=False, native=False)
    fast_old = _median(lambda: analysis.inspect(open_reader(p), fast=True), runs)
    _restore(saved)
    print(f"log v{version} {info['bytes'] / 1e6:.1f} MB, {len(rows)} rows; medians of {runs} runs; "
          f"load (1/5/15 min) {os.getloadavg()}")
    print(f"old bytes checks (size, depth, UTF-8) of every row: {old * 1e3:8.1f} ms (reference)")
    print(f"screen in C (those and numbers):                    {screen * 1e3:8.1f} ms  ratio {screen / old:.2f}x")
    print(f"interpreted screen (old checks + hint prefilter):   {interp * 1e3:8.1f} ms  ratio {interp / old:.2f}x")
    print(f"row by row (accepts, surface feeder), old checks:   {one_old * 1e3:8.1f} ms (reference)")
    print(f"row by row, the screen in C (row_refused):          {one_new * 1e3:8.1f} ms  ratio {one_new / one_old:.2f}x")
    print(f"inspect exact (fast=False):                         {exact:8.3f} s  (reference)")
    print(f"inspect fast, old checks:                           {fast_old:8.3f} s  ratio {fast_old / exact:.2f}x")
    print(f"inspect fast, the screen:                           {fast_new:8.3f} s  ratio {fast_new / exact:.2f}x "
          f"({fast_new / fast_old:.2f}x the old fast path)")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
