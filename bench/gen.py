#!/usr/bin/env python3
"""Generate a realistic synthetic dsh session (app/tools/synth.py).

    python bench/gen.py OUT --size 10MB|100MB|1GB [--seed N] [--zstd] [--turns N]
                        [--batch LO,HI | --batch-ms MS] [--no-pack] [--crash | --torn]

OUT is a file path, or a bare name placed under bench/data/ (git-ignored); it defaults to
bench/data/synth-<size>-s<seed>.jsonl.  --zstd writes ``session.jsonl.zstd`` framing (frame 1 =
the header line, one frame per write batch) when app/log/source/zstdframes.py provides encode_frame;
otherwise the flag is reported and skipped.  Prints the stats as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.tools.synth import SessionSynth, batches, parse_size, write_jsonl  # noqa: E402

DATA = REPO / "bench" / "data"


def _zstd_encoder():
    try:
        from app.log.source import zstdframes
    except Exception:           # module missing or its dependency unavailable
        return None
    return getattr(zstdframes, "encode_frame", None)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", nargs="?", help="output path (a bare name goes under bench/data/)")
    ap.add_argument("--size", default=None, help="target size, e.g. 10MB, 100MB, 1GB (default 10MB)")
    ap.add_argument("--turns", type=int, default=None, help="stop after N turns instead of a size")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--zstd", action="store_true", help="write zstd frames (one per write batch)")
    ap.add_argument("--batch", default="1,64", help="events per write batch LO,HI (default 1,64)")
    ap.add_argument("--batch-ms", type=int, default=None, help="batch by a write-behind window over event times")
    ap.add_argument("--no-pack", action="store_true", help="write every delta as its own row")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--crash", action="store_true", help="end with an open (crashed) turn")
    g.add_argument("--torn", action="store_true", help="end with an open turn and a torn last row")
    a = ap.parse_args(argv)

    size = a.size or (None if a.turns else "10MB")
    target = parse_size(size) if size else None
    lo, _, hi = a.batch.partition(",")
    batch_events = (int(lo), int(hi or lo))
    crash = "torn" if a.torn else bool(a.crash)

    encode_frame = None
    if a.zstd:
        encode_frame = _zstd_encoder()
        if encode_frame is None:
            print("note: app/log/source/zstdframes.py with encode_frame is not available; writing raw JSONL",
                  file=sys.stderr)

    if a.out:
        out = Path(a.out)
        if out.parent == Path("."):
            out = DATA / out
    else:
        out = DATA / f"synth-{(size or f'{a.turns}turns').lower()}-s{a.seed}.jsonl"
    if encode_frame is not None and not out.name.endswith(".zstd"):
        out = out.with_name(out.name + ".zstd")
    out.parent.mkdir(parents=True, exist_ok=True)

    synth = SessionSynth(a.seed)
    t0 = time.perf_counter()
    if encode_frame is None:
        stats = write_jsonl(str(out), synth, target_bytes=target, turns=a.turns, batch_events=batch_events,
                            pack=not a.no_pack, crash=crash, batch_ms=a.batch_ms)
    else:
        stats: dict = {}
        with open(out, "wb") as f:
            pending: list = []
            for lines in batches(synth, target_bytes=target, turns=a.turns, batch_events=batch_events,
                                 pack=not a.no_pack, crash=crash, batch_ms=a.batch_ms, stats=stats):
                plain = b"".join(lines)
                frame = encode_frame(plain)
                if not plain.endswith(b"\n"):          # --torn: the final frame is cut short
                    frame = frame[:max(4, len(frame) // 2)]
                pending.append(frame)
                if len(pending) >= 256:
                    f.write(b"".join(pending))
                    pending.clear()
            f.write(b"".join(pending))
        stats["plainBytes"] = stats.pop("bytes")
        stats["bytes"] = os.path.getsize(out)
    dt = time.perf_counter() - t0
    plain = stats.get("plainBytes", stats["bytes"])
    stats.update(path=str(out), seconds=round(dt, 3), mbPerSecond=round(plain / dt / 1e6, 1))
    print(json.dumps(stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
