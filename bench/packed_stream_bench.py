#!/usr/bin/env python3
"""Issue 27 item 5: reading a packed row of many members, streamed (PackedStream) against holding every event.

    python bench/packed_stream_bench.py [--members 200000] [--runs 3]

Writes a v0 log with one ``text-chunks`` row of ``--members`` members, then, each in a fresh interpreter,
reads every event of the log: streamed (``LogReader.iter_events``: the row's members a batch at a time) and,
as the reference, all events held at once (``list(iter_events())``, what expanding the row whole costs at the
least).  Prints the medians of the peak memory each adds after the log is opened (``ru_maxrss``; 0 when the
stream never rises above what opening already reached), the process's peak, the wall time, and the ratios.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import resource, sys, time
sys.path.insert(0, {repo!r})
from app.log.index.reader import LogReader
r = LogReader.open({path!r})
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
if {hold}:
    n = len(list(r.iter_events()))
else:
    n = sum(1 for _ in r.iter_events())
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(n, (peak - base) / 1024, time.perf_counter() - t, peak / 1024)
"""


def write_log(path: Path, n: int) -> None:
    rows = [{"type": "session", "version": 0, "id": "bench", "createdAt": 1, "delegationDepth": 0},
            {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
            {"type": "step/start", "seq": 1, "time": 1, "data": {"turn": 1, "step": 1}},
            {"type": "text-chunks", "seq0": 2, "time0": 1, "data": {"turn": 1, "step": 1, "index": 0,
                                                                   "texts": [f"w{i} " for i in range(n)],
                                                                   "dt": [1] * (n - 1)}},
            {"type": "step/end", "seq": 2 + n, "time": 2, "data": {"turn": 1, "step": 1}},
            {"type": "turn/end", "seq": 3 + n, "time": 2, "data": {"turn": 1, "reason": {"kind": "completed"}}}]
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows))


def run(path: Path, hold: bool) -> tuple[int, float, float, float]:
    out = subprocess.run([sys.executable, "-c", CHILD.format(repo=str(REPO), path=str(path), hold=hold)],
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), float(out[1]), float(out[2]), float(out[3])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--members", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "session.jsonl"
        write_log(p, args.members)
        print(f"log: {p.stat().st_size / 1e6:.1f} MB, one packed row of {args.members:,} members")
        got = {hold: [run(p, hold) for _ in range(args.runs)] for hold in (False, True)}
    for hold, name in ((False, "streamed"), (True, "all held (reference)")):
        n = got[hold][0][0]
        print(f"{name:22s} events {n:,}  peak +{statistics.median(r[1] for r in got[hold]):6.1f} MB"
              f" (process peak {statistics.median(r[3] for r in got[hold]):6.1f} MB)"
              f"  {statistics.median(r[2] for r in got[hold]):5.2f} s")
    mem = statistics.median(r[1] for r in got[False]) / max(0.1, statistics.median(r[1] for r in got[True]))
    tim = statistics.median(r[2] for r in got[False]) / statistics.median(r[2] for r in got[True])
    print(f"ratio streamed / held: memory {mem:.2f}x, time {tim:.2f}x")


if __name__ == "__main__":
    main()
