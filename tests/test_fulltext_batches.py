"""The index build's write batching (app/store/fulltext.py): sessions read whole are written
together at commit time, a session too big for memory is written in a savepoint as it is read;
a session failing half-way, in either path, leaves no row behind and the others whole."""
from __future__ import annotations

import pytest

from app.log.query import extract
from app.store import fulltext, ftswrite
from app.store.fulltext import FullTextIndex
from app.tools.plant import make_home
from tests.fixtures_util import FIXTURES


@pytest.fixture(scope="module")
def small_home(tmp_path_factory):
    root = tmp_path_factory.mktemp("batches") / "home"
    m = make_home(str(root), str(FIXTURES), copies=1, planted=4, synth_turns=3)
    return str(root), m


def _entries(ix) -> list:
    """Every entry as (session key, seq, kind, tool, body): independent of rowids and sids."""
    return sorted(ix.conn.execute(
        "SELECT s.key, e.seq, e.kind, coalesce(e.tool, ''), f.body FROM entries e JOIN sessions s ON s.sid = e.sid "
        "JOIN fts f ON f.rowid = e.rowid").fetchall())


def _savepoints(monkeypatch) -> dict:
    """Count the savepoints the build takes (sessions written as they are read)."""
    seen = {"n": 0}
    real = FullTextIndex._feed

    def feed(self, *a, **kw):
        out = real(self, *a, **kw)
        seen["n"] += bool(self._sp_open)
        return out
    monkeypatch.setattr(FullTextIndex, "_feed", feed)
    return seen


def _check(ix):
    assert ix.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    ix.conn.execute("INSERT INTO fts(fts, rank) VALUES ('integrity-check', 1)")
    # no entry without its session, no fts row without its entry
    assert ix.conn.execute("SELECT count(*) FROM entries WHERE sid NOT IN (SELECT sid FROM sessions)").fetchone()[0] == 0
    assert ix.conn.execute("SELECT count(*) FROM fts WHERE rowid NOT IN (SELECT rowid FROM entries)").fetchone()[0] == 0


@pytest.mark.parametrize("memory_bytes", [16 << 20, 64])
@pytest.mark.slow
def test_batched_and_savepoint_paths_give_the_same_index(small_home, tmp_path, monkeypatch, memory_bytes):
    root, m = small_home
    with FullTextIndex(root, db_path=str(tmp_path / "ref.sqlite")) as ref:
        ref.update()
        want = _entries(ref)
    monkeypatch.setattr(fulltext, "_FAST_BYTES", 0)              # every session through its reader
    monkeypatch.setattr(ftswrite, "_MEMORY_BYTES", memory_bytes)   # 64: every synth session takes a savepoint
    monkeypatch.setattr(ftswrite, "_FLUSH_ROWS", 8)
    spy = _savepoints(monkeypatch)
    monkeypatch.setattr(ftswrite, "_COMMIT_SESSIONS", 7)
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        rep = ix.update()
        assert rep.indexed == len(m["sessions"]) and not rep.problems
        assert (spy["n"] >= len(m["planted"]) // 5) if memory_bytes == 64 else spy["n"] == 0
        _check(ix)
        assert _entries(ix) == want
        for word, (sid, seq, _kind) in m["planted"].items():
            if " " not in word:
                assert [(h.session, h.seq) for h in ix.search(word).hits] == [(sid, seq)]


@pytest.mark.parametrize("memory_bytes", [16 << 20, 64])
@pytest.mark.slow
def test_a_session_failing_half_way_leaves_nothing_behind(small_home, tmp_path, monkeypatch, memory_bytes):
    root, m = small_home
    victim_sid, _, _ = m["planted"]["plant2text"]
    victim = m["sessions"][victim_sid]
    with FullTextIndex(root, db_path=str(tmp_path / "ref.sqlite")) as ref:
        ref.update()
        want = [e for e in _entries(ref) if e[0] != victim]
    real = extract.shown_fields
    seen = {"n": 0}

    def failing(ev, calls):
        # fail in the victim session's third turn, after rows of it were produced
        out = real(ev, calls)
        if any("plant2" in s.field.text for s in out):
            seen["n"] += 1
            if seen["n"] == 2:
                raise RuntimeError("planted failure")
        return out
    monkeypatch.setattr(extract, "shown_fields", failing)
    monkeypatch.setattr(extract, "text_row_c", lambda: None)     # every row through shown_fields
    if memory_bytes == 64:                                         # the reader path, in a savepoint
        monkeypatch.setattr(fulltext, "_FAST_BYTES", 0)
    monkeypatch.setattr(ftswrite, "_MEMORY_BYTES", memory_bytes)
    monkeypatch.setattr(ftswrite, "_FLUSH_ROWS", 8)
    monkeypatch.setattr(ftswrite, "_COMMIT_SESSIONS", 5)
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        rep = ix.update()
        assert rep.skipped == 1 and any("planted failure" in p and victim in p for p in rep.problems)
        _check(ix)
        assert _entries(ix) == want
        assert (victim, "RuntimeError: planted failure") in ix.session_problems()
        # fixed: the next update indexes it whole
        monkeypatch.setattr(extract, "shown_fields", real)
        ix.conn.execute("UPDATE files SET size = -1 WHERE path = ?", (victim,))   # make it look changed
        rep = ix.update()
        assert rep.indexed == 1 and rep.skipped == 0
        _check(ix)
        with FullTextIndex(root, db_path=str(tmp_path / "ref.sqlite")) as ref:
            assert _entries(ix) == _entries(ref)


def test_opening_a_built_index_does_not_wait_for_a_writer(small_home, tmp_path):
    """A search opens the index while a build holds the write lock: opening writes nothing."""
    import sqlite3
    import time
    root, m = small_home
    db = str(tmp_path / "ix.sqlite")
    with FullTextIndex(root, db_path=db) as ix:
        ix.update()
    writer = sqlite3.connect(db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE meta SET value = value WHERE key = 'schema'")
    try:
        t0 = time.perf_counter()
        with FullTextIndex(root, db_path=db) as ix2:
            sid, seq, _ = m["planted"]["plant0reason"]
            assert [(h.session, h.seq) for h in ix2.search("plant0reason").hits] == [(sid, seq)]
        assert time.perf_counter() - t0 < 5.0          # the busy timeout is 10 s
    finally:
        writer.execute("ROLLBACK")
        writer.close()
