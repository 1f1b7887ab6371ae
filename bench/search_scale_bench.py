#!/usr/bin/env python3
"""Where one desktop stops (issue 32 item 5): the home search on a big generated home, each phase in
its own process so its peak RSS is its own:

    python bench/search_scale_bench.py [--sessions 100000] [--phase all]

phases: ``scan`` (a query on the never-indexed home: first hit and whole answer, the streaming
scan), ``build`` (the first build), ``query`` (broad and rare queries with the index, lazy total,
with the freshness check), ``update`` (the update with nothing changed, then after one session
grew).  Each line: wall seconds, CPU seconds, peak RSS; references in the same run: ``find`` over
the home (the stat walk's floor) and ``rg -c -i`` (the scan's).  bench/data/ (git-ignored) keeps
the home.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu() -> float:
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def phase(name: str, home: str, db: str, rare: str) -> dict:
    from app.store.ftslive import live_search
    from app.store.fulltext import FullTextIndex
    out: dict = {}
    t0, c0 = time.perf_counter(), _cpu()
    if name == "scan":
        with tempfile.TemporaryDirectory() as d, FullTextIndex(home, db_path=os.path.join(d, "ix.sqlite")) as ix:
            first: list[float] = []
            live_search(ix, "error", on_partial=lambda r: first.append(time.perf_counter() - t0) if r.hits and not first
                        else None, every=0.0, cancel=lambda: bool(first))
            out["first hit 'error'"] = first[0] if first else None
            t1 = time.perf_counter()
            res = live_search(ix, rare)
            out[f"whole answer {rare!r}"] = time.perf_counter() - t1
            out["sessions scanned"] = res.scanned
    elif name == "build":
        with FullTextIndex(home, db_path=db) as ix:
            rep = ix.update()
            out["sessions"], out["entries"], out["processes"] = rep.sessions, rep.entries, rep.workers
    elif name == "query":
        with FullTextIndex(home, db_path=db) as ix:
            for w in ("the", "error", rare):
                ts, tl = [], []
                for _ in range(3):
                    t1 = time.perf_counter()
                    res = ix.search(w, exact=False)
                    ts.append(time.perf_counter() - t1)
                    t1 = time.perf_counter()
                    live_search(ix, w, exact=False)
                    tl.append(time.perf_counter() - t1)
                out[f"{w!r} ({res.total:,} matches) index / with freshness check"] = (sorted(ts)[1], sorted(tl)[1])
    elif name == "update":
        with FullTextIndex(home, db_path=db) as ix:
            rep = ix.update()
            out["nothing changed"] = (time.perf_counter() - t0, rep.files_opened)
            p = ix.conn.execute("SELECT min(path) FROM sessions WHERE format = 'jsonl'").fetchone()[0]
            with open(p, "rb") as f:
                last = json.loads(f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1])
            with open(p, "ab") as f:
                f.write(json.dumps({"type": "user/message", "seq": last["seq"] + 1, "time": 1,
                                    "data": {"content": "grownwordscale"}}).encode() + b"\n")
            t1 = time.perf_counter()
            rep = ix.update()
            out["one session grew"] = (time.perf_counter() - t1, rep.grown)
    out["wall s"] = time.perf_counter() - t0
    out["cpu s"] = _cpu() - c0
    out["peak RSS MB"] = _rss_mb()
    return out


def _timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=100000)
    ap.add_argument("--phase", default="all")
    ap.add_argument("--child", nargs=3, metavar=("HOME", "DB", "RARE"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(phase(a.phase, *a.child)))
        return 0
    from home_search_bench import gen_home, load
    home, meta = gen_home(a.sessions)
    rare = next(w for w in meta["planted"] if w.isascii() and " " not in w)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(home) for f in fs)
    print(f"home: {len(meta['sessions']):,} sessions, {size / 1e6:.0f} MB; {load()}", flush=True)
    print(f"  references: find {_timed(['find', str(home), '-type', 'f']):.2f} s, "
          f"rg -c -i error {_timed(['rg', '-c', '-i', '--no-messages', 'error', str(home)]):.2f} s", flush=True)
    db = str(REPO / "bench" / "data" / f"scale-{a.sessions}.sqlite")
    phases = ["scan", "build", "query", "update"] if a.phase == "all" else [a.phase]
    if "build" in phases:
        for f in Path(db).parent.glob(Path(db).stem + "*"):
            f.unlink()
    for ph in phases:
        r = subprocess.run([sys.executable, __file__, "--phase", ph, "--child", str(home), db, rare],
                           capture_output=True, text=True, check=False)
        got = json.loads(r.stdout) if r.returncode == 0 and r.stdout.strip() else {"failed": r.stderr[-500:]}
        print(f"{ph}: " + "; ".join(f"{k} {v if not isinstance(v, float) else round(v, 3)}" for k, v in got.items()),
              flush=True)
    print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
