"""Longer fuzz campaign (local): ``make fuzz`` or ``python bench/fuzz.py [JSONL_PER_LOG] [ZSTD_PER_LOG]``.

The test suite runs the same campaign with few mutants per log (tests/test_hardening.py)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_hardening import run_campaign  # noqa: E402


def main() -> int:
    nj = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    nz = int(sys.argv[2]) if len(sys.argv) > 2 else 28
    with tempfile.TemporaryDirectory() as d:
        stats = run_campaign(Path(d), nj, nz, n_sqlite=nz, seed=int(sys.argv[3]) if len(sys.argv) > 3 else 1414)
    print(f"fuzz: {stats['mutants']} mutants x {stats['faces']} faces = {stats['runs']} runs in {stats['seconds']} s; "
          f"peak RSS {stats['peak_mb']} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
