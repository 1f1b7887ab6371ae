"""The row trace from the fold checkpoints and the surface index equals the from-scratch trace.

:func:`app.log.query.trace.trace_from_checkpoints` answers without a pass over the log (a replay of the
row's turn, short replays from the nearest turn start for the dispatch counts, the checkpoint
intervals whose citations reach the row); every row of every fixture (v0 and v2–v4), with a
checkpoint at nearly every segment and with a single one, and Hypothesis positions in generated
v0 and v4 logs with compactions, get the same answer as :func:`app.log.query.trace.trace_event`.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from app.log.fold.checkpoints import Checkpoints, build_checkpoints
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.log.fold.surface import index_for
from app.log.query.trace import TraceError, trace_event, trace_from_checkpoints
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import REPO, fast_sample, rel, session_files

EVERY = 60_000                       # checkpoint spacing of the generated logs
NEXT = sorted((REPO.parent / "shared" / "fixtures" / "dsh-next").rglob("*.v[234].jsonl"))
ALL = session_files() + NEXT


def _name(p: Path) -> str:
    try:
        return rel(p)
    except ValueError:
        return "/".join(p.parts[-3:])


def _scratch(events: list, seq: int):
    """trace_event over the logical events (decoded once per log: the same pass a reader gives)."""
    try:
        return trace_event(events, seq)
    except TraceError as e:
        return e.code


def _reader(path: str, block: int) -> LogReader:
    r = LogReader(RawJsonlSource(path, block=block))
    r.build_index()
    return r


def _cached(cps: Checkpoints) -> Checkpoints:
    """As the index cache saves and loads them."""
    return Checkpoints.from_builtins(json.loads(json.dumps(cps.to_builtins())))


@pytest.mark.parametrize("path", fast_sample(ALL, spread=6), ids=_name)
def test_trace_from_checkpoints_equals_scratch_on_every_row_of_every_fixture(path):
    answered = 0
    scratch: dict = {}
    logical = LogReader.open(str(path)).events(logical=True)
    # a checkpoint at (nearly) every segment: every row; a single checkpoint (each replay from the
    # log's start): 60 rows spread over the log
    for block, every, rows in ((512, 0, None), (1 << 20, 1 << 30, 60)):
        r = _reader(str(path), block)
        cps = _cached(build_checkpoints(r, every=every))
        si = index_for(r)
        seqs = sorted({e.seq for e in r.events()})
        if rows is not None:
            seqs = seqs[::max(1, len(seqs) // rows)]
        for seq in seqs:
            got = trace_from_checkpoints(r, seq, cps, si)
            if got is None:
                continue
            answered += 1
            if seq not in scratch:
                scratch[seq] = _scratch(logical, seq)
            assert got == scratch[seq], (seq, block)
        r.close()
    idx = LogReader.open(str(path)).build_index()
    tail = LogReader.open(str(path)).tail_state()
    if idx.contiguous_through >= idx.last >= 0 and tail.cut_pos is None:
        assert answered, "a contiguous log is answered from its checkpoints"


@pytest.fixture(scope="module", params=[0, 4], ids=["v0", "v4"])
def generated(request, tmp_path_factory):
    p = tmp_path_factory.mktemp("trace") / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=11, version=request.param), target_bytes=2_500_000 if request.param else 1_200_000)
    r = _reader(str(p), 1 << 15)
    cps = _cached(build_checkpoints(r, every=EVERY))
    events = r.events()
    assert len(cps.points) > 8
    assert any(e.type == "compaction/end" for e in events) or request.param == 0
    return str(p), r, cps, index_for(r), events


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frac=st.floats(min_value=0, max_value=1), kind=st.sampled_from(["any", "surface", "replaced", "chunk"]))
def test_trace_from_checkpoints_equals_scratch_at_any_position_of_a_generated_log(generated, frac, kind):
    path, r, cps, si, events = generated
    pick = {"any": events,
            "surface": [e for e in events if e.surface_op is not None],
            "replaced": [e for e in events if e.seq in si.fold.replaced_by or e.seq in si.fold.replaced],
            "chunk": [e for e in events if e.type in ("assistant/chunk", "assistant/attempt", "llm/retry")]}[kind]
    if not pick:
        return
    seq = pick[int(frac * (len(pick) - 1))].seq
    got = trace_from_checkpoints(r, seq, cps, si)
    assert got is not None
    assert got == trace_event(r, seq)


def test_trace_from_checkpoints_reads_a_bounded_part_of_a_generated_log(generated, monkeypatch):
    """The answer comes from replays near the row, not from a pass over the log: its turn, the
    stretches from the nearest turn starts to the checkpoints' dispatch counts, and the first
    ``request_cap`` dispatches that sent it (3 here)."""
    path, r, cps, si, events = generated
    import app.log.query.trace as trace_mod
    read: list[int] = []
    orig = trace_mod.lazy_segment

    def counting(reader, seg, *a, **kw):
        read.append(seg.end - seg.pos)
        return orig(reader, seg, *a, **kw)
    monkeypatch.setattr(trace_mod, "lazy_segment", counting)
    size = Path(path).stat().st_size
    assert size > 1_000_000
    starts = [e.pos for e in events if e.type == "turn/start"] + [size]
    turn = max(b - a for a, b in zip(starts, starts[1:]))        # the longest turn, in bytes
    for e in events[len(events) // 4::max(1, len(events) // 12)]:
        read.clear()
        got = trace_from_checkpoints(r, e.seq, cps, si, request_cap=3)
        # four replays of at most a turn and a checkpoint interval each (the row's turn, three
        # dispatch counts), the interval of a compaction citing it: not the log
        assert sum(read) <= 4 * (turn + EVERY) + 2 * EVERY < size, (e.seq, sum(read), size, turn)
        assert got == trace_event(r, e.seq, request_cap=3)


def test_window_trace_job_uses_the_saved_checkpoints_and_equals_scratch(tmp_path, monkeypatch):
    """The store glue the window's trace job runs: checkpoints built once by a child process and
    saved, the surface index saved; every later trace answered from them (no whole-log pass)."""
    import app.log.query.trace as trace_mod
    from app.store.indexcache import cached_checkpoints
    from app.store.requests import exact_trace
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=12, version=4), target_bytes=600_000)
    events = LogReader.open(str(p)).events()
    seqs = [e.seq for e in events][:: max(1, len(events) // 15)]
    want = {s: trace_event(LogReader.open(str(p)), s) for s in seqs}
    assert cached_checkpoints(LogReader.open(str(p)), build=False)[0] is None      # nothing saved yet

    def no_scratch(*a, **kw):
        raise AssertionError("a whole-log pass")
    monkeypatch.setattr(trace_mod, "trace_event", no_scratch)
    for s in seqs:
        assert exact_trace(str(p), None, s) == want[s], s
    assert cached_checkpoints(LogReader.open(str(p)), build=False)[0] is not None  # built once, saved
    # the CLI reads the same saved state
    from app.cli.main import main as cli
    import io
    import contextlib
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert cli(["trace", str(p), "--seq", str(seqs[3]), "--json"]) == 0
    assert json.loads(buf.getvalue()) == json.loads(json.dumps(want[seqs[3]]))
