"""The outline's turns are kept packed (issue 36): the outline of a generated log, held as the
window holds it, costs about one Python block a turn (as ``TurnEntry`` objects, about ten: the
window's heap after the outline pass grew with the log) and gives back equal turns."""
from __future__ import annotations

import gc
import sys

from app.log.index.reader import LogReader
from app.log.query.outline import build_outline
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.find_models import OutlineModel
from app.ui.outline_turns import CompactTurns


def test_outline_turns_are_packed_and_equal(tmp_path, qapp):
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=5), turns=300)

    def outline():
        r = LogReader.open(str(path))
        try:
            return build_outline(r)
        finally:
            r.close()
    want = outline().turns
    assert len(want) >= 300
    gc.collect()
    before = sys.getallocatedblocks()
    ol = outline()
    ol.turns = CompactTurns(ol.turns)                # what the window keeps (go_actions._outline_done)
    gc.collect()
    grown = sys.getallocatedblocks() - before
    assert ol.turns == want and list(ol.turns) == want
    assert grown <= 2 * len(want), f"{grown / len(want):.1f} blocks a turn"
    t = want[len(want) // 2]
    assert ol.turns.index(t) == len(want) // 2 and ol.turns[-1] == want[-1]
    model = OutlineModel()
    model.set_turns(ol.turns)
    assert model.rowCount() == len(want)
    assert model.row_for_seq(t.first_seq) == len(want) // 2
    assert model.data(model.index(0, 0)) == OutlineModel.label(want[0])
