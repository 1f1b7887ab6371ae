#!/usr/bin/env python3
"""Launch to first page painted (issue 15 item 7, target <= 1.0 s), with references from the same run.

    python bench/launch.py [FILE] [--runs 5]

Each run is a fresh ``python -m app gui FILE --screenshot OUT`` (offscreen) with
``SESSION_LENS_MARK_FIRST_PAINT=1``: the window prints the wall-clock time at which it painted
its first tail page; the figure is that time minus the time the process was spawned.
References, measured in the same run: ``python -c pass`` and ``python -c "import PySide6.QtWidgets"``
(start to exit).  Medians of ``--runs`` runs, interleaved (2 shared cores: single runs lie).  CPU
beside wall: the window's process CPU time (all threads) when it painted, the reference's to its exit.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEMO = next(iter(sorted((REPO / "resources/demo/sessions").glob("*/*/session.jsonl"))), None)


def _env() -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": os.environ.get("QT_QPA_PLATFORM", "offscreen"),
           "SESSION_LENS_MARK_FIRST_PAINT": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)           # as installed: byte code cached
    return env


def run_s(cmd: list) -> float:
    t = time.time()
    subprocess.run(cmd, cwd=REPO, env=_env(), check=True, capture_output=True)
    return time.time() - t


def run_cpu(cmd: list) -> float:
    """CPU time (user + system) of a child run to its end."""
    before = os.times()
    subprocess.run(cmd, cwd=REPO, env=_env(), check=True, capture_output=True)
    after = os.times()
    return (after.children_user - before.children_user) + (after.children_system - before.children_system)


def first_paint_s(path: str, out: str) -> tuple:
    """(wall seconds from spawn to the first painted tail page, the process's CPU seconds by then)."""
    t = time.time()
    p = subprocess.Popen([sys.executable, "-m", "app", "gui", path, "--screenshot", out], cwd=REPO, env=_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    got = cpu = None
    assert p.stdout is not None
    for line in p.stdout:
        if line.startswith("first-paint ") and got is None:
            parts = line.split()
            got = float(parts[1]) - t
            cpu = float(parts[2]) if len(parts) > 2 else None
    rc = p.wait()
    if rc or got is None:
        raise SystemExit(f"gui run failed (rc {rc}): {p.stderr.read()[-2000:] if p.stderr else ''}")
    return got, cpu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("path", nargs="?", default=str(DEMO))
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    out = tempfile.mktemp(suffix=".png")
    first_paint_s(a.path, out)                          # warm the byte-code and disk caches
    py, qt, qt_cpu, app, app_cpu = [], [], [], [], []
    for _ in range(a.runs):
        py.append(run_s([sys.executable, "-c", "pass"]))
        qt.append(run_s([sys.executable, "-c", "import PySide6.QtWidgets"]))
        qt_cpu.append(run_cpu([sys.executable, "-c", "import PySide6.QtWidgets"]))
        wall, cpu = first_paint_s(a.path, out)
        app.append(wall)
        if cpu is not None:
            app_cpu.append(cpu)
    med = statistics.median
    rows = [{"row": "python -c pass", "value": round(med(py), 4), "unit": "s"},
            {"row": "python -c 'import PySide6.QtWidgets'", "value": round(med(qt), 4), "unit": "s",
             "cpu": round(med(qt_cpu), 4)},
            {"row": "launch -> first page painted", "value": round(med(app), 4), "unit": "s",
             "cpu": round(med(app_cpu), 4) if app_cpu else None,
             "reference": round(med(qt), 4), "referenceName": "import PySide6.QtWidgets s",
             "ratio": round(med(app) / med(qt), 3), "target": "<= 1.0 s", "runs": [round(x, 3) for x in app],
             "loadavg": os.getloadavg()[0]}]
    for r in rows:
        print(json.dumps(r))
    if os.path.exists(out):
        os.unlink(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
