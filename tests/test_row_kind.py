"""Row kinds are typed: every row built from the shared fixtures (v0 stores and the dsh-next v2–v4
logs, all four faces: logical / physical x hidden attempts off / on) has a ``RowKind`` member as its
kind, and a kind still reads, compares and serialises as the string it was before the enum."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history.pages import older_job, _open_job
from app.ui.history.row_kind import RowKind

from fixtures_util import REPO, WorkerJob, session_files

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
FACES = [(False, False), (False, True), (True, False), (True, True)]


def _rows_of(lp):
    for physical, attempts in FACES:
        for r in lp.rows_for(physical, attempts).rows:
            yield r
            yield from r.children


def _all_rows(path: str):
    """Every row of every page of ``path`` in the four faces (pages read oldest-ward from the tail)."""
    job = WorkerJob()
    reader, lp = _open_job(job, path, None, 400, False, False)
    try:
        yield from _rows_of(lp)
        page = lp.page
        while page.has_more:
            lp = older_job(job, reader, page, 400, False, False)
            if not lp.page.items:
                break
            yield from _rows_of(lp)
            page = lp.page
    finally:
        reader.close()


@pytest.mark.slow
def test_every_row_kind_built_on_the_fixtures_is_a_row_kind_member(tmp_path):
    logs = session_files() + sorted(p for p in NEXT.rglob("*.jsonl") if ".v" in p.name)
    assert len(logs) > 20
    # a stored row that is not an event (malformed, then a torn tail), and a long generated session
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(logs[0].read_bytes().rstrip(b"\n") + b"\n{not json}\n{\"seq\": 99")
    synth = tmp_path / "synth.jsonl"
    write_jsonl(str(synth), SessionSynth(seed=13), turns=40)
    logs += [damaged, synth]
    seen: Counter = Counter()
    strays = []
    for p in logs:
        for r in _all_rows(str(p)):
            if type(r.kind) is not RowKind:
                strays.append((p.name, r.key, r.kind))
            seen[r.kind] += 1
            c = r.content()                      # every kind has a content built for it
            assert c.badge and isinstance(c.title, str), (p, r.kind)
    assert not strays, strays[:10]
    # (compaction rows: tests/test_surface_status.py; an attempt that ended without a message is rare)
    assert {RowKind.USER, RowKind.ASSISTANT, RowKind.TOOL_CALL, RowKind.TOOL_RESULT, RowKind.TURN_START,
            RowKind.TURN_END, RowKind.STEP_START, RowKind.STEP_END, RowKind.ATTEMPT_FAILED, RowKind.BAD,
            RowKind.EVENT, RowKind.NOTICE, RowKind.GAP, RowKind.STREAMING} <= set(seen), sorted(seen)


def test_a_row_kind_reads_as_its_string():
    assert [k.value for k in RowKind] == [str(k) for k in RowKind] == [f"{k}" for k in RowKind]
    assert json.dumps(list(RowKind)) == json.dumps([k.value for k in RowKind])
    assert RowKind.TOOL_CALL == "tool-call" and {"tool-call": 1}[RowKind.TOOL_CALL] == 1
    assert RowKind("attempt-failed") is RowKind.ATTEMPT_FAILED
    assert len({k.value for k in RowKind}) == len(RowKind) == 16
