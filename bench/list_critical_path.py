#!/usr/bin/env python3
"""The CPU on the critical path of ``session-lens list`` with one forked reader (issue 15, first run).

    cd CHECKOUT && .venv/bin/python /path/to/bench/list_critical_path.py HOME [--runs 3] [--exact-titles]

Runs the listing as the CLI does (``discover(titles=True, workers=2)``, the rows, their JSON) on an empty
title cache in a fresh process each run, with the garbage collector off in both checkouts, and prints the CPU
time spent before the fork (imports, walk, stat), of each of the two shares of the reads, and after them
(assembly, JSON): ``critical`` = before + the larger share + after is what the wall clock of an idle 2-core
machine would be, near enough (the interpreter's own start, ~20 ms, aside); on a shared machine the wall
clock mostly measures the run queue.  Works with any checkout whose ``discovery`` has ``read_many`` and
whose ``discovery_headers`` has ``read_chunk`` (run it with that checkout's interpreter, from its folder: the checkout is imported from the
current folder, not from wherever the interpreter's editable install points).  Each run also says how many
titles are provisional (``titleExact`` false, decision 0016); ``--exact-titles`` times ``list --exact-titles``
(every middle read) instead of a first list.  Each run is followed by a run on the cache it saved (the
"cached run"), and ``find`` + ``head -c 512`` of every session file is timed beside them (wall and CPU).
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def one(home: str, exact: bool = False) -> dict:
    c0 = time.process_time()
    sys.path.insert(0, os.getcwd())
    os.environ.setdefault("SESSION_LENS_CACHE_DIR", tempfile.mkdtemp(prefix="sl-cache-"))
    gc.disable()
    from app.store import discovery, discovery_headers, title_cache, titles
    marks: dict = {}
    read_many, read_chunk = discovery.read_many, discovery_headers.read_chunk
    r, w = os.pipe()

    def timed_many(jobs, title, workers=0, *more):
        marks["pre"] = time.process_time() - c0
        out = read_many(jobs, title, workers, *more)
        marks["read"] = time.process_time() - c0
        return out

    def timed_chunk(jobs, title, *more):
        c = time.process_time()
        out = read_chunk(jobs, title, *more)
        os.write(w, f"{time.process_time() - c:.4f}\n".encode())
        return out
    discovery.read_many, discovery_headers.read_chunk = timed_many, timed_chunk
    listing = discovery.discover(home, titles=True, workers=2, **({"exact": True} if exact else {}))
    rows = []
    for s in listing.sessions:
        s.title = titles.session_title(s)
        rows.append(s.to_dict())
    json.dumps({"sessions": rows}, ensure_ascii=False)
    title_cache.save()
    end = time.process_time() - c0
    marks.setdefault("pre", end)                # (all cached: nothing read, no fork)
    marks.setdefault("read", end)
    os.close(w)
    shares = [float(x) for x in os.read(r, 1000).split()] or [0.0]
    return {"pre": marks["pre"], "shares": shares, "post": end - marks["read"],
            "critical": marks["pre"] + max(shares) + end - marks["read"], "sessions": len(rows),
            "provisional": sum(1 for r in rows if r.get("titleExact") is False)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--exact-titles", action="store_true", help="time list --exact-titles (the middles read)")
    ap.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        print(json.dumps(one(a.home, a.exact_titles)))
        return
    more = ["--exact-titles"] if a.exact_titles else []
    find = f"find '{a.home}/sessions' -name 'session*.jsonl*' -exec head -qc 512 {{}} + > /dev/null"
    got, cached, refs = [], [], []
    for _ in range(a.runs):
        t0, w0 = os.times(), time.perf_counter()
        subprocess.run(find, shell=True, check=True)
        t1 = os.times()
        refs.append((time.perf_counter() - w0, t1.children_user + t1.children_system - t0.children_user -
                     t0.children_system))
        env = {**os.environ, "SESSION_LENS_CACHE_DIR": tempfile.mkdtemp(prefix="sl-cache-")}
        for out in (got, cached):                   # the first run, then again on the cache it saved
            out.append(json.loads(subprocess.run([sys.executable, __file__, a.home, "--one"] + more, env=env,
                                                 capture_output=True, text=True, check=True).stdout))
    for g in got:
        print(f"before the fork {g['pre']:.3f} s · shares {' / '.join(f'{x:.3f}' for x in g['shares'])} s · "
              f"after {g['post']:.3f} s · critical {g['critical']:.3f} s ({g['sessions']} sessions, "
              f"{g['provisional']} titles provisional)")
    ref_w, ref_c = statistics.median(r[0] for r in refs), statistics.median(r[1] for r in refs)
    crit = statistics.median(g['critical'] for g in got)
    print(f"median critical-path CPU: {crit:.3f} s{' (--exact-titles)' if more else ''}; cached run: "
          f"{statistics.median(g['critical'] for g in cached):.3f} s "
          f"({statistics.median(g['provisional'] for g in cached):.0f} provisional); reference find + head: "
          f"{ref_w:.3f} s wall, {ref_c:.3f} s CPU (first run / reference CPU: {crit / max(ref_c, 1e-3):.1f}x); "
          f"load average {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
