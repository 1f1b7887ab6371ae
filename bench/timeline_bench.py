"""Timeline cost (issue 31): the timeline of a generated log the first time (one pass, then saved) and from the
cache, beside references measured in the same run on the same file: ``cat`` of the file (to /dev/null: reading its
bytes) and the seq index build (:func:`app.store.indexcache.cached_index` into an empty cache: the row scanner in
C, in worker processes).  Medians of N runs at each size, wall and CPU seconds (CPU: this process; the machine is
shared, so CPU time is the steadier figure; ``cat`` and the index run in child processes, compare them by wall
time), each scaled to 1 GB (linearly: the pass and the cache read are linear in rows and spans), with the ratios.
"From the cache" is the spans as :func:`app.store.timeline_cache.cached_spans` returns them; the turns and totals
from their own cache are timed apart.  ``--decode`` adds the exact decode pass (``LogReader.iter_events``) and
``--two`` the first time in two processes (:func:`app.store.timeline_child.split_spans`, forced whatever the size
and load; CPU of both).

Target (issue 31): a 1 GB log in <= 3 s the first time and <= 0.3 s from the cache.  Say the machine's load with
the figures (printed at the start and the end); run 1 GB (``1024``) only on a quiet machine.

    .venv/bin/python bench/timeline_bench.py [SIZES_MB=20,200] [RUNS=3] [VERSION=4] [--decode] [--two]
"""
from __future__ import annotations

import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))       # this tree's ``app``
GB = 1 << 30
NAMES = {"cat": "reference: cat FILE > /dev/null", "index": "reference: seq index build (C scan)",
         "decode": "reference: exact decode pass", "first": "timeline, first time (+ save)",
         "first2": "... in two processes (CPU: both)", "cached": "timeline, from the cache",
         "cached summary": "+ turns and totals from their cache"}
TARGET = {"first": 3.0, "first2": 3.0, "cached": 0.3}


def _fresh_cache() -> str:
    d = tempfile.mkdtemp(prefix="tlbench-cache-")
    os.environ["SESSION_LENS_CACHE_DIR"] = d
    return d


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(p: str, runs: int, decode: bool, two: bool) -> tuple[dict[str, tuple[float, float]], int]:
    """Medians (wall, CPU) per step over ``runs`` runs on the log at ``p``, and the number of spans."""
    from app.log.index.reader import LogReader
    from app.store import timeline_child
    from app.store.indexcache import cached_index
    from app.store.timeline_cache import cached_spans, cached_summary, load_prices
    times: dict[str, list[tuple[float, float]]] = {}
    n_spans = 0

    def timed(key: str, fn: Callable[[], Any]) -> Any:
        gc.collect()                     # (no collection of an earlier step's garbage inside this one)
        w, c, ch = time.perf_counter(), time.process_time(), os.times()
        out = fn()
        ch2 = os.times()
        children = ch2.children_user + ch2.children_system - ch.children_user - ch.children_system
        times.setdefault(key, []).append((time.perf_counter() - w, time.process_time() - c +
                                          (children if key in ("first2", "cat") else 0)))
        return out
    for _ in range(runs):
        c = _fresh_cache()
        timed("cat", lambda: subprocess.run(["cat", p], stdout=subprocess.DEVNULL, check=True))
        r = LogReader.open(p)
        timed("index", lambda: cached_index(r))
        if decode:
            r = LogReader.open(p)
            timed("decode", lambda: sum(1 for _e in r.iter_events(logical=True)))
        r = LogReader.open(p)
        spans, status = timed("first", lambda: cached_spans(r))
        assert status == "built", status
        n_spans = len(spans)
        if two:
            shutil.rmtree(c, ignore_errors=True)
            c = _fresh_cache()
            r = LogReader.open(p)
            saved = timeline_child.SPLIT_MIN, timeline_child.SPLIT_WHEN_BUSY
            timeline_child.SPLIT_MIN, timeline_child.SPLIT_WHEN_BUSY = 0, True      # (two parts, whatever the size)
            try:
                got, status = timed("first2", lambda: cached_spans(r))
            finally:
                timeline_child.SPLIT_MIN, timeline_child.SPLIT_WHEN_BUSY = saved
            assert status == "built" and got == spans, status
            del got
        del spans
        r = LogReader.open(p)
        spans, status = timed("cached", lambda: cached_spans(r))
        assert status == "hit" and len(spans) == n_spans, status
        cached_summary(r, spans, load_prices())                        # (saved)
        r = LogReader.open(p)
        _s, how = timed("cached summary", lambda got=spans: cached_summary(r, got, load_prices()))
        assert how == "hit", how
        del spans
        shutil.rmtree(c, ignore_errors=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    return med, n_spans


def report(mb: int, runs: int, version: int, decode: bool, two: bool) -> None:
    from app.tools.synth import SessionSynth, write_jsonl
    d = tempfile.mkdtemp(prefix="tlbench-")
    try:
        p = os.path.join(d, "session.jsonl")
        info = write_jsonl(p, SessionSynth(seed=5, version=version), target_bytes=mb << 20)
        size = os.path.getsize(p)
        load0 = _load()
        med, n_spans = measure(p, runs, decode, two)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    scale = GB / size
    print(f"\nlog v{version}: {size / 1e6:.1f} MB, {info['rows']:,} rows, {info['events']:,} events, {n_spans:,} spans; "
          f"medians of {runs}; load average {load0} at the start, {_load()} at the end")
    print(f"{'':40} {'wall':>8} {'CPU':>8}   {'1 GB wall':>9} {'1 GB CPU':>9}")
    for k in NAMES:
        if k not in med:
            continue
        w, c = med[k]
        line = f"{NAMES[k]:40} {w:8.3f} {c:8.3f}   {w * scale:9.2f} {c * scale:9.2f}"
        if k in TARGET:
            line += (f"   target {TARGET[k]} s/GB; {w / med['cat'][0]:.1f}x cat, {w / med['index'][0]:.2f}x the index"
                     f" (wall)")
        print(line)


def main(argv: list[str]) -> None:
    flags = {a for a in argv if a.startswith("--")}
    args = [a for a in argv if not a.startswith("--")]
    sizes = [int(x) for x in (args[0] if args else "20,200").split(",")]
    runs = int(args[1]) if len(args) > 1 else 3
    version = int(args[2]) if len(args) > 2 else 4
    for mb in sizes:
        report(mb, runs, version, "--decode" in flags, "--two" in flags)


if __name__ == "__main__":
    main(sys.argv[1:])
