"""Cancel latency of the callers moved to the job token (issue 34 item 3, second pass): from ``cancel()`` on
the token to the work having ended, for

* the home search's streaming scan (``live_search``) of one big unindexed session, cancelled ``--at`` seconds
  in: the token reaches the session being read (every 64 rows or entries);
* the timeline's in-process computation (``spans_for``, no child), cancelled ``--at`` seconds in: it ticks
  every 20 ms.

The reference, measured in the same run, is what the old code did on that cancel: the session (the
computation) ran to its end, so it is the uncancelled run's time minus ``--at``.  Medians of ``--runs`` runs
(default 5) on a ~9 MB generated log; small on purpose (2 shared cores).

    .venv/bin/python bench/jobs2_cancel_bench.py [--runs 5] [--turns 200] [--at 0.12]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _cancelled_after(work, at: float) -> float:
    """Seconds from the token's cancel (``at`` s after the start) to ``work(token)`` having returned."""
    from app.log.jobctl import Cancelled, Token
    token = Token("bench")
    end = [0.0]

    def run() -> None:
        try:
            work(token)
        except Cancelled:
            pass
        end[0] = time.perf_counter()
    th = threading.Thread(target=run)
    th.start()
    time.sleep(at)
    t0 = time.perf_counter()
    token.cancel()
    th.join()
    return max(0.0, end[0] - t0)


def _whole(work) -> float:
    t0 = time.perf_counter()
    work(None)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--at", type=float, default=0.12)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="jobs2-bench-"))
    os.environ["SESSION_LENS_CACHE_DIR"] = str(tmp / "cache")
    os.environ["SESSION_LENS_SCAN_INPROC"] = "1"           # the timeline computed in this process
    from app.store.fulltext import FullTextIndex
    from app.store.ftslive import live_search
    from app.store.timeline_child import spans_for
    from app.tools.plant import PlantingSynth
    from app.tools.synth import write_jsonl
    project = tmp / "home" / "projects" / "-work-x"
    project.mkdir(parents=True)
    log = project / "11111111-2222-3333-4444-555555555555.jsonl"
    write_jsonl(str(log), PlantingSynth(seed=4), turns=a.turns)
    print(f"log: {log.stat().st_size / 1e6:.1f} MB, {a.runs} runs, cancel {a.at:.2f} s in, medians")
    with FullTextIndex(str(tmp / "home"), db_path=str(tmp / "ix.sqlite")) as ix:
        def search(tok):
            return live_search(ix, "the", limit=50, exact=False, cancel=tok)

        def timeline(tok):
            os.environ["SESSION_LENS_CACHE_DIR"] = tempfile.mkdtemp(dir=tmp)   # (computed, never a cache hit)
            return spans_for(str(log), None, tok)
        search(None)
        for name, work in (("home search scan", search), ("timeline in-process", timeline)):
            new = statistics.median(_cancelled_after(work, a.at) for _ in range(a.runs))
            ref = statistics.median(max(0.0, _whole(work) - a.at) for _ in range(a.runs))
            print(f"{name:22s} cancel -> ended {new * 1000:7.1f} ms   reference (ran to its end) "
                  f"{ref * 1000:7.1f} ms   ratio {new / ref if ref else float('nan'):.3f}")


if __name__ == "__main__":
    main()
