"""Issue 29: the work done ahead (fold checkpoints, surface index, outline) in ONE streaming read of the
log, each product equal to its own separate build, and cached as before."""
from __future__ import annotations

import json
from dataclasses import replace

import msgspec
import pytest

from app.log.fold.checkpoints import EVERY, build_checkpoints
from app.log.fold.surface import ScanEnd, SurfaceIndex, extend_index
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.log.query.ahead import build_ahead
from app.log.query.outline import build_outline
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import FIXTURES, REPO, fast_sample, rel, session_files

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
CASES = session_files() + sorted(NEXT.rglob("*.v[1234].jsonl"))


def _name(p):
    return rel(p) if FIXTURES in p.parents else str(p.relative_to(NEXT))


def _surface_state(idx: SurfaceIndex):
    st = idx.to_state()
    cols = {k: list(v) for k, v in (st.columns or {}).items()}
    st.columns = None
    return msgspec.to_builtins(st), cols


def separate(reader, every=EVERY):
    """The three builds as they are done apart (three passes)."""
    end = ScanEnd()
    sx = extend_index(reader, SurfaceIndex(reader.version or 0), None, end)
    return build_checkpoints(reader, every), sx, end, build_outline(reader)


def plain(ol):
    """An outline as plain data (packed turns, as the pass and the cache give them, compared as the turns they
    give back: every field)."""
    return msgspec.to_builtins(replace(ol, turns=list(ol.turns)))


def assert_same(a, b):
    cps, sx, end, ol = b
    assert a.complete
    assert a.checkpoints.to_builtins() == cps.to_builtins()
    assert _surface_state(a.surface) == _surface_state(sx)
    assert (a.surface_end.pos, a.surface_end.line) == (end.pos, end.line)
    assert plain(a.outline) == plain(ol)


@pytest.mark.parametrize("path", fast_sample(CASES, spread=6), ids=_name)
def test_one_pass_equals_the_three_builds_on_the_fixtures(path):
    assert_same(build_ahead(LogReader.open(str(path))), separate(LogReader.open(str(path))))


def test_every_fixture_is_covered():
    assert len(session_files()) > 50 and len(sorted(NEXT.rglob("*.v4.jsonl"))) > 5


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    p = tmp_path_factory.mktemp("ahead") / "session.v4.jsonl"
    write_jsonl(str(p), SessionSynth(seed=5, version=4, context_window=12_000), target_bytes=1_500_000)
    return p


def _counting(reader, counts):
    """Count the forward reads of ``reader``'s source and the bytes they hand out."""
    fwd = reader.source.forward

    def forward(*a, **kw):
        counts["reads"] += 1
        for seg in fwd(*a, **kw):
            counts["bytes"] += len(seg.data)
            yield seg
    reader.source.forward = forward
    return reader


def test_one_read_on_a_generated_log(generated):
    """A generated v4 log with compactions: the products equal the three builds; the pass reads the log once
    (one forward read, its bytes once); the separate builds read it four times (the outline twice: its
    events, then dsh's read-path rules for the refusals)."""
    one = {"reads": 0, "bytes": 0}
    three = {"reads": 0, "bytes": 0}
    def small(counts):             # small segments, a checkpoint every 64 KiB: many points, seams everywhere
        r = LogReader(RawJsonlSource(str(generated), block=1 << 15))
        r.build_index()
        return _counting(r, counts)
    a = build_ahead(small(one), every=1 << 16)
    b = separate(small(three), every=1 << 16)
    assert_same(a, b)
    assert len(a.checkpoints.points) > 10
    assert one["reads"] == 1 and three["reads"] == 4
    assert one["bytes"] * 4 == three["bytes"] and one["bytes"] > 1_000_000
    assert a.surface.compactions and sum(len(t.error_seqs) for t in a.outline.turns) > 0


def test_zstd_and_sqlite(tmp_path):
    from app.log.source.zstdframes import encode_frame
    from app.store.sqlite_writer import jsonl_to_sqlite
    from app.tools.synth import batches
    z = tmp_path / "session.jsonl.zstd"
    z.write_bytes(b"".join(encode_frame(b"".join(lines)) for lines in batches(SessionSynth(seed=31),
                                                                             target_bytes=400_000)))
    v0 = tmp_path / "session.jsonl"             # (a SQLite store holds v0 sessions)
    write_jsonl(str(v0), SessionSynth(seed=7), target_bytes=400_000)
    db = tmp_path / "store.db"
    jsonl_to_sqlite(v0, db, batch_rows=50)
    sid = json.loads(v0.read_bytes().split(b"\n")[0])["id"]
    for path, s in ((z, None), (db, sid)):
        r = open_reader(str(path), s)
        assert r.source.kind in ("zstd", "sqlite")
        counts = {"reads": 0, "bytes": 0}
        assert_same(build_ahead(_counting(r, counts)), separate(open_reader(str(path), s)))
        assert counts["reads"] == 1


def test_cancelled_pass_keeps_nothing(tmp_path, monkeypatch, generated):
    from app.store.ahead_cache import cached_ahead
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    r = LogReader.open(str(generated))
    calls = [0]

    def cancel():
        calls[0] += 1
        return calls[0] > 3
    ol, st = cached_ahead(r, cancel=cancel)
    assert not ol.complete and st.get("cancelled")
    assert not list((tmp_path / "cache").rglob("*.folds")) and not list((tmp_path / "cache").rglob("*.outline"))


def test_cached_ahead_saves_each_product_from_one_read(tmp_path, monkeypatch, generated):
    """The three caches are written from the one read, and read back (hit) as the separate functions read them."""
    from app.store.ahead_cache import cached_ahead
    from app.store.indexcache import cached_checkpoints
    from app.store.surface_cache import cached_surface
    from app.store.outline_cache import cached_outline
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    counts = {"reads": 0, "bytes": 0}
    r = _counting(LogReader.open(str(generated)), counts)
    r.build_index()
    counts["reads"] = 0
    ol, st = cached_ahead(r)
    assert (st["checkpoints"], st["surface"], st["outline"]) == ("built",) * 3 and counts["reads"] == 1
    b = separate(LogReader.open(str(generated)))
    r2 = LogReader.open(str(generated))
    cps, s1 = cached_checkpoints(r2, build=False)
    sx, s2 = cached_surface(r2)
    ol2, s3 = cached_outline(r2)
    assert (s1, s2, s3) == ("hit",) * 3
    assert cps is not None and cps.to_builtins() == b[0].to_builtins()
    assert _surface_state(sx) == _surface_state(b[1])
    assert plain(ol2) == plain(ol) == plain(b[3])
    _ol, st3 = cached_ahead(LogReader.open(str(generated)))
    assert (st3["checkpoints"], st3["surface"], st3["outline"], st3["pass"]) == ("hit", "hit", "hit", 0)
