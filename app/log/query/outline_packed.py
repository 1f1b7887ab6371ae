"""The outline's turns, kept packed (issue 36: the window's memory stays flat).

The outline holds one :class:`~app.log.query.outline.TurnEntry` per turn of the whole log; as
objects each cost about ten Python blocks (the object, its dict, its tools dict, its error list,
its prompt, its ints), so the window's heap after the outline pass grew with the log.
:class:`CompactTurns` keeps the turns in blocks of ``TURN_BLOCK``, each one zlib-compressed pickle
of the turns' field tuples (a few KB: prompts pack 3-5x, and a few big blocks leave no small
long-lived objects among the freed ``TurnEntry`` ones, so the allocator can give their memory
back), plus the turn numbers and first seqs in ``array`` columns, and the whole log's errors:
:attr:`error_seqs` (sorted, an ``array``) and :attr:`error_where` (:class:`ErrorRows`).
Indexing gives back an equal ``TurnEntry``, unpacked from memory (the outline view asks only for
the rows it shows; the last block read is kept unpacked).  A read-only sequence.

The outline child packs its outline's turns before sending them (``app.store.scan_child``): the
window then never unpickles one ``TurnEntry`` per turn of the whole log at once (a 1 GB log's
24 K turns took ~39 MB of heap for that moment, and the freed memory stayed with the process).
"""
from __future__ import annotations

import bisect
from dataclasses import replace
import operator
import pickle
import zlib
from array import array
from collections.abc import Iterable, Iterator
from typing import Any, Optional

from ..blockfile import BlockFile
from .outline import Outline, TurnEntry

_FIELDS = ("turn", "first_seq", "last_seq", "prompt", "prompt_seq", "steps", "tools", "errors", "error_seqs",
           "error_rows", "retries", "interrupted", "end", "open", "prompt_kind_weak")
TURN_BLOCK = 64
_NONE = -(1 << 63)


def _narrow(a: Any) -> Any:
    return array("i", a) if isinstance(a, array) and a.typecode == "q" and \
        (not a or min(a) > -(1 << 31) and max(a) < 1 << 31) else a


_FIELDS_OF = operator.attrgetter(*_FIELDS)          # (the fields' tuple in one C call: issue 29's pass packs every turn)


def _record(t: TurnEntry) -> bytes:
    return pickle.dumps(_FIELDS_OF(t), pickle.HIGHEST_PROTOCOL)


class SeqArray(array):  # type: ignore[type-arg]
    """A sorted ``array('q')`` of seqs read like the list it replaced: a slice is a list, and it is
    equal to a list (or array) of the same seqs."""

    def __getitem__(self, i: Any) -> Any:
        got = super().__getitem__(i)
        return list(got) if isinstance(i, slice) else got

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, array)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None


def _int_row(w: Any) -> bool:
    """Whether an error's row is (pos, offset, line) of ints (line may be None) that the columns hold."""
    return isinstance(w, tuple) and len(w) == 3 and all(
        type(v) is int and _NONE < v < (1 << 63) or v is None and j == 2 for j, v in enumerate(w))


class _ErrorColumns:
    """The errors of the turns added so far, in the order added: seqs and int rows in ``array`` columns,
    any other row (a zstd member's position) in a small dict (by its position)."""

    def __init__(self) -> None:
        self.seqs = array("q")
        self.cols = (array("q"), array("q"), array("q"))
        self.other: dict[int, Any] = {}

    def extend(self, seqs: Iterable[int], rows: Iterable[Any]) -> None:
        for s, w in zip(seqs, rows):
            if not _int_row(w):
                self.other[len(self.seqs)] = w
                w = (0, 0, 0)
            self.seqs.append(s)
            for col, v in zip(self.cols, w):
                col.append(_NONE if v is None else v)

    def rows(self) -> ErrorRows:
        """seq -> row, the last added of a seq winning (as a dict built from them)."""
        seqs = self.seqs
        order = sorted(range(len(seqs)), key=seqs.__getitem__)      # (stable: the last of a seq is last)
        keep = [i for n, i in enumerate(order) if n + 1 == len(order) or seqs[order[n + 1]] != seqs[i]]
        out = ErrorRows(())
        out.seqs = array("q", (seqs[i] for i in keep))
        out._cols = tuple(array("q", (c[i] for i in keep)) for c in self.cols)  # type: ignore[assignment]
        out._other = {k: self.other[i] for k, i in enumerate(keep) if i in self.other}
        return out


class ErrorRows:
    """seq -> (pos, offset, line) of each error's stored row (what ``{s: w ...}`` held, the last
    one of a seq winning): the seqs sorted in an ``array``, int rows in three ``array`` columns, any
    other row (a zstd member's position) in a small dict."""

    def __init__(self, pairs: Iterable[tuple[int, Any]]):
        d = dict(pairs)
        self.seqs = array("q", sorted(d))
        self._cols = (array("q"), array("q"), array("q"))
        self._other: dict[int, Any] = {}
        for k, s in enumerate(self.seqs):
            w = d[s]
            ok = _int_row(w)
            if not ok:
                self._other[k] = w
            for col, v in zip(self._cols, w if ok else (0, 0, 0)):
                col.append(_NONE if v is None else v)

    def _at(self, s: int) -> int:
        k = bisect.bisect_left(self.seqs, s)
        return k if k < len(self.seqs) and self.seqs[k] == s else -1

    def __contains__(self, s: object) -> bool:
        return isinstance(s, int) and self._at(s) >= 0

    def __getitem__(self, s: int) -> Any:
        k = self._at(s)
        if k < 0:
            raise KeyError(s)
        if k in self._other:
            return self._other[k]
        pos, off, line = (c[k] for c in self._cols)
        return (pos, off, None if line == _NONE else line)

    def get(self, s: int, default: Any = None) -> Any:
        k = self._at(s) if isinstance(s, int) else -1
        return default if k < 0 else self[s]

    def __len__(self) -> int:
        return len(self.seqs)

    def __iter__(self) -> Iterator[int]:
        return iter(self.seqs)


class CompactTurns:
    """Turns packed in compressed blocks; ``turns[i]`` is an equal :class:`TurnEntry`."""

    def __init__(self, turns: Iterable[TurnEntry] = (), *, building: bool = False, spool: bool = False):
        """``building``: more turns to come (:meth:`add`, then :meth:`seal` before reading); ``spool``: the
        blocks go to a temporary file as they are sealed (:class:`~app.log.blockfile.BlockFile`; the background
        pass's child)."""
        # per block: its turns' pickled records, joined, compressed (a list, or a BlockFile in the child; the
        # window moves them to a file: app.ui.outline_turns)
        self.blocks: Any = BlockFile(prefix="session-lens-turns-") if spool else []
        self.ends = array("q")              # per turn: its record's end in its block
        self.numbers: Any = array("q")       # turn numbers
        self.first_seqs = array("q")
        self._cur: list[bytes] = []          # (while adding: the open block's records, the errors so far)
        self._at = 0
        self._errs = _ErrorColumns()
        self.error_seqs = SeqArray("q")
        self.error_where = ErrorRows(())
        self._open: tuple[int, bytes] = (-1, b"")
        self._sealed = False
        for t in turns:
            self.add(t)
        if not building:
            self.seal()

    def add(self, t: TurnEntry) -> None:
        """One more turn (before :meth:`seal`): packed at once, nothing of it kept as objects."""
        if self._sealed:
            raise ValueError("the turns are sealed")
        cur = self._cur
        cur.append(_record(t))
        self._at += len(cur[-1])
        self.ends.append(self._at)
        try:
            self.numbers.append(t.turn)
        except OverflowError:           # (a turn number past 64 bits, as logged: a list from then on)
            self.numbers = [*self.numbers, t.turn]
        self.first_seqs.append(t.first_seq)
        self._errs.extend(t.error_seqs, t.error_rows)
        if len(cur) == TURN_BLOCK:
            self.blocks.append(zlib.compress(b"".join(cur), 6))
            self._cur, self._at = [], 0

    def seal(self) -> CompactTurns:
        """The last block packed and the whole log's errors sorted (the turns are then read-only)."""
        if self._sealed:
            return self
        self._sealed = True
        if self._cur:
            self.blocks.append(zlib.compress(b"".join(self._cur), 6))
            self._cur, self._at = [], 0
        errs = self._errs
        if len(errs.seqs):
            self.error_seqs = SeqArray("q", sorted(errs.seqs))  # the whole log's errors, sorted
            self.error_where = errs.rows()
            if len(self.error_where.seqs) == len(self.error_seqs):      # (no seq twice: the very same seqs, kept once)
                self.error_where.seqs = self.error_seqs
            self._errs = _ErrorColumns()
        return self

    def narrow(self) -> CompactTurns:
        """Sealed, its per-turn columns and its errors' seqs as 32-bit ints where every value fits (turn numbers past
        64 bits are a list, kept as it is): what the window keeps and what the pass's child sends (issue 36).  In
        place."""
        self.seal()
        self.ends = _narrow(self.ends)
        self.numbers = _narrow(self.numbers)
        self.first_seqs = _narrow(self.first_seqs)
        seqs = _narrow(self.error_seqs)
        if seqs is not self.error_seqs:
            seqs = SeqArray("i", seqs)
            if self.error_where.seqs is self.error_seqs:
                self.error_where.seqs = seqs
            self.error_seqs = seqs
        return self

    def __getstate__(self) -> dict[str, Any]:
        self.seal()
        return {**self.__dict__, "_open": (-1, b"")}

    def __len__(self) -> int:
        return len(self.numbers)

    def _turn(self, i: int) -> TurnEntry:
        k = i // TURN_BLOCK
        if self._open[0] != k:
            self._open = (k, zlib.decompress(self.blocks[k]))
        a = 0 if i % TURN_BLOCK == 0 else self.ends[i - 1]
        return TurnEntry(**dict(zip(_FIELDS, pickle.loads(self._open[1][a:self.ends[i]]))))

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self._turn(k) for k in range(*i.indices(len(self)))]
        return self._turn(range(len(self))[i])

    def __iter__(self) -> Iterator[TurnEntry]:
        return (self._turn(k) for k in range(len(self)))

    def index(self, t: TurnEntry) -> int:
        for k, n in enumerate(self.numbers):
            if n == t.turn and self._turn(k) == t:
                return k
        raise ValueError("turn not in the outline")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, CompactTurns)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


class TurnSpool:
    """The outline builder's ``turns`` in the one background pass (issue 36: the pass's memory stays flat):
    only the last turn is held as an object (the builder still adds to it); each one before it is packed
    (:class:`CompactTurns`) as soon as the next one starts, and each block of them goes to a temporary file
    (:class:`~app.log.blockfile.BlockFile`).  :meth:`sealed`: all of them, packed."""

    def __init__(self) -> None:
        self.packed = CompactTurns(building=True, spool=True)
        self.pending: Optional[TurnEntry] = None

    def append(self, t: TurnEntry) -> None:
        if self.pending is not None:
            self.packed.add(self.pending)
        self.pending = t

    def __len__(self) -> int:
        return len(self.packed) + (self.pending is not None)

    def sealed(self) -> CompactTurns:
        if self.pending is not None:
            self.packed.add(self.pending)
            self.pending = None
        return self.packed.seal()


def packed(ol: Outline) -> Outline:
    """``ol`` with its turns packed (:class:`CompactTurns`; a copy, ``ol`` is left as it was)."""
    return ol if isinstance(ol.turns, CompactTurns) else replace(ol, turns=CompactTurns(ol.turns))  # type: ignore[arg-type]
