"""Live-follow latency: from a batch's durable write (flush) to its rows arriving in a reader.

A writer **process** (this script with ``--writer``) appends a synthetic session through
``SessionWriter`` at ``--rate`` events/s and records, per event, when it was appended, when
its batch's write started and when the batch's fsync returned.  The parent follows the same
file with

* ``Follower`` (inotify wake-ups; then again poll-only at 100 ms), rows timed when ``poll()``
  returns them;
* the Qt ``LiveFollower`` (offscreen), rows timed in the UI-thread slot of ``rows_appended``;
* the history view model (``HistoryModel`` following the log as the app does: stitched rows
  grow the tail page in the page worker), rows timed when ``liveAppended`` says they are in.

Latency = arrival − flush (CLOCK_MONOTONIC is system-wide, so both processes share it).  It
can be slightly negative: a reader may see the bytes after ``write()`` and before ``fsync()``
returns.  ``append→row`` adds the write-behind window (``--batch-delay-ms``, dsh default 200).

    .venv/bin/python bench/live_bench.py [--rate 1000] [--seconds 5] [--batch-delay-ms 200] [--zstd]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


# --------------------------------------------------------------------------- writer process

def writer_main(args) -> None:
    from app.store.writer import SessionWriter
    from app.tools.synth import SessionSynth

    times: dict = {}

    class Timed(SessionWriter):
        def _write(self, batch):
            t0 = time.monotonic()
            super()._write(batch)
            t1 = time.monotonic()
            for e in batch:
                times[e["seq"]][1:] = [t0, t1]

    syn = SessionSynth(args.seed)
    n = int(args.rate * args.seconds)
    events = []
    for t in syn.turns():
        events.extend(t)
        if len(events) >= n:
            break
    events = events[:n]
    w = Timed(args.path, syn.header(), fmt="zstd" if args.zstd else "jsonl", batch_delay_ms=args.batch_delay_ms)
    time.sleep(args.start_delay)
    t0 = time.monotonic()
    for i, e in enumerate(events):
        due = t0 + i / args.rate
        d = due - time.monotonic()
        if d > 0:
            time.sleep(d)
        times[e["seq"]] = [time.monotonic(), None, None]
        w.append([e])
    w.close()
    with open(args.times, "w") as f:
        json.dump({str(k): v for k, v in times.items()}, f)


def spawn_writer(path, times, args) -> subprocess.Popen:
    cmd = [sys.executable, __file__, "--writer", "--path", str(path), "--times", str(times),
           "--rate", str(args.rate), "--seconds", str(args.seconds), "--batch-delay-ms", str(args.batch_delay_ms),
           "--seed", str(args.seed), "--start-delay", "0.3"] + (["--zstd"] if args.zstd else [])
    return subprocess.Popen(cmd, cwd=REPO)


# --------------------------------------------------------------------------- readers

def follow_plain(path, n, use_inotify: bool) -> dict:
    from app.store.watch import Follower
    f = Follower(str(path), from_start=True, poll_interval=0.1, use_inotify=use_inotify)
    arrivals: dict = {}
    end = time.monotonic() + 120
    while len(arrivals) < n and time.monotonic() < end:
        evs = f.poll()
        if evs:
            t = time.monotonic()
            for e in evs:
                arrivals[e.seq] = t
            continue
        f.wait(0.5)
    f.close()
    return arrivals


def follow_qt(path, n) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QCoreApplication, QTimer

    from app.log.index.reader import LogReader
    from app.ui.live import LiveFollower
    app = QCoreApplication.instance() or QCoreApplication([])
    while not path.exists():
        time.sleep(0.002)
    reader = LogReader.open(str(path))
    live = LiveFollower(reader, poll_interval=0.1)
    arrivals: dict = {}

    def on_rows(evs):
        t = time.monotonic()
        for e in evs:
            arrivals[e.seq] = t
        if len(arrivals) >= n:
            app.quit()

    def on_page(page):
        t = time.monotonic()
        for e in page.events:
            arrivals.setdefault(e.seq, t)

    live.rows_appended.connect(on_rows)
    live.tail_reinstalled.connect(on_page)
    QTimer.singleShot(120_000, app.quit)
    live.start()
    app.exec()
    live.stop()
    reader.close()
    return arrivals


def follow_model(path, n) -> dict:
    """The history view model (app.ui.history.model): a row counts as arrived when the
    model has it in its loaded pages (``liveAppended``, on the UI thread)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    import app.ui  # noqa: F401  (PySide6 work-around)
    from app.ui.history.model import HistoryModel
    qapp = QApplication.instance() or QApplication([])
    while not path.exists() or path.stat().st_size == 0:
        time.sleep(0.002)
    m = HistoryModel(page_size=50, live_options={"poll_interval": 0.1})
    arrivals: dict = {}

    def mark():
        t = time.monotonic()
        for lp in m.pages[-2:]:
            for seq, ev in lp.events.items():
                if not ev.synthesized:
                    arrivals.setdefault(seq, t)
        if len(arrivals) >= n:
            qapp.quit()

    m.tailInstalled.connect(mark)
    m.liveAppended.connect(lambda _k: mark())
    QTimer.singleShot(120_000, qapp.quit)
    m.open(str(path))
    qapp.exec()
    m.close()
    return arrivals


# --------------------------------------------------------------------------- report

def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = min(len(xs) - 1, max(0, int(round(p / 100 * (len(xs) - 1)))))
    return xs[k]


def run(mode, args, tmp) -> dict:
    ext = ".jsonl.zstd" if args.zstd else ".jsonl"
    path = Path(tmp) / mode / f"session{ext}"
    times = Path(tmp) / f"{mode}.times.json"
    n = int(args.rate * args.seconds)
    proc = spawn_writer(path, times, args)
    box: dict = {}
    if mode == "qt":
        box["a"] = follow_qt(path, n)
    elif mode == "model":
        box["a"] = follow_model(path, n)
    else:
        t = threading.Thread(target=lambda: box.__setitem__("a", follow_plain(path, n, mode == "inotify")))
        t.start()
        t.join()
    proc.wait()
    arrivals = box["a"]
    w = {int(k): v for k, v in json.loads(times.read_text()).items()}
    batches: dict = {}                       # flush time -> seqs of that batch
    for s_, v in w.items():
        batches.setdefault(v[2], []).append(s_)
    order = sorted(batches)[1:]              # the first batch publishes the file: not a live append
    flush, e2e = [], []
    for t1 in order:
        seqs = batches[t1]
        got = [arrivals[q] for q in seqs if q in arrivals]
        if got:
            flush.append((min(got) - t1) * 1000)           # per batch: its rows arrive together
        e2e.extend((arrivals[q] - w[q][0]) * 1000 for q in seqs if q in arrivals)
    return {"mode": mode, "events": len(w), "arrived": len(arrivals), "batches": len(order),
            "flush_median": statistics.median(flush), "flush_p99": pct(flush, 99), "flush_max": max(flush),
            "e2e_median": statistics.median(e2e), "e2e_p99": pct(e2e, 99)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--writer", action="store_true")
    ap.add_argument("--path")
    ap.add_argument("--times")
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--batch-delay-ms", type=int, default=None,
                    help="write-behind window (default: run 200 ms, as dsh, and 10 ms)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start-delay", type=float, default=0.3)
    ap.add_argument("--zstd", action="store_true")
    ap.add_argument("--modes", default="inotify,poll,qt,model")
    args = ap.parse_args()
    if args.writer:
        return writer_main(args)
    fmt = "zstd" if args.zstd else "jsonl"
    windows = [args.batch_delay_ms] if args.batch_delay_ms else [200, 10]
    for win in windows:
        args.batch_delay_ms = win
        print(f"live follow latency: {fmt}, {args.rate:.0f} events/s for {args.seconds:.0f} s, "
              f"write-behind window {win} ms (latencies per batch; append→row per event)")
        print(f"  {'reader':<22}{'events':>7}{'batches':>8}  {'flush→row ms: median':>21}{'p99':>8}{'max':>8}"
              f"   {'append→row median':>18}{'p99':>8}")
        with tempfile.TemporaryDirectory() as tmp:
            for mode in args.modes.split(","):
                r = run(mode, args, tmp)
                label = {"inotify": "Follower (inotify)", "poll": "Follower (poll 100ms)",
                         "qt": "Qt LiveFollower", "model": "history view model"}[mode]
                ok = "" if r["arrived"] >= r["events"] else f"  (only {r['arrived']} arrived)"
                print(f"  {label:<22}{r['events']:>7}{r['batches']:>8}  {r['flush_median']:>21.2f}"
                      f"{r['flush_p99']:>8.2f}{r['flush_max']:>8.2f}   {r['e2e_median']:>18.1f}{r['e2e_p99']:>8.1f}{ok}")


if __name__ == "__main__":
    main()
