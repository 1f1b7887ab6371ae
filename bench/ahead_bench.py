"""The work done ahead (issue 29): the one streaming pass (fold checkpoints, surface index, outline) beside
the seq index of the same log (the issue's reference: pass <= 2x the seq index) and beside the three separate
builds it replaces, all measured in the same run on a generated log with compactions (v4 by default, ``--version
0`` for a v0 log with packed chunk rows).

    python bench/ahead_bench.py [--size MB] [--runs N] [--version V] [--log PATH] [--baseline CHECKOUT] [--exact]
                                [--floors]

Each build runs in a child process of its own (the log's page cache warm), which times it from a fresh reader:
the seq index alone, then each build after its own seq index (subtracted).  Wall and CPU (user+system, and each) seconds,
medians of ``--runs``; the load average at the start and the end.  ``--baseline``: the same one pass measured in
another checkout (e.g. the main branch) in the same run, alternating with this one.  Nothing is cached."""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

_CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from app.store.faces import open_reader
path, what = sys.argv[2], sys.argv[3]
def _now():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return time.perf_counter(), ru.ru_utime, ru.ru_stime
def _since(a):
    b = _now()
    return (b[0] - a[0], b[1] - a[1] + b[2] - a[2], b[1] - a[1], b[2] - a[2])
r = open_reader(path)
t0 = _now()
r.build_index()
idx = _since(t0)
t0 = _now()
if what == "one pass":
    from app.log.query.ahead import build_ahead
    build_ahead(r)
elif what == "exact pass":
    from app.log.query.ahead import build_ahead
    build_ahead(r, fast=False)
elif what == "three builds":
    from app.log.fold.checkpoints import build_checkpoints
    from app.log.fold.surface import ScanEnd, SurfaceIndex, extend_index
    from app.log.query.outline import build_outline
    extend_index(r, SurfaceIndex(r.version or 0), None, ScanEnd())
    build_checkpoints(r)
    build_outline(r)
elif what.startswith("floor"):               # (what the pass reads before any row is handled in Python)
    from app.log.index.verdict import ReadPath
    from app.log.query.ahead import AheadPass
    from app.log.query.ahead_scan import ahead_rows
    vp, types = ReadPath(r), AheadPass(r, None, 1 << 22, None, True).types
    for seg in r.source.forward():
        if what != "floor: read":
            vp.segment(seg)
        if what == "floor: +rows in C" and seg.rows is None and not seg.bad:
            ahead_rows(seg.data, types)
elif what == "outline only":
    from app.log.query.outline import build_outline
    build_outline(r)
print(json.dumps({"index": idx, "build": _since(t0)}))
"""


def _child(repo: Path, path: str, what: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(repo), path, what], capture_output=True, text=True,
                         check=True)
    got: dict = json.loads(out.stdout.strip().splitlines()[-1])
    return got


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=float, default=8.0, help="MB of generated log (default 8)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--version", type=int, default=4, help="format of the generated log (default 4)")
    ap.add_argument("--log", help="an existing log instead of a generated one")
    ap.add_argument("--baseline", help="another checkout whose one pass is measured beside this one's")
    ap.add_argument("--only-pass", action="store_true", help="the seq index and the one pass only")
    ap.add_argument("--floors", action="store_true", help="also what the pass costs before its Python per row: "
                                                           "the source's segments alone, with dsh's read-path "
                                                           "check, with the rows classified in C")
    ap.add_argument("--exact", action="store_true", help="also the one pass with every row decoded whole "
                                                          "(build_ahead(fast=False): what the lean reads save)")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = a.log or os.path.join(tmp, f"session.v{a.version}.jsonl")
        if not a.log:
            from app.tools.synth import SessionSynth, write_jsonl
            write_jsonl(path, SessionSynth(seed=3, version=a.version, context_window=24_000),
                        target_bytes=int(a.size * 1e6))
        mb = os.path.getsize(path) / 1e6
        load0 = os.getloadavg()[0]
        whats = ["one pass"] + (["exact pass"] if a.exact else []) + \
            (["floor: read", "floor: +verdict", "floor: +rows in C"] if a.floors else []) + \
            ([] if a.only_pass else ["three builds", "outline only"])
        runs: dict[str, list[dict]] = {w: [] for w in whats}
        base: list[dict] = []
        for _ in range(a.runs):
            for w in whats:
                runs[w].append(_child(REPO, path, w))
            if a.baseline:
                base.append(_child(Path(a.baseline), path, "one pass"))
        idx = [r["index"] for v in runs.values() for r in v]
        iw, ic = statistics.median(x[0] for x in idx), statistics.median(x[1] for x in idx)
        print(f"log {mb:.1f} MB (v{a.version if not a.log else '?'}); load {load0:.1f} -> {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cpus; medians of {a.runs} runs")
        print(f"{'seq index':17s} {iw:7.3f} s wall {ic:7.3f} s cpu  (the reference)")
        rows = [(w, runs[w]) for w in whats] + ([("baseline pass", base)] if base else [])
        for name, rs in rows:
            w = statistics.median(r["build"][0] for r in rs)
            c = statistics.median(r["build"][1] for r in rs)
            u = statistics.median(r["build"][2] for r in rs)
            sy = statistics.median(r["build"][3] for r in rs)
            print(f"{name:17s} {w:7.3f} s wall {c:7.3f} s cpu  = {w / max(iw, 1e-9):6.1f}x the seq index's wall, "
                  f"{c / max(ic, 1e-9):6.1f}x its cpu; {mb / max(c, 1e-9):6.1f} MB/s cpu  (target <= 2x); "
                  f"user {u:.3f} s, system {sy:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
