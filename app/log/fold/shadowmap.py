"""Who shadowed whom, as flat columns of ints (the surface index's replacement record).

A whole-log surface fold records, for every shadowed surface node, the seq that replaced it
(``replaced_by``) and, for every replacement, the nodes it shadowed (``replaced``).  Kept as
dicts and lists of Python ints that costs about 150 bytes per shadowed node: some 200,000
nodes per GB of a compacting log.  :class:`ShadowColumns` keeps the same record in
``array`` columns of 4-byte ints while every seq and position fits in 32 bits (8 bytes per shadowed
node; widened once to 8-byte ints, 16 bytes, when one does not, issue 36):

* ``shadowed``: the shadowed seqs, in the order the fold shadowed them, one run per replacement;
* ``by`` and ``ends``: per replacement, the replacing seq and where its run ends in ``shadowed``;
* ``sh_order`` and ``by_order``: positions in ``shadowed`` and ``by`` sorted by seq (stable: a seq
  recorded twice, possible only in a log that repeats seqs, is found at its last position, as a
  dict's last write wins), searched with :mod:`bisect`.

Entries recorded after the last sort wait at the end of their column (searched there in place while
they are few) and are merged into the sorted orders in batches (appended at C speed when they sort after everything before, the common
case; merged otherwise).  The columns may be read-only views of a saved file (``memoryview``
casts over an mmap, see :mod:`app.store.indexcache`); recording into them copies them first.  The saved
file keeps 8-byte ints: :meth:`ShadowColumns.columns` gives the columns as ``array("q")``.

:attr:`ShadowColumns.replaced_by` and :attr:`ShadowColumns.replaced` are read-only mappings with
the dicts' contents, so a fold's readers need not know which record they read.
"""
from __future__ import annotations

import heapq
from array import array
from bisect import bisect_right
from typing import Any, Optional, Union
from collections.abc import Iterator, MutableMapping

Column = Union["array[int]", memoryview]   # array("i") or ("q"), or a read-only memoryview cast to "q"

NARROW = "i" if array("i").itemsize == 4 else "q"   # 4-byte ints while the values fit (issue 36)
_LOW, _HIGH = -(1 << 31), (1 << 31) - 1

_BATCH = 4096                       # entries waiting before they are sorted in
_SCAN = 1024                        # waiting entries a lookup searches in place (more: sorted in first)
_MEMO = 1 << 16                     # answers of :meth:`ShadowColumns.shadowed_by` remembered (a page's chains share them)


class _Keyed:
    """Lookups in a column of seqs: ``order`` (positions sorted by seq) covers the column's first
    ``len(order)`` entries; the later ones wait in the column itself (no dict of ints, issue 36), searched in
    place while they are few (:data:`_SCAN`), sorted in first otherwise."""

    def __init__(self, col: Column, order: Column) -> None:
        self.col = col
        self.order = order
        self._low: Optional[int] = None       # the lowest seq waiting
        self._count: tuple[int, int] = (0, 0)  # (column length, distinct seqs in it)

    def last(self, seq: int) -> Optional[int]:
        """The last position holding ``seq`` (None: none)."""
        col, start = self.col, len(self.order)
        if len(col) > start:
            if len(col) - start > _SCAN:
                self.settle()
            else:
                assert isinstance(col, array)            # (entries wait only in a column that grows)
                p = None
                try:
                    while True:
                        p = col.index(seq, start)
                        start = p + 1
                except ValueError:
                    pass
                if p is not None:
                    return p
        order, col = self.order, self.col
        i = bisect_right(order, seq, key=col.__getitem__)
        if i and col[order[i - 1]] == seq:
            return int(order[i - 1])
        return None

    def added(self, seq: int) -> None:
        """``seq`` was appended to the column."""
        if self._low is None or seq < self._low:
            self._low = seq
        n = len(self.col) - len(self.order)
        # sorted in every _BATCH entries when they sort after everything before (an append); else
        # only once they are an eighth of the column (each merge walks the whole column)
        if n >= _BATCH and (n >= len(self.order) >> 3 or not self.order or self.col[self.order[-1]] <= self._low):
            self.settle()

    def settle(self) -> None:
        """Sort the waiting entries into ``order`` (the column must be an array by now)."""
        if len(self.order) == len(self.col):
            return
        col = self.col
        start = len(self.order)
        fresh = sorted(range(start, len(col)), key=col.__getitem__)       # (stable: position order on ties)
        code = col.typecode if isinstance(col, array) else "q"   # (positions fit whenever the seqs' column is narrow)
        order = self.order if isinstance(self.order, array) and self.order.typecode == code else array(code, self.order)
        if not order or not fresh or col[order[-1]] <= col[fresh[0]]:
            order.extend(fresh)
        else:                         # (a seq sorting before one recorded earlier: one merge, stable)
            order = array(code, heapq.merge(order, fresh, key=col.__getitem__))
        self.order = order
        self._low = None

    def count(self) -> int:
        """How many distinct seqs (remembered until the column grows)."""
        if self._count[0] != len(self.col):
            self._count = (len(self.col), sum(1 for _ in self.distinct()))
        return self._count[1]

    def distinct(self) -> Iterator[int]:
        """The distinct seqs, ascending."""
        self.settle()
        col, prev = self.col, None
        for p in self.order:
            s = col[p]
            if s != prev:
                yield s
                prev = s


class ShadowColumns:
    """The replacement record of a surface fold as columns (see the module doc)."""

    def __init__(self, shadowed: Optional[Column] = None, by: Optional[Column] = None, ends: Optional[Column] = None,
                 sh_order: Optional[Column] = None, by_order: Optional[Column] = None) -> None:
        self.shadowed: Column = shadowed if shadowed is not None else array(NARROW)
        self.by: Column = by if by is not None else array(NARROW)
        self.ends: Column = ends if ends is not None else array(NARROW)
        self._sh = _Keyed(self.shadowed, sh_order if sh_order is not None else array(NARROW))
        self._by = _Keyed(self.by, by_order if by_order is not None else array(NARROW))
        self._memo: dict[int, Optional[int]] = {}
        self._chains: dict[int, list[int]] = {}           # seq -> its whole chain, when that ends (no cycle)
        self.replaced_by = ShadowedBy(self)
        self.replaced = Replaced(self)

    # ------------------------------------------------------------------ recording
    def record(self, by: int, shadowed: list[int]) -> None:
        """Replacement ``by`` shadowed ``shadowed`` (in surface order; event seqs, which an 8-byte int holds)."""
        if not isinstance(self.shadowed, array):
            self._own()
        assert isinstance(self.shadowed, array) and isinstance(self.by, array) and isinstance(self.ends, array)
        n = len(self.shadowed)
        self._memo.clear()
        self._chains.clear()
        if self.shadowed.typecode != "q" and (n + len(shadowed) > _HIGH or not _LOW <= by <= _HIGH
                                              or (shadowed and not _LOW <= min(shadowed) <= max(shadowed) <= _HIGH)):
            self._widen()
        self.shadowed.extend(shadowed)
        self.by.append(by)
        self.ends.append(n + len(shadowed))
        for s in shadowed:
            self._sh.added(s)
        self._by.added(by)

    def _columns5(self) -> list[Column]:
        return [self.shadowed, self.by, self.ends, self._sh.order, self._by.order]

    def _set5(self, cols: list[array[int]]) -> None:
        self.shadowed, self.by, self.ends, self._sh.order, self._by.order = cols
        self._sh.col, self._by.col = self.shadowed, self.by

    def _widen(self) -> None:
        """A seq or position past 32 bits: every column to 8-byte ints (once)."""
        self._set5([c if isinstance(c, array) and c.typecode == "q" else array("q", c) for c in self._columns5()])

    def _own(self) -> None:
        """Copy read-only columns (a saved file's) into arrays that can grow (4-byte ints when the values fit)."""
        cols = self._columns5()
        fits = len(self.shadowed) <= _HIGH and all(not c or _LOW <= min(c) <= max(c) <= _HIGH for c in cols[:2])
        code = NARROW if fits else "q"
        self._set5([array(code, c) for c in cols])

    def settle(self) -> None:
        self._sh.settle()
        self._by.settle()

    def columns(self, wide: bool = True) -> dict[str, Column]:
        """The five columns (sorted orders complete), as saved: 8-byte ints (narrow columns are copied;
        ``wide`` False: as they are, for :func:`wide_pieces` to write a piece at a time)."""
        self.settle()
        names = ("shadowed", "by", "ends", "sh_order", "by_order")
        return {k: c if not wide or not isinstance(c, array) or c.typecode == "q" else array("q", c)
                for k, c in zip(names, self._columns5())}

    def copy(self) -> ShadowColumns:
        c = ShadowColumns()
        code = self.shadowed.typecode if isinstance(self.shadowed, array) else "q"
        c.shadowed, c.by, c.ends = array(code, self.shadowed), array(code, self.by), array(code, self.ends)
        c._sh = _Keyed(c.shadowed, array(code, self._sh.order))
        c._sh._low = self._sh._low
        c._by = _Keyed(c.by, array(code, self._by.order))
        c._by._low = self._by._low
        c.replaced_by, c.replaced = ShadowedBy(c), Replaced(c)
        return c

    # ------------------------------------------------------------------ queries
    def shadowed_by(self, seq: int) -> Optional[int]:
        """The seq that replaced ``seq`` (None: not shadowed)."""
        memo = self._memo
        if seq in memo:
            return memo[seq]
        if len(memo) >= _MEMO:
            memo.clear()
        p = self._sh.last(seq)
        got = memo[seq] = None if p is None else int(self.by[bisect_right(self.ends, p)])
        return got

    def chain(self, seq: int) -> list[int]:
        """The replacing seq of ``seq``, the one of that, and so on (stopping before a seq seen already)."""
        by = self.shadowed_by
        first = by(seq)
        if first is None:
            return []
        rest = self._chains.get(first)
        if rest is not None:                # (the rows of a page share most of their chains)
            return [first, *rest]
        chain, seen = [first], {first}
        cur = by(first)
        while cur is not None and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            cur = by(cur)
        if cur is None:                     # (ends without a cycle: the chain of ``first`` is the rest)
            if len(self._chains) >= 256:
                self._chains.clear()
            self._chains[first] = chain[1:]
        return chain

    def group(self, g: int) -> list[int]:
        """The seqs replacement ``g`` (its position in :attr:`by`) shadowed, in surface order."""
        lo = self.ends[g - 1] if g else 0
        return list(self.shadowed[lo:self.ends[g]])

    def shadowed_by_seq(self, by: int) -> Optional[list[int]]:
        """The seqs that replacement ``by`` shadowed (None: ``by`` replaced nothing)."""
        g = self._by.last(by)
        return None if g is None else self.group(g)


PIECE = 1 << 15                     # values a piece of :func:`wide_pieces` (256 KB)


def wide_pieces(col: Column) -> Iterator[bytes]:
    """``col``'s values as 8-byte ints, in pieces of :data:`PIECE` values (a narrow column is widened a piece at a
    time: the saved file's columns, written without a whole 8-byte copy of each, issue 36: on a 4 GB log the two
    long columns were ~10 MB of copies at the pass child's peak)."""
    for i in range(0, len(col), PIECE):
        piece = col[i:i + PIECE]
        if isinstance(piece, array) and piece.typecode != "q":
            piece = array("q", piece)
        yield piece.tobytes()


class _ReadOnly:
    def __setitem__(self, key: int, value: Any) -> None:
        raise TypeError("a column record is written through ShadowColumns.record")

    def __delitem__(self, key: int) -> None:
        raise TypeError("a column record is written through ShadowColumns.record")


class ShadowedBy(_ReadOnly, MutableMapping[int, int]):
    """``replaced_by``: shadowed seq -> the seq that replaced it (read-only)."""

    def __init__(self, cols: ShadowColumns) -> None:
        self._c = cols

    def __getitem__(self, seq: int) -> int:
        by = self._c.shadowed_by(seq) if type(seq) is int else None
        if by is None:
            raise KeyError(seq)
        return by

    def __contains__(self, seq: object) -> bool:
        return type(seq) is int and self._c._sh.last(seq) is not None

    def __iter__(self) -> Iterator[int]:
        return self._c._sh.distinct()

    def __len__(self) -> int:
        return self._c._sh.count()


class Replaced(_ReadOnly, MutableMapping[int, list[int]]):
    """``replaced``: replacing seq -> the seqs it shadowed, in surface order (read-only)."""

    def __init__(self, cols: ShadowColumns) -> None:
        self._c = cols

    def __getitem__(self, seq: int) -> list[int]:
        got = self._c.shadowed_by_seq(seq) if type(seq) is int else None
        if got is None:
            raise KeyError(seq)
        return got

    def __contains__(self, seq: object) -> bool:
        return type(seq) is int and self._c._by.last(seq) is not None

    def __iter__(self) -> Iterator[int]:
        return self._c._by.distinct()

    def __len__(self) -> int:
        return self._c._by.count()
