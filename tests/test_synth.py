"""The session generator makes valid, realistic logs (it feeds benchmarks, the live simulator, UI tests)."""
from __future__ import annotations

from app.log import analysis
from app.log.attempts import find_attempts
from app.log.reader import LogReader
from app.tools.synth import SessionSynth, write_jsonl


def test_generated_log_is_valid_and_deterministic(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_jsonl(str(a), SessionSynth(5), turns=40)
    write_jsonl(str(b), SessionSynth(5), turns=40)
    assert a.read_bytes() == b.read_bytes()
    r = LogReader.open(str(a))
    info = analysis.inspect(r)
    assert info["problems"] == [] and info["turns"] == 40 and not info["openTail"]
    evs = r.events()
    assert [e.seq for e in evs] == list(range(len(evs)))
    by_seq = {e.seq: e for e in evs}
    for e in evs:
        if e.type == "assistant/message":
            t, s = e.turn_step()
            assert all(by_seq[c].type == "assistant/chunk" and by_seq[c].turn_step() == (t, s)
                       for c in e.source_event_seqs)
        if e.type == "tool/result":
            call = by_seq[e.source_event_seqs[0]]
            assert call.type == "tool/call" and call.data["callId"] == e.data["message"]["source"]["callId"]
    tr = find_attempts(evs)
    assert tr.failed and all(a.retry_seq is not None for a in tr.failed)
    assert any(e.packed for e in evs)


def test_crash_leaves_an_open_tail(tmp_path):
    p = tmp_path / "c.jsonl"
    write_jsonl(str(p), SessionSynth(3), turns=4, crash=True)
    st = LogReader.open(str(p)).tail_state()
    assert st.is_open and st.closure[-1].data["reason"] == {"kind": "interrupted"}
