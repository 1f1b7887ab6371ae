#!/usr/bin/env python3
"""The ceiling of a home's first full-text build (issue 18): FTS5's own insert time.

    python bench/fts_ceiling.py [HOME] [--runs 3]

The first build has to read every session file and insert the text it shows into SQLite FTS5.
This script measures, in the same run and on the same files:

* the raw read of every file (warm page cache: the files are read once before timing), wall and CPU;
* FTS5 alone: the text entries the build extracts (extracted first, untimed) inserted into a fresh
  database with the build's own table definition and settings, in one transaction, wall and CPU;
  once in one process, and once split in two halves written by two processes at once (the sharded
  build's layout on two cores);
* the walk of the home (``os.scandir`` and a stat per file), which a build does before reading;
* the best ratio any build could reach, raw read / FTS5 insert alone: a build also has to walk,
  open, decode and extract, so it can only be slower than the insert.

HOME defaults to bench/data/home-10000 (made by ``bench/home_search_bench.py``).
"""
from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.log.query.extract import extract_jsonl  # noqa: E402
from app.store import fulltext  # noqa: E402


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def raw_read(files: list[Path]) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    for p in files:
        with open(p, "rb") as f:
            f.read()
    return time.perf_counter() - t0, time.process_time() - c0


def walk(root: str) -> tuple[float, float]:
    """Find every file under ``root`` with its stat (what any build does before reading)."""
    t0, c0 = time.perf_counter(), time.process_time()
    todo, n = [root], 0
    while todo:
        with os.scandir(todo.pop()) as it:
            for e in it:
                if e.is_dir(follow_symlinks=True):
                    todo.append(e.path)
                else:
                    e.stat()
                    n += 1
    return time.perf_counter() - t0, time.process_time() - c0


def insert(texts: list[str], db: str) -> None:
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=NORMAL")
    c.execute(fulltext._FTS_DDL)
    c.execute("INSERT INTO fts(fts, rank) VALUES ('hashsize', ?)", (fulltext._FTS_HASHSIZE,))
    c.execute("BEGIN")
    c.executemany("INSERT INTO fts(body) VALUES (?)", ((t,) for t in texts))
    c.execute("COMMIT")
    c.close()


def timed_insert(parts: list[list[str]]) -> tuple[float, float]:
    """Each part inserted by its own forked process, all at once; wall and CPU of the children."""
    with tempfile.TemporaryDirectory(prefix="sl-fts-ceiling-") as d:
        c0 = _cpu(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        pids = []
        for i, part in enumerate(parts):
            pid = os.fork()
            if pid == 0:
                try:
                    insert(part, os.path.join(d, f"s{i}.sqlite"))
                finally:
                    os._exit(0)
            pids.append(pid)
        for pid in pids:
            os.waitpid(pid, 0)
        return time.perf_counter() - t0, _cpu(resource.RUSAGE_CHILDREN) - c0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("home", nargs="?", default=str(REPO / "bench" / "data" / "home-10000"))
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    files = sorted(p for p in Path(a.home).rglob("*.jsonl") if p.is_file())
    total = sum(p.stat().st_size for p in files)
    texts: list[str] = []
    for p in files:
        ft = extract_jsonl(str(p))
        texts.extend(e[5] for e in ft.entries)
        if ft.title:
            texts.append(ft.title)
    tb = sum(len(t.encode()) for t in texts)
    print(f"{len(files)} files, {total / 1e6:.1f} MB; {len(texts)} texts, {tb / 1e6:.1f} MB of text; "
          f"load {os.getloadavg()[0]:.2f}")
    raw_read(files)                                   # warm the page cache
    half = len(texts) // 2
    rows: dict[str, list[tuple[float, float]]] = {"raw": [], "walk": [], "one": [], "two": []}
    for _ in range(a.runs):
        rows["walk"].append(walk(a.home))
        rows["raw"].append(raw_read(files))
        rows["one"].append(timed_insert([texts]))
        rows["two"].append(timed_insert([texts[:half], texts[half:]]))
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in rows.items()}
    rw, rc = med["raw"]
    print(f"raw read (warm)          {rw * 1e3:8.1f} ms wall {rc * 1e3:8.1f} ms CPU")
    ww, wc = med["walk"]
    print(f"walk + stat (warm)        {ww * 1e3:8.1f} ms wall {wc * 1e3:8.1f} ms CPU")
    print(f"30 % of the raw read      {rw / 0.3 * 1e3:8.1f} ms wall: the whole first build's budget")
    for k, label in (("one", "FTS5 insert, 1 process"), ("two", "FTS5 insert, 2 processes")):
        w, c = med[k]
        print(f"{label:24} {w * 1e3:8.1f} ms wall {c * 1e3:8.1f} ms CPU   raw/insert: "
              f"{rw / w * 100:5.1f} % wall, {rc / c * 100:5.1f} % CPU")
    print(f"(medians of {a.runs}; load {os.getloadavg()[0]:.2f}; a build also walks, reads, decodes and "
          "extracts, so its ratio to the raw read is below these)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
