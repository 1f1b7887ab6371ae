"""app.log.fold.attempts (issue 36): a tracker that only counts dispatches (the checkpoint builder's) keeps the
failed attempts it must remember as columns (:meth:`AttemptTracker.seal`), and counts and cites exactly as one
that keeps them as objects."""
from __future__ import annotations

import gc
import tracemalloc

from hypothesis import given, settings
from hypothesis import strategies as st

from app.log.fold.attempts import AttemptTracker
from app.log.fold.checkpoints import CheckpointBuilder
from app.log.index.reader import LogReader
from app.tools.synth import SessionSynth, write_jsonl

_KEYS = st.sampled_from([(1, 1), (1, 2), (2, 1), (None, 1), (1 << 70, 3), (True, 1), ("x", None)])
_FINISH = st.sampled_from([{"kind": "error"}, {"kind": "aborted"}, {"kind": "stop"}, "error", {"kind": 5}])
_STEP = st.one_of(
    st.tuples(st.just("chunk"), _KEYS, st.sampled_from(["text-delta", "finish", "usage"]), _FINISH),
    st.tuples(st.just("cite"), _KEYS, st.one_of(st.none(), st.lists(st.integers(0, 200), max_size=3)), st.booleans()),
    st.tuples(st.just("settle"), _KEYS, st.sampled_from(["assistant/message", "assistant/attempt"]), _FINISH),
    st.tuples(st.just("boundary"), _KEYS, st.sampled_from(["step/end", "turn/end"]), st.none()),
    st.tuples(st.just("retry"), _KEYS, st.sampled_from(["llm/retry", "llm/retry-started"]), st.none()),
    st.tuples(st.just("prune"), _KEYS, st.none(), st.none()))


def _play(at: AttemptTracker, seq: int, step: tuple, seal: bool) -> None:
    kind, key, a, b = step
    if kind == "chunk":
        at.add_chunk(seq, key, a, b, None, "t")
    elif kind == "cite":
        at.cite(seq, key, a, b)
    elif kind == "settle":
        at.settle(a, seq, key, 2, b if isinstance(b, dict) else None, None, False)
    elif kind == "boundary":
        at.boundary(a, key[0])
    elif kind == "retry":
        at.retry(a, seq, key, 1)
    else:
        at.prune()
        if seal:
            at.seal()


@settings(max_examples=150, deadline=None)
@given(st.lists(_STEP, max_size=120))
def test_a_sealing_tracker_counts_and_cites_as_the_plain_one(steps):
    plain, sealing = AttemptTracker(keep_text=False), AttemptTracker(keep_text=False)
    for seq, step in enumerate(steps):
        _play(plain, seq, step, False)
        _play(sealing, seq, step, True)
        assert sealing.count == plain.count
        assert set(sealing.open_attempts) == set(plain.open_attempts)
        assert [(a.first_seq, a.message_seq) for a in sealing.open_attempts.values()] == \
            [(a.first_seq, a.message_seq) for a in plain.open_attempts.values()]


def test_a_sealed_failed_attempt_costs_under_80_bytes():
    """2,000 retried failures (error, then a committed retry): kept sealed, ~40 bytes each (as slimmed objects:
    ~200)."""
    gc.collect()
    tracemalloc.start()
    try:
        at = AttemptTracker(keep_text=False)
        base = tracemalloc.get_traced_memory()[0]
        seq = 10_000
        for turn in range(2_000):
            at.add_chunk(seq, (turn, 1), "text-delta", None, None, "")
            at.add_chunk(seq + 1, (turn, 1), "finish", {"kind": "error", "failure": {"code": "x"}}, None, None)
            at.add_chunk(seq + 2, (turn, 1), "finish", {"kind": "stop"}, None, None)
            at.cite(seq + 3, (turn, 1), [seq + 2], False)
            at.boundary("turn/end", turn)
            at.prune()
            at.seal()
            seq += 10
        gc.collect()
        held = (tracemalloc.get_traced_memory()[0] - base) / 2_000
    finally:
        tracemalloc.stop()
    assert at.count == 4_000 and len(at.sealed) == 2_000 and not at.attempts
    assert held < 80, f"{held:.0f} bytes a failed attempt"
    at.cite(seq, (5, 1), [10_051], False)            # (a late message citing a sealed one: back as an object)
    assert len(at.sealed) == 1_999 and at.attempts[0].first_seq == 10_050 and at.attempts[0].message_seq == seq
    assert at.count == 4_000


def test_the_checkpoint_builder_seals_its_failed_attempts(tmp_path):
    """A generated log with failed attempts (retried errors): the builder's tracker holds them sealed and counts
    the same dispatches as a tracker that keeps them as objects."""
    p = tmp_path / "v0.jsonl"
    write_jsonl(str(p), SessionSynth(seed=5, version=0), target_bytes=3 << 20)
    r = LogReader.open(str(p))
    r.build_index()
    plain = AttemptTracker(keep_text=False)
    b = CheckpointBuilder(r, 1 << 16)
    for seg in r.source.forward():
        items = list(r.decode_segment(seg, []))
        b.segment(seg, items)
        for ev in items:
            plain.apply(ev)
    plain.prune()
    sealed = len(b.at.sealed)
    assert sealed > 10 and len(b.at.attempts) < 10
    assert b.at.count == plain.count
    assert len(plain.failed) == sealed + len([a for a in b.at.attempts if a.failed])
