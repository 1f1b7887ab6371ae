"""Issue 36: the find child's memory (the window's whole-log find runs in a scan child, app/store/scan_child.py),
beside ``rg -c`` of the same word over the same file in the same run.

    python bench/find_child_memory.py FILE [WORD ...] [--limit N] [--runs N] [--trace]

Each run starts the real child the window starts (``scan_child.run_isolated("find", ...)`` with the window's hit
limit), reads its messages as the window does (hits unpickled and dropped), and polls the child's ``RssAnon``
every 20 ms: the peak is printed with the hits, the time and the target (64 MB).  The reference: ``rg -c -F`` of
the word, its peak RSS (``--no-mmap``, ``/usr/bin/time -f %M``) and time.  ``--trace``: the same find run in
this process under tracemalloc, with the largest allocations at the traced peak (what holds the memory).
Medians of ``--runs``; the machine load is printed with each row.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

TARGET_MB = 64.0


def _anon_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for ln in f:
                if ln.startswith("RssAnon:"):
                    return int(ln.split()[1])
    except OSError:
        pass
    return 0


def _workers() -> list[int]:
    me, out = os.getpid(), []
    try:
        for t in os.listdir(f"/proc/{me}/task"):
            with open(f"/proc/{me}/task/{t}/children") as f:
                for c in f.read().split():
                    with open(f"/proc/{c}/cmdline", "rb") as g:
                        if b"--session-lens-worker" in g.read():
                            out.append(int(c))
    except OSError:
        pass
    return out


def child_run(path: str, word: str, limit: int) -> dict:
    from app.log.query.find import FindOptions
    from app.store import scan_child
    peak = [0]
    stop = threading.Event()

    def poll() -> None:
        while not stop.wait(0.02):
            for c in _workers():
                peak[0] = max(peak[0], _anon_kb(c))
    th = threading.Thread(target=poll, daemon=True)
    th.start()
    hits = [0]

    def on_message(msg) -> None:
        if msg[0] == "hits":
            hits[0] += len(msg[1])
    t = time.perf_counter()
    scan_child.run_isolated("find", path, None, {"opts": FindOptions(word), "limit": limit}, on_message, lambda: False)
    wall = time.perf_counter() - t
    stop.set()
    th.join()
    return {"peak_mb": peak[0] / 1024, "hits": hits[0], "wall": wall}


def rg_run(path: str, word: str) -> dict:
    """``rg -c -F --no-mmap`` under ``/usr/bin/time -f %M`` (its peak RSS; read into buffers as the child reads,
    so the file's pages are not counted as they would be with rg's default mmap)."""
    t = time.perf_counter()
    got = subprocess.run(["/usr/bin/time", "-f", "%M", "rg", "-c", "-F", "--no-mmap", word, path],
                         capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    return {"rss_mb": int(got.stderr.strip().splitlines()[-1]) / 1024, "wall": wall}


def trace(path: str, word: str, limit: int) -> None:
    import pickle
    import tracemalloc
    from app.log.query.find import FindOptions
    from app.store.scan_child import scan
    tracemalloc.start(6)

    def send(msg) -> None:
        pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
    scan("find", path, None, {"opts": FindOptions(word), "limit": limit}, send)
    cur, pk = tracemalloc.get_traced_memory()
    print(f"  traced: peak {pk / 2**20:.1f} MB, held at the end {cur / 2**20:.1f} MB")
    for s in tracemalloc.take_snapshot().statistics("traceback")[:6]:
        print(f"   {s.size / 2**20:.2f} MB in {s.count} blocks: " + " <- ".join(
            f"{Path(fr.filename).name}:{fr.lineno}" for fr in list(s.traceback)[-4:]))
    tracemalloc.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("words", nargs="*", default=["error", "the", "—", '"tests'])
    ap.add_argument("--limit", type=int, default=100_000, help="hits (the window's HIT_LIMIT)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--trace", action="store_true")
    a = ap.parse_args(argv)
    print(f"find child memory, {a.file} ({os.path.getsize(a.file) / 1e6:,.0f} MB), {a.runs} run(s)")
    print("| word | hits | child peak RssAnon | rg -c --no-mmap peak RSS | child / rg | target | wall (rg) | load |")
    print("|---|---|---|---|---|---|---|---|")
    for w in a.words:
        got = [child_run(a.file, w, a.limit) for _ in range(a.runs)]
        rgs = [rg_run(a.file, w) for _ in range(a.runs)]
        pk = statistics.median(x["peak_mb"] for x in got)
        rg = statistics.median(x["rss_mb"] for x in rgs)
        wall, rgw = statistics.median(x["wall"] for x in got), statistics.median(x["wall"] for x in rgs)
        print(f"| {w!r} | {got[0]['hits']:,} | {pk:.1f} MB | {rg:.1f} MB | {pk / max(rg, 0.1):.1f}x | "
              f"<= {TARGET_MB:.0f} MB | {wall:.1f} s ({rgw:.2f} s) | load {os.getloadavg()[0]:.1f} |", flush=True)
        if a.trace:
            trace(a.file, w, a.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
