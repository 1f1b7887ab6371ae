#!/usr/bin/env python3
"""Build the seq index's row scanners: app/log/index/rowscan_c.c (C) and app/log/index/rowscan.py (mypyc); a set-up step,
never a requirement.

    python packaging/build_native.py [--force]

Run by packaging/bootstrap.sh and by every make target when the source changed.  The C extension
goes beside the source (app/log/index/rowscan.<EXT_SUFFIX> and rowscan__mypyc.<EXT_SUFFIX>, git-ignored) with a stamp holding the source's
SHA-256 (app/log/index/rowscan.stamp, git-ignored), which the loader checks: an extension built from another
version of the source is not used.  The generated C and objects go to build/mypyc (git-ignored).
mypyc comes with mypy (a dev dependency); a C compiler and the interpreter's headers are needed.
When anything is missing or fails, this prints why, removes any half-built extension and exits 0:
the interpreted module is used (``session-lens index --json`` says ``"scanner": "python"``).

The C scanner (app/log/index/rowscan_c<EXT_SUFFIX>, stamp app/log/index/rowscan_c.stamp, both git-ignored) is the
same scan written for the C compiler (about twice as fast as the mypyc build: bench/profiles.md, Round 8);
it is built the same way, by setuptools in a child process, and where it is built the index uses it
(``"scanner": "c"``), with the mypyc build (or the source) for the rare seq past 64 bits.
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
SRC = ROOT / "app" / "log" / "index" / "rowscan.py"
STAMP = SRC.with_suffix(".stamp")
SUFFIX = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
EXT = SRC.with_name("rowscan" + SUFFIX)                # the module (a shim mypyc makes for a module in a package)
LIB = SRC.with_name("rowscan__mypyc" + SUFFIX)         # the compiled code, imported by the shim
BUILD = ROOT / "build" / "mypyc"
C_SRC = SRC.with_name("rowscan_c.c")
C_STAMP = SRC.with_name("rowscan_c.stamp")
C_EXT = SRC.with_name("rowscan_c" + SUFFIX)


def digest(path: Path = SRC) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def remove(paths: tuple[Path, ...] = (EXT, LIB, STAMP)) -> None:
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
    code = (
        "from setuptools import Extension, setup\n"
        f"setup(name='session-lens-rowscan-c', ext_modules=[Extension('app.log.index.rowscan_c', [{str(C_SRC.relative_to(ROOT))!r}],"
        " extra_compile_args=['-O2'])],\n"
        f"      script_args=['-q', 'build_ext', '--inplace', '--build-temp', {str(BUILD / 'temp_c')!r},"
        f" '--build-lib', {str(BUILD / 'lib_c')!r}])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0 or not C_EXT.exists() or digest(C_SRC) != want:
        remove((C_EXT, C_STAMP))
        tail = "\n".join((r.stdout + r.stderr).strip().splitlines()[-15:])
        print(f"build_native: the C scanner was not built; the mypyc or interpreted one is used\n{tail}", file=sys.stderr)
        return
    C_STAMP.write_text(want + "\n")
    print(f"build_native: built {C_EXT.relative_to(ROOT)}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--force", action="store_true", help="compile even when the extension is up to date")
    a = ap.parse_args()
    reason = why_not()
    if not reason or reason.startswith("mypyc"):
        build_c(a.force)
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
