#!/usr/bin/env python3
"""Search benchmarks: whole-log ``find`` against ``grep -c``, and the home full-text index.

    python bench/search_bench.py [--sizes 100MB,1GB] [--sessions 10000] [--runs 3] [--skip-find|--skip-fts]

* find: generated logs (``app.tools.plant.PlantingSynth``, words planted at known seqs) of each
  size; per word, ``grep -c WORD FILE`` (the reference, same run, same warm page cache) and
  ``app.log.search.find`` in this process (the interpreter already started), medians of
  ``--runs``; also the time to the first hit and ``grep -ci`` vs a case-insensitive find.
* fts: a generated home of ``--sessions`` sessions (copies of the fixtures with new ids plus
  planted synth sessions): first build MB/s against a raw read of the same files (same run),
  query times (median of 5 per query), and the incremental update after one session grew.

Generated inputs go to bench/data/ (git-ignored) and are reused.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.log.reader import LogReader  # noqa: E402
from app.log.search import FindOptions, FindStats, find  # noqa: E402
from app.tools.plant import PlantingSynth, make_home  # noqa: E402
from app.tools.synth import parse_size, write_jsonl  # noqa: E402

DATA = REPO / "bench" / "data"
FIXTURES = REPO.parent / "shared" / "fixtures" / "dsh"


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


def time_grep(word: str, path: str, ci: bool = False) -> tuple:
    cmd = ["grep", "-c"] + (["-i"] if ci else []) + ["-F", "--", word, path]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True)
    return time.perf_counter() - t0, int(r.stdout or 0)


def time_find(word: str, path: str, case: bool = True) -> tuple:
    r = LogReader.open(path)
    st = FindStats()
    t0 = time.perf_counter()
    first = None
    n = 0
    for _h in find(r, FindOptions(word, case=case), stats=st):
        if first is None:
            first = time.perf_counter() - t0
        n += 1
    dt = time.perf_counter() - t0
    r.close()
    return dt, n, first, st


def bench_find(sizes, runs):
    print(f"== find vs grep -c (same word, same file, warm cache; medians of {runs})")
    for size in sizes:
        path, planted = gen_log(size)
        mb = os.path.getsize(path) / 1e6
        with open(path, "rb") as f:           # warm the page cache for both
            while f.read(1 << 24):
                pass
        print(f"-- {size}: {mb:.0f} MB")
        for word, (seq, _turn, _kind) in list(planted.items())[:3] + [("wordnotinthelog", (None, None, None))]:
            g = [time_grep(word, path) for _ in range(runs)]
            fr = [time_find(word, path) for _ in range(runs)]
            gt, ft = med([x[0] for x in g]), med([x[0] for x in fr])
            n, first = fr[0][1], fr[0][2]
            print(f"  {word[:24]!r:28} grep -c {gt * 1000:7.0f} ms ({g[0][1]} lines)  find {ft * 1000:7.0f} ms "
                  f"({n} hits, seq {seq}, first hit {first * 1000 if first else float('nan'):.0f} ms)  "
                  f"ratio {ft / gt:.2f}x  {mb / ft:.0f} MB/s", flush=True)
        # case-insensitive (the CLI's and the window's default): an ASCII word and a non-ASCII one
        # (the prefilter looks for the word's case variants as UTF-8 and as \uXXXX escapes)
        words = [list(planted)[0]] + [w for w in planted if not w.isascii()][:1]
        for word in words:
            g = [time_grep(word, path, ci=True) for _ in range(runs)]
            gc = [time_grep(word, path) for _ in range(runs)]
            fr = [time_find(word, path, case=False) for _ in range(runs)]
            gt, gct, ft = med([x[0] for x in g]), med([x[0] for x in gc]), med([x[0] for x in fr])
            print(f"  {word!r} case-insensitive: find {ft * 1000:.0f} ms ({fr[0][1]} hits, "
                  f"{fr[0][3].rows_decoded} rows decoded); grep -ci {gt * 1000:.0f} ms -> ratio {ft / gt:.2f}x; "
                  f"grep -c {gct * 1000:.0f} ms -> ratio {ft / gct:.2f}x", flush=True)


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


def bench_fts(n_sessions: int, runs: int):
    from app.store.fulltext import FullTextIndex
    print(f"== home full-text index: {n_sessions} sessions")
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
    m = json.loads(meta.read_text())
    files = [p for p in home.rglob("*") if p.is_file()]
    total = sum(p.stat().st_size for p in files)
    print(f"  {len(m['sessions'])} sessions, {total / 1e6:.1f} MB")
    # raw read of the same files (reference, same run)
    t0, c0 = time.perf_counter(), time.process_time()
    n = 0
    for p in files:
        with open(p, "rb") as f:
            n += len(f.read())
    raw = time.perf_counter() - t0
    raw_cpu = time.process_time() - c0
    cache = tempfile.mkdtemp(prefix="sl-fts-bench-")
    os.environ["SESSION_LENS_CACHE_DIR"] = cache
    try:
        ix = FullTextIndex(str(home))
        t0, c0 = time.perf_counter(), time.process_time()
        rep = ix.update()
        build = time.perf_counter() - t0
        build_cpu = time.process_time() - c0
        db = os.path.getsize(ix.db_path) + sum(os.path.getsize(ix.db_path + s) for s in ("-wal",)
                                               if os.path.exists(ix.db_path + s))
        print(f"  first build {build:.2f} s = {total / 1e6 / build:.1f} MB/s; raw read {raw:.2f} s = "
              f"{total / 1e6 / raw:.0f} MB/s; build/raw speed {raw / build * 100:.1f}% "
              f"({rep.entries} entries, index {db / 1e6:.0f} MB)", flush=True)
        # CPU time too: on a loaded machine the wall clock mostly measures the other processes
        print(f"  first build CPU {build_cpu:.2f} s = {total / 1e6 / build_cpu:.1f} MB/s; raw read CPU "
              f"{raw_cpu:.3f} s = {total / 1e6 / max(raw_cpu, 1e-9):.0f} MB/s; CPU ratio "
              f"{raw_cpu / build_cpu * 100:.1f}%", flush=True)
        words = list(m["planted"])
        queries = [words[0], f'"{words[2].replace(chr(34), "")}"', "plant1*", f"{words[5]} kind:user",
                   "snapshot", "snapshot tool:bash", "kind:error", "cordis project:alpha",
                   "snapshot after:2026-01-01"]
        for q in queries:
            ts = []
            for _ in range(5):
                t0 = time.perf_counter()
                res = ix.search(q, limit=50)
                ts.append(time.perf_counter() - t0)
            print(f"  query {q[:40]!r:44} {med(ts) * 1000:6.1f} ms  ({res.total} matches in "
                  f"{len(res.sessions)} sessions)", flush=True)
        t0 = time.perf_counter()
        rep = ix.update()
        print(f"  update with nothing changed: {(time.perf_counter() - t0) * 1000:.0f} ms "
              f"(files opened {rep.files_opened})")
        sid = next(iter(m["sessions"]))
        path = m["sessions"][sid]
        seq = _append_turn(path, "benchgrowthword")
        t0 = time.perf_counter()
        rep = ix.update()
        inc = time.perf_counter() - t0
        hits = ix.search("benchgrowthword").hits
        assert [(h.session, h.seq) for h in hits] == [(sid, seq)], hits
        print(f"  incremental update after one session grew: {inc * 1000:.0f} ms "
              f"(grown {rep.grown}, files opened {rep.files_opened}, {rep.bytes_read} bytes read)", flush=True)
        ix.close()
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        # leave the home as generated: drop the grown session so the next run starts the same
        shutil.rmtree(home, ignore_errors=True)
        meta.unlink(missing_ok=True)


def bench_build_big(n: int = 40, size: int = 2_500_000):
    """Build speed on sessions of realistic size (synth, ``size`` bytes each) against a raw read."""
    from app.store.fulltext import FullTextIndex
    from app.tools.synth import SessionSynth
    home = DATA / f"home-big-{n}"
    if not home.exists():
        for i in range(n):
            d = home / "sessions" / "--home-dev-big--" / f"s{i}"
            d.mkdir(parents=True)
            write_jsonl(str(d / "session.jsonl"), SessionSynth(seed=1000 + i), target_bytes=size)
    files = [p for p in home.rglob("*.jsonl")]
    total = sum(p.stat().st_size for p in files)
    builds, raws, builds_cpu, raws_cpu = [], [], [], []
    for _ in range(3):
        t0, c0 = time.perf_counter(), time.process_time()
        for p in files:
            with open(p, "rb") as f:
                f.read()
        raws.append(time.perf_counter() - t0)
        raws_cpu.append(time.process_time() - c0)
        cache = tempfile.mkdtemp(prefix="sl-fts-bench-")
        try:
            ix = FullTextIndex(str(home), db_path=os.path.join(cache, "ix.sqlite"))
            t0, c0 = time.perf_counter(), time.process_time()
            ix.update()
            builds.append(time.perf_counter() - t0)
            builds_cpu.append(time.process_time() - c0)
            ix.close()
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    b, r = med(builds), med(raws)
    print(f"== build on {n} sessions of {size / 1e6:.1f} MB ({total / 1e6:.0f} MB): {total / 1e6 / b:.1f} MB/s; "
          f"raw read (page cache) {total / 1e6 / r:.0f} MB/s; build/raw {r / b * 100:.1f}%", flush=True)
    bc, rc = med(builds_cpu), med(raws_cpu)
    print(f"   CPU time: build {total / 1e6 / bc:.1f} MB/s; raw read {total / 1e6 / max(rc, 1e-9):.0f} MB/s; "
          f"build/raw {rc / bc * 100:.1f}%", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100MB,1GB")
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-find", action="store_true")
    ap.add_argument("--skip-fts", action="store_true")
    a = ap.parse_args(argv)
    if not a.skip_find:
        bench_find([s for s in a.sizes.split(",") if s], a.runs)
    if not a.skip_fts:
        bench_fts(a.sessions, a.runs)
        bench_build_big()
    return 0


if __name__ == "__main__":
    sys.exit(main())
