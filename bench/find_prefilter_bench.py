"""Whole-log find's byte prefilter alone (issue 29 item 4): the candidate rows of each window of a log, found by the
prefilter's passes (a pass per needle, Prefilter.rows_of off) and by one pass (rowscan_c.rows_any where rows_of
takes it), alternating, in one process on the same windows held in memory; CPU seconds per GB, medians of
``--runs``, the same rows checked.

    PYTHONPATH=. python bench/find_prefilter_bench.py --file /work/big/sl-1g/session-1000MB.v4.jsonl --mb 200
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

from app.log.query.find import FindOptions, build_prefilter, gated
from app.log.query.find_anyrows import AnyRows
from app.log.query.find_prefilter import SAME, Prefilter
from app.log.query.find_rows import row_starts

WORDS = ("summarize", "the", "\u2014", '"tests')


def windows(path: str, mb: float, size: int = 1 << 20) -> list[bytearray]:
    with open(path, "rb") as f:
        d = f.read(int(mb * 1e6))
    out, a = [], 0
    while a < len(d):
        e = d.rfind(b"\n", a, a + size) + 1
        e = len(d) if e <= a else e
        out.append(bytearray(d[a:e]))
        a = e
    return out


def rows(wins: list[bytearray], word: str, one_pass: bool) -> tuple[float, list[list[int]]]:
    """(CPU seconds, the candidate rows of each window) of a fresh prefilter of ``word``."""
    pre = build_prefilter(FindOptions(word))
    assert isinstance(pre, Prefilter)
    if not one_pass:
        for p in (pre, *pre.also):
            p._any = p._any_raw = AnyRows((), SAME)      # noqa: SLF001 (the passes alone)
    c = time.process_time()
    got = []
    for w in wins:
        st = row_starts(w, pre.positions(w, len(w), rows=True), len(w))
        for g in pre.also:
            if st:
                st = gated(w, len(w), st, g)
        got.append(st)
    return time.process_time() - c, got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--file", default="/work/big/sl-1g/session-1000MB.v4.jsonl")
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    wins = windows(a.file, a.mb)
    gb = sum(len(w) for w in wins) / 1e9
    print(f"{a.file}: {gb * 1000:.0f} MB in {len(wins)} windows; CPU s/GB, medians of {a.runs}; "
          f"load {os.getloadavg()[0]:.1f}")
    print("| word | one pass | passes (same run) | ratio | rows |\n|---|---|---|---|---|")
    for word in WORDS:
        new, old = [], []
        for _ in range(a.runs):
            tn, rn = rows(wins, word, True)
            to, ro = rows(wins, word, False)
            assert rn == ro, word
            new.append(tn / gb)
            old.append(to / gb)
        n, o = statistics.median(new), statistics.median(old)
        print(f"| {word!r} | {n:.3f} | {o:.3f} | {n / o:.2f} | {sum(len(x) for x in rn)} | "
              f"load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
