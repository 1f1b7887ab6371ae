"""Wake a waiting reader when a file (or its directory) changes (spec §1.3, §8 "Live").

:class:`Watcher`: inotify through ctypes on Linux (``IN_MODIFY|IN_CLOSE_WRITE|IN_MOVED_TO|IN_CREATE`` on the
file's directory, plus the file itself once it exists), and **always** a stat poll every ``poll_interval``
seconds, so correctness never depends on inotify (other OSes, network file systems, a missed event, a watch
limit).  Notifications are only hints; every wake re-stats.  Used by :class:`app.store.watch.Follower`.

No module here writes anything.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import select
import struct
import sys
import threading
from typing import Literal, Optional, Union

# =========================================================================== inotify

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_IGNORED = 0x00008000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

FILE_MASK = IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF
DIR_MASK = (IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_MOVED_FROM | IN_DELETE |
            IN_DELETE_SELF | IN_MOVE_SELF)
_EVENT = struct.Struct("iIII")

_libc: Union[ctypes.CDLL, Literal[False], None] = None     # None: not looked up yet; False: unavailable


def _inotify_libc() -> Optional[ctypes.CDLL]:
    global _libc
    if _libc is None:
        _libc = False
        if sys.platform.startswith("linux"):
            try:
                lib = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
                lib.inotify_init1.argtypes = [ctypes.c_int]
                lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
                lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
                _libc = lib
            except (OSError, AttributeError):
                _libc = False
    return _libc or None


def inotify_available() -> bool:
    return _inotify_libc() is not None


# what :class:`Watcher` watches: ("dir", the file's (st_dev, st_ino) or None while it does not
# exist) or ("ancestor", the nearest existing ancestor directory or None)
_Target = Union[tuple[Literal["dir"], Optional[tuple[int, int]]], tuple[Literal["ancestor"], Optional[str]]]


class Watcher:
    """Wait for changes to ``path`` (which may not exist yet) or to the names in ``extra``
    (siblings in the same directory, e.g. a SQLite ``-wal``).

    :meth:`wait` returns True when a notification (or :meth:`wake`) arrived, False on
    timeout.  Without inotify it simply sleeps ``min(timeout, poll_interval)``: the caller
    re-stats after every return, so polling is the always-correct floor.
    """

    def __init__(self, path: str, poll_interval: float = 0.1, use_inotify: bool = True,
                 extra: tuple[str, ...] = ()) -> None:
        self.path = os.path.abspath(path)
        self.dir = os.path.dirname(self.path)
        self.names = {os.fsencode(os.path.basename(self.path))} | {os.fsencode(n) for n in extra}
        self.poll_interval = max(0.001, float(poll_interval))
        self._lock = threading.Lock()
        self._rd, self._wr = os.pipe()
        os.set_blocking(self._rd, False)
        os.set_blocking(self._wr, False)
        self._fd = -1
        self._wds: dict[int, str] = {}      # wd -> "dir" | "file" | "ancestor"
        self._armed: Optional[_Target] = None
        self.notifications = 0
        lib = _inotify_libc() if use_inotify else None
        if lib is not None:
            fd = lib.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
            if fd >= 0:
                self._fd = fd
                self._lib = lib
                self._arm()

    @property
    def uses_inotify(self) -> bool:
        return self._fd >= 0

    # ------------------------------------------------------------------ watches
    def _add(self, path: str, mask: int, role: str) -> bool:
        wd = self._lib.inotify_add_watch(self._fd, os.fsencode(path), mask)
        if wd < 0:
            return False
        self._wds[wd] = role
        return True

    def _target(self) -> _Target:
        """What should be watched now: ("dir", file identity) or ("ancestor", nearest existing dir)."""
        if os.path.isdir(self.dir):
            try:
                st = os.stat(self.path)
                return ("dir", (st.st_dev, st.st_ino))
            except OSError:
                return ("dir", None)
        p = self.dir
        while p and not os.path.isdir(p):
            parent = os.path.dirname(p)
            if parent == p:
                break
            p = parent
        return ("ancestor", p if os.path.isdir(p) else None)

    def _arm(self) -> bool:
        """(Re)place the watches: the directory if it exists (else its nearest existing
        ancestor, to see the path appear level by level), and the file itself if it exists.
        True if the watches changed (something moved since the last look: re-stat now)."""
        if self._fd < 0:
            return False
        changed = False
        for _ in range(64):                     # until the target is stable (dirs created meanwhile)
            key = self._target()
            if key == self._armed:
                return changed
            changed = True
            for wd in list(self._wds):
                self._lib.inotify_rm_watch(self._fd, wd)
            self._wds.clear()
            match key:
                case ("dir", ident):
                    self._add(self.dir, DIR_MASK, "dir")
                    if ident is not None:
                        self._add(self.path, FILE_MASK, "file")
                case ("ancestor", str(ancestor)):
                    self._add(ancestor, IN_CREATE | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF, "ancestor")
            self._armed = key
        return changed

    def _drain(self) -> bool:
        """Read pending inotify events; True if one concerns us."""
        hit = False
        while True:
            try:
                buf = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                break
            if not buf:
                break
            i = 0
            while i + _EVENT.size <= len(buf):
                wd, mask, _cookie, n = _EVENT.unpack_from(buf, i)
                name = buf[i + _EVENT.size:i + _EVENT.size + n].rstrip(b"\0")
                i += _EVENT.size + n
                role = self._wds.get(wd)
                if role is None:
                    continue                        # a watch we removed ourselves
                if mask & IN_IGNORED:               # the kernel dropped it (file/dir gone): re-arm
                    self._wds.pop(wd, None)
                    self._armed = None
                    hit = True
                    continue
                if role == "dir":
                    if name in self.names or mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                        hit = True
                    if name in self.names and mask & (IN_CREATE | IN_MOVED_TO | IN_DELETE | IN_MOVED_FROM):
                        self._armed = None          # the file appeared/changed identity: re-arm
                else:
                    hit = True
                    if role == "ancestor" or mask & (IN_DELETE_SELF | IN_MOVE_SELF):
                        self._armed = None
        return hit

    # ------------------------------------------------------------------ waiting
    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds (at most ``poll_interval`` without inotify)."""
        with self._lock:
            if self._fd >= 0 and self._arm():
                return True                     # the path moved under us: let the caller re-stat
        if self._fd < 0:
            t = max(0.0, min(timeout, self.poll_interval))
            r, _, _ = select.select([self._rd], [], [], t)
        else:
            r, _, _ = select.select([self._fd, self._rd], [], [], max(0.0, timeout))
        woke = False
        if self._rd in r:
            try:
                while os.read(self._rd, 4096):
                    pass
            except BlockingIOError:
                pass
            woke = True
        if self._fd >= 0 and self._fd in r:
            with self._lock:
                if self._drain():
                    self.notifications += 1
                    woke = True
        return woke

    def wake(self) -> None:
        """Make a concurrent :meth:`wait` return now (thread-safe)."""
        try:
            os.write(self._wr, b"x")
        except (BlockingIOError, OSError):
            pass

    def close(self) -> None:
        for fd in (self._fd, self._rd, self._wr):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fd = self._rd = self._wr = -1

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
