#!/usr/bin/env python3
"""UI benchmark: time to the first painted tail page, and event-loop stalls.

    .venv/bin/python bench/ui_bench.py [--size 1GB] [--seed 7] [--input PATH] [--pages 40] [--json] [--attribute] [--busy N] [--tour]

* Input: a synthetic session from app/tools/synth.py (``write_jsonl``), generated once
  under bench/data/ (git-ignored) unless ``--input`` names a file.
* First paint: from the call that opens the store (``MainWindow.open_store``: listing,
  session pick, tail page in a worker, rows, layout) to the first paint of the history
  view with tail rows in it.  Measured cold (the file's pages dropped from the OS cache
  with posix_fadvise DONTNEED, only for this file) and warm.
* Stalls: a 5 ms QTimer measures its own lateness; the longest lateness is the longest
  the UI thread was blocked.  Phases: while the index builds in its worker *and* the
  user scrolls up (older pages fetched), then scrolling alone once the index is ready.
* Targets (issue 15): first tail paint <= 100 ms on 1 GB (warm, in-process, from the open request);
  scrolling 40 older pages: event-loop lateness p99 <= 16 ms.  The UI thread's CPU per 5 ms tick
  (``thread_time``, p50/p99/max) is printed beside the lateness: on a loaded machine the scheduler
  adds the rest.  Reference in the same run: the same timer on an idle Qt loop in a sibling
  process (``bench/idle_loop.py``, same scheduling class, same phases, same background), so a
  phase reads "p99 X ms vs idle-loop p99 Y ms -> the UI adds X - Y, ratio X / Y"
  (``UI_BENCH_NO_REFERENCE=1`` leaves it out).
* After the scroll: the two face toggles, then the find bar (``search``: the bar opened, "error"
  set, until the loaded rows' check settles and the whole-log search streams its first hits):
  its p99 and max lateness beside the idle loop's, and the UI CPU per tick ("find bar:" line;
  target p99 <= 16 ms and no tick over 30 ms).

* ``--attribute`` (stderr): the UI thread's CPU in each scrolling tick split over the UI calls
  that ran in it (:class:`TickAttribution`), for the 1 % of ticks with the most CPU and the 1 %
  latest, with the process CPU (worker threads) and the worker jobs running; the wrappers add
  about 1 ms to a tick's CPU, so compare figures without it.

Runs offscreen unless DISPLAY is set (use xvfb-run for a real X server).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from threading import get_ident

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = REPO / "bench" / "data"

TARGET_FIRST_PAINT_MS = 100.0
TARGET_STALL_P99_MS = 16.0
TARGET_FIND_BAR_MAX_MS = 30.0      # the find-bar phase: no single tick later than this


def parse_size(s: str) -> int:
    s = s.strip().upper()
    for suf, mul in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if s.endswith(suf):
            return int(float(s[:-len(suf)]) * mul)
    return int(s)


def ensure_input(size: str, seed: int) -> Path:
    path = DATA / f"ui-bench-{size.upper()}-s{seed}.jsonl"
    if path.exists() and path.stat().st_size >= parse_size(size) * 0.95:
        return path
    from app.tools.synth import SessionSynth, write_jsonl
    print(f"generating {path} ({size}) …", file=sys.stderr)
    t0 = time.perf_counter()
    tmp = path.with_suffix(".tmp")
    stats = write_jsonl(str(tmp), SessionSynth(seed), target_bytes=parse_size(size))
    os.replace(tmp, path)
    print(f"  {stats} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return path


class BusyLoad:
    """``--busy N``: N busy-loop processes at nice 0 (``python -c "while True: pass"``) for the whole
    run: a fixed, documented background that makes runs on a shared machine comparable."""

    def __init__(self, n: int):
        import subprocess
        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]

    def stop(self) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def drop_cache(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
        return True
    except (AttributeError, OSError):
        return False


def _pct(xs: list, q: float) -> float:
    """The ``q`` quantile of the sorted list ``xs`` (nearest rank below, as the summaries always did)."""
    return xs[int(q * (len(xs) - 1))] if xs else 0.0


class IdleLoopReference:
    """The same 5 ms timer on an idle Qt loop in a sibling process (``bench/idle_loop.py``), run
    through the same phases at the same time as the window: the lateness the machine's load alone
    gives a loop that does nothing (same scheduling class and nice value as the window's process,
    same background: other processes, the window's own children, the window itself)."""

    def __init__(self, interval_ms: int = 5):
        import subprocess
        self.proc = subprocess.Popen([sys.executable, str(REPO / "bench" / "idle_loop.py"), str(interval_ms)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.proc.stdout.readline()                     # "ready": its loop runs
        self.data: dict = {}

    def set_phase(self, phase: str) -> None:
        if self.proc.poll() is None and self.proc.stdin is not None:
            self.proc.stdin.write(f"phase {phase}\n")
            self.proc.stdin.flush()

    def stop(self) -> dict:
        """{phase: {"late_ms": [...], "cpu_ms": [...]}} of the reference loop."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.write("stop\n")
                self.proc.stdin.close()
            except OSError:
                pass
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        self.proc.wait(30)
        line = out.strip().splitlines()[-1] if out.strip() else "{}"
        self.data = json.loads(line)
        return self.data


class StallMeter:
    """A 5 ms timer; lateness of each tick = time the event loop could not run it.  With
    ``reference`` (the default), an idle loop's lateness is measured beside it in a sibling
    process over the same phases (:class:`IdleLoopReference`)."""

    def __init__(self, interval_ms: int = 5, reference: bool = True):
        from PySide6.QtCore import Qt, QTimer
        self.ref = IdleLoopReference(interval_ms) if reference and not os.environ.get("UI_BENCH_NO_REFERENCE") else None
        self.ref_data: dict = {}
        self.interval = interval_ms / 1000
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._tick)
        self.phase = "idle"
        self.on_tick = None                  # (lateness s, UI CPU s) per tick: TickAttribution
        self.late: dict = {}
        self.cpu: dict = {}
        self._last = None

    def start(self, phase: str):
        self.phase = phase
        if self.ref is not None:
            self.ref.set_phase(phase)
        self._last = self.t0 = time.perf_counter()
        self._cpu = time.thread_time()
        self.timer.start()
        if os.environ.get("UI_BENCH_DIAGNOSE"):
            self._start_watchdog()

    def _start_watchdog(self, threshold: float = float(os.environ.get("UI_BENCH_DIAGNOSE_MS", "30")) / 1000):
        """UI_BENCH_DIAGNOSE=1: a thread samples the UI thread's Python stack whenever a
        tick is over ``threshold`` late; the most frequent stacks are printed at the end."""
        import collections
        import threading
        import traceback
        main_id = threading.main_thread().ident
        self.samples = collections.Counter()

        def watch():
            while self.timer.isActive() or self._last is None:
                time.sleep(0.005)
                last = self._last
                if last is not None and time.perf_counter() - last > threshold:
                    frame = sys._current_frames().get(main_id)
                    if frame is not None:
                        st = traceback.extract_stack(frame)[-8:]
                        key = " <- ".join(f"{Path(f.filename).name}:{f.lineno}:{f.name}" for f in reversed(st))
                        self.samples[(self.phase, key)] += 1
        threading.Thread(target=watch, daemon=True).start()
        import gc
        started: dict = {}

        def gc_cb(phase, info):
            tid = threading.get_ident()
            if phase == "start":
                started[tid] = time.perf_counter()
                return
            d = time.perf_counter() - started.pop(tid, time.perf_counter())
            if d > 0.01:
                where = "UI" if tid == main_id else "worker"
                self.samples[(self.phase, f"gc gen{info['generation']} {d * 1000:.0f} ms on the {where} thread")] += 1
        gc.callbacks.append(gc_cb)

    def set_phase(self, phase: str):
        self.phase = phase
        if self.ref is not None:
            self.ref.set_phase(phase)

    def _tick(self):
        now = time.perf_counter()
        if self._last is not None:
            late = max(0.0, now - self._last - self.interval)
            self.late.setdefault(self.phase, []).append(late)
            # the UI thread's own work between two ticks (CPU time): what a loaded machine's
            # scheduler adds to the lateness is not in it
            self.cpu.setdefault(self.phase, []).append(time.thread_time() - self._cpu)
            if self.on_tick is not None:
                self.on_tick(late, time.thread_time() - self._cpu)
            if late > 0.05 and os.environ.get("UI_BENCH_DIAGNOSE"):
                cpu = time.thread_time() - self._cpu
                print(f"  tick {late * 1000:.0f} ms late at {now - self.t0:.3f} s [{self.phase}], "
                      f"UI thread on the CPU {cpu * 1000:.0f} ms of it", file=sys.stderr)
        self._last = now
        self._cpu = time.thread_time()

    def stop(self):
        self.timer.stop()
        if self.ref is not None:
            self.ref_data = self.ref.stop()
        for (ph, key), n in getattr(self, "samples", {}).most_common(12) if hasattr(self, "samples") else []:
            print(f"  stalled [{ph}] x{n}: {key}", file=sys.stderr)

    def summary(self) -> dict:
        """Per phase: lateness p50/p99/max (ms), ticks over 50 ms, the UI thread's CPU per tick
        p50/p99/max, and the idle loop's lateness over the same phase (``ref_*``) with the
        difference and the ratio of the p99s."""
        out = {}
        for ph, xs in self.late.items():
            xs_ms = sorted(x * 1000 for x in xs)
            out[ph] = {"ticks": len(xs_ms), "max_ms": round(xs_ms[-1], 1) if xs_ms else 0.0,
                       "p99_ms": round(_pct(xs_ms, 0.99), 1),
                       "median_ms": round(statistics.median(xs_ms), 2) if xs_ms else 0.0,
                       "over_50ms": sum(1 for x in xs_ms if x > 50)}
            cs = sorted(x * 1000 for x in self.cpu.get(ph, []))
            if cs:
                out[ph]["ui_cpu_p50_ms"] = round(_pct(cs, 0.5), 2)
                out[ph]["ui_cpu_p99_ms"] = round(_pct(cs, 0.99), 1)
                out[ph]["ui_cpu_max_ms"] = round(cs[-1], 1)
                out[ph]["ui_cpu_total_s"] = round(sum(cs) / 1000, 2)
            ref = self.ref_data.get(ph)
            if ref and ref["late_ms"]:
                rl = sorted(ref["late_ms"])
                p99 = out[ph]["p99_ms"]
                out[ph].update({"ref_ticks": len(rl), "ref_p99_ms": round(_pct(rl, 0.99), 1),
                                "ref_median_ms": round(statistics.median(rl), 2), "ref_max_ms": round(rl[-1], 1),
                                "ref_over_50ms": sum(1 for x in rl if x > 50),
                                "ui_adds_p99_ms": round(p99 - _pct(rl, 0.99), 1),
                                "ratio_to_ref_p99": round(p99 / max(_pct(rl, 0.99), 0.05), 2)})
        return out


def stall_line(ph: str, s: dict) -> str:
    """One phase of :meth:`StallMeter.summary` as a line: lateness, the idle loop's in the same run, CPU."""
    ref = (f" vs idle-loop p99 {s['ref_p99_ms']} ms (max {s['ref_max_ms']}, {s['ref_over_50ms']} over 50 ms) "
           f"-> the UI adds {s['ui_adds_p99_ms']} ms, ratio {s['ratio_to_ref_p99']}" if "ref_p99_ms" in s else "")
    return (f"stall [{ph}]: p99 lateness {s['p99_ms']} ms{ref}; max {s['max_ms']} ms, median {s['median_ms']} ms, "
            f"{s['over_50ms']} over 50 ms ({s['ticks']} ticks); UI-thread CPU per tick p50 {s.get('ui_cpu_p50_ms')} "
            f"/ p99 {s.get('ui_cpu_p99_ms')} / max {s.get('ui_cpu_max_ms')} ms, {s.get('ui_cpu_total_s')} s in all")


class TickAttribution:
    """``--attribute``: the UI thread's CPU in each StallMeter tick split over the UI calls that ran
    in it (inclusive CPU per wrapped method, calls counted; the cyclic GC's passes on the UI thread;
    "other": the tick's CPU outside every wrapped outermost call).  Wrapped at class level before the
    window exists, so C++ virtual calls (paint, sizeHint, paintEvent) go through the wrappers too."""

    WRAP = (("app.ui.history.view", "HistoryView", ("scrollContentsBy", "paintEvent", "doItemsLayout", "updateGeometries", "_restore",
                                                    "_on_scroll", "_maybe_fetch_older", "_run_after_paint")),
            ("app.ui.history.delegate", "HistoryDelegate", ("paint", "sizeHint", "_render", "_paint_row")),
            ("app.ui.history.delegate", "DocBuilder", ("build",)),
            ("app.ui.history.warm", "RowWarmer", ("step",)),
            ("app.ui.history.model", "HistoryModel", ("_install_older", "_expose_chunk", "apply_changes", "request_newer",
                                                      "data", "stats", "_install_tail", "_install_first")),
            ("app.ui.history.controller", "HistoryController", ("_on_older", "_on_current_row")),
            # what a change of the current row runs (the inspector, the why, the actions' states)
            ("app.ui.inspector", "EventInspector", ("show_row",)),
            ("app.ui.truth_views", "TruthActions", ("_on_current",)),
            ("app.ui.fork_action", "ForkAction", ("update",)),
            ("app.ui.audit_action", "AuditAction", ("update",)),
            ("app.ui.main_window", "MainWindow", ("update_status", "update_request")))

    def __init__(self, meter: StallMeter):
        import gc
        import importlib
        import threading
        self.meter = meter
        self.cur: dict = {}                 # label -> [cpu s, calls] in the current tick
        self.depth = 0
        self.top_cpu = 0.0                  # CPU of the outermost wrapped calls in this tick
        self.ticks: list = []               # (phase, late s, cpu s, {label: (cpu, calls)}, other s)
        self._main = threading.get_ident()
        for mod, cls, names in self.WRAP:
            klass = getattr(importlib.import_module(mod), cls)
            for name in names:
                self._wrap(klass, name, f"{cls}.{name}")
        self._gc0 = 0.0
        self._pc = time.process_time()
        self.jobs_fn = lambda: ()            # names of the worker jobs running at a tick (set by run)
        gc.callbacks.append(self._gc)
        meter.on_tick = self._tick

    def _wrap(self, klass, name: str, label: str) -> None:
        setattr(klass, name, self.timed(getattr(klass, name), label))

    def timed(self, fn, label: str):
        """``fn`` with its UI-thread CPU added to ``label`` in the current tick."""
        import functools
        att = self
        tt = time.thread_time

        @functools.wraps(fn)
        def wrapped(*a, **k):
            if get_ident() != att._main:
                return fn(*a, **k)
            att.depth += 1
            c0 = tt()
            try:
                return fn(*a, **k)
            finally:
                d = tt() - c0
                att.depth -= 1
                e = att.cur.get(label)
                if e is None:
                    att.cur[label] = [d, 1]
                else:
                    e[0] += d
                    e[1] += 1
                if att.depth == 0:
                    att.top_cpu += d
        return wrapped

    def _gc(self, phase, info):
        if get_ident() != self._main:
            return
        if phase == "start":
            self._gc0 = time.thread_time()
            return
        label = f"gc gen{info['generation']}"
        d = time.thread_time() - self._gc0
        e = self.cur.setdefault(label, [0.0, 0])
        e[0] += d
        e[1] += 1
        if self.depth == 0:
            self.top_cpu += d

    def _tick(self, late: float, cpu: float) -> None:
        pc = time.process_time()
        self.ticks.append((self.meter.phase, late, cpu, {k: tuple(v) for k, v in self.cur.items()},
                           max(0.0, cpu - self.top_cpu), pc - self._pc, self.jobs_fn()))
        self._pc = pc
        self.cur = {}
        self.top_cpu = 0.0

    def report(self, phase: str = "scrolling", top: float = 0.01, out=sys.stderr) -> dict:
        """The ticks of ``phase`` whose CPU is in the top ``top`` share: mean CPU per label per tick,
        how many of them the label ran in; the same over all ticks of the phase for reference."""
        ts = [t for t in self.ticks if t[0] == phase]
        if not ts:
            return {}
        ts_sorted = sorted(ts, key=lambda t: t[2], reverse=True)
        k = max(1, int(len(ts) * top))
        worst = ts_sorted[:k]

        def agg(group):
            acc: dict = {}
            for _ph, _late, _cpu, d, other, _pc, _jobs in group:
                for lab, (c, n) in d.items():
                    a = acc.setdefault(lab, [0.0, 0, 0])
                    a[0] += c
                    a[1] += n
                    a[2] += 1
                a = acc.setdefault("other (outside the wrapped calls)", [0.0, 0, 0])
                a[0] += other
                a[2] += 1
            return {lab: {"ms_per_tick": round(v[0] / len(group) * 1000, 2), "calls_per_tick": round(v[1] / len(group), 1),
                          "in_ticks": round(v[2] / len(group), 2)} for lab, v in sorted(acc.items(), key=lambda x: -x[1][0])}
        res = {"ticks": len(ts), "worst": k, "worst_cpu_min_ms": round(worst[-1][2] * 1000, 1),
               "worst_late_median_ms": round(statistics.median(t[1] for t in worst) * 1000, 1),
               "worst_mean_cpu_ms": round(sum(t[2] for t in worst) / k * 1000, 1),
               "in_worst": agg(worst), "all": agg(ts)}
        print(f"[{phase}] the {k} ticks of most UI CPU out of {len(ts)} (>= {res['worst_cpu_min_ms']} ms CPU, "
              f"mean {res['worst_mean_cpu_ms']} ms; median lateness {res['worst_late_median_ms']} ms):", file=out)
        for lab, v in list(res["in_worst"].items())[:16]:
            a = res["all"].get(lab, {})
            print(f"  {lab:44s} {v['ms_per_tick']:6.2f} ms/tick ({v['calls_per_tick']:5.1f} calls, in "
                  f"{v['in_ticks'] * 100:3.0f}% of them)   all ticks: {a.get('ms_per_tick', 0):5.2f} ms, "
                  f"{a.get('calls_per_tick', 0) * len(ts):,.0f} calls", file=out)
        lat = sorted(ts, key=lambda t: t[1], reverse=True)[:k]
        res["late_worst"] = {"late_min_ms": round(lat[-1][1] * 1000, 1),
                             "ui_cpu_mean_ms": round(sum(t[2] for t in lat) / k * 1000, 1),
                             "process_cpu_mean_ms": round(sum(t[5] for t in lat) / k * 1000, 1)}
        print(f"  the {k} latest ticks (>= {res['late_worst']['late_min_ms']} ms late): UI CPU "
              f"{res['late_worst']['ui_cpu_mean_ms']} ms, process CPU {res['late_worst']['process_cpu_mean_ms']} ms "
              f"per tick (mean); over all ticks {sum(t[2] for t in ts) / len(ts) * 1000:.2f} / "
              f"{sum(t[5] for t in ts) / len(ts) * 1000:.2f} ms", file=out)
        lat_jobs: dict = {}
        for t in lat:
            for j in t[6]:
                lat_jobs[j] = lat_jobs.get(j, 0) + 1
        res["late_worst"]["jobs"] = lat_jobs
        print(f"    worker jobs live at them: {lat_jobs}", file=out)
        for lab, v in list(agg(lat).items())[:8]:
            print(f"    {lab:42s} {v['ms_per_tick']:6.2f} ms/tick (in {v['in_ticks'] * 100:3.0f}% of them)", file=out)
        def p99(xs):
            xs = sorted(xs)
            return round(xs[int(0.99 * (len(xs) - 1))] * 1000, 1) if xs else None
        res["by_jobs"] = {}
        for name, grp in (("a worker job running", [t for t in ts if t[6]]), ("no worker job", [t for t in ts if not t[6]])):
            res["by_jobs"][name] = {"ticks": len(grp), "late_p99_ms": p99([t[1] for t in grp]),
                                    "ui_cpu_p99_ms": p99([t[2] for t in grp])}
            print(f"  ticks with {name}: {len(grp)}, lateness p99 {p99([t[1] for t in grp])} ms, UI CPU p99 "
                  f"{p99([t[2] for t in grp])} ms", file=out)
        names: dict = {}
        for t in ts:
            for j in t[6]:
                names[j] = names.get(j, 0) + 1
        print(f"  jobs seen at ticks: {names}", file=out)
        for t in ts_sorted[:6]:
            parts = ", ".join(f"{lab} {c * 1000:.1f}/{n}" for lab, (c, n) in sorted(t[3].items(), key=lambda x: -x[1][0])[:7])
            print(f"  tick cpu {t[2] * 1000:.1f} ms late {t[1] * 1000:.1f} ms other {t[4] * 1000:.1f}: {parts}", file=out)
        return res


def _time_slow_calls(win, meter, ms: float = 20.0) -> None:
    """UI_BENCH_DIAGNOSE: print UI-thread calls of the history model/view over ``ms``."""
    import functools
    targets = [(win.history, n) for n in ("_install_older", "_expose_chunk", "request_newer", "_apply_live",
                                           "_reset_rows", "show_around", "_index_done", "stats")]
    targets += [(win.view, n) for n in ("_restore", "doItemsLayout", "_maybe_fetch_older")]
    builder = win.view.delegate.builder
    build = builder.build
    builds = {"n": 0}

    def counted(*a, **k):
        builds["n"] += 1
        return build(*a, **k)
    builder.build = counted
    meter.builds = builds
    targets += [(win, n) for n in ("_update_status", "_on_index_progress", "_on_older")]
    for obj, name in targets:
        fn = getattr(obj, name)

        @functools.wraps(fn)
        def timed(*a, fn=fn, name=name, **k):
            import resource
            ru0 = resource.getrusage(resource.RUSAGE_THREAD)
            t0, c0, b0 = time.perf_counter(), time.thread_time(), builds["n"]
            try:
                return fn(*a, **k)
            finally:
                d = time.perf_counter() - t0
                if d * 1000 > ms:
                    print(f"  {name} {d * 1000:.0f} ms (cpu {(time.thread_time() - c0) * 1000:.0f}, "
                          f"{builds['n'] - b0} documents built, {win.history.rowCount()} rows, "
                          f"sys {(resource.getrusage(resource.RUSAGE_THREAD).ru_stime - ru0.ru_stime) * 1000:.0f} ms, "
                          f"{resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - ru0.ru_minflt} faults, "
                          f"{resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw - ru0.ru_nivcsw} preemptions) "
                          f"at {time.perf_counter() - meter.t0:.3f} s", file=sys.stderr)
        setattr(obj, name, timed)


def bench_app():
    """The QApplication as the app sets it up (offscreen unless DISPLAY is set, the runtime's GIL
    switch interval, Fusion), with its settings kept under bench/data (shared by the UI benches)."""
    if not os.environ.get("DISPLAY") and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    os.environ.setdefault("SESSION_LENS_CONFIG_DIR", str(DATA / "ui-bench-config"))
    from PySide6.QtCore import qInstallMessageHandler
    from PySide6.QtWidgets import QApplication
    import app.ui  # noqa: F401  (PySide6 work-around)

    def quiet(_kind, _ctx, msg):                # the offscreen plugin's note at every window shown
        if "propagateSizeHints" not in msg:
            print(msg, file=sys.stderr)
    qInstallMessageHandler(quiet)
    from app.ui.app import configure_runtime
    configure_runtime()                        # as the app does (GIL switch interval)
    qapp = QApplication.instance() or QApplication([sys.argv[0]])
    qapp.setStyle("Fusion")
    return qapp


def spin_until(pred, timeout: float, step_ms: int = 2) -> bool:
    """Run the Qt event loop until ``pred()`` holds (True) or ``timeout`` seconds pass (False)."""
    from PySide6.QtCore import QEventLoop, QTimer
    end = time.perf_counter() + timeout
    while not pred():
        if time.perf_counter() > end:
            return False
        loop = QEventLoop()
        QTimer.singleShot(step_ms, loop.quit)
        loop.exec()
    return True


def run(args) -> dict:
    qapp = bench_app()
    path = Path(args.input) if args.input else ensure_input(args.size, args.seed)
    from PySide6.QtCore import QTimer
    from app.ui.main_window import MainWindow

    result = {"input": str(path), "bytes": path.stat().st_size, "platform": qapp.platformName(),
              "pageSize": args.page_size, "switchInterval": sys.getswitchinterval(),
              "loadavg": os.getloadavg()[0] if hasattr(os, "getloadavg") else None}

    def first_paint(cold: bool) -> dict:
        win = MainWindow(page_size=args.page_size, theme_mode="light")
        win.resize(1400, 900)
        # a reader of a long log has seen the first-run tour (as in find_ui_bench; --tour: it is started)
        win.frame_actions.tour_enabled = bool(args.tour)
        win.show()
        spin_until(lambda: win.isVisible(), 5)
        if cold:
            result["coldCache"] = drop_cache(path)
        painted = {}
        win.view.rowsPainted.connect(lambda: painted.setdefault("t", time.perf_counter())
                                     and painted.setdefault("cpu", time.thread_time()))
        tail = {}
        win.history.tailInstalled.connect(lambda: tail.setdefault("t", time.perf_counter()))
        h_open = win.history.open

        def opening(*a, **k):                     # "open this path" in the history model
            tail.setdefault("open", time.perf_counter())
            tail.setdefault("cpu", time.thread_time())
            return h_open(*a, **k)
        win.history.open = opening
        t0, c0 = time.perf_counter(), time.thread_time()
        win.open_store(str(path))
        ok = spin_until(lambda: "t" in painted, 60)
        win.history.open = h_open
        out = {"ok": ok, "first_paint_ms": round((painted.get("t", time.perf_counter()) - t0) * 1000, 1),
               "ui_cpu_from_open_store_ms": round((painted.get("cpu", c0) - c0) * 1000, 1),
               "history_open_to_paint_ms": round((painted.get("t", t0) - tail.get("open", t0)) * 1000, 1),
               "ui_cpu_to_paint_ms": round((painted.get("cpu", 0) - tail.get("cpu", 0)) * 1000, 1),
               "tail_installed_ms": round((tail.get("t", t0) - t0) * 1000, 1),
               "tail_worker_ms": round(win.history.pages[0].elapsed * 1000, 1) if win.history.pages else None,
               "rows": len(win.history.rows)}
        return win, out

    if args.first_paint_only:
        runs = []
        for _ in range(args.runs):
            w, out = first_paint(cold=False)
            spin_until(lambda: w.history.index_state in ("ready", "failed"), 900)
            w.shutdown()
            w.close()
            runs.append(out)
        keys = ("first_paint_ms", "ui_cpu_from_open_store_ms", "history_open_to_paint_ms", "ui_cpu_to_paint_ms",
                "tail_worker_ms")
        result["firstPaintRuns"] = runs
        result["firstPaintMedian"] = {k: statistics.median(r[k] for r in runs[1:] or runs) for k in keys}
        return result
    meter = StallMeter()
    att = TickAttribution(meter) if args.attribute else None
    win, cold = first_paint(cold=True)
    if att is not None:
        att.jobs_fn = lambda: tuple(sorted(j.name for j in list(win.history.jobs._live) if not j.finished))
    result["firstPaintCold"] = cold
    outline_at: dict = {}
    win.go_actions.outlineReady.connect(lambda: outline_at.setdefault("t", time.perf_counter()))
    t_open = time.perf_counter() - cold["first_paint_ms"] / 1000
    # stalls while the index builds and the user scrolls up
    meter.start("indexing+scrolling")
    sb = win.view.verticalScrollBar()
    steps = {"n": 0}

    def scroll_step():
        steps["n"] += 1
        # a wheel flick upwards every 16 ms: moved as a wheel or a drag moves it (the slider's
        # action, then its value; ``setValue`` alone is the window's own kind of move)
        sb.setSliderPosition(max(0, sb.value() - 240))
    scroller = QTimer()
    scroller.setInterval(16)
    scroller.timeout.connect(att.timed(scroll_step, "bench scroll step (setValue)") if att else scroll_step)
    scroller.start()
    if os.environ.get("UI_BENCH_DIAGNOSE"):
        _time_slow_calls(win, meter)
        from PySide6.QtCore import QObject

        class Gap(QObject):
            """The event delivered before a long gap between two events is the slow one."""
            last = None

            def eventFilter(self, obj, ev):
                now = time.perf_counter()
                if self.last is not None and now - self.last[0] > 0.04:
                    print(f"  event {self.last[1]} to {self.last[2]} took ~{(now - self.last[0]) * 1000:.0f} ms "
                          f"at {self.last[0] - meter.t0:.3f} s", file=sys.stderr)
                self.last = (now, ev.type().name, type(obj).__name__)
                return False
        gap = Gap()
        qapp.installEventFilter(gap)
        result["_gap"] = gap
        for sig, what in ((win.history.indexReady, "index ready"), (win.history.olderInstalled, "older rows")):
            sig.connect(lambda *a, what=what: print(f"  {what} at {time.perf_counter() - meter.t0:.3f} s",
                                                    file=sys.stderr))
    t_idx = time.perf_counter()
    spin_until(lambda: win.history.index_state in ("ready", "failed"), 600)
    result["index"] = {"state": win.history.index_state, "mode": win.history.index_mode,
                       "seconds": round(win.history.index_elapsed, 2),
                       "events": win.history.seq_index.events if win.history.seq_index else None,
                       "wall_s": round(time.perf_counter() - t_idx, 2)}
    pages_during_index = len(win.history.pages)
    meter.set_phase("scrolling")
    t_sc, cpu_sc = time.perf_counter(), os.times()
    target_pages = pages_during_index + args.pages
    spin_until(lambda: len(win.history.pages) >= target_pages or not win.history.has_more, 300)
    scroller.stop()
    cpu_end = os.times()
    t_sc_end = time.perf_counter()
    meter.set_phase("idle, outline finishing")
    if args.screenshot:                            # the window as the scroll left it (run under xvfb-run)
        spin_until(lambda: win.view.settled(), 10)
        win.grab().save(args.screenshot)
    spin_until(lambda: "t" in outline_at, args.outline_wait)     # the outline/problems pass completes (paused or not)
    result["outline"] = {"done_s_after_open": round(outline_at["t"] - t_open, 1) if "t" in outline_at else None,
                         "done_during_scroll": "t" in outline_at and outline_at["t"] <= t_sc_end,
                         "turns": len(win.go_actions.outline.turns) if win.go_actions.outline is not None else None,
                         "paused_while_scrolling": hasattr(win, "scroll_pause")}
    result["kept_frames"] = getattr(getattr(win.view, "frames", None), "kept", None)      # repaints skipped after a prepend
    result["scroll_phase"] = {"wall_s": round(t_sc_end - t_sc, 2),
                              "process_cpu_s": round(cpu_end.user + cpu_end.system - cpu_sc.user - cpu_sc.system, 2),
                              "loadavg_end": os.getloadavg()[0]}
    # user actions over everything loaded, one at a time as a user makes them (each one
    # settles before the next; CPU only): the two face toggles, then a search
    actions = [("toggle-attempts", win.act_attempts.trigger), ("toggle-physical", win.act_physical.trigger),
               ("search", lambda: (win.open_search(), win.find_edit.setText("error")))]
    for phase, act in actions:
        meter.set_phase(phase)
        act()
        # the find bar: until the loaded rows' check settled and the whole-log search said how
        # far it got (its count in the bar: first hits or progress), as a user sees it
        spin_until(lambda: not win.history.loading and win.view.settled()
                   and (phase != "search" or (win.history.find_term == "error"
                                              and not getattr(getattr(win.history, "match_pass", None), "running", False)
                                              and win.history_actions.search_count.text()[:1].isdigit())), 30)
        t_end = time.perf_counter() + 0.25
        spin_until(lambda: time.perf_counter() > t_end, 1)
    meter.stop()
    result["pages"] = {"during_index": pages_during_index, "total": len(win.history.pages),
                       "rows": len(win.history.rows), "events_loaded": len(win.history._events),
                       "scroll_steps": steps["n"]}
    result.pop("_gap", None)
    result["stalls"] = meter.summary()
    if att is not None:
        result["attribution"] = att.report("scrolling")
        result["attribution_search"] = att.report("search")
    win.shutdown()
    win.close()
    # warm: the same open again, pages in the OS cache
    win2, warm = first_paint(cold=False)
    result["firstPaintWarm"] = warm
    win2.shutdown()
    win2.close()
    worst = max((v["max_ms"] for v in result["stalls"].values()), default=0.0)
    scroll = result["stalls"].get("scrolling", {})
    p99 = scroll.get("p99_ms", 0.0)
    result["verdict"] = {
        "first_paint_cold_ms": cold["first_paint_ms"], "first_paint_warm_ms": warm["first_paint_ms"],
        "first_paint_target_ms": TARGET_FIRST_PAINT_MS,
        "first_paint_ratio": round(warm["first_paint_ms"] / TARGET_FIRST_PAINT_MS, 2),
        "scroll_p99_ms": p99, "scroll_ui_cpu_p99_ms": scroll.get("ui_cpu_p99_ms"),
        "scroll_ref_p99_ms": scroll.get("ref_p99_ms"), "scroll_ui_adds_p99_ms": scroll.get("ui_adds_p99_ms"),
        "scroll_ratio_to_ref": scroll.get("ratio_to_ref_p99"),
        "stall_p99_target_ms": TARGET_STALL_P99_MS, "stall_ratio": round(p99 / TARGET_STALL_P99_MS, 2),
        "worst_stall_ms": worst,
        "pass": warm["first_paint_ms"] <= TARGET_FIRST_PAINT_MS and p99 <= TARGET_STALL_P99_MS,
    }
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1GB")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--input", help="use this session file instead of generating one")
    ap.add_argument("--page-size", type=int, default=50)
    ap.add_argument("--pages", type=int, default=40, help="older pages to scroll through after indexing")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--first-paint-only", action="store_true",
                    help="only the first tail paint, warm (index cached), --runs times")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--outline-wait", type=float, default=600, metavar="S",
                    help="after the scroll phase, wait up to S seconds for the outline pass to complete (0: no wait)")
    ap.add_argument("--screenshot", metavar="PNG", help="save the window after the scroll phase (e.g. under xvfb-run)")
    ap.add_argument("--busy", type=int, default=0,
                    help="run N busy-loop processes (nice 0) beside the bench: a fixed synthetic load")
    ap.add_argument("--tour", action="store_true",
                    help="start the first-run tour as rounds before 7 did (its bubble overlaps the window)")
    ap.add_argument("--attribute", action="store_true",
                    help="split the UI thread's CPU of the worst 1%% of scrolling ticks over the UI calls (stderr)")
    args = ap.parse_args(argv)
    busy = BusyLoad(args.busy)
    try:
        res = run(args)
    finally:
        busy.stop()
    res["busy"] = args.busy
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    if args.first_paint_only:
        m = res["firstPaintMedian"]
        print(f"input: {res['input']} ({res['bytes'] / (1 << 20):,.0f} MiB), load {res['loadavg']:.1f}, "
              f"{len(res['firstPaintRuns'])} runs (median of all but the first)")
        print(f"first tail page painted: from open_store {m['first_paint_ms']:.0f} ms (UI-thread CPU "
              f"{m['ui_cpu_from_open_store_ms']:.0f} ms); from the history model's open "
              f"{m['history_open_to_paint_ms']:.0f} ms (UI-thread CPU {m['ui_cpu_to_paint_ms']:.0f} ms, "
              f"tail worker {m['tail_worker_ms']:.0f} ms); target {TARGET_FIRST_PAINT_MS:.0f} ms -> ratio "
              f"{m['first_paint_ms'] / TARGET_FIRST_PAINT_MS:.2f}")
        return 0
    v = res["verdict"]
    print(f"input: {res['input']} ({res['bytes'] / (1 << 20):,.0f} MiB), platform {res['platform']}, "
          f"page size {res['pageSize']} messages")
    c, w = res["firstPaintCold"], res["firstPaintWarm"]
    print(f"load average {res['loadavg']:.1f}; synthetic load: {res['busy']} busy-loop process(es) at nice 0")
    print(f"first tail paint: cold {c['first_paint_ms']:.0f} ms (tail worker {c['tail_worker_ms']} ms, "
          f"{c['rows']} rows), warm {w['first_paint_ms']:.0f} ms (UI-thread CPU {w['ui_cpu_from_open_store_ms']} ms)"
          f"   target {v['first_paint_target_ms']:.0f} ms -> ratio {v['first_paint_ratio']:.2f}")
    ix = res["index"]
    print(f"index: {ix['events']:,} events in {ix['seconds']} s (worker), while scrolling")
    p = res["pages"]
    print(f"pages: {p['during_index']} loaded while indexing, {p['total']} in all, {p['rows']:,} rows, "
          f"{p['events_loaded']:,} events in memory")
    for ph, s in res["stalls"].items():
        print(stall_line(ph, s))
    fb = res["stalls"].get("search")
    if fb:                                    # the find-bar phase (open the bar, the word set, the first results)
        print(f"find bar: lateness p99 {fb['p99_ms']} ms, max {fb['max_ms']} ms ({fb['ticks']} ticks) vs idle-loop "
              f"p99 {fb.get('ref_p99_ms')} ms, max {fb.get('ref_max_ms')} ms in the same run; UI-thread CPU per tick "
              f"p50 {fb.get('ui_cpu_p50_ms')} / p99 {fb.get('ui_cpu_p99_ms')} / max {fb.get('ui_cpu_max_ms')} ms; "
              f"target p99 {TARGET_STALL_P99_MS:.0f} ms, no tick over {TARGET_FIND_BAR_MAX_MS:.0f} ms -> "
              f"{'met' if fb['p99_ms'] <= TARGET_STALL_P99_MS and fb['max_ms'] <= TARGET_FIND_BAR_MAX_MS else 'missed'}")
    sp = res["scroll_phase"]
    ol = res["outline"]
    print(f"outline/problems pass: done {ol['done_s_after_open']} s after the open "
          f"({'during' if ol['done_during_scroll'] else 'after'} the scroll phase), {ol['turns']} turns; "
          f"paused while scrolling: {ol['paused_while_scrolling']}; frames kept after a prepend: {res['kept_frames']}")
    print(f"scrolling phase: {sp['wall_s']} s wall, process CPU {sp['process_cpu_s']} s (all threads), load average "
          f"{res['loadavg']:.1f} at the start, {sp['loadavg_end']:.1f} at the end")
    print(f"scrolling: lateness p99 {v['scroll_p99_ms']} ms vs idle-loop p99 {v['scroll_ref_p99_ms']} ms in the same run "
          f"(the UI adds {v['scroll_ui_adds_p99_ms']} ms, ratio {v['scroll_ratio_to_ref']}); "
          f"UI-thread CPU per tick p99 {v['scroll_ui_cpu_p99_ms']} ms; "
          f"target p99 {v['stall_p99_target_ms']:.0f} ms -> ratio {v['stall_ratio']:.2f}; worst stall {v['worst_stall_ms']} ms")
    print("PASS" if v["pass"] else "MISS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
