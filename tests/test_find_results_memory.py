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
from app.ui.find_hits import BLOCK_HITS, CompactHits
from app.ui.find_models import FindResultsModel

from PySide6.QtCore import Qt


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
