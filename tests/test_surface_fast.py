"""The surface index's pass (issue 29: ``page`` on a fresh cache waits for it) takes step boundaries and plain message
appends from their lean records (app/log/fold/surface_fast.py): the index is the same as the exact decode's on every
fixture, generated logs of each version, hostile logs, mutants and rows made to miss each condition; most rows of a
long log take the lean way.  A zstd log's surface index is saved too (the page of a zstd log no longer reads the
whole log each time): used for the very same file, read again once it changed."""
from __future__ import annotations

import json

import pytest

from app.log.fold import surface_fast
from app.log.fold.surface import SurfaceIndex, extend_index, index_for, page_surface
from app.log.index.reader import LogReader
from app.log.source.zstdframes import encode_frame
from app.store.surface_cache import cached_surface
from app.tools.hostile import hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import session_files
from tests.test_surface_cache import NEXT


def _both(path: str, monkeypatch) -> tuple[SurfaceIndex, SurfaceIndex, int]:
    """(lean, exact, rows taken the lean way) of one log."""
    taken = [0]
    real = surface_fast.lean_feeder

    def counting(idx, version):
        take = real(idx, version)
        if take is None:
            return None

        def t(raw):
            ok = take(raw)
            taken[0] += ok
            return ok
        return t
    monkeypatch.setattr(surface_fast, "lean_feeder", counting)
    r = LogReader.open(path)
    lean = extend_index(r, SurfaceIndex(r.version or 0))
    monkeypatch.setattr(surface_fast, "lean_feeder", lambda idx, version: None)
    r = LogReader.open(path)
    exact = extend_index(r, SurfaceIndex(r.version or 0))
    monkeypatch.setattr(surface_fast, "lean_feeder", real)
    return lean, exact, taken[0]


def _same(path: str, monkeypatch) -> int:
    lean, exact, taken = _both(path, monkeypatch)
    assert lean.to_state() == exact.to_state(), path
    evs = list(LogReader.open(path).iter_events(logical=True))
    assert page_surface(lean, evs) == page_surface(exact, evs), path
    return taken


def test_every_fixture_the_same_both_ways(monkeypatch):
    paths = session_files() + session_files(NEXT)
    assert len(paths) > 100
    taken = sum(_same(str(p), monkeypatch) for p in paths)
    assert taken > 1000


@pytest.mark.parametrize("version", [0, 4])
def test_generated_logs_mostly_lean_and_the_same(tmp_path, monkeypatch, version):
    p = tmp_path / "s.jsonl"
    write_jsonl(str(p), SessionSynth(seed=4, version=version, context_window=20_000), target_bytes=600_000)
    taken = _same(str(p), monkeypatch)
    with open(p, "rb") as f:
        rows = [ln for ln in f.read().split(b"\n")[1:] if b'"surfaceOp"' in ln or b'"step/' in ln]
    assert taken > len(rows) // 2, (taken, len(rows))


def test_hostile_and_mutants_the_same(tmp_path, monkeypatch):
    src = tmp_path / "src.jsonl"
    write_jsonl(str(src), SessionSynth(seed=6, version=4, context_window=20_000), turns=12)
    data = hostile_session(src.read_bytes().decode().split("\n"), seed=1)
    p = tmp_path / "h.jsonl"
    p.write_bytes(data)
    _same(str(p), monkeypatch)
    for k, (_name, mutant, _kept) in enumerate(jsonl_mutants(src.read_bytes(), seed=3, count=30)):
        m = tmp_path / f"m{k}.jsonl"
        m.write_bytes(mutant)
        _same(str(m), monkeypatch)


def _row(**kw) -> bytes:
    return json.dumps(kw, ensure_ascii=False, separators=(",", ":")).encode()


def test_rows_made_to_miss_each_condition_the_same(tmp_path, monkeypatch):
    """Rows the lean way must leave to the exact one (an extra envelope key, a replacement, an empty assistant
    message, a step row with surface keys, a bad time, a seq citing itself, deep, bad UTF-8, a legacy shape…)."""
    src = tmp_path / "src.jsonl"
    write_jsonl(str(src), SessionSynth(seed=9, version=4), turns=4)
    base = src.read_bytes()
    last = max(e.seq for e in LogReader.open(str(src)).iter_events())
    msg = {"id": "a1", "role": "assistant", "content": []}
    user = {"id": "u1", "role": "user", "content": [{"type": "text", "text": "hé"}], "source": {"kind": "user"}}
    s = last + 1
    rows = [
        _row(type="step/start", seq=s, time=1, data={"turn": 9, "step": 1}),
        _row(type="assistant/message", seq=s + 1, time=1, data={"turn": 9, "step": 1, "message": msg},
             surfaceOp="append"),                                      # an empty assistant message
        _row(type="user/message", seq=s + 2, time=1, data={"turn": 9, **user}, surfaceOp="append", extra=1),
        _row(type="step/end", seq=s + 3, time="x", data={"turn": 9, "step": 1}),
        _row(type="step/start", seq=s + 4, time=1, data={"turn": 9, "step": 2}, surfaceOp="append"),
        _row(type="user/message", seq=s + 5, time=1, data={"turn": 9, **user}, surfaceOp="append",
             sourceEventSeqs=[s + 5]),
        _row(type="user/message", seq=s + 6, time=1, data={"turn": 9, **user},
             surfaceOp={"op": "replace", "start": s + 2, "end": s + 5}, sourceEventSeqs=[s + 2, s + 5]),
        _row(type="user/message", seq=s + 7, time=1, data={"turn": 9, "role": "user", "content": "legacy"},
             surfaceOp="append"),
        _row(type="step/end", seq=s + 8, time=1, data={"turn": 9, "step": "two"}),
        _row(type="user/message", seq=s + 9, time=1, data={"turn": 9, **user}, surfaceOp="prepend"),
        b'{"type":"step/end","seq":' + str(s + 10).encode() + b',"time":1,"data":{"turn":9,"step":2,"x":'
        + b"[" * 300 + b"]" * 300 + b"}}",
        _row(type="user/message", seq=s + 11, time=1, data={"turn": 9, **user}, surfaceOp="append")
        .replace("hé".encode(), b"h\xff"),
        _row(type="tool/result", seq=s + 12, time=1, data={"turn": 9, "step": 2, "message": {
            "role": "tool", "content": [], "toolCallId": "c"}}, surfaceOp="append"),
        _row(type="step/start", seq=s + 12, time=1, data={"turn": 9, "step": 3}),          # a repeated seq
    ]
    p = tmp_path / "edge.jsonl"
    p.write_bytes(base + b"\n".join(rows) + b"\n")
    assert _same(str(p), monkeypatch) > 0


def _zstd_log(path, turns: int) -> None:
    from app.tools.synth import batches
    with open(path, "wb") as f:
        for lines in batches(SessionSynth(seed=2, version=4, context_window=20_000), turns=turns):
            f.write(encode_frame(b"".join(lines)))


def test_a_zstd_logs_surface_index_is_saved_and_read_again_once_it_changed(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "s.jsonl.zstd"
    _zstd_log(p, 20)
    fresh = index_for(LogReader.open(str(p)))
    idx, status = cached_surface(LogReader.open(str(p)))
    assert status == "built" and idx.to_state() == fresh.to_state()
    idx, status = cached_surface(LogReader.open(str(p)))
    assert status == "hit" and idx.to_state() == fresh.to_state()
    _zstd_log(tmp_path / "more.zstd", 26)                   # the same log, grown by more frames
    p.write_bytes((tmp_path / "more.zstd").read_bytes())
    fresh = index_for(LogReader.open(str(p)))
    idx, status = cached_surface(LogReader.open(str(p)))
    assert status == "built" and idx.to_state() == fresh.to_state()
