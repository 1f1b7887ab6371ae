#!/usr/bin/env python3
"""The reference of the UI benches' event-loop lateness: the same 5 ms timer on an idle Qt loop.

Started by :class:`ui_bench.StallMeter` as a sibling process (same interpreter, same user, same
scheduling class and nice value as the window's process: SCHED_OTHER, the parent's nice), it
runs a ``QCoreApplication`` whose only work is a 5 ms ``PreciseTimer`` measuring its own
lateness, exactly as the meter does in the window.  It runs through the same phases at the same
time as the window (the parent writes ``phase NAME`` and ``stop`` lines on its stdin), so it
shares the window's background: the other processes of the machine, the outline/problems child,
the window's own process.  Its p99 is what the machine's load alone costs a loop that does
nothing; the window's p99 minus it is what the UI's own work adds.

Protocol: prints ``ready`` once the loop runs; on ``stop`` (or stdin closed) prints one JSON line
``{phase: {"late_ms": [...], "cpu_ms": [...]}}`` and exits.
"""
from __future__ import annotations

import json
import os
import sys
import threading
import time


def main() -> int:
    if not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QCoreApplication, Qt, QTimer
    app = QCoreApplication([sys.argv[0]])
    interval_ms = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    state = {"phase": None, "stop": False}
    late: dict = {}
    cpu: dict = {}
    last = [None, 0.0]

    def tick():
        now = time.perf_counter()
        ph = state["phase"]
        if state["stop"]:
            app.quit()
            return
        if last[0] is not None and ph is not None:
            late.setdefault(ph, []).append(round(max(0.0, now - last[0] - interval_ms / 1000) * 1000, 3))
            cpu.setdefault(ph, []).append(round((time.thread_time() - last[1]) * 1000, 3))
        last[0], last[1] = now, time.thread_time()

    def read_stdin():                      # blocks in read(): the GIL is free for the loop
        for line in sys.stdin:
            cmd = line.strip()
            if cmd.startswith("phase "):
                state["phase"] = cmd[6:]
            elif cmd == "stop":
                break
        state["stop"] = True
    timer = QTimer()
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    timer.setInterval(interval_ms)
    timer.timeout.connect(tick)
    timer.start()
    threading.Thread(target=read_stdin, daemon=True).start()
    QTimer.singleShot(0, lambda: (print("ready", flush=True)))
    app.exec()
    print(json.dumps({ph: {"late_ms": late[ph], "cpu_ms": cpu.get(ph, [])} for ph in late}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
