"""Caches are hints (issue 28): a rewritten log, a forged or hostile cache file never gives a wrong
answer: the cache is rebuilt or refused, never half-used; a fork re-scans what it copies."""
from __future__ import annotations

import os
import signal
import stat

import msgspec
import pytest

from app.log.fold.fork import ForkError
from app.log.index.reader import LogReader
from app.store import indexcache
from app.store.forking import fork
from app.store.indexcache import cached_checkpoints, cached_index
from app.store.surface_cache import cached_surface
from app.tools import hostile
from app.tools.synth import SessionSynth, write_jsonl


def _log(path, size=400_000, seed=11):
    write_jsonl(str(path), SessionSynth(seed=seed), target_bytes=size)
    return path


def _events(path):
    """(seq, type) of every event of a log, and its problems."""
    r = LogReader.open(str(path))
    probs: list = []
    r.build_index_exact(problems=probs)
    return [(e.seq, e.type) for e in r.iter_events()], [p.code for p in probs]


def _fork_outcome(path, at, out, monkeypatch, cache: bool):
    """What a fork of ``path`` at ``at`` publishes (the child's events, seed length), or the refusal."""
    if not cache:
        monkeypatch.setenv("SESSION_LENS_INDEX_CACHE", "0")
    try:
        res = fork(LogReader.open(str(path)), at, out_store=str(out), child_id="child")
    except ForkError as e:
        return ("refused", e.code)
    finally:
        monkeypatch.delenv("SESSION_LENS_INDEX_CACHE", raising=False)
    evs, probs = _events(res["child"])
    return ("child", res["seedLength"], evs, probs)


def _cache_file(path, suffix=".idx"):
    r = LogReader.open(str(path))
    ident = indexcache.source_identity(r.source)
    return indexcache.cache_file(ident, indexcache.cache_root()).with_suffix(suffix)


def _anchor(path):
    """A message anchor after the middle of the log (a completed turn follows it)."""
    r = LogReader.open(str(path))
    idx = r.build_index()
    ends = [s for s, t in idx.marks(-1, idx.last) if t == "turn/end"]
    return ends[len(ends) * 3 // 4]


@pytest.mark.parametrize("append", [False, True], ids=["same-size-and-mtime", "rewritten-then-grown"])
def test_fork_after_an_in_place_rewrite_never_publishes_a_wrong_child(tmp_path, monkeypatch, append):
    p = _log(tmp_path / "s" / "session.jsonl")
    at = _anchor(p)
    cached_index(LogReader.open(str(p)))                     # the saved index of the file as it was
    st = os.stat(p)
    hostile.rewrite_in_place(str(p), swap_at=0.4, append=append)
    if not append:
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))      # inode, size and mtime as before
        assert (os.stat(p).st_size, os.stat(p).st_mtime_ns, os.stat(p).st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    got = _fork_outcome(p, at, tmp_path / "a", monkeypatch, cache=True)
    want = _fork_outcome(p, at, tmp_path / "b", monkeypatch, cache=False)
    assert got == want
    if got[0] == "child":
        assert got[3] == [] and [s for s, _t in got[2]] == list(range(len(got[2])))


@pytest.mark.parametrize("forge", ["drop-turn-start", "move-turn-end", "shift-segment"])
def test_a_re_signed_index_is_not_trusted_by_fork(tmp_path, monkeypatch, forge):
    p = _log(tmp_path / "s" / "session.jsonl", size=600_000)
    at = _anchor(p)
    cached_index(LogReader.open(str(p)))
    f = _cache_file(p)
    f.write_bytes(hostile.forged_index(f.read_bytes(), forge))
    assert indexcache.load(f.read_bytes()) is not None              # a sound file by its digest
    got = _fork_outcome(p, at, tmp_path / "a", monkeypatch, cache=True)
    want = _fork_outcome(p, at, tmp_path / "b", monkeypatch, cache=False)
    assert got == want and got[0] == "child"
    idx, status = cached_index(LogReader.open(str(p)))          # the fork saved the rebuilt index
    assert status == "hit" and list(idx.mark_seq) == list(LogReader.open(str(p)).build_index().mark_seq)


def test_a_rewrite_keeping_size_and_mtime_misses_every_cache(tmp_path):
    p = _log(tmp_path / "session.jsonl")
    r = LogReader.open(str(p))
    assert cached_index(r)[1] == "built" and cached_checkpoints(r)[1] == "built" and cached_surface(r)[1] == "built"
    st = os.stat(p)
    hostile.rewrite_in_place(str(p), swap_at=0.5, append=False)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    r = LogReader.open(str(p))
    assert cached_index(r)[1] == "built"
    assert cached_checkpoints(r)[1] == "built"
    assert cached_surface(r)[1] == "built"


@pytest.mark.parametrize("kind", ["dev-zero-link", "fifo", "symlink-to-real", "huge-sparse"])
@pytest.mark.parametrize("suffix", [".idx", ".folds", ".surface"])
def test_hostile_cache_files_are_misses(tmp_path, kind, suffix):
    """A cache file that is a link (to /dev/zero, or even to a sound cache file), a FIFO, or bigger
    than any index of the log is not read: the cache is rebuilt, quickly and in bounded memory."""
    p = _log(tmp_path / "session.jsonl", size=200_000)
    r = LogReader.open(str(p))
    cached_index(r), cached_checkpoints(r), cached_surface(r)
    f = _cache_file(p, suffix)
    hostile.hostile_cache_file(str(f), kind)
    r = LogReader.open(str(p))
    fn = {".idx": cached_index, ".folds": cached_checkpoints, ".surface": cached_surface}[suffix]

    def stuck(*_a):
        raise RuntimeError("a cache file blocked the read")      # (no OSError: a cache would take it for a miss)
    old = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(30)                                      # (a FIFO read would block for ever)
    try:
        _got, status = fn(r)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert status == "built"
    assert stat.S_ISREG(os.lstat(f).st_mode)             # replaced by a sound file (the link or FIFO itself)


@pytest.mark.parametrize("field,value", [("size", "12"), ("resume", 3), ("problems", [1]), ("lengths", ["x"]),
                                         ("mtime_ns", 1.5), ("legacy", [7]), ("broken", 1)])
def test_a_meta_field_of_the_wrong_type_is_a_miss(tmp_path, field, value):
    p = _log(tmp_path / "session.jsonl", size=200_000)
    cached_index(LogReader.open(str(p)))
    f = _cache_file(p)
    f.write_bytes(hostile.retyped_index(f.read_bytes(), field, value))
    idx, status = cached_index(LogReader.open(str(p)))
    assert status == "built" and idx.last == LogReader.open(str(p)).build_index().last


def test_folds_meta_of_the_wrong_type_is_a_miss(tmp_path):
    p = _log(tmp_path / "session.jsonl", size=200_000)
    cached_checkpoints(LogReader.open(str(p)))
    f = _cache_file(p, ".folds")
    blob = f.read_bytes()
    meta = msgspec.json.decode(blob[len(indexcache.MAGIC):-indexcache.DIGEST_SIZE])
    meta["upto"] = str(meta["upto"])
    body = indexcache.MAGIC + msgspec.json.encode(meta)
    f.write_bytes(body + indexcache.keyed_hasher(body).digest())
    assert cached_checkpoints(LogReader.open(str(p)))[1] == "built"


def test_cache_folder_is_private_and_another_users_is_refused(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(root))
    p = _log(tmp_path / "session.jsonl", size=200_000)
    assert cached_index(LogReader.open(str(p)))[1] == "built"
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(root / "index").st_mode) == 0o700
    # a subfolder that is a link elsewhere: nothing is written through it
    other = tmp_path / "elsewhere"
    other.mkdir()
    (root / "index").rename(tmp_path / "old-index")
    (root / "index").symlink_to(other)
    assert cached_index(LogReader.open(str(p)))[1] == "built"
    assert list(other.iterdir()) == []
    # a folder owned by another user (as the app sees it): caching is off
    real_uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real_uid + 1)
    assert indexcache.cache_root() is None
    assert cached_index(LogReader.open(str(p)))[1] == "uncached"


def test_title_cache_misses_a_rewrite_keeping_size_and_mtime(tmp_path, monkeypatch):
    """The title cache keys a revision by inode and ctime too: a title renamed in place (same length,
    mtime put back) is read again, by the listing and by a lookup of one session."""
    from app.store import title_cache, titles
    from app.store.discovery import discover
    monkeypatch.setattr(title_cache, "_cache", None)
    p = tmp_path / "s" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=4), target_bytes=200_000)
    with open(p, "ab") as f:
        f.write(b'{"type":"session/title","seq":1000000,"time":0,"data":{"title":"Alpha title"}}\n')
    assert discover(str(p), titles=True).sessions[0].title == "Alpha title"
    title_cache.save()
    monkeypatch.setattr(title_cache, "_cache", None)                # (a new process)
    st = os.stat(p)
    hostile.rename_in_place(str(p), b"Alpha title", b"Omega title")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (os.stat(p).st_size, os.stat(p).st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    assert discover(str(p), titles=True).sessions[0].title == "Omega title"
    monkeypatch.setattr(title_cache, "_cache", None)
    assert titles.session_title(discover(str(p)).sessions[0]) == "Omega title"


def test_an_index_signed_without_the_key_is_a_miss(tmp_path):
    """The digests are keyed (``<cache>/key``, 0600): a ``.idx`` re-signed by anyone who cannot read the
    key (or made on another machine) is rebuilt, so ``index`` and ``request`` never answer from it."""
    p = _log(tmp_path / "session.jsonl", size=600_000)
    cached_index(LogReader.open(str(p)))
    f = _cache_file(p)
    f.write_bytes(hostile.forged_index(f.read_bytes(), "drop-turn-start", keyed=False))
    assert indexcache.load(f.read_bytes()) is None
    idx, status = cached_index(LogReader.open(str(p)))
    assert status == "built" and list(idx.mark_seq) == list(LogReader.open(str(p)).build_index().mark_seq)
    key = indexcache.cache_root() / "key"
    assert stat.S_IMODE(os.lstat(key).st_mode) == 0o600 and len(key.read_bytes()) == 32


def test_a_preview_made_from_a_forged_index_is_refused(tmp_path):
    """A plan the user saw (a preview) from an index that does not describe the file is refused, and
    nothing is published; the index is rebuilt, so the next preview is right."""
    from app.log.fold.fork import plan_fork
    p = _log(tmp_path / "s" / "session.jsonl", size=600_000)
    at = _anchor(p)
    cached_index(LogReader.open(str(p)))
    f = _cache_file(p)
    f.write_bytes(hostile.forged_index(f.read_bytes(), "drop-turn-start"))
    r = LogReader.open(str(p))
    cached_index(r)                                     # (signed with the key: read as a hint)
    plan = plan_fork(r, at)
    with pytest.raises(ForkError) as e:
        fork(r, at, plan=plan, out_store=str(tmp_path / "out"), child_id="c")
    assert e.value.code == "STALE_INDEX"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.jsonl"))
    r2 = LogReader.open(str(p))
    idx, status = cached_index(r2)
    assert status == "hit" and list(idx.mark_seq) == list(LogReader.open(str(p)).build_index().mark_seq)
