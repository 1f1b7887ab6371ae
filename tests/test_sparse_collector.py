"""*Errors only*'s worker holds the cyclic collector off while it decodes and builds the errors' page (issue 29:
<= 300 ms on the whole log), and gives it back however the job ends: done, cancelled, or with the collector
already off (a caller's own pause is never ended by the job); the page is the one read with the collector on."""
from __future__ import annotations

import gc

import pytest

from app.log.query.outline import build_outline
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history import sparse as sparse_mod


class Cancelled(Exception):
    pass


class Job:
    """A worker job whose check() notes whether the collector is on, and raises after ``cancel_after`` checks."""
    partial = None

    def __init__(self, cancel_after: int = -1):
        self.seen: list[bool] = []
        self.cancel_after = cancel_after

    def check(self) -> None:
        self.seen.append(gc.isenabled())
        if len(self.seen) == self.cancel_after:
            raise Cancelled


@pytest.fixture(scope="module")
def log():
    import tempfile
    d = tempfile.mkdtemp(prefix="sparse-gc-")
    p = f"{d}/session.jsonl"
    write_jsonl(p, SessionSynth(seed=29, version=4, context_window=24_000, p_tool_error=0.05, p_turn_error=0.02),
                target_bytes=1_200_000)
    r = open_reader(p)
    r.build_index()
    ol = build_outline(r)
    seqs = sorted(s for t in ol.turns for s in t.error_seqs)
    where = {s: w for t in ol.turns for s, w in zip(t.error_seqs, t.error_rows)}
    assert len(seqs) >= 12
    return r, seqs, where


def test_collector_off_during_the_job_and_back_after(log):
    r, seqs, where = log
    assert gc.isenabled()
    ref = sparse_mod.sparse_page(r, seqs, where=where)
    job = Job()
    lp = sparse_mod.sparse_job(job, r, seqs, where, False, False)
    assert job.seen and not any(job.seen)            # (every check inside the job: the collector off)
    assert gc.isenabled()
    assert [(e.seq, e.type, e.data) for e in lp.page.items] == [(e.seq, e.type, e.data) for e in ref.items]
    assert len(lp.page.items) == len(seqs)


def test_collector_back_after_a_cancel_and_a_callers_pause_left_alone(log):
    r, seqs, where = log
    job = Job(cancel_after=2)
    with pytest.raises(Cancelled):
        sparse_mod.sparse_job(job, r, seqs, where, False, False)
    assert job.seen == [False, False] and gc.isenabled()
    gc.disable()
    try:
        sparse_mod.sparse_job(Job(), r, seqs, where, False, False)
        assert not gc.isenabled()
    finally:
        gc.enable()
