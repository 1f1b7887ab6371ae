"""Issue 15, the legacy-row fork at copy speed: the JSONL seed is handed to the writer while the flagged
segments are still being read and converted (the kernel copy of the stored ranges overlaps the row
pass).  A failure on either side publishes nothing: the copy failing mid-way, the row pass failing after
the writer has copied part of the seed; the temporary is removed and a failed batch is never written
again (the writer's retry would publish a child from part of the seed)."""
from __future__ import annotations

import errno
import os
import sys
import threading

import pytest

from app.log.index.reader import LogReader
from app.store import fork_stream, fork_verify, forking
from app.store.indexcache import cached_index
from app.store.writer import SessionWriter, WriterError

from test_list_fork_speed import _legacy_log


def _leftovers(root) -> list[str]:
    """Every file and folder under ``root`` (a failed fork's debris)."""
    return sorted(os.path.relpath(os.path.join(d, n), root) for d, ds, fs in os.walk(root) for n in ds + fs)


def _writer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("writer:") and t.is_alive()]


@pytest.fixture
def legacy(tmp_path):
    p, n = _legacy_log(tmp_path)
    r = LogReader.open(str(p))
    cached_index(r)
    assert n >= 4 and sum(r.index.legacy) >= n
    return p, r


def test_the_copy_overlaps_the_row_pass(legacy, tmp_path, monkeypatch):
    """The writer copies the first stored range before the row pass has reached the last flagged segment."""
    p, r = legacy
    events: list[str] = []
    real_rows, real_range = forking._converted_rows, forking.FileRange
    copied = threading.Event()

    def rows(*a, **k):
        if events.count("convert") == 2:
            # (the pass waits here for a copy: the writer copies while the pass runs, or never
            # before it ends; a wait, not a race, so a loaded machine cannot make this flaky)
            copied.wait(30)
        events.append("convert")
        return real_rows(*a, **k)

    class Spy(real_range):
        def copy_into(self, out_fd):
            events.append("copy")
            copied.set()
            return super().copy_into(out_fd)
    monkeypatch.setattr(forking, "_converted_rows", rows)
    monkeypatch.setattr(forking, "FileRange", Spy)
    switch = sys.getswitchinterval()
    res = forking.fork(r, None, out_store=str(tmp_path / "out"), child_id="overlap")
    assert sys.getswitchinterval() == switch            # (shortened only while the pass feeds the writer)
    assert events.count("convert") >= 4 and events.count("copy") >= 4
    assert events.index("copy") < len(events) - 1 - events[::-1].index("convert")   # a copy before the last pass
    child = LogReader.open(res["child"])
    assert not any(e.legacy for e in child.events()) and child.header.seedLength == res["seedLength"]


def test_the_copy_failing_midway_publishes_nothing(legacy, tmp_path, monkeypatch):
    p, r = legacy
    before = p.read_bytes()
    calls = []
    real = forking.FileRange

    class DiskFull(real):
        def copy_into(self, out_fd):
            calls.append(len(self))
            if len(calls) == 3:                        # the disk fills up under the third stored range
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return super().copy_into(out_fd)
    monkeypatch.setattr(forking, "FileRange", DiskFull)
    out = tmp_path / "out"
    with pytest.raises(WriterError, match="No space left"):
        forking.fork(r, None, out_store=str(out), child_id="disk-full")
    assert len(calls) == 3                             # nothing copied after the failure, no retry
    assert not [f for f in _leftovers(out) if "session" in os.path.basename(f) and ".jsonl" in f]
    assert not [f for f in _leftovers(out) if f.endswith(".tmp")]
    assert not [f for f in _leftovers(out) if "disk-full" in f]          # the child's folder is gone too
    assert not _writer_threads()
    assert p.read_bytes() == before
    monkeypatch.setattr(forking, "FileRange", real)
    res = forking.fork(LogReader.open(str(p)), None, out_store=str(out), child_id="disk-full")   # same id: free
    assert LogReader.open(res["child"]).header.seedLength == res["seedLength"]


def test_the_row_pass_failing_after_copies_publishes_nothing(legacy, tmp_path, monkeypatch):
    """The source shrinks after the writer has copied part of the seed: the row pass cannot read the next
    flagged segment; the fork fails with that error and the partly written temporary is removed."""
    p, r = legacy
    copied = []
    real_rows, real_range = forking._converted_rows, forking.FileRange
    seen = []

    class Spy(real_range):
        def copy_into(self, out_fd):
            how = super().copy_into(out_fd)
            copied.append(len(self))
            return how

    def rows(*a, **k):
        seen.append(1)
        if len(seen) == 3:                             # wait until the writer has copied, then cut the source
            for _ in range(2000):
                if copied:
                    break
                threading.Event().wait(0.005)
            with open(p, "r+b") as f:
                f.truncate(os.path.getsize(p) // 3)
        return real_rows(*a, **k)
    monkeypatch.setattr(forking, "FileRange", Spy)
    monkeypatch.setattr(forking, "_converted_rows", rows)
    out = tmp_path / "out"
    switch = sys.getswitchinterval()
    with pytest.raises((fork_verify.ForkVerifyError, forking.ForkError)):
        forking.fork(r, None, out_store=str(out), child_id="shrunk")
    assert sys.getswitchinterval() == switch
    assert copied                                      # the writer had started: a temporary existed
    assert not [f for f in _leftovers(out) if ".jsonl" in f]
    assert not [f for f in _leftovers(out) if "shrunk" in f]
    assert not _writer_threads()


def test_a_one_shot_writer_never_writes_a_failed_batch_again(tmp_path):
    """``retry=False``: the failed batch is dropped; flush and append keep raising its error, nothing is
    published (the default writer retries on the next flush)."""
    path = tmp_path / "s" / "session.jsonl"
    attempts = []

    def chunks():
        attempts.append(1)
        yield b'{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}\n'
        raise OSError(errno.EIO, "the source went away")

    from app.store.writer import RawText
    w = SessionWriter(str(path), {"type": "session", "version": 0, "id": "s"}, batch_delay_ms=1, retry=False)
    try:
        w.append([RawText(chunks())])
        for _ in range(2):
            with pytest.raises(WriterError, match="the source went away"):
                w.flush()
        with pytest.raises(WriterError):
            w.append([{"type": "turn/end", "seq": 1, "time": 0, "data": {"turn": 1}}])
    finally:
        w.abandon()
    assert attempts == [1]
    assert not path.exists() and not [n for n in os.listdir(path.parent) if n.endswith(".tmp")]


def test_the_seed_stream_is_one_pass_and_carries_a_producer_failure():
    s = fork_stream.SeedStream(max_text=10)
    assert s.put(b"abc") and s.put(b"defgh")
    s.fail(ValueError("bad row"))
    got = []
    with pytest.raises(fork_stream.SeedAbandoned, match="bad row"):
        for c in s:
            got.append(c)
    assert got == [b"abc", b"defgh"] and s.broken
    with pytest.raises(fork_stream.SeedAbandoned, match="not written again"):
        list(s)
    assert not s.put(b"more")                          # the writer stopped taking chunks
