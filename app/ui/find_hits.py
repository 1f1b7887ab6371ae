"""The hits of a whole-log find, kept as columns (issue 36: the window's memory stays flat).

A find on a big log streams up to ``HIT_LIMIT`` hits; kept as :class:`~app.log.query.search.Hit`
objects each cost about ten Python blocks (the object, its dict, its span tuple, its ints), so
the window's heap after a find grew with the log.  :class:`CompactHits` keeps the numbers in
``array`` columns and the kinds and tool names in a small table; the snippets of a streamed batch
are joined into one string (a hit's is a slice of it);
indexing it gives back an equal :class:`Hit` (built on demand: the results view asks only for the
rows it shows).  It is a read-only sequence plus :meth:`extend`; it compares equal to a list of
the same hits.
"""
from __future__ import annotations

from array import array
from typing import Any, Optional
from collections.abc import Iterable, Iterator

from ..log.query.find_match import Hit

NONE = -(1 << 63)          # an absent Optional[int] in a 'q' column


def _opt(v: Optional[int]) -> int:
    return NONE if v is None else v


def _back(v: int) -> Optional[int]:
    return None if v == NONE else v


class CompactHits:
    """Hits as columns; ``hits[i]`` is an equal :class:`Hit`."""

    def __init__(self, hits: Iterable[Hit] = ()):
        self.seqs = array("q")
        self._turn = array("q")
        self._kind = array("H")                  # index into _names
        self._tool = array("H")                  # index into _names (0: None)
        self._nums = array("q")                  # span start, span end, start, end, matches, line, offset, member
        self._texts: list[str] = []              # the snippets of each batch, joined
        self._snip = array("q")                  # per hit: text index, start, end in it
        self._calls: dict[int, str] = {}         # hit index -> call id (tool-call hits)
        self._blocks: set[int] = set()           # hit indexes with ``block`` set
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
        parts: list[str] = []
        at = 0
        k = len(self._texts)
        for h in hits:
            i = len(self.seqs)
            self.seqs.append(h.seq)
            self._turn.append(_opt(h.turn))
            self._kind.append(self._name(h.kind))
            self._tool.append(self._name(h.tool))
            self._nums.extend((h.span[0], h.span[1], h.start, h.end, h.matches, _opt(h.line), _opt(h.offset),
                               _opt(h.member)))
            parts.append(h.snippet)
            self._snip.extend((k, at, at + len(h.snippet)))
            at += len(h.snippet)
            if h.call is not None:
                self._calls[i] = h.call
            if h.block:
                self._blocks.add(i)
        if parts:
            self._texts.append("".join(parts))

    def _snippet(self, i: int) -> str:
        k, a, b = self._snip[3 * i:3 * i + 3]
        return self._texts[k][a:b]

    def __len__(self) -> int:
        return len(self.seqs)

    def _hit(self, i: int) -> Hit:
        a, b, start, end, matches, line, offset, member = self._nums[8 * i:8 * i + 8]
        return Hit(seq=self.seqs[i], turn=_back(self._turn[i]), kind=self._names[self._kind[i]] or "",
                   snippet=self._snippet(i), span=(a, b), start=start, end=end, matches=matches,
                   tool=self._names[self._tool[i]], line=_back(line), offset=_back(offset), member=_back(member),
                   call=self._calls.get(i), block=i in self._blocks)

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
