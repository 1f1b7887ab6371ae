"""*Errors only* on a long log (issue 29: <= 300 ms on the whole log): the window's read of only the index
segments that hold errors (:func:`app.ui.history.sparse.sparse_page`, from the outline's error list) beside
what it did before, in the same run: older pages read from the tail down to the oldest error.

    python bench/errors_only_bench.py [--size MB] [--runs N] [--log PATH]

A generated v0 log with few errors far apart (or ``--log``); the seq index and the outline are built first
(the background pass: not timed here, see bench/ahead_bench.py).  Wall seconds, medians of ``--runs``."""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.log.query.outline import build_outline  # noqa: E402
from app.store.faces import open_reader  # noqa: E402
from app.tools.synth import SessionSynth, write_jsonl  # noqa: E402
from app.ui.history.sparse import error_groups, sparse_page  # noqa: E402

PAGE = 50


def _pages_down(path: str, oldest: int) -> int:
    r = open_reader(path)
    r.build_index()
    p = r.tail_page(PAGE)
    n = 1
    while p.has_more and (p.base_seq is None or p.base_seq > oldest):
        p = r.page_before(p, PAGE)
        n += 1
    return n


def _sparse(path: str, seqs: list[int], where) -> float:
    r = open_reader(path)
    r.build_index()
    r.tail_page(PAGE)
    t = time.perf_counter()
    sparse_page(r, seqs, where=where)
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=float, default=30.0, help="MB of generated log (default 30)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--log")
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = a.log or os.path.join(tmp, "session.jsonl")
        if not a.log:
            write_jsonl(path, SessionSynth(43, p_tool_error=0.004, p_retry=0.0, p_turn_error=0.004, p_abort=0.0),
                        target_bytes=int(a.size * 1e6))
        r = open_reader(path)
        idx = r.build_index()
        ol = build_outline(r)
        seqs = sorted(s for t in ol.turns for s in t.error_seqs)
        print(f"log {os.path.getsize(path) / 1e6:.1f} MB, {ol.events:,} events, {len(seqs)} errors in "
              f"{len(error_groups(idx, seqs))} index segments (of {len(idx.seg_pos)}); "
              f"load {os.getloadavg()[0]:.1f}; medians of {a.runs} (wall s; the two reads after a fresh "
              "reader's seq index and tail page)")
        if not seqs:
            return 1
        where = {s: w for t in ol.turns for s, w in zip(t.error_seqs, t.error_rows)}
        rows, sp, pd = [], [], []
        pages = 0
        for _ in range(a.runs):
            rows.append(_sparse(path, seqs, where))
            sp.append(_sparse(path, seqs, None))
            t = time.perf_counter()
            pages = _pages_down(path, seqs[0])
            pd.append(time.perf_counter() - t)
        w, s, p = statistics.median(rows), statistics.median(sp), statistics.median(pd)
        print(f"the error rows alone (the outline says where)  {w:7.3f} s   (target <= 0.3 s)")
        print(f"their index segments (an older outline)          {s:7.3f} s")
        print(f"before: pages down ({pages} pages of {PAGE} messages, seq index included) {p:7.3f} s   "
              f"ratio {p / w:.0f}x the rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
