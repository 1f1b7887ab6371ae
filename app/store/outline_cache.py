"""The outline of a log (turns, errors, problems) saved beside its seq index (issue 29: work done ahead).

A cache file like the others of :mod:`app.store.indexcache`: read through the untrusted-folder rules
(:func:`app.store.cachefiles.read_bounded`: regular file of ours, no links, bounded), checked with the
cache folder's keyed digest, and used only for the same file revision (identity, ctime, header, tail)."""
from __future__ import annotations

import hashlib
import itertools
import os
import zlib
from dataclasses import replace
from collections.abc import Callable, Iterator
from typing import Any, Optional, cast

import msgspec

from ..log.index.reader import LogReader
from ..log.query.outline import Outline, TurnEntry
from ..log.query.outline_packed import CompactTurns
from ..log.source.sources import FileSource
from .cachefiles import read_bounded
from .indexcache import (cache_slot, DIGEST_SIZE, Identity, keyed_hasher, cache_size_limit, tail_hash)
from .cachewrite import write_signed_stream

OUTLINE_MAGIC = b"SLOUT\x00\x01\n"
# 2: the turns say where their errors are stored (error_rows); 3: the turns in compressed blocks after the rest
# (issue 36: written and read back a block at a time, kept packed: the child never holds them all as objects)
OUTLINE_FORMAT = 3
TURNS_PER_BLOCK = 64
_decode_block = msgspec.json.Decoder(list[TurnEntry]).decode
_encode = msgspec.json.Encoder().encode


def _outline_meta(src: FileSource, ident: Identity) -> dict[str, Any]:
    st = os.fstat(src.fd)
    return {"format": OUTLINE_FORMAT, **ident, "ctime_ns": st.st_ctime_ns,
            "header": hashlib.sha256(src.header_raw).hexdigest(), "tail": tail_hash(src.fd, src.header_end, src.size)}


def cached_outline(reader: LogReader, progress: Optional[Callable[[int, int], None]] = None,
                   cancel: Optional[Callable[[], bool]] = None,
                   make: Optional[Callable[[], Any]] = None) -> tuple[Any, str]:
    """The log's outline (:func:`app.log.query.outline.build_outline`: turns, errors, problems), saved beside
    its index, so that a session opened again has its turns, F8 and *Errors only* at once.
    -> (Outline, "hit" | "built" | "uncached"); an outline cut short by ``cancel`` is never saved.
    ``make()``: how to build it (default :func:`build_outline`; the one background pass shares its read)."""
    from ..log.query.outline import build_outline
    build = make if make is not None else (lambda: build_outline(reader, progress, cancel))
    slot = cache_slot(reader, ".outline")
    if slot is None:
        return build(), "uncached"
    src, ident, path = slot
    meta = _outline_meta(src, ident)
    try:
        blob = read_bounded(path, cache_size_limit(src.size))
        if blob is None:
            raise OSError("no outline saved")
        body, digest = memoryview(blob)[:-DIGEST_SIZE], blob[-DIGEST_SIZE:]
        if keyed_hasher(body).digest() == digest and blob.startswith(OUTLINE_MAGIC):
            got = _read(blob, body, meta)
            if got is not None:
                return got, "hit"
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, TypeError, KeyError, ValueError, zlib.error):
        pass
    ol = build()
    if ol.complete:
        try:
            write_signed_stream(path, itertools.chain((OUTLINE_MAGIC,), _parts(ol, meta)))
        except (OSError, ValueError, TypeError, OverflowError, msgspec.EncodeError):
            pass
    return ol, "built"


def _parts(ol: Outline, meta: dict[str, Any]) -> Iterator[bytes]:
    """The saved outline after the magic: a JSON line (``meta``, the outline without its turns and their count),
    then the turns in blocks of ``TURNS_PER_BLOCK``, each a zlib-compressed JSON list after its 4-byte size
    (made while written: issue 36)."""
    yield _encode({**meta, "outline": replace(ol, turns=[]), "turns": len(ol.turns)})
    yield b"\n"
    it = iter(ol.turns)
    while chunk := list(itertools.islice(it, TURNS_PER_BLOCK)):
        block = zlib.compress(_encode(chunk), 6)
        yield len(block).to_bytes(4, "big") + block


def _read(blob: bytes, body: memoryview, meta: dict[str, Any]) -> Optional[Outline]:
    """The outline saved as :func:`_parts` wrote it (``body``: the file less its digest), its turns packed a block
    at a time (None: not this file's)."""
    nl = blob.find(b"\n", len(OUTLINE_MAGIC), len(body))
    if nl < 0:
        return None
    head = msgspec.json.decode(body[len(OUTLINE_MAGIC):nl], type=dict[str, Any])
    if not all(head.get(k) == v for k, v in meta.items()):
        return None
    turns = CompactTurns(building=True, spool=True)      # (its blocks in a temporary file as they are made)
    at, end = nl + 1, len(body)
    while at < end:
        n = int.from_bytes(body[at:at + 4], "big")
        at += 4
        if not 0 < n <= end - at:
            return None
        for t in _decode_block(zlib.decompress(body[at:at + n])):
            turns.add(t)
        at += n
    if len(turns) != head["turns"]:
        return None
    ol = msgspec.convert(head["outline"], Outline)
    ol.turns = cast(list[TurnEntry], turns.seal())
    return ol
