"""Atomic publication of a file (spec §1.5): temp file, fsync, link (never clobbers), fsync dir."""
from __future__ import annotations

import fcntl
import os
import re
import secrets
import time
from collections.abc import Callable, Iterable
from typing import Optional, Union


class PublishError(Exception):
    pass


PUBLISH_STEPS = ("tmp-created", "tmp-partly-written", "tmp-written", "tmp-fsynced", "linked", "dir-fsynced", "tmp-unlinked")


def fault(step: str) -> None:
    """Crash-injection hook for tests: SIGKILL this process at a named step."""
    want = os.environ.get("SESSION_LENS_FAULT_STEP")
    if want and want == step:
        import signal
        os.kill(os.getpid(), signal.SIGKILL)


def fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path: str, mode: int = 0o700) -> None:
    """mkdir -p with every created parent fsynced."""
    path = os.path.abspath(path)
    missing = []
    p = path
    while not os.path.isdir(p):
        missing.append(p)
        p = os.path.dirname(p)
    for d in reversed(missing):
        try:
            os.mkdir(d, mode)
        except FileExistsError:
            pass
        fsync_dir(os.path.dirname(d))


COPY_STEP = 8 << 20            # bytes copied per call; the written-back range is handed to the disk after each


def start_writeback(fd: int, offset: int, length: int) -> None:
    """Hand ``[offset, offset + length)`` of ``fd``, just written, to the disk now (asynchronously):
    the final ``fsync`` then waits for the last steps only, not for the whole file.  A hint
    (``POSIX_FADV_DONTNEED`` starts the writeback of dirty pages and keeps them cached until it is
    done); durability still comes from the ``fsync`` alone."""
    advise = getattr(os, "posix_fadvise", None)
    if advise is None or length <= 0:
        return
    try:
        advise(fd, offset, length, os.POSIX_FADV_DONTNEED)
    except OSError:
        pass


class FileRange:
    """A chunk given as a byte range of an open file: copied by the kernel, never through Python.

    ``os.copy_file_range`` (reflinks or in-kernel copies), else ``os.sendfile``, else a
    read/write loop, in steps of ``COPY_STEP`` whose writeback starts as each step is copied
    (:func:`start_writeback`).  A source that ends early (shrank under the copy) raises ``PublishError``."""

    def __init__(self, fd: int, start: int, stop: int, on_step: Optional[Callable[[int], None]] = None):
        self.fd, self.start, self.stop = fd, start, stop
        self.on_step = on_step          # called with the bytes of each step copied (progress; may raise to stop)

    def __len__(self) -> int:
        return self.stop - self.start

    def copy_into(self, out_fd: int) -> str:
        at, stop = self.start, self.stop
        out_at = os.lseek(out_fd, 0, os.SEEK_CUR)
        how = "copy_file_range"
        while at < stop:
            n = min(stop - at, COPY_STEP)
            k = None
            if how == "copy_file_range":
                try:
                    k = os.copy_file_range(self.fd, out_fd, n, at)
                except (OSError, AttributeError):
                    how = "sendfile"
            if k is None and how == "sendfile":
                try:
                    k = os.sendfile(out_fd, self.fd, at, n)
                except (OSError, AttributeError):
                    how = "read-write"
            if k is None:
                chunk = os.pread(self.fd, n, at)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out_fd, view):]
                k = len(chunk)
            if k == 0:
                raise PublishError(f"the source ended at byte {at} while {stop - at} more bytes were being copied")
            start_writeback(out_fd, out_at, k)
            at += k
            out_at += k
            if self.on_step is not None:
                self.on_step(k)
        return how


STALE_AFTER_S = 600.0
_TMP_RE = re.compile(r"^(.+)\.[0-9a-f]{12}\.tmp$")


def clean_stale_temps(root: str, depth: int = 1, older_than: float = STALE_AFTER_S) -> list[str]:
    """Remove temporaries left by an interrupted publication under ``root`` (and ``depth``
    levels of sub-folders); returns the removed paths.

    Safe by construction: only names of our own pattern ``<final>.<12 hex>.tmp``, only
    regular files not modified for ``older_than`` seconds, and only when no writer holds the
    lock every publication keeps on its temporary while it writes.  A folder that held
    nothing but such a temporary (an interrupted fork's child folder) is removed too."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    now = time.time()
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False):
                if depth > 0:
                    got = clean_stale_temps(e.path, depth - 1, older_than)
                    removed += got
                    if got:
                        try:
                            os.rmdir(e.path)          # only succeeds when it is now empty
                        except OSError:
                            pass
                continue
            if not _TMP_RE.match(e.name) or not e.is_file(follow_symlinks=False):
                continue
            if now - e.stat(follow_symlinks=False).st_mtime < older_than:
                continue
            fd = os.open(e.path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    continue                          # a live writer holds it
                os.unlink(e.path)
                removed.append(e.path)
            finally:
                os.close(fd)
        except OSError:
            continue
    if removed:
        try:
            fsync_dir(root)
        except OSError:
            pass
    return removed


# what publish_file (and the session writer) write: bytes, or a byte range of an open file
Chunk = Union[bytes, FileRange]

def publish_file(final: str, chunks: Iterable[Chunk], overwrite: bool = False, mode: int = 0o600) -> str:
    """Write ``chunks`` to ``final`` atomically; with ``overwrite=False`` an existing file is an error.

    A chunk may be a :class:`FileRange` (copied by the kernel at the current end of the file).
    The temporary is locked (``flock``) while it exists, so :func:`clean_stale_temps`
    never takes a live writer's temporary for a stale one."""
    final = os.path.abspath(final)
    d = os.path.dirname(final)
    make_dirs(d)
    clean_stale_temps(d, depth=0)
    tmp = f"{final}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        pass
    try:
        fault("tmp-created")
        with os.fdopen(fd, "wb", closefd=True) as f:
            first = True
            for c in chunks:
                if isinstance(c, FileRange):
                    f.flush()
                    c.copy_into(f.fileno())
                else:
                    f.write(c)
                if first:
                    f.flush()
                    fault("tmp-partly-written")
                    first = False
            f.flush()
            fault("tmp-written")
            os.fsync(f.fileno())
        fault("tmp-fsynced")
        if overwrite:
            os.replace(tmp, final)
            fault("linked")
        else:
            try:
                os.link(tmp, final)
            except FileExistsError:
                raise PublishError(f"{final} already exists (refusing to overwrite)") from None
            fault("linked")
            fsync_dir(d)
            fault("dir-fsynced")
            os.unlink(tmp)
            fault("tmp-unlinked")
        fsync_dir(d)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return final
