#!/usr/bin/env python3
"""Core benchmarks: raw read vs index speed, time to the first tail page, peak RSS, fork vs copy.

    python bench/run.py [--sizes 10MB,100MB,1GB] [--data bench/data] [--zstd] [--v4]

Generates realistic sessions with app/tools/synth.py when missing (git-ignored under bench/data),
then measures each file in this one run.  Page-cache warm figures: the raw read is the physical
limit of this machine for the same bytes, and every other figure is given as a ratio to it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

UNITS = {"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}


def parse_size(s: str) -> int:
    s = s.strip().upper()
    for u, m in UNITS.items():
        if s.endswith(u):
            return int(float(s[:-len(u)]) * m)
    return int(s)


def ensure(path: Path, size: int, zstd: bool, version: int = 0) -> Path:
    if path.exists() and path.stat().st_size > 0:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    if size > 1 << 30 and not zstd:
        # bigger than 1 GB: a 1 GB synth base extended by re-sequenced copies of its body (bench/bigfile.py)
        sys.path.insert(0, str(REPO / "bench"))
        from bigfile import ensure_big
        return ensure_big(path, size, version)
    from app.tools.synth import SessionSynth, write_jsonl
    t = time.perf_counter()
    raw = path if not zstd else path.with_suffix("")
    if not raw.exists():
        stats = write_jsonl(str(raw), SessionSynth(seed=42, version=version), target_bytes=size)
        print(f"  generated {raw.name}: {stats['bytes'] / 1e6:.0f} MB, {stats['events']} events "
              f"in {time.perf_counter() - t:.1f} s", flush=True)
    if zstd:
        from app.log.source.zstdframes import encode_session
        lines = raw.read_bytes().split(b"\n", 1)
        # re-frame the raw file in batches of ~64 rows (like write-behind batches)
        body = lines[1].split(b"\n")[:-1]
        batches = [b"\n".join(body[i:i + 64]) + b"\n" for i in range(0, len(body), 64)]
        path.write_bytes(encode_session(lines[0] + b"\n", batches))
    return path


def raw_read(path: Path) -> float:
    fd = os.open(path, os.O_RDONLY)
    t = time.perf_counter()
    at = 0
    while True:
        b = os.pread(fd, 8 << 20, at)
        if not b:
            break
        at += len(b)
    os.close(fd)
    return time.perf_counter() - t


def child_measure(path: str, what: str) -> dict:
    """Run one measurement in a fresh process (fair RSS, cold Python objects)."""
    code = f"""
import json, resource, sys, time
sys.path.insert(0, {str(REPO)!r})
from app.store.faces import open_reader
t0 = time.perf_counter()
r = open_reader({path!r})
out = {{}}
if {what!r} in ("tail", "all"):
    t = time.perf_counter(); p = r.tail_page(50); out["tail_s"] = time.perf_counter() - t
    out["tail_from_open_s"] = time.perf_counter() - t0
    out["tail_events"] = len(p.items)
if {what!r} in ("index", "all"):
    t = time.perf_counter(); idx = r.build_index(); out["index_s"] = time.perf_counter() - t
    out["segments"] = len(idx); out["events"] = idx.events; out["index_bytes"] = idx.memory_bytes()
out["maxrss_index_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
if {what!r} == "all":
    from app.log.query.analysis import inspect
    t = time.perf_counter(); info = inspect(r); out["inspect_s"] = time.perf_counter() - t
    out["turns"] = info["turns"]; out["messages"] = info["messages"]; out["attempts"] = info["attempts"]
out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if res.returncode:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout)


def fork_vs_copy(path: Path) -> dict:
    from app.log.index.reader import LogReader
    from app.store.forking import fork
    d = Path(tempfile.mkdtemp(dir=path.parent))
    try:
        t = time.perf_counter()
        shutil.copyfile(path, d / "copy")
        fd = os.open(d / "copy", os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        copy_s = time.perf_counter() - t
        os.unlink(d / "copy")
        src = d / path.name
        os.link(path, src)
        r = LogReader.open(str(src))
        t = time.perf_counter()
        res = fork(r, None, out_store=str(d / "out"))
        fork_s = time.perf_counter() - t
        t = time.perf_counter()
        fork(r, None, out_store=str(d / "out2"))        # index already built (the app's case)
        warm_s = time.perf_counter() - t
        return {"copy_s": copy_s, "fork_s": fork_s, "fork_warm_s": warm_s, "copied_mb": res["bytesCopied"] / 1e6}
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10MB,100MB,1GB")
    ap.add_argument("--data", default=str(REPO / "bench" / "data"))
    ap.add_argument("--zstd", action="store_true", help="also measure zstd-framed copies")
    ap.add_argument("--no-fork", action="store_true")
    ap.add_argument("--v4", action="store_true", help="also measure the same sessions written in format v4")
    args = ap.parse_args()
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    data = Path(args.data)
    rows = []
    for s in sizes:
        variants = [("jsonl", data / f"session-{s}.jsonl")]
        if args.zstd:
            variants.append(("zstd", data / f"session-{s}.jsonl.zstd"))
        if args.v4:
            variants.append(("v4", data / f"session-{s}.v4.jsonl"))
            if args.zstd:
                variants.append(("v4z", data / f"session-{s}.v4.jsonl.zstd"))
        for fmt, p in variants:
            ensure(p, parse_size(s), fmt in ("zstd", "v4z"), 4 if fmt.startswith("v4") else 0)
            size = p.stat().st_size
            raw_read(p)                                    # warm the page cache
            rr = min(raw_read(p) for _ in range(3))
            m = child_measure(str(p), "all")
            tail = min(child_measure(str(p), "tail")["tail_from_open_s"] for _ in range(3))
            row = {"size": s, "format": fmt, "bytes": size, "raw_MBps": size / rr / 1e6,
                   "index_MBps": size / m["index_s"] / 1e6, "index_ratio": rr / m["index_s"],
                   "tail_ms": tail * 1000, "inspect_MBps": size / m["inspect_s"] / 1e6,
                   "maxrss_mb": m["maxrss_mb"], "maxrss_index_mb": m["maxrss_index_mb"], "events": m["events"], "segments": m["segments"],
                   "index_kb": m["index_bytes"] / 1024}
            if not args.no_fork and fmt == "jsonl":
                f = fork_vs_copy(p)
                row.update(fork_s=f["fork_s"], fork_warm_s=f["fork_warm_s"], copy_s=f["copy_s"],
                           fork_vs_copy=f["copy_s"] / f["fork_s"], fork_warm_vs_copy=f["copy_s"] / f["fork_warm_s"])
            rows.append(row)
            print(json.dumps(row), flush=True)
    print()
    print(f"{'size':>6} {'fmt':>5} {'raw MB/s':>9} {'index MB/s':>10} {'idx/raw':>8} {'tail ms':>8} "
          f"{'inspect MB/s':>12} {'RSS idx MB':>10} {'RSS all MB':>10} {'copy/fork':>9} {'(indexed)':>9}")
    for r in rows:
        print(f"{r['size']:>6} {r['format']:>5} {r['raw_MBps']:9.0f} {r['index_MBps']:10.0f} {r['index_ratio']:8.2f} "
              f"{r['tail_ms']:8.1f} {r['inspect_MBps']:12.1f} {r['maxrss_index_mb']:10.0f} {r['maxrss_mb']:10.0f} "
              f"{r.get('fork_vs_copy', float('nan')):9.2f} {r.get('fork_warm_vs_copy', float('nan')):9.2f}")
    for r in rows:
        if r["format"].startswith("v4"):
            ref = next(x for x in rows if x["size"] == r["size"] and x["format"] == ("jsonl" if r["format"] == "v4"
                                                                                     else "zstd"))
            print(f"tail page {r['size']} {r['format']}: {r['tail_ms']:.1f} ms vs v0 {ref['format']} "
                  f"{ref['tail_ms']:.1f} ms = {r['tail_ms'] / ref['tail_ms']:.2f}x (same bytes: "
                  f"{r['bytes'] / ref['bytes']:.2f}x)")
    j = [r for r in rows if r["format"] == "jsonl"]
    if len(j) >= 2:
        print(f"tail page time, largest/smallest: {j[-1]['tail_ms'] / j[0]['tail_ms']:.2f}x "
              f"for {j[-1]['bytes'] / j[0]['bytes']:.0f}x the bytes (target: nearly flat, < 150 ms)")


if __name__ == "__main__":
    main()
