"""The outline's turns, kept packed (issue 36: the window's memory stays flat).

The outline holds one :class:`~app.log.query.outline.TurnEntry` per turn of the whole log; as
objects each cost about ten Python blocks (the object, its dict, its tools dict, its error list,
its prompt, its ints), so the window's heap after the outline pass grew with the log.
:class:`CompactTurns` keeps each turn as one pickled record (a bytes object: a tuple of its fields) plus the turn
numbers and first seqs in ``array`` columns; indexing gives back an equal ``TurnEntry`` (the
outline view asks only for the rows it shows).  A read-only sequence.
"""
from __future__ import annotations

import pickle
from array import array
from collections.abc import Iterable, Iterator
from typing import Any

from ..log.query.outline import TurnEntry

_FIELDS = ("turn", "first_seq", "last_seq", "prompt", "prompt_seq", "steps", "tools", "errors", "error_seqs",
           "error_rows", "retries", "interrupted", "end", "open", "prompt_kind_weak")


def _pack(t: TurnEntry) -> bytes:
    return pickle.dumps(tuple(getattr(t, f) for f in _FIELDS), pickle.HIGHEST_PROTOCOL)


class CompactTurns:
    """Turns packed one record each; ``turns[i]`` is an equal :class:`TurnEntry`."""

    def __init__(self, turns: Iterable[TurnEntry] = ()):
        self._recs: list[bytes] = []
        self.numbers = array("q")            # turn numbers
        self.first_seqs = array("q")
        for t in turns:
            self._recs.append(_pack(t))
            self.numbers.append(t.turn)
            self.first_seqs.append(t.first_seq)

    def __len__(self) -> int:
        return len(self._recs)

    def _turn(self, i: int) -> TurnEntry:
        return TurnEntry(**dict(zip(_FIELDS, pickle.loads(self._recs[i]))))

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
