"""What this installation runs on, and whether each part works: ``session-lens doctor`` and
*Help › Diagnostics* show the same report (as ``flutter doctor`` and ``brew doctor`` do).

    rep = report(qt=qt_facts, settings=path)     # the Qt part and the settings path come from the caller
    text = report_text(rep)                       # what the dialog and the terminal show

The report names the version, Python, the row scanner in use, the zstd module, the cache folder and
its size, the settings, log and crash-report paths, and a check of every worker kind of the one
launcher (:data:`app.store.childproc.WORKERS`): started, answered, how long (each is run as
``--session-lens-worker KIND --ping``: its entry imported in a child process, one answer on the
pipe).  ``problems`` lists what is wrong (a worker that does not answer, no zstd C library, no
emoji or CJK font); it holds paths and error types, never session text.
"""
from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Optional

from . import childproc, diagnostics

CACHE_WALK_MAX = 200_000        # files counted for the cache size (a bigger cache is reported as "at least")


def folder_size(root: Optional[Path], limit: int = CACHE_WALK_MAX) -> tuple[int, int, bool]:
    """(bytes, files, complete) under ``root`` (symlinks not followed; at most ``limit`` files)."""
    total = files = 0
    if root is None or not root.is_dir():
        return 0, 0, True
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            try:
                total += os.lstat(os.path.join(dirpath, n)).st_size
            except OSError:
                continue
            files += 1
            if files >= limit:
                return total, files, False
    return total, files, True


def check_worker(kind: str, timeout: float = 60.0) -> dict[str, Any]:
    """Start worker ``kind`` through the launcher with ``--ping``; started, answered, milliseconds."""
    t0 = time.monotonic()
    out: dict[str, Any] = {"kind": kind, "entry": childproc.WORKERS[kind], "started": False, "answered": False}
    deadline = t0 + timeout
    try:
        got = childproc.run_child(childproc.worker_argv(kind, childproc.PING), None, lambda _m: None,
                                  lambda: time.monotonic() > deadline, f"{kind} check")
        out["started"] = True
        out["answered"] = isinstance(got, dict) and got.get("kind") == kind
        out["pid"] = got.get("pid") if isinstance(got, dict) else None
        out["ppid"] = got.get("ppid") if isinstance(got, dict) else None      # (this process: a child of ours)
    except childproc.NoChild as e:
        out["error"] = f"not started: {type(e).__name__}"
    except (childproc.ChildFailed, InterruptedError) as e:
        out["started"] = True
        out["error"] = type(e).__name__ + (": timed out" if isinstance(e, InterruptedError) else "")
    out["ms"] = round((time.monotonic() - t0) * 1000, 1)
    return out


def build_kind() -> str:
    """``packaged`` (the PyInstaller bundle), ``installed`` (a wheel, pip or pipx) or ``source`` (a checkout)."""
    if getattr(sys, "frozen", False):
        return "packaged"
    return "installed" if "site-packages" in Path(__file__).resolve().parts else "source"


def scanner() -> str:
    from ..log.index.fastindex import SCANNER
    return SCANNER


def zstd_facts() -> dict[str, Any]:
    from ..log.source.zstdframes import sized_decoder
    from ..log.source.zstdlib import MODULE_NAME, native_library_path
    return {"module": MODULE_NAME, "library": native_library_path(), "sizedDecoder": sized_decoder() is not None}


def report(qt: Optional[dict[str, Any]] = None, settings: Optional[Path] = None,
           workers: bool = True) -> dict[str, Any]:
    """The whole report (``qt``: the Qt part, from the caller, which has Qt; ``workers``: run the checks)."""
    from .. import __version__
    from .indexcache import cache_root
    cache = cache_root()
    size, files, complete = folder_size(cache)
    log_dir = diagnostics.log_dir()
    rep: dict[str, Any] = {
        "version": __version__,
        "pid": os.getpid(),
        "python": {"version": platform.python_version(), "implementation": platform.python_implementation(),
                   "executable": sys.executable, "build": build_kind()},
        "system": " ".join(x for x in (platform.system(), platform.release(), platform.machine()) if x),
        "qt": qt,
        "scanner": scanner(),
        "zstd": zstd_facts(),
        "cache": {"path": str(cache) if cache is not None else None, "bytes": size, "files": files,
                  "complete": complete},
        "paths": {"settings": str(settings) if settings is not None else None, "log": str(diagnostics.log_path()),
                  "crashReports": str(log_dir), "fatalReports": str(log_dir / diagnostics.FATAL_GLOB)},
        "workers": [check_worker(k) for k in childproc.WORKERS] if workers else [],
    }
    rep["problems"] = problems(rep)
    return rep


def problems(rep: dict[str, Any]) -> list[str]:
    out = [f"worker {w['kind']}: {'no answer' if w['started'] else 'not started'}"
           + (f" ({w['error']})" if w.get("error") else "") for w in rep["workers"] if not w["answered"]]
    if not rep["zstd"]["sizedDecoder"]:
        out.append(f"zstd: libzstd not reachable through {rep['zstd']['module']} (zstd logs read on the slower path)")
    if rep["scanner"] == "python":
        out.append("scanner: the interpreted row scanner (no C compiler at set-up; indexing is slower)")
    qt = rep.get("qt") or {}
    if qt.get("error"):
        out.append(f"qt: {qt['error']}")
    fonts = qt.get("fonts") or {}
    for what in ("emoji", "cjk"):
        if what in fonts and not fonts[what]:
            out.append(f"fonts: no {what} font (such text shows as boxes)")
    return out


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def report_text(rep: dict[str, Any]) -> str:
    """The report as aligned lines (the dialog and ``doctor`` without ``--json``)."""
    py, z, c, paths = rep["python"], rep["zstd"], rep["cache"], rep["paths"]
    qt = rep.get("qt") or {}
    fonts = qt.get("fonts") or {}
    rows = [("Session Lens", rep["version"]),
            ("Python", f"{py['version']} ({py['implementation']}, {py['build']}) {py['executable']}"),
            ("System", rep["system"])]
    if qt:
        rows += [("Qt", f"{qt.get('qt', '?')} (PySide6 {qt.get('pyside6', '?')})"),
                 ("Qt platform", f"{qt.get('platform') or '?'}" + (f" ({qt['note']})" if qt.get("note") else "")),
                 ("Emoji fonts", ", ".join(fonts.get("emoji") or []) or "none"),
                 ("CJK fonts", ", ".join(fonts.get("cjk") or []) or "none")]
    rows += [("Row scanner", rep["scanner"]),
             ("zstd", f"{z['module']}" + ("" if z["sizedDecoder"] else " (libzstd not reachable)")),
             ("Cache", f"{c['path']} ({'' if c['complete'] else 'at least '}{_size(c['bytes'])}, {c['files']} files)"),
             ("Settings", str(paths["settings"])), ("Log", paths["log"]), ("Crash reports", paths["crashReports"])]
    for w in rep["workers"]:
        state = "answered" if w["answered"] else ("started, no answer" if w["started"] else "not started")
        rows.append((f"worker {w['kind']}", f"{state} in {w['ms']:.0f} ms" + (f" ({w['error']})" if w.get("error") else "")))
    width = max(len(k) for k, _ in rows)
    lines = [f"{k:<{width}}  {v}" for k, v in rows]
    lines += [f"problem: {p}" for p in rep["problems"]] or ["no problems found"]
    return "\n".join(lines)
