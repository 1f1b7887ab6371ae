"""Timeline cost (issue 31): the timeline of a generated log the first time (one pass, then saved) and from the
cache, beside references measured in the same run on the same file: ``cat`` of the file (to /dev/null: reading its
bytes) and the seq index build (:func:`app.store.indexcache.cached_index` into an empty cache: the row scanner in
C, in worker processes).  Medians of N runs at each size, wall and CPU seconds (CPU: this process; the machine is
shared, so CPU time is the steadier figure; ``cat`` and the index run in child processes, compare them by wall
time), each scaled to 1 GB (linearly: the pass and the cache read are linear in rows and spans), with the ratios.
"From the cache" is the spans as :func:`app.store.timeline_cache.cached_spans` returns them; the turns and totals
from their own cache are timed apart.  ``--decode`` adds the exact decode pass (``LogReader.iter_events``) and
``--parts=N`` the first time in N processes (:func:`app.store.timeline_child.split_spans`, forced whatever the size
and load; CPU of all; "first" is always one process, forced too, so the two compare in the same run; with
``--against`` both codes are timed so); ``--file=PATH`` times an existing log (read only; the caches go to a temporary folder)
instead of generated ones; ``--code=DIR`` times the ``app`` of another checkout (its native module built there), e.g. main's
(``--code=/work/main``) or an older commit's (``git archive`` into a folder), to compare in the same conditions;
``--against=DIR`` (with ``--file``) times this tree's code and DIR's in turn, one child process per run and code
(this, DIR, this, DIR, ...: the same load for both), and prints the medians of each and their ratios.

Target (issue 31): a 1 GB log in <= 3 s the first time and <= 0.3 s from the cache.  Say the machine's load with
the figures (printed at the start and the end); run 1 GB (``1024``) only on a quiet machine.

    .venv/bin/python bench/timeline_bench.py [SIZES_MB=20,200] [RUNS=3] [VERSION=4] [--decode] [--parts=N]
    .venv/bin/python bench/timeline_bench.py --file=/work/big/sl-1g/session-200MB.v4.jsonl [RUNS=3] [--code=DIR]
    .venv/bin/python bench/timeline_bench.py --file=PATH [RUNS=3] --against=/work/main
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

_CODE = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--code=")]
sys.path.insert(0, _CODE[-1] if _CODE else str(Path(__file__).resolve().parents[1]))   # this tree's ``app`` (or --code's)
GB = 1 << 30
NAMES = {"cat": "reference: cat FILE > /dev/null", "index": "reference: seq index build (C scan)",
         "decode": "reference: exact decode pass", "first": "timeline, first time (+ save)",
         "first user": "  of which user CPU",
         "first sys": "  of which system CPU (page faults)",
         "first summary": "+ turns and totals, first time (+ save)",
         "firstN": "... in N processes (CPU: all)", "cached": "timeline spans, from the cache",
         "cached summary": "turns and totals, from their cache",
         "cached all": "timeline from the cache (spans + summary)"}
TARGET = {"first": 3.0, "firstN": 3.0, "cached": 0.3, "cached all": 0.3}


def _fresh_cache() -> str:
    d = tempfile.mkdtemp(prefix="tlbench-cache-")
    os.environ["SESSION_LENS_CACHE_DIR"] = d
    return d


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def measure(p: str, runs: int, decode: bool, parts: int) -> tuple[dict[str, tuple[float, float]], int]:
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
        if key == "first":     # (the system part: page faults of fresh memory; it was ~0.3 s more per 200 MB after the index
            sys_cpu = ch2.system - ch.system    # build in the same process: the allocator's state, not the collector)
            times.setdefault("first sys", []).append((sys_cpu, sys_cpu))
            user_cpu = ch2.user - ch.user
            times.setdefault("first user", []).append((user_cpu, user_cpu))
        children = ch2.children_user + ch2.children_system - ch.children_user - ch.children_system
        times.setdefault(key, []).append((time.perf_counter() - w, time.process_time() - c +
                                          (children if key in ("firstN", "cat") else 0)))
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
        timeline_child.PARTS = 1                         # (one process, whatever the size and load)
        try:
            spans, status = timed("first", lambda: cached_spans(r))
        finally:
            timeline_child.PARTS = None
        assert status == "built", status
        n_spans = len(spans)
        if parts > 1:
            shutil.rmtree(c, ignore_errors=True)
            c = _fresh_cache()
            r = LogReader.open(p)
            timeline_child.PARTS = parts                 # (N parts, whatever the size and load)
            try:
                got, status = timed("firstN", lambda: cached_spans(r))
            finally:
                timeline_child.PARTS = None
            assert status == "built" and got == spans, status
            del got
        del spans
        r = LogReader.open(p)
        spans, status = timed("cached", lambda: cached_spans(r))
        assert status == "hit" and len(spans) == n_spans, status
        _s, how = timed("first summary", lambda got=spans: cached_summary(r, got, load_prices()))   # (saved)
        assert how == "built", how
        r = LogReader.open(p)
        _s, how = timed("cached summary", lambda got=spans: cached_summary(r, got, load_prices()))
        assert how == "hit", how
        del spans

        def both() -> None:
            rr = LogReader.open(p)
            got, how1 = cached_spans(rr)
            _s, how2 = cached_summary(rr, got, load_prices())
            assert how1 == how2 == "hit", (how1, how2)
        timed("cached all", both)
        shutil.rmtree(c, ignore_errors=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    return med, n_spans


def report(path: str, size: int, what: str, runs: int, decode: bool, parts: int) -> None:
    load0 = _load()
    med, n_spans = measure(path, runs, decode, parts)
    scale = GB / size
    import app
    print(f"\n{what}, {n_spans:,} spans; medians of {runs}; load average {load0} at the start, {_load()} at the end; "
          f"code: {Path(app.__file__).parent.parent}")
    print(f"{'':42} {'wall':>8} {'CPU':>8}   {'1 GB wall':>9} {'1 GB CPU':>9}")
    for k in NAMES:
        if k not in med:
            continue
        w, c = med[k]
        line = f"{NAMES[k]:42} {w:8.3f} {c:8.3f}   {w * scale:9.2f} {c * scale:9.2f}"
        if k in TARGET:
            line += (f"   target {TARGET[k]} s/GB ({w * scale / TARGET[k]:.2f}x it, wall); {w / med['cat'][0]:.1f}x cat, "
                     f"{w / med['index'][0]:.2f}x the index (wall)")
        print(line)


def generated(mb: int, runs: int, version: int, decode: bool, parts: int) -> None:
    from app.tools.synth import SessionSynth, write_jsonl
    d = tempfile.mkdtemp(prefix="tlbench-")
    try:
        p = os.path.join(d, "session.jsonl")
        info = write_jsonl(p, SessionSynth(seed=5, version=version), target_bytes=mb << 20)
        size = os.path.getsize(p)
        report(p, size, f"log v{version}: {size / 1e6:.1f} MB, {info['rows']:,} rows, {info['events']:,} events", runs,
               decode, parts)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def against(p: str, runs: int, other: str, parts: int = 1) -> None:
    """This tree's code and ``other``'s timed in turn on the log at ``p`` (one child process per run and code)."""
    import json
    here = str(Path(__file__).resolve().parents[1])
    got: dict[str, list[dict[str, list[float]]]] = {here: [], other: []}
    load0 = _load()
    for _ in range(runs):
        for code in (here, other):
            out = subprocess.run([sys.executable, __file__, f"--file={p}", "1", f"--code={code}", "--json"] +
                                 ([f"--parts={parts}"] if parts > 1 else []),
                                 check=True, capture_output=True, text=True, cwd=code).stdout
            # (cwd: a worker child runs ``python -m app``, which finds the ``app`` of its working folder first)
            got[code].append(json.loads(out.strip().splitlines()[-1]))
    scale = GB / os.path.getsize(p)
    print(f"\n{p}: {os.path.getsize(p) / 1e6:.1f} MB; {runs} runs of each code in turn, medians; load average {load0} at "
          f"the start, {_load()} at the end; new: {here}, old: {other}")
    print(f"{'':42} {'new wall':>9} {'old wall':>9} {'ratio':>6}   {'new CPU':>8} {'old CPU':>8} {'ratio':>6}   (per GB)")
    for k in NAMES:
        if k not in got[here][0] or k not in got[other][0]:
            continue
        nw, nc = (statistics.median(r[k][i] for r in got[here]) * scale for i in (0, 1))
        ow, oc = (statistics.median(r[k][i] for r in got[other]) * scale for i in (0, 1))
        line = f"{NAMES[k]:42} {nw:9.2f} {ow:9.2f} {nw / ow:6.2f}   {nc:8.2f} {oc:8.2f} {nc / oc:6.2f}"
        if k in TARGET:
            line += f"   target {TARGET[k]} s/GB (new: {nw / TARGET[k]:.2f}x it, wall)"
        print(line)


def main(argv: list[str]) -> None:
    flags = dict((a[2:].split("=", 1) + [""])[:2] for a in argv if a.startswith("--"))
    args = [a for a in argv if not a.startswith("--")]
    parts = int(flags.get("parts") or 1)
    if "file" in flags and "json" in flags:             # (one run for --against: the medians as JSON)
        import json
        med, _n = measure(flags["file"], int(args[0]) if args else 1, "decode" in flags, parts)
        print(json.dumps(med))
        return
    if "file" in flags and "against" in flags:
        against(flags["file"], int(args[0]) if args else 3, flags["against"], parts)
        return
    if "file" in flags:
        p = flags["file"]
        runs = int(args[0]) if args else 3
        report(p, os.path.getsize(p), f"{p}: {os.path.getsize(p) / 1e6:.1f} MB", runs, "decode" in flags, parts)
        return
    sizes = [int(x) for x in (args[0] if args else "20,200").split(",")]
    runs = int(args[1]) if len(args) > 1 else 3
    version = int(args[2]) if len(args) > 2 else 4
    for mb in sizes:
        generated(mb, runs, version, "decode" in flags, parts)


if __name__ == "__main__":
    main(sys.argv[1:])
