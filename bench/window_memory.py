#!/usr/bin/env python3
"""The window's memory at each step of a reading session on one log (issue 36).

    .venv/bin/python bench/window_memory.py FILE [--pages 40] [--runs 3] [--json] [--tracemalloc N] [--glogg]
                                         [--trimmed] [--native] [--code DIR] [--one]

Each run is a new process with fresh (empty) cache and config folders (``SESSION_LENS_CACHE_DIR``,
``SESSION_LENS_CONFIG_DIR``); after the runs, per step the median (min-max) of the window's
anonymous memory beside glogg's, and every worker process by name (``JOB:KIND``: the window job
that started it and its worker kind, e.g. ``trace-why:index+checkpoints``, ``outline:scan``) with
its peak anonymous memory in each step and over the run (medians).  ``--one``: one run in this
process, with the caches as they are.

Steps, in one window (offscreen unless DISPLAY is set): ``open`` (tail painted and seq index ready),
``scroll`` (--pages older pages loaded by scrolling up), ``find`` (a whole-log find of "error"
finished), ``outline`` (the outline/problems pass done), ``start`` (Ctrl+Home: the start of the log read and shown).
Each step is measured once the window has settled: no page read, and no job but the whole-log pass
running, and the heap trim after the last job done (a trace or summary job still running made the
4.3 GB figures vary by 7 MB from run to run).  After each step: the process's anonymous memory (``RssAnon`` of /proc/self/status), its RSS, the
Python heap (``tracemalloc`` when --tracemalloc N is given: its current size and the N biggest
allocation sites; else ``sys.getallocatedblocks``), the number of Python objects tracked by the
GC and of live QObjects (a walk of the QApplication's object tree), and the largest RssAnon seen in
the scan child processes (polled while the step runs).

``--native``: at each step also the biggest anonymous mappings (``/proc/self/smaps``: the ``[heap]``,
glibc's 64 MB-aligned arena heaps, other anonymous maps: Python's arenas, Qt's) and glibc's
``malloc_info`` (per arena the bytes taken from the system and the free bytes in them: free heap
kept after a peak; the mmap'd chunks).  ``--code DIR``: the window of another checkout (e.g.
``--code /work/main``, read-only) through the same steps, for old vs new in one run.

``--trimmed``: after each step's figures, ``malloc_trim`` and the anonymous memory again (what of
it is free heap the C library kept after a peak, not data the window holds; the trim also lowers
the later steps, so compare runs with the same flags).

Reference in the same run (``--glogg``, when ``glogg`` is installed): glogg opening the same file
under the same display, its RssAnon once its memory stops growing; printed beside ours, with the ratio.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
if "--code" in sys.argv[:-1]:            # the window of another checkout (e.g. --code /work/main, read-only)
    ROOT = Path(sys.argv[sys.argv.index("--code") + 1]).resolve()
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ui_bench import bench_app  # noqa: E402

sys.path.insert(0, str(ROOT))            # (ui_bench puts its own checkout first)
HERE = Path(__file__).resolve().parent


def spin_until(pred, timeout: float, step_ms: int = 2) -> bool:
    """Run the Qt event loop until ``pred()`` holds (True) or ``timeout`` seconds pass (False).
    One event loop and one timer for the whole wait: ``ui_bench.spin_until`` makes a single-shot
    timer per 2 ms step, and PySide keeps ~1 Python block of each (about 400 blocks a second of
    waiting), which this bench would count as the window's."""
    from PySide6.QtCore import QEventLoop, QTimer
    end = time.perf_counter() + timeout
    loop = QEventLoop()
    timer = QTimer()
    timer.setSingleShot(True)
    timer.setInterval(step_ms)
    timer.timeout.connect(loop.quit)
    while not pred():
        if time.perf_counter() > end:
            return False
        timer.start()
        loop.exec()
    return True


def status_kb(pid: int | str = "self") -> dict[str, int]:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("RssAnon", "VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def children_of(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{t}/children") as f:
                kids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return kids


def descendants_of(pid: int) -> list[int]:
    """Every process under ``pid`` (a worker's own children too, e.g. a timeline part)."""
    out: list[int] = []
    todo = children_of(pid)
    while todo:
        c = todo.pop()
        out.append(c)
        todo += children_of(c)
    return out


def worker_name(pid: int) -> Optional[str]:
    """``JOB:KIND`` of a worker process (its kind and extra arguments from its command line, the
    window job that started it from ``SESSION_LENS_CHILD_JOB`` in its environment, set by
    ``app.store.childproc.run_child``), e.g. ``trace-why:index+checkpoints``, ``outline:scan``; None
    for a process that is not a worker yet (a child forked but not exec'd yet still shares the
    window's pages: counting it would report the window's own memory)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return None
    if b"--session-lens-worker" not in argv:
        return None
    rest = [a.decode(errors="replace") for a in argv[argv.index(b"--session-lens-worker") + 1:-1]]
    kind = rest[0] if rest else "?"
    if kind == "index" and len(rest) > 3:
        kind += "+" + rest[3]
    job = "?"
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for kv in f.read().split(b"\0"):
                if kv.startswith(b"SESSION_LENS_CHILD_JOB="):
                    job = kv.split(b"=", 1)[1].decode(errors="replace") or "?"
    except OSError:
        pass
    return f"{job}:{kind}"


class ChildPeak:
    """Every worker process's RssAnon by name, polled every 50 ms in a thread: the peak over the run
    (``peaks``), the peak since the last :meth:`mark` (``step_peaks``) and the figure at the mark
    (``now``: the workers alive then)."""

    def __init__(self) -> None:
        self.peaks: dict[str, int] = {}
        self.step_peaks: dict[str, int] = {}
        self._names: dict[int, Optional[str]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    @property
    def peak_kb(self) -> int:
        return max(self.peaks.values(), default=0)

    def _sample(self) -> dict[str, int]:
        now: dict[str, int] = {}
        for c in descendants_of(os.getpid()):
            name = self._names.get(c)
            if name is None:
                name = self._names[c] = worker_name(c)
            if name is None:
                continue
            kb = status_kb(c).get("RssAnon", 0)
            now[name] = max(now.get(name, 0), kb)
        return now

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            now = self._sample()
            with self._lock:
                for k, v in now.items():
                    self.peaks[k] = max(self.peaks.get(k, 0), v)
                    self.step_peaks[k] = max(self.step_peaks.get(k, 0), v)

    def mark(self) -> tuple[dict[str, float], dict[str, float]]:
        """(peak of each worker since the last mark, each live worker now), in MB; starts a new step."""
        now = self._sample()
        with self._lock:
            for k, v in now.items():
                self.step_peaks[k] = max(self.step_peaks.get(k, 0), v)
            step, self.step_peaks = self.step_peaks, {}
        return ({k: round(v / 1024, 1) for k, v in sorted(step.items())},
                {k: round(v / 1024, 1) for k, v in sorted(now.items())})

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._t.join()
        return {k: round(v / 1024, 1) for k, v in sorted(self.peaks.items())}


def qobject_count(qapp) -> int:
    n = 0
    stack = list(qapp.topLevelWidgets()) + [qapp]
    seen = set()
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        n += 1
        stack.extend(o.children())
    return n


TRIMMED = False     # --trimmed: also the anonymous memory after malloc_trim
NATIVE = False      # --native: the big anonymous mappings and the malloc arenas at each step


def anon_mappings(top: int = 8, min_kb: int = 1024) -> list[str]:
    """The biggest anonymous mappings of this process (``/proc/self/smaps``): their address
    range, size, resident anonymous KB, and a name (``[heap]``, a glibc arena heap: a 64 MB
    aligned mapping of at most 64 MB, or ``anon``)."""
    maps: list[tuple[int, str]] = []
    cur: Optional[list] = None
    try:
        with open("/proc/self/smaps") as f:
            for line in f:
                head = line.split()
                if "-" in head[0] and not head[0].endswith(":"):
                    lo, hi = (int(x, 16) for x in head[0].split("-"))
                    name = head[5] if len(head) > 5 else ""
                    cur = [lo, hi, name, 0]
                    if not name or name in ("[heap]",) or name.startswith("[anon"):
                        maps.append((0, ""))
                        cur.append(len(maps) - 1)
                    else:
                        cur = None
                elif cur is not None and head[0] == "Anonymous:":
                    kb = int(head[1])
                    lo, hi, name = cur[0], cur[1], cur[2]
                    if not name and lo % (64 << 20) == 0 and hi - lo <= 64 << 20:
                        name = "arena-heap"
                    maps[cur[4]] = (kb, f"{kb / 1024:6.1f} MB anon of {(hi - lo) / 2**20:6.1f} MB "
                                        f"{lo:x} {name or 'anon'}")
    except OSError:
        return []
    big = sorted((m for m in maps if m[0] >= min_kb), reverse=True)
    total = sum(m[0] for m in maps)
    return [f"{total / 1024:.1f} MB anon in {len(maps)} mappings; biggest:"] + [m[1] for m in big[:top]]


def malloc_arenas() -> Optional[dict]:
    """glibc's ``malloc_info``: per arena its system bytes and free bytes, and the mmap'd chunks
    (None where the C library is not glibc)."""
    import ctypes
    import ctypes.util
    import re
    import tempfile
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.fopen.restype = ctypes.c_void_p
        libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        libc.fclose.argtypes = [ctypes.c_void_p]
        libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    except (OSError, AttributeError):
        return None
    with tempfile.NamedTemporaryFile(suffix=".xml") as tmp:
        fp = libc.fopen(tmp.name.encode(), b"w")
        if not fp:
            return None
        libc.malloc_info(0, fp)
        libc.fclose(fp)
        xml = open(tmp.name).read()
    heaps = []
    for m in re.finditer(r'<heap nr="(\d+)">(.*?)</heap>', xml, re.S):
        body = m.group(2)
        sys_ = re.search(r'<system type="current" size="(\d+)"', body)
        free = sum(int(x) for x in re.findall(r'<total type="(?:fast|rest)" count="\d+" size="(\d+)"', body))
        heaps.append((int(m.group(1)), int(sys_.group(1)) if sys_ else 0, free))
    tail = xml[xml.rfind("</heap>"):]
    mm = re.search(r'<total type="mmap" count="(\d+)" size="(\d+)"', tail)
    return {"arenas": len(heaps), "system_mb": round(sum(h[1] for h in heaps) / 2**20, 1),
            "free_mb": round(sum(h[2] for h in heaps) / 2**20, 1),
            "per_arena": [f"#{n}: {s / 2**20:.1f} MB, {f / 2**20:.1f} free" for n, s, f in heaps],
            "mmap_chunks": int(mm.group(1)) if mm else 0, "mmap_mb": round(int(mm.group(2)) / 2**20, 1) if mm else 0}


_SNAP: list = []     # the previous step's tracemalloc snapshot (for the growth since then)


def _site(stat) -> str:
    fr = stat.traceback[0]
    return f"{fr.filename.replace(str(ROOT) + '/', '')}:{fr.lineno}"


def measure(qapp, step: str, child: ChildPeak, top: int) -> dict:
    gc.collect()
    st = status_kb()
    step_peaks, now = child.mark()
    out = {"step": step, "anon_mb": round(st.get("RssAnon", 0) / 1024, 1), "rss_mb": round(st.get("VmRSS", 0) / 1024, 1),
           "gc_objects": len(gc.get_objects()), "qobjects": qobject_count(qapp),
           "child_anon_peak_mb": round(child.peak_kb / 1024, 1),
           "children_step_peak_mb": step_peaks, "children_now_mb": now,
           "cpu_s": round(sum(os.times()[:2]), 1)}
    import tracemalloc
    if tracemalloc.is_tracing():
        cur, _peak = tracemalloc.get_traced_memory()
        out["py_heap_mb"] = round(cur / 2**20, 1)
        snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        out["top"] = [f"{s.size / 2**20:.1f} MB {s.count} blocks {_site(s)}" for s in snap.statistics("lineno")[:top]]
        if _SNAP:               # what grew (or shrank) most since the previous step
            diff = snap.compare_to(_SNAP[0], "lineno")[:top]
            out["grew"] = [f"{d.size_diff / 2**20:+.2f} MB {d.count_diff:+d} blocks {_site(d)}" for d in diff]
        _SNAP[:] = [snap]
    else:
        out["py_blocks"] = sys.getallocatedblocks()
    if NATIVE:
        out["native"] = {"maps": anon_mappings(), "malloc": malloc_arenas()}
    if TRIMMED:                  # what of it is free heap the C library kept (fragmentation), not held data
        from app.ui.memory import trim
        trim()
        out["trimmed_anon_mb"] = round(status_kb().get("RssAnon", 0) / 1024, 1)
    return out


def _state(win) -> dict:
    """What the window is doing when a step is measured (a page read or a background job still in
    flight holds memory a settled window would not)."""
    h = win.history
    return {"pages_loaded": len(h.pages), "loading": bool(h.loading), "jobs_busy": int(win.jobs.busy),
            "jobs": sorted(j.name for j in getattr(win.jobs, "_live", ()))}


def jobs_settled(win) -> bool:
    """No job of the window runs but the whole-log pass (``outline``: it has a step of its own), and the
    heap trim that follows the pool's last job (``Jobs._idle_trim``, 250 ms later) has run: a step is
    measured in the same state on every run, not while a trace, snippets or summary job holds memory
    (issue 36: the run-to-run variance at 4.3 GB)."""
    live = getattr(win.jobs, "_live", ())
    trim = getattr(win.jobs, "_trim", None)
    return all(j.name == "outline" for j in live) and not (trim is not None and trim.isActive())


class Waits:
    """The waits of one run that ended by their time limit, not by what they waited for (a step measured after
    one of them is not the step's end: e.g. the whole-log pass of the 4.3 GB log, niced, took 1,092 s at load
    7-9 and the outline wait's 900 s ran out, so the "outline" and "start" steps were measured with the pass's
    child still running: the "second outline child" of round 15 was that same child)."""

    def __init__(self) -> None:
        self.missed: list[str] = []

    def until(self, pred, timeout: float, what: str) -> bool:
        ok = spin_until(pred, timeout)
        if not ok:
            self.missed.append(what)
            print(f"window_memory: TIMED OUT after {timeout:.0f} s waiting for {what}: the next step is measured "
                  f"before it", file=sys.stderr, flush=True)
        return ok

    def take(self) -> list[str]:
        out, self.missed = self.missed, []
        return out


def settle(win, timeout: float = 120) -> None:
    h = win.history
    spin_until(lambda: not h.loading and win.view.settled() and jobs_settled(win), timeout)


def window_steps(path: Path, pages: int, top: int) -> list[dict]:
    qapp = bench_app()
    from PySide6.QtCore import QTimer
    from app.ui.main_window import MainWindow
    child = ChildPeak()
    win = MainWindow(page_size=50, theme_mode="light")
    win.resize(1400, 900)
    win.frame_actions.tour_enabled = False
    win.show()
    outline = {}
    win.go_actions.outlineReady.connect(lambda: outline.setdefault("done", True))
    w = Waits()
    win.open_store(str(path))
    h = win.history
    w.until(lambda: bool(h.rows) and h.index_state in ("ready", "failed"), 900, "the tail and the seq index")
    spin_until(lambda: win.view.settled(), 10)
    settle(win)
    rows = [{**measure(qapp, "open", child, top), **_state(win), "timedOut": w.take()}]
    sb = win.view.verticalScrollBar()
    scroller = QTimer()
    scroller.setInterval(16)
    scroller.timeout.connect(lambda: sb.setSliderPosition(max(0, sb.value() - 240)))
    target = h.window.older_read + pages     # pages read (far ones are dropped as the window moves)
    scroller.start()
    w.until(lambda: h.window.older_read >= target or not h.has_more, 600, f"{pages} older pages")
    scroller.stop()
    spin_until(lambda: not h.loading and win.view.settled(), 30)
    settle(win)
    rows.append({**measure(qapp, "scroll", child, top), **_state(win), "timedOut": w.take()})
    done = {}
    win.find_actions.searchFinished.connect(lambda txt: done.setdefault("t", txt))
    win.open_search()
    win.history_actions.find_edit.setText("error")
    w.until(lambda: "t" in done, 3600, "the whole-log find")
    spin_until(lambda: not h.loading and win.view.settled(), 30)
    settle(win)
    rows.append({**measure(qapp, "find", child, top), **_state(win), "timedOut": w.take()})
    w.until(lambda: "done" in outline, 3600, "the whole-log pass (outline)")
    settle(win)
    rows.append({**measure(qapp, "outline", child, top), **_state(win), "timedOut": w.take()})
    win.go_actions.act_start.trigger()
    # the start shown (the jump's page read and installed: measured while it is still being read, the page's
    # decoded events in the worker counted ~50 MB more on the 4 GB log under load)
    w.until(lambda: not h.loading and not h.has_more and win.view.settled(), 300, "the start of the log")
    end = time.perf_counter() + 0.5
    spin_until(lambda: time.perf_counter() > end, 1)
    settle(win)           # (the trace of the row selected at the start, the summary's figures: done)
    rows.append({**measure(qapp, "start", child, top), **_state(win), "timedOut": w.take()})
    rows[-1]["children_run_peak_mb"] = child.stop()
    win.shutdown()
    win.close()
    return rows


def glogg_anon(path: Path) -> float | None:
    exe = shutil.which("glogg")
    if exe is None:
        return None
    p = subprocess.Popen([exe, "-m", str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, HOME=str(HERE / "data" / "glogg-home")))
    last, same, end = -1, 0, time.monotonic() + 300
    while time.monotonic() < end and same < 10:       # 5 s with no growth: glogg has indexed the file
        time.sleep(0.5)
        now = status_kb(p.pid).get("RssAnon", 0)
        same = same + 1 if now <= last else 0
        last = max(last, now)
    p.kill()
    p.wait()
    return round(last / 1024, 1)


def one_run(a: argparse.Namespace) -> dict:
    """One window through the steps in this process (and glogg after it, with --glogg)."""
    global TRIMMED, NATIVE
    TRIMMED, NATIVE = a.trimmed, a.native
    if a.tracemalloc:
        import tracemalloc
        tracemalloc.start(1)
    path = Path(a.file)
    t0 = time.perf_counter()
    rows = window_steps(path, a.pages, a.tracemalloc)
    wall = time.perf_counter() - t0
    ref = glogg_anon(path) if a.glogg else None
    return {"file": str(path), "bytes": path.stat().st_size, "steps": rows, "glogg_anon_mb": ref,
            "wall_s": round(wall, 1), "cpu_s": round(sum(os.times()[:4]), 1)}


def fresh_run(argv: list[str]) -> dict:
    """One run in a new process with fresh (empty) cache and config folders: its JSON answer."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="wm-cache-") as cache, tempfile.TemporaryDirectory(prefix="wm-conf-") as conf:
        env = dict(os.environ, SESSION_LENS_CACHE_DIR=cache, SESSION_LENS_CONFIG_DIR=conf)
        load0 = os.getloadavg()[0]
        p = subprocess.run([sys.executable, str(Path(__file__).resolve()), *argv, "--one", "--json"], env=env,
                           stdout=subprocess.PIPE, text=True, check=True)
        out = json.loads(p.stdout.strip().splitlines()[-1])
        out["load"] = (round(load0, 2), round(os.getloadavg()[0], 2))
        return out


def _med(xs: list[float]) -> float:
    import statistics
    return round(statistics.median(xs), 1) if xs else 0.0


def print_run(r: dict, k: int) -> None:
    ref = r["glogg_anon_mb"]
    print(f"run {k}: wall {r['wall_s']} s, CPU {r['cpu_s']} s (window and its workers), load {r['load'][0]} -> "
          f"{r['load'][1]}, glogg anon {ref} MB")
    for s in r["steps"]:
        heap = f"py heap {s['py_heap_mb']} MB" if "py_heap_mb" in s else f"py blocks {s['py_blocks']}"
        if "trimmed_anon_mb" in s:
            heap += f"  anon after malloc_trim {s['trimmed_anon_mb']} MB"
        kids = ", ".join(f"{n} {v}" + (f" (now {s['children_now_mb'][n]})" if n in s["children_now_mb"] else "")
                         for n, v in s["children_step_peak_mb"].items())
        print(f"  {s['step']:8} anon {s['anon_mb']:7.1f} MB  rss {s['rss_mb']:7.1f} MB  {heap}  gc objects "
              f"{s['gc_objects']}  qobjects {s['qobjects']}  cpu {s['cpu_s']} s  (pages {s['pages_loaded']}"
              f"{', loading' if s['loading'] else ''}, jobs busy {s['jobs_busy']}"
              f"{': ' + ', '.join(s['jobs']) if s.get('jobs') else ''})  workers in the step: {kids or '-'}")
        if s.get("timedOut"):
            print(f"      TIMED OUT before this step: {'; '.join(s['timedOut'])} (not the step's end state)")
        for t in s.get("top", []):
            print(f"      {t}")
        for t in s.get("grew", []):
            print(f"      grew {t}")
        if "native" in s:
            for t in s["native"]["maps"]:
                print(f"      map {t}")
            ma = s["native"]["malloc"]
            if ma:
                print(f"      malloc: {ma['arenas']} arenas, {ma['system_mb']} MB from the system, {ma['free_mb']} MB "
                      f"of it free; {ma['mmap_chunks']} mmap'd chunks {ma['mmap_mb']} MB; {'; '.join(ma['per_arena'])}")


def print_medians(runs: list[dict]) -> None:
    """Per step the median (min-max) of the window's anon memory over the runs, beside glogg's median;
    then every worker by name: its peak over a run and in each step (medians; 0 where it did not run)."""
    path = runs[0]["file"]
    refs = [r["glogg_anon_mb"] for r in runs if r["glogg_anon_mb"]]
    ref = _med(refs) if refs else None
    loads = [x for r in runs for x in r["load"]]
    print(f"\n{path} ({runs[0]['bytes'] / 1e6:.0f} MB): medians of {len(runs)} runs (fresh caches each); load "
          f"{min(loads)}-{max(loads)}; CPU per run {_med([r['cpu_s'] for r in runs])} s, wall {_med([r['wall_s'] for r in runs])} s"
          + (f"; glogg anon {ref} MB ({', '.join(str(x) for x in refs)})" if ref else ""))
    steps = [s["step"] for s in runs[0]["steps"]]
    names = sorted({n for r in runs for s in r["steps"] for n in s["children_step_peak_mb"]})
    for k, step in enumerate(steps):
        anon = [r["steps"][k]["anon_mb"] for r in runs]
        ratio = f"  {_med(anon) / ref:.2f}x glogg's {ref} MB" if ref else ""
        heap = ""
        if "py_heap_mb" in runs[0]["steps"][k]:
            heap = f"  py heap {_med([r['steps'][k]['py_heap_mb'] for r in runs])} MB"
        else:
            heap = f"  py blocks {int(_med([r['steps'][k]['py_blocks'] for r in runs]))}"
        print(f"  {step:8} window anon {_med(anon):6.1f} MB ({min(anon)}-{max(anon)}){ratio}  "
              f"rss {_med([r['steps'][k]['rss_mb'] for r in runs])} MB{heap}")
        late = sum(1 for r in runs if r["steps"][k].get("timedOut"))
        if late:
            print(f"           ({late} of {len(runs)} runs measured this step after a wait TIMED OUT: see the runs)")
    if names:
        print("  workers (anon MB, median over runs of the peak; per step, then over the run):")
        for n in names:
            per = [_med([r["steps"][k]["children_step_peak_mb"].get(n, 0.0) for r in runs]) for k in range(len(steps))]
            whole = [r["steps"][-1].get("children_run_peak_mb", {}).get(n, 0.0) for r in runs]
            print(f"    {n:28} " + "  ".join(f"{st} {v}" for st, v in zip(steps, per))
                  + f"  | run peak {_med(whole)} ({min(whole)}-{max(whole)})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--pages", type=int, default=40)
    ap.add_argument("--runs", type=int, default=3, help="runs, each a new process with fresh caches (default 3)")
    ap.add_argument("--one", action="store_true", help="one run in this process with the caches as set (no medians)")
    ap.add_argument("--tracemalloc", type=int, default=0, metavar="N", help="trace the Python heap; list N top sites "
                    "and the N that grew most since the step before")
    ap.add_argument("--glogg", action="store_true", help="glogg on the same file as the reference")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--trimmed", action="store_true", help="after each step's figure, malloc_trim and the anonymous "
                    "memory again (free heap kept by the C library vs held data; changes the later steps)")
    ap.add_argument("--code", metavar="DIR", help="run the window of the checkout DIR (its app package; "
                    "this bench's steps), e.g. /work/main beside this branch")
    ap.add_argument("--native", action="store_true", help="at each step also the biggest anonymous mappings "
                    "(/proc/self/smaps) and glibc's malloc arenas (malloc_info: system and free bytes per arena)")
    a = ap.parse_args()
    if a.one:
        out = one_run(a)
        out["load"] = (round(os.getloadavg()[0], 2),) * 2
        if a.json:
            print(json.dumps(out))
        else:
            print_run(out, 1)
        return 0
    argv = [x for x in sys.argv[1:] if x not in ("--json",)]
    if "--runs" in argv:
        k = argv.index("--runs")
        del argv[k:k + 2]
    runs = []
    for k in range(a.runs):
        runs.append(fresh_run(argv))
        if not a.json:
            print_run(runs[-1], k + 1)
            sys.stdout.flush()
    if a.json:
        print(json.dumps({"runs": runs}))
    else:
        print_medians(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
