"""Signed cache files written from their parts (issue 36): the parts go to the file one after another and
into the digest as they are, never joined into one more copy of the whole body (the background pass writes
its products at its memory peak)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Union


def write_signed(path: Path, *parts: Union[bytes, memoryview]) -> None:
    """``parts`` then their keyed digest, written atomically: the same bytes as
    ``write_parts_atomic(path, body + keyed_hasher(body).digest())`` with ``body = b"".join(parts)``."""
    from .indexcache import keyed_hasher, write_parts_atomic     # (indexcache imports this module)
    h = keyed_hasher()
    for p in parts:
        h.update(p)
    write_parts_atomic(path, *parts, h.digest())


def write_signed_stream(path: Path, parts: Iterable[bytes]) -> None:
    """:func:`write_signed` of parts made while they are written (each is hashed, written and let go: the whole
    body is never held); a part that raises leaves nothing written."""
    from .indexcache import keyed_hasher
    from .cachefiles import write_atomic

    def signed() -> Iterator[bytes]:
        h = keyed_hasher()
        for p in parts:
            h.update(p)
            yield p
        yield h.digest()
    write_atomic(path, signed())
