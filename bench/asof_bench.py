#!/usr/bin/env python3
"""Replay benchmark (issue 30): the session as of any seq, after the background pass, against a
full fold of the same log (same run).

    python bench/asof_bench.py [--size 150MB] [--fracs 0.1,0.3,0.5,0.7,0.9,0.99] [--runs 3]

The log: a generated v0 session (``app/tools/synth.py``, seed 30, default 150 MB: this machine is
shared, so not the 1 GB of the issue) in bench/data/, written once.  The background pass (timed
once: the seq index, the fold checkpoints and the surface index as the window has them saved, plus
the replay's side index) runs in this process.  Then each position answers
:func:`app.log.fold.asof.as_of` with its request (``runs`` times, median), the messages checked
equal to the reference; the reference is the messages face at the same seq
(:func:`app.log.query.analysis.messages`: one fold of the log from seq 0), timed once per position
group (median of three positions).  Prints wall time, the ratio, and the peak RSS.  "cold": the
surface node events read afresh (a jump); "next seq": the position after it (scrubbing, the node
events of the previous answer reused).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
DATA = REPO / "bench" / "data"


def gen(size: str) -> Path:
    from app.tools.synth import SessionSynth, parse_size, write_jsonl
    path = DATA / f"asof-{size}.jsonl"
    if not path.exists():
        t0 = time.perf_counter()
        tmp = path.with_suffix(".tmp")
        info = write_jsonl(str(tmp), SessionSynth(seed=30), target_bytes=parse_size(size))
        os.replace(tmp, path)
        print(f"generated {path.name}: {info['bytes'] / 1e6:.0f} MB, {info['events']:,} events "
              f"in {time.perf_counter() - t0:.0f} s", flush=True)
    return path


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="150MB")
    ap.add_argument("--fracs", default="0.1,0.3,0.5,0.7,0.9,0.99")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", action="store_true", help="also the window's path: answers from the replay child")
    a = ap.parse_args(argv)
    path = gen(a.size)
    os.environ.setdefault("SESSION_LENS_CACHE_DIR", str(DATA / f"asof-cache-{a.size}"))
    from app.log.fold.asof import SideIndex, as_of
    from app.log.query.analysis import messages
    from app.store.faces import open_reader
    from app.store.indexcache import cached_checkpoints, cached_index
    from app.store.surface_cache import cached_surface
    r = open_reader(str(path))
    t0 = time.perf_counter()
    idx, s1 = cached_index(r)
    cps, s2 = cached_checkpoints(r)
    _si, s3 = cached_surface(r)
    t1 = time.perf_counter()
    side = SideIndex(r, cps)
    side.fill()
    t2 = time.perf_counter()
    print(f"-- {path.stat().st_size / 1e6:.0f} MB, {idx.last + 1:,} events, {len(cps.points)} checkpoints; "
          f"saved caches (index {s1}, checkpoints {s2}, surface {s3}) {t1 - t0:.1f} s; side index "
          f"{t2 - t1:.1f} s (the background pass, once per log); RSS {rss_mb():.0f} MB", flush=True)
    times, warms, seqs, cpu_all = [], [], [], []
    for f in [float(x) for x in a.fracs.split(",") if x]:
        seq = int(f * idx.last)
        walls, warm, cpus = [], [], []
        for _ in range(a.runs):
            side.node_cache.clear()               # cold: a jump here, no surface node read yet
            t, c = time.perf_counter(), time.process_time()
            st = as_of(r, seq, cps, side)
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
            t = time.perf_counter()
            as_of(r, seq + 1 if seq < idx.last else seq, cps, side)     # warm: the next position (scrubbing)
            warm.append(time.perf_counter() - t)
        med = statistics.median(walls)
        times.append(med)
        cpu_all.append(statistics.median(cpus))
        warms.append(statistics.median(warm))
        seqs.append((seq, st))
        print(f"  as of seq {seq:>9,} ({f:.0%}): {med * 1000:6.0f} ms cold ({cpu_all[-1] * 1000:4.0f} ms CPU), "
              f"{warms[-1] * 1000:4.0f} ms next seq "
              f"(medians of {a.runs}), "
              f"{len(st['messages'])} messages, turn {st['turn']} step {st['step']}, "
              f"request {'yes' if st['request'] else 'none'}; peak RSS {rss_mb():.0f} MB", flush=True)
    refs, same = [], True
    ref_cpu = []
    for seq, st in seqs[max(0, len(seqs) // 2 - 1): len(seqs) // 2 + 2]:
        t, c = time.perf_counter(), time.process_time()
        want = messages(r, through=seq, logical=False)
        refs.append(time.perf_counter() - t)
        ref_cpu.append(time.process_time() - c)
        same = same and want == st["messages"]
    med, ref = statistics.median(times), statistics.median(refs)
    child = []
    if a.child:                          # the window's path: the replay child, over its pipe
        from app.store.replay_child import ReplayClient
        t = time.perf_counter()
        client = ReplayClient(str(path), None)
        t_ready = time.perf_counter() - t
        while not client.ask("status"):
            time.sleep(0.2)
        t_fill = time.perf_counter() - t
        for seq, _st in seqs:
            t = time.perf_counter()
            client.answer(seq, None)
            child.append(time.perf_counter() - t)
        client.close()
        print(f"  replay child: ready {t_ready:.1f} s, side index filled {t_fill:.1f} s; as of the same positions "
              f"(state without the request, as the window asks): median {statistics.median(child) * 1000:.0f} ms, "
              f"max {max(child) * 1000:.0f} ms (pipe and pickle included)", flush=True)
    print(f"  as_of CPU: median {statistics.median(cpu_all) * 1000:.0f} ms, max {max(cpu_all) * 1000:.0f} ms; "
          f"reference CPU median {statistics.median(ref_cpu) * 1000:.0f} ms -> "
          f"{statistics.median(ref_cpu) / statistics.median(cpu_all):.0f}x (load average {os.getloadavg()[0]:.1f})")
    print(f"  as_of: median {med * 1000:.0f} ms cold, max {max(times) * 1000:.0f} ms (target <= 300 ms); "
          f"next seq median {statistics.median(warms) * 1000:.0f} ms; "
          f"reference (full fold, messages face): median {ref * 1000:.0f} ms -> {ref / med:.0f}x faster; "
          f"same messages: {same}; peak RSS {rss_mb():.0f} MB", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
