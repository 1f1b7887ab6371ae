#!/usr/bin/env python3
"""Issue 27 item 1: what deriving a v3 (or v0) log as today's dsh does (migrated to the v4 shape) costs next
to the writer-era shape, on a generated v3 (or v0) log (default 100 MB).

    python bench/normalize_bench.py [--version 3|0] [--size 100MB] [--runs 3] [--out PATH]

``--version 0``: the synthetic v0 session (app/tools/synth.py, packed chunk rows, its user message inside the
step, so dsh's chain accepts it), derived through the chain (app/log/fold/v0chain.py: the v0->v1 rewrites,
the v2->v3 head, the v3->v4 shape; the verdict's pass included, as each run opens a fresh reader); also
``messages`` as the CLI streams it (app/log/format/lazyrows.py: as written it keeps only the nodes' places,
normalized it folds with the events kept, as v2+ logs do).

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


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def medians(fn, runs: int) -> tuple[float, float]:
    """(as written, normalized) medians, the two runs of each round back to back (a shared machine's load
    changes between rounds, not within one)."""
    ref, new = [], []
    for _ in range(runs):
        ref.append(timed(lambda: fn(True)))
        new.append(timed(lambda: fn(False)))
    return statistics.median(ref), statistics.median(new)


def _cli(path: Path, as_written: bool) -> None:
    """``session-lens messages PATH --json [--as-written]``, its output dropped (it pays the verdict either way)."""
    import contextlib
    import io
    from app.cli.main import main as cli
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        cli(["messages", str(path), "--json"] + (["--as-written"] if as_written else []))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="100MB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--version", type=int, choices=(0, 3), default=3)
    a = ap.parse_args(argv)
    name = "session.v3.jsonl" if a.version == 3 else "session.jsonl"
    out = Path(a.out) if a.out else REPO / "bench" / "data" / f"v{a.version}-{a.size.lower()}" / name
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        if a.version == 3:
            make(out, a.size)
        else:
            write_jsonl(str(out), SessionSynth(11, version=0), target_bytes=parse_size(a.size))
    r = LogReader.open(str(out))
    if a.version == 0:
        from app.log.index.verdict import migration_refuses
        assert not migration_refuses(r), "the generated v0 log must be one dsh's chain accepts"
    last = [b for b, _ in analysis.dispatches(r.events())][-1] if out.stat().st_size < 2 << 20 else None
    if last is None:                                  # (the last assistant/message: a settlement, v2+)
        last = max(e.seq for e in r.iter_events() if e.type == "assistant/message")
    print(f"log: {out} ({out.stat().st_size / 1e6:.0f} MB), last dispatch at seq {last}, {a.runs} runs, medians")
    from app.log.format.lazyrows import iter_messages
    from app.log.index.verdict import dsh_verdict

    def opened() -> LogReader:
        """A fresh reader with dsh's verdict taken, as every face takes it (its refusal line; v0 normalized
        reads it to know whether the chain accepts the log; its cost is printed apart)."""
        r = LogReader.open(str(out))
        dsh_verdict(r)
        return r
    cases = [("messages", lambda w: analysis.messages(opened(), as_written=w)),
             ("request at the last dispatch", lambda w: analysis.request_at(opened(), last, as_written=w))]
    if a.version == 0:
        cases.append(("messages (CLI stream)", lambda w: sum(1 for _m in iter_messages(opened(), as_written=w))))
        cases.append(("messages command (--json)", lambda w: _cli(out, w)))
        vt = statistics.median(timed(lambda: dsh_verdict(LogReader.open(str(out)))) for _ in range(a.runs))
        print(f"{'the verdict pass alone':>30}: {vt:.3f} s (in both columns below)")
    for name, fn in cases:
        ref, new = medians(fn, a.runs)
        print(f"{name:>30}: as written {ref:.3f} s, normalized {new:.3f} s, ratio {new / ref:.3f} (target <= 1.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
