"""Fork at copy speed: the kernel copies the seed (with fallbacks), the copy is verified."""
from __future__ import annotations

import hashlib
import os

import pytest

from app.log.index.reader import LogReader
from app.store import fork_verify, publish
from app.store.fork_verify import ForkVerifyError
from app.store.forking import fork
from app.store.indexcache import cached_index
from app.store.publish import FileRange
from app.tools.synth import SessionSynth, write_jsonl


@pytest.mark.parametrize("broken", [(), ("copy_file_range",), ("copy_file_range", "sendfile")])
def test_file_range_copies_exactly_with_every_fallback(tmp_path, monkeypatch, broken):
    src = tmp_path / "src"
    data = os.urandom(3 << 20) + b"tail"
    src.write_bytes(data)

    def fail(*a, **k):
        raise OSError(95, "not supported here")
    for name in broken:
        monkeypatch.setattr(os, name, fail)
    fd = os.open(src, os.O_RDONLY)
    try:
        out = tmp_path / "out"
        with open(out, "wb") as f:
            f.write(b"head")
            f.flush()
            how = FileRange(fd, 1000, len(data)).copy_into(f.fileno())
            f.write(b"!")
    finally:
        os.close(fd)
    assert how == ("copy_file_range", "sendfile", "read-write")[len(broken)]
    assert out.read_bytes() == b"head" + data[1000:] + b"!"


def test_file_range_refuses_a_source_that_ended_early(tmp_path):
    src = tmp_path / "src"
    src.write_bytes(b"x" * 1000)
    fd = os.open(src, os.O_RDONLY)
    try:
        with open(tmp_path / "out", "wb") as f, pytest.raises(publish.PublishError):
            FileRange(fd, 0, 5000).copy_into(f.fileno())
    finally:
        os.close(fd)


@pytest.mark.slow
def test_fork_of_a_large_log_is_copied_and_verified(tmp_path):
    p = tmp_path / "store" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(8), target_bytes=6 << 20)
    before = hashlib.sha256(p.read_bytes()).hexdigest()
    r = LogReader.open(str(p))
    cached_index(r)
    res = fork(r, None)
    assert res["bytesCopied"] > 5 << 20 and "bytes at 18 places" in res["verified"]
    child = LogReader.open(res["child"])
    c_events = child.events()
    p_events = LogReader.open(str(p)).events()
    assert [e.raw for e in c_events[:res["seedLength"]]] == [e.raw for e in p_events[:res["seedLength"]]]
    assert c_events[-1].type == "session/end-seed" and len(c_events) == res["seedLength"] + 1
    full = fork(LogReader.open(str(p)), None, out_store=str(tmp_path / "other"), verify="full")
    assert full["verified"] == "all bytes" and full["crc32"] is not None
    assert hashlib.sha256(p.read_bytes()).hexdigest() == before


def test_verification_finds_a_child_that_differs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    data = os.urandom(4 << 20)
    a.write_bytes(data)
    for where in (10, len(data) // 2 + 7, len(data) - 3):
        bad = bytearray(b"H" + data)
        bad[1 + where] ^= 1
        b.write_bytes(bytes(bad))
        full_only = where == len(data) // 2 + 7        # between the sampled windows
        fork_verify.verify_copy(str(a), str(b), 0, len(data), 1, full=False) if full_only else None
        with pytest.raises(ForkVerifyError):
            if full_only:
                fork_verify.verify_copy(str(a), str(b), 0, len(data), 1, full=True)
            else:
                fork_verify.verify_copy(str(a), str(b), 0, len(data), 1, full=False)
