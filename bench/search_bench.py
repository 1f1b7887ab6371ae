#!/usr/bin/env python3
"""Search benchmarks: whole-log ``find`` against ``grep -c``, and the home full-text index.

    python bench/search_bench.py [--sizes 100MB,1GB] [--sessions 10000] [--runs 3] [--skip-find|--skip-fts]
                                 [--caseless-only] [--before /work/main]

* find: generated logs (``app.tools.plant.PlantingSynth``, words planted at known seqs) of each
  size; per word, ``grep -c WORD FILE`` (the reference, same run, same warm page cache) and
  ``app.log.query.find.find`` in this process (the interpreter already started), medians of
  ``--runs``; also the time to the first hit and ``grep -ci`` vs a case-insensitive find (:data:`ROWS`:
  case-sensitive, caseless ASCII, caseless non-ASCII, a phrase); for a word JSON stores in other
  forms too (non-ASCII, a quote), also ``grep -c -e WORD -e FORM…`` with those forms (the same bytes
  ``find`` looks for: a reference of equal work, beside the target's); ``--before DIR``: the find of another
  checkout (main) in a process of its own, timed alternately with this one in the same minutes.
* fts: the home full-text index rows of ``bench/home_search_bench.py`` (first build against a raw
  read of the same files, queries, incremental update).

Generated inputs go to bench/data/ (git-ignored) and are reused.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
if len(sys.argv) == 3 and sys.argv[1] == "--serve":   # (the other checkout's find, for --before)
    sys.path.insert(0, sys.argv[2])
else:
    sys.path.insert(0, str(REPO))

from app.log.index.reader import LogReader  # noqa: E402
from app.log.query.find import FindOptions, FindStats, find  # noqa: E402
from app.tools.plant import PlantingSynth  # noqa: E402
from app.tools.synth import parse_size, write_jsonl  # noqa: E402

DATA = REPO / "bench" / "data"


def med(xs):
    return statistics.median(xs)


def gen_log(size: str) -> tuple:
    target = parse_size(size)
    path = DATA / f"search-{size}.jsonl"
    meta = DATA / f"search-{size}.json"
    if path.exists() and meta.exists():
        return str(path), {k: tuple(v) for k, v in json.loads(meta.read_text())["planted"].items()}
    DATA.mkdir(parents=True, exist_ok=True)
    # plant past the middle: at a turn about 60% through (the synth writes ~35 KB per turn)
    at_turn = max(2, int(target / 35_000 * 0.6))
    s = PlantingSynth(seed=23, at_turn=at_turn)
    t0 = time.perf_counter()
    st = write_jsonl(str(path), s, target_bytes=target)
    if len(s.planted) < len(s.plants):           # the log ended before every word found a place
        s2 = PlantingSynth(seed=23, at_turn=2)
        st = write_jsonl(str(path), s2, target_bytes=target)
        s = s2
    meta.write_text(json.dumps({"planted": s.planted, "stats": st}))
    print(f"  generated {path.name}: {st['bytes'] / 1e6:.0f} MB, {st['turns']} turns in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)
    return str(path), dict(s.planted)


def loadavg() -> str:
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def stored_forms(word: str) -> list:
    """The forms ``find`` looks for that grep's WORD alone does not (a log stores them too): the
    word as JSON escapes it (``\\uXXXX``, ``\\"``: an ASCII-only writer) and escaped twice (text in
    a JSON string inside JSON: tool arguments).  Empty: the word is stored as typed only."""
    once = json.dumps(word)[1:-1]
    forms = [word]
    for f in (json.dumps(word, ensure_ascii=False)[1:-1], once, json.dumps(once)[1:-1]):
        if f not in forms:
            forms.append(f)
    return forms[1:]


def time_grep(word: str, path: str, ci: bool = False, forms: bool = False) -> tuple:
    """(wall s, CPU s of the child: user + system, matching lines) of ``grep -c [-i] -F WORD FILE``;
    ``forms``: ``-e WORD -e FORM…`` with :func:`stored_forms` (the same forms ``find`` looks for)."""
    pats = ["-e", word] + [x for f in stored_forms(word) for x in ("-e", f)] if forms else ["--", word]
    cmd = ["grep", "-c"] + (["-i"] if ci else []) + ["-F"] + pats + [path]
    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)       # (µs: os.times counts 10 ms ticks)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True)
    dt = time.perf_counter() - t0
    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return dt, (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime), int(r.stdout or 0)


def time_find(word: str, path: str, case: bool = True) -> tuple:
    """(wall s, CPU s of this process, hits, first hit s, FindStats) of ``find`` in this process."""
    r = LogReader.open(path)
    st = FindStats()
    c0 = time.process_time()
    t0 = time.perf_counter()
    first = None
    n = 0
    for _h in find(r, FindOptions(word, case=case), stats=st):
        if first is None:
            first = time.perf_counter() - t0
        n += 1
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    r.close()
    return dt, cpu, n, first, st


class Before:
    """``find`` of another checkout (``--before DIR``, e.g. main) in a process of its own, started
    once (imports and case tables paid before timing), asked row by row: the two are measured
    in the same minutes, alternately."""

    def __init__(self, repo: str):
        self.repo = repo
        self.p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve", repo],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def find(self, word: str, path: str, case: bool) -> tuple:
        assert self.p.stdin is not None and self.p.stdout is not None
        self.p.stdin.write(json.dumps([word, path, case]) + "\n")
        self.p.stdin.flush()
        return tuple(json.loads(self.p.stdout.readline()))

    def close(self) -> None:
        if self.p.stdin is not None:
            self.p.stdin.close()
        self.p.wait()


def serve() -> int:
    """(--serve DIR) time_find of DIR's code for each [word, path, case] line of stdin."""
    for line in sys.stdin:
        word, path, case = json.loads(line)
        dt, cpu, n, first, st = time_find(word, path, case)
        print(json.dumps([dt, cpu, n, first, st.rows_decoded]), flush=True)
    return 0


# the rows: (word, case-sensitive); None: the log's own planted words
ROWS = [("zebraquokka", True), ("Grüßeñandú", True), ('say "hello-quoted" now', True), ("wordnotinthelog", True),
        ("zebraquokka", False), ("Grüßeñandú", False), ("GRÜSSEÑANDÚ", False), ('say "hello-quoted" now', False)]


def bench_find(sizes, runs, only_caseless: bool = False, before: Optional[str] = None):
    """Each row: ``grep -c`` (``-ci`` for a caseless row) of the same word, ``find`` of this
    checkout in this process and (``before``) of the other checkout, alternately, ``runs`` times;
    medians, CPU beside wall, the ratios to grep."""
    print(f"== find vs grep -c (same word, same file, warm cache; medians of {runs}; load average {loadavg()})")
    time_find("warmup", gen_log(sizes[0])[0], case=False)     # imports, the case tables: once per process
    other = Before(before) if before else None
    if other is not None:
        other.find("warmup", gen_log(sizes[0])[0], False)
    try:
        for size in sizes:
            path, planted = gen_log(size)
            mb = os.path.getsize(path) / 1e6
            with open(path, "rb") as f:           # warm the page cache for both
                while f.read(1 << 24):
                    pass
            print(f"-- {size}: {mb:.0f} MB (load average {loadavg()})")
            for word, case in ROWS:
                if only_caseless and case:
                    continue
                g, fr, br, gf = [], [], [], []
                same = bool(stored_forms(word))
                for _ in range(runs):
                    g.append(time_grep(word, path, ci=not case))
                    if same:
                        gf.append(time_grep(word, path, ci=not case, forms=True))
                    fr.append(time_find(word, path, case))
                    if other is not None:
                        br.append(other.find(word, path, case))
                gt, gc = med([x[0] for x in g]), med([x[1] for x in g])
                ft, fc = med([x[0] for x in fr]), med([x[1] for x in fr])
                first = fr[0][3]
                seq = planted.get(word, (None,))[0]
                line = (f"  {word[:24]!r:26} {'case' if case else 'caseless':8} grep -c{'' if case else 'i'} "
                        f"{gt * 1000:6.0f} ms wall {gc * 1000:5.0f} ms CPU ({g[0][2]} lines) | find "
                        f"{ft * 1000:6.0f} ms wall {fc * 1000:5.0f} ms CPU ({fr[0][2]} hits, seq {seq}, "
                        f"{fr[0][4].rows_decoded} rows decoded, first hit "
                        f"{first * 1000 if first else float('nan'):.0f} ms) ratio {ft / gt:.2f}x wall "
                        f"{fc / max(gc, 1e-3):.2f}x CPU")
                if other is not None:
                    bt, bc = med([x[0] for x in br]), med([x[1] for x in br])
                    line += (f" | before {bt * 1000:6.0f} ms wall {bc * 1000:5.0f} ms CPU ({br[0][2]} hits) "
                             f"ratio {bt / gt:.2f}x wall {bc / max(gc, 1e-3):.2f}x CPU")
                if same:
                    st_, sc = med([x[0] for x in gf]), med([x[1] for x in gf])
                    line += (f" | grep -c{'' if case else 'i'} -e (same stored forms) {st_ * 1000:6.0f} ms wall "
                             f"{sc * 1000:5.0f} ms CPU ({gf[0][2]} lines): find/that {ft / st_:.2f}x wall "
                             f"{fc / max(sc, 1e-3):.2f}x CPU")
                print(line + f"  [load {loadavg()}]", flush=True)
    finally:
        if other is not None:
            other.close()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100MB,1GB")
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-find", action="store_true")
    ap.add_argument("--skip-fts", action="store_true")
    ap.add_argument("--caseless-only", action="store_true", help="only the case-insensitive find rows")
    ap.add_argument("--before", metavar="DIR", help="also time the find of the checkout DIR (e.g. /work/main), "
                                                    "alternately with this one")
    a = ap.parse_args(argv)
    if not a.skip_find:
        bench_find([s for s in a.sizes.split(",") if s], a.runs, a.caseless_only, a.before)
    if not a.skip_fts:                       # the home index rows live in bench/home_search_bench.py
        sys.path.insert(0, str(REPO / "bench"))
        from home_search_bench import bench_build_big, bench_fts
        bench_fts(a.sessions, a.runs)
        bench_build_big(a.runs)
    return 0


if __name__ == "__main__":
    sys.exit(serve() if len(sys.argv) == 3 and sys.argv[1] == "--serve" else main())
