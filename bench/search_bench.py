#!/usr/bin/env python3
"""Search benchmarks: whole-log ``find`` against ``grep -c``, and the home full-text index.

    python bench/search_bench.py [--sizes 100MB,1GB] [--sessions 10000] [--runs 3] [--skip-find|--skip-fts]

* find: generated logs (``app.tools.plant.PlantingSynth``, words planted at known seqs) of each
  size; per word, ``grep -c WORD FILE`` (the reference, same run, same warm page cache) and
  ``app.log.search.find`` in this process (the interpreter already started), medians of
  ``--runs``; also the time to the first hit and ``grep -ci`` vs a case-insensitive find.
* fts: the home full-text index rows of ``bench/home_search_bench.py`` (first build against a raw
  read of the same files, queries, incremental update).

Generated inputs go to bench/data/ (git-ignored) and are reused.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.log.reader import LogReader  # noqa: E402
from app.log.search import FindOptions, FindStats, find  # noqa: E402
from app.tools.plant import PlantingSynth  # noqa: E402
from app.tools.synth import parse_size, write_jsonl  # noqa: E402

DATA = REPO / "bench" / "data"


def med(xs):
    return statistics.median(xs)


def gen_log(size: str) -> tuple:
    target = parse_size(size)
    path = DATA / f"search-{size}.jsonl"
    meta = DATA / f"search-{size}.json"
    if path.exists() and meta.exists():
        return str(path), {k: tuple(v) for k, v in json.loads(meta.read_text())["planted"].items()}
    DATA.mkdir(parents=True, exist_ok=True)
    # plant past the middle: at a turn about 60% through (the synth writes ~35 KB per turn)
    at_turn = max(2, int(target / 35_000 * 0.6))
    s = PlantingSynth(seed=23, at_turn=at_turn)
    t0 = time.perf_counter()
    st = write_jsonl(str(path), s, target_bytes=target)
    if len(s.planted) < len(s.plants):           # the log ended before every word found a place
        s2 = PlantingSynth(seed=23, at_turn=2)
        st = write_jsonl(str(path), s2, target_bytes=target)
        s = s2
    meta.write_text(json.dumps({"planted": s.planted, "stats": st}))
    print(f"  generated {path.name}: {st['bytes'] / 1e6:.0f} MB, {st['turns']} turns in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    return str(path), dict(s.planted)


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def time_grep(word: str, path: str, ci: bool = False) -> tuple:
    """(wall s, CPU s of the child: user + system, matching lines) of ``grep -c [-i] -F WORD FILE``."""
    cmd = ["grep", "-c"] + (["-i"] if ci else []) + ["-F", "--", word, path]
    c0 = os.times()
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True)
    dt = time.perf_counter() - t0
    c1 = os.times()
    return dt, (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system), int(r.stdout or 0)


def time_find(word: str, path: str, case: bool = True) -> tuple:
    """(wall s, CPU s of this process, hits, first hit s, FindStats) of ``find`` in this process."""
    r = LogReader.open(path)
    st = FindStats()
    c0 = time.process_time()
    t0 = time.perf_counter()
    first = None
    n = 0
    for _h in find(r, FindOptions(word, case=case), stats=st):
        if first is None:
            first = time.perf_counter() - t0
        n += 1
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    r.close()
    return dt, cpu, n, first, st


def bench_find(sizes, runs, only_caseless: bool = False):
    print(f"== find vs grep -c (same word, same file, warm cache; medians of {runs}; load average {loadavg()})")
    time_find("warmup", gen_log(sizes[0])[0], case=False)     # imports, the case tables: once per process
    for size in sizes:
        path, planted = gen_log(size)
        mb = os.path.getsize(path) / 1e6
        with open(path, "rb") as f:           # warm the page cache for both
            while f.read(1 << 24):
                pass
        print(f"-- {size}: {mb:.0f} MB (load average {loadavg()})")
        words = [] if only_caseless else list(planted.items())[:3] + [("wordnotinthelog", (None, None, None))]
        for word, (seq, _turn, _kind) in words:
            g = [time_grep(word, path) for _ in range(runs)]
            fr = [time_find(word, path) for _ in range(runs)]
            gt, gc = med([x[0] for x in g]), med([x[1] for x in g])
            ft, fc = med([x[0] for x in fr]), med([x[1] for x in fr])
            n, first = fr[0][2], fr[0][3]
            print(f"  {word[:24]!r:28} grep -c {gt * 1000:6.0f} ms wall {gc * 1000:4.0f} ms CPU ({g[0][2]} lines)  "
                  f"find {ft * 1000:6.0f} ms wall {fc * 1000:5.0f} ms CPU ({n} hits, seq {seq}, first hit "
                  f"{first * 1000 if first else float('nan'):.0f} ms)  ratio {ft / gt:.2f}x wall  {mb / ft:.0f} MB/s",
                  flush=True)
        # case-insensitive (the CLI's and the window's default): an ASCII word and a non-ASCII one
        # against ``grep -ci`` of the same word (the prefilter folds each window once and looks
        # for the folded word; \uXXXX-escaped forms only where such escapes are)
        ci_words = [list(planted)[0]] + [w for w in planted if not w.isascii()][:1]
        for word in ci_words:
            g = [time_grep(word, path, ci=True) for _ in range(runs)]
            fr = [time_find(word, path, case=False) for _ in range(runs)]
            gt, gc = med([x[0] for x in g]), med([x[1] for x in g])
            ft, fc = med([x[0] for x in fr]), med([x[1] for x in fr])
            print(f"  {word!r} case-insensitive: find {ft * 1000:.0f} ms wall {fc * 1000:.0f} ms CPU ({fr[0][2]} hits, "
                  f"{fr[0][4].rows_decoded} rows decoded); grep -ci {gt * 1000:.0f} ms wall {gc * 1000:.0f} ms CPU "
                  f"-> ratio {ft / gt:.2f}x wall (target <= 3x)  [load average {loadavg()}]", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100MB,1GB")
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-find", action="store_true")
    ap.add_argument("--skip-fts", action="store_true")
    ap.add_argument("--caseless-only", action="store_true", help="only the case-insensitive find rows")
    a = ap.parse_args(argv)
    if not a.skip_find:
        bench_find([s for s in a.sizes.split(",") if s], a.runs, a.caseless_only)
    if not a.skip_fts:                       # the home index rows live in bench/home_search_bench.py
        sys.path.insert(0, str(REPO / "bench"))
        from home_search_bench import bench_build_big, bench_fts
        bench_fts(a.sessions, a.runs)
        bench_build_big(a.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
