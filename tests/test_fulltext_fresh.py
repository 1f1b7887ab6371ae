"""The fast freshness check of the home index (issue 32: a broad query from the command line in
0.3 s with the freshness check): the manifest of the last walk, checked by one stat per folder and
file, answers as the walk does.  A session that grew (its folder's mtime unchanged), a new session
file or folder, and a link whose target appears are all seen; folders changed too recently, and
folders with such links, are never trusted."""
from __future__ import annotations

import json
import os
import shutil
import sys
import time

import pytest

from app.cli.main import main as cli
from app.store.ftsfresh import MANIFEST_KEY
from app.store.ftslive import live_search
from app.store.fulltext import FullTextIndex
from app.tools.plant import make_home
from tests.fixtures_util import FIXTURES


@pytest.fixture(scope="module")
def home0(tmp_path_factory):
    root = tmp_path_factory.mktemp("home0")
    make_home(str(root), str(FIXTURES), copies=1, planted=3, zstd_every=7)
    return str(root)


def _home(home0, tmp_path) -> str:
    root = str(tmp_path / "home")
    shutil.copytree(home0, root, symlinks=True)
    return root


def _settle(root: str, age_s: float = 60.0) -> None:
    """Every folder's mtime moved back (as a home left alone for a minute): the walk can vouch for them."""
    old = time.time_ns() - int(age_s * 1e9)
    for d, _dirs, _files in os.walk(root):
        os.utime(d, ns=(old, old))


def _grow(path: str, word: str) -> int:
    with open(path, "rb") as f:
        seq = json.loads(f.read().rstrip(b"\n").rsplit(b"\n", 1)[-1])["seq"] + 1
    with open(path, "ab") as f:
        f.write(json.dumps({"type": "user/message", "seq": seq, "time": 1,
                            "data": {"content": f"{word} here"}}).encode() + b"\n")
    return seq


def _answer(res) -> tuple:
    return ([(h.session_key, h.seq, h.kind, h.snippet, h.rank) for h in res.hits], res.total, res.session_total,
            [(g.key, g.count) for g in res.sessions], res.unindexed)


def _some_session(ix) -> str:
    return ix.conn.execute("SELECT min(path) FROM sessions WHERE format = 'jsonl'").fetchone()[0]


def test_the_manifest_answers_as_the_walk_and_a_grown_session_is_seen(home0, tmp_path):
    root = _home(home0, tmp_path)
    _settle(root)
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=0)
        walk = ix.conn.execute("SELECT value FROM meta WHERE key = 'walk'").fetchone()[0]
        assert ix.fresh_digest() == walk                # one stat per folder and file: the index is current
        for q in ("the", "error", "the -error"):
            fast = live_search(ix, q, exact=False)
            assert fast.walked is None                  # answered without a walk
            assert _answer(fast) == _answer(live_search(ix, q, exact=False, walked=ix.walk()))
        path = _some_session(ix)
        folder = os.stat(os.path.dirname(path)).st_mtime_ns
        seq = _grow(path, "growthmarkerword")
        assert os.stat(os.path.dirname(path)).st_mtime_ns == folder   # an append leaves its folder's mtime
        assert ix.fresh_digest() is None
        res = live_search(ix, "growthmarkerword")
        assert res.unindexed == [path] and [(h.path, h.seq) for h in res.hits] == [(path, seq)]
        assert ix.update(workers=0).grown == 1          # re-indexed; its manifest checks again
        assert ix.fresh_digest() is not None
        res = live_search(ix, "growthmarkerword")
        assert res.walked is None and not res.unindexed and [(h.path, h.seq) for h in res.hits] == [(path, seq)]


def test_a_new_session_file_or_folder_is_seen(home0, tmp_path):
    root = _home(home0, tmp_path)
    _settle(root)
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=0)
        src = _some_session(ix)
        assert ix.fresh_digest() is not None
        beside = os.path.join(os.path.dirname(src), "other.jsonl")   # a second session in a session's folder
        shutil.copyfile(src, beside)
        assert ix.fresh_digest() is None
        assert live_search(ix, "the").unindexed == [beside]
        ix.update(workers=0)
        _settle(root)                                   # (the folder just changed: not vouched for yet)
        assert ix.fresh_digest() is None                # its folder's mtime moved since the manifest
        ix.update(workers=0)
        assert ix.fresh_digest() is not None
        project = os.path.dirname(os.path.dirname(src))
        os.mkdir(os.path.join(project, "0000-new"))
        new = os.path.join(project, "0000-new", "session.jsonl")
        shutil.copyfile(src, new)
        assert ix.fresh_digest() is None
        assert live_search(ix, "the").unindexed == [new]
        os.remove(beside)                               # a session removed: seen too
        assert ix.fresh_digest() is None
        ix.update(workers=0)
        assert not live_search(ix, "the").unindexed


def test_folders_changed_just_now_are_not_trusted_until_a_query_walks_them_settled(home0, tmp_path, monkeypatch,
                                                                                    capsys):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    root = _home(home0, tmp_path)                       # (copied just now: every folder's mtime is now)
    assert cli(["search", root, "--rebuild", "--json"]) == 0
    with FullTextIndex(root) as ix:
        assert ix.fresh_digest() is None and not _has_manifest(ix)
    capsys.readouterr()
    _settle(root)                                       # the folders settle; no file changed
    outs = []
    for _ in range(3):                                  # a walk, then the manifest it kept, twice
        assert cli(["search", root, "the", "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
        with FullTextIndex(root) as ix:
            assert _has_manifest(ix) and ix.fresh_digest() is not None
    assert outs[0] == outs[1] == outs[2]
    assert outs[0]["index"]["complete"] and outs[0]["update"]["unchanged"] == outs[0]["indexed"]
    with FullTextIndex(root) as ix:                     # the manifest's answer was the walk's
        fast = live_search(ix, "the")
        assert fast.walked is None and _answer(fast) == _answer(live_search(ix, "the", walked=ix.walk()))


def _has_manifest(ix) -> bool:
    return ix.conn.execute("SELECT 1 FROM meta WHERE key = ?", (MANIFEST_KEY,)).fetchone() is not None


def test_a_link_to_no_file_is_never_trusted_and_its_target_appearing_is_seen(home0, tmp_path):
    """A session file's name that is a link to nothing is passed over by the walk; its target can
    appear without the folder's mtime moving, so such a folder is listed by every walk (the kept
    listings and the manifest never vouch for it)."""
    root = _home(home0, tmp_path)
    project = os.path.join(root, "sessions", sorted(os.listdir(os.path.join(root, "sessions")))[0])
    os.mkdir(os.path.join(project, "0000-link"))
    link = os.path.join(project, "0000-link", "session.jsonl")
    target = str(tmp_path / "target.jsonl")
    os.symlink(target, link)
    _settle(root)
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=0)
        ix.update(workers=0)                            # (the listings the first update kept are used)
        assert not _has_manifest(ix) and ix.fresh_digest() is None
        shutil.copyfile(_some_session(ix), target)      # the link's folder is untouched
        res = live_search(ix, "the")
        assert res.unindexed == [link]
        assert link in {g.key for g in res.sessions}


def test_a_damaged_manifest_is_no_answer(home0, tmp_path):
    """Cut short or with any byte of its numbers changed, the manifest never vouches (nor raises)."""
    from app.store.ftsfresh import fresh_digest
    root = _home(home0, tmp_path)
    _settle(root)
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=0)
        blob = ix.conn.execute("SELECT value FROM meta WHERE key = ?", (MANIFEST_KEY,)).fetchone()[0]
        digest = fresh_digest(blob)
        assert digest is not None
        for cut in (0, 3, 4, 19, 20, 27, len(blob) // 2, len(blob) - 1):
            assert fresh_digest(blob[:cut]) is None
        n, ng = int.from_bytes(blob[4:12], sys.byteorder), int.from_bytes(blob[12:20], sys.byteorder)
        numbers = range(20 + 8 * ng, 20 + 8 * (ng + 4 * n))
        for at in sorted({numbers[0], numbers[-1], *numbers[::97]}):
            assert fresh_digest(blob[:at] + bytes([blob[at] ^ 0x10]) + blob[at + 1:]) is None
        assert fresh_digest(blob + b"\0x") is None and fresh_digest("not bytes") is None
        assert fresh_digest(blob) == digest


def test_the_extension_checks_a_manifest_as_its_python_definition(home0, tmp_path):
    """``manifest_same`` in C (app/log/index/rowscan_c.c, search section) against
    :func:`app.store.ftsfresh.same_py`: unchanged, after each kind of change, and damaged."""
    from app.store import ftsfresh
    c = ftsfresh.c_check()
    if c is None:
        pytest.skip("the row scanner's extension is not built here")
    root = _home(home0, tmp_path)
    _settle(root)
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=0)
        blob = ix.conn.execute("SELECT value FROM meta WHERE key = ?", (MANIFEST_KEY,)).fetchone()[0]
        src = _some_session(ix)
    assert c(blob) == ftsfresh.same_py(blob) == 1
    n, ng = int.from_bytes(blob[4:12], sys.byteorder), int.from_bytes(blob[12:20], sys.byteorder)
    damaged = [blob[:cut] for cut in (0, 4, 19, 20, 20 + 8 * ng, len(blob) // 2, len(blob) - 1)]
    damaged += [blob[:at] + bytes([blob[at] ^ 0x10]) + blob[at + 1:]
                for at in range(20, 20 + 8 * (ng + 4 * n), 61)]
    damaged += [blob + b"\0", blob + b"\0x", blob[:4] + (1 << 62).to_bytes(8, sys.byteorder) + blob[12:],
                blob[:12] + (n + 1).to_bytes(8, sys.byteorder) + blob[20:], blob.replace(b"\0", b"\0" + b"x" * 5000, 2)]
    for bad in damaged:
        assert c(bad) == ftsfresh.same_py(bad) != 1
    folder = os.path.dirname(src)
    changes = [lambda: _grow(src, "someword"),
               lambda: shutil.copyfile(src, os.path.join(folder, "other.jsonl")),
               lambda: os.utime(os.path.dirname(folder)),
               lambda: os.remove(src)]
    for change in changes:                              # each from a current manifest
        _settle(root)
        with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
            ix.update(workers=0)
            blob = ix.conn.execute("SELECT value FROM meta WHERE key = ?", (MANIFEST_KEY,)).fetchone()[0]
        assert c(blob) == ftsfresh.same_py(blob) == 1
        change()
        assert c(blob) == ftsfresh.same_py(blob) == 0


def test_behind_is_told_by_the_manifest_and_a_grown_session_still_counts(home0, tmp_path, monkeypatch):
    """The window's poll (``behind()``, every 30 s) checks the manifest instead of walking."""
    root = _home(home0, tmp_path)
    _settle(root)
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update(workers=0)
        with monkeypatch.context() as mp:
            mp.setattr(ix, "walk", lambda: pytest.fail("walked"))
            assert ix.behind() == 0
        _grow(_some_session(ix), "growthmarkerword")
        assert ix.behind() == 1                         # (the manifest no longer holds: walked)


@pytest.mark.parametrize("workers", [0, 2])
def test_an_update_with_nothing_changed_reports_as_the_walk_without_walking(home0, tmp_path, monkeypatch, workers):
    """The manifest holding, an update has nothing to do: its report (sessions, unchanged, the
    problems of bad files in order, shard by shard) is the walking update's, and no walk is made."""
    root = _home(home0, tmp_path)
    project = os.path.join(root, "sessions", sorted(os.listdir(os.path.join(root, "sessions")))[0])
    for name in ("0000-bad", "zzzz-bad"):
        os.mkdir(os.path.join(project, name))
        with open(os.path.join(project, name, "session.jsonl"), "w") as f:
            f.write("not a session header\n")
    _settle(root)
    with FullTextIndex(root, db_path=str(tmp_path / "ix.sqlite")) as ix:
        first = ix.update(workers=workers)
        assert len(first.problems) == 2 and (workers == 0) == (ix.part[1] == 1)
        ix.conn.execute("DELETE FROM meta WHERE key = ?", (MANIFEST_KEY,))
        walked = ix.update(workers=workers)               # (walks: no manifest; keeps one)
        assert walked.files_opened == 0 and walked.unchanged == walked.sessions
        with monkeypatch.context() as mp:
            mp.setattr(ix, "walk", lambda: pytest.fail("walked"))
            quick = ix.update(workers=workers)
        assert {**quick.to_dict(), "seconds": 0} == {**walked.to_dict(), "seconds": 0}
        assert quick.problems == walked.problems
        _grow(_some_session(ix), "growthmarkerword")
        assert ix.update(workers=workers).grown == 1      # (the manifest no longer holds: walked)
