"""Sealed blocks of whole-log results, kept in a temporary file (issue 36).

A whole-log find's hits and the outline's turns are kept packed in compressed blocks
(:mod:`app.ui.find_hits`, :mod:`app.log.query.outline_packed`); held as ``bytes`` they still
grew the window's anonymous memory with the log (~6 MB of hits, ~10 MB of turns on a 4 GB log), and
the background pass's child held its turns' blocks until the end of the pass, when its memory peaks.
:class:`BlockFile` appends each sealed block to an unlinked temporary file (it is gone when the
store is dropped, or when the process ends, whatever way) and reads a block back through a
read-only memory map of that file: the blocks are page cache the system can reclaim and read
again, not the window's heap.  Only the rows shown (and a walk in a worker) read blocks, one
at a time.  Where no temporary file can be written (no space, no ``/tmp``), the blocks stay in
memory as before.  Pickled, it becomes the plain list of its blocks.
"""
from __future__ import annotations

import mmap
import os
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from typing import Any, Optional


class BlockFile:
    """An append-only sequence of ``bytes`` blocks in an unlinked temporary file."""

    def __init__(self, blocks: Iterable[bytes] = (), prefix: str = "session-lens-blocks-"):
        self._prefix = prefix              # (the temporary file's name, seen only while it is made)
        self._fd: Optional[int] = None
        self._ends = array("q")           # per block in the file: its end offset
        self._mem: list[bytes] = []       # blocks past the file (it could not be written)
        self._map: Optional[mmap.mmap] = None
        for b in blocks:
            self.append(b)

    def append(self, b: bytes) -> None:
        if not self._mem and self._write(b):
            return
        self._mem.append(bytes(b))

    def _write(self, b: bytes) -> bool:
        try:
            if self._fd is None:
                f = tempfile.TemporaryFile(prefix=self._prefix)
                self._fd = os.dup(f.fileno())
                f.close()
            at = self._ends[-1] if self._ends else 0
            view = memoryview(b)
            done = 0
            while done < len(view):
                done += os.pwrite(self._fd, view[done:], at + done)
        except OSError:
            return False
        self._ends.append(at + len(b))
        return True

    def __len__(self) -> int:
        return len(self._ends) + len(self._mem)

    def __getitem__(self, k: int) -> bytes:
        n = len(self._ends)
        if k < 0:
            k += len(self)
        if k >= n:
            return self._mem[k - n]
        if k < 0:
            raise IndexError("block index out of range")
        a, e = (self._ends[k - 1] if k else 0), self._ends[k]
        if a == e:
            return b""
        m = self._map
        if m is None or len(m) < e:
            if m is not None:
                m.close()
            assert self._fd is not None
            m = self._map = mmap.mmap(self._fd, self._ends[-1], access=mmap.ACCESS_READ)
        return m[a:e]

    def __iter__(self) -> Iterator[bytes]:
        return (self[k] for k in range(len(self)))

    def nbytes(self) -> int:
        """Bytes of blocks held (in the file and in memory)."""
        return (self._ends[-1] if self._ends else 0) + sum(len(b) for b in self._mem)

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._ends = array("q")

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:   # (interpreter shutdown)
            pass

    def __reduce__(self) -> Any:
        return (list, (list(self),))
