#!/usr/bin/env python3
"""The row decoder and the zstd frame walk in two source trees, interleaved (issue 34: cutting
``RowCodec.decode_row`` and ``ZstdSource._windows`` into named steps must not slow them).

    python bench/decode_ab.py [--runs 7] [--before /work/main] [--repeat 20] [--zstd FILE.zstd]

``decode``: ``RowCodec.decode_row`` over every row of the shared fixtures (each log with the codec of its
header's version), ``--repeat`` times.  ``zstd``: ``ZstdSource.forward`` over every frame of ``--zstd``
(e.g. ``bench/run.py``'s generated ``.jsonl.zstd``), ``--repeat`` // 2 times.  One fresh process per
measurement, alternating trees; medians of the CPU time (``time.process_time``) and the ratio
this tree / ``--before``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = "/work/shared/fixtures"

DECODE = r'''
import json, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from app.log.format.codec import RowCodec
logs = []
for f in sorted(Path(sys.argv[2]).rglob("*.jsonl")):
    lines = f.read_bytes().split(b"\n")
    try:
        h = json.loads(lines[0])
    except ValueError:
        continue
    h = h if isinstance(h, dict) else {}
    v = h.get("version", 0)
    logs.append((RowCodec(str(h.get("id", "")), version=v if isinstance(v, int) else 0), [r for r in lines[1:] if r]))
t0 = time.process_time()
for _ in range(int(sys.argv[3])):
    for codec, rows in logs:
        for i, r in enumerate(rows):
            codec.decode_row(r, pos=i, offset=i, line=i + 2)
print(json.dumps({"cpu": time.process_time() - t0, "n": sum(len(r) for _c, r in logs)}))
'''

ZSTD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
from app.log.source.zstdsource import ZstdSource
src = ZstdSource(sys.argv[2])
t0 = time.process_time()
n = 0
for _ in range(int(sys.argv[3])):
    for seg in src.forward():
        n += len(seg.data)
print(json.dumps({"cpu": time.process_time() - t0, "n": n}))
'''


def measure(code: str, trees: dict[str, str], arg: str, repeat: int, runs: int) -> dict[str, list[float]]:
    got: dict[str, list[float]] = {k: [] for k in trees}
    for _ in range(runs):
        for k, tree in trees.items():
            out = subprocess.run([sys.executable, "-c", code, tree, arg, str(repeat)], capture_output=True,
                                 text=True, check=True).stdout
            got[k].append(json.loads(out)["cpu"])
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--before", default="/work/main", help="the other source tree (default /work/main)")
    ap.add_argument("--zstd", help="a zstd session log for the frame walk (skipped without it)")
    a = ap.parse_args()
    print("load:", open("/proc/loadavg").read().strip(), flush=True)
    trees = {"before": a.before, "this tree": str(REPO)}
    cases = [("decode_row over the fixtures", DECODE, FIXTURES, a.repeat)]
    if a.zstd:
        cases.append(("ZstdSource.forward", ZSTD, a.zstd, max(1, a.repeat // 2)))
    for name, code, arg, repeat in cases:
        got = measure(code, trees, arg, repeat, a.runs)
        b, t = statistics.median(got["before"]), statistics.median(got["this tree"])
        print(f"{name} (x{repeat}, {a.runs} runs each): before {b:.3f} s CPU, this tree {t:.3f} s CPU, "
              f"ratio {t / b:.3f}", flush=True)


if __name__ == "__main__":
    main()
