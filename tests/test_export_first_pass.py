"""The transcripts' first pass (title and failed attempts) reads the rows the lean decoders of fastrows accept from
their records (issue 29: exports at disk speed): the same title and the same failed attempts, field for field, as
applying every row's exact events, on every fixture, generated v0 and v4 logs with failures, hostile and damaged
logs."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from app.log.fold.attempts import AttemptTracker
from app.store import export_transcript as et
from app.store.export_rows import exact_events, logical_rows
from app.store.faces import open_reader
from app.tools.hostile import hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import session_files

NEXT = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "dsh-next"


def exact_first_pass(reader):
    """The definition: every row's exact events applied (the title kept, a turn's end prunes)."""
    title = None
    at = AttemptTracker(keep_text=False)
    evs = [ev for row in logical_rows(reader) for ev in exact_events(reader, row)] + list(reader.tail_state().closure)
    for ev in evs:
        at.apply(ev)
        if ev.type == "session/title" and isinstance(ev.data, dict):
            title = ev.data.get("title", title)
        elif ev.type == "turn/end":
            at.prune()
    return title, [a for a in at.attempts if a.failed]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("first-pass")
    out = []
    for version, seed, crash in ((0, 11, False), (0, 12, True), (4, 29, False), (4, 30, True)):
        p = d / f"v{version}-{seed}.jsonl"
        write_jsonl(str(p), SessionSynth(seed, version=version, context_window=24_000, p_turn_error=0.05),
                    target_bytes=400_000, crash=crash)
        out.append(p)
    h = d / "hostile.jsonl"
    h.write_bytes(hostile_session(out[0].read_bytes().splitlines(True), 4))
    out.append(h)
    for src in (out[0], out[2]):
        data = src.read_bytes()[:150_000]
        for name, b, _kept in jsonl_mutants(data[:data.rfind(b"\n") + 1], 9, 20):
            p = d / f"{src.stem}-mut-{name.replace('/', '_')}.jsonl"
            p.write_bytes(b)
            out.append(p)
    return out


def _as_dicts(failed):
    return [dataclasses.asdict(a) for a in failed]


def test_first_pass_is_the_exact_one(generated, monkeypatch):
    failed_logs = 0
    for p in generated + session_files() + session_files(NEXT):
        r = open_reader(str(p))
        title, failed = et._first_pass(r, None)
        want_title, want_failed = exact_first_pass(r)
        assert title == want_title, p
        assert _as_dicts(failed) == _as_dicts(want_failed), p
        failed_logs += bool(failed)
    assert failed_logs >= 10            # (logs with failed attempts, v0 and v4 alike)


def test_first_pass_decodes_few_rows_exactly(generated, monkeypatch):
    """On the generated logs (dsh's writer) the exact decode is left to the few rows no lean record reads
    (the titles): the rest are read from their records."""
    exact = {"rows": 0}

    def counted(reader, row):
        exact["rows"] += 1
        return exact_events(reader, row)
    monkeypatch.setattr(et, "exact_events", counted)
    for p in generated[:4]:
        r = open_reader(str(p))
        exact["rows"] = 0
        et._first_pass(r, None)
        assert 0 < exact["rows"] < 20, (p, exact)
