"""A measuring run of the real window, reached the same way from source and from the packaged binary.

``SESSION_LENS_PROBE=scroll-find session-lens gui LOG`` (or ``python -m app gui LOG``) runs the
window on LOG under the same qasync loop as a user's start, then, instead of waiting for the user:

* waits for the tail page and the seq index;
* starts a whole-log find of ``SESSION_LENS_PROBE_WORD`` (default ``the``) and starts it again
  whenever it ends, so a find runs during the whole measurement;
* scrolls the history programmatically (the scroll bar moved 240 px every 16 ms, as a wheel
  moves it, turning at either end and every 150 steps) for ``SESSION_LENS_PROBE_SECONDS`` (8);
* measures the event loop's lag meanwhile: a 5 ms precise QTimer heartbeat; each tick's
  lateness is the time beyond its interval the loop could not run it;
* prints one JSON line (``probe: {...}``: p50/p99/max lag in ms, ticks, finds started and
  finished, scroll steps, the most find child processes seen at once, platform, frozen) and exits.

An environment variable rather than an option: it is a test hook (``packaging/package_test.sh``
runs it in the installed binary and in the development app, alternately), not a user feature, and
stays out of ``--help``.
"""
from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

from PySide6.QtCore import Qt, QTimer

PROBES = ("scroll-find",)
HEARTBEAT_MS = 5
SCROLL_MS = 16
SCROLL_PX = 240


class Heartbeat:
    """A precise timer's lateness per tick (seconds beyond its interval)."""

    def __init__(self, interval_ms: int = HEARTBEAT_MS):
        self.interval = interval_ms / 1000
        self.late: list[float] = []
        self._last = 0.0
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)

    def start(self) -> None:
        self._last = time.perf_counter()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def _tick(self) -> None:
        now = time.perf_counter()
        self.late.append(max(0.0, now - self._last - self.interval))
        self._last = now


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def child_pids() -> set[int]:
    """Child processes of this process (Linux /proc; empty elsewhere)."""
    out: set[int] = set()
    for f in Path("/proc/self/task").glob("*/children"):
        try:
            out.update(int(p) for p in f.read_text().split())
        except OSError:
            pass
    return out


async def _until(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            return False
        await asyncio.sleep(0.02)
    return True


async def scroll_find(app, path: str) -> int:
    """The scroll-during-find probe (module docstring); returns the exit code."""
    from .main_window import MainWindow
    seconds = float(os.environ.get("SESSION_LENS_PROBE_SECONDS", "8"))
    word = os.environ.get("SESSION_LENS_PROBE_WORD", "the")
    win = MainWindow(theme_mode="light")
    win.frame_actions.tour_enabled = False
    win.resize(1400, 900)
    win.show()
    h, fa = win.history, win.find_actions
    win.open_store(path)
    if not await _until(lambda: bool(h.rows), 120) or not await _until(lambda: h.index_state == "ready", 300):
        print(f"probe: the tail page or the index did not come (index {h.index_state})", file=sys.stderr)
        win.shutdown()
        return 1
    sb = win.view.verticalScrollBar()
    st = {"dir": -1, "n": 0, "finds": 0, "children": 0}

    def scroll() -> None:
        st["n"] += 1
        v = sb.value() + st["dir"] * SCROLL_PX
        if st["n"] % 150 == 0 or v <= 0 or v >= sb.maximum():
            st["dir"] = -st["dir"]
        sb.setSliderPosition(max(0, min(sb.maximum(), v)))

    def keep_finding() -> None:
        st["children"] = max(st["children"], len(child_pids()))
        if not fa.running:
            st["finds"] += 1
            fa.run(word)
    beat = Heartbeat()
    scroller, finder = QTimer(), QTimer()
    scroller.setInterval(SCROLL_MS)
    scroller.timeout.connect(scroll)
    finder.setInterval(50)
    finder.timeout.connect(keep_finding)
    keep_finding()
    beat.start()
    scroller.start()
    finder.start()
    t0 = time.perf_counter()
    while (elapsed := time.perf_counter() - t0) < seconds:       # (qasync's timers may fire a little early)
        await asyncio.sleep(max(0.01, seconds - elapsed))
    for t in (beat, scroller, finder):
        t.stop()
    done = st["finds"] - (1 if fa.running else 0)
    late_ms = [x * 1000 for x in beat.late]
    rep = {"probe": "scroll-find", "seconds": round(elapsed, 2), "ticks": len(late_ms),
           "p50_ms": round(statistics.median(late_ms), 2) if late_ms else None,
           "p99_ms": round(percentile(late_ms, 0.99), 2), "max_ms": round(max(late_ms, default=0.0), 2),
           "finds_started": st["finds"], "finds_done": done, "scroll_steps": st["n"],
           "find_children_max": st["children"], "rows": len(h.rows), "platform": app.platformName(),
           "frozen": bool(getattr(sys, "frozen", False)), "loadavg": round(os.getloadavg()[0], 2)}
    win.shutdown()
    win.close()
    print("probe: " + json.dumps(rep), flush=True)
    return 0 if late_ms and st["children"] > 0 else 1


async def run_probe(app, name: str, path: str | None) -> int:
    if name not in PROBES or not path:
        print(f"probe: unknown probe {name!r} or no log path (probes: {', '.join(PROBES)})", file=sys.stderr)
        return 2
    return await scroll_find(app, path)
