"""Cost of the toolbar fit (app/ui/toolbar_fit.py), which runs on every resize of the toolbar,
beside a reference from the same run: one window resize by 1 px, processed (the fit included).

    QT_QPA_PLATFORM=offscreen python bench/toolbar_fit_bench.py [--width 1000]

Prints medians of 5 runs (wall and CPU time per call, in µs) and the ratio.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def per_call(f, n: int) -> tuple:
    """(median wall µs, median CPU µs) per call of ``f`` over 5 runs of ``n`` calls."""
    runs = []
    for _ in range(5):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(n):
            f()
        runs.append(((time.perf_counter() - t) / n * 1e6, (time.process_time() - c) / n * 1e6))
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=1000, help="window width (1000: one group compacted)")
    args = ap.parse_args()
    os.environ.setdefault("SESSION_LENS_NO_TOUR", "1")
    from PySide6.QtWidgets import QApplication
    app = QApplication(sys.argv[:1])
    from app.ui.main_window import MainWindow
    win = MainWindow(page_size=50, theme_mode="light")
    win.resize(args.width, 860)
    win.show()
    app.processEvents()
    fit = win.frame_actions.toolbar_fit
    flip = [0]

    def resize_step() -> None:
        flip[0] ^= 1
        win.resize(args.width + flip[0], 860)
        app.processEvents()

    ref = per_call(resize_step, 50)
    got = per_call(fit.fit, 200)
    print(f"load average {os.getloadavg()[0]:.2f}; groups compacted at {args.width} px: {fit.compacted}")
    print(f"fit(): {got[0]:.1f} µs wall, {got[1]:.1f} µs CPU")
    print(f"reference, one window resize by 1 px processed (fit included): {ref[0]:.1f} µs wall, {ref[1]:.1f} µs CPU")
    print(f"ratio (wall): {got[0] / ref[0]:.3f}")
    win.shutdown()


if __name__ == "__main__":
    main()
