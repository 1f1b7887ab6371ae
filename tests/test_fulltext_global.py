"""One ranking over the shards (issue 32): a sharded index ranks its hits by the bm25 an unsharded
index of the same rows gives (app/store/ftsglobal.py), not by each shard's own statistics."""
from __future__ import annotations

import os
import random

import pytest

from app.store import ftsglobal
from app.store.ftsglobal import ShardRank
from app.store.ftslive import live_search
from app.store.ftsquery import parse_query
from app.store.ftsrank import B, K1, Stats
from app.store.fulltext import FullTextIndex
from app.tools.plant import make_home
from tests.fixtures_util import FIXTURES

QUERIES = ["the", "error", "the error", '"the file"', "read*", "the OR error", "the -error", "kind:user the",
           "tool:bash the", "file NOT error"]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory):
    """The same home indexed by two processes (two shards) and by one (one index)."""
    d = tmp_path_factory.mktemp("global")
    root = d / "home"
    make_home(str(root), str(FIXTURES), copies=2, planted=3, zstd_every=0,
              extra=[str(FIXTURES.parent / "dsh-next")])
    sharded = FullTextIndex(str(root), db_path=str(d / "sharded.sqlite"))
    sharded.update(workers=2)
    one = FullTextIndex(str(root), db_path=str(d / "one.sqlite"))
    one.update(workers=0)
    assert len(sharded.parts()) == 2 and len(one.parts()) == 1
    yield sharded, one
    sharded.close()
    one.close()


def _hits(res, offset: int = 0) -> list:
    """(session, seq, kind, rank) of the hits ranked better than the last one (rows tied with it at the
    cut may be any of them) and, past an offset, worse than the first, in order."""
    cut, first = res.hits[-1].rank, res.hits[0].rank if offset else float("-inf")
    return [(h.session_key, h.seq, h.kind, h.rank) for h in res.hits if first < h.rank < cut]


def _same(got, want, q, offset: int = 0) -> None:
    g, w = _hits(got, offset), _hits(want, offset)
    assert len(w) >= 2, q
    assert [x[:3] for x in g] == [x[:3] for x in w], q
    assert [x[3] for x in g] == pytest.approx([x[3] for x in w], rel=1e-9), q
    assert got.total == want.total, q


@pytest.mark.parametrize("first", [ftsglobal.FIRST_ROWS, 1])
def test_a_sharded_index_ranks_as_one_index(indexes, monkeypatch, first):
    """Every query's hits, their order and their bm25 equal the unsharded index's (``first`` 1: each
    shard gives one row at first, so the bound that says when to read more is what makes it right)."""
    sharded, one = indexes
    monkeypatch.setattr(ftsglobal, "FIRST_ROWS", first)
    monkeypatch.setattr(ftsglobal, "first_rows", lambda want: first)
    for q in QUERIES:
        for limit, offset in ((40, 0), (12, 5)):
            for exact in (False, True):
                _same(sharded.search(q, limit=limit, offset=offset, exact=exact),
                      one.search(q, limit=limit, offset=offset, exact=exact), q, offset)


def test_the_shards_statistics_differ(indexes):
    """(What makes the test above mean something: each shard's own bm25 is not the global one.)"""
    sharded, _one = indexes
    pq = parse_query("the")
    rank = ShardRank(pq, ftsglobal.shard_stats(sharded.parts(), pq))
    assert rank.lavg[0] != rank.lavg[1] and rank.lidf[0][0] != rank.lidf[1][0]
    own = sharded.parts()[0].conn.execute("SELECT rowid, bm25(fts) FROM fts WHERE fts MATCH 'the' LIMIT 5").fetchall()
    assert all(g != o for (g, _r), (_r2, o) in zip(rank.rescore(0, sharded.parts()[0].conn, own), own))
    assert rank.inexact == 0                  # every row's counts were had (none kept its shard's score)


def test_a_scanned_session_ranks_as_in_one_index(indexes, monkeypatch):
    """Sessions touched after the build are scanned: the sharded index's answer with the scan is the
    unsharded index's whole answer."""
    sharded, one = indexes
    want = {q: live_search(one, q, limit=40) for q in QUERIES[:6]}
    keys = sorted({h.session_key for w in want.values() for h in w.hits})[::3]
    assert len(keys) >= 3
    for k in keys:
        st = os.stat(k)
        os.utime(k, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    try:
        for q, w in want.items():
            got = live_search(sharded, q, limit=40)
            assert set(keys) <= set(got.unindexed), q
            _same(got, w, q)
    finally:
        for k in keys:
            st = os.stat(k)
            os.utime(k, ns=(st.st_atime_ns, st.st_mtime_ns - 1_000_000_000))


def test_the_ceiling_bounds_every_rows_global_score():
    """No row whose own bm25 is no better than ``worst`` scores above ``ceiling(worst)`` globally, for
    shards with a shorter or a longer average row than the whole index."""
    rng = random.Random(32)
    pq = parse_query("word")
    for lrows, ltok, grows, gtok, lhit, ghit in ((1000, 9000, 2000, 24000, 300, 500),
                                                  (1000, 15000, 2000, 24000, 100, 500)):
        rank = ShardRank(pq, [Stats(lrows, ltok, [lhit]), Stats(grows - lrows, gtok - ltok, [ghit - lhit])])
        for _ in range(3000):
            f, d = rng.randint(1, 60), rng.randint(1, 5000)
            d = max(d, f)
            own = -rank.lidf[0][0] * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / rank.lavg[0])))
            glob = -rank.gidf[0] * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / rank.gavg)))
            worst = own * rng.choice([1.0, 1.01, 1.5])          # the row, or a worse cut
            assert -glob <= rank.ceiling(0, worst) * (1 + 1e-12)
