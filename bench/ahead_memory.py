"""The background pass's peak memory (issue 36: the scan child stays <= 64 MB).

Default (``--child``, the figure the issue asks for): for each PATH, the window's two children are started as
the window starts them, each from a fresh driver process with an empty cache folder:

* the reference: the seq-index child (``build_index_isolated``, the ``index`` worker);
* the pass: the scan child's "outline" task (``scan_child.run_isolated``: the fold checkpoints, the surface
  index and the outline in one read, their cache files written, the packed outline sent back), after the
  seq index is cached (as in the window);

and prints each child's peak RSS (``VmHWM``) and peak anonymous memory (``RssAnon``, polled every 10 ms), the
pass's beside the seq index's and the ratio.  ``--proxy``: the pass's task (``scan_child.scan``, its messages
pickled to /dev/null) run by the driver itself, not niced, and the driver's own peak (the seq index cached first by
a process of its own: the driver, like the child, never holds it).  ``--inproc``: the old figure, :func:`cached_ahead` run in this
process (peak ``RssAnon`` beside the process's own after its imports and the seq index).

    python bench/ahead_memory.py PATH [PATH...] [--proxy | --inproc] [--runs N] [--code /work/main]
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def status_kb(pid: str, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for ln in f:
                if ln.startswith(key):
                    return int(ln.split()[1])
    except OSError:
        pass
    return 0


def anon_kb() -> int:
    return status_kb("self", "RssAnon:")


# the driver: starts one child as the window does and polls its memory until it ends
_DRIVER = r"""
import json, os, sys, threading, time
sys.path.insert(0, sys.argv[1])
from bench.ahead_memory import status_kb
mode, path = sys.argv[2], sys.argv[3]
peak = {"hwm": 0, "anon": 0}
stop = threading.Event()
def poll():
    me = str(os.getpid())
    while not stop.is_set():
        kids = []
        for t in os.listdir(f"/proc/{me}/task"):
            try:
                kids += open(f"/proc/{me}/task/{t}/children").read().split()
            except OSError:
                pass
        for k in kids:
            peak["hwm"] = max(peak["hwm"], status_kb(k, "VmHWM:"))
            peak["anon"] = max(peak["anon"], status_kb(k, "RssAnon:"))
        time.sleep(0.01)
if mode == "proxy":
    def own():
        while not stop.is_set():
            peak["anon"] = max(peak["anon"], status_kb("self", "RssAnon:"))
            time.sleep(0.01)
    threading.Thread(target=own, daemon=True).start()
th = threading.Thread(target=poll, daemon=True)
th.start()
t = time.perf_counter()
if mode == "proxy":             # (the scan child's task, its messages pickled as serve() does, here, not niced)
    import pickle
    import subprocess
    # (the seq index cached by a process of its own, as the window does: the child never loads it, so this
    #  process must not hold it either -- it did, and the proxy counted ~2.5 MB per GB the child never has)
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                    "from app.store.faces import open_reader; from app.store.indexcache import cached_index; "
                    "cached_index(open_reader(sys.argv[2]))", sys.argv[1], path], check=True)
    from app.store.scan_child import scan
    sink = open(os.devnull, "wb")
    t = time.perf_counter()
    pickle.dump(("done", scan("outline", path, None, {}, lambda m: pickle.dump(m, sink))), sink)
    peak["hwm"] = status_kb("self", "VmHWM:")
    peak["anon"] = max(peak["anon"], status_kb("self", "RssAnon:"))
elif mode == "index":
    from app.store.indexer import build_index_isolated
    _, how = build_index_isolated(path)
    assert how == "process", how
else:
    from app.store.indexcache import cached_index
    from app.store.faces import open_reader
    from app.store.scan_child import run_isolated
    r = open_reader(path)
    cached_index(r)
    r.close()
    t = time.perf_counter()
    msgs = []
    ol = run_isolated("outline", path, None, {"blocks_apart": True}, lambda m: msgs.append(m[0]), lambda: False)
    assert ol.complete and "surface" in msgs
secs = time.perf_counter() - t
stop.set()
th.join()
import resource
peak["maxrss"] = resource.getrusage(resource.RUSAGE_CHILDREN if mode != "proxy" else resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({**peak, "secs": secs}))
"""


def child_peak(mode: str, path: str, code: Path = REPO) -> dict[str, float]:
    env = dict(os.environ, SESSION_LENS_CACHE_DIR=tempfile.mkdtemp(prefix="ahead-mem-"))
    env.pop("SESSION_LENS_SCAN_INPROC", None)
    env.pop("SESSION_LENS_INDEX_INPROC", None)
    out = subprocess.run([sys.executable, "-c", _DRIVER, str(code), mode, path], env=env, check=True,
                         capture_output=True, text=True).stdout
    got: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    got["hwm"] = max(got["hwm"], got.pop("maxrss"))     # (the poll can miss the last 10 ms; the kernel cannot)
    return got


def children(paths: list[str], runs: int, proxy: bool = False, code: Optional[Path] = None) -> None:
    who = "pass task in the driver (--proxy)" if proxy else "pass child"
    print(f"| log | MB | seq index child: peak RSS / anon | {who}: peak RSS / anon | ratio RSS / anon | pass s |"
          " load |" + (f" same, code of {code}: peak RSS / anon | pass s |" if code else ""))
    print("|---|---|---|---|---|---|---|" + ("---|---|" if code else ""))
    for p in paths:
        idx = [child_peak("index", p) for _ in range(runs)]
        pas, old = [], []
        for _ in range(runs):          # (this code and the other, in turns: the same load)
            pas.append(child_peak("proxy" if proxy else "outline", p))
            if code:
                old.append(child_peak("proxy" if proxy else "outline", p, code))

        def med(xs: list[dict[str, float]], k: str) -> float:
            return statistics.median(x[k] for x in xs)
        ih, ia, ph, pa = (med(idx, "hwm") / 1024, med(idx, "anon") / 1024, med(pas, "hwm") / 1024,
                          med(pas, "anon") / 1024)
        print(f"| {Path(p).name} | {Path(p).stat().st_size / 2**20:.0f} | {ih:.1f} / {ia:.1f} MB | "
              f"{ph:.1f} / {pa:.1f} MB | {ph / ih:.2f} / {pa / ia:.2f} | {med(pas, 'secs'):.1f} | "
              f"{os.getloadavg()[0]:.1f} |" + (f" {med(old, 'hwm') / 1024:.1f} / {med(old, 'anon') / 1024:.1f} MB | "
                                              f"{med(old, 'secs'):.1f} |" if old else ""), flush=True)


def inproc(path: str) -> None:
    os.environ["SESSION_LENS_CACHE_DIR"] = tempfile.mkdtemp(prefix="ahead-mem-")
    from app.log.index.reader import LogReader
    from app.store.ahead_cache import cached_ahead
    reader = LogReader.open(path)
    reader.index or reader.build_index()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    ref = anon_kb()
    peak = [ref]
    stop = threading.Event()

    def poll() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], anon_kb())
            time.sleep(0.01)

    th = threading.Thread(target=poll, daemon=True)
    th.start()
    t = time.perf_counter()
    _, status = cached_ahead(reader)
    secs = time.perf_counter() - t
    stop.set()
    th.join()
    peak[0] = max(peak[0], anon_kb())
    mb = Path(path).stat().st_size / 2**20
    print(f"log {mb:.0f} MB  pass {secs:.1f} s  {status}")
    print(f"peak anon {peak[0] / 1024:.1f} MB  (reference, after imports and the seq index: {ref / 1024:.1f} MB;"
          f" ratio {peak[0] / max(1, ref):.2f}; the pass's own share {(peak[0] - ref) / 1024:.1f} MB)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--inproc", action="store_true", help="cached_ahead in this process (the older figure)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--code", type=Path, help="also the same with the code of this checkout (e.g. /work/main), "
                                              "in turns with this one")
    ap.add_argument("--proxy", action="store_true",
                    help="the pass's task run by the driver process itself at its priority (the real child lowers "
                         "itself to nice 15, which starves it on a loaded machine); its own peak")
    a = ap.parse_args()
    if a.inproc:
        for p in a.paths:
            inproc(p)
    else:
        children(a.paths, a.runs, a.proxy, a.code)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
