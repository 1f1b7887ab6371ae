"""The sharded first build of the home full-text index (app/store/fulltext.py): one worker process
per shard extracts and writes its own shard database, queries fan out over the shards.  On a
generated home with planted words: the shards answer what one index answers; a worker killed
mid-build leaves every shard usable and the build is finished in-process; a later update reads
only the grown session; the store stays byte-identical."""
from __future__ import annotations

import hashlib
import json
import os

import pytest

import sys

from app.store import childproc, fulltext
from app.store.fulltext import FullTextIndex
from app.store.ftswalk import shard_of, shard_path
from app.tools.plant import make_home
from tests.fixtures_util import FIXTURES


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards") / "home"
    m = make_home(str(root), str(FIXTURES), copies=1, planted=6, zstd_every=11,
                  extra=[str(FIXTURES.parent / "dsh-next")])
    return str(root), m


def _digest(root: str) -> dict:
    out = {}
    for d, _dirs, names in os.walk(root):
        for n in names:
            with open(os.path.join(d, n), "rb") as f:
                out[os.path.join(d, n)] = hashlib.sha256(f.read()).hexdigest()
    return out


def _entries(ix) -> list:
    """Every entry of every shard as (session key, seq, kind, tool, body)."""
    return sorted(r for p in ix.parts() for r in p.conn.execute(
        "SELECT s.key, e.seq, e.kind, coalesce(e.tool, ''), f.body FROM entries e JOIN sessions s ON s.sid = e.sid "
        "JOIN fts f ON f.rowid = e.rowid").fetchall())


def _check(ix) -> None:
    for p in ix.parts():
        assert p.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        p.conn.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 1)")
        assert p.conn.execute("SELECT count(*) FROM fts WHERE rowid NOT IN (SELECT rowid FROM entries)"
                              ).fetchone()[0] == 0


QUERIES = ["snapshot", "plant0*", "plant1output kind:tool-output", "kind:error", "snapshot -bash",
           "snapshot tool:bash", "cordis project:alpha", '"plant2 quoted arg"', "snapshot after:2026-01-01"]


def test_shards_answer_what_one_index_answers(home, tmp_path):
    root, m = home
    before = _digest(root)
    with FullTextIndex(root, db_path=str(tmp_path / "one.sqlite")) as one, \
            FullTextIndex(root, db_path=str(tmp_path / "two.sqlite")) as two:
        r1 = one.update(workers=0)
        r2 = two.update(workers=2)
        assert r1.workers == 0 and len(one.parts()) == 1
        assert r2.workers == 2 and len(two.parts()) == 2 and os.path.exists(shard_path(two.db_path, 1))
        assert (r2.sessions, r2.indexed, r2.entries, r2.skipped) == (r1.sessions, r1.indexed, r1.entries, r1.skipped)
        assert sorted(r2.problems) == sorted(r1.problems)
        # the sessions dealt out by size: each once, the shards' bytes within one file of each other
        held = [[r[0] for r in p.conn.execute("SELECT path FROM sessions WHERE store IS NULL")] for p in two.parts()]
        assert sorted(held[0] + held[1]) == sorted(r[0] for r in one.conn.execute(
            "SELECT path FROM sessions WHERE store IS NULL")) and min(map(len, held)) > 20
        size = [sum(os.path.getsize(x) for x in h) for h in held]
        assert abs(size[0] - size[1]) <= max(os.path.getsize(x) for x in held[0] + held[1])
        assert _entries(two) == _entries(one)
        _check(two)
        assert two.indexed_count() == one.indexed_count() == len(m["sessions"])
        for word, (sid, seq, _kind) in m["planted"].items():
            if " " not in word:
                assert [(h.session, h.seq) for h in two.search(word).hits] == [(sid, seq)]
        for q in QUERIES:
            a, b = one.search(q, limit=500, groups=None), two.search(q, limit=500, groups=None)
            assert (b.total, b.session_total) == (a.total, a.session_total), q
            assert a.total > 0, q
            # the same matches, each session with the same count (bm25 of each shard's own
            # statistics may order equal-looking hits differently)
            assert sorted((h.session, h.seq, h.kind, h.snippet) for h in b.hits) == \
                sorted((h.session, h.seq, h.kind, h.snippet) for h in a.hits), q
            assert sorted((g.key, g.count) for g in b.sessions) == sorted((g.key, g.count) for g in a.sessions), q
        # the best hits come first across shards: ranks are sorted and offsets page through them
        res = two.search("snapshot", limit=40)
        assert [h.rank for h in res.hits] == sorted(h.rank for h in res.hits)
        page2 = two.search("snapshot", limit=20, offset=20).hits
        assert [(h.session, h.seq) for h in page2] == [(h.session, h.seq) for h in res.hits[20:]]
        grouped = two.search("snapshot", groups=5)            # the 5 sessions with most matches + the hits'
        every = {g.key: g.count for g in two.search("snapshot", limit=1, groups=None).sessions}
        fifth = sorted(every.values(), reverse=True)[4]
        assert {k for k, n in every.items() if n > fifth} <= {g.key for g in grouped.sessions}
        assert sum(1 for g in grouped.sessions if g.count >= fifth) >= 5
        assert {h.session_key for h in grouped.hits} <= {g.key for g in grouped.sessions}
        assert len(grouped.sessions) <= 5 + len(grouped.hits) and grouped.session_total > 5
        assert two.behind() == 0
    # a new FullTextIndex (another job) finds the shards from the index file
    with FullTextIndex(root, db_path=str(tmp_path / "two.sqlite")) as again:
        assert len(again.parts()) == 2 and again.indexed_count() == len(m["sessions"])
    assert _digest(root) == before                 # the store byte-identical


def test_grown_session_in_a_sharded_index_is_read_alone(home, tmp_path):
    root, m = home
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=2)
        assert len(ix.parts()) == 2
        rep = ix.update()
        assert (rep.files_opened, rep.bytes_read, rep.indexed, rep.grown) == (0, 0, 0, 0)
        assert rep.unchanged == len(m["sessions"])
        # grow one session of each shard: each is read from where it stopped, nothing else
        grown = {}
        for k, p in enumerate(ix.parts()):
            path = p.conn.execute("SELECT path FROM sessions WHERE path LIKE '%.jsonl' AND status = 'ok' "
                                  "ORDER BY path LIMIT 1").fetchone()[0]
            grown[k] = next((sid, x) for sid, x in m["sessions"].items() if x == path)
        assert len(grown) == 2
        originals = {}
        try:
            for k, (sid, path) in grown.items():
                with open(path, "rb") as f:
                    originals[path] = f.read()
                last = max(json.loads(x)["seq"] for x in originals[path].splitlines()[1:] if b'"seq"' in x)
                row = {"type": "user/message", "seq": last + 1, "time": 5,
                       "data": {"role": "user", "content": [{"type": "text", "text": f"shardgrowth{k} here"}],
                                "source": {"kind": "user"}, "id": "g"}, "surfaceOp": "append"}
                with open(path, "ab") as f:
                    f.write(json.dumps(row).encode() + b"\n")
                grown[k] = (sid, path, last + 1)
            rep = ix.update()
            assert (rep.grown, rep.indexed, rep.files_opened) == (2, 0, 2)
            assert rep.bytes_read < 2000
            for k, (sid, _path, seq) in grown.items():
                assert [(h.session, h.seq) for h in ix.search(f"shardgrowth{k}").hits] == [(sid, seq)]
                assert [h.session for h in ix.parts()[k].search(f"shardgrowth{k}").hits] == [sid]
            # a new session goes to the shard its path's hash says
            src = grown[0][1]
            new_dir = os.path.join(os.path.dirname(os.path.dirname(src)), "shard-new-session")
            os.makedirs(new_dir)
            new = os.path.join(new_dir, "session.jsonl")
            with open(src, "rb") as f:
                head, _, rest = f.read().partition(b"\n")
            hdr = json.loads(head)
            hdr["id"] = "shard-new-session"
            with open(new, "wb") as f:
                f.write(json.dumps(hdr).encode() + b"\n" + rest)
            originals[new] = None
            rep = ix.update()
            assert (rep.indexed, rep.grown, rep.files_opened) == (1, 0, 1)
            k = shard_of(new, 2)
            assert ix.parts()[k].conn.execute("SELECT count(*) FROM sessions WHERE path = ?", (new,)).fetchone()[0] == 1
            assert ix.parts()[1 - k].conn.execute("SELECT count(*) FROM sessions WHERE path = ?",
                                                  (new,)).fetchone()[0] == 0
            assert {h.session for h in ix.search("shardgrowth0").hits} == {grown[0][0], "shard-new-session"}
            _check(ix)
            with pytest.raises(ValueError):
                ix.parts()[1].update()             # a shard alone does not know its files
        finally:
            for path, data in originals.items():
                if data is None:
                    os.remove(path)
                    os.rmdir(os.path.dirname(path))
                    continue
                with open(path, "wb") as f:
                    f.write(data)


_DYING = (
    "import os, app.store.fulltext as F, app.store.ftswrite as W\n"
    "W._COMMIT_SESSIONS = 10\n"
    "real = F.FullTextIndex._index_found\n"
    "n = [0]\n"
    "def found(self, *a, **kw):\n"
    "    n[0] += 1\n"
    "    if n[0] == 35:\n"
    "        os._exit(9)\n"             # killed: no commit, no close
    "    return real(self, *a, **kw)\n"
    "F.FullTextIndex._index_found = found\n"
    "F.serve_shard()\n")


def _shard_code(monkeypatch, code: str) -> None:
    """The launcher runs ``code`` (``python -c``) in place of the fts-shard worker."""
    real = childproc.worker_argv
    monkeypatch.setattr(childproc, "worker_argv",
                        lambda kind, *a: [sys.executable, "-c", code] if kind == "fts-shard" else real(kind, *a))


def test_a_shard_worker_killed_mid_build(home, tmp_path, monkeypatch):
    root, m = home
    with FullTextIndex(root, db_path=str(tmp_path / "ref.sqlite")) as ref:
        ref.update(workers=0)
        want = _entries(ref)
    _shard_code(monkeypatch, _DYING)
    db = str(tmp_path / "ix.sqlite")
    with FullTextIndex(root, db_path=db) as ix:
        rep = ix.update(workers=2)
        # the worker's shard kept what it committed (30 sessions), the rest was indexed here
        assert any("index worker 1 stopped (exit code 9" in p for p in rep.problems)
        assert rep.unchanged == 30 and rep.indexed == len(m["sessions"]) - 30
        assert ix.indexed_count() == len(m["sessions"])
        assert _entries(ix) == want
        _check(ix)
    # the killed worker's shard alone, as it was left: a usable index of 30 whole sessions
    _shard_code(monkeypatch, _DYING.replace("n[0] == 35", "n[0] == 25"))
    db2 = str(tmp_path / "ix2.sqlite")
    monkeypatch.setattr(FullTextIndex, "update_one", _primary_only(FullTextIndex.update_one))
    with FullTextIndex(root, db_path=db2) as ix:
        ix.update(workers=2)
    with FullTextIndex(root, db_path=shard_path(db2, 1), part=(1, 2)) as sh:
        assert sh.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        sh.conn.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 1)")
        assert sh.indexed_count() == 20                # two commits of 10; the rows after them are gone
        keys = [r[0] for r in sh.conn.execute("SELECT key FROM sessions")]
        assert sorted(e for e in _entries(sh)) == sorted(e for e in want if e[0] in keys)
    monkeypatch.undo()
    with FullTextIndex(root, db_path=db2) as ix:      # the next update finishes every shard
        rep = ix.update()
        assert rep.unchanged >= 20 and ix.indexed_count() == len(m["sessions"])
        assert _entries(ix) == want
        _check(ix)


def _primary_only(real):
    """update_one that indexes nothing in shard 0 and does not finish a dead worker's shard."""
    def run(self, progress, cancel, workers, scanned):
        if self.part[0] == 0:
            return fulltext.UpdateReport()
        return fulltext.UpdateReport(cancelled=True)
    return run


def test_rebuild_of_a_sharded_index(home, tmp_path):
    root, m = home
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=2)
        n = ix.indexed_count()
        rep = ix.rebuild(workers=0)                    # one shard now; the other file emptied
        assert rep.indexed == n and len(ix.parts()) == 1 and ix.indexed_count() == n
        with FullTextIndex(root, db_path=shard_path(ix.db_path, 1), part=(1, 2)) as old:
            assert old.indexed_count() == 0
        rep = ix.rebuild(workers=2)
        assert rep.indexed == n and len(ix.parts()) == 2 and ix.indexed_count() == n
        sid, seq, _ = m["planted"]["plant3text"]
        assert [(h.session, h.seq) for h in ix.search("plant3text").hits] == [(sid, seq)]
