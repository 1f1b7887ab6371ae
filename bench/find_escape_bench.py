#!/usr/bin/env python3
"""A whole-log find for a quoted word (a character JSON escapes) that misses, and one that hits,
beside the same for a plain word, same run (issue 27 item 7: a miss costs at most 1.5x a hit).

    python bench/find_escape_bench.py [--size 150MB] [--runs 3] [--path FILE]

Generates a synthetic log (app/tools/synth.py) once at /tmp (kept for later runs), appends a user
message holding ``say "wombatfind"`` (stored ``say \\"wombatfind\\"``) and a tool call whose
arguments hold it (stored twice escaped), then times ``find_all`` (caseless, as the find bar
searches) for each query, alternating, and prints medians and the miss/hit ratios.
The default size is small for a shared 2-core machine: the issue's figure is on 1 GB
(``--size 1GB``); the ratio, not the absolute time, is the measure.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.log.index.reader import LogReader  # noqa: E402
from app.log.query.find import FindOptions, FindStats, build_prefilter, find  # noqa: E402
from app.log.source.sources import RawJsonlSource  # noqa: E402
from app.tools.synth import SessionSynth, parse_size, write_jsonl  # noqa: E402

# "qz" between quotes: its pieces between the quotes are 2 characters, too short for a needle of
# their own (the case the issue measured: such a query decoded every row, a miss cost 13x a hit)
QUERIES = {"quoted miss": '"qj"', "quoted hit": '"qz"',
           "long quoted miss": 'say "wombatmiss"', "long quoted hit": 'say "wombatfind"',
           "plain miss": "wombatmiss", "plain hit": "wombatfind"}


def _log(path: Path, size: int) -> Path:
    if path.exists():
        return path
    tmp = path.with_suffix(".part")
    write_jsonl(str(tmp), SessionSynth(seed=11), target_bytes=size)
    last = json.loads(tmp.read_bytes().rsplit(b"\n", 2)[-2])
    seq = last["seq"]
    rows = [{"type": "turn/start", "seq": seq + 1, "time": 1, "data": {"turn": 100000}},
            {"type": "user/message", "seq": seq + 2, "time": 1,
             "data": {"turn": 100000, "id": "ub", "role": "user", "source": {"kind": "user"},
                      "content": [{"type": "text", "text": 'please say "wombatfind" twice, and "qz" once'}]}},
            {"type": "tool/call", "seq": seq + 3, "time": 1,
             "data": {"turn": 100000, "step": 1, "callId": "cb", "name": "bash",
                      "arguments": json.dumps({"command": 'echo say "wombatfind"'})}}]
    with open(tmp, "ab") as f:
        for r in rows:
            f.write(json.dumps(r, separators=(",", ":")).encode() + b"\n")
    os.replace(tmp, path)
    return path


def _time(path: Path, q: str) -> tuple[float, FindStats]:
    st = FindStats()
    t = time.perf_counter()
    hits = list(find(LogReader(RawJsonlSource(str(path))), FindOptions(q), stats=st))
    dt = time.perf_counter() - t
    assert st.complete and len(hits) == st.hits
    return dt, st


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="150MB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--path", default=None)
    a = ap.parse_args(argv)
    size = parse_size(a.size) or 150 << 20
    path = _log(Path(a.path or f"/tmp/findcover-escape2-{a.size}.jsonl"), size)
    print(f"log {path} ({path.stat().st_size / 1e6:.0f} MB), {a.runs} runs each, alternating")
    for name, q in QUERIES.items():
        pre = build_prefilter(FindOptions(q))
        print(f"  {name:16} {q!r:22} needles {None if pre is None else pre.needles}")
    times: dict[str, list[float]] = {k: [] for k in QUERIES}
    stats: dict[str, FindStats] = {}
    for _ in range(a.runs):
        for name, q in QUERIES.items():
            dt, stats[name] = _time(path, q)
            times[name].append(dt)
    med = {k: statistics.median(v) for k, v in times.items()}
    for k, v in med.items():
        s = stats[k]
        print(f"  {k:16} median {v * 1000:8.0f} ms   hits {s.hits}  rows decoded {s.rows_decoded}  "
              f"windows skipped {s.segments_skipped}/{s.segments}")
    # before: a quoted query of short pieces had no prefilter (every row decoded); one run
    import app.log.query.find as find_mod
    keep = find_mod.build_prefilter
    find_mod.build_prefilter = lambda opts: None
    try:
        before, bst = _time(path, QUERIES["quoted miss"])
    finally:
        find_mod.build_prefilter = keep
    print(f"  quoted miss without the prefilter (as before): {before * 1000:.0f} ms (1 run, rows decoded "
          f"{bst.rows_decoded}) = {before / med['quoted miss']:.1f}x the quoted miss now, "
          f"{before / med['quoted hit']:.1f}x the hit")
    lr = med["long quoted miss"] / med["long quoted hit"]
    print(f"long quoted: miss/hit {lr:.2f}x")
    qr = med["quoted miss"] / med["quoted hit"]
    pr = med["plain miss"] / med["plain hit"]
    print(f"quoted: miss/hit {qr:.2f}x (target <= 1.5x)   plain (reference): miss/hit {pr:.2f}x   "
          f"quoted miss / plain miss {med['quoted miss'] / med['plain miss']:.2f}x")
    return 0 if qr <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())
