#!/usr/bin/env python3
"""The window's memory at each step of a reading session on one log (issue 36).

    .venv/bin/python bench/window_memory.py FILE [--pages 40] [--json] [--tracemalloc N] [--glogg] [--trimmed]
                                         [--native] [--code DIR]

Steps, in one window (offscreen unless DISPLAY is set): ``open`` (tail painted and seq index ready),
``scroll`` (--pages older pages loaded by scrolling up), ``find`` (a whole-log find of "error"
finished), ``outline`` (the outline/problems pass done), ``start`` (Ctrl+Home: the start of the log read and shown).
After each step: the process's anonymous memory (``RssAnon`` of /proc/self/status), its RSS, the
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


def is_worker(pid: int) -> bool:
    """A scan child once it runs the worker (a child forked but not exec'd yet still shares the
    window's pages: counting it would report the window's own memory)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"--session-lens-worker" in f.read()
    except OSError:
        return False


class ChildPeak:
    """The largest RssAnon of any child process, polled every 50 ms in a thread."""

    def __init__(self) -> None:
        self.peak_kb = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        me = os.getpid()
        while not self._stop.wait(0.05):
            for c in children_of(me):
                if is_worker(c):
                    self.peak_kb = max(self.peak_kb, status_kb(c).get("RssAnon", 0))

    def stop(self) -> int:
        self._stop.set()
        self._t.join()
        return self.peak_kb


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


def measure(qapp, step: str, child: ChildPeak, top: int) -> dict:
    gc.collect()
    st = status_kb()
    out = {"step": step, "anon_mb": round(st.get("RssAnon", 0) / 1024, 1), "rss_mb": round(st.get("VmRSS", 0) / 1024, 1),
           "gc_objects": len(gc.get_objects()), "qobjects": qobject_count(qapp),
           "child_anon_peak_mb": round(child.peak_kb / 1024, 1)}
    import tracemalloc
    if tracemalloc.is_tracing():
        cur, _peak = tracemalloc.get_traced_memory()
        out["py_heap_mb"] = round(cur / 2**20, 1)
        snap = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
        out["top"] = [f"{s.size / 2**20:.1f} MB {s.count} blocks {s.traceback[0].filename.replace(str(ROOT) + '/', '')}"
                      f":{s.traceback[0].lineno}" for s in snap.statistics("lineno")[:top]]
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
    win.open_store(str(path))
    h = win.history
    spin_until(lambda: bool(h.rows) and h.index_state in ("ready", "failed"), 900)
    spin_until(lambda: win.view.settled(), 10)
    rows = [{**measure(qapp, "open", child, top), **_state(win)}]
    sb = win.view.verticalScrollBar()
    scroller = QTimer()
    scroller.setInterval(16)
    scroller.timeout.connect(lambda: sb.setSliderPosition(max(0, sb.value() - 240)))
    target = h.window.older_read + pages     # pages read (far ones are dropped as the window moves)
    scroller.start()
    spin_until(lambda: h.window.older_read >= target or not h.has_more, 600)
    scroller.stop()
    spin_until(lambda: not h.loading and win.view.settled(), 30)
    rows.append({**measure(qapp, "scroll", child, top), **_state(win)})
    done = {}
    win.find_actions.searchFinished.connect(lambda txt: done.setdefault("t", txt))
    win.open_search()
    win.history_actions.find_edit.setText("error")
    spin_until(lambda: "t" in done, 900)
    spin_until(lambda: not h.loading and win.view.settled(), 30)
    rows.append({**measure(qapp, "find", child, top), **_state(win)})
    spin_until(lambda: "done" in outline, 900)
    rows.append({**measure(qapp, "outline", child, top), **_state(win)})
    win.go_actions.act_start.trigger()
    # the start shown (the jump's page read and installed: measured while it is still being read, the page's
    # decoded events in the worker counted ~50 MB more on the 4 GB log under load)
    spin_until(lambda: not h.loading and not h.has_more and win.view.settled(), 300)
    end = time.perf_counter() + 0.5
    spin_until(lambda: time.perf_counter() > end, 1)
    rows.append({**measure(qapp, "start", child, top), **_state(win)})
    child.stop()
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--pages", type=int, default=40)
    ap.add_argument("--tracemalloc", type=int, default=0, metavar="N", help="trace the Python heap; list N top sites")
    ap.add_argument("--glogg", action="store_true", help="glogg on the same file as the reference")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--trimmed", action="store_true", help="after each step's figure, malloc_trim and the anonymous "
                    "memory again (free heap kept by the C library vs held data; changes the later steps)")
    ap.add_argument("--code", metavar="DIR", help="run the window of the checkout DIR (its app package; "
                    "this bench's steps), e.g. /work/main beside this branch")
    ap.add_argument("--native", action="store_true", help="at each step also the biggest anonymous mappings "
                    "(/proc/self/smaps) and glibc's malloc arenas (malloc_info: system and free bytes per arena)")
    a = ap.parse_args()
    global TRIMMED, NATIVE
    TRIMMED, NATIVE = a.trimmed, a.native
    if a.tracemalloc:
        import tracemalloc
        tracemalloc.start(1)
    path = Path(a.file)
    rows = window_steps(path, a.pages, a.tracemalloc)
    ref = glogg_anon(path) if a.glogg else None
    if a.json:
        print(json.dumps({"file": str(path), "bytes": path.stat().st_size, "steps": rows, "glogg_anon_mb": ref}))
        return 0
    print(f"{path} ({path.stat().st_size / 1e6:.0f} MB)")
    for r in rows:
        ratio = f"  ({r['anon_mb'] / ref:.2f}x glogg's {ref} MB)" if ref else ""
        heap = f"py heap {r['py_heap_mb']} MB" if "py_heap_mb" in r else f"py blocks {r['py_blocks']}"
        if "trimmed_anon_mb" in r:
            heap += f"  anon after malloc_trim {r['trimmed_anon_mb']} MB"
        print(f"  {r['step']:8} anon {r['anon_mb']:7.1f} MB  rss {r['rss_mb']:7.1f} MB  {heap}  gc objects "
              f"{r['gc_objects']}  qobjects {r['qobjects']}  child anon peak {r['child_anon_peak_mb']} MB{ratio}  "
              f"(pages {r['pages_loaded']}{', loading' if r['loading'] else ''}, jobs busy {r['jobs_busy']}"
              f"{': ' + ', '.join(r['jobs']) if r.get('jobs') else ''})")
        for t in r.get("top", []):
            print(f"      {t}")
        if "native" in r:
            for t in r["native"]["maps"]:
                print(f"      map {t}")
            ma = r["native"]["malloc"]
            if ma:
                print(f"      malloc: {ma['arenas']} arenas, {ma['system_mb']} MB from the system, {ma['free_mb']} MB "
                      f"of it free; {ma['mmap_chunks']} mmap'd chunks {ma['mmap_mb']} MB; {'; '.join(ma['per_arena'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
