"""Timeline cost (issue 31): the timeline of a generated log the first time (one pass, then saved) and from the
cache, beside the seq index build of the same log (the reference, :func:`app.store.indexcache.cached_index` into
an empty cache) and the exact full decode pass (``LogReader.iter_events``), medians of N runs, with ratios;
wall time and this process's CPU time (the machine is shared: CPU time is the steadier figure; the seq index
is built with worker processes whose CPU this process does not count, so compare it by wall time).  "From the
cache" is the spans as :func:`app.store.timeline_cache.cached_spans` returns them; the summary (per-turn figures,
totals, cost) is timed apart.

"… in two processes": the same first time with the log read in two parts at once (the second by a
``timeline-part`` child: :func:`app.store.timeline_child.split_spans`, used from 96 MB on when a core is free;
forced here whatever the size and load); its CPU is this process's and the child's.

Target (issue 31): a 1 GB log in <= 3 s the first time and <= 0.3 s from the cache.  The machine is shared
(2 cores, other jobs), so the default log is small (40 MB) and the 1 GB figures are *scaled linearly* from it
(the pass and the cache read are linear in rows and spans); pass MB to measure another size.

    .venv/bin/python bench/timeline_bench.py [MB] [RUNS] [VERSION]
"""
from __future__ import annotations

import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))       # this tree's ``app``
GB = 1 << 30


def _fresh_cache() -> str:
    d = tempfile.mkdtemp(prefix="tlbench-cache-")
    os.environ["SESSION_LENS_CACHE_DIR"] = d
    return d


def main(mb: int = 40, runs: int = 3, version: int = 0) -> None:
    from app.log.index.reader import LogReader
    from app.store.indexcache import cached_index
    from app.log.query.timeline import summarize
    from app.store.timeline_cache import cached_spans, cached_summary, load_prices
    from app.tools.synth import SessionSynth, write_jsonl
    d = tempfile.mkdtemp(prefix="tlbench-")
    p = os.path.join(d, "session.jsonl")
    info = write_jsonl(p, SessionSynth(seed=5, version=version), target_bytes=mb << 20)
    size = os.path.getsize(p)
    from app.store import timeline_child
    times: dict[str, list[tuple[float, float]]] = {k: [] for k in ("index", "decode", "first", "first2", "cached",
                                                                   "summary", "cached summary")}
    n_spans = 0

    def timed(key: str, fn):
        gc.collect()                     # (no collection of an earlier step's garbage inside this one)
        w, c, ch = time.perf_counter(), time.process_time(), os.times()
        out = fn()
        ch2 = os.times()
        children = ch2.children_user + ch2.children_system - ch.children_user - ch.children_system
        times[key].append((time.perf_counter() - w, time.process_time() - c + (children if key == "first2" else 0)))
        return out
    try:
        for _ in range(runs):
            c = _fresh_cache()
            r = LogReader.open(p)
            timed("index", lambda: cached_index(r))
            r = LogReader.open(p)
            timed("decode", lambda: sum(1 for _e in r.iter_events(logical=True)))
            r = LogReader.open(p)
            spans, status = timed("first", lambda: cached_spans(r))
            assert status == "built", status
            n_spans = len(spans)
            shutil.rmtree(c, ignore_errors=True)
            c = _fresh_cache()
            r = LogReader.open(p)
            saved = timeline_child.SPLIT_MIN, timeline_child.SPLIT_WHEN_BUSY
            timeline_child.SPLIT_MIN, timeline_child.SPLIT_WHEN_BUSY = 0, True      # (two parts, whatever the size)
            try:
                two, status = timed("first2", lambda: cached_spans(r))
            finally:
                timeline_child.SPLIT_MIN, timeline_child.SPLIT_WHEN_BUSY = saved
            assert status == "built" and two == spans, status
            del spans, two
            r = LogReader.open(p)
            spans, status = timed("cached", lambda: cached_spans(r))
            assert status == "hit", status
            timed("summary", lambda got=spans: summarize(got, load_prices(), ordered=True))
            cached_summary(r, spans, load_prices())                        # (saved)
            r = LogReader.open(p)
            _s, how = timed("cached summary", lambda got=spans: cached_summary(r, got, load_prices()))
            assert how == "hit", how
            del spans
            shutil.rmtree(c, ignore_errors=True)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    scale = GB / size
    print(f"log v{version}: {size / 1e6:.1f} MB, {info['events']:,} events, {info['rows']:,} rows, {n_spans:,} spans "
          f"(medians of {runs} runs; 1 GB figures scaled x{scale:.1f} from this log; wall / CPU seconds)")
    names = {"index": "reference: seq index build", "decode": "reference: exact decode pass",
             "first": "timeline, first time (+ save)", "first2": "… in two processes (CPU: both)",
             "cached": "timeline, from the cache",
             "summary": "+ turns and totals (summarize)", "cached summary": "+ turns and totals from their cache"}
    target = {"first": 3.0, "first2": 3.0, "cached": 0.3}
    for k, (w, c) in med.items():
        line = f"{names[k]:36} {w:7.3f} / {c:7.3f} s   1 GB: {w * scale:7.2f} / {c * scale:7.2f} s"
        if k in target:
            line += (f"  (target {target[k]} s)  ratio to the decode pass {w / med['decode'][0]:.3f}x wall, "
                     f"{c / med['decode'][1]:.3f}x CPU; to the index {w / med['index'][0]:.2f}x wall")
        print(line)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"cached / first time: {med['cached'][0] / med['first'][0]:.3f}x wall, "
          f"{med['cached'][1] / med['first'][1]:.3f}x CPU")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
