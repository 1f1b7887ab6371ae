"""Issue 29: a turn's packed record (:func:`app.log.query.outline_packed._record`) takes its fields in one C call; its
bytes are the pickle of the fields' tuple as before, on every turn of the fixtures' and a generated log's outlines."""
from __future__ import annotations

import pickle

from app.log.index.reader import LogReader
from app.log.query import outline_packed
from app.log.query.outline import TurnEntry, build_outline
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import fast_sample
from test_ahead_pass import CASES


def _definition(t: TurnEntry) -> bytes:
    return pickle.dumps(tuple(getattr(t, f) for f in outline_packed._FIELDS), pickle.HIGHEST_PROTOCOL)


def test_records_equal_the_pickled_fields(tmp_path):
    p = tmp_path / "session.v4.jsonl"
    write_jsonl(str(p), SessionSynth(seed=9, version=4, context_window=6_000), target_bytes=600_000)
    turns = []
    for path in [getattr(c, "values", (c,))[0] for c in fast_sample(CASES, spread=3)] + [p]:
        turns += list(build_outline(LogReader.open(str(path))).turns)
    turns.append(TurnEntry(turn=2 ** 70, first_seq=0, last_seq=0, prompt="é\ud800", tools={"a": 1, None: 2}))
    assert len(turns) > 50
    for t in turns:
        assert outline_packed._record(t) == _definition(t)
