#!/usr/bin/env python3
"""Cold and warm start of the packaged binary beside the development app, same run (issue 33).

    python bench/frozen_start.py BUNDLE_BINARY [BUNDLE_BINARY2 ...] [--runs 3] [--json]

For each of ``--runs`` rounds, alternately: the packaged binary (PyInstaller one-folder bundle) and the
development app (``python -m app`` from this checkout), each on the demo store, offscreen, clean HOME:

* ``version``: ``--version`` start to exit (bootloader/interpreter start, the CLI's imports), wall and CPU;
* ``worker``: ``--session-lens-worker scan --ping`` start to exit (what every find/outline child pays first);
* ``window``: spawn to the moment Qt shows the MainWindow (Qt's own ``qt.widgets.showhide`` log, wall clock);
* ``paint``: spawn to the first tail page painted (``SESSION_LENS_MARK_FIRST_PAINT``), and the process's CPU
  time by then.

*Cold*: the bundle's files (packaged) or the venv's PySide6/shiboken6/msgspec and the checkout's app/
(development) are dropped from the page cache first (``posix_fadvise DONTNEED``, only those files).
*Warm*: the same run again at once.  Medians; the load average is printed beside them (2 shared cores).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIELDS = ("version", "version_cpu", "worker", "worker_cpu", "window", "paint", "cpu")


def evict(*roots: Path) -> None:
    for root in roots:
        for d, _, fs in os.walk(root):
            for f in fs:
                try:
                    fd = os.open(os.path.join(d, f), os.O_RDONLY)
                except OSError:
                    continue
                try:
                    os.fdatasync(fd)            # dirty pages (a fresh copy) are not dropped
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                except OSError:
                    pass
                finally:
                    os.close(fd)


def _env(home: str) -> dict:
    return {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "XDG_RUNTIME_DIR": home,
            "QT_QPA_PLATFORM": "offscreen", "SESSION_LENS_MARK_FIRST_PAINT": "1", "SESSION_LENS_NO_CRASH_DIALOG": "1",
            "QT_MESSAGE_PATTERN": "%{time yyyyMMddHHmmsszzz} %{category}: %{message}",
            "QT_LOGGING_RULES": "qt.widgets.showhide=true"}


def _window_ms(out: str, t0: float) -> float | None:
    for line in out.splitlines():
        if "Setting visibility of MainWindow" in line and line[:2] == "20":
            x = line.split()[0]
            t = dt.datetime.strptime(x[:14], "%Y%m%d%H%M%S").timestamp() + int(x[14:17]) / 1000
            return (t - t0) * 1000
    return None


def _child_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU milliseconds of a command run to its exit."""
    c0, t0 = _child_cpu(), time.time()
    subprocess.run(cmd, env=env, cwd=REPO, check=True, capture_output=True)
    return (time.time() - t0) * 1000, (_child_cpu() - c0) * 1000


def one(cmd: list[str], home: str, shot: str) -> dict:
    env = _env(home)
    version, version_cpu = timed(cmd + ["--version"], env)
    worker, worker_cpu = timed(cmd + ["--session-lens-worker", "scan", "--ping"], env)
    t0 = time.time()
    r = subprocess.run(cmd + ["gui", "--screenshot", shot], env=env, cwd=REPO, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{cmd}: exit {r.returncode}\n{r.stderr[-2000:]}")
    out = r.stdout + r.stderr
    paint = cpu = None
    for line in out.splitlines():
        if line.startswith("first-paint "):
            _, w, c = line.split()
            paint, cpu = (float(w) - t0) * 1000, float(c) * 1000
    return {"version": version, "version_cpu": version_cpu, "worker": worker, "worker_cpu": worker_cpu,
            "window": _window_ms(out, t0), "paint": paint, "cpu": cpu}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary", nargs="+", help="packaged binaries (the first is 'packaged', others 'packaged-2'...)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    import PySide6
    import msgspec
    import shiboken6
    dev_files = [Path(m.__file__).parent for m in (PySide6, shiboken6, msgspec)] + [REPO / "app"]
    cmds = {}
    for i, b in enumerate(a.binary):
        binary = Path(b).resolve()
        cmds["packaged" if i == 0 else f"packaged-{i + 1}"] = ([str(binary)], [binary.parent])
    cmds["development"] = ([sys.executable, "-m", "app"], dev_files)
    res: dict = {k: {"cold": [], "warm": []} for k in cmds}
    loads = []
    with tempfile.TemporaryDirectory(prefix="frozen-start-") as tmp:
        for i in range(a.runs):
            for name, (cmd, files) in cmds.items():
                home = os.path.join(tmp, f"home-{name}-{i}")
                os.makedirs(home, mode=0o700)
                evict(*files)
                loads.append(os.getloadavg()[0])
                res[name]["cold"].append(one(cmd, home, os.path.join(tmp, "cold.png")))
                res[name]["warm"].append(one(cmd, home, os.path.join(tmp, "warm.png")))
    med = {n: {k: {f: statistics.median(r[f] for r in rs if r[f] is not None) for f in FIELDS}
               for k, rs in d.items()} for n, d in res.items()}
    if a.json:
        print(json.dumps({"median": med, "runs": res, "load": loads}, indent=1))
        return 0
    print(f"start-up, medians of {a.runs} (load average {statistics.median(loads):.1f}, {os.cpu_count()} cores); "
          "wall ms (CPU ms); ratio = packaged / development")
    cols = (("--version", "version", "version_cpu"), ("worker ping", "worker", "worker_cpu"), ("window", "window", None),
            ("1st paint", "paint", "cpu"))
    print(f"{'':13} {'':5}" + "".join(f"{c[0]:>17}" for c in cols))
    for k in ("cold", "warm"):
        d = med["development"][k]
        for n in cmds:
            m = med[n][k]
            cells = [f"{m[w]:.0f}" + (f" ({m[c]:.0f})" if c else "") for _, w, c in cols]
            print(f"{n:13} {k:5}" + "".join(f"{x:>17}" for x in cells))
            if n != "development":
                print(f"{'  ratio':13} {k:5}" + "".join(f"{m[w] / d[w]:16.2f}x" for _, w, _c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
