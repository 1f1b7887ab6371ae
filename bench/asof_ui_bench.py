#!/usr/bin/env python3
"""Time scrubber in the window (issue 30): event-loop stalls while the replay's background pass runs
and while the slider is dragged, and how long the last position of a drag takes to show.

    .venv/bin/python bench/asof_ui_bench.py [--size 150MB] [--drag-s 6]

* Input: the generated log of ``bench/asof_bench.py`` (reused from bench/data/, its caches too:
  run that bench first, or the seq index and checkpoints are built here by the child process).
* Phases (``ui_bench.StallMeter``: a 5 ms timer's lateness, target p99 16 ms; reference in the same
  run: the same timer on an idle Qt loop in a sibling process over the same phases):
  ``replay background pass`` (View's scrubber turned on: context from the saved caches, then the
  side index filled in a worker), ``dragging`` (the slider moved to a random position every 16 ms
  for ``--drag-s`` seconds, as a mouse drag moves it).
* After the drag: the time from the last move to the chip showing that position's answer, and how
  many answers were asked, shown and dropped (stale) during the drag.

Runs offscreen unless DISPLAY is set.  This machine is shared: a 150 MB log by default, not 1 GB.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

TARGET_P99_MS = 16.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="150MB")
    ap.add_argument("--drag-s", type=float, default=6.0)
    a = ap.parse_args(argv)
    from asof_bench import DATA, gen
    path = gen(a.size)
    os.environ.setdefault("SESSION_LENS_CACHE_DIR", str(DATA / f"asof-cache-{a.size}"))
    from ui_bench import StallMeter, bench_app, spin_until, stall_line
    qapp = bench_app()
    from PySide6.QtCore import QTimer
    from app.ui.main_window import MainWindow
    meter = StallMeter()
    win = MainWindow(theme_mode="light")
    win.resize(1400, 900)
    win.frame_actions.tour_enabled = False
    win.show()
    h, ra = win.history, win.replay_actions
    win.open_store(str(path))
    spin_until(lambda: h.rows and not h.loading, 120)
    spin_until(lambda: h.index_state == "ready", 900)
    print(f"-- {path.stat().st_size / 1e6:.0f} MB ({qapp.platformName()}); load average {os.getloadavg()[0]:.1f}",
          flush=True)
    meter.start("replay background pass")
    t0 = time.perf_counter()
    ra.set_bar_visible(True)
    spin_until(lambda: ra.model.ctx is not None, 600)
    t_ctx = time.perf_counter() - t0
    spin_until(lambda: ra.model.filled, 1800)
    t_fill = time.perf_counter() - t0
    print(f"  context (saved caches) {t_ctx:.1f} s; side index filled {t_fill:.1f} s after the scrubber was "
          "turned on", flush=True)
    last = ra.model.ctx.last
    rng = random.Random(30)
    state = {"n": 0, "t_last": 0.0, "seq": 0}
    shown = []
    ra.model.answered.connect(lambda st: shown.append(st["seq"]))
    asked0, dropped0 = ra.model.asked, ra.model.dropped

    def move():
        state["n"] += 1
        state["seq"] = rng.randrange(last + 1)
        state["t_last"] = time.perf_counter()
        ra.bar.slider.setValue(state["seq"])            # as a mouse drag moves it (valueChanged -> scrub)
    meter.set_phase("dragging")
    timer = QTimer()
    timer.setInterval(16)
    timer.timeout.connect(move)
    timer.start()
    end = time.perf_counter() + a.drag_s
    spin_until(lambda: time.perf_counter() >= end, a.drag_s + 60)
    timer.stop()
    want = state["seq"]
    spin_until(lambda: ra.answer is not None and ra.answer["seq"] == want, 120)
    settle_ms = (time.perf_counter() - state["t_last"]) * 1000
    meter.stop()
    s = meter.summary()
    for ph in ("replay background pass", "dragging"):
        if ph in s:
            print("  " + stall_line(ph, s[ph]) + f"; target p99 {TARGET_P99_MS:.0f} ms -> ratio "
                  f"{s[ph]['p99_ms'] / TARGET_P99_MS:.2f}", flush=True)
    print(f"  drag: {state['n']} moves in {a.drag_s:.0f} s; {ra.model.asked - asked0} answers asked, {len(shown)} shown, "
          f"{ra.model.dropped - dropped0} dropped as stale; last position shown {settle_ms:.0f} ms after the last move "
          f"(target for one answer: 300 ms)", flush=True)
    win.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
