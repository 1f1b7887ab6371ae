"""Write-behind session writer (spec §1.5, §6) with an explicit flush barrier.

* ``append`` copies events into a queue; empty -> non-empty starts a fixed timer
  (``batch_delay_ms``) that later events do not reset; expiry writes the whole pending
  prefix as one batch.  One write at a time; events arriving meanwhile form the next batch.
* The first batch publishes atomically: header + batch into ``<final>.<12hex>.tmp``
  (exclusive, 0600), fsync, ``link`` (never clobbers), fsync of the directory, unlink tmp.
* Later batches append (raw lines, or one zstd frame), fsync; on failure the file is
  truncated back to its prior size and the batch goes back in front of the queue.
* ``flush()`` is a barrier: it returns when everything appended before it is durable
  (or raises the write error).  ``close()`` flushes and stops the thread.
Rows may be given as event dicts (packed per batch like dsh) or as stored row bytes
(copied verbatim, e.g. a fork's seed).
"""
from __future__ import annotations

import os
import threading
import time
from typing import Optional, Union
from collections.abc import Iterable, Iterator

from ..log.format.codec import encode_row, pack_events
from ..log.format.payloads import JsonObj
from .publish import Chunk, FileRange, fault, make_dirs, publish_file

# an event (packed per batch), a stored row's bytes (copied verbatim), or runs of stored bytes
Row = Union[JsonObj, bytes, bytearray, memoryview, "RawText", "RawFrames"]


class WriterError(Exception):
    pass


_fault = fault


def _frame(text: bytes) -> bytes:
    from ..log.source.zstdframes import encode_frame
    return encode_frame(text)


class SessionWriter:
    def __init__(self, path: str, header: JsonObj, fmt: str = "jsonl", batch_delay_ms: int = 200,
                 pack: bool = True, exists: bool = False, retry: bool = True) -> None:
        """``retry=False``: a batch that fails is dropped, not written again; every later
        ``flush``/``append`` raises its error (a one-shot write: a fork's child)."""
        if fmt not in ("jsonl", "zstd"):
            raise ValueError(f"unknown format {fmt!r}")
        if not 1 <= batch_delay_ms <= 2_147_483_647:
            raise ValueError("batch_delay_ms must be 1..2147483647")
        self.path = os.path.abspath(path)
        self.header = header
        self.fmt = fmt
        self.delay = batch_delay_ms / 1000.0
        self.pack = pack
        # a new session is never written into an existing file; ``exists=True`` appends to one
        if not exists and os.path.lexists(self.path):
            raise WriterError(f"{self.path} already exists: a new session is never written into an existing one")
        if exists and not os.path.isfile(self.path):
            raise WriterError(f"{self.path} is not an existing session file to append to")
        self._published = exists
        self._pending: list[Row] = []
        self._deadline: Optional[float] = None
        self._cv = threading.Condition()
        self._writing = False
        self._error: Optional[BaseException] = None
        self._closed = False
        self._abandoned = False
        self._retry = retry
        self._failed: Optional[BaseException] = None    # (retry=False) the error that ended the writer
        self._written_batches = 0
        self._thread = threading.Thread(target=self._run, name=f"writer:{os.path.basename(path)}", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ public
    def append(self, rows: Iterable[Row]) -> None:
        rows = list(rows)
        if not rows:
            return
        with self._cv:
            if self._closed:
                raise WriterError("writer is closed")
            if self._failed is not None:
                raise WriterError(f"write to {self.path} failed: {self._failed}") from self._failed
            if not self._pending or self._error is not None:
                self._deadline = time.monotonic() + self.delay
            self._error = None                      # automatic retry waits for the next event
            self._pending.extend(rows)
            self._cv.notify_all()

    def flush(self, timeout: Optional[float] = None) -> None:
        """Barrier: everything appended so far is durable when this returns."""
        with self._cv:
            if self._failed is not None:
                raise WriterError(f"write to {self.path} failed: {self._failed}") from self._failed
            self._error = None                      # an explicit flush retries a failed batch
            self._deadline = time.monotonic()       # write now
            self._cv.notify_all()
            end = None if timeout is None else time.monotonic() + timeout
            while self._pending or self._writing:
                if self._error is not None and not self._writing:
                    err, self._error = self._error, None
                    raise WriterError(f"write to {self.path} failed: {err}") from err
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise WriterError("flush timed out")
                self._cv.wait(left)
            if self._failed is not None:        # (retry=False: the batch failed and was dropped)
                raise WriterError(f"write to {self.path} failed: {self._failed}") from self._failed

    def close(self) -> None:
        try:
            self.flush()
        finally:
            with self._cv:
                self._closed = True
                self._cv.notify_all()
            self._thread.join(timeout=10)

    def abandon(self, timeout: float = 10.0) -> None:
        """Stop without writing what is pending and without retrying a failed batch (the caller knows
        its rows are bad or incomplete): what was not published stays unpublished.  A write in
        progress runs to its end (success or failure) before this returns."""
        with self._cv:
            self._closed = True
            self._abandoned = True
            self._cv.notify_all()
        self._thread.join(timeout=timeout)

    @property
    def batches_written(self) -> int:
        return self._written_batches

    # ------------------------------------------------------------------ thread
    def _run(self) -> None:
        while True:
            with self._cv:
                while True:
                    if self._closed and (not self._pending or self._abandoned):
                        return
                    if self._pending and self._error is None:
                        now = time.monotonic()
                        if self._deadline is None or now >= self._deadline:
                            break
                        self._cv.wait(self._deadline - now)
                    else:
                        self._cv.wait()
                batch, self._pending = self._pending, []
                self._deadline = None
                self._writing = True
            try:
                self._write(batch)
                with self._cv:
                    self._written_batches += 1
            except BaseException as e:  # put the batch back in front, report once
                with self._cv:
                    if self._retry:
                        self._pending = batch + self._pending
                        self._error = e
                    else:                   # one-shot: dropped with what is pending, for good
                        self._failed, self._pending = e, []
            finally:
                with self._cv:
                    self._writing = False
                    if self._pending and self._deadline is None:
                        self._deadline = time.monotonic() + self.delay
                    self._cv.notify_all()

    def _batch_chunks(self, batch: list[Row]) -> Iterator[Chunk]:
        """The bytes of one batch in the file's format (raw lines, or zstd frames)."""
        text: list[bytes] = []
        dicts: list[JsonObj] = []
        zstd = self.fmt == "zstd"

        def drain_dicts() -> None:
            if dicts:
                rows = pack_events(dicts) if self.pack else dicts
                text.extend(encode_row(r) + b"\n" for r in rows)
                dicts.clear()

        def drain_text() -> bytes:
            drain_dicts()
            if text:
                blob = b"".join(text)
                text.clear()
                return _frame(blob) if zstd else blob
            return b""

        for r in batch:
            if isinstance(r, RawText):
                head = drain_text()
                if head:
                    yield head
                if zstd:
                    yield from _stream_frame(r.chunks)
                else:
                    yield from r.chunks
            elif isinstance(r, RawFrames):
                if not zstd:
                    raise WriterError("RawFrames can only be copied into a zstd session")
                head = drain_text()
                if head:
                    yield head
                yield from r.chunks
            elif isinstance(r, (bytes, bytearray, memoryview)):
                drain_dicts()
                text.append(bytes(r) + b"\n")
            else:
                dicts.append(r)
        tail = drain_text()
        if tail:
            yield tail

    def _write(self, batch: list[Row]) -> None:
        if not self._published:
            header = encode_row(self.header) + b"\n"

            def chunks() -> Iterator[Chunk]:
                yield _frame(header) if self.fmt == "zstd" else header
                yield from self._batch_chunks(batch)
            make_dirs(os.path.dirname(self.path))
            _fault("before-publish")
            publish_file(self.path, chunks(), overwrite=False, mode=0o600)
            _fault("after-publish")
            self._published = True
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            prior = os.fstat(fd).st_size
            try:
                _fault("before-append")
                for c in self._batch_chunks(batch):
                    if isinstance(c, FileRange):
                        c.copy_into(fd)
                        continue
                    view = memoryview(c)
                    while view:
                        n = os.write(fd, view)
                        view = view[n:]
                _fault("before-append-fsync")
                os.fsync(fd)
            except BaseException:
                os.ftruncate(fd, prior)
                os.fsync(fd)
                raise
        finally:
            os.close(fd)


class RawText:
    """Stored rows copied verbatim: an iterable of bytes chunks of complete ``\\n``-terminated rows
    (in a JSONL session a chunk may also be a :class:`FileRange` of the source, copied by the kernel)."""

    def __init__(self, chunks: Iterable[Chunk]) -> None:
        self.chunks = chunks


class RawFrames:
    """Complete zstd frames copied verbatim into a zstd session."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self.chunks = chunks


def _stream_frame(chunks: Iterable[Chunk], level: int = 3) -> Iterator[bytes]:
    """Compress a stream of plaintext chunks into ONE frame (content checksum on)."""
    from ..log.source.zstdlib import zstd
    c = zstd.ZstdCompressor(options={zstd.CompressionParameter.compression_level: level,
                                     zstd.CompressionParameter.checksum_flag: 1})
    for ch in chunks:
        if isinstance(ch, FileRange):
            raise WriterError("a FileRange can only be copied into a JSONL session")
        out = c.compress(ch)
        if out:
            yield out
    yield c.flush(zstd.ZstdCompressor.FLUSH_FRAME)


def write_session(path: str, header: JsonObj, batches: Iterable[list[Row]], fmt: str = "jsonl", pack: bool = True) -> str:
    """Write a whole session now (each element of ``batches`` is one durable batch)."""
    w = SessionWriter(path, header, fmt=fmt, pack=pack, batch_delay_ms=1)
    try:
        for b in batches:
            w.append(b)
            w.flush()
    finally:
        w.close()
    return path
