"""What the window's Find results dock waits for (issue 29): the find child's work for a word, this checkout against
another (``--old``), in the same run, interleaved.

    python bench/find_dock_bench.py [--runs 3] [--old /work/main] [--word the] FILE

Each run is a fresh process running ``app.store.scan_child.scan("find", ...)`` as the window's child does (the
window's hit limit, every message pickled as the child writes it to its pipe).  Printed (medians): the first hits
message, the last one (the count and the list complete), the child's CPU, and for this checkout the time to make
the snippets of the first 60 hits as the dock does when it shows them (``app.ui.find_hits.make_snippets``, a
fresh reader).  ``rg -c -F`` of the word over the file is the reference.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

_CHILD = r"""
import json, pickle, sys, time
sys.path.insert(0, sys.argv[1])
from app.log.query.find import FindOptions
from app.store.scan_child import scan
from app.ui.find_actions import HIT_LIMIT
path, word = sys.argv[2], sys.argv[3]
t, c = time.perf_counter(), time.process_time()
marks = {"first": None, "last": None, "hits": 0}
kept = []
def send(msg):
    pickle.dumps(msg, pickle.HIGHEST_PROTOCOL)
    if msg[0] == "hits":
        now = time.perf_counter() - t
        if marks["first"] is None:
            marks["first"] = now
        marks["last"] = now
        marks["hits"] += len(msg[1])
        if len(kept) < 60:
            kept.extend(pickle.loads(pickle.dumps(msg[1]))[:60 - len(kept)])
scan("find", path, None, {"opts": FindOptions(word), "limit": HIT_LIMIT}, send)
out = {**marks, "wall": time.perf_counter() - t, "cpu": time.process_time() - c, "snippets": None}
try:
    from app.ui.find_hits import make_snippets
except ImportError:
    pass
else:
    t = time.perf_counter()
    made = make_snippets(path, None, FindOptions(word), [(i, h) for i, h in enumerate(kept) if h.row is not None])
    out["snippets"] = time.perf_counter() - t
    out["made"] = len(made)
print(json.dumps(out))
"""


def run(code: str, path: str, word: str) -> dict:
    got = subprocess.run([sys.executable, "-c", _CHILD, code, path, word], capture_output=True, text=True, cwd=code)
    if got.returncode:
        raise RuntimeError(got.stderr[-2000:])
    return json.loads(got.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--old", default=None)
    ap.add_argument("--word", default="the")
    a = ap.parse_args()
    ways = [("new", str(REPO))] + ([("old", a.old)] if a.old else [])
    got: dict[str, list[dict]] = {w: [] for w, _ in ways}
    rgs = []
    for _ in range(a.runs):
        for w, code in ways:
            got[w].append(run(code, a.file, a.word))
        t0 = os.times()
        subprocess.run(["rg", "-c", "-F", a.word, a.file], stdout=subprocess.DEVNULL, check=False)
        t1 = os.times()
        rgs.append(t1.elapsed - t0.elapsed)
    print(f"{Path(a.file).name}, {a.word!r}, runs {a.runs}, load {os.getloadavg()[0]:.1f}; rg -c {statistics.median(rgs):.3f} s")
    for w, _ in ways:
        xs = got[w]

        def m(k: str) -> float:
            v = [x[k] for x in xs if x.get(k) is not None]
            return statistics.median(v) if v else float("nan")
        print(f"  {w}: {xs[0]['hits']:,} hits; first hits {m('first'):.3f} s, last hits {m('last'):.2f} s, "
              f"child wall {m('wall'):.2f} s, CPU {m('cpu'):.2f} s; 60 shown snippets made in {m('snippets'):.3f} s")


if __name__ == "__main__":
    main()
