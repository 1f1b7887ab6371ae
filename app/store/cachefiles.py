"""The cache folder is untrusted input: how its files are found, read and written.

Every cache (the seq index, fold checkpoints, the surface index, the title cache) is a *hint*: a
file that does not look exactly right is a miss, and the cache is rebuilt from the log.  The rules:

* the folder (``platformdirs.user_cache_dir("session-lens")``, ``$SESSION_LENS_CACHE_DIR``) is
  created with mode 0700; a folder that is not a directory or is owned by another user turns the
  caches off (:func:`cache_root` answers None), and so does a subfolder that is a symlink;
* a cache file is opened like a log: ``O_NOFOLLOW`` (a symlink is refused), ``O_NONBLOCK`` (a FIFO
  never blocks), regular files only (a device, FIFO or socket is refused), and read only up to a
  bound given by the caller (:func:`read_bounded`; a bigger file is a miss, never read);
* files are written atomically: a temp file made with ``O_EXCL`` in the (checked) folder, then
  renamed over the old one (:func:`write_atomic`);
* their digests are keyed (:func:`digest_key`: 32 random bytes in ``<cache>/key``, made once with
  ``O_EXCL``, mode 0600): a cache file made elsewhere, or re-signed by anyone who cannot read the key,
  is a miss.  (Whoever can read the key can still forge a file: a fork checks what it copies anyway.)
"""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Optional, Union
from collections.abc import Iterable
from array import array

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
Part = Union[bytes, bytearray, memoryview, "array[int]"]


def _owned_dir(st: os.stat_result) -> bool:
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()


def cache_root() -> Optional[Path]:
    """The cache folder (None: caching is off, or the folder is not a directory of this user)."""
    if os.environ.get("SESSION_LENS_INDEX_CACHE") == "0":
        return None
    env = os.environ.get("SESSION_LENS_CACHE_DIR")
    if env:
        root = Path(env)
    else:
        import platformdirs
        root = Path(platformdirs.user_cache_dir("session-lens", appauthor=False))
    try:
        st = os.stat(root)          # (the folder itself may be reached through a link the user made)
    except FileNotFoundError:
        return root                 # created 0700 by the first write
    except OSError:
        return None
    return root if _owned_dir(st) else None


def safe_dir(folder: Path) -> bool:
    """Create ``folder`` (and the cache root: mode 0700) if missing; whether both are directories of
    this user, ``folder`` no symlink (the root may be one the user made)."""
    root = cache_root()
    if root is None:
        return False
    try:
        os.makedirs(root, mode=0o700, exist_ok=True)
        if folder != root:
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                pass
        st = os.stat(root)
        sub = os.lstat(folder)
    except OSError:
        return False
    return _owned_dir(st) and _owned_dir(sub)


def open_cache_file(path: Path) -> Optional[int]:
    """A read-only descriptor of the regular cache file ``path`` (no symlink, no FIFO or device,
    never blocking); None when it is missing or anything else."""
    try:
        fd = os.open(path, _FLAGS)
    except OSError:                 # (ELOOP: a symlink; ENXIO: a FIFO without a writer, ...)
        return None
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and (st.st_uid == os.getuid()):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def read_bounded(path: Path, limit: int) -> Optional[bytes]:
    """The bytes of the regular cache file ``path`` when it holds at most ``limit`` bytes; None
    when it is missing, bigger, not a regular file of this user, or a symlink."""
    fd = open_cache_file(path)
    if fd is None:
        return None
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            return None
        parts, got = [], 0
        while got <= size:          # (one byte more than fstat said: a file growing meanwhile is a miss)
            chunk = os.read(fd, size + 1 - got)
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
        return b"".join(parts) if got == size else None
    except OSError:
        return None
    finally:
        os.close(fd)


def write_atomic(path: Path, parts: Iterable[Part]) -> None:
    """``parts`` written one after another into a temp file (``O_EXCL``, mode 0600) in the folder,
    then renamed to ``path``.  Raises OSError when the folder is not a safe one (see :func:`safe_dir`)."""
    if not safe_dir(path.parent):
        raise PermissionError(f"{path.parent}: not a cache folder of this user")
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=str(path.parent))
    try:
        with os.fdopen(fd, "wb") as f:
            for part in parts:
                f.write(part)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


_KEY_BYTES = 32
_key_cache: dict[str, bytes] = {}


def digest_key() -> bytes:
    """The key of the cache files' BLAKE2b digests (b"": no cache folder, or no key could be made)."""
    root = cache_root()
    if root is None:
        return b""
    name = str(root)
    if name in _key_cache:
        return _key_cache[name]
    path = root / "key"
    key = read_bounded(path, _KEY_BYTES)
    if key is None or len(key) != _KEY_BYTES:
        key = b""
        if safe_dir(root):
            new = os.urandom(_KEY_BYTES)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                             0o600)
            except FileExistsError:      # (a key made meanwhile, or a foreign file there: read it, or no key)
                got = read_bounded(path, _KEY_BYTES)
                key = got if got is not None and len(got) == _KEY_BYTES else b""
            except OSError:
                pass
            else:
                with os.fdopen(fd, "wb") as f:
                    f.write(new)
                key = new
    _key_cache[name] = key
    return key
