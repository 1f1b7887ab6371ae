"""v0 difference 2 (issue 12): torn tail versus corruption as dsh's scanner decides.

A bad row followed later by any decodable row that holds a ``turn/end`` is a corrupt
committed row, even when that later row's envelope is bad: not a torn tail, and a repair
would not truncate every row after the bad one."""
from __future__ import annotations

from app.log.query import analysis
from app.log.index.integrity import dsh_refusals
from app.log.index.reader import LogReader

from fixtures_util import ev, write_log

TURN_END_NO_SEQ = b'{"type":"turn/end","time":5,"data":{"turn":2,"reason":{"kind":"completed"}}}'


def rows_with(middle: list):
    return [ev(0, "turn/start", {"turn": 1}), ev(1, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
            ev(2, "turn/start", {"turn": 2})] + middle


def test_bad_row_then_turn_end_with_bad_envelope_is_corruption(tmp_path):
    p = write_log(tmp_path / "session.jsonl", rows_with([b"{not json", ev(4, "step/start", {"turn": 2, "step": 1}),
                                                          TURN_END_NO_SEQ]))
    r = LogReader.open(str(p))
    st = r.tail_state()
    # the region starts after the turn/end row: nothing before it is a tail a repair would truncate
    assert st.dropped == [] and not st.is_open and st.closure == []
    assert not any(pr.code == "repair-would-truncate" for pr in st.problems)
    refusal = dsh_refusals(r)
    assert [x.code for x in refusal] == ["dsh-would-refuse"] and refusal[0].line == 5
    assert "corrupt committed row" in refusal[0].message and "line 7" in refusal[0].message
    info = analysis.inspect(r)
    assert info["dshWouldRefuse"] is True and info["tornRows"] == 0
    assert any(x.startswith("dsh-would-refuse") for x in info["problems"])


def test_same_bad_row_without_a_later_turn_end_is_a_torn_tail(tmp_path):
    p = write_log(tmp_path / "session.jsonl", rows_with([b"{not json", ev(4, "step/start", {"turn": 2, "step": 1})]))
    r = LogReader.open(str(p))
    st = r.tail_state()
    assert len(st.dropped) == 2 and st.is_open                       # the repair truncates both rows
    assert [e.type for e in st.closure] == ["turn/end"] and st.closure[0].seq == 3
    assert dsh_refusals(r) == [] and analysis.inspect(r)["dshWouldRefuse"] is False


def test_a_later_row_whose_text_merely_mentions_turn_end_is_not_one(tmp_path):
    mention = ev(4, "user/message", {"id": "u", "role": "user", "content": [{"type": "text", "text": "turn/end"}],
                                     "source": {"kind": "user"}}, surfaceOp="append")
    p = write_log(tmp_path / "session.jsonl", rows_with([b"{not json", mention]))
    r = LogReader.open(str(p))
    assert dsh_refusals(r) == [] and len(r.tail_state().dropped) == 2
