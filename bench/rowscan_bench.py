#!/usr/bin/env python3
"""The index's row scanner per MB, one core (issue 15): C vs interpreted vs the bulk scan before it (the mypyc build is gone: decision 0021).

    python bench/rowscan_bench.py FILE [--runs 3]

Cuts FILE (raw JSONL) into the segments the index scan reads (``fastindex._cuts``), then times, on those bytes
in memory, best of ``--runs`` CPU (``process_time``): ``fastindex.scan_buffer`` with the C row scanner
(when set-up built it) and with its source interpreted, and the previous standard-library bulk scan (the
oracle in ``tests/scanners_util.py``), each checked to give the same blocks; plus ``os.pread`` of every
segment and a warm ``cat`` as references.  A 100 MB log takes under a minute (the interpreted scanner is the
slow one: ``--no-python`` skips it).
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from scanners_util import SCANNERS, bulk_block, use  # noqa: E402

from app.log.index import fastindex as fx  # noqa: E402
from app.log.index.reader import LogReader  # noqa: E402
from app.log.source.sources import open_source  # noqa: E402
from index_primitives import best  # noqa: E402  (bench/: the best CPU time of a few runs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-python", action="store_true", help="skip the interpreted scanner")
    a = ap.parse_args()
    print("load:", open("/proc/loadavg").read().strip(), "| scanner of this tree:", fx.SCANNER)
    r = LogReader(open_source(a.file))
    src = r.source
    legacy = fx.wants_legacy(r)
    segs = [(p, e, d) for p, e, _at, d, over in fx._cuts(src, src.header_end, src.header_end) if over is None]
    mb = sum(e - p for p, e, _ in segs) / 1e6
    rows = sum(d.count(b"\n", 0, e - p) for p, e, d in segs)
    names = [n for n in ("c", "python") if n in SCANNERS and not (n == "python" and a.no_python)]
    for p, e, d in segs:                       # (same blocks from every scanner)
        want = bulk_block(d, e - p, None, legacy)
        for n in names:
            with use(n):
                assert fx.scan_buffer(d, 0, e - p, None, legacy) == want, (n, p)
    print(f"{os.path.basename(a.file)}: {mb:.1f} MB, {len(segs)} segments, {rows / mb:.0f} rows/MB, "
          f"legacy probe {'on' if legacy else 'off'}; every scanner gives the bulk scan's blocks")
    subprocess.run(["cat", a.file], stdout=subprocess.DEVNULL, check=True)
    cat = []
    for _ in range(a.runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(["cat", a.file], stdout=subprocess.DEVNULL, check=True)
        w = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cat.append((w, r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime))
    w, c = min(cat)
    print(f"  {'warm cat':34} {w * 1e3 / mb:6.3f} ms/MB wall {c * 1e3 / mb:6.3f} ms/MB CPU")
    fd = os.open(a.file, os.O_RDONLY)
    fx.heap_steady(True)                      # (as the index scan reads: no fresh pages per read)
    t = best(lambda: [os.pread(fd, e - p, p) for p, e, _d in segs], a.runs)
    print(f"  {'os.pread of the segments':34} {t * 1e3 / mb:6.3f} ms/MB CPU")
    bulk = best(lambda: [bulk_block(d, e - p, None, legacy) for p, e, d in segs], a.runs)
    print(f"  {'bulk scan (before, stdlib)':34} {bulk * 1e3 / mb:6.3f} ms/MB CPU  {mb / bulk / 1e3:5.2f} GB/s")
    for n in names:
        with use(n):
            t = best(lambda: [fx.scan_buffer(d, 0, e - p, None, legacy) for p, e, d in segs], a.runs)
        print(f"  {'row scanner, ' + n:34} {t * 1e3 / mb:6.3f} ms/MB CPU  {mb / t / 1e3:5.2f} GB/s  "
              f"({bulk / t:4.2f}x the bulk scan, {t * 1e9 / rows:5.0f} ns/row)")
    print("load:", open("/proc/loadavg").read().strip())


if __name__ == "__main__":
    main()
