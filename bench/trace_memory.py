#!/usr/bin/env python3
"""The memory of the window's ``trace-why`` job (issue 36): the trace of one selected row, as the
inspector's "why" computes it (``app.ui.truth_views._trace_job``), on one log.

    .venv/bin/python bench/trace_memory.py FILE [--seqs 0,-1] [--runs 3] [--cold] [--old] [--cache DIR]

Each trace runs in a new process, as the window's job does it: the process's anonymous memory
(``RssAnon``) before, its peak while the job runs (polled every 20 ms) and after; each worker
process it starts (by name, e.g. ``trace-why:index+checkpoints``) with its peak.  ``--cold``: the
fold checkpoints and surface index not saved yet (the row selected before the whole-log pass is
done: the seq index only); else the pass has saved them (run once first, timed, into ``--cache``
or a fresh folder).  ``-1`` in ``--seqs``: the last seq.  Reference in the same run: the same
process's anonymous memory with the app imported and the log opened, nothing traced (the job adds
the rest).  Medians of ``--runs``, with load and CPU.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

CHILD = r"""
import json, os, sys, threading, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(sys.argv[1], "bench"))
from window_memory import ChildPeak, status_kb
path, seq, how = sys.argv[2], int(sys.argv[3]), sys.argv[4]
from app.store.faces import open_reader
import app.store.requests, app.log.query.trace, app.store.surface_cache, app.store.indexcache  # noqa
import app.ui.truth_views, app.store.trace_points, msgspec  # noqa  (Qt loaded before the reference, as in the window)
r = open_reader(path, None)
r.close()
if seq < 0:
    from app.store.indexcache import cached_index
    r = open_reader(path, None)
    seq = cached_index(r)[0].last + 1 + seq
    r.close()
base = status_kb().get("RssAnon", 0)

class Job:
    name = "trace-why"
    cancelled = False
    def check(self):
        pass

peak = [base]
stop = threading.Event()
def poll():
    while not stop.wait(0.02):
        peak[0] = max(peak[0], status_kb().get("RssAnon", 0))
threading.Thread(target=poll, daemon=True).start()
kids = ChildPeak()
t0, c0 = time.perf_counter(), time.process_time()
if how == "old":        # the job as it was: app.store.requests.exact_trace (the whole checkpoints decoded)
    from app.store.requests import exact_trace
    tr = exact_trace(path, None, seq, cancelled=Job(), check=Job().check)
else:
    from app.ui.truth_views import _trace_job
    tr = _trace_job(Job(), path, None, seq)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
stop.set()
peak[0] = max(peak[0], status_kb().get("RssAnon", 0))
out = {"seq": seq, "base_mb": base / 1024, "peak_mb": peak[0] / 1024, "after_mb": status_kb().get("RssAnon", 0) / 1024,
       "children": kids.stop(), "wall_s": wall, "cpu_s": cpu,
       "answer": json.dumps(tr, sort_keys=True, default=str)}
print(json.dumps(out))
"""


def run_one(code: Path, path: str, seq: int, env: dict, how: str = "new") -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD, str(code), path, str(seq), how], env=env, stdout=subprocess.PIPE,
                       text=True, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def warm_caches(path: str, env: dict) -> float:
    """The seq index and the whole-log pass of the window (checkpoints, surface index, outline) into the
    cache, as the window saves them after an open: seconds."""
    t0 = time.perf_counter()
    index_only(path, env)
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
                    "from app.store import scan_child; from app.store.childproc import run_spec;"
                    "run_spec(scan_child.spec('outline', sys.argv[2], None, {}), lambda m: None, None)",
                    str(REPO), path], env=env, check=True)
    return time.perf_counter() - t0


def index_only(path: str, env: dict) -> None:
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]);"
                    "from app.store.indexer import build_index_isolated; build_index_isolated(sys.argv[2])",
                    str(REPO), path], env=env, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--seqs", default="0,-1")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="only the seq index saved (no checkpoints, no surface index)")
    ap.add_argument("--old", action="store_true", help="also the job as it was (app.store.requests.exact_trace), "
                    "same rows, same caches: the reference")
    ap.add_argument("--cache", help="cache folder to use (kept); default: a fresh one per run of this bench")
    a = ap.parse_args()
    seqs = [int(x) for x in a.seqs.split(",")]
    with tempfile.TemporaryDirectory(prefix="tm-cache-") as tmp:
        cache = a.cache or tmp
        env = dict(os.environ, SESSION_LENS_CACHE_DIR=cache, SESSION_LENS_CONFIG_DIR=os.path.join(tmp, "cfg"))
        load0 = os.getloadavg()[0]
        if a.cold:
            print(f"{a.file}: cold (seq index only)")
        else:
            print(f"{a.file}: the whole-log pass first, {warm_caches(a.file, env):.1f} s wall")
        answers: dict[int, set] = {}
        for seq, how in [(s, h) for s in seqs for h in (("new", "old") if a.old else ("new",))]:
            rows = []
            for _ in range(a.runs):
                if a.cold:
                    for f in Path(cache).glob("index/*"):
                        if f.suffix != ".idx":
                            f.unlink()
                    index_only(a.file, env)
                rows.append(run_one(REPO, a.file, seq, env, how))
            med = {k: statistics.median(r[k] for r in rows) for k in ("base_mb", "peak_mb", "after_mb", "wall_s", "cpu_s")}
            names = sorted({n for r in rows for n in r["children"]})
            kids = ", ".join(f"{n} {statistics.median(r['children'].get(n, 0.0) for r in rows):.1f} MB" for n in names)
            same = len({r["answer"] for r in rows}) == 1
            print(f"  {how} seq {rows[0]['seq']}: job process anon {med['base_mb']:.1f} MB before (the reference: app "
                  f"imported, log opened), peak {med['peak_mb']:.1f} (+{med['peak_mb'] - med['base_mb']:.1f}), after "
                  f"{med['after_mb']:.1f} MB; workers: {kids or '-'}; wall {med['wall_s']:.2f} s, CPU {med['cpu_s']:.2f} s "
                  f"(job thread); answers {'the same' if same else 'DIFFER'} over {len(rows)} runs")
            answers.setdefault(seq, set()).add(rows[0]["answer"])
        if a.old:
            print("  old and new answers " + ("the same" if all(len(v) == 1 for v in answers.values()) else "DIFFER"))
        print(f"  load {load0:.2f} -> {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
