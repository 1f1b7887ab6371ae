"""The fold checkpoints of the one background pass, streamed to their cache file as they are made (issue 36).

A point is final once the next one is made (its ``cited`` span and its turns are then known): the builder
hands it to :class:`FoldsSpool` (``CheckpointBuilder.sink``), which encodes it into an unnamed temp file and
drops it, so the pass holds one point, not the whole log's.  :meth:`FoldsSpool.publish` then writes the
``.folds`` file atomically, byte for byte the file :func:`~app.store.indexcache.cached_checkpoints` writes
for the same points (its JSON with the points spliced in from the spool); a pass cut short publishes
nothing, and the spool goes with its file handle."""
from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, Optional, overload

import msgspec

from ..log.fold.checkpoints import Checkpoint, Checkpoints
from ..log.index.reader import LogReader
from .cachefiles import write_atomic
from .indexcache import cache_slot, FORMAT, MAGIC, file_source_of, keyed_hasher, tail_hash

_CHUNK = 1 << 20
_encode = msgspec.json.Encoder().encode


class FoldsSpool:
    """Where the pass's finished checkpoints go (None from :meth:`open` when the log has no cache file)."""

    def __init__(self, reader: LogReader, path: Path, meta: dict[str, Any]) -> None:
        self.reader, self.path, self.meta = reader, path, meta
        self.file = tempfile.TemporaryFile()
        self.count = 0
        self.upto: Optional[int] = None

    @classmethod
    def open(cls, reader: LogReader, every: int) -> Optional[FoldsSpool]:
        slot = cache_slot(reader, ".folds")
        if slot is None:
            return None
        src, ident, path = slot
        meta = {"format": FORMAT, **ident, "every": every, "header": hashlib.sha256(src.header_raw).hexdigest()}
        return cls(reader, path, meta)

    def __call__(self, point: Checkpoint) -> None:
        """One final point (``CheckpointBuilder.sink``)."""
        self.file.write(_encode(point) if not self.count else b"," + _encode(point))
        self.count += 1
        self.upto = point.pos if self.upto is None else max(self.upto, point.pos)

    def _spooled(self) -> Iterator[bytes]:
        self.file.seek(0)
        while chunk := self.file.read(_CHUNK):
            yield chunk

    def publish(self, rest: Checkpoints) -> None:
        """Write the ``.folds`` file: the spooled points, then ``rest`` (the points still held)."""
        src = file_source_of(self.reader)
        assert src is not None
        pos = [p.pos for p in rest.points] + ([self.upto] if self.upto is not None else [])
        upto = max(pos, default=src.header_end)
        head = _encode({**self.meta, "upto": upto, "tail": tail_hash(src.fd, src.header_end, upto), "points": []})
        assert head.endswith(b"[]}")
        tail = b",".join(_encode(p) for p in rest.points)
        glue = b"," if self.count and rest.points else b""
        h = keyed_hasher(MAGIC + head[:-2])
        for chunk in self._spooled():
            h.update(chunk)
        h.update(glue + tail + b"]}")
        write_atomic(self.path, _Parts([MAGIC + head[:-2]], self.file, [glue + tail + b"]}", h.digest()]))

    def close(self) -> None:
        self.file.close()


class _Parts(Sequence[bytes]):
    """``first``, the spool file's bytes a chunk at a time (read when written, never all at once), ``last``."""

    def __init__(self, first: list[bytes], file: IO[bytes], last: list[bytes]) -> None:
        file.seek(0, 2)
        self.first, self.file, self.last = first, file, last
        self.size = file.tell()
        self.n = -(-self.size // _CHUNK)

    def __len__(self) -> int:
        return len(self.first) + self.n + len(self.last)

    @overload
    def __getitem__(self, i: int) -> bytes: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes]: ...

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(len(self))[i]]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        if i < len(self.first):
            return self.first[i]
        i -= len(self.first)
        if i < self.n:
            self.file.seek(i * _CHUNK)
            return self.file.read(_CHUNK)
        return self.last[i - self.n]
