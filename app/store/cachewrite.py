"""Signed cache files written from their parts (issue 36): the parts go to the file one after another and
into the digest as they are, never joined into one more copy of the whole body (the background pass writes
its products at its memory peak)."""
from __future__ import annotations

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
