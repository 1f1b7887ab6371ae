"""One ranking over the shards of a sharded home index (issue 32): the hits are ranked by the
bm25 an unsharded index of the same rows would give, not by each shard's own.

FTS5's ``bm25()`` of a shard uses that shard's statistics (its rows, its token total, the rows
holding each phrase).  A row's score with the statistics of all shards (their sums,
:func:`shard_stats`) needs its tokens ``D`` (FTS5's ``fts_docsize``) and the instances ``f_q``
of each phrase (:mod:`app.store.ftsrank` gives the formula):

* a query of one phrase: ``f`` follows from the shard's own score, ``D`` and the shard's
  statistics (the formula solved for ``f``, which must come out a whole number);
* several phrases: ``f_q`` counted in the row's text as :class:`app.store.ftsrank.Bm25` counts
  it, and kept only when the shard's score computed from them is FTS5's own (to 1e-9).

A row whose counts cannot be had so keeps its shard's score (``inexact`` counts them).

Which rows: each shard's best ``m`` by its own score are scored again.  A row further down a
shard cannot beat the ``k``-th best of those when its best possible global score
(:meth:`ShardRank.ceiling`) is no better than ``|g_k|``: for several phrases ``U_i * |s_m|``, where
``s_m`` is the shard's ``m``-th score and ``U_i = max(1, avgdl / avgdl_i) * max_q idf_q / idf_q,i``
bounds how much the global statistics can raise a row's score over the shard's (``D / avgdl`` only
enters the denominator; a phrase's part scales with its idf).  Else that shard gives 4 times as many.
"""
from __future__ import annotations

import math
import sqlite3
from collections.abc import Callable
from typing import Any

from .ftsquery import ParsedQuery, fold_diacritics, fts_phrase, term_re
from .ftsrank import B, K1, Stats, averages, phrases, varint

FIRST_ROWS = 256           # rows scored again per shard at first (at least 4 times those asked)
TOLERANCE = 1e-9           # a score recomputed from the counts agrees with FTS5's to this (relative)
Fetch = Callable[[int, int], list[tuple[int, float]]]      # (shard, n) -> its n best (rowid, own bm25)


def shard_stats(parts: list[Any], pq: ParsedQuery) -> list[Stats]:
    """Each shard's statistics for ``pq`` (rows, tokens, rows holding each phrase): read in the
    caller's snapshot."""
    out = []
    for p in parts:
        rows, tokens = averages(p.conn)
        st = Stats(rows=rows, tokens=tokens, hits=[0] * len(phrases(pq)))
        if rows:
            for i, t in enumerate(phrases(pq)):
                st.hits[i] = int(p.conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?",
                                                (fts_phrase(t),)).fetchone()[0])
        out.append(st)
    return out


def summed(stats: list[Stats]) -> Stats:
    n = len(stats[0].hits) if stats else 0
    return Stats(rows=sum(s.rows for s in stats), tokens=sum(s.tokens for s in stats),
                 hits=[sum(s.hits[i] for s in stats) for i in range(n)])


def idf(rows: int, hits: int) -> float:
    """FTS5's idf of a phrase held by ``hits`` of ``rows`` rows (1e-6 when not above 0)."""
    v = math.log((rows - hits + 0.5) / (hits + 0.5))
    return v if v > 0.0 else 1e-6


def _part(idf_: float, f: float, d: float, avgdl: float) -> float:
    """One phrase's part of bm25, in FTS5's own order of operations."""
    return idf_ * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / avgdl)))


class ShardRank:
    """The global bm25 of rows of a sharded index (:func:`global_top`)."""

    def __init__(self, pq: ParsedQuery, stats: list[Stats]):
        self.ph = phrases(pq)
        self.terms = len(pq.terms)                     # the -words after them: never in a matching row
        tot = summed(stats)
        self.gavg = tot.tokens / tot.rows if tot.rows else 1.0
        self.gidf = [idf(tot.rows, k) for k in tot.hits]
        self.lavg = [s.tokens / s.rows if s.rows else 1.0 for s in stats]
        self.lidf = [[idf(s.rows, k) for k in s.hits] for s in stats]
        self.res = [term_re(t) for t in self.ph]
        self.inexact = 0
        self.bound = [max(1.0, self.gavg / la) * max([g / li for g, li in zip(self.gidf[:self.terms], l[:self.terms])]
                                                     or [1.0]) for la, l in zip(self.lavg, self.lidf)]

    def ceiling(self, i: int, worst: float) -> float:
        """The highest global |bm25| a row of shard ``i`` whose own bm25 is no better than ``worst``
        can have.  One word: its part ``h = f (k1+1) / (f + k1 (1 - b + b D / avgdl))`` is at most
        ``h_m = |worst| / idf_i`` with the shard's avgdl; with the global one (``rho`` times it) it is
        at most ``(k1+1) rho h_m / (rho h_m + k1 + 1 - h_m)`` (the supremum as ``f`` grows with ``D``),
        or ``h_m`` when ``rho <= 1``.  Several: ``U_i |worst|``."""
        if self.terms != 1:
            return self.bound[i] * -worst
        rho = self.gavg / self.lavg[i]
        h = min(-worst / self.lidf[i][0], K1 + 1.0)
        if rho > 1.0:
            h = (K1 + 1.0) * rho * h / (rho * h + K1 + 1.0 - h)
        return self.gidf[0] * h

    def _local(self, i: int, fs: list[float], d: float) -> float:
        score = 0.0
        for q, f in enumerate(fs):
            score += _part(self.lidf[i][q], f, d, self.lavg[i])
        return -1.0 * score

    def _global(self, fs: list[float], d: float) -> float:
        score = 0.0
        for q, f in enumerate(fs):
            score += _part(self.gidf[q], f, d, self.gavg)
        return -1.0 * score

    def _counts(self, i: int, own: float, d: float, body: Any) -> list[float] | None:
        """The phrases' instances in a row of shard ``i`` whose own score is ``own`` (None: not had)."""
        if self.terms == 1 and len(self.ph) == 1:
            h = -own / self.lidf[i][0]
            if not 0.0 < h < K1 + 1.0:
                return None
            c = K1 * (1 - B + B * d / self.lavg[i])
            fs = [float(round(h * c / (K1 + 1.0 - h)))]
        elif isinstance(body, str):
            folded = fold_diacritics(body)
            fs = [float(len(rx.findall(folded))) if q < self.terms else 0.0 for q, rx in enumerate(self.res)]
        else:
            return None
        if abs(self._local(i, fs, d) - own) > TOLERANCE * max(1.0, abs(own)):
            return None
        return fs

    def rescore(self, i: int, conn: sqlite3.Connection, top: list[tuple[int, float]]) -> list[tuple[float, int]]:
        """[(global bm25, rowid)] of shard ``i``'s rows ``top`` [(rowid, own bm25)]."""
        if not top:
            return []
        ids = [r for r, _ in top]
        sizes: dict[int, float] = {}
        bodies: dict[int, Any] = {}
        for k in range(0, len(ids), 900):              # (under SQLite's bound-parameter limit)
            part = ids[k:k + 900]
            marks = ",".join("?" * len(part))
            for r, sz in conn.execute(f"SELECT id, sz FROM fts_docsize WHERE id IN ({marks})", part):
                try:
                    sizes[r] = float(varint(bytes(sz), 0)[0])
                except (ValueError, TypeError):
                    pass
            if len(self.ph) > 1:
                bodies.update(conn.execute(f"SELECT id, c0 FROM fts_content WHERE id IN ({marks})", part))
        out = []
        for r, own in top:
            d = sizes.get(r)
            fs = None if d is None else self._counts(i, own, d, bodies.get(r))
            if fs is None or d is None:
                self.inexact += 1
                out.append((own, r))
            else:
                out.append((self._global(fs, d), r))
        return out


def first_rows(want: int) -> int:
    """The rows each shard gives at first for ``want`` hits."""
    return max(FIRST_ROWS, 4 * want)


def global_top(rank: ShardRank, parts: list[Any], fetch: Fetch, want: int) -> list[tuple[float, int, int]]:
    """The ``want`` best rows over the shards by global bm25: [(bm25, shard, rowid)] in order
    (ties by shard and rowid).  ``fetch(i, n)``: shard ``i``'s ``n`` best rows by its own bm25."""
    m = [first_rows(want)] * len(parts)
    got: list[list[tuple[int, float]]] = [[] for _ in parts]
    scored: list[dict[int, float]] = [{} for _ in parts]          # per shard: rowid -> global bm25
    todo = list(range(len(parts)))
    while True:
        for i in todo:
            got[i] = fetch(i, m[i])
            new = [(r, own) for r, own in got[i] if r not in scored[i]]
            scored[i].update((r, g) for g, r in rank.rescore(i, parts[i].conn, new))
        best = sorted((g, i, r) for i, top in enumerate(got) for r, _own in top for g in (scored[i][r],))[:want]
        kth = -best[-1][0] if len(best) == want else 0.0
        todo = [i for i in range(len(parts)) if len(got[i]) >= m[i] and got[i]
                and rank.ceiling(i, got[i][-1][1]) > kth * (1 - TOLERANCE)]
        if not todo:
            return best
        for i in todo:
            m[i] *= 4
