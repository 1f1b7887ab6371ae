"""The outline (turns, errors, problems) saved beside the index: the same answer as a fresh pass, reused
only for the very same bytes (a grown log, an in-place rewrite with its mtime reset, a damaged cache file
are all read again), never saved when cut short."""
from __future__ import annotations

import os

import pytest

from app.log.query.outline import build_outline
from app.store.faces import open_reader
from app.store.outline_cache import cached_outline
from app.tools.hostile import jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))


def _outline(p):
    r = open_reader(str(p))
    try:
        return cached_outline(r)
    finally:
        r.close()


def test_saved_outline_is_the_fresh_one(tmp_path):
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), SessionSynth(12), target_bytes=300_000, crash=True)
    logs = [p]
    data = p.read_bytes()
    for name, b, _kept in jsonl_mutants(data, 3, 10):
        m = tmp_path / f"m-{name.replace('/', '_')}.jsonl"
        m.write_bytes(b)
        logs.append(m)
    for f in logs:
        fresh = build_outline(open_reader(str(f)))
        ol, status = _outline(f)
        assert status == "built" and ol == fresh, f.name
        ol, status = _outline(f)
        assert status == "hit" and ol == fresh, f.name


def test_changed_bytes_are_read_again(tmp_path):
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), SessionSynth(13), target_bytes=200_000)
    assert _outline(p)[1] == "built" and _outline(p)[1] == "hit"
    # an in-place rewrite of a middle row that keeps the size and the mtime
    st = os.stat(p)
    data = bytearray(p.read_bytes())
    mid = data.index(b'"turn":', len(data) // 2)
    data[mid + 7:mid + 8] = b"9" if data[mid + 7:mid + 8] != b"9" else b"8"
    p.write_bytes(bytes(data))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    ol, status = _outline(p)
    assert status == "built" and ol == build_outline(open_reader(str(p)))
    # a grown log
    with open(p, "ab") as f:
        f.write(b'{"type":"session/title","seq":999999,"time":1,"data":{"title":"x"}}\n')
    assert _outline(p)[1] == "built"
    # a damaged cache file is a miss
    cache = next((tmp_path / "cache").rglob("*.outline"))
    cache.write_bytes(cache.read_bytes()[:-5] + b"XXXXX")
    assert _outline(p)[1] == "built" and _outline(p)[1] == "hit"


def test_a_cancelled_pass_is_not_saved(tmp_path):
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), SessionSynth(14), target_bytes=300_000)
    r = open_reader(str(p))
    ol, status = cached_outline(r, cancel=lambda: True)
    assert status == "built" and not ol.complete
    assert _outline(p)[1] == "built"          # nothing was saved by the cut-short pass


def test_the_saved_outline_is_read_as_an_untrusted_cache_file(tmp_path):
    """The outline file is read like every cache file (issue 28): a FIFO or a link to /dev/zero in its
    place is a miss (no hang, no unbounded read), and a file signed with the unkeyed digest is not trusted."""
    import hashlib
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), SessionSynth(5), target_bytes=100_000)
    assert _outline(p)[1] == "built"
    (saved,) = (tmp_path / "cache").rglob("*.outline")
    body = saved.read_bytes()[:-32]
    saved.write_bytes(body + hashlib.blake2b(body, digest_size=32).digest())     # unkeyed: forged
    assert _outline(p)[1] == "built"
    for swap in ("fifo", "zero"):
        saved.unlink()
        if swap == "fifo":
            os.mkfifo(saved)
        else:
            os.symlink("/dev/zero", saved)
        assert _outline(p)[1] == "built"
        assert _outline(p)[1] == "hit"          # saved anew by an atomic rename (never written through the link)
        assert saved.is_file() and not saved.is_symlink()
