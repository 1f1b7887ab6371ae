"""``SpanTable.columns_of`` of a table holding its span dicts (a timeline just computed) reads every dict once for
all the keys (``tl_getcols`` in the tlc2 section): the columns of its definition (``getcols_py``) on hostile
lists, and the turns and totals of the summary are the same from a fresh table, a saved one and plain dicts."""
from __future__ import annotations

import json
import random

import pytest

from app.log.index.fastindex import load_rowscan_c
from app.log.query.timeline import timeline
from app.log.query.timeline_summary import in_log_order, summarize
from app.log.query.timeline_table import SpanTable, getcols_py
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

C = getattr(load_rowscan_c(), "tl_getcols", None)
needs_c = pytest.mark.skipif(C is None, reason="the row scanner in C is not built")


class _Sub(dict):
    pass


@needs_c
def test_getcols_in_c_is_its_definition():
    rng = random.Random(4)
    keys = ["kind", "seq", "tokens", "nope", 3, "x"]
    for _ in range(300):
        rows = []
        for _r in range(rng.randint(0, 12)):
            d = {k: rng.choice([None, 1, "a", [1], {"b": 2}, 2.5, True]) for k in keys if rng.random() < 0.6}
            rows.append(d)
        ks = rng.sample(keys, rng.randint(0, len(keys)))
        assert C(rows, ks) == getcols_py(rows, ks)
        if rows and rng.random() < 0.3:
            bad = rng.choice([_Sub(), None, [1], "s"])
            rows.insert(rng.randrange(len(rows) + 1), bad)
            assert C(rows, ks) is None and getcols_py(rows, ks) is None
    rows = [{"a": 1}, {"b": 2}, {"a": 3}]
    for ks in (["a", [1]], [[1], "a"], ["a", "b", {}]):       # (an unhashable key: the error of dict.get)
        with pytest.raises(TypeError):
            C(rows, ks)
        with pytest.raises(TypeError):
            getcols_py(rows, ks)


def test_summary_from_a_fresh_table_is_that_of_the_dicts(tmp_path):
    prices = {"deepseek-*": {"input": 0.3, "output": 0.5, "cacheRead": 0.03}}
    p = tmp_path / "v4.jsonl"
    write_jsonl(str(p), SessionSynth(31, version=4, p_retry=0.2), target_bytes=400_000)
    logs = [FIXTURES / "examples/acp-agent/tests/snapshots/subagent-mixed/session.jsonl",
            FIXTURES / "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl", p]
    for log in logs:
        spans = in_log_order(timeline(open_reader(str(log))))
        fresh = SpanTable.of(spans)
        assert fresh._dicts is not None                       # (a table just computed keeps its dicts)
        saved = SpanTable.unpack(fresh.pack())
        want = summarize(list(spans), prices, ordered=True)
        for t in (fresh, saved):
            got = summarize(t, prices, ordered=True)
            assert json.dumps([got["turns"], got["totals"]]) == json.dumps([want["turns"], want["totals"]]), log
        keys = sorted({k for s in spans for k in s})
        assert fresh.columns_of(keys) == {k: [s.get(k) for s in spans] for k in keys}
        assert saved.columns_of(keys) == {k: [s.get(k) for s in spans] for k in keys}
        assert want["totals"]["counts"]


@needs_c
def test_columns_in_c_flipping_late_are_their_definition():
    """``tl_columns`` lists a column's values only once it is not integers: a column of integers and nulls that
    turns into another type at any row (its rows before listed then) is still :func:`columns_py`'s."""
    from app.log.query.timeline_table import columns_py
    tl_columns = load_rowscan_c().tl_columns
    rng = random.Random(8)
    odd = ["a", 1.5, True, False, 1 << 62, -(1 << 63), [1], {"x": 1}, (1 << 62) - 1]
    for _ in range(400):
        n = rng.randint(0, 40)
        keys = ["k", "j", "s"]
        cols = []
        for _k in keys:
            col = [rng.choice([None, 0, 7, -3, 1 << 40]) for _ in range(n)]
            for _f in range(rng.choice([0, 0, 1, 2])):
                if n:
                    col[rng.randrange(n)] = rng.choice(odd)
            cols.append(col)
        rows = [dict(zip(keys, t)) for t in zip(*cols)]
        assert tl_columns(rows, keys) == columns_py(rows, keys)
        if rows and rng.random() < 0.2:
            rows.append({"k": 1, "s": 2, "j": 3})           # (keys in another order: not one shape)
            assert tl_columns(rows, keys) is None and columns_py(rows, keys) is None
