"""Cancel latency of the one job API (issue 34 item 3): from ``job.cancel()`` to the job's function having
ended (``job.ended_at``), for

* a thread job polling its token (``job.report`` every 5 ms);
* a child job (``Jobs.submit_child``: a whole-log regex find in a ``scan`` child, cancelled after its first
  progress message);
* the reference, measured in the same run: the same find the way the window ran it before the job API
  (a thread job calling ``scan_child.run_isolated`` with ``lambda: job.cancelled`` and its own bridge).

Medians of ``--runs`` runs (default 5, small log: ~9 MB); also the progress reports delivered per second
of each (the one throttle: at most 25/s).

    QT_QPA_PLATFORM=offscreen .venv/bin/python bench/jobs_cancel_bench.py [--runs 5] [--turns 200]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _spin(job, gate):
    while not gate.wait(0.005):
        job.report(1, 2)


def _old_find(job, path):
    """The window's find before the job API: a thread job bridging a child by hand."""
    from app.log.query.find import FindOptions
    from app.store.scan_child import run_isolated
    from app.ui.workers import Cancelled

    def on_message(msg):
        if msg[0] == "progress":
            job.report(msg[1], msg[2])
    try:
        return run_isolated("find", path, None, {"opts": FindOptions(text="x.*y", regex=True), "limit": None},
                            on_message, lambda: job.cancelled)
    except InterruptedError:
        raise Cancelled(job.name) from None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--turns", type=int, default=200)
    a = ap.parse_args()
    import app.ui  # noqa: F401
    from PySide6.QtWidgets import QApplication
    from app.log.query.find import FindOptions
    from app.tools.plant import PlantingSynth
    from app.tools.synth import write_jsonl
    from app.ui.workers import Jobs
    qapp = QApplication.instance() or QApplication([])
    path = str(Path(tempfile.mkdtemp()) / "session.jsonl")
    write_jsonl(path, PlantingSynth(seed=4), turns=a.turns)
    jobs = Jobs()

    def until(cond, timeout=30.0):
        t = time.monotonic()
        while not cond():
            qapp.processEvents()
            time.sleep(0.001)
            if time.monotonic() - t > timeout:
                raise TimeoutError
    req = ("find", path, None, {"opts": FindOptions(text="x.*y", regex=True), "limit": None})
    kinds = {
        "thread job": lambda on_p: jobs.submit(_spin, threading.Event(), on_progress=on_p),
        "child job (submit_child)": lambda on_p: jobs.submit_child("scan", request=req, on_progress=on_p),
        "reference: hand-bridged child": lambda on_p: jobs.submit(_old_find, path, on_progress=on_p),
    }
    out: dict[str, tuple[float, float]] = {}
    for name, start in kinds.items():
        lat, rates = [], []
        for _ in range(a.runs):
            seen: list[float] = []
            job = start(lambda d, t, seen=seen: seen.append(time.monotonic()))
            until(lambda: len(seen) >= 3)
            until(lambda: time.monotonic() - seen[0] > 0.3)
            rates.append((len(seen) - 1) / max(1e-6, seen[-1] - seen[0]))
            t0 = time.perf_counter()
            job.cancel()
            until(lambda: job.ended_at is not None)
            lat.append((job.ended_at - t0) * 1000)
            until(lambda: job.finished)
        out[name] = (statistics.median(lat), statistics.median(rates))
    ref = out["reference: hand-bridged child"][0]
    print(f"log {Path(path).stat().st_size / 1e6:.1f} MB, {a.runs} runs, medians")
    for name, (ms, rate) in out.items():
        print(f"  {name:32s} cancel {ms:6.1f} ms  (reference {ref:6.1f} ms, ratio {ms / max(ref, 1e-6):4.2f})"
              f"  progress {rate:5.1f}/s")
    jobs.shutdown()


if __name__ == "__main__":
    main()
