"""app.log.fold.shadowmap (issue 36): the record of who shadowed whom keeps 4-byte columns while every seq fits
in 32 bits, widens once to 8-byte columns when one does not, and is saved as 8-byte columns either way (the cache
file's format is unchanged)."""
from __future__ import annotations

import gc
import pickle
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from app.log.fold.shadowmap import ShadowColumns
from app.log.fold.surface import SurfaceIndex, extend_index
from app.log.index.reader import LogReader
from app.tools.synth import SessionSynth, write_jsonl

_EDGE = [0, 1, -1, (1 << 31) - 1, 1 << 31, -(1 << 31), -(1 << 31) - 1, (1 << 63) - 1, -(1 << 63), 5, 7]
_RECORDS = st.lists(st.tuples(st.sampled_from(_EDGE), st.lists(st.sampled_from(_EDGE), max_size=5)), max_size=40)


def _records():
    """(replacing seq, shadowed seqs): each replacement shadows ten new nodes and one old kept node."""
    seq = 1000
    for r in range(8_000):
        yield seq + 10, [r, *range(seq, seq + 10)]
        seq += 11


def test_a_shadowed_seq_costs_about_eight_bytes():
    """Held after the record is sorted: ~8 bytes a shadowed seq plus 12 a replacement (the old: 16 and 24)."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        c = ShadowColumns()
        n = 0
        for by, shadowed in _records():
            c.record(by, shadowed)
            n += len(shadowed)
        c.settle()
        gc.collect()
        held = (tracemalloc.get_traced_memory()[0] - base) / n
    finally:
        tracemalloc.stop()
    assert held < 11.5, f"{held:.1f} bytes a shadowed seq"
    assert dict(c.replaced_by) == {s: by for by, shadowed in _records() for s in shadowed}


def test_a_generated_log_s_index_sends_half_the_columns(tmp_path):
    """The surface index the pass hands to the window (pickled) on a compacting log: its columns travel at
    4 bytes a value; saved, they are 8-byte ints with the same values."""
    p = tmp_path / "v4.jsonl"
    write_jsonl(str(p), SessionSynth(seed=3, version=4, context_window=12_000), target_bytes=2 << 20)
    idx = extend_index(LogReader.open(str(p)), SurfaceIndex(4))
    cols = idx.fold.columns
    shadowed = len(cols.replaced_by)
    assert shadowed > 300
    sent = len(pickle.dumps(cols, protocol=pickle.HIGHEST_PROTOCOL))
    assert sent < 9.5 * len(cols.shadowed) + 16 * len(cols.by) + 1024, (sent, shadowed)   # (the old: 16 and 24)
    saved = cols.columns()
    assert all(c.typecode == "q" for c in saved.values())
    back = ShadowColumns(**{k: memoryview(v.tobytes()).cast("q") for k, v in saved.items()})
    assert dict(back.replaced_by) == dict(cols.replaced_by) and dict(back.replaced) == dict(cols.replaced)


@settings(max_examples=80, deadline=None)
@given(_RECORDS)
def test_seqs_past_32_bits_widen_the_columns(records):
    """Any 8-byte seq, in any order, answers as the dicts; recorded into after a save round trip too."""
    c, by, rep = ShadowColumns(), {}, {}
    for r, shadowed in records:
        c.record(r, shadowed)
        for s in shadowed:
            by[s] = r
        rep[r] = list(shadowed)
    assert dict(c.replaced_by) == by and dict(c.replaced) == rep
    for q in _EDGE:
        assert c.shadowed_by(q) == by.get(q) and c.replaced.get(q) == rep.get(q)
    assert all(col.typecode == "q" for col in c.columns().values())
    back = ShadowColumns(**{k: memoryview(v.tobytes()).cast("q") for k, v in c.columns().items()})
    back.record(1 << 40, [3])
    by[3], rep[1 << 40] = 1 << 40, [3]
    back.record(6, [(1 << 31) - 1])
    by[(1 << 31) - 1], rep[6] = 6, [(1 << 31) - 1]
    assert dict(back.replaced_by) == by and dict(back.replaced) == rep
    assert dict(back.copy().replaced_by) == by
