"""The message Markdown reader (app/ui/history/markdown.py) beside markdown-it-py (CommonMark with GFM
tables and strikethrough), parsing the same texts in the same run: every text of the shared fixtures
and the conformance sample, repeated.  Prints the median time of each over --runs and the ratio
(markdown-it / ours; the target is at least 3).  markdown-it-py is a dev dependency only.

    .venv/bin/python bench/markdown_bench.py [--runs 7] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import markdown_it  # noqa: E402

from app.ui.history.markdown import parse  # noqa: E402
from tests.test_markdown_conformance import SAMPLE, _fixture_texts  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    texts = (_fixture_texts() + SAMPLE) * a.repeat
    md = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])
    size = sum(len(t) for t in texts)
    ours, ref = [], []
    for _ in range(a.runs):
        t0 = time.perf_counter()
        for t in texts:
            parse(t)
        ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        for t in texts:
            md.parse(t)
        ref.append(time.perf_counter() - t0)
    o, r = statistics.median(ours), statistics.median(ref)
    print(f"{len(texts)} texts, {size / 1e6:.2f} M characters, median of {a.runs} runs")
    print(f"markdown-it-py   {r * 1000:8.1f} ms  (reference)")
    print(f"session lens     {o * 1000:8.1f} ms")
    print(f"ratio            {r / o:8.2f}x faster (target >= 3x)")


if __name__ == "__main__":
    main()
