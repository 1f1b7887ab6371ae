"""Fold checkpoints: folds and requests from the nearest checkpoint equal the from-scratch ones."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from app.log.query import analysis
from app.log.fold.checkpoints import Checkpoints, build_checkpoints, folds_at, request_at
from app.log.fold.folds import HeaderFold, SurfaceFold
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import REPO, fast_sample, rel, session_files

CONTIGUOUS = [p for p in session_files() if not any(s in rel(p) for s in ("cordis-tool-round", "authored-error",
                                                                             "blocked-log"))]


def scratch(events, b):
    sf, hf = SurfaceFold(), HeaderFold()
    for ev in events:
        if ev.seq >= b:
            break
        sf.apply(ev)
        hf.apply(ev)
    return sf, hf


def same_folds(a, b):
    (sa, ha), (sb, hb) = a, b
    return sa.nodes == sb.nodes and sa.messages() == sb.messages() \
        and sa.message_seqs() == sb.message_seqs() \
        and [str(v) for v in sa.violations] == [str(v) for v in sb.violations] \
        and (ha.header, ha.seq, ha.reason, ha.history) == (hb.header, hb.seq, hb.reason, hb.history)


def small_segments(path):
    r = LogReader(RawJsonlSource(str(path), block=1024))        # a checkpoint at (nearly) every segment
    r.build_index()
    return r


@pytest.mark.parametrize("path", fast_sample(CONTIGUOUS, spread=3), ids=rel)
def test_folds_from_checkpoints_equal_scratch_at_every_boundary(path):
    r = small_segments(path)
    cps = build_checkpoints(r, every=0)
    events = r.events()
    assert len(cps.points) >= (1 if events else 0)
    for b in range(0, len(events) + 1, max(1, len(events) // 60)):
        assert same_folds(folds_at(r, cps, b), scratch(events, b)), b
    for cp in cps.points:                                        # exactly at each checkpoint, and next to it
        for b in (cp.seq, cp.seq + 1):
            assert same_folds(folds_at(r, cps, b), scratch(events, b)), b


@pytest.fixture(scope="module")
def synth_reader(tmp_path_factory):
    p = tmp_path_factory.mktemp("cp") / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=21), target_bytes=1_500_000)
    r = LogReader(RawJsonlSource(str(p), block=1 << 15))
    r.build_index()
    return r, build_checkpoints(r, every=100_000), r.events()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frac=st.floats(min_value=0, max_value=1))
@pytest.mark.slow
def test_synthetic_folds_from_checkpoints_at_any_position(synth_reader, frac):
    r, cps, events = synth_reader
    b = int(frac * len(events))
    assert len(cps.points) > 5
    assert same_folds(folds_at(r, cps, b), scratch(events, b))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frac=st.floats(min_value=0, max_value=1))
@pytest.mark.slow
def test_request_from_checkpoints_equals_the_full_pass(synth_reader, frac):
    r, cps, events = synth_reader
    msgs = [e.seq for e in events if e.type == "assistant/message" and e.source_event_seqs]
    at = msgs[int(frac * (len(msgs) - 1))]
    assert request_at(r, at, cps) == analysis.request_at(r, at)


@pytest.mark.slow
def test_request_command_uses_saved_checkpoints(tmp_path, monkeypatch, capsys):
    from app.cli.main import main
    from app.store.indexcache import cached_checkpoints
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=9), target_bytes=1_000_000)
    r = LogReader.open(str(p))
    events = r.events()
    at = [e.seq for e in events if e.type == "assistant/message" and e.source_event_seqs][-2]
    want = analysis.request_at(LogReader.open(str(p)), at)
    outs = []
    for _ in range(2):
        assert main(["request", str(p), "--at", str(at), "--json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert [o.pop("dshWouldRefuse") for o in outs] == [False, False]
    assert [o.pop("problems") for o in outs] == [[], []]          # (always there: one JSON shape, issue 27)
    assert outs[0] == outs[1] == json.loads(json.dumps(want))
    assert cached_checkpoints(LogReader.open(str(p)))[1] == "hit"
    # a grown log keeps them (append-only); a rewritten one does not
    with open(p, "ab") as f:
        f.write(b"\n")
    assert cached_checkpoints(LogReader.open(str(p)))[1] == "hit"
    data = p.read_bytes()
    p.write_bytes(data[:len(data) // 2])
    assert cached_checkpoints(LogReader.open(str(p)))[1] == "built"


RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"


V4_COMPACTION = "0217po+deepseek-harness@321a6fa740/snapshots/acp/image-compaction/session.v4.jsonl"


@pytest.mark.parametrize("name", [RETRY, COMPACTION, V4_COMPACTION])
def test_window_request_equals_the_full_pass_and_reuses_the_saved_checkpoints(tmp_path, monkeypatch, name):
    import shutil
    from app.store.requests import exact_request
    from fixtures_util import fixture
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "session.jsonl"
    shutil.copy(fixture(name) if name != V4_COMPACTION else REPO.parent / "shared/fixtures/dsh-next" / name, p)
    events = LogReader.open(str(p)).events()
    seqs = [e.seq for e in events if e.type in ("assistant/chunk", "assistant/message", "step/start")]
    modes = []
    for at in seqs[::max(1, len(seqs) // 8)]:
        want = analysis.request_at(LogReader.open(str(p)), at)
        got = exact_request(str(p), None, at)
        modes.append(got.pop("mode"))
        assert got == want, at
    assert modes[0] == "built" and set(modes[1:]) == {"saved"}


@pytest.mark.slow
def test_window_request_is_cancelled_while_checkpoints_are_built(tmp_path, monkeypatch):
    from app.store.requests import exact_request
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=12), target_bytes=3_000_000)
    at = max(e.seq for e in LogReader.open(str(p)).events() if e.type == "assistant/message")
    with pytest.raises(InterruptedError):
        exact_request(str(p), None, at, cancelled=lambda: True)

    class Stop(Exception):
        pass
    calls = []

    def check():
        calls.append(1)
        if len(calls) > 2:
            raise Stop
    got = exact_request(str(p), None, at)                  # builds; then a replay that is stopped midway
    assert got["mode"] == "built"
    with pytest.raises(Stop):
        exact_request(str(p), None, at, check=check)


def test_checkpoints_take_about_the_room_of_one_fold(synth_reader):
    r, cps, events = synth_reader
    stored = sum(len(p.add) for p in cps.points)
    nodes = [len(cps.state(i)[0]) for i in range(len(cps.points))]
    assert len(cps.points) > 5 and stored <= max(nodes) + sum(1 for p in cps.points if p.keep == 0) * max(nodes)
    assert stored < sum(nodes) / 2                   # not one full node list per checkpoint


# --------------------------------------------------------------------------- v4 (spec-versions §6)

NEXT = sorted((REPO.parent / "shared" / "fixtures" / "dsh-next").rglob("*.v[234].jsonl"))


def scratch_v(events, b, version):
    sf, hf = SurfaceFold(version=version), HeaderFold()
    for ev in events:
        if ev.seq >= b:
            break
        sf.apply(ev)
        hf.apply(ev)
    return sf, hf


def same_folds_v4(a, b):
    return same_folds(a, b) and a[0].messages() == b[0].messages() \
        and a[1].tool_history.snapshot() == b[1].tool_history.snapshot()


def test_v4_fixtures_are_there():
    assert len(NEXT) >= 5


@pytest.mark.parametrize("path", NEXT, ids=lambda p: "/".join(p.parts[-3:]))
def test_v2_to_v4_folds_from_checkpoints_equal_scratch_at_every_boundary(path):
    r = small_segments(path)
    assert r.version >= 2
    cps = Checkpoints.from_builtins(json.loads(json.dumps(build_checkpoints(r, every=0).to_builtins())))  # as cached
    events = r.events()
    if not r.index.contiguous_through >= len(events) - 1:
        pytest.skip("not contiguous")
    for b in range(0, len(events) + 1):
        assert same_folds_v4(folds_at(r, cps, b), scratch_v(events, b, r.version)), b


@pytest.fixture(scope="module")
def synth_v4(tmp_path_factory):
    p = tmp_path_factory.mktemp("cp4") / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=21, version=4), target_bytes=2_500_000)
    r = LogReader(RawJsonlSource(str(p), block=1 << 15))
    r.build_index()
    return r, build_checkpoints(r, every=100_000), r.events()


def test_v4_synthetic_log_compacts_and_folds_from_checkpoints_with_a_bounded_replay(synth_v4):
    r, cps, events = synth_v4
    assert r.version == 4 and len(cps.points) > 5
    assert any(e.type == "compaction/end" for e in events)
    assert any(isinstance(e.surface_op, dict) for e in events)           # replace ranges
    gaps = [b.seq - a.seq for a, b in zip(cps.points, cps.points[1:])]
    for b in range(0, len(events) + 1, max(1, len(events) // 40)):
        seen = []
        orig = SurfaceFold.apply

        def counting(self, ev, seen=seen):
            seen.append(ev.seq)
            return orig(self, ev)
        SurfaceFold.apply = counting
        try:
            got = folds_at(r, cps, b)
        finally:
            SurfaceFold.apply = orig
        assert same_folds_v4(got, scratch_v(events, b, 4)), b
        assert len(seen) <= max(gaps) + 1, (b, len(seen))             # replays from the nearest point only


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frac=st.floats(min_value=0, max_value=1))
def test_v4_request_from_checkpoints_equals_the_full_pass(synth_v4, frac):
    r, cps, events = synth_v4
    msgs = [e.seq for e in events if e.type == "assistant/message"]     # (v2+: the settlement is the attempt)
    at = msgs[int(frac * (len(msgs) - 1))]
    got = request_at(r, at, cps)
    assert got == analysis.request_at(r, at)
    assert "toolHistory" in got["request"]


@pytest.mark.parametrize("path", session_files(), ids=rel)
def test_turn_start_before_equals_the_walk_over_every_mark(path):
    """The bisect over a contiguous log's marks gives what the walk over all marks gives, at every seq
    (every fixture, contiguous or not: a broken log takes the walk)."""
    from app.log.fold.checkpoints import turn_start_before
    from app.store.faces import open_reader
    r = open_reader(str(path), None)
    try:
        idx = r.build_index()
    finally:
        r.close()

    def walk(seq):
        best = 0
        for s, t in idx.marks(-1, seq):
            if t == "turn/start" and s <= seq:
                best = s
        return best
    seqs = range(-1, idx.last + 3) if idx.last < 3000 else sorted({*range(0, idx.last + 2, 7), *idx.mark_seq})
    assert [turn_start_before(idx, s) for s in seqs] == [walk(s) for s in seqs]
    starts = [s for s, c in zip(idx.mark_seq, idx.mark_code) if c == 0]      # (MARK_NAMES[0]: turn/start)
    if idx.contiguous_through >= idx.last:
        assert [turn_start_before(idx, s) for s in starts] == starts
