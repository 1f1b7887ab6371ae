"""The kept hits of a whole-log find are small in bytes too (issue 36): the results model holds
a generated log's hits in under 150 bytes of Python heap a hit (the joined snippet strings and
64-bit columns took ~330: one "…" made a batch's text 2 bytes a character), and gives back
exactly the core's hits and the dock's texts, in order, hostile values included."""
from __future__ import annotations

import gc
import tracemalloc

from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, find_all
from app.log.query.find_match import Hit
from app.tools.synth import SessionSynth, write_jsonl
import sys

from app.ui import find_hits
from app.ui.find_hits import CompactHits
from app.ui.find_models import FindResultsModel

from PySide6.QtCore import Qt

BLOCK_HITS = getattr(find_hits, "BLOCK_HITS", 256)     # snippets a block holds


def _texts(model: FindResultsModel, rows) -> list:
    return [tuple(model.data(model.index(r, c)) for c in range(4))
         + (model.data(model.index(r, 3), Qt.ItemDataRole.ToolTipRole),) for r in rows]


def _want(h: Hit) -> tuple:
    from app.ui.find_models import one_line
    return (str(h.seq), "" if h.turn is None else str(h.turn), one_line(h.kind + (f" · {h.tool}" if h.tool else "")),
            one_line(h.snippet) + (f"   (+{h.matches - 1} more here)" if h.matches > 1 else ""),
            one_line(h.snippet, 400))


def test_find_results_heap_per_hit_is_small(tmp_path, qapp):
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=5), turns=300)
    r = LogReader.open(str(path))
    try:
        hits = find_all(r, FindOptions("the"))[0]
    finally:
        r.close()
    assert len(hits) > 1500
    model = FindResultsModel()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for k in range(0, len(hits), 500):               # streamed in batches, as the find job hands them
            model.append(hits[k:k + 500])
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held <= 150 * len(hits), f"{held / len(hits):.0f} bytes a hit"
    assert model.hits == hits and model.rowCount() == len(hits)
    rows = list(range(len(hits)))[::37] + [len(hits) - 1, 0, len(hits) // 2]     # out of order too
    assert _texts(model, rows) == [_want(hits[i]) for i in rows]


def test_hostile_hits_come_back_equal(qapp):
    """Lone surrogates, non-BMP and control text, empty snippets, None fields, 64-bit offsets
    (a 4 GB log's byte offsets) and many tool names, across sealed blocks and the open one."""
    texts = ["", "plain", "a\ud800b", "\udfff", "emoji 🙂 — …", "ctl \x00\x1b[31m\n\t", "x" * 70_000, "é" * 5]
    hits = [Hit(seq=i * 3, turn=None if i % 5 == 0 else i, kind=("tool-call" if i % 2 else "assistant"),
                snippet=texts[i % len(texts)] + str(i), span=(0, i % 7), start=i, end=i + (1 << 33) * (i % 3),
                matches=1 + i % 4, tool=None if i % 3 else f"tool{i % 300}", line=None if i % 4 else i,
                offset=(5 << 30) + i if i % 2 else None, member=None if i % 6 else -1,
                call=f"c{i}" if i % 9 == 0 else None, block=i % 11 == 0)
            for i in range(3 * BLOCK_HITS + 17)]
    c = CompactHits()
    for k in range(0, len(hits), 100):
        c.extend(hits[k:k + 100])
    assert c == hits and list(c) == hits
    assert [c[i] for i in (-1, 5, 2 * BLOCK_HITS, len(hits) - 3, 1)] == \
        [hits[-1], hits[5], hits[2 * BLOCK_HITS], hits[-3], hits[1]]
    model = FindResultsModel()
    model.set_items(hits)
    rows = [len(hits) - 1, 0, BLOCK_HITS, 3, BLOCK_HITS - 1, len(hits) - 2]
    assert _texts(model, rows) == [_want(hits[i]) for i in rows]


def test_outline_heap_per_turn_is_small(tmp_path, qapp):
    """The outline as the window keeps it (turns, the sorted error seqs, seq -> stored row of each
    error) in under 200 bytes of heap a turn (one pickled record a turn, a list and a dict of
    tuples for the errors took ~340), giving back the same turns, errors and rows."""
    from app.log.query.outline import build_outline
    from app.ui import outline_turns
    from app.ui.outline_turns import CompactTurns
    TURN = getattr(outline_turns, "TURN_BLOCK", 64)
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=5), turns=400)
    r = LogReader.open(str(path))
    try:
        want = build_outline(r).turns
    finally:
        r.close()
    errs = sorted(s for t in want for s in t.error_seqs)
    where = {s: w for t in want for s, w in zip(t.error_seqs, t.error_rows)}
    assert len(want) >= 400 and len(errs) >= 20
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        turns = CompactTurns(want)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    if not hasattr(turns, "error_seqs"):             # (the old code: what go_actions built beside the turns)
        turns.error_seqs, turns.error_where = errs, where
        held += sum(sys.getsizeof(x) for x in (errs, where, *errs, *where.values()))
    assert held <= 200 * len(want), f"{held / len(want):.0f} bytes a turn"
    assert turns == want and list(turns) == want and [t.error_rows for t in turns] == [t.error_rows for t in want]
    assert list(turns.error_seqs) == errs
    assert turns.error_seqs == errs and turns.error_seqs[:3] == errs[:3] and errs == turns.error_seqs
    assert len(turns.error_where) == len(where) and all(turns.error_where[s] == w for s, w in where.items())
    assert -1 not in turns.error_where and turns.error_where.get(-1) is None
    t = turns[7]
    t.tools["x"] = 1                                  # a turn handed out is the caller's own
    assert turns[7] == want[7] and turns[7 + TURN] == want[7 + TURN]


def test_error_rows_equal_the_dict_on_any_rows():
    """zstd members' positions (lists, tuples), None lines, a repeated seq (the last wins), 64-bit offsets."""
    from app.ui.outline_turns import ErrorRows
    pairs = [(5, (10, 20, 3)), (2, ([1, 2], 7, None)), (9, ((3, 4), 1 << 40, 8)), (5, (11, 21, None)),
             (1, (0, 0, None)), (7, (-3, 4, 2)), (8, (1 << 62, 1, 1))]
    want = dict(pairs)
    got = ErrorRows(pairs)
    assert len(got) == len(want) and list(got) == sorted(want)
    assert all(got[s] == w and type(got[s][0]) is type(w[0]) for s, w in want.items())
    assert 3 not in got and "5" not in got and got.get(3, "x") == "x"


def test_the_outline_child_sends_packed_turns(tmp_path):
    """What the outline child sends (``scan_child``: the outline, turns packed) unpickles in the window
    with a peak under 300 bytes of heap a turn (unpacked, one ``TurnEntry`` a turn: ~1.6 KB a turn at
    that moment), and equal to the outline built unpacked; the built outline is left as it was."""
    import pickle
    from app.log.query.outline import build_outline
    from app.log.query.outline_packed import packed
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=6), turns=400)
    r = LogReader.open(str(path))
    try:
        ol = build_outline(r)
    finally:
        r.close()
    want = list(ol.turns)
    sent = pickle.dumps(packed(ol), pickle.HIGHEST_PROTOCOL)
    assert ol.turns == want and isinstance(ol.turns, list)
    gc.collect()
    tracemalloc.start()
    try:
        got = pickle.loads(sent)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= 300 * len(want), f"{peak / len(want):.0f} bytes a turn"
    assert got.turns == want and got.problems == ol.problems and got.events == ol.events
    assert got.turns.error_seqs == sorted(s for t in want for s in t.error_seqs)
    assert packed(got) is got
