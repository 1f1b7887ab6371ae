"""Is a session's writer alive?  One answer for the CLI, the session list and the open session.

* v1+ stores (spec dsh-format-versions §2.1): the writer holds a kernel ``flock`` on
  ``session.lock`` in the session directory for as long as it lives ("one live writer per
  session"); the lock file stays when it exits.  So a held lock means **live** (whatever the
  growth: a long tool call is still live), a lock that nobody holds means the writer is gone:
  **complete** when the log ends between turns, **crashed** when its last turn is open or
  its tail torn — at once, without waiting for the file to stay quiet.  A generation file
  ``session.vN.jsonl[.zstd]`` (N >= 1) without a lock file has no writer either.
* v0 stores (no lock): growth this process saw (size / mtime / revision changed between two
  of its looks), never the file's age, as :func:`app.store.watch.writer_verdict` rules it
  (live / idle / crashed / complete): one implementation.

Reading the lock never takes it when ``/proc/locks`` is there (Linux: the held locks are
listed by device and inode); elsewhere a non-blocking shared ``flock`` probe is taken and
released at once.  Nothing is ever created: a missing lock file stays missing.
"""
from __future__ import annotations

import os
import re
import time
from typing import Any, Optional

LOCK_NAME = "session.lock"
_GEN_RE = re.compile(r"^session\.v([1-9][0-9]*)\.jsonl(\.zstd)?$")
_PROC_LOCKS = "/proc/locks"


def session_dir(path: str) -> str:
    p = os.path.abspath(os.path.expanduser(path))
    return p if os.path.isdir(p) else os.path.dirname(p)


def lock_path(path: str) -> str:
    return os.path.join(session_dir(path), LOCK_NAME)


def generation_of(path: str) -> int:
    """The format generation a file name says (0 for ``session.jsonl`` and other names)."""
    m = _GEN_RE.match(os.path.basename(path))
    return int(m.group(1)) if m else 0


def _held_proc(st: os.stat_result) -> Optional[bool]:
    try:
        with open(_PROC_LOCKS, encoding="ascii", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    maj, mn, ino = os.major(st.st_dev), os.minor(st.st_dev), st.st_ino
    for line in text.splitlines():
        parts = line.split()
        if "->" in parts:                      # a waiter, not a holder
            continue
        for p in parts:
            if p.count(":") == 2:
                a, b, c = p.split(":")
                try:
                    if int(a, 16) == maj and int(b, 16) == mn and int(c) == ino:
                        return True
                except ValueError:
                    pass
                break
    return False


def _held_probe(lp: str) -> Optional[bool]:
    try:
        import fcntl
    except ImportError:                        # no flock on this OS: the lock says nothing
        return None
    try:
        fd = os.open(lp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        except OSError:
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def lock_held(path: str) -> Optional[bool]:
    """True: a writer holds the session's lock; False: the lock file is there, nobody holds it;
    None: no lock file (a v0 store) or the lock cannot be checked."""
    lp = lock_path(path)
    try:
        st = os.stat(lp)
    except OSError:
        return None
    held = _held_proc(st)
    if held is None:
        held = _held_probe(lp)
    return held


def lock_signal(path: str) -> Optional[bool]:
    """The lock's verdict on liveness: True live, False gone, None (no lock semantics: use growth)."""
    held = lock_held(path)
    if held is None and generation_of(path) >= 1 and not os.path.exists(lock_path(path)):
        return False                           # a v1+ generation nobody ever locked: no writer now
    return held


def writer_state(path: str, session_id: Optional[str] = None, *, now: Optional[float] = None,
                 idle_after: Optional[float] = None, crash_after: Optional[float] = None,
                 reader: Any = None) -> dict[Any, Any]:
    """``{"writer": "live"|"idle"|"crashed"|"complete", "signal": "lock"|"growth"|"sqlite", ...}``
    (:func:`app.store.watch.live_state` with the facts behind its answer)."""
    from . import watch
    now = time.time() if now is None else now
    kw = {}
    if idle_after is not None:
        kw["idle_after"] = idle_after
    if crash_after is not None:
        kw["crash_after"] = crash_after
    info: dict[Any, Any] = {}
    state = watch.live_state(path, session_id, now=now, details=info, reader=reader, **kw)
    out = {"writer": state, "signal": "sqlite" if info.get("sqlite") else ("lock" if "lock" in info else "growth"),
           "lastAppendAge": round(max(0.0, now - info["mtime"]), 3) if info.get("mtime") else None,
           "openTail": bool(info.get("open")), "seedOnly": bool(info.get("seed_only")),
           "grew": info.get("changed_at") is not None}
    if "lock" in info:
        out["lock"] = lock_path(path)
        out["lockHeld"] = info["lock"]
    return out
