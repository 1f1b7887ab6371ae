"""Sealed blocks of whole-log results, kept in a temporary file (issue 36).

A whole-log find's hits and the outline's turns are kept packed in compressed blocks
(:mod:`app.ui.find_hits`, :mod:`app.log.query.outline_packed`); held as ``bytes`` they still
grew the window's anonymous memory with the log (~6 MB of hits, ~10 MB of turns on a 4 GB log), and
the background pass's child held its turns' blocks until the end of the pass, when its memory peaks.
:class:`BlockFile` appends each sealed block to an unlinked temporary file (it is gone when the
store is dropped, or when the process ends, whatever way) and reads a block back from that file
(``pread``: the blocks are page cache the system can reclaim and read again, neither the window's heap
nor, as a map of the file was, its resident size: the pass's child reads all its turns' blocks once, to
save them).  Only the rows shown (and a walk in a worker) read blocks, one at a time.  Where no
temporary file can be written (no space, no ``/tmp``), the blocks stay in memory as before.  Blocks go
between processes joined (:meth:`BlockFile.joined`, :meth:`BlockFile.add_joined`); pickled, it is one
buffer of its blocks, read back as a :class:`BlockFile`.
"""
from __future__ import annotations

import os
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from typing import Any, Optional, Union


class BlockFile:
    """An append-only sequence of ``bytes`` blocks in an unlinked temporary file."""

    def __init__(self, blocks: Iterable[bytes] = (), prefix: str = "session-lens-blocks-"):
        self._prefix = prefix              # (the temporary file's name, seen only while it is made)
        self._fd: Optional[int] = None
        self._ends = array("q")           # per block in the file: its end offset
        self._mem: list[bytes] = []       # blocks past the file (it could not be written)
        for b in blocks:
            self.append(b)

    def append(self, b: bytes) -> None:
        if not self._mem and self._write(b):
            return
        self._mem.append(bytes(b))

    def _write(self, b: Union[bytes, memoryview], ends: Optional[Iterable[int]] = None) -> bool:
        """``b`` written at the end of the file: one block, or the blocks ending at ``ends`` within ``b``."""
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
        self._ends.extend([at + len(view)] if ends is None else (at + e for e in ends))
        return True

    def add_joined(self, data: Union[bytes, memoryview], ends: Iterable[int]) -> None:
        """Append the blocks joined in ``data``, the k-th ending at ``ends[k]`` (what :meth:`joined` gives)."""
        ends = array("q", ends)
        if not ends:
            return
        if ends[-1] != len(data) or any(b < a for a, b in zip((0, *ends), ends)):
            raise ValueError("block ends do not fit the data")
        if not self._mem and self._write(data, ends):
            return
        view = memoryview(data)
        self._mem.extend(bytes(view[a:e]) for a, e in zip((0, *ends[:-1]), ends))

    def joined(self, k0: int, k1: int) -> tuple[bytes, array[int]]:
        """Blocks ``k0`` to ``k1`` (excluded) as one ``bytes`` and where each ends in it (:meth:`add_joined`)."""
        n = len(self._ends)
        parts: list[bytes] = []
        if k0 < min(k1, n):
            a = self._ends[k0 - 1] if k0 else 0
            parts.append(self._pread(a, self._ends[min(k1, n) - 1]))
        parts.extend(self._mem[max(0, k0 - n):max(0, k1 - n)])
        ends, at = array("q"), 0
        for k in range(k0, min(k1, len(self))):
            at += self._size(k)
            ends.append(at)
        return b"".join(parts) if len(parts) != 1 else parts[0], ends

    def _size(self, k: int) -> int:
        n = len(self._ends)
        return len(self._mem[k - n]) if k >= n else self._ends[k] - (self._ends[k - 1] if k else 0)

    def _pread(self, a: int, e: int) -> bytes:
        assert self._fd is not None
        out = os.pread(self._fd, e - a, a)
        while len(out) < e - a:          # (a short read: the rest)
            more = os.pread(self._fd, e - a - len(out), a + len(out))
            if not more:
                raise OSError("the blocks' file is shorter than written")
            out += more
        return out

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
        return self._pread(a, e) if a != e else b""

    def __iter__(self) -> Iterator[bytes]:
        return (self[k] for k in range(len(self)))

    def nbytes(self) -> int:
        """Bytes of blocks held (in the file and in memory)."""
        return (self._ends[-1] if self._ends else 0) + sum(len(b) for b in self._mem)

    def close(self) -> None:
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
        """Pickled as ONE buffer of all its blocks and their ends, read back as a :class:`BlockFile` of its own
        (issue 36: as a list of ~1,500 small ``bytes`` at 4 GB, the window's heap stayed scattered once they
        were moved to a file)."""
        return (_joined, (*self.joined(0, len(self)), self._prefix))


def _joined(data: bytes, ends: array[int], prefix: str) -> BlockFile:
    out = BlockFile(prefix=prefix)
    out.add_joined(data, ends)
    return out
