"""Issue 36: the background pass's child stays small at any log size -- what the pass keeps while it reads does
not grow with the log beyond its products, and its products are kept compact.

* the outline's turns are packed as each one ends (``outline_packed.TurnSpool``), never a ``TurnEntry`` object a
  turn of the whole log;
* the outline's and the checkpoints' surface folds record no replacement history (neither product reads it);
* the checkpoints' header fold keeps one list for tools written the same by many headers, and the failed
  attempts it keeps (a later message may still cite one) keep no failure text nor usage;
* the outline is saved and read back a block of turns at a time, and comes back packed.

Every product stays equal to its separate build (``test_ahead_pass``, ``test_ahead_lean``)."""
from __future__ import annotations

import gc
import tracemalloc
from dataclasses import replace
from pathlib import Path

import msgspec
import pytest

from app.log.fold.checkpoints import CheckpointBuilder
from app.log.fold.surface import SurfaceIndex, extend_index
from app.log.format.lazyrows import lazy_segment
from app.log.index.reader import LogReader
from app.log.query.ahead import build_ahead
from app.log.query.outline import OutlineBuilder, build_outline
from app.log.query.outline_packed import CompactTurns
from app.store.outline_cache import cached_outline
from app.tools.synth import SessionSynth, write_jsonl


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> dict[tuple[int, int], Path]:
    """Generated logs with compactions: (version, MB) -> path."""
    d = tmp_path_factory.mktemp("flat")
    out = {}
    for v in (0, 4):
        for mb in (1, 4):
            p = d / f"v{v}-{mb}.jsonl"
            write_jsonl(str(p), SessionSynth(seed=3, version=v, context_window=12_000), target_bytes=mb << 20)
            out[v, mb] = p
    return out


def _outline_builder_held(path: Path) -> int:
    """Traced bytes an outline builder holds after the whole log, its turns left out (they are the product)."""
    r = LogReader.open(str(path))
    r.build_index()
    r.tail_state()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        b = OutlineBuilder(r)
        for ev in r.iter_events(logical=False, problems=b.problems):
            b.event(ev)
        b.turns = []
        b.cur = None
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("version", [0, 4])
def test_the_outline_builder_holds_no_more_on_a_longer_log(logs, version):
    """Its surface fold keeps the current nodes only (the old one recorded every shadowed seq: +47 KB from 1 to
    4 MB here, ~1.5 MB at 200 MB)."""
    small, big = _outline_builder_held(logs[version, 1]), _outline_builder_held(logs[version, 4])
    assert big < small + 16_384, (small, big)


def test_the_pass_keeps_its_turns_packed(logs):
    """The pass's outline holds its turns in packed blocks, written to a temporary file as they are made: a few
    dozen bytes a turn of columns (as objects: ~900; with the blocks in memory: ~140)."""
    path = logs[0, 4]
    want = build_outline(LogReader.open(str(path))).turns
    r = LogReader.open(str(path))
    gc.collect()
    tracemalloc.start()
    try:
        ol = build_ahead(r, sink=lambda p: None).outline
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        turns = ol.turns
        ol.turns = []
        assert isinstance(turns, CompactTurns) and turns == want and len(want) > 100
        del turns
        gc.collect()
        per_turn = (held - tracemalloc.get_traced_memory()[0]) / len(want)
    finally:
        tracemalloc.stop()
    assert per_turn < 100, f"{per_turn:.0f} bytes a turn"      # (77 here: blocks in a file; 139 in memory)


def test_the_checkpoint_builder_keeps_no_history_it_never_reads(logs):
    path = logs[4, 4]
    r = LogReader.open(str(path))
    b = CheckpointBuilder(r)
    b.sink = lambda p: None
    for seg in r.source.forward():
        assert b.segment(seg, lazy_segment(r, seg))
    shadowed = extend_index(LogReader.open(str(path)), SurfaceIndex(4)).fold.replaced_by
    assert len(shadowed) > 100 and not b.sf.replaced_by and not b.sf.replaced
    headers = b.hf.tool_history.headers
    distinct = {msgspec.json.encode(tl) for tl in headers.values()}
    assert len(headers) > 10 and len({id(tl) for tl in headers.values()}) == len(distinct)
    opened = {id(a) for a in b.at.open_attempts.values()}
    kept = [a for a in b.at.attempts[:b.slim_at] if id(a) not in opened]
    assert kept or len(b.at.sealed)      # (the settled failed ones are sealed into columns: test_attempts_sealed.py)
    assert all(a.usage is None and (a.finish is None or len(a.finish) == 1) for a in kept)
    # the same points as a builder that kept it all
    assert len(b.cps.points) == 1


def test_the_outline_is_saved_and_read_back_packed(logs, tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    path = logs[4, 1]
    fresh = build_outline(LogReader.open(str(path)))
    ol, st = cached_outline(LogReader.open(str(path)))
    assert st == "built"
    got, st = cached_outline(LogReader.open(str(path)))
    assert st == "hit" and isinstance(got.turns, CompactTurns) and got == fresh
    assert msgspec.to_builtins(replace(got, turns=list(got.turns))) == msgspec.to_builtins(fresh)
    (saved,) = (tmp_path / "cache").rglob("*.outline")
    data = saved.read_bytes()
    assert len(data) < len(msgspec.json.encode(fresh)) / 2       # (the turns compressed)
    saved.write_bytes(data[:-40] + data[-32:])                   # a block cut short: read again
    assert cached_outline(LogReader.open(str(path)))[1] == "built"
    assert cached_outline(LogReader.open(str(path)))[1] == "hit"


def test_a_pass_over_hostile_turns_equals_the_separate_outline(tmp_path):
    """Turn numbers past 64 bits, errors everywhere: the packed turns give back the same outline (a guard)."""
    rows = [b'{"type":"session","id":"h","createdAt":0,"cwd":"/","delegationDepth":0}']
    seq = 0
    for k, turn in enumerate((1, 2**70, -5, 2**63, 7)):
        for typ, data in (("turn/start", {"turn": turn}),
                          ("tool/call", {"turn": turn, "step": 1, "name": f"t{k}", "id": f"c{k}", "args": {}}),
                          ("tool/result", {"turn": turn, "step": 1, "id": f"c{k}", "error": "boom"}),
                          ("turn/end", {"turn": turn, "reason": {"kind": "error"}})):
            rows.append(msgspec.json.encode({"type": typ, "seq": seq, "time": seq, "data": data}))
            seq += 1
    p = tmp_path / "h.jsonl"
    p.write_bytes(b"\n".join(rows) + b"\n")
    want = build_outline(LogReader.open(str(p)))
    got = build_ahead(LogReader.open(str(p))).outline
    assert got == want and [t.turn for t in got.turns] == [1, 2**70, -5, 2**63, 7]
    assert list(got.turns.error_seqs) == sorted(s for t in want.turns for s in t.error_seqs)


def _records():
    """(replacing seq, shadowed seqs): each replacement shadows ten new nodes and one old kept node."""
    seq = 1000
    for r in range(8_000):
        yield seq + 10, [r, *range(seq, seq + 10)]
        seq += 11


def test_the_shadow_map_keeps_no_dict_of_waiting_seqs():
    """Shadowed seqs recorded out of seq order (each compaction also shadows an old kept node) wait at the end of
    their column, not in a dict of ints: the record's peak stays near its 16 bytes a seq (the old: ~45)."""
    from app.log.fold.shadowmap import ShadowColumns
    tracemalloc.start()
    try:
        c = ShadowColumns()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        n = 0
        for by, shadowed in _records():
            c.record(by, shadowed)
            n += len(shadowed)
        peak = (tracemalloc.get_traced_memory()[1] - base) / n
    finally:
        tracemalloc.stop()
    assert peak < 36, f"{peak:.1f} bytes a shadowed seq at the peak"
    want = {s: by for by, shadowed in _records() for s in shadowed}
    assert dict(c.replaced_by) == want


def test_the_pass_writes_its_turn_blocks_to_a_file_as_it_makes_them(logs):
    """The pass's packed turns keep no block in memory (a temporary file holds them, issue 36); sent to the window
    (pickled) they are one buffer of the blocks, read back as a file of the window's own, the same turns."""
    import pickle
    from app.log.blockfile import BlockFile
    path = logs[0, 4]
    want = build_outline(LogReader.open(str(path))).turns
    turns = build_ahead(LogReader.open(str(path)), sink=lambda p: None).outline.turns
    assert isinstance(turns.blocks, BlockFile) and len(turns.blocks) > 1 and not turns.blocks._mem
    assert turns == want
    sent = pickle.loads(pickle.dumps(turns, pickle.HIGHEST_PROTOCOL))
    assert isinstance(sent.blocks, BlockFile) and not sent.blocks._mem and list(sent.blocks) == list(turns.blocks)
    assert sent == want


def test_the_pass_child_trims_its_heap():
    from app.store.scan_child import heap_trimmer
    trim = heap_trimmer()
    assert trim is not None        # (glibc: the tests run on Linux)
    trim()


def test_the_surface_file_is_written_a_piece_at_a_time_with_the_same_bytes(logs, tmp_path, monkeypatch):
    """The saved surface index: the head, then its columns as 8-byte ints (narrow ones widened a piece at a time,
    :func:`~app.log.fold.shadowmap.wide_pieces`), then the digest: byte for byte what a whole copy gave."""
    import struct
    from app.log.fold import shadowmap
    from app.store import surface_cache as ic
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(shadowmap, "PIECE", 100)         # (many pieces)
    path = logs[4, 4]
    idx, st = ic.cached_surface(LogReader.open(str(path)))
    assert st == "built"
    whole = idx.to_state()
    assert len(whole.columns["shadowed"]) > 500 and idx.fold.columns.shadowed.typecode == shadowmap.NARROW
    (saved,) = (tmp_path / "cache").rglob("*.surface")
    data = saved.read_bytes()
    n = struct.unpack("<I", data[len(ic.SURFACE_MAGIC):len(ic.SURFACE_MAGIC) + 4])[0]
    at = len(ic.SURFACE_MAGIC) + 4 + n
    at += -at % 8
    head = msgspec.msgpack.decode(data[len(ic.SURFACE_MAGIC) + 4:len(ic.SURFACE_MAGIC) + 4 + n], type=ic._SurfaceFile)
    cols = whole.columns
    whole.columns = None
    assert head.state == whole and head.lengths == [len(cols[k]) for k in ic._COLUMNS]
    assert data[at:-ic.DIGEST_SIZE] == b"".join(cols[k].tobytes() for k in ic._COLUMNS)
    assert data[-ic.DIGEST_SIZE:] == ic.keyed_hasher(data[:-ic.DIGEST_SIZE]).digest()
    back, st = ic.cached_surface(LogReader.open(str(path)))
    assert st == "hit" and dict(back.fold.replaced_by) == dict(idx.fold.replaced_by)


def _outline_held(path: Path) -> tuple[int, int]:
    """(traced bytes the one pass's outline holds at its end, its turns)."""
    r = LogReader.open(str(path))
    gc.collect()
    tracemalloc.start()
    try:
        a = build_ahead(r, sink=lambda p: None)
        assert a.complete
        n = len(a.outline.turns)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
        a.outline = None
        gc.collect()
        return held - tracemalloc.get_traced_memory()[0], n
    finally:
        tracemalloc.stop()


def test_what_the_pass_holds_grows_little_with_the_log(tmp_path):
    """Generated v0 logs of 2 and 24 MB: what the pass's outline holds at its end (its turns' columns, the errors,
    the problems) grows by under 60 bytes a turn added (~33 with the blocks in a file; ~100 with them in memory).
    (What the surface index holds at the end depends on the surface where the log stops, not only on its size.)"""
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    write_jsonl(str(small), SessionSynth(seed=3, version=0), target_bytes=2 << 20)
    write_jsonl(str(big), SessionSynth(seed=3, version=0), target_bytes=24 << 20)
    (a, na), (b, nb) = _outline_held(small), _outline_held(big)
    assert nb > na + 400 and (b - a) / (nb - na) < 60, (a, na, b, nb)
