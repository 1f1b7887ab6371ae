"""Fork cost by format: this tree's fork against a plain copy (the reference, same run) and,
optionally, against another checkout's fork of the same v0 files (``--ref-tree``).

Since issue 12 a fork reads the seed forward (legacy rows are stored converted, v2+ children
get envelopes restored), so zstd seeds are decompressed once; this prints what that costs.
Medians of ``--runs`` runs; every fork starts from a fresh reader (index built inside).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from run import ensure, parse_size  # noqa: E402

FORK_ONCE = """
import json, sys, time, tempfile, shutil
sys.path.insert(0, sys.argv[1])
from app.log.index.reader import LogReader
from app.store.forking import fork
src, out = sys.argv[2], sys.argv[3]
r = LogReader.open(src)
t = time.perf_counter()
res = fork(r, None, out_store=out)
print(json.dumps({"s": time.perf_counter() - t, "bytes": res.get("bytesCopied")}))
"""


def fork_s(tree: Path, src: Path, work: Path) -> float:
    out = Path(tempfile.mkdtemp(dir=work))
    try:
        res = subprocess.run([sys.executable, "-c", FORK_ONCE, str(tree), str(src), str(out)], capture_output=True,
                             text=True, cwd=str(tree))
        if res.returncode:
            raise SystemExit(res.stderr)
        return json.loads(res.stdout)["s"]
    finally:
        shutil.rmtree(out, ignore_errors=True)


def copy_s(src: Path, work: Path) -> float:
    t = time.perf_counter()
    dst = work / "copy"
    shutil.copyfile(src, dst)
    fd = os.open(dst, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    s = time.perf_counter() - t
    dst.unlink()
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", default="100MB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", default=str(REPO / "bench" / "data"))
    ap.add_argument("--ref-tree", help="another checkout (e.g. the main branch) whose fork is measured too (v0 only)")
    args = ap.parse_args()
    data = Path(args.data)
    size = parse_size(args.size)
    rows = []
    for fmt, name, z, v in (("v0", f"session-{args.size}.jsonl", False, 0),
                            ("v0z", f"session-{args.size}.jsonl.zstd", True, 0),
                            ("v4", f"session-{args.size}.v4.jsonl", False, 4),
                            ("v4z", f"session-{args.size}.v4.jsonl.zstd", True, 4)):
        p = ensure(data / name, size, z, v)
        work = Path(tempfile.mkdtemp(dir=data))
        try:
            src = work / p.name
            os.link(p, src)
            cp = statistics.median(copy_s(p, work) for _ in range(args.runs))
            mine = statistics.median(fork_s(REPO, src, work) for _ in range(args.runs))
            ref = None
            if args.ref_tree and v == 0:
                ref = statistics.median(fork_s(Path(args.ref_tree), src, work) for _ in range(args.runs))
            row = {"format": fmt, "MB": round(p.stat().st_size / 1e6), "copy_s": round(cp, 3), "fork_s": round(mine, 3),
                   "fork_over_copy": round(mine / cp, 2)}
            if ref is not None:
                row.update(ref_fork_s=round(ref, 3), fork_over_ref=round(mine / ref, 2))
            rows.append(row)
            print(json.dumps(row), flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
