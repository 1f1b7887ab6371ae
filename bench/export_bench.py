"""Export speed and memory: every format, with and without redaction, on a generated log, beside
``cat FILE > /dev/null`` of the same file measured in the same run (the ratio: export time / cat time).

    python bench/export_bench.py [--size MB] [--runs N] [--formats raw,logical,...] [--log PATH]

Each export runs in a child process of its own (its peak RSS is the child's ``ru_maxrss``), writing to
a temporary folder on the same filesystem as the log (the publish fsync included: an export is done
when its file is durable).  MB/s are of the log's bytes; CPU MB/s counts the user+system time of the export
in the child (from opening the log to the published file: the interpreter's start-up and imports left out;
a better guide than wall time on a loaded machine).  Medians of ``--runs``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

_CHILD = r"""
import json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
from app.store.faces import open_reader
from app.store.export import export
path, fmt, red, out = sys.argv[2], sys.argv[3], sys.argv[4] == "1", sys.argv[5]
ru0 = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
r = open_reader(path)
export(r, fmt, out, redact=red)
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
cpu = ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime      # (the export's: start-up and imports left out)
print(json.dumps({"wall": wall, "cpu": cpu, "rss": ru.ru_maxrss * 1024,
                  "out": os.path.getsize(out) if os.path.isfile(out) else 0}))
"""


def _cat(path: str) -> float:
    t = time.perf_counter()
    with open(os.devnull, "wb") as null:
        subprocess.run(["cat", path], stdout=null, check=True)
    return time.perf_counter() - t


def _one(path: str, fmt: str, redact: bool, work: str, repo: Path = REPO) -> dict:
    out = os.path.join(work, f"out-{fmt}-{int(redact)}.{fmt}")
    for f in (out, out + ".sha256", out + ".redaction.json"):
        if os.path.exists(f):
            os.unlink(f)
    got = subprocess.run([sys.executable, "-c", _CHILD, str(repo), path, fmt, "1" if redact else "0", out],
                         capture_output=True, text=True, check=True)
    res = json.loads(got.stdout.strip().splitlines()[-1])
    for f in (out, out + ".sha256", out + ".redaction.json"):
        if os.path.exists(f):
            os.unlink(f)
    return res


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=100, help="MB of generated log (default 100)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--formats", default="raw,logical,markdown,html,zip")
    ap.add_argument("--log", help="an existing log instead of a generated one")
    ap.add_argument("--baseline", help="another checkout (e.g. the main branch) run the same way, its runs taken turn "
                    "about with this checkout's, for its figures")
    a = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="export-bench-")
    path = a.log
    if not path:
        from app.tools.synth import SessionSynth, write_jsonl
        path = os.path.join(work, "session.jsonl")
        write_jsonl(path, SessionSynth(seed=7), target_bytes=a.size << 20)
    size = os.path.getsize(path)
    mb = size / 1e6
    _cat(path)                                          # warm the page cache for both sides
    print(f"log {path}: {mb:.1f} MB; medians of {a.runs} runs; load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")
    print(f"{'format':9} {'redact':6} {'MB/s':>7} {'cpu MB/s':>9} {'peak RSS':>9} {'out MB':>7} "
          f"{'cat MB/s':>9} {'ratio':>7}" + ("   baseline: MB/s, cpu MB/s, peak RSS; cpu new/old" if a.baseline else "")
          + "   load")
    for fmt in a.formats.split(","):
        for redact in (False, True):
            walls, cpus, rss, cats, outs = [], [], [], [], []
            b = []
            for _ in range(a.runs):           # (with a baseline: its runs taken turn about with these, same load)
                cats.append(_cat(path))
                r = _one(path, fmt, redact, work)
                walls.append(r["wall"])
                cpus.append(r["cpu"])
                rss.append(r["rss"])
                outs.append(r["out"])
                if a.baseline:
                    b.append(_one(path, fmt, redact, work, Path(a.baseline)))
            w, c, k = statistics.median(walls), statistics.median(cpus), statistics.median(cats)
            base = ""
            if a.baseline:
                bw, bc = statistics.median(x["wall"] for x in b), statistics.median(x["cpu"] for x in b)
                base = (f"   {mb / bw:7.1f} {mb / bc:9.1f} {max(x['rss'] for x in b) / 2**20:8.0f}M"
                        f" {bc / c:5.2f}x")
            print(f"{fmt:9} {str(redact):6} {mb / w:7.1f} {mb / c:9.1f} {max(rss) / 2**20:8.0f}M "
                  f"{statistics.median(outs) / 1e6:7.1f} {mb / k:9.0f} {w / k:6.0f}x" + base
                  + f"   {os.getloadavg()[0]:.1f}", flush=True)
    os.unlink(path) if not a.log else None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
