"""Diagnostics that survive a crash, for the window and every worker process (no Qt).

    path = diagnostics.setup("window")          # once per process; worker_main does it for each worker
    diagnostics.log.warning("index of %s failed: %s", session_id, type(e).__name__)
    diagnostics.pending_fatal_reports()         # the window's next start: reports of processes that died

Two files in the user log folder (``platformdirs.user_log_dir("session-lens")``;
``$SESSION_LENS_LOG_DIR`` overrides it):

* ``session-lens.log``, rotating (4 × 512 KiB): the warnings and errors of the window and the
  workers, through Python ``logging`` (logger ``session_lens``), one line each, naming the process;
* ``fatal-<time>-<role>-<pid>.log``: ``faulthandler``'s report when the process dies of a fatal
  signal (SIGSEGV in a C extension, a ctypes call, Qt's abort), which no Python handler sees.
  A process that ends normally removes its own file; one killed on purpose (a cancelled worker)
  leaves a file with a header only, which :func:`sweep` removes once its process is gone.

What goes into these files is private to the user and may be attached to a bug report, so it never
holds transcript text: ids, seqs, paths, exit codes and error *types* only.  Exception messages can
quote a log (a msgspec error, a ``KeyError`` of a value), so :func:`redacted_traceback` keeps the
frames (file, line, function) and the type, and drops the message; faulthandler prints frames only.
"""
from __future__ import annotations

import atexit
import datetime as _dt
import faulthandler
import logging
import logging.handlers
import os
import re
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import IO, Optional

APP_SLUG = "session-lens"
LOG_FILE = "session-lens.log"
LOG_BYTES = 512 * 1024
LOG_BACKUPS = 3
FATAL_GLOB = "fatal-*.log"
FATAL_MARK = "Fatal Python error"        # faulthandler's first line
REPORTED = ".reported"                   # suffix of a fatal report already offered to the user
_FATAL_NAME = re.compile(r"fatal-[0-9-]+-(?P<role>[a-z0-9-]+)-(?P<pid>\d+)\.log")

log = logging.getLogger("session_lens")


class _State:
    role: Optional[str] = None
    fatal_path: Optional[Path] = None
    fatal_file: Optional[IO[str]] = None


def log_dir() -> Path:
    """The user log folder (``$SESSION_LENS_LOG_DIR`` when set)."""
    env = os.environ.get("SESSION_LENS_LOG_DIR")
    if env:
        return Path(env)
    import platformdirs
    return Path(platformdirs.user_log_dir(APP_SLUG, appauthor=False))


def log_path() -> Path:
    return log_dir() / LOG_FILE


def setup(role: str) -> Optional[Path]:
    """Send this process's warnings and errors to the rotating log and its fatal-signal report to a
    file of its own; returns that file (None when the log folder cannot be written).  Idempotent."""
    if _State.role is not None:
        return _State.fatal_path
    _State.role = role
    if open_log(role) is None:
        return None
    d = log_dir()
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = d / f"fatal-{stamp}-{role}-{os.getpid()}.log"
    try:
        f = open(path, "x", encoding="utf-8")
        f.write(f"{APP_SLUG} {role} pid {os.getpid()} started {_dt.datetime.now().astimezone().isoformat()}\n"
                f"python {sys.version.split()[0]}, {'frozen' if getattr(sys, 'frozen', False) else 'from source'}\n\n")
        f.flush()
    except OSError:
        return None
    faulthandler.enable(f, all_threads=True)
    _State.fatal_path, _State.fatal_file = path, f
    atexit.register(_clean_exit)
    return path


def open_log(role: str) -> Optional[logging.Handler]:
    """Add the rotating log file to the ``session_lens`` logger (warnings and up), each line naming
    ``role`` and the process; returns the handler (None when the log folder cannot be written)."""
    d = log_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(d / LOG_FILE, maxBytes=LOG_BYTES,
                                                       backupCount=LOG_BACKUPS, encoding="utf-8", delay=True)
    except OSError:
        return None
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(f"%(asctime)s {role}[%(process)d] %(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.WARNING)
    log.propagate = False
    return handler


def close_log(handler: logging.Handler) -> None:
    log.removeHandler(handler)
    handler.close()


def _clean_exit() -> None:
    """A normal exit: no fatal report, so the file goes."""
    if _State.fatal_file is None or _State.fatal_path is None:
        return
    faulthandler.disable()
    _State.fatal_file.close()
    _State.fatal_file = None
    try:
        _State.fatal_path.unlink()
    except OSError:
        pass


def redacted_traceback(exc_type: type[BaseException], tb: Optional[TracebackType]) -> str:
    """A traceback without the exception's message (which may quote a log): frames and type only."""
    lines = ["Traceback (most recent call last):\n"]
    for fs in traceback.extract_tb(tb):
        lines.append(f'  File "{fs.filename}", line {fs.lineno}, in {fs.name}\n')
    lines.append(f"{exc_type.__module__}.{exc_type.__qualname__} (message withheld: logs hold no transcript text)\n")
    return "".join(lines)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _is_fatal(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return FATAL_MARK in f.read(1 << 16)
    except OSError:
        return False


def forget_killed(pid: int) -> None:
    """Remove the header-only fatal file of a worker this process killed on purpose (``pid``)."""
    for p in log_dir().glob(f"fatal-*-{pid}.log"):
        if not _is_fatal(p):
            try:
                p.unlink()
            except OSError:
                pass


def sweep() -> None:
    """Remove header-only fatal files whose process is gone (killed without a fatal signal)."""
    for p in log_dir().glob(FATAL_GLOB):
        m = _FATAL_NAME.fullmatch(p.name)
        if m is None or p == _State.fatal_path or _alive(int(m["pid"])):
            continue
        if not _is_fatal(p):
            try:
                p.unlink()
            except OSError:
                pass


def pending_fatal_reports() -> list[Path]:
    """Fatal reports (oldest first) not yet offered to the user; ``mark_reported`` each once shown."""
    try:
        sweep()
        return sorted((p for p in log_dir().glob(FATAL_GLOB) if _FATAL_NAME.fullmatch(p.name) and _is_fatal(p)),
                      key=lambda p: p.name)
    except OSError:
        return []


def mark_reported(path: Path) -> Path:
    """Keep ``path`` but never offer it again (renamed ``*.reported.log``)."""
    target = path.with_name(path.name[:-len(".log")] + REPORTED + ".log")
    try:
        path.rename(target)
    except OSError:
        return path
    return target


def tail(path: Path, lines: int = 20) -> str:
    """The last ``lines`` lines of a text file ('' when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 64 * 1024))
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])
