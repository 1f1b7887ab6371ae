"""Cost of the fork's parent barrier: fork() of a synthetic log with the parent flush (as shipped)
against the same fork with the flush skipped (reference), medians of N runs each, interleaved.
The parent is freshly written before each run (dirty pages: the worst case for the flush)."""
from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time

import app.store.forking as forking
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl


def main(mb: int = 50, runs: int = 5) -> None:
    d = tempfile.mkdtemp(prefix="forkbench-", dir=os.environ.get("BENCH_DIR"))
    src = os.path.join(d, "src.jsonl")
    write_jsonl(src, SessionSynth(seed=9), target_bytes=mb << 20)
    real = forking.parent_durable
    times = {"with parent flush": [], "without (reference)": []}
    try:
        for i in range(runs):
            for name in times:
                run_dir = os.path.join(d, f"{name.split()[0]}-{i}")
                os.makedirs(run_dir)
                parent = os.path.join(run_dir, "session.jsonl")
                shutil.copyfile(src, parent)            # dirty pages, as a live writer leaves them
                forking.parent_durable = real if name.startswith("with") else (lambda path: None)
                r = open_reader(parent)
                t = time.perf_counter()
                forking.fork(r, None, child_id=f"c{i}")
                times[name].append(time.perf_counter() - t)
                r.close()
    finally:
        forking.parent_durable = real
        shutil.rmtree(d, ignore_errors=True)
    ref = statistics.median(times["without (reference)"])
    ours = statistics.median(times["with parent flush"])
    print(f"fork of a {mb} MB log, median of {runs}: reference (no parent flush) {ref:.3f} s, "
          f"with the parent flush {ours:.3f} s, ratio {ours / ref:.2f}x")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
