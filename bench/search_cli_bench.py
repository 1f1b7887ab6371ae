#!/usr/bin/env python3
"""A broad query with the index, from the command line and in-process (issue 32: <= 0.3 s from
the CLI with the freshness check of a 10k-session home, <= 100 ms in-process):

    python bench/search_cli_bench.py [--home DIR] [--sessions 10000] [--runs 9] [--word the]

* CLI: ``python -m app search HOME WORD --json`` (the index current: the freshness check, the
  query, the output), wall and CPU (user + sys) of each run, beside ``python -c pass`` (the
  interpreter's start) and ``rg -c WORD HOME`` (a plain scan of the same files), run in turn in
  the same loop; medians, and the ratios;
* in-process: the query alone (``FullTextIndex.search``, lazy total), the freshness check alone
  (the manifest's, and the stat walk it replaces), the whole answer (``live_search``: check
  plus query), and an update with nothing changed (the manifest's, and the walking one), wall and
  CPU, medians.  The answer with the manifest is checked equal to the
  answer with the walk.

The module's bytecode is compiled first (as an installed package has it).  The index goes to a
temporary cache folder.  The home is bench/home_search_bench.py's (bench/data/, or ``--home``).
The machine may be shared: the load average is printed before and after.
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
PY = sys.executable


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(cmd: list[str], env: dict[str, str], cwd: Path = REPO) -> tuple[float, float]:
    """(wall, CPU user + sys) of one run of ``cmd`` in ``cwd`` (its output discarded)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def timed(fn) -> tuple[float, float, object]:
    c0, t0 = time.process_time(), time.perf_counter()
    got = fn()
    return time.perf_counter() - t0, time.process_time() - c0, got


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def line(what: str, wall: float, cpu: float, ref: str = "", rwall: float = 0.0, rcpu: float = 0.0) -> None:
    s = f"  {what:<44} wall {wall * 1000:7.1f} ms  CPU {cpu * 1000:7.1f} ms"
    if ref:
        s += f"   | {ref:<22} wall {rwall * 1000:7.1f}  CPU {rcpu * 1000:7.1f}   ratio wall {wall / rwall:5.2f} CPU {cpu / rcpu:5.2f}"
    print(s, flush=True)


def home_of(args) -> str:
    if args.home:
        return args.home
    sys.path.insert(0, str(REPO / "bench"))
    from home_search_bench import gen_home
    return str(gen_home(args.sessions)[0])


def cli(home: str, word: str, runs: int, env: dict[str, str], before: str | None) -> None:
    rg = shutil.which("rg")
    q = [PY, "-m", "app", "search", home, word, "--json"]
    base, got, ref, old = [], [], [], []
    for _ in range(runs):                  # in turn: the same load for each
        base.append(run([PY, "-c", "pass"], env))
        got.append(run(q, env))
        if rg:
            ref.append(run([rg, "-c", word, home], env))
        if before:
            old.append(run(q, env, Path(before)))
    print(f"CLI, {runs} runs each (medians; load {load()}):")
    bw, bc = med([w for w, _ in base]), med([c for _, c in base])
    gw, gc = med([w for w, _ in got]), med([c for _, c in got])
    line("python -c pass", bw, bc)
    line(f"search HOME {word} --json", gw, gc, "python -c pass", bw, bc)
    if ref:
        line(f"search HOME {word} --json", gw, gc, f"rg -c {word} HOME", med([w for w, _ in ref]),
             med([c for _, c in ref]))
    if old:
        line(f"search HOME {word} --json", gw, gc, "the same, --before", med([w for w, _ in old]),
             med([c for _, c in old]))
    line("  the same, interpreter start off", gw - bw, gc - bc)
    print(f"  runs (wall ms): {' '.join(f'{w * 1000:.0f}' for w, _ in got)}")


def in_process(home: str, word: str, runs: int) -> None:
    from app.store.ftslive import live_search
    from app.store.fulltext import FullTextIndex
    with FullTextIndex(home) as ix:
        ix.parts()
        slow = live_search(ix, word, exact=False, walked=ix.walk())
        fast = live_search(ix, word, exact=False)
        same = [(h.session_key, h.seq, h.kind, h.snippet, h.rank) for h in fast.hits] == \
            [(h.session_key, h.seq, h.kind, h.snippet, h.rank) for h in slow.hits] and fast.total == slow.total
        print(f"in-process, {runs} runs each (medians; load {load()}); {fast.total:,} matches; manifest used: "
              f"{fast.walked is None}; the same answer as with the walk: {same}")
        rows = {"query alone (search, lazy total)": lambda: ix.search(word, exact=False),
                "freshness check: the manifest's": ix.fresh_digest,
                "freshness check: the stat walk (before)": ix.walk,
                "check + query (live_search)": lambda: live_search(ix, word, exact=False),
                "update, nothing changed (the manifest's)": ix.update,
                "update, nothing changed (walking)": lambda: ix.update(walked=ix.walk())}
        for what, fn in rows.items():
            got = [timed(fn) for _ in range(runs)]
            line(what, med([w for w, _c, _g in got]), med([c for _w, c, _g in got]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--home", help="a home to search (default: bench/data's generated home)")
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--word", default="the")
    ap.add_argument("--before", metavar="DIR", help="also time the CLI of the checkout DIR (its bytecode compiled "
                    "there), in the same loop")
    args = ap.parse_args(argv)
    home = home_of(args)
    for where in [REPO] + ([Path(args.before)] if args.before else []):
        subprocess.run([PY, "-m", "compileall", "-q", str(where / "app")], stdout=subprocess.DEVNULL, check=False)
    cache = tempfile.mkdtemp(prefix="sl-cli-bench-")
    env = dict(os.environ, SESSION_LENS_CACHE_DIR=cache)
    os.environ["SESSION_LENS_CACHE_DIR"] = cache
    try:
        print(f"home {home}; load {load()}")
        t0 = time.perf_counter()
        run([PY, "-m", "app", "search", home, "--rebuild", "--json"], env)
        print(f"  index built in {time.perf_counter() - t0:.1f} s")
        run([PY, "-m", "app", "search", home, args.word, "--json"], env)   # (keeps the manifest of its walk)
        cli(home, args.word, args.runs, env, args.before)
        in_process(home, args.word, args.runs)
        print(f"load after: {load()}")
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
