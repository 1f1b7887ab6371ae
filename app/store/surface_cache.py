"""The surface status index saved beside the seq index (``<key>.surface``): built by one pass the first time, then
reused, or extended when the log grew (:func:`cached_surface`, :func:`saved_surface`).  The cache files' identity,
trust and atomic writes are those of :mod:`app.store.indexcache`."""
from __future__ import annotations

import hashlib
import itertools
import mmap
import os
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Callable

import msgspec

from ..log.fold.shadowmap import Column, wide_pieces
from ..log.fold.surface import ScanEnd, SurfaceIndex, SurfaceState
from ..log.source.sources import RawJsonlSource
from .cachefiles import open_cache_file
from .cachewrite import write_signed_stream
from .indexcache import (CacheSlot, cache_slot, DIGEST_SIZE, cache_size_limit, keyed_hasher, tail_hash)

if TYPE_CHECKING:
    from ..log.index.reader import LogReader

__all__ = ["cached_surface", "saved_surface", "surface_on_disk"]

# ``<key>.surface``: SURFACE_MAGIC, the head's length (u32), the head (MessagePack, :class:`_SurfaceFile`),
# zero padding to a multiple of 8, the fold's columns (:data:`_COLUMNS`, native 8-byte ints, the lengths
# in the head), a blake2b digest of all that.  The columns are mapped from the file, not read in: a page
# looks up a few seqs in them, so memory stays that of the head however long the log.
SURFACE_MAGIC = b"SLSUR\x00\x05\n"
SURFACE_FORMAT = 5
_COLUMNS = ("shadowed", "by", "ends", "sh_order", "by_order")


class _SurfaceFile(msgspec.Struct):
    """The head of ``<key>.surface``: a log's surface index (:mod:`app.log.fold.surface`) and how far it read."""
    format: int
    path: str
    dev: int
    ino: int
    kind: str
    size: int
    mtime_ns: int
    ctime_ns: int
    header: str               # hash of the header row
    upto: int                 # position of the first stored row not folded in (the cut, a torn row, the end)
    line: Optional[int]       # its line number
    tail: str                 # hash of the bytes before ``upto`` (see tail_hash)
    state: SurfaceState       # (without its columns)
    byteorder: str            # of the columns (sys.byteorder when saved)
    lengths: list[int]        # of the columns, in _COLUMNS order


def _save_surface(path: Path, head: _SurfaceFile, columns: dict[str, Any]) -> None:
    """Write ``<key>.surface`` (atomically; the head not copied, the columns straight from their arrays, a narrow
    one widened a piece at a time: issue 36, the pass child's peak)."""
    body = msgspec.msgpack.encode(head)
    pad = bytes(-(len(SURFACE_MAGIC) + 4 + len(body)) % 8)
    write_signed_stream(path, itertools.chain((SURFACE_MAGIC, struct.pack("<I", len(body)), body, pad),
                                              *(wide_pieces(columns[name]) for name in _COLUMNS)))


def _load_surface(path: Path, limit: int = 1 << 36) -> Optional[tuple[_SurfaceFile, dict[str, Column]]]:
    """(head, columns) of a sound ``<key>.surface`` file; the columns are read-only views of a map of
    the file.  None: missing, corrupt, foreign, another format or byte order."""
    fd = open_cache_file(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > limit or size < len(SURFACE_MAGIC) + 4 + DIGEST_SIZE or f.read(len(SURFACE_MAGIC)) != SURFACE_MAGIC:
                return None
            h = keyed_hasher(SURFACE_MAGIC)
            buf = bytearray(1 << 16)
            left = size - len(SURFACE_MAGIC) - DIGEST_SIZE
            while left > 0:                # (read in steps: the columns are checked, not kept)
                n = f.readinto(memoryview(buf)[:min(left, len(buf))])
                if not n:
                    return None
                h.update(memoryview(buf)[:n])
                left -= n
            if f.read(DIGEST_SIZE) != h.digest():
                return None
            (n,) = struct.unpack("<I", os.pread(f.fileno(), 4, len(SURFACE_MAGIC)))
            at = len(SURFACE_MAGIC) + 4
            head = msgspec.msgpack.decode(os.pread(f.fileno(), n, at), type=_SurfaceFile)
            sh, by, ends, sh_order, by_order = head.lengths if len(head.lengths) == len(_COLUMNS) else (-1,) * 5
            if head.format != SURFACE_FORMAT or head.byteorder != sys.byteorder or min(head.lengths, default=-1) < 0 \
                    or sh_order != sh or not by == ends == by_order:
                return None
            at += n + (-(at + n) % 8)
            if at + 8 * sum(head.lengths) != size - DIGEST_SIZE:
                return None
            cols: dict[str, Column] = {}
            if sum(head.lengths):
                whole = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))
                for name, length in zip(_COLUMNS, head.lengths):
                    cols[name] = whole[at:at + 8 * length].cast("q")
                    at += 8 * length
                if by and cols["ends"][-1] != sh:
                    return None
            else:
                cols = {name: memoryview(b"").cast("q") for name in _COLUMNS}
            return head, cols
    except (OSError, ValueError, msgspec.DecodeError, struct.error):
        return None


def _surface_slot(reader: LogReader) -> Optional[CacheSlot]:
    """The ``.surface`` cache file of a raw JSONL or zstd log (a zstd log: its surface index saved and used for the
    very same file only; one that changed is read again), else None."""
    slot = cache_slot(reader, ".surface")
    return slot if slot is not None and (isinstance(slot.src, RawJsonlSource) or slot.src.kind == "zstd") else None


def surface_on_disk(reader: LogReader) -> bool:
    """Whether ``<key>.surface`` holds a sound index of this very revision of the log (same file, size, times and
    header): what a window's surface job then reads with no pass (:func:`saved_surface` says "hit").  The background
    pass tells the window so instead of sending it the index (issue 36: the window maps its columns from the file, and
    neither process pickles them)."""
    slot = _surface_slot(reader)
    if slot is None:
        return False
    src, ident, path = slot
    loaded = _load_surface(path, cache_size_limit(src.size))
    if loaded is None:
        return False
    saved = loaded[0]
    return (saved.path, saved.dev, saved.ino, saved.kind, saved.size, saved.mtime_ns, saved.ctime_ns) == \
        (ident["path"], ident["dev"], ident["ino"], ident["kind"], ident["size"], ident["mtime_ns"], ident["ctime_ns"]) \
        and saved.header == hashlib.sha256(src.header_raw).hexdigest() and src.header_end <= saved.upto <= src.size \
        and saved.tail == tail_hash(src.fd, src.header_end, saved.upto)


def cached_surface(reader: LogReader,
                   make: Optional[Callable[[ScanEnd], SurfaceIndex]] = None) -> tuple[SurfaceIndex, str]:
    got = saved_surface(reader, make, build=True)
    assert got is not None
    return got


def saved_surface(reader: LogReader, make: Optional[Callable[[ScanEnd], SurfaceIndex]] = None,
                  build: bool = False) -> Optional[tuple[SurfaceIndex, str]]:
    """:func:`cached_surface`; ``build`` False: None where the index would be built from scratch (no read).
    The log's surface status index, saved beside its seq index and made the reader's
    (:func:`app.log.fold.surface.remember`), so that a page labels its rows without a pass over the log.

    Built by one pass the first time (or when the log was replaced, truncated or rewritten), then
    reused; a grown log (append-only, spec §1.5: the bytes before ``upto`` are checked as for the
    index) is extended from where the saved pass stopped (the repair cut or a torn last row, which
    are read again).  Raw JSONL files only (others: the in-memory index, "uncached").  ``make(end)``: how
    to build it from scratch (setting where the scan stopped in ``end``; the one background pass).
    -> (SurfaceIndex, "hit" | "extended" | "built" | "uncached")."""
    from ..log.fold.surface import extend_index, index_for, index_key, remember
    slot = _surface_slot(reader)
    if slot is None:
        if not build:
            return None
        if make is not None and getattr(reader, "cached_surface_index", (None,))[0] != index_key(reader):
            remember(reader, make(ScanEnd()))
        return index_for(reader), "uncached"
    src, ident, path = slot
    header_hash = hashlib.sha256(src.header_raw).hexdigest()
    loaded = _load_surface(path, cache_size_limit(src.size))
    saved, columns = loaded if loaded is not None else (None, None)
    unchanged = saved is not None and \
        (saved.size, saved.mtime_ns, saved.ctime_ns) == (ident["size"], ident["mtime_ns"], ident["ctime_ns"])
    if saved is not None:
        # (the repair cut only matters when the log changed: unchanged, it is where the saved pass stopped)
        cut = None if unchanged else reader.tail_state().cut_pos
        same = saved.header == header_hash and \
            (saved.path, saved.dev, saved.ino, saved.kind) == (ident["path"], ident["dev"], ident["ino"], ident["kind"])
        grown = ident["size"] > saved.size and src.kind == "jsonl"
        if not (same and (unchanged or grown) and src.header_end <= saved.upto <= src.size
                and (cut is None or (isinstance(cut, int) and cut >= saved.upto))
                and saved.tail == tail_hash(src.fd, src.header_end, saved.upto)):
            saved = None
    end = ScanEnd()
    if saved is not None:
        idx = SurfaceIndex.from_state(saved.state, columns)
        status = "hit"
        if saved.upto < src.size and not unchanged:        # (unchanged: the same cut or torn row stops it)
            assert isinstance(src, RawJsonlSource)              # (a zstd log is used unchanged only)
            extend_index(reader, idx, src.forward(saved.upto, line0=saved.line), end)
            status = "extended"
        else:
            end.pos, end.line = saved.upto, saved.line
    elif not build:
        return None
    else:
        idx = make(end) if make is not None else extend_index(reader, SurfaceIndex(reader.version), None, end)
        status = "built"
    remember(reader, idx)
    upto = end.pos if isinstance(end.pos, int) else src.header_end
    if status != "hit" and (saved is None or upto != saved.upto):
        state = idx.to_state(wide=False)         # (the columns widened as they are written)
        cols, state.columns = state.columns or {}, None
        out = _SurfaceFile(format=SURFACE_FORMAT, path=ident["path"], dev=ident["dev"], ino=ident["ino"],
                           kind=ident["kind"], size=ident["size"], mtime_ns=ident["mtime_ns"],
                           ctime_ns=ident["ctime_ns"], header=header_hash,
                           upto=upto, line=end.line, tail=tail_hash(src.fd, src.header_end, upto), state=state,
                           byteorder=sys.byteorder, lengths=[len(cols[name]) for name in _COLUMNS])
        try:
            _save_surface(path, out, cols)
        except (OSError, ValueError):      # (ValueError: log text that is no Unicode, e.g. a lone surrogate: not saved)
            pass
    return idx, status
