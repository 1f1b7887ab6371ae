"""Whole-log scans of the window in a child process (app/store/scan_child.py): the same hits,
stats and outline as in-process, hits streamed before the end, cancellation kills the child."""
from __future__ import annotations

import time

import pytest

from app.log.query.outline import build_outline
from app.log.index.reader import LogReader
from app.log.query.find import FindOptions, find_all
from app.store.scan_child import run_isolated
from app.tools.plant import PlantingSynth
from app.tools.synth import write_jsonl


@pytest.mark.slow
def test_child_find_and_outline_equal_in_process(tmp_path):
    path = tmp_path / "session.jsonl"
    s = PlantingSynth(seed=3, at_turn=2)
    write_jsonl(str(path), s, turns=6)
    seq = s.planted["zebraquokka"][0]
    opts = FindOptions(text="zebraquokka")
    msgs = []
    st = run_isolated("find", str(path), None, {"opts": opts, "limit": None}, msgs.append, lambda: False)
    hits = [h for m in msgs if m[0] == "hits" for h in m[1]]
    want, wst = find_all(LogReader.open(str(path)), opts)
    assert [h.to_dict() for h in hits] == [h.to_dict() for h in want] and any(h.seq == seq for h in hits)
    assert st.complete and st.hits == wst.hits and any(m[0] == "progress" for m in msgs)
    ol = run_isolated("outline", str(path), None, {}, lambda m: None, lambda: False)
    ref = build_outline(LogReader.open(str(path)))
    assert [t.to_dict() for t in ol.turns] == [t.to_dict() for t in ref.turns] and len(ol.turns) == 6


def test_child_scan_is_cancelled(tmp_path):
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), PlantingSynth(seed=4), turns=40)
    t0 = time.perf_counter()
    calls = {"n": 0}

    def cancelled():
        calls["n"] += 1
        return calls["n"] > 2
    try:
        run_isolated("find", str(path), None, {"opts": FindOptions(text="x.*y", regex=True), "limit": None},
                     lambda m: None, cancelled)
    except InterruptedError:
        pass
    else:
        raise AssertionError("not cancelled")
    assert time.perf_counter() - t0 < 10


@pytest.mark.parametrize("task, step", [("outline", 15), ("find", 5)])
def test_the_outline_child_runs_below_a_search_child(task, step):
    """The outline pass is background work (it runs for a minute on a 1 GB log while the user
    scrolls): its child lowers its priority further than a search's, which someone waits for."""
    import os
    import pickle
    import subprocess
    import sys
    from app.store.childproc import child_env
    code = ("import os, sys\n"
            "from app.store import scan_child as sc\n"
            "sc.scan = lambda task, path, sid, args, send: os.nice(0)\n"
            "sys.exit(sc.child_main([]))\n")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps((task, "unused", None, {})),
                         capture_output=True, env=child_env(), timeout=60)
    kind, niceness = pickle.loads(out.stdout)
    assert kind == "done"
    assert niceness == min(19, os.nice(0) + step)
