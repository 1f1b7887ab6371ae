"""The saved surface status index (app.store.surface_cache.cached_surface) equals a fresh pass: on every
fixture, after the log grows (through a torn last row), and after it is truncated or replaced."""
from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

import pytest

from app.log.index.reader import LogReader
from app.log.fold.surface import SurfaceIndex, index_for, page_surface
from app.store import indexcache, surface_cache
from app.store.surface_cache import cached_surface
from app.tools.synth import SessionSynth, write_jsonl

repo_root = Path(__file__).resolve().parents[1]
fixtures = repo_root.parent / "shared" / "fixtures" / "dsh"
NEXT = repo_root.parent / "shared" / "fixtures" / "dsh-next"


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(d))
    monkeypatch.delenv("SESSION_LENS_INDEX_CACHE", raising=False)
    return d


def _fresh(path: str) -> SurfaceIndex:
    return index_for(LogReader.open(path))


def _same(a: SurfaceIndex, b: SurfaceIndex, path: str) -> None:
    assert a.to_state() == b.to_state(), path
    evs = list(LogReader.open(path).iter_events(logical=True))
    assert page_surface(a, evs) == page_surface(b, evs), path


def _cached(path: str) -> tuple[SurfaceIndex, str]:
    r = LogReader.open(path)
    idx, status = cached_surface(r)
    assert index_for(r) is idx                  # the page's index_for gets the saved one
    return idx, status


def _synth(path: Path, turns: int = 30, version: int = 0) -> Path:
    write_jsonl(str(path), SessionSynth(seed=3, context_window=20000, **({"version": version} if version else {})),
                turns=turns)
    return path


@pytest.mark.slow
def test_saved_equals_fresh_on_every_fixture(cache, tmp_path):
    paths = sorted(glob.glob(str(fixtures / "**/*.jsonl"), recursive=True))
    paths += sorted(glob.glob(str(NEXT / "**/*.jsonl"), recursive=True))
    paths += [str(_synth(tmp_path / "s0.jsonl")), str(_synth(tmp_path / "s4.jsonl", version=4))]
    compared = 0
    for p in paths:
        if LogReader.open(p).fatal:
            continue
        built, st1 = _cached(p)
        again, st2 = _cached(p)
        assert (st1, st2) == ("built", "hit"), p
        fresh = _fresh(p)
        _same(built, fresh, p)
        _same(again, fresh, p)
        compared += 1
    assert compared > 150


@pytest.mark.parametrize("frac", [0.2, 0.5, 0.83])
@pytest.mark.slow
def test_grown_log_extends_the_saved_index(cache, tmp_path, frac):
    full = _synth(tmp_path / "full.jsonl", turns=40)
    data = full.read_bytes()
    cut = int(len(data) * frac)                  # mid-row: the grown-from log ends in a torn row
    assert data[cut - 1:cut] != b"\n"
    p = tmp_path / "session.jsonl"
    p.write_bytes(data[:cut])
    _, st = _cached(str(p))
    assert st == "built"
    with open(p, "ab") as f:                    # appended in two writes, reopened after each
        f.write(data[cut:cut + (len(data) - cut) // 2])
    mid, st = _cached(str(p))
    assert st == "extended"
    _same(mid, _fresh(str(p)), str(p))
    with open(p, "ab") as f:
        f.write(data[cut + (len(data) - cut) // 2:])
    grown, st = _cached(str(p))
    assert st == "extended"
    fresh = _fresh(str(p))
    _same(grown, fresh, str(p))
    assert _fresh(str(full)).to_state() == fresh.to_state()
    assert len(fresh.compactions) >= 2 and any(len(fresh.replacement_chain(s)) >= 2 for s in fresh.fold.replaced_by)
    assert _cached(str(p))[1] == "hit"


@pytest.mark.slow
def test_truncated_or_replaced_log_is_indexed_afresh(cache, tmp_path):
    src = _synth(tmp_path / "a.jsonl", turns=40)
    p = tmp_path / "session.jsonl"
    shutil.copyfile(src, p)
    assert _cached(str(p))[1] == "built"
    data = p.read_bytes()
    keep = data[:data.rfind(b"\n", 0, len(data) // 2) + 1]
    with open(p, "r+b") as f:                  # truncated in place (same inode)
        f.truncate(len(keep))
    idx, st = _cached(str(p))
    assert st == "built"
    _same(idx, _fresh(str(p)), str(p))
    other = _synth(tmp_path / "b.jsonl", turns=35, version=4)
    os.replace(other, p)                        # another file at the path
    idx, st = _cached(str(p))
    assert st == "built"
    _same(idx, _fresh(str(p)), str(p))


@pytest.mark.slow
def test_same_size_rewrite_and_corrupt_cache_file(cache, tmp_path):
    p = _synth(tmp_path / "session.jsonl", turns=30)
    assert _cached(str(p))[1] == "built"
    data = bytearray(p.read_bytes())
    i = data.rfind(b'"surfaceOp":"append"')
    assert i > 0
    data[i + 13:i + 19] = b"appenD"                 # an in-place rewrite near the end, same size
    st0 = os.stat(p)
    p.write_bytes(bytes(data))
    os.utime(p, ns=(st0.st_atime_ns, st0.st_mtime_ns + 1_000_000))
    idx, st = _cached(str(p))
    assert st == "built"
    _same(idx, _fresh(str(p)), str(p))
    (f,) = list((cache / "index").glob("*.surface"))
    blob = bytearray(f.read_bytes())
    blob[len(blob) // 2] ^= 0xFF
    f.write_bytes(bytes(blob))
    idx, st = _cached(str(p))
    assert st == "built"
    _same(idx, _fresh(str(p)), str(p))


def test_cache_off_is_uncached(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_INDEX_CACHE", "0")
    p = _synth(tmp_path / "session.jsonl", turns=10)
    idx, st = _cached(str(p))
    assert st == "uncached"
    _same(idx, _fresh(str(p)), str(p))
    assert indexcache.cache_root() is None


def test_older_format_is_rebuilt_not_misread(cache, tmp_path):
    """A ``.surface`` file of the format before the columns (the index's magic, MessagePack of dicts, a
    sound digest) or with columns of another byte order is rebuilt; a sound file is mapped, not read in."""
    import hashlib

    import msgspec
    p = _synth(tmp_path / "session.jsonl", turns=30)
    built, st = _cached(str(p))
    assert st == "built" and len(built.fold.replaced_by) > 0
    (f,) = list((cache / "index").glob("*.surface"))
    again, st = _cached(str(p))
    assert st == "hit" and isinstance(again.fold.columns.shadowed, memoryview)
    old = indexcache.MAGIC + msgspec.msgpack.encode({"format": 3, "state": {"replaced_by": {}}})
    f.write_bytes(old + hashlib.blake2b(old, digest_size=indexcache.DIGEST_SIZE).digest())
    idx, st = _cached(str(p))
    assert st == "built"
    _same(idx, _fresh(str(p)), str(p))
    loaded = surface_cache._load_surface(f)
    assert loaded is not None
    head, cols = loaded
    head.byteorder = "big" if head.byteorder == "little" else "little"
    surface_cache._save_surface(f, head, dict(cols))
    assert surface_cache._load_surface(f) is None
    idx, st = _cached(str(p))
    assert st == "built"
    _same(idx, _fresh(str(p)), str(p))
