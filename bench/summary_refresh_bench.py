#!/usr/bin/env python3
"""The session summary's refresh on the UI thread, on a long log (issue 29: no whole-log work on the UI thread).

    python bench/summary_refresh_bench.py --log PATH [--runs 7]

The window (offscreen unless DISPLAY is set) opens ``PATH`` and waits for the outline and the summary's whole-log
figures (run the background pass first, e.g. ``session-lens index PATH --all``, so that the outline is a cache
hit: ``SESSION_LENS_CACHE_DIR``).  Then, timed on the UI thread, medians of ``--runs``:

* **refresh**: one ``SummaryRefresh.refresh`` (the whole-log figures reused);
* **reference, the old way**: the same summary with every whole-log figure computed on the spot (``whole_log``
  without figures, what every refresh did before), from the same state; the two texts are checked equal;
* **worker**: ``outline_figures`` (once per outline, in the worker), timed here for scale.

Then *Errors only* on and off: the UI-thread time spent inside refreshes from the click until the errors are in
(``--before``: with the old refresh, every whole-log figure computed at each refresh).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


def _timed(fn, runs: int) -> tuple[float, object]:
    ts, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", required=True)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--before", action="store_true",
                    help="the Errors only part with the old refresh (the whole-log figures computed at each one)")
    a = ap.parse_args(argv)
    from ui_bench import bench_app, spin_until
    bench_app()
    from app.ui.main_window import MainWindow
    from app.ui.session_model import display_title
    from app.ui.summary import outline_figures, session_summary, whole_log
    from app.ui.summary_refresh import SummaryRefresh
    spent: list[float] = []
    refresh = SummaryRefresh.refresh

    def timed_refresh(self) -> str:             # (the class's: the window's timer connects the timed one)
        t = time.perf_counter()
        try:
            return refresh(self)
        finally:
            spent.append(time.perf_counter() - t)
    SummaryRefresh.refresh = timed_refresh      # type: ignore[method-assign]
    if a.before:                                # every refresh walks the whole log again, as before issue 29
        SummaryRefresh.figures = lambda self, ol: (True, outline_figures(ol))   # type: ignore[method-assign]

    win = MainWindow(theme_mode="light")
    win.resize(1400, 900)
    win.frame_actions.tour_enabled = False
    win.show()
    h, go, sr = win.history, win.go_actions, win.frame_actions.summary_refresh
    win.open_store(a.log)
    if not spin_until(lambda: not h.loading and go.outline is not None and h.jumps.can_jump(), 900):
        print("the outline or the seq index did not come")
        return 1
    spin_until(lambda: not sr.pending(), 60)
    ol = go.outline
    print(f"log {os.path.getsize(a.log) / 1e6:.1f} MB, {len(ol.turns):,} turns, {len(go.error_seqs):,} errors, "
          f"{len(h.seq_index.mark_code):,} marks; load {os.getloadavg()[0]:.1f}")

    def old_way() -> str:
        title = display_title(win.session, win.sessions.model.titles) if win.session is not None else ""
        return session_summary(h, win.session, title, whole_log(ol, h.seq_index, False))

    new_t, new_text = _timed(sr.refresh, a.runs)
    old_t, old_text = _timed(old_way, a.runs)
    work_t, _ = _timed(lambda: outline_figures(ol), a.runs)
    assert new_text == old_text, "the summary differs from the old way's"
    print(f"refresh on the UI thread {new_t * 1e3:.2f} ms; reference (the old way) {old_t * 1e3:.2f} ms; "
          f"ratio {old_t / max(new_t, 1e-9):.0f}x; the worker's figures (once per outline) {work_t * 1e3:.1f} ms; "
          f"load {os.getloadavg()[0]:.1f}")
    for state in ("on", "off"):
        spent.clear()
        go.act_errors_only.trigger()
        spin_until(lambda: not h.loading and h.jumps.paging_done() and not sr.pending(), 120)
        print(f"Errors only {state}: {len(spent)} refreshes, {sum(spent) * 1e3:.2f} ms on the UI thread in all "
              f"(max {max(spent, default=0) * 1e3:.2f} ms); load {os.getloadavg()[0]:.1f}")
    win.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
