"""The database files of the home full-text index (:mod:`app.store.fulltext`), opened as
untrusted input (issue 28 item 2): the cache folder is something anyone with the user's rights
(or a bad copy, a sync tool) may have changed, so a database is used only when it is a regular
file that Session Lens created.

* created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` (mode 0600) and stamped at once with our
  ``PRAGMA application_id``: a name planted by someone else is never adopted;
* opened only when the path (and every side file SQLite would write: ``-wal``, ``-shm``,
  ``-journal``) is a regular file or absent, never a symlink, FIFO or device, owned by this user,
  with one link (a hard link to a user's store would be written through), and its header says
  it is ours (the application id read from the 100-byte header with ``os.read``, before SQLite
  ever opens it, so a file that is not ours is never given to SQLite for writing);
* the file SQLite opened is checked to be the one that was inspected (same device and inode).

Anything else is refused with :class:`IndexRefused` (one clear line saying what to remove);
searches then answer from the streaming scan (:mod:`app.store.ftsstream`), so nothing is lost.
"""
from __future__ import annotations

import os
import sqlite3
import stat
from typing import Optional

# "SLFT" (Session Lens Full Text): the 32-bit big-endian integer at header offset 68
APP_ID = 0x534C4654
_SIDE = ("-wal", "-shm", "-journal")
_HEADER = b"SQLite format 3\x00"


class IndexRefused(OSError):
    """The database path holds something Session Lens did not create (one clear line)."""


def _check_plain(p: str, st: os.stat_result, what: str) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise IndexRefused(f"the full-text index {what} {p} is a symbolic link: not used (remove it)")
    if not stat.S_ISREG(st.st_mode):
        raise IndexRefused(f"the full-text index {what} {p} is not a regular file: not used (remove it)")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise IndexRefused(f"the full-text index {what} {p} belongs to another user: not used (remove it)")
    if st.st_nlink != 1:
        raise IndexRefused(f"the full-text index {what} {p} has {st.st_nlink} hard links: not used (remove it)")


def _lstat(p: str) -> Optional[os.stat_result]:
    try:
        return os.lstat(p)
    except FileNotFoundError:
        return None


def ensure_folder(d: str) -> None:
    """The cache folder: created 0700; one that is a link, not a folder, or another user's is refused."""
    os.makedirs(os.path.dirname(d) or ".", mode=0o700, exist_ok=True)
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(d)
    if not stat.S_ISDIR(st.st_mode):
        raise IndexRefused(f"the full-text cache folder {d} is not a folder (a link or a file): not used")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise IndexRefused(f"the full-text cache folder {d} belongs to another user: not used")


def _app_id_of(fd: int) -> Optional[int]:
    """The application id in a SQLite header read from ``fd`` (None: empty file; -1: not SQLite)."""
    head = os.pread(fd, 100, 0)
    if not head:
        return None
    if len(head) < 100 or not head.startswith(_HEADER):
        return -1
    return int.from_bytes(head[68:72], "big")


def _inspect(path: str) -> tuple[os.stat_result, bool]:
    """Open ``path`` without following a link, check it and its header: (its stat, created now).
    A missing file is created here (``O_EXCL``: never one that appeared meanwhile)."""
    created = False
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if _lstat(path) is None:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0), 0o600)
            created = True
        except FileExistsError:
            fd = -1
        if fd >= 0:
            os.close(fd)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        st = _lstat(path)
        if st is not None:
            _check_plain(path, st, "file")
        raise IndexRefused(f"the full-text index file {path} cannot be opened: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        _check_plain(path, st, "file")
        app = _app_id_of(fd)
    finally:
        os.close(fd)
    if app is None:
        if not created and st.st_size:
            raise IndexRefused(f"the full-text index file {path} is unreadable: not used (remove it)")
    elif app != APP_ID:
        raise IndexRefused(f"the full-text index file {path} was not made by Session Lens "
                           f"(application id {app:#x}): not used (remove it)")
    for suffix in _SIDE:
        side = _lstat(path + suffix)
        if side is not None:
            _check_plain(path + suffix, side, "side file")
    return st, created or app is None


def open_index_db(path: str, timeout: float = 10.0) -> tuple[sqlite3.Connection, bool]:
    """A connection to the index database at ``path`` (created when missing): (connection, new).
    ``new``: the file was empty (created now or by a build killed before its first write) and
    now carries our application id.  Raises :class:`IndexRefused` for anything not ours."""
    ensure_folder(os.path.dirname(path))
    st, new = _inspect(path)
    c = sqlite3.connect(path, isolation_level=None, timeout=timeout, check_same_thread=False)
    try:
        again = os.lstat(path)                  # the file SQLite opened is the one inspected
        if (again.st_dev, again.st_ino) != (st.st_dev, st.st_ino) or not stat.S_ISREG(again.st_mode):
            raise IndexRefused(f"the full-text index file {path} changed while it was opened: not used")
        if new:
            c.execute(f"PRAGMA application_id = {APP_ID}")
        elif c.execute("PRAGMA application_id").fetchone()[0] != APP_ID:
            raise IndexRefused(f"the full-text index file {path} was not made by Session Lens: not used")
    except BaseException:
        c.close()
        raise
    return c, new


class BuildLock:
    """The lock a build holds (``flock`` on ``<index>.lock``, a regular file of ours, never a
    link): another process (or thread) sees a build running, and two builds never interleave."""

    def __init__(self, db_path: str):
        self.path = db_path + ".lock"
        self.fd: Optional[int] = None

    def _open(self) -> int:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                     | getattr(os, "O_NONBLOCK", 0), 0o600)
        try:
            _check_plain(self.path, os.fstat(fd), "lock file")
        except BaseException:
            os.close(fd)
            raise
        return fd

    def acquire(self, wait: bool = True) -> bool:
        """Take the lock (``wait``: until the other build ends).  -> False: another build holds it."""
        try:
            import fcntl
        except ImportError:                      # no flock (Windows): builds are not told apart
            return True
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return False
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)              # closing the descriptor drops its lock
            self.fd = None

    def held_elsewhere(self) -> bool:
        """Is a build running now (in another process, or another thread of this one)?"""
        if self.fd is not None:
            return False
        try:
            if self.acquire(wait=False):
                self.release()
                return False
        except OSError:
            return False
        return True
