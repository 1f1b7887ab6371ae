"""Surface index cost: one streaming fold per reader (app.log.fold.surface.index_for) against the
reference full decode pass (LogReader.iter_events) over the same synthetic log, medians of N runs;
then the per-page cost of labelling rows once the index exists."""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

from app.log.index.reader import LogReader
from app.log.fold.surface import index_for, page_surface
from app.tools.synth import SessionSynth, write_jsonl


def main(mb: int = 20, runs: int = 3) -> None:
    d = tempfile.mkdtemp(prefix="surfbench-")
    p = os.path.join(d, "session.jsonl")
    info = write_jsonl(p, SessionSynth(seed=5, context_window=40000), target_bytes=mb << 20)
    ref, ours, page = [], [], []
    for _ in range(runs):
        r = LogReader.open(p)
        t = time.perf_counter()
        n = sum(1 for _ in r.iter_events(logical=False))
        ref.append(time.perf_counter() - t)
        r = LogReader.open(p)
        t = time.perf_counter()
        idx = index_for(r)
        ours.append(time.perf_counter() - t)
        pg = r.tail_page(50)
        t = time.perf_counter()
        for _ in range(100):
            page_surface(idx, pg.items)
        page.append((time.perf_counter() - t) / 100)
    rm, om = statistics.median(ref), statistics.median(ours)
    print(f"log {info['bytes'] / 1e6:.1f} MB, {n} events, {len(idx.compactions)} compactions, "
          f"{len(idx.fold.replaced_by)} shadowed")
    print(f"reference full decode pass: {rm:.3f} s (median of {runs})")
    print(f"surface index (one pass):   {om:.3f} s  ratio {om / rm:.2f}x")
    print(f"label one tail page ({len(pg.items)} rows) from the index: {statistics.median(page) * 1e3:.3f} ms")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
