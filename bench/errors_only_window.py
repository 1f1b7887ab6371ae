#!/usr/bin/env python3
"""*Errors only* in the window on a long log (issue 29: <= 300 ms on the whole log; event-loop p99 <= 16 ms).

    python bench/errors_only_window.py --log PATH [--runs 3]

The window (offscreen unless DISPLAY is set) opens ``PATH`` and waits for the outline (run the background pass
first, e.g. ``session-lens index PATH --all``, so that it is a cache hit: ``SESSION_LENS_CACHE_DIR``); then,
per run, the *Errors only* action is triggered and timed until:

* the first errors are on screen: the first model reset after the click with an errors' page in the window (the
  newest errors' page, or the whole errors' page when the code reads it at once), and its first viewport paint;
* every error of the outline is in the window (the model reset installing the whole errors' page).

The event loop's lateness (``ui_bench.StallMeter``, a 5 ms timer, beside an idle Qt loop in a sibling process)
is measured from the click to the end.  Medians of ``--runs``.
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log", required=True)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    from ui_bench import StallMeter, bench_app, spin_until, stall_line
    bench_app()
    from PySide6.QtCore import QEvent, QObject
    from app.ui.main_window import MainWindow

    class Paints(QObject):
        times: list[float] = []

        def eventFilter(self, obj, e):
            if e.type() == QEvent.Type.Paint:
                self.times.append(time.perf_counter())
            return False

    win = MainWindow(theme_mode="light")
    win.resize(1400, 900)
    win.frame_actions.tour_enabled = False
    win.show()
    paints = Paints()
    win.view.viewport().installEventFilter(paints)
    h, go = win.history, win.go_actions
    t0 = time.perf_counter()
    win.open_store(a.log)
    if not spin_until(lambda: not h.loading and go.outline is not None and h.jumps.can_jump(), 900):
        print("the outline or the seq index did not come")
        return 1
    print(f"log {os.path.getsize(a.log) / 1e6:.1f} MB, {len(go.error_seqs):,} errors; window ready in "
          f"{time.perf_counter() - t0:.1f} s; load {os.getloadavg()[0]:.1f}")
    resets: list[float] = []
    alls: list[float] = []
    want = set(go.error_seqs)

    def on_reset() -> None:                    # (checked once per reset: not by the waiting loop, on the UI thread)
        if any(lp.sparse for lp in h.window.pages):
            resets.append(time.perf_counter())
            if want <= h.window.events.keys():
                alls.append(resets[-1])
    h.modelReset.connect(on_reset)
    meter = StallMeter()
    first, painted, whole = [], [], []
    for _ in range(a.runs):
        resets.clear()
        alls.clear()
        paints.times.clear()
        meter.start("errors-only")
        t = time.perf_counter()
        go.act_errors_only.trigger()
        spin_until(lambda: resets and paints.times[-1:] and paints.times[-1] > resets[0], 60)
        first.append(resets[0] - t)
        painted.append(min(x for x in paints.times if x > resets[0]) - t)
        spin_until(lambda: bool(alls), 120)
        whole.append(alls[0] - t)
        meter.timer.stop()
        go.act_errors_only.trigger()
        spin_until(lambda: not h.loading, 120)
    meter.stop()
    rows = len(h.rows)
    med = statistics.median
    print(f"first errors' page on screen (model reset) {med(first):.3f} s, painted {med(painted):.3f} s; "
          f"every error in the window {med(whole):.3f} s (target <= 0.3 s); {rows:,} rows after; "
          f"load {os.getloadavg()[0]:.1f}")
    for ph, s in meter.summary().items():
        print(stall_line(ph, s))
    win.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
