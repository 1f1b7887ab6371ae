#!/usr/bin/env python3
"""Fuzz the C ``text_row``/``text_rows`` (rowscan_c.c, ftsc section) against their Python definition:

    python bench/search_textrow_fuzz.py [--seed 1] [--rows 200000] [--so PATH]

Rows of the fixtures edited at random (bits flipped, JSON tokens, escapes, invalid UTF-8 and odd
numbers put in, bytes cut): every answer of the C must be None or what
:func:`app.log.query.textrow.text_row_py` gives.  ``--so``: another build of the extension to load, e.g.
one made with AddressSanitizer::

    gcc -shared -fPIC -O1 -g -fsanitize=address,undefined -I$(python -c "import sysconfig;print(sysconfig.get_paths()['include'])") \\
        app/log/index/rowscan_c.c -o /tmp/asan/rowscan_c$(python -c "import sysconfig;print(sysconfig.get_config_var('EXT_SUFFIX'))")
    LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 python bench/search_textrow_fuzz.py --so /tmp/asan/rowscan_c*.so

Prints the rows tried, those the C read, and the mismatches (0 expected)."""
from __future__ import annotations

import argparse
import importlib.util
import random
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from app.log.query.extract import ERROR_ONLY_B, NO_TEXT_B  # noqa: E402
from app.log.query.textrow import SPECIAL, text_row_py  # noqa: E402
from tests.fixtures_util import FIXTURES, session_files  # noqa: E402

TOKENS = [b'"', b"\\", b"\\u", b"\\ud800", b"\\udc00", b"{", b"}", b"[", b"]", b",", b":", b"\x00", b"\xff", b"\xc2",
          b"\xe2\x80", b"\xf0\x9f", b"-", b"0", b"e", b".", b"1e999", b"1e-999", b"9" * 30, b"null", b" ", b"\n",
          b"\r", b'\\"', b"\\\\"]


def load(so: str | None):
    if so is None:
        from app.log.index.fastindex import load_rowscan_c
        mod = load_rowscan_c()
        if mod is None:
            sys.exit("the row scanner in C is not built here (packaging/build_native.py)")
    else:
        spec = importlib.util.spec_from_file_location("rowscan_c", so)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    mod.text_setup(SPECIAL, tuple(sorted(NO_TEXT_B)), tuple(sorted(ERROR_ONLY_B)))
    return mod


def edit(rng: random.Random, row: bytes) -> bytes:
    r = bytearray(row)
    for _ in range(rng.randint(1, 4)):
        k, p = rng.randrange(4), rng.randrange(len(r) + 1)
        if k == 0 and r:
            r[min(p, len(r) - 1)] ^= 1 << rng.randrange(8)
        elif k == 1:
            r[p:p] = rng.choice(TOKENS)
        elif k == 2:
            del r[p:p + rng.randint(1, 8)]
        else:
            r = r[:p]
    return bytes(r)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--so", default=None)
    a = ap.parse_args()
    mod = load(a.so)
    datas = [p.read_bytes() for base in (FIXTURES, FIXTURES.parent / "dsh-next") for p in session_files(base)]
    rows = [r for d in datas for r in d.split(b"\n")[1:] if r]
    rng = random.Random(a.seed)
    read = bad = 0
    for k in range(a.rows):
        raw = edit(rng, rng.choice(rows))
        legacy = bool(k & 1)                           # (as a row of a v2+ session, and of a v0/v1 one)
        got = mod.text_row(raw, legacy)
        if got is not None:
            read += 1
            if got != text_row_py(raw, legacy):
                bad += 1
                if bad <= 5:
                    print("MISMATCH", legacy, raw[:200], got)
        if k % 50 == 0:                                # whole files, and offsets out of range
            d = edit(rng, rng.choice(datas)) if rng.random() < 0.5 else rng.choice(datas)
            mod.text_rows(d, d.find(b"\n") + 1, d.rfind(b"\n") + 1, rng.randint(1, 100), rng.choice([10, 1 << 30]),
                          legacy)
            mod.text_rows(d, rng.randint(-5, len(d) + 5), rng.randint(-5, len(d) + 5), 3, 100)
    print(f"rows {a.rows:,}: read by the C {read:,}, mismatches {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
