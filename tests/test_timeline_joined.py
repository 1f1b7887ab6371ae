"""A turn cut by a segment's end (issue 31, the tl5 helper): ``timeline_rows._turns_joined`` reads it in a segment of
its own, its two pieces joined, so that the row scan in C reads it whole.  The spans, turns and totals are those of
the segments read as they come (``timeline_rows.REGROUP`` off), for any segment size, on every fixture, on generated
v4 logs (retries, compactions, request rows within turns), on hostile mutants, on torn and crash-repaired logs and
for parts of a log (``timeline_split.part``); the rows the joined segments give are the log's rows, once each, in
order."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.log.index.reader import LogReader
from app.log.query import timeline_rows as tr
from app.log.query import timeline_scan
from app.log.query.timeline import Builder, timeline
from app.log.query.timeline_split import merge_all, part
from app.log.query.timeline_summary import in_log_order, summarize
from app.log.source.sources import RawJsonlSource
from app.tools.hostile import jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

NEXT = FIXTURES.parent / "dsh-next"
PRICES = {"deepseek-*": {"input": 0.28, "cacheRead": 0.028, "output": 0.42}}
needs_c = pytest.mark.skipif(timeline_scan._c_scan is None, reason="the row scanner in C is not built")


def _reader(p: Path, block: int) -> LogReader:
    return LogReader(RawJsonlSource(str(p), block=block))


def _answer(p: Path, block: int, joined: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(tr, "REGROUP", joined)
    r = _reader(p, block)
    if r.fatal:
        return None
    out = summarize(in_log_order(timeline(r)), PRICES, ordered=True)
    return json.dumps(out["spans"]), json.dumps(out["turns"]), json.dumps(out["totals"])


def _generated(tmp_path: Path) -> list[Path]:
    out = []
    for k, mix in enumerate(({"p_retry": 0.3}, {"p_retry": 0.2, "context_window": 24_000, "p_header_change": 0.3})):
        g = tmp_path / f"g{k}" / "session.jsonl"
        write_jsonl(str(g), SessionSynth(90 + k, version=4, **mix), target_bytes=400_000)
        out.append(g)
    return out


class _Taken:
    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.n = 0
        real = Builder.turn_c

        def turn_c(b: Builder, x: Any, data: bytes) -> bool:
            ok = real(b, x, data)
            self.n += ok
            return ok
        monkeypatch.setattr(Builder, "turn_c", turn_c)


@needs_c
def test_joined_turns_give_the_same_timeline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    taken = _Taken(monkeypatch)
    logs = sorted(FIXTURES.rglob("*.jsonl")) + sorted(NEXT.rglob("*.jsonl")) + _generated(tmp_path)
    for k, (_n, blob, _kept) in enumerate(jsonl_mutants(logs[-1].read_bytes(), seed=23, count=8)):
        m = tmp_path / f"m{k}" / "session.jsonl"
        m.parent.mkdir()
        m.write_bytes(blob)
        logs.append(m)
    torn = tmp_path / "torn" / "session.jsonl"           # (a torn last row; a crash left turns open: repaired)
    torn.parent.mkdir()
    data = logs[-9].read_bytes()
    torn.write_bytes(data[:len(data) * 2 // 3] + b'{"type":"turn/end","seq":')
    logs.append(torn)
    compared = 0
    gain = {}
    for p in logs:
        for block in (1 << 10, 5000, 1 << 16):
            before = taken.n
            want = _answer(p, block, False, monkeypatch)
            plain = taken.n - before
            got = _answer(p, block, True, monkeypatch)
            assert got == want, (p, block)
            compared += want is not None
            gain[(p, block)] = taken.n - before - 2 * plain
    assert compared >= 150
    assert sum(gain.values()) >= 50 and min(gain.values()) >= 0, sum(gain.values())    # (more turns taken whole)


def test_the_joined_segments_hold_the_rows_once_in_order(tmp_path: Path):
    for p in _generated(tmp_path):
        for block in (1 << 10, 3000, 1 << 14):
            r = _reader(p, block)
            src = r.source
            rows = b"".join(seg.data for seg in src.forward(src.header_end))
            got = []
            for seg, first, last in tr._turns_joined(src.forward(src.header_end)):
                piece = seg.data[first:last]
                assert src.pread(len(piece), seg.pos + first) == piece      # (positions are the file's)
                got.append(piece)
            assert b"".join(got) == rows


@needs_c
def test_parts_read_with_joined_turns_join_into_the_one_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    for p in _generated(tmp_path):
        data = p.read_bytes()
        starts = [i + 1 for i in range(len(data)) if data.startswith(b'\n{"type":"turn/start",', i)]
        for block in (1 << 10, 5000):
            monkeypatch.setattr(tr, "REGROUP", False)
            whole = json.dumps(list(timeline(_reader(p, block))))
            monkeypatch.setattr(tr, "REGROUP", True)
            for cut in starts[3::max(1, len(starts) // 6)]:
                got = merge_all([part(_reader(p, block), None, cut), part(_reader(p, block), cut, None)])
                assert got is not None and json.dumps(got) == whole, (p, block, cut)
