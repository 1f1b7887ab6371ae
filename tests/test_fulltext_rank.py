"""One ranking (issue 32 item 3): the hits the streaming scan finds are scored by the index's own
bm25 (app/store/ftsrank.py), so a session ranks the same whether it was indexed or scanned, and the
index's and the scan's hits are merged into one order."""
from __future__ import annotations

import os

import pytest

from app.store.ftslive import live_search
from app.store.ftsquery import parse_query
from app.store.ftsrank import Bm25, averages, index_stats
from app.store.fulltext import FullTextIndex
from app.tools.plant import make_home
from tests.fixtures_util import FIXTURES, ev, write_log

QUERIES = ["error", "the file", "read*", '"tool call"', "the OR error"]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    root = tmp_path_factory.mktemp("rank") / "home"
    make_home(str(root), str(FIXTURES), copies=1, planted=3, zstd_every=0,
              extra=[str(FIXTURES.parent / "dsh-next")])
    return str(root)


def test_the_python_bm25_is_fts5s_on_the_fixtures(home, tmp_path):
    """Every entry of the index scored in Python equals FTS5's bm25() of it (same statistics)."""
    with FullTextIndex(home, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=0)
        c = ix.conn
        rows, tokens = averages(c)
        assert rows == c.execute("SELECT count(*) FROM entries").fetchone()[0] > 500 and tokens > rows
        n = 0
        for q in QUERIES:
            pq = parse_query(q)
            rank = Bm25(pq, index_stats([ix], pq))
            got = c.execute("SELECT body, bm25(fts) FROM fts WHERE fts MATCH ?", (pq.fts(),)).fetchall()
            assert got, q
            for body, want in got:
                assert rank.score(body) == pytest.approx(want, rel=1e-9, abs=1e-12), (q, body[:80])
            n += len(got)
        assert n > 300


def _order(res) -> list:
    """The hits ranked above the last one's rank (rows tied with it at the cut may be any of them)."""
    cut = res.hits[-1].rank
    return [(h.session_key, h.seq, h.kind) for h in res.hits if h.rank < cut]


def test_a_session_ranks_the_same_indexed_or_scanned(home, tmp_path):
    with FullTextIndex(home, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=0)
        want = {q: live_search(ix, q, limit=40) for q in QUERIES}
        assert all(not w.unindexed for w in want.values())
        # a third of the sessions touched (same text, new mtime): not current in the index, scanned
        keys = sorted({h.session_key for w in want.values() for h in w.hits})
        touched = keys[::3]
        assert len(touched) >= 3
        for k in touched:
            st = os.stat(k)
            os.utime(k, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
        for q in QUERIES:
            got = live_search(ix, q, limit=40)
            assert set(touched) <= set(got.unindexed) and got.scanned == len(got.unindexed), q
            assert any(h.session_key in touched for h in got.hits), q
            assert len(_order(want[q])) >= 5 and _order(got) == _order(want[q]), q
            assert [h.rank for h in got.hits] == pytest.approx([h.rank for h in want[q].hits], rel=1e-9), q
            assert got.total == want[q].total, q


def _session(home, i: int, text: str) -> None:
    write_log(home / "sessions" / "--p--" / f"s{i}" / "session.jsonl",
              [ev(0, "turn/start", {"turn": 1}), ev(1, "user/message", {"turn": 1, "content": [
                  {"type": "text", "text": text}]})], session_id=f"s{i}")


def test_a_new_session_not_indexed_yet_ranks_where_its_hit_belongs(tmp_path):
    """A session written after the build is scanned; its best hit is first, not after the index's."""
    home = tmp_path / "home"
    texts = ["rankword once in a rather long message with many other words around it here",
             "rankword twice rankword in a message of some length",
             "rankword rankword rankword three times"]
    for i, t in enumerate(texts):
        _session(home, i, t)
    with FullTextIndex(str(home), db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update()
        assert [h.session for h in live_search(ix, "rankword").hits] == ["s2", "s1", "s0"]
        _session(home, 3, "rankword rankword rankword rankword")          # new: not indexed
        _session(home, 4, "a much longer message that says rankword just once among very many other words, far more of them than the rest")
        res = live_search(ix, "rankword")
        assert sorted(res.unindexed) == sorted(str(home / "sessions" / "--p--" / f"s{i}" / "session.jsonl")
                                               for i in (3, 4))
        assert [h.session for h in res.hits] == ["s3", "s2", "s1", "s0", "s4"]
        ix.update()
        assert [h.session for h in live_search(ix, "rankword").hits] == ["s3", "s2", "s1", "s0", "s4"]
