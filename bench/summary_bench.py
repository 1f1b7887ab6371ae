"""What one refresh of the session summary costs on the UI thread after N older pages of a big log
(``app.ui.summary``), beside the reference: the former summary's walk over every loaded event.

    .venv/bin/python bench/summary_bench.py --input bench/data/base-1024MB-v4.jsonl --pages 40

Reported (median of --runs, wall and CPU, ms): ``walk`` the reference (every loaded event, as the
summary did before round 7), ``cold`` the per-page tallies of every page at once (the worst case: a
jump installing none of them counted), ``warm`` a refresh with nothing new (what a burst of row
changes costs), ``worker`` counting one older page (done in its page worker, off the UI thread),
``new page`` one refresh after one more page (what scrolling costs the UI thread per page).
Qt-free: the RowWindow and the page jobs are used directly, as the model does."""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

from app.ui.history.pages import older_job, _open_job  # noqa: E402
from app.ui.history.window import RowWindow  # noqa: E402
from app.ui.summary import _TALLY, _tally_events, loaded_tally  # noqa: E402
from fixtures_util import WorkerJob  # noqa: E402  (a job outside the runner: never cancelled)


def timed(fn) -> tuple[float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - w0) * 1000, (time.process_time() - c0) * 1000


def forget(w: RowWindow) -> None:
    for lp in w.pages:
        if hasattr(lp, _TALLY):
            delattr(lp, _TALLY)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--input", required=True)
    ap.add_argument("--pages", type=int, default=40)
    ap.add_argument("--page-size", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    job = WorkerJob()
    reader, lp = _open_job(job, a.input, None, a.page_size, False, False)
    w = RowWindow()
    w.install_tail(lp)
    for _ in range(a.pages):
        older = older_job(job, reader, w.pages[0].page, a.page_size, False, False)
        if not older.page.items:
            break
        w.add_older_page(older)
    spare = older_job(job, reader, w.pages[0].page, a.page_size, False, False)
    res: dict = {"walk": [], "cold": [], "warm": []}
    for _ in range(a.runs):
        res["walk"].append(timed(lambda: _tally_events(w.events.values())))
        forget(w)
        res["cold"].append(timed(lambda: loaded_tally(w)))
        res["warm"].append(timed(lambda: loaded_tally(w)))
    loaded_tally(w)
    res["worker"] = [timed(lambda: _tally_events(spare.events.values())) for _ in range(a.runs)]
    w.add_older_page(spare)                  # one more page (counted in its worker): the UI adds records
    res["new page"] = [timed(lambda: loaded_tally(w))]
    assert loaded_tally(w)["calls"] == _tally_events(w.events.values())["calls"]
    print(f"{a.input}: {len(w.pages)} pages, {len(w.events):,} loaded events; load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    ref = statistics.median(x[0] for x in res["walk"])
    for k, v in res.items():
        wall = statistics.median(x[0] for x in v)
        cpu = statistics.median(x[1] for x in v)
        print(f"  {k:9s} wall {wall:8.2f} ms  cpu {cpu:8.2f} ms  ({wall / ref:.3f} of walk)")
    reader.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
