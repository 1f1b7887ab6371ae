#!/usr/bin/env python3
"""The window's refinement of provisional list titles (decision 0016), without the window.

    python bench/list_refine.py HOME

Lists HOME as a first list does (bounded title reads, empty cache), then refines every provisional title the
way the window's worker does (:func:`app.store.titles_child.refine`: the middles read in a nice-15 child
process, each answer recorded over the cache entry in this process) and prints the refinement's wall clock,
this process's CPU during it (what the window's worker thread costs the UI's interpreter) and how many titles
changed.  Run from the checkout to measure (it is imported from the current folder).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time


def main() -> None:
    sys.path.insert(0, os.getcwd())
    os.environ["SESSION_LENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="sl-cache-")
    from app.store import discovery, titles
    from app.store.titles_child import refine
    listing = discovery.discover(sys.argv[1], titles=True, workers=2)
    todo = [s for s in listing.sessions if not s.title_exact]
    changed = [0]

    def on_title(k: int, got: object) -> None:
        r = titles.apply_exact(todo[k], got)      # type: ignore[arg-type]
        changed[0] += bool(r and r[1])
    w, c = time.perf_counter(), time.process_time()
    n = refine([(i.path, i.format, i.size, i.mtime) for i in todo], on_title, lambda: False)
    print(f"{len(listing.sessions)} sessions, {n} provisional titles refined ({changed[0]} changed) in "
          f"{time.perf_counter() - w:.2f} s wall; this process's CPU meanwhile {time.process_time() - c:.2f} s; "
          f"load average {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
