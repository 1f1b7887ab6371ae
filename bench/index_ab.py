#!/usr/bin/env python3
"""``session-lens index F`` on an empty cache in two source trees, interleaved in the same minutes (issue 15).

    python bench/index_ab.py [--runs 3] [--before /work/main] FILE...

For each file: ``--runs`` fresh processes per tree, alternating (before, this tree, before, ...), each
with its own empty cache folder; medians of the in-process ``seconds`` and ``cpuSeconds`` (this tree
counts its scan workers too), and a warm ``cat F`` (or ``zstd -dc F`` for a .zstd file) as reference.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def index_once(tree: str, path: str) -> dict:
    d = tempfile.mkdtemp(prefix="sl-ab-")
    try:
        env = {**os.environ, "SESSION_LENS_CACHE_DIR": d}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        out = subprocess.run([sys.executable, "-m", "app", "index", path, "--json"], cwd=tree, env=env,
                             capture_output=True, text=True, check=True).stdout
        return json.loads(out)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def reference(path: str, runs: int) -> tuple[float, float]:
    path = os.path.realpath(path)              # (zstd ignores a symbolic link)
    cmd = f"zstd -qdc '{path}' > /dev/null" if path.endswith(".zstd") else f"cat '{path}' > /dev/null"
    subprocess.run(cmd, shell=True, check=True)
    out = []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, shell=True, check=True)
        w = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out.append((w, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)))
    return statistics.median(w for w, _ in out), statistics.median(c for _, c in out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--before", default="/work/main", help="the other source tree (default /work/main)")
    a = ap.parse_args()
    print("load:", open("/proc/loadavg").read().strip(), flush=True)
    for f in a.files:
        path = os.path.abspath(f)
        mb = os.path.getsize(path) / 1e6
        res: dict[str, list[dict]] = {"before": [], "this tree": []}
        for _ in range(a.runs):
            res["before"].append(index_once(a.before, path))
            res["this tree"].append(index_once(str(REPO), path))
        rw, rc = reference(path, a.runs)
        name = "zstd -dc" if path.endswith(".zstd") else "warm cat"
        print(f"{os.path.basename(path)} ({mb:.0f} MB): {name} {rw:.3f} s wall, {rc:.3f} s CPU")
        for k, rs in res.items():
            s = statistics.median(r["seconds"] for r in rs)
            c = statistics.median(r["cpuSeconds"] for r in rs)
            print(f"  {k:10} {s:7.3f} s wall ({mb / s:6.0f} MB/s, {rw / s:5.2f}x {name})  {c:7.3f} s CPU "
                  f"({rc / c:5.3f}x)  segments {rs[0]['segments']} events {rs[0]['events']}", flush=True)
    print("load:", open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
