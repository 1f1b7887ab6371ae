"""app.log.fold.shadowmap: the column record of who shadowed whom answers exactly as the dicts it replaces
(last write wins for a seq recorded twice), in and out of seq order, through batches, merges and a save."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.log.fold import shadowmap
from app.log.fold.shadowmap import ShadowColumns

# (replacing seq, shadowed seqs): small seqs so that repeats and out-of-order records are common
_RECORDS = st.lists(st.tuples(st.integers(0, 300), st.lists(st.integers(0, 300), max_size=6)), max_size=120)


def _same(c: ShadowColumns, by: dict[int, int], rep: dict[int, list[int]]) -> None:
    assert dict(c.replaced_by) == by and dict(c.replaced) == rep
    assert len(c.replaced_by) == len(by) and len(c.replaced) == len(rep)
    for q in range(-1, 302):
        assert c.shadowed_by(q) == by.get(q) and (q in c.replaced_by) == (q in by)
        assert c.replaced.get(q) == rep.get(q)
        chain, seen, cur = [], set(), by.get(q)
        while cur is not None and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            cur = by.get(cur)
        assert c.chain(q) == chain


@settings(max_examples=60, deadline=None)
@given(_RECORDS, st.sampled_from([1, 3, 4096]))
def test_columns_answer_as_dicts(records, batch):
    old = shadowmap._BATCH
    shadowmap._BATCH = batch
    try:
        c, by, rep = ShadowColumns(), {}, {}
        for i, (r, shadowed) in enumerate(records):
            c.record(r, shadowed)
            for s in shadowed:
                by[s] = r
            rep[r] = list(shadowed)
            if i % 17 == 0:
                _same(c, by, rep)
        _same(c, by, rep)
        # as saved and mapped back: read-only views, then recorded into again (copied first)
        views = {k: memoryview(v.tobytes()).cast("q") for k, v in c.columns().items()}
        back = ShadowColumns(**views)
        _same(back, by, rep)
        back.record(301, [300])
        by[300], rep[301] = 301, [300]
        _same(back, by, rep)
    finally:
        shadowmap._BATCH = old
