"""inspect without expanding packed rows gives what the event-by-event pass gives, hostile rows included."""
from __future__ import annotations

import json

import pytest

from app.log.query import analysis
from app.log.fold.attempts import find_attempts
from app.log.format.lazyrows import PackedBlock, iter_lazy
from app.log.index.reader import LogReader
from app.tools.synth import SessionSynth, write_jsonl


def eager_facts(r):
    """The facts inspect reports, from every event built (the old pass)."""
    probs = []
    evs = list(r.iter_events(problems=probs))
    types: dict = {}
    for e in evs:
        types[e.type] = types.get(e.type, 0) + 1
    at = find_attempts(evs)
    return {"events": len(evs), "lastSeq": max((e.seq for e in evs), default=-1), "types": dict(sorted(types.items())),
            "attempts": len(at.attempts), "hiddenAttempts": sum(1 for a in at.attempts if a.hidden_by_default),
            "failed": [a.to_dict() for a in at.attempts if a.hidden_by_default],
            "problems": sorted({str(p) for p in probs})}


def lazy_facts(r):
    info = analysis.inspect(r)
    return {"events": info["events"], "lastSeq": info["lastSeq"], "types": info["types"],
            "attempts": info["attempts"], "hiddenAttempts": info["hiddenAttempts"], "failed": info["failedAttempts"],
            "problems": sorted(p for p in info["problems"] if p.split(":")[0] in (
                "bad-packed", "malformed", "bad-utf8", "bad-envelope", "torn-row"))}


def _variants(lines):
    packed = [i for i, l in enumerate(lines) if l.startswith(b'{"type":"text-chunks"')]
    i, j = packed[len(packed) // 2], packed[len(packed) // 3]
    out = {"as-written": lines}
    o = json.loads(lines[i])
    o["data"]["dt"] = o["data"]["dt"][:-1]                          # dt one short: a bad packed row
    out["bad-dt"] = lines[:i] + [json.dumps(o, separators=(",", ":")).encode()] + lines[i + 1:]
    o = json.loads(lines[i])
    o["data"]["texts"] = o["data"]["texts"] + [7]                   # a non-string member
    out["bad-member"] = lines[:i] + [json.dumps(o, separators=(",", ":")).encode()] + lines[i + 1:]
    o = json.loads(lines[i])
    out["other-key-order"] = lines[:i] + [json.dumps({"data": o["data"], **{k: v for k, v in o.items() if k != "data"}},
                                                     separators=(",", ":")).encode()] + lines[i + 1:]
    out["bad-utf8"] = lines[:i] + [lines[i].replace(b'"texts":["', b'"texts":["\xff', 1)] + lines[i + 1:]
    out["gap-at-packed"] = lines[:j] + lines[j + 1:]
    out["extra-key"] = lines[:i] + [lines[i][:-1] + b',"x":1}'] + lines[i + 1:]
    return out


@pytest.mark.parametrize("kind", ["as-written", "bad-dt", "bad-member", "other-key-order", "bad-utf8",
                                  "gap-at-packed", "extra-key"])
@pytest.mark.slow
def test_lazy_inspect_equals_the_event_by_event_pass(tmp_path, kind):
    src = tmp_path / "src.jsonl"
    write_jsonl(str(src), SessionSynth(seed=31), target_bytes=600_000)
    head, *rest = src.read_bytes().split(b"\n")
    lines = _variants([l for l in rest if l])[kind]
    p = tmp_path / "session.jsonl"
    p.write_bytes(head + b"\n" + b"\n".join(lines) + b"\n")
    r = LogReader.open(str(p))
    blocks = sum(1 for x in iter_lazy(r) if type(x) is PackedBlock)
    assert blocks > 20                                                # packed rows really stay packed
    assert lazy_facts(LogReader.open(str(p))) == eager_facts(LogReader.open(str(p)))


# --------------------------------------------------------------------------- messages, flat memory

from app.log.format.lazyrows import iter_messages  # noqa: E402
from fixtures_util import fast_sample, rel, session_files  # noqa: E402


@pytest.mark.parametrize("path", fast_sample(session_files(), spread=3), ids=rel)
def test_streamed_messages_equal_the_fold_on_every_fixture(path):
    r = LogReader.open(str(path))
    n = len(r.events())
    for logical in (True, False):
        for through in (None, n // 3, n - 2):
            assert list(iter_messages(LogReader.open(str(path)), through, logical)) == \
                analysis.messages(LogReader.open(str(path)), through, logical), (logical, through)


@pytest.mark.parametrize("crash", fast_sample([False, "torn"]))
@pytest.mark.slow
def test_streamed_messages_of_generated_jsonl_and_zstd(tmp_path, crash):
    from test_index_cache import synth_zstd
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=41), target_bytes=1_500_000, crash=crash)
    z = synth_zstd(tmp_path / "session.jsonl.zstd", 1_000_000, seed=42, torn=bool(crash))
    for f in (p, z):
        want = analysis.messages(LogReader.open(str(f)))
        assert len(want) > 50
        assert list(iter_messages(LogReader.open(str(f)))) == want
        mid = LogReader.open(str(f)).build_index().events // 2
        assert list(iter_messages(LogReader.open(str(f)), mid)) == analysis.messages(LogReader.open(str(f)), mid)


@pytest.mark.slow
def test_messages_memory_stays_flat(tmp_path):
    import tracemalloc
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    write_jsonl(str(small), SessionSynth(seed=5), target_bytes=1_000_000)
    write_jsonl(str(big), SessionSynth(seed=5), target_bytes=8_000_000)
    list(iter_messages(LogReader.open(str(small))))            # (one-time imports and caches)
    peaks = []
    for f in (small, big, small, big):
        tracemalloc.start()
        if len(peaks) < 2:
            n = sum(1 for _ in iter_messages(LogReader.open(str(f))))
        else:
            n = len(analysis.messages(LogReader.open(str(f))))   # the list (the fold v2+ logs use)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert n > 100
    # 8x the log, not 8x the memory: only the surface structure grows, not the messages; the list
    # holds the surface's messages only (shadowed events dropped as the fold goes)
    assert peaks[1] < 2 * peaks[0] + (4 << 20), peaks
    assert peaks[3] < 2 * peaks[2] + (4 << 20), peaks


@pytest.mark.slow
def test_inspect_memory_stays_flat(tmp_path):
    """inspect keeps only what it reports, not a record per shadowed node or per request header:
    four times the log, about the same peak (before: who-shadowed-whom of every compaction and the
    tools of every request/header were kept, +2.3 MB traced from 2 MB to 8 MB here, ~45 MB per GB)."""
    import tracemalloc
    # many compactions (small context window) and a changed request header every turn, small rows
    mix = dict(version=4, context_window=6000, p_header_change=1.0, result_scale=0.02, reasoning_tokens=4.0,
               text_tokens=4.0, p_long_prompt=0.0)
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    write_jsonl(str(small), SessionSynth(seed=7, **mix), target_bytes=2 << 20)
    write_jsonl(str(big), SessionSynth(seed=7, **mix), target_bytes=8 << 20)
    analysis.inspect(LogReader.open(str(small)))            # (one-time imports and caches)
    peaks, facts = [], []
    for f in (small, big):
        tracemalloc.start()
        facts.append(analysis.inspect(LogReader.open(str(f))))
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    assert facts[0]["problems"] == [] and facts[1]["problems"] == []
    # the big log really has four times the compactions and headers the small one has
    assert facts[1]["events"] > 3 * facts[0]["events"]
    assert len(facts[1]["requestHeaders"]) > 3 * len(facts[0]["requestHeaders"]) > 300
    assert facts[1]["types"].get("compaction/summary", 0) > 3 * facts[0]["types"].get("compaction/summary", 0) > 10
    assert peaks[1] < peaks[0] + (1 << 20), peaks


def test_messages_command_streams_the_same_json(tmp_path, capsys):
    from app.cli.main import main
    p = tmp_path / "session.jsonl"
    write_jsonl(str(p), SessionSynth(seed=6), target_bytes=400_000)
    assert main(["messages", str(p), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["messages"] == \
        json.loads(json.dumps(analysis.messages(LogReader.open(str(p)))))
