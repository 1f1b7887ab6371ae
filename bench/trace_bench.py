#!/usr/bin/env python3
"""Row trace benchmark: the window's trace of a selected row from the saved checkpoints, against
the from-scratch trace (one pass over the whole log) of the same row, same run.

    python bench/trace_bench.py [--sizes 100MB,1GB] [--fracs 0.05,0.5,0.95] [--scratch-sizes 100MB]

Generated planted logs (``bench/search_bench.py`` ``gen_log``, v0) in bench/data/; the caches
(seq index, fold checkpoints, surface index) in bench/data/trace-cache-<size>, built once by a
fresh process (timed: "once per log"; the window builds them in a child process the first time).
Each trace runs in a fresh process as the window's worker does it per selection
(``app.store.requests.exact_trace``: open, load the saved index, checkpoints and surface index,
replay near the row): wall, CPU (user + system of that process) and peak RSS.  The reference
``trace_event`` reads the whole log (``--scratch-sizes``: the sizes to run it on; it takes minutes
on 1 GB).
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
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

from search_bench import DATA, gen_log, loadavg  # noqa: E402

CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
path, frac, how = sys.argv[2], float(sys.argv[3]), sys.argv[4]
t0, c0 = time.perf_counter(), time.process_time()
from app.store.faces import open_reader
from app.store.indexcache import cached_checkpoints, cached_index
from app.store.surface_cache import cached_surface
r = open_reader(path, None)
if how == "build":
    idx, _ = cached_index(r); cps, _ = cached_checkpoints(r); si, _ = cached_surface(r)
    out = {"points": len(cps.points), "last": idx.last}
else:
    idx, _ = cached_index(r)
    seq = int(frac * idx.last)
    if how.endswith("-msg"):            # the first assistant message at or after it (a model message)
        seq = next((s for s, t in idx.marks(seq) if t == "assistant/message" and s >= seq), seq)
        how = how[:-4]
    r.close()
    if how == "fast":
        from app.store.requests import exact_trace
        tr = exact_trace(path, None, seq, build=False)
    else:
        from app.log.index.reader import LogReader
        from app.log.query.trace import trace_event
        tr = trace_event(LogReader.open(path), seq)
    out = {"seq": seq, "count": tr["requests"]["count"], "surface": tr["surface"], "trace": tr}
out.update(wall=time.perf_counter() - t0, cpu=time.process_time() - c0,
           rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
print(json.dumps(out))
"""


def child(path: str, frac: float, how: str, cache: Path) -> dict:
    env = dict(os.environ, SESSION_LENS_CACHE_DIR=str(cache))
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", CHILD, str(REPO), path, str(frac), how], capture_output=True,
                       text=True, env=env)
    if r.returncode:
        raise SystemExit(r.stderr)
    out: dict = json.loads(r.stdout)
    out["process_wall"] = time.perf_counter() - t0
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100MB,1GB")
    ap.add_argument("--fracs", default="0.05,0.3,0.5,0.7,0.95")
    ap.add_argument("--scratch-sizes", default="100MB", help="sizes to run the from-scratch reference on")
    a = ap.parse_args(argv)
    fracs = [float(x) for x in a.fracs.split(",") if x]
    for size in [s for s in a.sizes.split(",") if s]:
        path, _planted = gen_log(size)
        cache = DATA / f"trace-cache-{size}"
        cache.mkdir(parents=True, exist_ok=True)
        mb = os.path.getsize(path) / 1e6
        b = child(path, 0, "build", cache)
        print(f"-- {size}: {mb:.0f} MB, {b['points']} checkpoints (load average {loadavg()}); caches "
              f"(index, checkpoints, surface) {b['wall']:.1f} s wall {b['cpu']:.1f} s CPU {b['rss_mb']:.0f} MB "
              f"(once per log; a hit when already saved)", flush=True)
        fast = []
        for f, how in [(f, how) for f in fracs for how in ("fast", "fast-msg")]:
            x = child(path, f, how, cache)
            fast.append(x)
            print(f"  trace seq {x['seq']:>9} ({f:.0%}) {x['surface']:8} in {x['count']:>5} requests: "
                  f"{x['wall'] * 1000:6.0f} ms wall {x['cpu'] * 1000:6.0f} ms CPU (in-process), "
                  f"{x['process_wall'] * 1000:6.0f} ms with interpreter start, peak RSS {x['rss_mb']:.0f} MB",
                  flush=True)
        med = statistics.median([x["wall"] for x in fast])
        medc = statistics.median([x["cpu"] for x in fast])
        mx = max(x["rss_mb"] for x in fast)
        line = f"  median {med * 1000:.0f} ms wall {medc * 1000:.0f} ms CPU, max peak RSS {mx:.0f} MB"
        if size in a.scratch_sizes.split(","):
            mid = fast[2 * (len(fracs) // 2) + 1]                  # (the message row at the middle fraction)
            s = child(path, fracs[len(fracs) // 2], "scratch-msg", cache)
            same = s["trace"] == mid["trace"]
            line += (f"; from scratch (seq {s['seq']}): {s['wall']:.1f} s wall {s['cpu']:.1f} s CPU "
                     f"{s['rss_mb']:.0f} MB -> {s['wall'] / mid['wall']:.0f}x wall {s['cpu'] / mid['cpu']:.0f}x CPU; "
                     f"same answer: {same}")
        print(line + f"  [load average {loadavg()}]", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
