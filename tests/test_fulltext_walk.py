"""The index's stat walk keeps the folder listings of the last update (issue 32 item 2: the
freshness check of a 10k home): a folder whose inode and mtime are unchanged is not listed again,
a listing is kept only when the folder's mtime was settled (older than RACY_NS), so a file system
with a coarse clock cannot hide a new session, and every file is stat-ed each time."""
from __future__ import annotations

import os
import time

from app.store import ftswalk
from app.store.ftswalk import scan_root
from app.store.fulltext import FullTextIndex
from tests.fixtures_util import ev, write_log

HOUR_NS = 3600 * 10**9


def _session(home, project: str, sid: str, text: str = "hello"):
    return write_log(home / "sessions" / project / sid / "session.jsonl",
                     [ev(0, "turn/start", {"turn": 1}),
                      ev(1, "user/message", {"turn": 1, "content": [{"type": "text", "text": text}]})],
                     session_id=sid)


def _age(path, ns: int = HOUR_NS) -> None:
    """Set the mtime of ``path`` and every folder under it an hour back (settled folders)."""
    for d, _dirs, _files in os.walk(path):
        st = os.stat(d)
        os.utime(d, ns=(st.st_atime_ns, st.st_mtime_ns - ns))


def _sig(walked) -> list:
    return [(p, st.st_ino, st.st_size, st.st_mtime_ns, pr) for p, st, pr in walked[0]] + \
        [(p, st.st_ino) for p, st in walked[1]]


def _counting(monkeypatch) -> list:
    listed: list = []
    real = ftswalk._listing

    def spy(d, depth, max_depth):
        listed.append(d)
        return real(d, depth, max_depth)
    monkeypatch.setattr(ftswalk, "_listing", spy)
    return listed


def test_settled_folders_are_not_listed_again_and_the_walk_is_the_same(tmp_path, monkeypatch):
    home = tmp_path / "home"
    for i in range(6):
        _session(home, f"--p{i % 2}--", f"s{i}")
    _age(home)
    listed = _counting(monkeypatch)
    with FullTextIndex(str(home), db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update()
        assert len(listed) == 1 + 2 + 6                      # home/sessions, 2 projects, 6 sessions
        listed.clear()
        walked = ix.walk()
        assert listed == [] and _sig(walked) == _sig(scan_root(str(home)))
        # a session grows (its folder's listing is reused, its file stat-ed): seen
        p = home / "sessions" / "--p0--" / "s0" / "session.jsonl"
        with open(p, "ab") as f:
            f.write(b'{"type":"user/message","seq":2,"time":3,"data":{"content":[{"type":"text","text":"more"}]}}\n')
        listed.clear()
        walked = ix.walk()
        assert listed == [] and _sig(walked) == _sig(scan_root(str(home)))
        assert ix.update(walked=walked).grown == 1
        # a new session in a project: the project folder's mtime moved, it is listed again
        _session(home, "--p1--", "s9", "newword")
        listed.clear()
        walked = ix.walk()
        assert str(home / "sessions" / "--p1--") in listed and _sig(walked) == _sig(scan_root(str(home)))
        ix.update(walked=walked)
        assert [h.session for h in ix.search("newword").hits] == ["s9"]


def test_a_coarse_clock_cannot_hide_a_new_session(tmp_path, monkeypatch):
    """A folder changed just before the update is not kept (its mtime is not settled): a session
    added afterwards within the same clock tick (the mtime put back, as a 2 s clock would leave
    it) is still found."""
    home = tmp_path / "home"
    _session(home, "--p--", "s1")
    _age(home)
    proj = home / "sessions" / "--p--"
    _session(home, "--p--", "s2")                     # the project folder changes now
    st = os.stat(proj)
    assert st.st_mtime_ns > time.time_ns() - ftswalk.RACY_NS
    with FullTextIndex(str(home), db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update()
        _session(home, "--p--", "s3", "tickword")
        os.utime(proj, ns=(st.st_atime_ns, st.st_mtime_ns))     # the same tick: the mtime did not move
        listed = _counting(monkeypatch)
        walked = ix.walk()
        assert str(proj) in listed
        assert str(proj / "s3" / "session.jsonl") in [p for p, _st, _pr in walked[0]]
        ix.update(walked=walked)
        assert [h.session for h in ix.search("tickword").hits] == ["s3"]


def test_an_unchanged_home_is_answered_without_reading_the_files_tables(tmp_path, monkeypatch):
    """The last whole update kept a digest of its walk: a query whose walk has the same digest
    compares nothing; any change (a grown log) and the files are compared as before."""
    from app.store import ftslive
    from app.store.ftslive import live_search
    home = tmp_path / "home"
    for i in range(4):
        _session(home, "--p--", f"s{i}", f"word{i} common")
    loads: list = []
    real = ftslive._load

    def spy(parts):
        loads.append(len(parts))
        return real(parts)
    monkeypatch.setattr(ftslive, "_load", spy)
    with FullTextIndex(str(home), db_path=str(tmp_path / "ix.sqlite")) as ix:
        before = live_search(ix, "common")
        assert before.unindexed and loads              # never indexed: compared, scanned
        ix.update()
        loads.clear()
        res = live_search(ix, "common")
        assert loads == [] and not res.unindexed and res.total == 4
        p = home / "sessions" / "--p--" / "s2" / "session.jsonl"
        with open(p, "ab") as f:
            f.write(b'{"type":"user/message","seq":2,"time":3,"data":{"content":[{"type":"text","text":"grownword"}]}}\n')
        res = live_search(ix, "grownword")
        assert loads and res.unindexed == [str(p)] and [h.session for h in res.hits] == ["s2"]
        assert live_search(ix, "common").total == 4           # the stale copy left out, the scan counts it
        ix.update()
        loads.clear()
        assert [h.session for h in live_search(ix, "grownword").hits] == ["s2"] and loads == []


def test_a_rebuild_lists_every_folder_again(tmp_path):
    """A folder's mtime put back by hand after a change (utime) keeps its old listing trusted until
    the folder changes again; ``--rebuild`` (FullTextIndex.rebuild) lists every folder again."""
    home = tmp_path / "home"
    _session(home, "--p--", "s1")
    _age(home)
    proj = home / "sessions" / "--p--"
    with FullTextIndex(str(home), db_path=str(tmp_path / "ix.sqlite")) as ix:
        ix.update()
        st = os.stat(proj)
        _session(home, "--p--", "s2", "handword")
        os.utime(proj, ns=(st.st_atime_ns, st.st_mtime_ns))
        ix.rebuild()
        assert [h.session for h in ix.search("handword").hits] == ["s2"]
