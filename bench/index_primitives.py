#!/usr/bin/env python3
"""The fastest standard-library primitives over a log's bytes, beside a warm ``cat`` (issue 15, item 2).

    python bench/index_primitives.py FILE [--runs 3]

Why a seq index in pure Python stays short of 0.35x a warm ``cat``: every primitive that touches each byte
or each row from Python runs at 0.7-2.5 GB/s on one core, while ``cat`` moves 5-8 GB/s.  Prints, per
primitive, the best of ``--runs`` CPU times (``time.process_time``) and GB/s; ``cat`` by ``getrusage``.
"""
from __future__ import annotations

import argparse
import io
import re
import resource
import subprocess
import time
from itertools import chain
from operator import itemgetter


def best(f, runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.process_time()
        f()
        out.append(time.process_time() - t)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    with open(a.file, "rb") as f:
        data = f.read()
    subprocess.run(["cat", a.file], stdout=subprocess.DEVNULL, check=True)           # warm
    cat = []
    for _ in range(a.runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(["cat", a.file], stdout=subprocess.DEVNULL, check=True)
        w = time.perf_counter() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cat.append((w, (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)))
    gb = len(data) / 1e9
    w, c = min(cat)
    print(f"{'warm cat (wall, with process start)':46} {w:8.4f} s {gb / w:6.2f} GB/s   CPU {c:.4f} s")
    heads = itemgetter(slice(0, 64))
    lines = io.BytesIO(data).readlines()
    rows = re.compile(rb'\n\{"type":"[^"\\\n]*","seq0?":(\d+)')
    head_re = re.compile(rb'\x00\{"type":"([^"\\\n\x00]*)","seq(0?)":(0|[1-9][0-9]*)[,}]')
    joined = b"\x00".join(chain((b"",), map(heads, lines)))
    for name, f in (("bytes.find(b'\\x00') (memchr, one call)", lambda: data.find(b"\x00")),
                    ("bytes.count(b'\\n')", lambda: data.count(b"\n")),
                    ("BytesIO(data).readlines()", lambda: io.BytesIO(data).readlines()),
                    ("re findall: every row's seq over the buffer", lambda: rows.findall(data)),
                    ("bytes.split(row separator)", lambda: data.split(b'}\n{"type":"')),
                    ("heads of every line, joined", lambda: b"\x00".join(chain((b"",), map(heads, lines)))),
                    ("re findall over the joined heads", lambda: head_re.findall(joined))):
        t = best(f, a.runs)
        print(f"{name:46} {t:8.4f} s {gb / t:6.2f} GB/s")


if __name__ == "__main__":
    main()
