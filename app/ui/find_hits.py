"""The hits of a whole-log find, kept as columns (issue 36: the window's memory stays flat).

A find on a big log streams up to ``HIT_LIMIT`` hits; kept as :class:`~app.log.query.search.Hit`
objects each cost about ten Python blocks (the object, its dict, its span tuple, its ints), so
the window's heap after a find grew with the log.  :class:`CompactHits` keeps the numbers in
``array`` columns (32-bit while the values fit, :class:`IntColumn`) and the kinds and tool names
in a small table.  The snippets are UTF-8 in blocks of up to ``BLOCK_HITS`` hits, each block
zlib-compressed once full (log text packs 4-8x; a joined ``str`` took 2 bytes a character as
soon as one snippet held a "…"), with each hit's end offset in its block; a snippet is decoded
from memory when its row is shown (the last block read is kept decompressed), never read
from the log.  Indexing gives back an equal :class:`Hit`.  It is a read-only sequence plus
:meth:`extend`; it compares equal to a list of the same hits.
"""
from __future__ import annotations

import bisect
import zlib
from array import array
from typing import Any, Optional
from collections.abc import Iterable, Iterator

from ..log.query.find_match import Hit

BLOCK_HITS = 256           # snippets a compressed block holds at most ...
BLOCK_BYTES = 32 << 10     # ... and UTF-8 bytes (a block is sealed at either)
_I32 = 1 << 31


class IntColumn:
    """A column of Optional[int]: ``array('i')`` while every value fits 32 bits, then ``'q'``
    (None is the type's smallest value, which no stored int takes)."""
    __slots__ = ("a",)

    def __init__(self) -> None:
        self.a = array("i")

    def append(self, v: Optional[int]) -> None:
        a = self.a
        if a.typecode == "i":
            if v is None or -_I32 < v < _I32:
                a.append(-_I32 if v is None else v)
                return
            self.a = a = array("q", ((-(1 << 63) if x == -_I32 else x) for x in a))
        if v is not None and v <= -(1 << 63):
            raise OverflowError("hit field out of range")
        a.append(-(1 << 63) if v is None else v)

    def __getitem__(self, i: int) -> Optional[int]:
        x = self.a[i]
        return None if x == (-_I32 if self.a.typecode == "i" else -(1 << 63)) else x

    def __len__(self) -> int:
        return len(self.a)


_NUMS = ("turn", "a", "b", "start", "end", "matches", "line", "offset", "member")


class CompactHits:
    """Hits as columns; ``hits[i]`` is an equal :class:`Hit`."""

    def __init__(self, hits: Iterable[Hit] = ()):
        self.seqs = array("q")
        self._kind = array("H")                  # index into _names
        self._tool = array("H")                  # index into _names (0: None)
        self._nums = {k: IntColumn() for k in _NUMS}
        self._blocks: list[bytes] = []           # sealed snippet blocks, compressed
        self._block_first = array("q")           # first hit of each block (sealed ones, then the open one)
        self._ends = IntColumn()                 # per hit: its snippet's end offset in its block
        self._tail: list[bytes] = []             # the open block's snippets (UTF-8)
        self._tail_bytes = 0
        self._open: tuple[int, bytes] = (-1, b"")   # the last sealed block read, decompressed
        self._calls: dict[int, str] = {}         # hit index -> call id (tool-call hits)
        self._flagged: set[int] = set()          # hit indexes with ``block`` set
        self._names: list[Optional[str]] = [None]
        self._name_ix: dict[Optional[str], int] = {None: 0}
        self.extend(hits)

    def _name(self, s: Optional[str]) -> int:
        i = self._name_ix.get(s)
        if i is None:
            i = self._name_ix[s] = len(self._names)
            self._names.append(s)
        return i

    def extend(self, hits: Iterable[Hit]) -> None:
        nums = [self._nums[k] for k in _NUMS]
        for h in hits:
            i = len(self.seqs)
            self.seqs.append(h.seq)
            self._kind.append(self._name(h.kind))
            self._tool.append(self._name(h.tool))
            for col, v in zip(nums, (h.turn, h.span[0], h.span[1], h.start, h.end, h.matches, h.line, h.offset,
                                     h.member)):
                col.append(v)
            self._add_snippet(i, h.snippet)
            if h.call is not None:
                self._calls[i] = h.call
            if h.block:
                self._flagged.add(i)

    def _add_snippet(self, i: int, text: str) -> None:
        if not self._tail:
            self._block_first.append(i)
        b = text.encode("utf-8", "surrogatepass")
        self._tail.append(b)
        self._tail_bytes += len(b)
        self._ends.append(self._tail_bytes)
        if len(self._tail) >= BLOCK_HITS or self._tail_bytes >= BLOCK_BYTES:
            self._blocks.append(zlib.compress(b"".join(self._tail), 6))
            self._tail = []
            self._tail_bytes = 0

    def _snippet(self, i: int) -> str:
        k = bisect.bisect_right(self._block_first, i) - 1
        first = self._block_first[k]
        if k < len(self._blocks):
            if self._open[0] != k:
                self._open = (k, zlib.decompress(self._blocks[k]))
            a = 0 if i == first else self._ends[i - 1]
            data = self._open[1][a:self._ends[i]]
        else:
            data = self._tail[i - first]
        return data.decode("utf-8", "surrogatepass")

    def __len__(self) -> int:
        return len(self.seqs)

    def _hit(self, i: int) -> Hit:
        vals: list[Any] = [self._nums[k][i] for k in _NUMS]
        turn, a, b, start, end, matches, line, offset, member = vals
        return Hit(seq=self.seqs[i], turn=turn, kind=self._names[self._kind[i]] or "",
                   snippet=self._snippet(i), span=(a, b), start=start, end=end, matches=matches,
                   tool=self._names[self._tool[i]], line=line, offset=offset, member=member,
                   call=self._calls.get(i), block=i in self._flagged)

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
