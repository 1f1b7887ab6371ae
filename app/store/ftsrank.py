"""One ranking for the home search (issue 32 item 3): the hits of the streaming scan
(:mod:`app.store.ftsstream`) are scored by the index's own formula, FTS5's ``bm25()`` with its
defaults (k1 = 1.2, b = 0.75, one column of weight 1), computed in Python from the index's corpus
statistics, so a session ranks the same whether it was indexed or scanned and the two lists are
merged by one key (:func:`app.store.ftslive.live_search`).

For a row (an entry's text) and the query's phrases (its words and "phrases", then its -words,
in the order of the MATCH expression)::

    bm25 = -sum_i idf_i * f_i * (k1 + 1) / (f_i + k1 * (1 - b + b * D / avgdl))
    idf_i = log((N - n_i + 0.5) / (n_i + 0.5)), 1e-6 when not above 0

``f_i`` the phrase's instances in the row, ``D`` the row's tokens, ``N`` the rows of the index,
``avgdl`` its tokens over ``N``, ``n_i`` the rows holding phrase i (FTS5 counts them with the
phrase's own query: so does :func:`index_stats`).  Tokens are counted as ``unicode61`` cuts them
(runs of letters and digits; an underscore separates), instances found by the scan's term regexes
(:func:`app.store.ftsquery.term_re`: diacritics removed, case folded).  A sharded index's
statistics are summed over its shards, and its hits are ranked with those sums too
(:mod:`app.store.ftsglobal`).  An empty index (a home never indexed) has N = 0: every idf is
then 1e-6, as FTS5 would make it, and the scan's hits rank by the frequency part alone.
"""
from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Optional

from .ftsquery import ParsedQuery, fold_diacritics, term_re

K1 = 1.2
B = 0.75
_TOKENS = re.compile(r"[^\W_]+")
# ASCII text: letters and digits to "a", the rest to " " (bytes.translate): a token starts at each " a"
_ASCII_TOKEN = bytes(97 if (48 <= i <= 57 or 65 <= i <= 90 or 97 <= i <= 122) else 32 for i in range(256))
_AVERAGES_ID = 1               # FTS5's record of the row count and the token total (its %_data table)
_DEFAULT_AVGDL = 64.0          # tokens per row assumed by a scan with no index to tell


@dataclass
class Stats:
    """Corpus statistics of an index (summed over its shards)."""
    rows: int = 0
    tokens: int = 0
    hits: list[int] = field(default_factory=list)      # per phrase: the rows holding it


def phrases(pq: ParsedQuery) -> list[tuple[str, bool, bool]]:
    """The phrases of the query's MATCH expression, in its order (:meth:`ParsedQuery.fts`)."""
    return list(pq.terms) + list(pq.not_terms)


def varint(b: bytes, i: int) -> tuple[int, int]:
    """SQLite's varint at ``b[i:]`` (big-endian 7-bit groups, a 9th byte of 8 bits): (value, next)."""
    v = 0
    for _ in range(8):
        if i >= len(b):
            raise ValueError("a varint past the end")
        c = b[i]
        i += 1
        v = (v << 7) | (c & 0x7F)
        if not c & 0x80:
            return v, i
    if i >= len(b):
        raise ValueError("a varint past the end")
    return (v << 8) | b[i], i + 1


def averages(conn: sqlite3.Connection) -> tuple[int, int]:
    """(rows, tokens) of the FTS5 table ``fts`` from its averages record (one row read; (0, 0)
    when the table is empty or the record cannot be read)."""
    try:
        r = conn.execute("SELECT block FROM fts_data WHERE id = ?", (_AVERAGES_ID,)).fetchone()
    except sqlite3.Error:
        return 0, 0
    if r is None or not r[0]:
        return 0, 0
    try:
        rows, i = varint(bytes(r[0]), 0)
        tokens, _ = varint(bytes(r[0]), i)
    except ValueError:
        return 0, 0
    return rows, tokens


def index_stats(parts: list[Any], pq: ParsedQuery) -> Stats:
    """The statistics of the shards ``parts`` (each with ``conn``) for ``pq``, summed (in the
    caller's read transaction, so they are those of the snapshot its index answer comes from)."""
    from .ftsglobal import shard_stats, summed
    return summed(shard_stats(parts, pq))


class Bm25:
    """The index's bm25 of one row's text, for the hits of the scan."""

    def __init__(self, pq: ParsedQuery, stats: Optional[Stats] = None):
        st = stats or Stats()
        ph = phrases(pq)
        n = st.rows
        hits = st.hits if len(st.hits) == len(ph) else [0] * len(ph)
        self.idf = []
        for k in hits:
            idf = math.log((n - k + 0.5) / (k + 0.5)) if n else 0.0
            self.idf.append(idf if idf > 0.0 else 1e-6)
        self.avgdl = st.tokens / n if n and st.tokens else _DEFAULT_AVGDL
        self.res = [term_re(t) for t in ph]

    def score(self, text: str) -> float:
        """bm25 of ``text`` (negative: lower ranks first, as FTS5's ``bm25()``)."""
        folded = fold_diacritics(text)
        d = float(tokens(folded))
        score = 0.0
        for idf, rx in zip(self.idf, self.res):
            f = float(len(rx.findall(folded)))
            score += idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / self.avgdl)))
        return -1.0 * score


def tokens(text: str) -> int:
    """The ``unicode61`` tokens of ``text``: runs of letters and digits (counted at C level for
    ASCII text, the common case)."""
    if text.isascii():
        t = text.encode("ascii").translate(_ASCII_TOKEN)
        return t.count(b" a") + (1 if t[:1] == b"a" else 0)
    return len(_TOKENS.findall(text))
