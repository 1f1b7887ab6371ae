"""The hits of a whole-log find, kept packed (issue 36: the window's memory stays flat).

A find on a big log streams up to ``HIT_LIMIT`` hits; kept as :class:`~app.log.query.search.Hit`
objects each cost about ten Python blocks (the object, its dict, its span tuple, its ints), so
the window's heap after a find grew with the log.  :class:`CompactHits` keeps only the seqs in
an ``array`` (the steps to the next hit and the row lookups bisect them); every other field of
a hit (numbers, kind, tool, snippet) is one tuple in a block of up to ``BLOCK_HITS`` hits or
``BLOCK_BYTES`` of snippet text, pickled and zlib-compressed once full (log text packs 4-8x, the
numbers and names repeat) and appended to a :class:`~app.log.blockfile.BlockFile` (an unlinked
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
from typing import Any, Optional
from collections.abc import Iterable, Iterator

from ..log.query.find_fast import LazyHit
from ..log.query.find_match import FindOptions, Hit
from ..log.blockfile import BlockFile

BLOCK_HITS = 256           # hits a compressed block holds at most ...
BLOCK_BYTES = 32 << 10     # ... and snippet characters (a block is sealed at either)


def _fields(h: Hit) -> tuple:
    row = h.pending() if isinstance(h, LazyHit) else h.row     # (a snippet still to make: not made here)
    snippet, span = ("", (0, 0)) if row is not None else (h.snippet, h.span)
    return (h.turn, h.kind, snippet, span[0], span[1], h.start, h.end, h.matches, h.tool, h.line, h.offset,
            h.member, h.call, h.block, row)


def _hit(seq: int, f: tuple) -> Hit:
    turn, kind, snippet, a, b, start, end, matches, tool, line, offset, member, call, block, row = f
    return Hit(seq=seq, turn=turn, kind=kind, snippet=snippet, span=(a, b), start=start, end=end, matches=matches,
               tool=tool, line=line, offset=offset, member=member, call=call, block=block, row=row)


def snippets_job(job: Any, path: str, session_id: Optional[str], opts: FindOptions,
                 wants: list[tuple[int, Hit]]) -> list[tuple[int, str, tuple[int, int]]]:
    """:func:`make_snippets` as a worker job (``job``: its cancel token)."""
    return make_snippets(path, session_id, opts, wants, cancel=job)


def make_snippets(path: str, session_id: Optional[str], opts: FindOptions, wants: list[tuple[int, Hit]],
                  cancel: Any = None) -> list[tuple[int, str, tuple[int, int]]]:
    """(index, snippet, span) of each hit of ``wants`` (index, a hit whose snippet is still to make: ``row`` set),
    made from its row read again, the exact way (:meth:`~app.log.query.find_fast.FastRows.hits_again`): the
    snippets of the hits the results pane shows (a worker job: it reads the file).  A hit whose row no longer
    holds it (the file changed) gets an empty snippet."""
    from ..log.jobctl import is_cancelled
    from ..log.query.find_fast import FastRows, made_snippet
    from ..log.query.find_match import compile_matcher
    from ..store.faces import open_reader
    from ..log.source.sources import RawJsonlSource, SourceChanged
    out: list[tuple[int, str, tuple[int, int]]] = []
    r = open_reader(path, session_id)
    try:
        src = r.source
        if not isinstance(src, RawJsonlSource):          # (rows are only sent unmade from a raw JSONL file)
            return [(i, "", (0, 0)) for i, _h in wants]
        fr = FastRows(r.codec, opts, compile_matcher(opts))
        last: tuple[Any, list[Hit]] = (None, [])
        for i, h in wants:
            if is_cancelled(cancel):
                break
            if h.row is None:
                continue
            pos, n, k = h.row
            if last[0] != (pos, n):
                try:
                    raw = src.pread(n, pos)
                except (OSError, SourceChanged):
                    raw = b""                          # (the file changed since: no snippet)
                last = (pos, n), fr.hits_again(raw, pos, h)
            out.append((i, *made_snippet(last[1], k, h)))
    finally:
        r.close()
    return out


class CompactHits:
    """Hits as a seq column plus packed blocks; ``hits[i]`` is an equal :class:`Hit`."""

    def __init__(self, hits: Iterable[Hit] = ()):
        self.seqs = array("q")
        self._blocks = BlockFile()               # sealed blocks: pickled field tuples, compressed
        self._block_first = array("q")           # first hit of each block (sealed ones, then the open one)
        self._tail: list[tuple] = []             # the open block's field tuples
        self._tail_chars = 0
        self._open: tuple[int, list] = (-1, [])  # the last sealed block read, unpacked
        self._made: dict[int, tuple[str, tuple[int, int]]] = {}   # snippets made since (make_snippets): index -> them
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
            h = _hit(self.seqs[i], self._tail[off])
        else:
            if self._open[0] != k:
                self._open = (k, pickle.loads(zlib.decompress(self._blocks[k])))
            h = _hit(self.seqs[i], self._open[1][off])
        if h.row is not None and i in self._made:
            h.snippet, h.span = self._made[i]
            h.row = None
        return h

    def set_snippets(self, made: Iterable[tuple[int, str, tuple[int, int]]]) -> None:
        """The snippets :func:`make_snippets` made, by index (kept beside the packed blocks: the hits shown)."""
        for i, snippet, span in made:
            if 0 <= i < len(self.seqs):
                self._made[i] = (snippet, span)

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
