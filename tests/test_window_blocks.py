"""The window's whole-log results keep their packed blocks in a temporary file (issue 36): the
hits of a find and the outline's turns hold only their seq columns in the window's heap (a few
bytes a hit or turn, not the ~90 and ~117 the in-memory blocks took, which grew the window with
the log), read back equal; with no temporary file to write, the blocks stay in memory, equal."""
from __future__ import annotations

import gc
import os
import pickle
import tempfile
import tracemalloc

import pytest

from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, find_all
from app.log.query.find_match import Hit
from app.tools.synth import SessionSynth, write_jsonl


def _blocks() -> list:
    return [b"", b"x", os.urandom(70_000), b"\x00" * 5, bytes(range(256)) * 40] + [b"b%d" % i for i in range(50)]


def test_blocks_read_back_equal_and_fall_back_to_memory(monkeypatch):
    from app.log.blockfile import BlockFile
    want = _blocks()
    f = BlockFile()
    for k, b in enumerate(want):
        f.append(b)
        assert f[k] == b and f[-1] == b and f[0] == b""      # read while it grows (the map follows)
    assert list(f) == want and len(f) == len(want) and f.nbytes() == sum(map(len, want))
    assert [f[k] for k in (54, 2, 0, -3)] == [want[k] for k in (54, 2, 0, -3)]
    for proto in (4, 5):                                        # pickled: one buffer, read back as blocks
        assert list(pickle.loads(pickle.dumps(f, proto))) == want
    with pytest.raises(IndexError):
        f[len(want)]
    f.close()
    # no temporary file at all: every block in memory
    def no_file(*_a, **_k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(tempfile, "TemporaryFile", no_file)
    g = BlockFile(want)
    assert list(g) == want and g[-1] == want[-1]
    assert list(pickle.loads(pickle.dumps(f2 := BlockFile(want), 5))) == want    # (read back with no file: in memory)
    del f2
    monkeypatch.undo()
    # the file fills up after a few blocks: the rest stay in memory, all still equal
    real = os.pwrite
    calls = []

    def full(fd, data, at):
        calls.append(at)
        if len(calls) > 4:
            raise OSError(28, "No space left on device")
        return real(fd, data, at)
    monkeypatch.setattr(os, "pwrite", full)
    h = BlockFile(want)
    monkeypatch.undo()
    assert list(h) == want and [h[k] for k in (3, 4, 5, 40)] == [want[k] for k in (3, 4, 5, 40)]
    h.append(b"more")
    assert h[-1] == b"more" and len(h) == len(want) + 1
    for proto in (4, 5):                    # (some blocks in the file, the rest in memory: all sent, in order)
        back = pickle.loads(pickle.dumps(h, proto))
        assert list(back) == want + [b"more"] and back.nbytes() == h.nbytes()
        back.append(b"again")
        assert back[-1] == b"again" and back[-2] == b"more"


def _hits(tmp_path) -> list:
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=5), turns=300)
    r = LogReader.open(str(path))
    try:
        return find_all(r, FindOptions("the"))[0]
    finally:
        r.close()


def test_find_hits_hold_their_seqs_only(tmp_path):
    from app.ui.find_hits import CompactHits
    base = _hits(tmp_path)
    hits = [Hit(**{**h.__dict__, "seq": h.seq + k * 10_000_000}) for k in range(12) for h in base]  # a big find
    assert len(hits) > 20_000
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        c = CompactHits()
        for k in range(0, len(hits), 2000):          # streamed in batches, as the find job hands them
            c.extend(hits[k:k + 2000])
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held <= 30 * len(hits), f"{held / len(hits):.1f} bytes a hit"
    assert c == hits and list(c.seqs) == [h.seq for h in hits]
    assert [c[i] for i in (-1, 0, 777, len(hits) // 2, 256, 255)] == \
        [hits[-1], hits[0], hits[777], hits[len(hits) // 2], hits[256], hits[255]]


def test_outline_turns_hold_their_columns_only(tmp_path):
    from app.log.query.outline import build_outline
    from app.log.query.outline_packed import packed
    from app.ui.outline_turns import keep_small
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=6), turns=1200)
    r = LogReader.open(str(path))
    try:
        ol = build_outline(r)
    finally:
        r.close()
    want = list(ol.turns)
    sent = pickle.dumps(packed(ol), pickle.HIGHEST_PROTOCOL)      # what the outline child sends
    del ol
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        got = pickle.loads(sent)
        keep_small(got.turns)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    per_error = 40 * len(got.turns.error_seqs)                 # (the errors' seqs and rows stay in arrays)
    assert held - per_error <= 30 * len(want), f"{(held - per_error) / len(want):.1f} bytes a turn"
    assert got.turns == want and [t.error_rows for t in got.turns] == [t.error_rows for t in want]
    assert list(got.turns.first_seqs) == [t.first_seq for t in want]
    assert got.turns[-1] == want[-1] and got.turns[70] == want[70]
    assert pickle.loads(pickle.dumps(got)).turns == want      # (a pickled outline: the blocks as a list)


def test_compaction_summaries_move_out_and_come_back_in_the_groups(tmp_path):
    """The window's surface index keeps closed compactions' summaries in a temporary file: every
    page's compaction groups stay equal to those of the index as built, the records hold ""."""
    from types import SimpleNamespace
    from app.log.fold.surface import index_for
    from app.ui.history.compaction import page_groups, slim_summaries
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(35, context_window=24_000), turns=60)
    r = LogReader.open(str(path))
    try:
        evs = list(r.iter_events(logical=True))
        whole = index_for(r)
    finally:
        r.close()
    pages = [SimpleNamespace(items=evs[k:k + 40]) for k in range(0, len(evs), 40)]
    want = [page_groups(whole, p) for p in pages]
    from app.log.fold.surface import compaction_group      # (the groups as the old page_groups built them)
    assert want == [{g["compactionId"]: g for rec in whole.compactions
                     if (g := compaction_group(whole, rec["compactionId"])) is not None
                     and {it.seq for it in p.items if hasattr(it, "seq")}.intersection(g["rows"])} for p in pages]
    sent = pickle.dumps(whole)
    gc.collect()
    tracemalloc.start()
    try:
        slim = pickle.loads(sent)                  # (the window's own copy, as the surface job hands it over)
        texts = [c["summary"].encode("utf-8", "surrogatepass") for c in slim.compactions]   # (copies: not held)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        moved = slim_summaries(slim)
        gc.collect()
        freed = before - tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(texts) >= 3 and all(texts)
    assert moved == len(texts) and slim_summaries(slim) == 0          # once per index
    assert all(c["summary"] == "" for c in slim.compactions)
    assert freed >= 0.5 * sum(len(t) for t in texts), f"{freed} bytes freed of {sum(map(len, texts))}"
    got = [page_groups(slim, p) for p in pages]
    assert got == want and sum(len(g) for g in got) >= len(texts)
    assert {g["summary"].encode("utf-8", "surrogatepass") for gs in got for g in gs.values()} == set(texts)
