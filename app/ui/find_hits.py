"""The hits of a whole-log find, kept packed (issue 36: the window's memory stays flat).

A find on a big log streams up to ``HIT_LIMIT`` hits; kept as :class:`~app.log.query.search.Hit`
objects each cost about ten Python blocks (the object, its dict, its span tuple, its ints), so
the window's heap after a find grew with the log.  :class:`CompactHits` keeps only the seqs in
an ``array`` (the steps to the next hit and the row lookups bisect them); every other field of
a hit (numbers, kind, tool, snippet) is one tuple in a block of up to ``BLOCK_HITS`` hits or
``BLOCK_BYTES`` of snippet text, pickled and zlib-compressed once full (log text packs 4-8x, the
numbers and names repeat) and appended to a :class:`~app.ui.blockfile.BlockFile` (an unlinked
temporary file, read back through a memory map: not the window's heap).  A hit is unpacked
when its row is shown (the last block read is kept unpacked, so a scroll or a walk unpacks each
block once), never read from the log.  Indexing gives back an equal :class:`Hit`.  It is a
read-only sequence plus :meth:`extend`; it compares equal to a list of the same hits.
"""
from __future__ import annotations

import bisect
import pickle
import zlib
from array import array
from typing import Any
from collections.abc import Iterable, Iterator

from ..log.query.find_match import Hit
from .blockfile import BlockFile

BLOCK_HITS = 256           # hits a compressed block holds at most ...
BLOCK_BYTES = 32 << 10     # ... and snippet characters (a block is sealed at either)


def _fields(h: Hit) -> tuple:
    return (h.turn, h.kind, h.snippet, h.span[0], h.span[1], h.start, h.end, h.matches, h.tool, h.line, h.offset,
            h.member, h.call, h.block)


def _hit(seq: int, f: tuple) -> Hit:
    turn, kind, snippet, a, b, start, end, matches, tool, line, offset, member, call, block = f
    return Hit(seq=seq, turn=turn, kind=kind, snippet=snippet, span=(a, b), start=start, end=end, matches=matches,
               tool=tool, line=line, offset=offset, member=member, call=call, block=block)


class CompactHits:
    """Hits as a seq column plus packed blocks; ``hits[i]`` is an equal :class:`Hit`."""

    def __init__(self, hits: Iterable[Hit] = ()):
        self.seqs = array("q")
        self._blocks = BlockFile()               # sealed blocks: pickled field tuples, compressed
        self._block_first = array("q")           # first hit of each block (sealed ones, then the open one)
        self._tail: list[tuple] = []             # the open block's field tuples
        self._tail_chars = 0
        self._open: tuple[int, list] = (-1, [])  # the last sealed block read, unpacked
        self.extend(hits)

    def extend(self, hits: Iterable[Hit]) -> None:
        for h in hits:
            if not self._tail:
                self._block_first.append(len(self.seqs))
            self.seqs.append(h.seq)
            self._tail.append(_fields(h))
            self._tail_chars += len(h.snippet)
            if len(self._tail) >= BLOCK_HITS or self._tail_chars >= BLOCK_BYTES:
                self._blocks.append(zlib.compress(pickle.dumps(self._tail, pickle.HIGHEST_PROTOCOL), 6))
                self._tail = []
                self._tail_chars = 0

    def __len__(self) -> int:
        return len(self.seqs)

    def _hit(self, i: int) -> Hit:
        k = bisect.bisect_right(self._block_first, i) - 1
        off = i - self._block_first[k]
        if k >= len(self._blocks):
            return _hit(self.seqs[i], self._tail[off])
        if self._open[0] != k:
            self._open = (k, pickle.loads(zlib.decompress(self._blocks[k])))
        return _hit(self.seqs[i], self._open[1][off])

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._hit(k) for k in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("hit index out of range")
        return self._hit(i)

    def __iter__(self) -> Iterator[Hit]:
        return (self._hit(k) for k in range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, CompactHits)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]
