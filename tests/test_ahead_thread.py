"""Issue 29: the background pass reads and scans a raw JSONL log one segment ahead in another thread
(:func:`app.log.query.ahead._scanned`).  Its products equal those of the pass read in turn and of the three separate
builds (every fixture face, a generated log, a log with a plugin source and unknown types past the first segment);
a cancelled pass stops with its reading thread gone; nothing else (zstd, SQLite) is read in a thread."""
from __future__ import annotations

import threading

import pytest

from app.log.index.reader import LogReader
from app.log.query import ahead
from app.log.query.ahead import build_ahead
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import fast_sample
from test_ahead_pass import CASES, _name, assert_same, plain, separate


def _threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("ahead-read")]


def _same_both_ways(path, monkeypatch) -> None:
    a = build_ahead(LogReader.open(str(path)))
    with monkeypatch.context() as m:
        m.setattr(ahead, "AHEAD_THREAD", False)
        b = build_ahead(LogReader.open(str(path)))
    assert a.complete and b.complete
    assert_same(a, (b.checkpoints, b.surface, b.surface_end, b.outline))
    assert plain(a.outline) == plain(b.outline) and a.outline.problems == b.outline.problems
    assert not _threads()


@pytest.mark.parametrize("path", fast_sample(CASES, spread=4), ids=_name)
def test_the_pass_read_ahead_equals_the_pass_read_in_turn_on_the_fixtures(path, monkeypatch):
    _same_both_ways(path, monkeypatch)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    p = tmp_path_factory.mktemp("thread") / "session.v4.jsonl"
    write_jsonl(str(p), SessionSynth(seed=11, version=4, context_window=12_000), target_bytes=3_000_000)
    return p


def test_the_pass_read_ahead_equals_both_on_a_generated_log(big, monkeypatch):
    r = LogReader.open(str(big))
    assert sum(1 for _ in r.source.forward()) > 2           # (more than one segment: one is read ahead)
    _same_both_ways(big, monkeypatch)
    assert_same(build_ahead(LogReader.open(str(big))), separate(LogReader.open(str(big))))


def test_a_plugin_source_and_unknown_types_past_the_first_segment(big, tmp_path, monkeypatch):
    rows = big.read_bytes().split(b"\n")
    k = len(rows) * 2 // 3
    at = next(i for i in range(k, len(rows)) if rows[i].startswith(b'{"type":"user/message"') and
              b'"source":{"kind":"user"}' in rows[i])
    rows[at] = rows[at].replace(b'"source":{"kind":"user"}', b'"source":{"kind":"plugin","plugin":"p"}', 1)
    seq = int(rows[at + 1].split(b'"seq":')[1].split(b",")[0]) if b'"seq":' in rows[at + 1] else 0
    rows.insert(at + 1, b'{"type":"zz/unknown","seq":%d,"time":1,"data":{}}' % seq)
    p = tmp_path / "session.v4.jsonl"
    p.write_bytes(b"\n".join(rows))
    a = build_ahead(LogReader.open(str(p)))
    with monkeypatch.context() as m:
        m.setattr(ahead, "AHEAD_THREAD", False)
        b = build_ahead(LogReader.open(str(p)))
    assert plain(a.outline) == plain(b.outline)
    assert [q.message for q in a.outline.refusals] == [q.message for q in b.outline.refusals]
    assert any("plugin" in q.message for q in a.outline.refusals)           # (the verdict saw both)
    assert any("zz/unknown" in q.message for q in a.outline.refusals)
    assert_same(a, separate(LogReader.open(str(p))))


def test_a_cancelled_pass_stops_and_its_thread_is_gone(big):
    calls = []

    def cancel():
        calls.append(1)
        return len(calls) > 3

    got = build_ahead(LogReader.open(str(big)), cancel=cancel)
    assert not got.complete
    assert not _threads()


def test_other_sources_are_read_in_turn(tmp_path, monkeypatch):
    seen = []
    real = ahead._scan

    def scan(*a):
        seen.append(threading.current_thread().name)
        return real(*a)

    monkeypatch.setattr(ahead, "_scan", scan)
    p = tmp_path / "session.v4.jsonl"
    write_jsonl(str(p), SessionSynth(seed=3, version=4, context_window=6_000), target_bytes=300_000)
    build_ahead(LogReader.open(str(p)))
    assert seen and all(n.startswith("ahead-read") for n in seen)
    seen.clear()
    from app.log.source.zstdframes import encode_frame
    from app.tools.synth import batches
    z = tmp_path / "session.jsonl.zstd"
    z.write_bytes(b"".join(encode_frame(b"".join(lines)) for lines in batches(SessionSynth(seed=31),
                                                                             target_bytes=300_000)))
    build_ahead(LogReader.open(str(z)))
    assert seen and not any(n.startswith("ahead-read") for n in seen)
