"""The hits of a whole-log find are kept as columns (issue 36): the results model holds the
hits of a find on a generated log, equal to the core's, in well under one Python block a hit (as
``Hit`` objects they took about ten, so the window's heap after a find grew with the log)."""
from __future__ import annotations

import gc
import sys

from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, find_all
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.find_models import FindResultsModel


def test_find_results_are_compact_and_equal_to_the_core(tmp_path, qapp):
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=5), turns=300)
    def run() -> list:
        r = LogReader.open(str(path))
        try:
            return find_all(r, FindOptions("the"))[0]
        finally:
            r.close()
    hits = run()
    assert len(hits) > 1500
    model = FindResultsModel()
    gc.collect()
    before = sys.getallocatedblocks()
    fresh = run()                                    # the hits as a find job hands them over ...
    for k in range(0, len(fresh), 500):              # ... streamed in batches
        model.append(fresh[k:k + 500])
    del fresh                                        # (the job's batches are not kept)
    gc.collect()
    grown = sys.getallocatedblocks() - before
    assert model.rowCount() == len(hits) and model.hits == hits
    assert [model.hits[i] for i in (0, -1, len(hits) // 2)] == [hits[0], hits[-1], hits[len(hits) // 2]]
    assert grown <= 0.5 * len(hits), f"{grown / len(hits):.1f} blocks a hit"
    # the step to the next hit after a seq, and the table's cells, read the columns
    seq = hits[len(hits) // 2].seq
    i = model.row_for_seq(seq, True)
    assert i is not None and hits[i].seq > seq and (i == 0 or hits[i - 1].seq <= seq)
    assert model.data(model.index(len(hits) - 1, 0)) == str(hits[-1].seq)
    model.clear()
    assert model.hits == [] and model.rowCount() == 0
