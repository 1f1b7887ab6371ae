#!/usr/bin/env python3
"""Compile the seq index's row scanner (app/log/rowscan.py) with mypyc: a set-up step, never a requirement.

    python packaging/build_native.py [--force]

Run by packaging/bootstrap.sh and by every make target when the source changed.  The C extension
goes beside the source (app/log/rowscan.<EXT_SUFFIX> and rowscan__mypyc.<EXT_SUFFIX>, git-ignored) with a stamp holding the source's
SHA-256 (app/log/rowscan.stamp, git-ignored), which the loader checks: an extension built from another
version of the source is not used.  The generated C and objects go to build/mypyc (git-ignored).
mypyc comes with mypy (a dev dependency); a C compiler and the interpreter's headers are needed.
When anything is missing or fails, this prints why, removes any half-built extension and exits 0:
the interpreted module is used (``session-lens index --json`` says ``"scanner": "python"``).
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
SRC = ROOT / "app" / "log" / "rowscan.py"
STAMP = SRC.with_suffix(".stamp")
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
EXT = SRC.with_name("rowscan" + SUFFIX)                # the module (a shim mypyc makes for a module in a package)
LIB = SRC.with_name("rowscan__mypyc" + SUFFIX)         # the compiled code, imported by the shim
BUILD = ROOT / "build" / "mypyc"


def digest() -> str:
    return hashlib.sha256(SRC.read_bytes()).hexdigest()


def why_not() -> str:
    """What is missing to compile here ('' when nothing)."""
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return "mypyc is not installed (it comes with mypy, a dev dependency)"
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if not shutil.which(cc):
        return f"no C compiler ({cc})"
    include = sysconfig.get_paths().get("include", "")
    if not include or not os.path.exists(os.path.join(include, "Python.h")):
        return f"no Python headers (Python.h in {include})"
    return ""


def remove() -> None:
    for p in (EXT, LIB, STAMP):
        try:
            p.unlink()
        except FileNotFoundError:
            pass


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--force", action="store_true", help="compile even when the extension is up to date")
    a = ap.parse_args()
    want = digest()
    if not a.force and EXT.exists() and LIB.exists() and STAMP.exists() and STAMP.read_text().strip() == want:
        print("build_native: rowscan is compiled and up to date")
        return 0
    remove()
    reason = why_not()
    if reason:
        print(f"build_native: not compiled ({reason}); the interpreted scanner is used", file=sys.stderr)
        return 0
    # setup() in a child process: setuptools and mypyc's type check stay out of this one; --inplace puts
    # the extension beside its source
    code = (
        "import sys\n"
        "from setuptools import setup\n"
        "from mypyc.build import mypycify\n"
        f"setup(name='session-lens-rowscan', ext_modules=mypycify(['--no-warn-unused-configs', {str(SRC.relative_to(ROOT))!r}],"
        f" target_dir={str(BUILD)!r}, opt_level='3'),\n"
        f"      script_args=['-q', 'build_ext', '--inplace', '--build-temp', {str(BUILD / 'temp')!r},"
        f" '--build-lib', {str(BUILD / 'lib')!r}])\n"
    )
    env = {**os.environ, "MYPY_CACHE_DIR": str(BUILD / "mypy_cache")}
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode != 0 or not EXT.exists() or not LIB.exists():
        remove()
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-15:])
        print(f"build_native: mypyc failed; the interpreted scanner is used\n{tail}", file=sys.stderr)
        return 0
    if digest() != want:                       # (the source changed while it was compiled)
        remove()
        print("build_native: the source changed during the build; run it again", file=sys.stderr)
        return 0
    STAMP.write_text(want + "\n")
    print(f"build_native: compiled {EXT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
