#!/usr/bin/env python3
"""Home full-text index benchmarks (issue 18): first build, queries, incremental update.

    python bench/home_search_bench.py [--sessions 10000] [--runs 3] [--skip-big] [--profile] [--cold]

* a generated home of ``--sessions`` sessions (copies of the fixtures with new ids plus planted
  synth sessions): first build MB/s against a raw read of the same files in the same run (each
  run: raw read, then a build into an empty cache), medians of ``--runs``; query times (median of
  5 per query); the update with nothing changed and the incremental update after one session grew.
* ``--cold``: the page cache is dropped (``echo 3 > /proc/sys/vm/drop_caches``, root only) before
  the raw read AND before the build of each run, as a first build on a desktop reads files not
  read for a while; the warm figures (nothing dropped) are printed by a run without it.
* 40 synth sessions of 2.5 MB each (realistic long sessions): build against raw read, medians.
* ``--profile``: one build under cProfile, the top functions by cumulative and by own time.

Generated inputs go to bench/data/ (git-ignored) and are reused (the grown session is restored).
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.log.index.reader import LogReader  # noqa: E402
from app.tools.plant import make_home  # noqa: E402
from app.tools.synth import write_jsonl  # noqa: E402

DATA = REPO / "bench" / "data"
FIXTURES = REPO.parent / "shared" / "fixtures" / "dsh"


def med(xs):
    return statistics.median(xs)


def load() -> str:
    try:
        return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "load average ?"


def _append_turn(path: str, word: str) -> int:
    r = LogReader.open(path)
    last = -1
    turn = 0
    for ev in r.iter_events():
        last = max(last, ev.seq)
        if ev.type == "turn/start":
            turn = max(turn, ev.data.get("turn", 0))
    r.close()
    rows = [{"type": "turn/start", "seq": last + 1, "time": 1, "data": {"turn": turn + 1}},
            {"type": "user/message", "seq": last + 2, "time": 2,
             "data": {"content": [{"type": "text", "text": f"find {word}"}], "source": {"kind": "user"},
                      "role": "user", "id": "x"}, "surfaceOp": "append"},
            {"type": "turn/end", "seq": last + 3, "time": 3, "data": {"turn": turn + 1,
                                                                     "reason": {"kind": "completed"}}}]
    with open(path, "ab") as f:
        f.write(b"".join(json.dumps(x).encode() + b"\n" for x in rows))
    return last + 2


def gen_home(n_sessions: int) -> tuple:
    home = DATA / f"home-{n_sessions}"
    meta = DATA / f"home-{n_sessions}.json"
    if not (home.exists() and meta.exists()):
        shutil.rmtree(home, ignore_errors=True)
        from app.tools.plant import fixture_sessions
        per = len(fixture_sessions(str(FIXTURES)))
        copies = max(1, (n_sessions - 20) // per)
        t0 = time.perf_counter()
        m = make_home(str(home), str(FIXTURES), copies=copies, planted=20, zstd_every=0)
        meta.write_text(json.dumps({"planted": m["planted"], "sessions": m["sessions"]}))
        print(f"  generated {len(m['sessions'])} sessions in {time.perf_counter() - t0:.1f} s", flush=True)
    return home, json.loads(meta.read_text())


def drop_caches() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def raw_read(files, cold: bool = False) -> tuple:
    if cold:
        drop_caches()
    t0, c0 = time.perf_counter(), time.process_time()
    n = 0
    for p in files:
        with open(p, "rb") as f:
            n += len(f.read())
    return time.perf_counter() - t0, time.process_time() - c0


def cpu_all() -> float:
    """CPU seconds of this process and of its finished children (the extraction workers)."""
    me, ch = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def build_once(root: str, cache: str, workers=None, cold: bool = False) -> tuple:
    from app.store.fulltext import FullTextIndex
    ix = FullTextIndex(root, db_path=os.path.join(cache, "ix.sqlite"))
    if cold:
        drop_caches()
    t0, c0 = time.perf_counter(), cpu_all()
    rep = ix.update(workers=workers)
    dt, dc = time.perf_counter() - t0, cpu_all() - c0
    size = sum(os.path.getsize(os.path.join(cache, n)) for n in os.listdir(cache))
    ix.close()
    return dt, dc, rep, size


def bench_build(root, files, total, runs, label, workers=None, cold: bool = False):
    builds, raws, builds_cpu, raws_cpu = [], [], [], []
    rep = size = None
    label += " (cold: page cache dropped before the read and before the build)" if cold else " (warm)"
    for _ in range(runs):
        r, rc = raw_read(files, cold)
        raws.append(r)
        raws_cpu.append(rc)
        cache = tempfile.mkdtemp(prefix="sl-fts-bench-")
        try:
            dt, dc, rep, size = build_once(str(root), cache, workers, cold)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
        builds.append(dt)
        builds_cpu.append(dc)
    b, r = med(builds), med(raws)
    mb = total / 1e6
    print(f"  {label}: first build {b:.2f} s = {mb / b:.1f} MB/s (runs {', '.join(f'{x:.2f}' for x in builds)}); "
          f"raw read {r:.3f} s = {mb / r:.0f} MB/s; build/raw {r / b * 100:.1f}% "
          f"({rep.entries} entries, {rep.sessions} sessions, {rep.workers} workers, index {size / 1e6:.0f} MB; "
          f"{load()})", flush=True)
    bc, rc = med(builds_cpu), med(raws_cpu)
    print(f"    CPU time (this process + workers): build {bc:.2f} s = {mb / bc:.1f} MB/s; raw read {rc:.3f} s = "
          f"{mb / max(rc, 1e-9):.0f} MB/s; CPU ratio {rc / bc * 100:.1f}%", flush=True)
    return b, r


def bench_fts(n_sessions: int, runs: int, workers=None, cold: bool = False):
    from app.store.fulltext import FullTextIndex
    print(f"== home full-text index: {n_sessions} sessions ({load()})")
    home, m = gen_home(n_sessions)
    files = [p for p in home.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    print(f"  {len(m['sessions'])} sessions, {total / 1e6:.1f} MB")
    bench_build(home, files, total, runs, f"{n_sessions} sessions", workers, cold)
    cache = tempfile.mkdtemp(prefix="sl-fts-bench-")
    sid = next(iter(m["sessions"]))
    path = m["sessions"][sid]
    original = Path(path).read_bytes()
    try:
        ix = FullTextIndex(str(home), db_path=os.path.join(cache, "ix.sqlite"))
        ix.update(workers=workers)
        words = list(m["planted"])
        queries = [words[0], f'"{words[2].replace(chr(34), "")}"', "plant1*", f"{words[5]} kind:user",
                   "snapshot", "snapshot tool:bash", "kind:error", "cordis project:alpha",
                   "snapshot after:2026-01-01", "snapshot -bash"]
        print("  queries (median of 5; wall and this process's CPU time; limit 50):")
        for q in queries:
            ts, cs = [], []
            for _ in range(5):
                t0, c0 = time.perf_counter(), time.process_time()
                res = ix.search(q, limit=50)
                ts.append(time.perf_counter() - t0)
                cs.append(time.process_time() - c0)
            print(f"  query {q[:40]!r:44} {med(ts) * 1000:6.1f} ms  CPU {med(cs) * 1000:6.1f} ms  ({res.total} "
                  f"matches in {res.session_total} sessions)", flush=True)
        ts, cs = [], []
        for _ in range(5):                      # what a window's query job does: open the index, query, close
            t0, c0 = time.perf_counter(), time.process_time()
            with FullTextIndex(str(home), db_path=os.path.join(cache, "ix.sqlite")) as ix2:
                res = ix2.search("snapshot", limit=50)
            ts.append(time.perf_counter() - t0)
            cs.append(time.process_time() - c0)
        print(f"  open + query 'snapshot' + close ({len(ix.parts())} shard(s)): {med(ts) * 1000:6.1f} ms  "
              f"CPU {med(cs) * 1000:6.1f} ms", flush=True)
        t0, c0 = time.perf_counter(), time.process_time()
        rep = ix.update()
        print(f"  update with nothing changed: {(time.perf_counter() - t0) * 1000:.0f} ms, CPU "
              f"{(time.process_time() - c0) * 1000:.0f} ms (files opened {rep.files_opened})")
        incs, incc = [], []
        for i in range(3):
            word = f"benchgrowthword{i}"
            seq = _append_turn(path, word)
            t0, c0 = time.perf_counter(), time.process_time()
            rep = ix.update()
            incs.append(time.perf_counter() - t0)
            incc.append(time.process_time() - c0)
            hits = ix.search(word).hits
            assert [(h.session, h.seq) for h in hits] == [(sid, seq)], hits
        print(f"  incremental update after one session grew: median {med(incs) * 1000:.0f} ms, CPU "
              f"{med(incc) * 1000:.0f} ms (grown {rep.grown}, files opened {rep.files_opened}, {rep.bytes_read} "
              f"bytes read)", flush=True)
        ix.close()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        Path(path).write_bytes(original)       # the next run starts from the same home


def gen_big(n: int = 40, size: int = 2_500_000) -> Path:
    from app.tools.synth import SessionSynth
    home = DATA / f"home-big-{n}"
    if not home.exists():
        for i in range(n):
            d = home / "sessions" / "--home-dev-big--" / f"s{i}"
            d.mkdir(parents=True)
            write_jsonl(str(d / "session.jsonl"), SessionSynth(seed=1000 + i), target_bytes=size)
    return home


def bench_build_big(runs: int, workers=None, n: int = 40, size: int = 2_500_000, cold: bool = False):
    home = gen_big(n, size)
    files = list(home.rglob("*.jsonl"))
    total = sum(p.stat().st_size for p in files)
    print(f"== build on {n} synth sessions of {size / 1e6:.1f} MB ({total / 1e6:.0f} MB)")
    bench_build(home, files, total, runs, f"{n} x {size / 1e6:.1f} MB", workers, cold)


def profile_build(root: Path, top: int = 25, workers=None):
    cache = tempfile.mkdtemp(prefix="sl-fts-prof-")
    try:
        pr = cProfile.Profile(time.process_time)       # CPU time: the wall clock mostly measures the load
        pr.enable()
        dt, _dc, rep, _ = build_once(str(root), cache, workers)
        pr.disable()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print(f"== cProfile (CPU time) of one build of {root.name}: {dt:.2f} s wall, {rep.bytes_read / 1e6:.1f} MB read, "
          f"{rep.workers} workers; {load()}")
    for key in ("cumulative", "tottime"):
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats(key).print_stats(top)
        print(s.getvalue())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--workers", type=int, default=None, help="extraction processes (default: the index's choice)")
    ap.add_argument("--skip-big", action="store_true")
    ap.add_argument("--skip-home", action="store_true")
    ap.add_argument("--profile", action="store_true", help="cProfile one build of each home instead")
    ap.add_argument("--cold", action="store_true", help="drop the page cache before each raw read and build (root)")
    a = ap.parse_args(argv)
    if a.profile:
        profile_build(gen_home(a.sessions)[0], workers=a.workers)
        profile_build(gen_big(), workers=a.workers)
        return 0
    if not a.skip_home:
        bench_fts(a.sessions, a.runs, a.workers, a.cold)
    if not a.skip_big:
        bench_build_big(a.runs, a.workers, cold=a.cold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
