#!/usr/bin/env python3
"""The bounds of a first list's title reads (decision 0016): CPU and exactness per head/tail size.

    python bench/list_bounds.py HOME [--files 2000] [--runs 3]

For each raw JSONL and zstd session file of ``HOME`` (the first ``--files`` of each kind, in the walk's
order) reads the header and the bounded title as a first list does (``discovery_headers.read_facts``, in this
process, collector off), with the head and tail regions set to each size tried, and prints per 1,000
files: the CPU (best of ``--runs``: the load of a shared machine only adds to it), how many titles are exact, how many provisional, and how many
provisional titles differ from the exact title (read with the middle).  A reference row reads the
header only.  Sizes are compressed bytes for zstd.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

RAW_SIZES = [(8 << 10, 8 << 10), (16 << 10, 16 << 10), (32 << 10, 32 << 10), (64 << 10, 32 << 10),
             (64 << 10, 64 << 10)]
ZSTD_SIZES = [(4 << 10, 4 << 10), (8 << 10, 4 << 10), (8 << 10, 8 << 10), (12 << 10, 4 << 10), (12 << 10, 8 << 10),
              (16 << 10, 8 << 10), (16 << 10, 16 << 10), (32 << 10, 16 << 10)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    os.environ["SESSION_LENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="sl-cache-")
    from app.store import discovery, discovery_headers, titles
    files = sorted(discovery._walk(os.path.join(a.home, "sessions")))
    kinds = {"jsonl": [f for f in files if f.endswith(".jsonl")][:a.files],
             "zstd": [f for f in files if f.endswith(".zstd")][:a.files]}
    gc.disable()
    print(f"load average {' '.join(open('/proc/loadavg').read().split()[:3])}")
    print(f"{'kind':6} {'head':>6} {'tail':>6} {'CPU ms/1k':>10} {'exact':>6} {'provis.':>7} {'differs':>7}")
    for kind, paths in kinds.items():
        jobs = [(p, os.path.getsize(p)) for p in paths]
        want = {p: f[4] for (p, _n), f in zip(jobs, discovery_headers.read_chunk(jobs, True, True))}
        k = len(jobs) / 1000
        cpu = []
        for _ in range(a.runs):
            c = time.process_time()
            discovery_headers.read_chunk(jobs, False)
            cpu.append(time.process_time() - c)
        print(f"{kind:6} {'header only':>13} {min(cpu) * 1000 / k:10.1f}")
        for head, tail in (RAW_SIZES if kind == "jsonl" else ZSTD_SIZES):
            if kind == "jsonl":
                titles.WINDOW, titles.TAIL = head, tail
            else:
                titles.ZSTD_WINDOW, titles.ZSTD_TAIL = head, tail
            cpu, got = [], []
            for _ in range(a.runs):
                c = time.process_time()
                got = discovery_headers.read_chunk(jobs, True)
                cpu.append(time.process_time() - c)
            exact = sum(1 for f in got if f[5])
            differs = sum(1 for (p, _n), f in zip(jobs, got) if not f[5] and f[4] != want[p])
            print(f"{kind:6} {head >> 10:5}K {tail >> 10:5}K {min(cpu) * 1000 / k:10.1f} "
                  f"{exact / k:6.0f} {(len(got) - exact) / k:7.0f} {differs / k:7.0f}")
        for name, v in titles.BOUNDS.items():
            setattr(titles, name, v)


if __name__ == "__main__":
    main()
