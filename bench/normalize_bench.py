#!/usr/bin/env python3
"""Issue 27 item 1: what deriving a v3 log as today's dsh does (migrated to the v4 shape) costs next to
the writer-era shape, on a generated v3 log (default 100 MB).

    python bench/normalize_bench.py [--size 100MB] [--runs 3] [--out PATH]

The v3 log is the synthetic v4 session (app/tools/synth.py) written back in the v3 shape: header version 3,
tool results as ``role: "user"`` messages wrapping one ``tool-result`` block, the system message's source
``{kind: "plugin", plugin: "@deepseek-ai/dsh-system-prompt"}``.  Measured (medians): ``messages`` of the
whole log and the exact request at the last dispatch, each as written (today's cost before issue 27) and
normalized (the default now).  Prints both, the ratio, and the target (<= 1.2x).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.log.index.reader import LogReader  # noqa: E402
from app.log.query import analysis  # noqa: E402
from app.tools.synth import SessionSynth, parse_size, write_jsonl  # noqa: E402


def to_v3(row: dict) -> dict:
    t, d = row.get("type"), row.get("data")
    if t == "tool/result" and isinstance(d, dict) and isinstance(d.get("message"), dict):
        m = d["message"]
        wrap = {"type": "tool-result", "toolCallId": m.get("toolCallId"), "content": m.get("content")}
        if "isError" in m:
            wrap["isError"] = m["isError"]
        d = dict(d, message={"id": m.get("id"), "role": "user", "source": m.get("source"), "content": [wrap]})
    elif t == "system/message" and isinstance(d, dict) and isinstance(d.get("message"), dict):
        d = dict(d, message=dict(d["message"], source={"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}))
    return dict(row, data=d)


def make(out: Path, size: str) -> None:
    tmp = out.with_name("v4-source.jsonl")
    write_jsonl(str(tmp), SessionSynth(11, version=4), target_bytes=parse_size(size))
    with open(tmp, "rb") as f, open(out, "wb") as g:
        hdr = json.loads(f.readline())
        g.write(json.dumps(dict(hdr, version=3), separators=(",", ":")).encode() + b"\n")
        for line in f:
            g.write(json.dumps(to_v3(json.loads(line)), separators=(",", ":")).encode() + b"\n")
    tmp.unlink()


def median(fn, runs: int) -> float:
    ts = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="100MB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    out = Path(a.out) if a.out else REPO / "bench" / "data" / f"v3-{a.size.lower()}" / "session.v3.jsonl"
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        make(out, a.size)
    r = LogReader.open(str(out))
    last = [b for b, _ in analysis.dispatches(r.events())][-1] if out.stat().st_size < 2 << 20 else None
    if last is None:                                  # (the last assistant/message: a settlement, v2+)
        last = max(e.seq for e in r.iter_events() if e.type == "assistant/message")
    print(f"log: {out} ({out.stat().st_size / 1e6:.0f} MB), last dispatch at seq {last}, {a.runs} runs, medians")
    for name, fn in (("messages", lambda w: analysis.messages(LogReader.open(str(out)), as_written=w)),
                     ("request at the last dispatch",
                      lambda w: analysis.request_at(LogReader.open(str(out)), last, as_written=w))):
        ref = median(lambda: fn(True), a.runs)
        new = median(lambda: fn(False), a.runs)
        print(f"{name:>30}: as written {ref:.3f} s, normalized {new:.3f} s, ratio {new / ref:.3f} (target <= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
