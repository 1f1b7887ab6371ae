#!/usr/bin/env python3
"""Home search figures of issue 32, each beside a reference measured in the same run, with the ratio:

    python bench/search_live_bench.py [--sessions 10000] [--runs 3] [--skip-build | --only-build | --only-queries]

* first query on a never-indexed home (the streaming scan, no index yet): time to the first hit
  and to the whole answer, in-process and from the CLI (``search --no-update``, interpreter start
  subtracted), against ``rg -c -i WORD`` over the same files;
* the first build (default workers) against the FTS5 inserts of its own extracted text (the
  bodies the build wrote, inserted into an empty FTS5 table of the same tokenizer in one
  transaction, one process);
* queries with the index: in-process (lazy total, and exact), and from the CLI with the freshness
  check of the home (one stat walk), against the interpreter start and ``rg -c``.

Medians of ``--runs``.  The machine is shared: the load average is printed with the figures.
Generated inputs go to bench/data/ (git-ignored, reused: bench/home_search_bench.py's home).
"""
from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from home_search_bench import gen_home, load  # noqa: E402

from app.store.ftslive import live_search  # noqa: E402
from app.store.fulltext import FullTextIndex  # noqa: E402

PY = sys.executable


def cpu() -> float:
    """CPU seconds of this process and its finished children (the shard and extraction workers)."""
    import resource
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def own_cpu() -> float:
    """CPU seconds of this process alone."""
    import resource
    a = resource.getrusage(resource.RUSAGE_SELF)
    return a.ru_utime + a.ru_stime


def med(xs):
    return statistics.median(xs)


def timed(cmd, env=None) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, cwd=REPO)
    return time.perf_counter() - t0


def child_cpu(cmd, env=None) -> float:
    """CPU seconds (user + sys) of one run of ``cmd``."""
    import resource
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, cwd=REPO)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def row(what: str, got: float, ref_what: str, ref: float) -> None:
    print(f"  {what:<46} {got * 1000:8.0f} ms   {ref_what:<28} {ref * 1000:8.0f} ms   ratio {got / ref:5.2f}",
          flush=True)


def first_query(home: str, words: list[str], runs: int, env: dict) -> None:
    print("first query on a never-indexed home (streaming scan):")
    start = med([timed([PY, "-c", "pass"]) for _ in range(runs)])
    for w in words:
        rg = med([timed(["rg", "-c", "-i", "--no-messages", w, home]) for _ in range(runs)])
        firsts, alls, clis = [], [], []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as d, FullTextIndex(home, db_path=os.path.join(d, "ix.sqlite")) as ix:
                got: list[float] = []
                t0 = time.perf_counter()

                def on(res, t0=t0, got=got):
                    if res.hits and not got:
                        got.append(time.perf_counter() - t0)
                res = live_search(ix, w, on_partial=on, every=0.0, cancel=lambda got=got: bool(got))
                firsts.append(got[0] if got else time.perf_counter() - t0)
                t0 = time.perf_counter()
                res = live_search(ix, w)
                alls.append(time.perf_counter() - t0)
                n = res.total
            with tempfile.TemporaryDirectory() as d:
                e = dict(env, SESSION_LENS_CACHE_DIR=d)
                clis.append(timed([PY, "-m", "app", "search", home, w, "--no-update", "--json"], env=e) - start)
        print(f"  {w!r}: {n:,} matches")
        row("first hit, in-process", med(firsts), "rg -c -i (same files)", rg)
        row("whole answer, in-process", med(alls), "rg -c -i", rg)
        row("whole answer, CLI (interpreter start off)", med(clis), "rg -c -i", rg)


def build(home: str, runs: int) -> str:
    print("first build against the FTS5 inserts of its own text:")
    builds, inserts, bcpu, icpu, busiest = [], [], [], [], []
    keep = tempfile.mkdtemp(prefix="sl-bench-ix-")
    for r in range(runs):
        d = tempfile.mkdtemp(prefix="sl-bench-b-")
        db = os.path.join(d, "ix.sqlite")
        t0, c0, s0, k0 = time.perf_counter(), cpu(), own_cpu(), cpu() - own_cpu()
        with FullTextIndex(home, db_path=db) as ix:
            rep = ix.update()
            builds.append(time.perf_counter() - t0)
            bcpu.append(cpu() - c0)
            # the busiest process (this one, or the shard worker): what the wall time is on idle cores
            busiest.append(max(own_cpu() - s0, cpu() - own_cpu() - k0))
            bodies = [b for p in ix.parts() for (b,) in p.conn.execute("SELECT body FROM fts")]
        ref = os.path.join(d, "ref.sqlite")
        c = sqlite3.connect(ref, isolation_level=None)
        c.execute("PRAGMA journal_mode=WAL")
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute("CREATE VIRTUAL TABLE fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
        c.execute("INSERT INTO fts(fts, rank) VALUES ('hashsize', ?)", (8 << 20,))
        t0, c0 = time.perf_counter(), cpu()
        c.execute("BEGIN")
        c.executemany("INSERT INTO fts(body) VALUES (?)", ((b,) for b in bodies))
        c.execute("COMMIT")
        inserts.append(time.perf_counter() - t0)
        icpu.append(cpu() - c0)
        c.close()
        print(f"  run {r + 1}: build {builds[-1]:.2f} s ({rep.workers} processes, {rep.entries:,} entries, "
              f"{sum(len(b) for b in bodies) / 1e6:.0f} MB of text), inserts {inserts[-1]:.2f} s", flush=True)
        if r == runs - 1:
            for f in os.listdir(d):
                if f.startswith("ix."):
                    shutil.move(os.path.join(d, f), os.path.join(keep, f))
        shutil.rmtree(d, ignore_errors=True)
    row("first build (wall)", med(builds), "FTS5 inserts of its text", med(inserts))
    row("first build (CPU, all processes)", med(bcpu), "FTS5 inserts (CPU)", med(icpu))
    row("first build (CPU of the busiest process)", med(busiest), "FTS5 inserts (CPU)", med(icpu))
    return os.path.join(keep, "ix.sqlite")


def queries(home: str, db: str, words: list[str], runs: int, env: dict) -> None:
    print("queries with the index (in-process: median of 5; CLI: search HOME WORD --json, freshness check included):")
    start = med([timed([PY, "-c", "pass"]) for _ in range(runs)])
    with FullTextIndex(home, db_path=db) as ix:
        for w in words:
            for exact in (False, True):
                ts, cs = [], []
                for _ in range(5):
                    t0, c0 = time.perf_counter(), time.process_time()
                    res = ix.search(w, exact=exact)
                    ts.append(time.perf_counter() - t0)
                    cs.append(time.process_time() - c0)
                ts2 = []
                for _ in range(5):
                    t0 = time.perf_counter()
                    live_search(ix, w, exact=exact)
                    ts2.append(time.perf_counter() - t0)
                print(f"  {w!r:14} {'exact' if exact else 'lazy '} {res.total:>7,} matches: index {med(ts) * 1000:6.0f} ms "
                      f"(CPU {med(cs) * 1000:4.0f} ms), "
                      f"with the freshness check (stat walk) {med(ts2) * 1000:6.0f} ms", flush=True)
    cache = tempfile.mkdtemp(prefix="sl-bench-cli-")
    from app.store.fulltext import index_path_for
    e = dict(env, SESSION_LENS_CACHE_DIR=cache)
    os.environ["SESSION_LENS_CACHE_DIR"] = cache
    target = index_path_for(home)
    os.makedirs(os.path.dirname(target), mode=0o700)
    for f in os.listdir(os.path.dirname(db)):
        if f.startswith("ix.") and not f.endswith((".lock", "-wal", "-shm")):
            shutil.copy(os.path.join(os.path.dirname(db), f), target[:-len(".sqlite")] + f[len("ix"):])
    start_cpu = med([child_cpu([PY, "-c", "pass"]) for _ in range(runs)])
    for w in words[:2]:
        rg = med([timed(["rg", "-c", "-i", "--no-messages", w, home]) for _ in range(runs)])
        cli = med([timed([PY, "-m", "app", "search", home, w, "--json"], env=e) for _ in range(runs)])
        row(f"CLI search {w!r} (whole, with interpreter)", cli, "interpreter start", start)
        row(f"CLI search {w!r} (interpreter start off)", cli - start, "rg -c -i", rg)
        # CPU (user + sys) of the same command: what a loaded machine does not inflate
        cli_cpu = med([child_cpu([PY, "-m", "app", "search", home, w, "--json"], env=e) for _ in range(runs)])
        rg_cpu = med([child_cpu(["rg", "-c", "-i", "--no-messages", w, home]) for _ in range(runs)])
        row(f"CLI search {w!r} CPU (whole, with interpreter)", cli_cpu, "interpreter start, CPU", start_cpu)
        row(f"CLI search {w!r} CPU (interpreter start off)", cli_cpu - start_cpu, "rg -c -i, CPU", rg_cpu)
    shutil.rmtree(cache, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-build", action="store_true")
    ap.add_argument("--only-build", action="store_true", help="the first build against its inserts, nothing else")
    ap.add_argument("--only-queries", action="store_true",
                    help="one build, then the queries with the index (in-process and CLI), nothing else")
    a = ap.parse_args()
    home, meta = gen_home(a.sessions)
    home = str(home)
    rare = next(w for w in meta["planted"] if w.isascii() and " " not in w)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)          # an installed app runs from bytecode
    subprocess.run([PY, "-m", "compileall", "-q", "app"], cwd=REPO, env=env, stdout=subprocess.DEVNULL, check=False)
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(home) for f in fs)
    print(f"home: {len(meta['sessions']):,} sessions, {size / 1e6:.0f} MB; {load()}; {os.cpu_count()} cores", flush=True)
    if a.only_build or a.only_queries:
        db = build(home, a.runs if a.only_build else 1)
        if a.only_queries:
            queries(home, db, ["the", "error", "the error", rare], a.runs, env)
        print(load())
        return 0
    first_query(home, [rare, "error"], a.runs, env)
    if not a.skip_build:
        db = build(home, a.runs)
        queries(home, db, ["the", "error", "the error", rare], a.runs, env)
    print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
