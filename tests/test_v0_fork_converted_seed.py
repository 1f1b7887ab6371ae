"""v0 difference 3 (issue 12): a fork seeds the child with the converted events, as the dsh
host does.  Legacy-shape rows (spec §1.7) are stored in their converted form, so minted ids
such as ``legacy-message:<parent id>:<seq>`` keep the parent's id in the child."""
from __future__ import annotations

import json

from app.log.query import analysis
from app.log.index.reader import LogReader
from app.log.source.zstdframes import iter_frames
from app.store.forking import fork

from fixtures_util import ev, write_log


def legacy_log(path):
    return write_log(path, [
        ev(0, "turn/start", {"turn": 1, "trigger": {"kind": "message"}}),
        ev(1, "user/message", {"content": [{"type": "text", "text": "hello"}], "source": {"kind": "user"}},
           surfaceOp="append"),
        ev(2, "step/start", {"turn": 1, "step": 1}),
        ev(3, "assistant/message", {"turn": 1, "step": 1, "content": [{"type": "text", "text": "hi there"}],
                                    "provenance": {"provider": "p", "model": "m"}}, surfaceOp="append",
           sourceEventSeqs=[]),
        ev(4, "step/end", {"turn": 1, "step": 1}),
        ev(5, "turn/end", {"turn": 1, "reason": "completed"}),
    ], session_id="parent-1")


def test_legacy_rows_are_stored_converted_and_keep_the_parents_ids(tmp_path):
    p = legacy_log(tmp_path / "store" / "session.jsonl")
    parent = LogReader.open(str(p))
    pe = parent.events()
    assert [e.legacy for e in pe] == ["turn-start-trigger", "user-message-without-id", None,
                                      "assistant-message-content-provenance", None, "turn-end-reason"]
    res = fork(parent, child_id="child-1")
    child = LogReader.open(res["child"])
    ce = child.events()
    assert not any(e.legacy for e in ce)                  # nothing left for the child's reader to convert
    assert [e.envelope() for e in ce[:6]] == [e.envelope() for e in pe]
    assert ce[1].data["id"] == "legacy-message:parent-1:1"
    assert ce[3].data["message"]["id"] == "legacy-message:parent-1:3"
    assert ce[5].data["reason"] == {"kind": "completed"} and ce[0].data == {"turn": 1}
    assert analysis.messages(child, through=5) == analysis.messages(parent, through=5)
    # rows that needed no conversion are copied byte for byte
    child_rows = open(res["child"], "rb").read().splitlines()
    parent_rows = open(p, "rb").read().splitlines()
    assert child_rows[3] == parent_rows[3] and child_rows[5] == parent_rows[5]
    assert json.loads(child_rows[7]) == {"type": "session/end-seed", "seq": 6, "time": json.loads(child_rows[7])["time"],
                                         "data": {}}


def test_zstd_parent_with_legacy_rows(tmp_path):
    from app.store.writer import SessionWriter
    src = LogReader.open(str(legacy_log(tmp_path / "raw" / "session.jsonl")))
    out = tmp_path / "z" / "session.jsonl.zstd"
    hdr = json.loads(src.source.header_raw)
    rows = [json.loads(e.raw) for e in src.events()]
    w = SessionWriter(str(out), hdr, fmt="zstd", pack=False, batch_delay_ms=1, exists=False)
    try:
        for i in range(6):                                # one frame per row: legacy, legacy, clean, legacy,
            w.append(rows[i:i + 1])                       # clean, legacy
            w.flush()
    finally:
        w.close()
    parent = LogReader.open(str(out))
    res = fork(parent, child_id="zchild")
    # frames without a legacy-shape row were copied as stored, the others re-framed converted
    assert list(parent.index.legacy) == [1, 1, 0, 1, 0, 1]
    data = out.read_bytes()
    frames = [(a, b) for _k, a, b in iter_frames(data)]       # header frame, then one per row
    child_frames = [open(res["child"], "rb").read()[a:b] for _k, a, b in iter_frames(open(res["child"], "rb").read())]
    assert data[slice(*frames[3])] in child_frames and data[slice(*frames[5])] in child_frames
    assert data[slice(*frames[2])] not in child_frames          # a legacy row's frame is re-framed
    child = LogReader.open(res["child"])
    assert child.source.kind == "zstd" and not any(e.legacy for e in child.events())
    assert analysis.messages(child, through=5) == analysis.messages(parent, through=5)
    assert child.events()[1].data["id"] == "legacy-message:parent-1:1"
