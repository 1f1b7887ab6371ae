#!/usr/bin/env python3
"""Build the seq index's row scanner in C (app/log/index/rowscan_c.c); a set-up step, never a requirement.

    python packaging/build_native.py [--force]

Run by packaging/bootstrap.sh and by every make target when the source changed.  The extension goes
beside its source (app/log/index/rowscan_c<EXT_SUFFIX>, git-ignored) with a stamp holding the source's
SHA-256 (app/log/index/rowscan_c.stamp, git-ignored), which the loader checks: an extension built from
another version of the source is not used.  It is built by setuptools in a child process; objects go
to build/native (git-ignored).  A C compiler and the interpreter's headers are needed; when anything is
missing or fails, this prints why, removes any half-built extension and exits 0: the interpreted scanner
(app/log/index/rowscan.py, the definition of the scan) is used (``session-lens --version`` says
``row scanner: python``).  A wheel builds the same extension as an optional one (setup.py).

The mypyc build of rowscan.py that this script also made until decision 0021 is gone: where it could be
built the C scanner can too, and it was only the C scanner's fallback for seqs past 64 bits, which the
interpreted scanner covers.  Its leftovers in a checkout (rowscan<EXT_SUFFIX>, rowscan__mypyc<EXT_SUFFIX>,
rowscan.stamp) are removed here, so that ``import rowscan`` finds the source again.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "app" / "log" / "index"
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
BUILD = ROOT / "build" / "native"
C_SRC = INDEX / "rowscan_c.c"
C_STAMP = INDEX / "rowscan_c.stamp"
C_EXT = INDEX / ("rowscan_c" + SUFFIX)
# what the mypyc build left beside rowscan.py (decision 0021)
MYPYC_LEFTOVERS = (INDEX / ("rowscan" + SUFFIX), INDEX / ("rowscan__mypyc" + SUFFIX), INDEX / "rowscan.stamp")


def digest(path: Path = C_SRC) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def why_not() -> str:
    """What is missing to compile here ('' when nothing)."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    if not shutil.which(cc):
        return f"no C compiler ({cc})"
    include = sysconfig.get_paths().get("include", "")
    if not include or not os.path.exists(os.path.join(include, "Python.h")):
        return f"no Python headers (Python.h in {include})"
    return ""


def remove(paths: tuple[Path, ...]) -> None:
    for p in paths:
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def build_c(force: bool) -> None:
    """The C scanner, beside its source, with its stamp (nothing, and the reason printed, when it fails)."""
    want = digest(C_SRC)
    if not force and C_EXT.exists() and C_STAMP.exists() and C_STAMP.read_text().strip() == want:
        print("build_native: rowscan_c is built and up to date")
        return
    remove((C_EXT, C_STAMP))
    reason = why_not()
    if reason:
        print(f"build_native: the C scanner was not built ({reason}); the interpreted scanner is used", file=sys.stderr)
        return
    code = (
        "from setuptools import Extension, setup\n"
        f"setup(name='session-lens-rowscan-c', ext_modules=[Extension('app.log.index.rowscan_c', [{str(C_SRC.relative_to(ROOT))!r}],"
        " extra_compile_args=['-O2'])],\n"
        f"      script_args=['-q', 'build_ext', '--inplace', '--force', '--build-temp', {str(BUILD / 'temp')!r},"
        f" '--build-lib', {str(BUILD / 'lib')!r}])\n"
    )
    # (--force: setuptools' own up-to-date test compares whole seconds of mtime; a source changed in the second of
    #  the last build, as a merge right after a build does, kept the old object while the stamp took the new digest)
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0 or not C_EXT.exists() or digest(C_SRC) != want:
        remove((C_EXT, C_STAMP))
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-15:])
        print(f"build_native: the C scanner was not built; the interpreted scanner is used\n{tail}", file=sys.stderr)
        return
    C_STAMP.write_text(want + "\n")
    print(f"build_native: built {C_EXT.relative_to(ROOT)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--force", action="store_true", help="compile even when the extension is up to date")
    a = ap.parse_args()
    stale = [p for p in MYPYC_LEFTOVERS if p.exists()]
    if stale:
        remove(MYPYC_LEFTOVERS)
        print(f"build_native: removed the old mypyc build ({', '.join(p.name for p in stale)}; decision 0021)")
    build_c(a.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
