"""Whole-log find of a rare, a common, a non-ASCII and a quoted word, this checkout against another (``--old``,
e.g. /work/main) and ``rg -c`` of the same word over the same file, in the same run, interleaved (issue 29).

    python bench/find_text_bench.py [--runs 3] [--old /work/main] FILE...

Each figure is the median of ``--runs`` runs, each in a fresh child (start-up and open_reader outside the
timing), wall and CPU (the child's ``process_time``).  Per word and file:

* ``new`` / ``old``: ``find`` run to its end, every hit counted (what the count needs; snippets not read);
* ``new+snip``: the same, every hit's snippet read as it comes (what a consumer showing every hit pays: the CLI,
  the window's child today: it sends each hit's snippet);
* ``first``: seconds to the first hit;
* ``rg -c -F`` (and its CPU).

The machine is shared and noisy: the load average is printed with each row; compare CPU, within a row.
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

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable
WORDS = {"rare": "summarize", "common": "the", "non-ASCII": "\u2014", "quote": '"tests'}

_CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from app.store.faces import open_reader
from app.log.query.find import FindOptions, find
path, word, snip = sys.argv[2], sys.argv[3], sys.argv[4] == "1"
r = open_reader(path)
t, c = time.perf_counter(), time.process_time()
n, first = 0, None
for h in find(r, FindOptions(word)):
    if first is None:
        first = time.perf_counter() - t
    if snip:
        h.snippet
    n += 1
print(json.dumps({"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "first": first, "hits": n}))
"""


def child(code: str, path: str, word: str, snip: bool) -> dict:
    got = subprocess.run([PY, "-c", _CHILD, code, path, word, "1" if snip else "0"], capture_output=True, text=True,
                         cwd=code)
    if got.returncode:
        raise RuntimeError(got.stderr[-2000:])
    return json.loads(got.stdout.strip().splitlines()[-1])


def rg(path: str, word: str) -> tuple[float, float]:
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(["rg", "-c", "-F", word, path], stdout=subprocess.DEVNULL, check=False)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--old", default=None, help="another checkout to compare with (its native module built)")
    ap.add_argument("--words", default=",".join(WORDS), help="which of: " + ", ".join(WORDS))
    a = ap.parse_args()
    print("| file | word (hits) | new wall / CPU | new+snip wall / CPU | old wall / CPU | rg -c wall / CPU | "
          "new/rg (CPU) | old/rg (CPU) | first hit new / old | load |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in a.files:
        for kind in a.words.split(","):
            word = WORDS[kind]
            got: dict[str, list[dict]] = {"new": [], "snip": [], "old": []}
            rgs = []
            for _ in range(a.runs):                # (interleaved: each run of each way under the same load)
                got["new"].append(child(str(REPO), path, word, False))
                got["snip"].append(child(str(REPO), path, word, True))
                if a.old:
                    got["old"].append(child(a.old, path, word, False))
                rgs.append(rg(path, word))

            def m(way: str, key: str) -> float:
                xs = [x[key] if x[key] is not None else x["wall"] for x in got[way]]
                return statistics.median(xs) if xs else float("nan")
            rw, rc = statistics.median(x[0] for x in rgs), statistics.median(x[1] for x in rgs)
            hits = got["new"][0]["hits"]
            if a.old:
                assert got["old"][0]["hits"] == hits, (got["old"][0]["hits"], hits)
            print(f"| {Path(path).name} | {kind} {word!r} ({hits:,}) | {m('new', 'wall'):.2f} / {m('new', 'cpu'):.2f} | "
                  f"{m('snip', 'wall'):.2f} / {m('snip', 'cpu'):.2f} | {m('old', 'wall'):.2f} / {m('old', 'cpu'):.2f} | "
                  f"{rw:.3f} / {rc:.3f} | {m('new', 'cpu') / max(rc, 1e-3):.1f}x | {m('old', 'cpu') / max(rc, 1e-3):.1f}x | "
                  f"{m('new', 'first'):.3f} / {m('old', 'first'):.3f} | {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
