"""The background pass's peak anonymous memory (issue 36: the scan child stays <= 64 MB).

Runs :func:`app.store.ahead_cache.cached_ahead` (the scan child's "outline" task: one read building the fold
checkpoints, the surface index and the outline, then their cache files) on PATH, in this process, with a
fresh cache folder, and prints the peak ``RssAnon`` (polled every 10 ms) beside the reference: the
anonymous memory of the same process after its imports, before the pass; and the ratio.

    python bench/ahead_memory.py PATH [--trim]
"""
from __future__ import annotations

import argparse
import ctypes
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def anon_kb() -> int:
    with open("/proc/self/status") as f:
        for ln in f:
            if ln.startswith("RssAnon:"):
                return int(ln.split()[1])
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    a = ap.parse_args()
    os.environ["SESSION_LENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="ahead-mem-")
    from app.log.index.reader import LogReader
    from app.store.ahead_cache import cached_ahead
    reader = LogReader.open(a.path)
    reader.index or reader.build_index()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    ref = anon_kb()
    peak = [ref]
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], anon_kb())
            time.sleep(0.01)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    t = time.perf_counter()
    _, status = cached_ahead(reader)
    secs = time.perf_counter() - t
    stop.set()
    th.join()
    peak[0] = max(peak[0], anon_kb())
    mb = Path(a.path).stat().st_size / 2**20
    print(f"log {mb:.0f} MB  pass {secs:.1f} s  {status}")
    print(f"peak anon {peak[0] / 1024:.1f} MB  (reference, after imports and the seq index: {ref / 1024:.1f} MB;"
          f" ratio {peak[0] / max(1, ref):.2f}; the pass's own share {(peak[0] - ref) / 1024:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
