"""The work done ahead (issue 29): the one streaming pass (fold checkpoints, surface index, outline) beside
the seq index of the same log (the issue's reference: pass <= 2x the seq index) and beside the three separate
builds it replaces, all measured in the same run on a generated v4 log with compactions.

    python bench/ahead_bench.py [--size MB] [--runs N] [--log PATH]

Times are CPU seconds of this process (user+system: steadier than wall time on a loaded machine) and
wall seconds; medians of ``--runs``.  Nothing is cached (each build reads the log afresh)."""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.log.fold.checkpoints import build_checkpoints  # noqa: E402
from app.log.fold.surface import ScanEnd, SurfaceIndex, extend_index  # noqa: E402
from app.log.query.ahead import build_ahead  # noqa: E402
from app.log.query.outline import build_outline  # noqa: E402
from app.store.faces import open_reader  # noqa: E402
from app.tools.synth import SessionSynth, write_jsonl  # noqa: E402


def _timed(fn) -> tuple[float, float]:
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def _three(path: str) -> None:
    r = open_reader(path)
    r.build_index()
    extend_index(r, SurfaceIndex(r.version or 0), None, ScanEnd())
    build_checkpoints(r)
    build_outline(r)


def _outline(path: str) -> None:
    r = open_reader(path)
    r.build_index()
    build_outline(r)


def _one(path: str) -> None:
    r = open_reader(path)
    r.build_index()
    build_ahead(r)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=float, default=8.0, help="MB of generated log (default 8)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--log", help="an existing log instead of a generated one")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = a.log or os.path.join(tmp, "session.v4.jsonl")
        if not a.log:
            write_jsonl(path, SessionSynth(seed=3, version=4, context_window=24_000), target_bytes=int(a.size * 1e6))
        mb = os.path.getsize(path) / 1e6
        print(f"log {mb:.1f} MB; load {os.getloadavg()[0]:.1f}; medians of {a.runs} runs (wall s / cpu s)")
        rows: dict[str, list[tuple[float, float]]] = {"seq index": [], "one pass": [], "three builds": [],
                                                      "outline only": []}
        for _ in range(a.runs):
            rows["seq index"].append(_timed(lambda: open_reader(path).build_index()))
            rows["one pass"].append(_timed(lambda: _one(path)))
            rows["three builds"].append(_timed(lambda: _three(path)))
            rows["outline only"].append(_timed(lambda: _outline(path)))
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in rows.items()}
        idx = med["seq index"]
        for k in ("one pass", "three builds", "outline only"):         # (each includes its own seq index build)
            w, c = med[k][0] - idx[0], med[k][1] - idx[1]
            print(f"{k:13s} {w:7.3f} s wall {c:7.3f} s cpu  = {w / max(idx[0], 1e-9):6.1f}x the seq index's wall "
                  f"({idx[0]:.3f} s; target <= 2x)")
        one, three = med["one pass"], med["three builds"]
        print(f"one pass / three builds: wall {(one[0] - idx[0]) / (three[0] - idx[0]):.2f}, "
              f"cpu {(one[1] - idx[1]) / (three[1] - idx[1]):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
