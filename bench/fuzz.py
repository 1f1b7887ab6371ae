"""Longer fuzz campaign (local): ``make fuzz`` or ``python bench/fuzz.py [JSONL_PER_LOG] [ZSTD_PER_LOG] [SEED] [CACHE_PER_LOG]``.

Three campaigns: mutants of real logs (JSONL, zstd, SQLite pages) through every read face
(tests/test_hardening.py); the caches (mutated and forged ``.idx`` files, hostile cache files: every
answer and every fork equal to the uncached one; tests/test_cache_fuzz.py); and the SQLite and zstd
bombs (a BLOB expanding past the row limit, a TEXT row over it, a frame of tiny rows: bounded memory
and time; tests/test_bombs_bounded.py).  The test suite runs each with few mutants."""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_cache_fuzz import run_cache_campaign  # noqa: E402
from test_hardening import run_campaign  # noqa: E402


def bombs(tmp: Path) -> list[str]:
    """The SQLite BLOB/TEXT bomb and the zstd frame of tiny rows through inspect and page."""
    from app.tools import hostile
    from conftest import fixture
    from test_hardening import GOAL, _header, probe
    lines = [ln for ln in fixture(GOAL).read_bytes().split(b"\n") if ln]
    db = tmp / "bomb.sqlite"
    hostile.sqlite_bomb(str(db), dict(json.loads(lines[0]), id="s-1"), [json.loads(x) for x in lines[1:]],
                        blob_plain=256 << 20, text_bytes=100 << 20)
    z = tmp / "rows.jsonl.zstd"
    z.write_bytes(hostile.zstd_bomb(_header(), 256 << 20, "rows"))
    out = []
    for p in (db, z):
        for face in ("inspect", "page"):
            t = time.monotonic()
            res = probe(face, p, timeout=600)
            assert res["rc"] == 0, res
            out.append(f"{p.name} {face}: peak RSS {res['peak_mb']} MB, {time.monotonic() - t:.1f} s")
    return out


def main() -> int:
    nj = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    nz = int(sys.argv[2]) if len(sys.argv) > 2 else 28
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1414
    nc = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    with tempfile.TemporaryDirectory() as d:
        stats = run_campaign(Path(d), nj, nz, n_sqlite=nz, seed=seed)
    print(f"fuzz: {stats['mutants']} mutants x {stats['faces']} faces = {stats['runs']} runs in {stats['seconds']} s; "
          f"peak RSS {stats['peak_mb']} MB")
    with tempfile.TemporaryDirectory() as d:
        cs = run_cache_campaign(Path(d), n_logs=4, n_mutants=nc, seed=seed)
    print(f"caches: {cs['logs']} logs, {cs['runs']} runs in {cs['seconds']} s (every answer and fork as uncached)")
    with tempfile.TemporaryDirectory() as d:
        for line in bombs(Path(d)):
            print("bomb:", line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
