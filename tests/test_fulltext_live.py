"""The home search answers whatever state its index is in (issue 32 item 1, issue 28 items 2 and 4):
the index database is used only when Session Lens made it, a killed build says so and resumes,
and a query while the build runs returns every hit exactly once and names the sessions still
being indexed."""
from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from app.cli.main import main as cli
from app.store import ftswrite
from app.store.ftsdb import APP_ID, IndexRefused
from app.store.ftslive import live_search
from app.store.fulltext import FullTextIndex, index_path_for
from app.tools.plant import make_home
from tests.fixtures_util import FIXTURES

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _sha(p) -> str:
    with open(p, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


@pytest.fixture(scope="module")
def small_home(tmp_path_factory):
    root = tmp_path_factory.mktemp("home")
    m = make_home(str(root), str(FIXTURES), copies=1, planted=4, zstd_every=11)
    m["root"] = str(root)
    ref_db = str(tmp_path_factory.mktemp("ref") / "ref.sqlite")
    with FullTextIndex(str(root), db_path=ref_db) as ref:
        ref.update(workers=0)
        m["ref"] = {w: _keys(ref.search(w, limit=5000)) for w in ("the", "error", *_words(m))}
        m["totals"] = {w: ref.search(w, limit=1).total for w in m["ref"]}
    return m


def _words(m) -> list[str]:
    return [w for w in m["planted"] if " " not in w and w.isascii()]


def _keys(res) -> list[tuple[str, int, str]]:
    return sorted((h.session_key, h.seq, h.kind) for h in res.hits)


def _user_store(tmp_path) -> str:
    """A SQLite file of the user's (a dsh store, say) that an index path may be made to point at."""
    p = str(tmp_path / "user-store.sqlite")
    c = sqlite3.connect(p)
    c.execute("CREATE TABLE sessions(id TEXT PRIMARY KEY, header TEXT)")
    c.execute("INSERT INTO sessions VALUES ('s1', '{}')")
    c.commit()
    c.close()
    return p


# --------------------------------------------------------------------------- 28 item 2

def test_a_symlinked_index_database_never_writes_to_its_target(small_home, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    target = _user_store(tmp_path)
    before = _sha(target)
    db = index_path_for(small_home["root"])
    os.makedirs(os.path.dirname(db))
    os.symlink(target, db)
    with pytest.raises(IndexRefused, match="symbolic link"):
        FullTextIndex(small_home["root"])
    assert cli(["search", small_home["root"], "the", "--json"]) == 2
    assert "symbolic link" in capsys.readouterr().err
    assert _sha(target) == before and not os.path.exists(target + "-wal")
    assert os.path.islink(db)                     # left as it was: refused, not replaced


def test_an_index_database_not_made_by_session_lens_is_refused(small_home, tmp_path):
    target = _user_store(tmp_path)
    before = _sha(target)
    with pytest.raises(IndexRefused, match="not made by Session Lens"):
        FullTextIndex(small_home["root"], db_path=target)
    assert _sha(target) == before
    # a side file SQLite would write through (a link in place of the -wal) is refused too
    db = str(tmp_path / "ours.sqlite")
    with FullTextIndex(small_home["root"], db_path=db) as ix:
        assert ix.conn.execute("PRAGMA application_id").fetchone()[0] == APP_ID
    for side in ("-wal", "-shm"):
        if os.path.exists(db + side):
            os.remove(db + side)
    os.symlink(target, db + "-wal")
    with pytest.raises(IndexRefused, match="symbolic link"):
        FullTextIndex(small_home["root"], db_path=db)
    assert _sha(target) == before
    os.remove(db + "-wal")
    # a hard link (writes would reach the other name) and a FIFO (never blocks) are refused
    os.link(db, str(tmp_path / "other-name"))
    with pytest.raises(IndexRefused, match="hard links"):
        FullTextIndex(small_home["root"], db_path=db)
    fifo = str(tmp_path / "fifo.sqlite")
    os.mkfifo(fifo)
    with pytest.raises(IndexRefused, match="not a regular file"):
        FullTextIndex(small_home["root"], db_path=fifo)


def test_a_meta_field_of_the_wrong_type_is_a_miss(small_home, tmp_path):
    db = str(tmp_path / "ix.sqlite")
    with FullTextIndex(small_home["root"], db_path=db) as ix:
        ix.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES ('shards', 'many'), ('schema', x'00ff')")
    with FullTextIndex(small_home["root"], db_path=db) as ix:     # dropped and rebuilt, never an error
        assert ix.part == (0, 1)
        ix.update(workers=0)
        assert ix.search("the", limit=1).total == small_home["totals"]["the"]


# --------------------------------------------------------------------------- 28 item 4: a killed build

_KILLED = r"""
import os, sys, time
sys.path.insert(0, sys.argv[3])
from app.store import ftswrite
from app.store.fulltext import FullTextIndex
ftswrite._COMMIT_SESSIONS = 20
ix = FullTextIndex(sys.argv[1])
def progress(done, total, nbytes):
    if done == int(sys.argv[2]):
        print("K", flush=True)
        time.sleep(120)          # killed here (SIGKILL), mid-build, with an open transaction
ix.update(progress=progress, workers=0)
"""


def test_a_killed_build_says_so_then_resumes(small_home, tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(cache))
    root = small_home["root"]
    env = dict(os.environ, SESSION_LENS_CACHE_DIR=str(cache))
    p = subprocess.Popen([sys.executable, "-c", _KILLED, root, "50", REPO], env=env, stdout=subprocess.PIPE)
    assert p.stdout is not None and p.stdout.readline() == b"K\n"
    p.kill()                                      # SIGKILL
    assert p.wait(timeout=30) == -9
    n = len(small_home["sessions"])
    for word in ("the", *_words(small_home)):
        assert cli(["search", root, word, "--no-update", "--json", "--limit", "5000"]) == 0
        obj = json.loads(capsys.readouterr().out)
        assert obj["index"]["build"] == "interrupted" and not obj["index"]["complete"]
        assert 0 < obj["index"]["notIndexed"] < n and obj["indexed"] == n - obj["index"]["notIndexed"]
        # every hit is there once: the index's part and the scan's part never overlap
        assert obj["total"] == small_home["totals"][word]
        got = sorted((h["path"], h["seq"], h["kind"]) for h in obj["hits"])
        assert len(set(got)) == len(got)
        assert len(got) == min(5000, obj["total"])
    assert cli(["search", root, "the", "--no-update"]) == 0
    assert "the index build did not finish" in capsys.readouterr().out
    with FullTextIndex(root) as ix:
        assert ix.build_state() == "interrupted"
        done = ix.indexed_count()
        assert done % 20 == 0 and 0 < done < n          # whole commits only
        rep = ix.update(workers=0)                      # resumes: what was committed is kept
        assert rep.unchanged == done and rep.indexed == n - done
        assert ix.build_state() == "done" and not ix.pending()
    assert cli(["search", root, "the", "--no-update", "--json", "--limit", "5000"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["index"] == {"build": "done", "complete": True, "notIndexed": 0}
    assert obj["total"] == small_home["totals"]["the"]


# --------------------------------------------------------------------------- 32 item 1: a query while the build runs

def test_a_query_while_the_build_runs_returns_every_hit_once(small_home, tmp_path, monkeypatch):
    monkeypatch.setattr(ftswrite, "_COMMIT_SESSIONS", 25)
    root = small_home["root"]
    db = str(tmp_path / "ix.sqlite")
    mid, go = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def build() -> None:
        try:
            with FullTextIndex(root, db_path=db) as ix:
                def progress(done, _total, _nbytes):
                    if done == 60:
                        mid.set()
                        go.wait(60)
                ix.update(progress=progress, workers=0)
        except BaseException as e:  # reported by the test thread
            errors.append(e)
            mid.set()
    t = threading.Thread(target=build)
    t.start()
    try:
        assert mid.wait(120) and not errors
        n = len(small_home["sessions"])
        with FullTextIndex(root, db_path=db) as ix:
            for word in small_home["ref"]:
                partials = []
                res = live_search(ix, word, limit=5000, on_partial=partials.append, every=0.0)
                assert res.build == "running"
                # the committed sessions answered by the index, the others by the scan, named
                assert 0 < len(res.unindexed) < n and res.scanned == len(res.unindexed) and not res.partial
                assert set(res.unindexed).isdisjoint(
                    k for (k,) in ix.conn.execute("SELECT key FROM sessions WHERE status = 'ok'"))
                assert _keys(res) == small_home["ref"][word], word
                assert res.total == small_home["totals"][word]
                for part in partials:                 # streamed answers: never a hit twice
                    ks = _keys(part)
                    assert len(set(ks)) == len(ks) and part.partial and part.unindexed == res.unindexed
    finally:
        go.set()
        t.join(120)
    assert not errors
    with FullTextIndex(root, db_path=db) as ix:
        res = live_search(ix, "the", limit=5000)
        assert res.build == "done" and not res.unindexed and _keys(res) == small_home["ref"]["the"]


def test_a_session_that_grows_is_scanned_until_reindexed(small_home, tmp_path):
    import shutil
    root = str(tmp_path / "home")
    shutil.copytree(small_home["root"], root)
    db = str(tmp_path / "ix.sqlite")
    with FullTextIndex(root, db_path=db) as ix:
        ix.update(workers=0)
        path = ix.conn.execute("SELECT min(path) FROM sessions WHERE format = 'jsonl'").fetchone()[0]
        with open(path, "rb") as f:
            last = f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1]
        seq = json.loads(last)["seq"] + 1
        with open(path, "ab") as f:
            f.write(json.dumps({"type": "user/message", "seq": seq, "time": 1,
                                "data": {"content": "growthmarkerword here"}}).encode() + b"\n")
        res = live_search(ix, "growthmarkerword")
        assert res.unindexed == [path] and [(h.path, h.seq) for h in res.hits] == [(path, seq)]
        total_before = ix.search("the", limit=1).total
        assert live_search(ix, "the").total == total_before      # the stale copy is left out, not counted twice
        rep = ix.update(workers=0)
        assert rep.grown == 1
        res = live_search(ix, "growthmarkerword")
        assert not res.unindexed and [(h.path, h.seq) for h in res.hits] == [(path, seq)]


def test_the_cli_answers_a_never_indexed_home_and_builds_in_the_background(small_home, tmp_path, monkeypatch, capsys):
    import time
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    root = small_home["root"]
    assert cli(["search", root, "the", "--json", "--limit", "5000"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["index"]["build"] == "never" and obj["index"]["background"] is True
    assert obj["index"]["notIndexed"] == len(small_home["sessions"]) and obj["indexed"] == 0
    assert obj["total"] == small_home["totals"]["the"] and "update" not in obj
    end = time.monotonic() + 120
    while True:                                   # the detached build finishes on its own
        with FullTextIndex(root) as ix:
            if ix.build_state() == "done" and not ix.pending():
                break
        assert time.monotonic() < end, "the background build did not finish"
        time.sleep(0.5)
    assert cli(["search", root, "the", "--json", "--limit", "5000"]) == 0
    obj = json.loads(capsys.readouterr().out)
    assert obj["index"] == {"build": "done", "complete": True, "notIndexed": 0}
    assert obj["total"] == small_home["totals"]["the"] and obj["update"]["filesOpened"] == 0


@pytest.mark.parametrize("query", ["plant0output OR plant1output", "error NOT bash", "the error OR plant2output",
                                   "error -bash", "plant0output OR nosuchwordzz", "bash NOT error OR plant3output",
                                   "kind:error provider", "tool:bash the", "\"command timed\"", "exit*"])
def test_the_scan_answers_as_the_index_does(small_home, tmp_path, query):
    """A never-indexed home (all scanned) gives the hits a full index gives: OR, NOT between words,
    -words, filters, and words as FTS5 tokenizes them."""
    with FullTextIndex(small_home["root"], db_path=str(tmp_path / "ref.sqlite")) as ref:
        ref.update(workers=0)
        want = ref.search(query, limit=5000)
    with FullTextIndex(small_home["root"], db_path=str(tmp_path / "empty.sqlite")) as ix:
        got = live_search(ix, query, limit=5000)
    assert len(got.unindexed) == len(small_home["sessions"]) and got.build == "never"
    assert _keys(got) == _keys(want) and got.total == want.total
    assert want.total > 0


def test_the_scan_covers_zstd_sqlite_and_bad_sessions(tmp_path):
    """Every kind of session a home holds is scanned as the index reads it: zstd frames, a SQLite
    store's sessions, the v2-v4 corpus; a corrupt or unknown-version session adds nothing."""
    from tests.test_fulltext import _build_home
    root = tmp_path / "home"
    m = _build_home(root)
    with FullTextIndex(str(root), db_path=str(tmp_path / "ref.sqlite")) as ref:
        ref.update(workers=0)
        want = {w: ref.search(w, limit=5000) for w in ("sqliteplantword", "the", "error", *_words(m))}
    with FullTextIndex(str(root), db_path=str(tmp_path / "empty.sqlite")) as ix:
        for w, r in want.items():
            got = live_search(ix, w, limit=5000)
            assert _keys(got) == _keys(r) and got.total == r.total, w
        assert any(k.endswith(".zstd") for k in got.unindexed) and any("#" in k for k in got.unindexed)
    assert want["sqliteplantword"].total == 1
