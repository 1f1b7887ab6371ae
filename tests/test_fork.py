"""Fork from a message: prefixes, eligibility, refusals, re-read, and crash injection."""
from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from app.log.query import analysis
from app.log.fold.fork import ForkError, eligibility, plan_fork
from app.log.index.reader import LogReader
from app.store.discovery import discover
from app.store.forking import fork
from app.store.publish import PUBLISH_STEPS
from fixtures_util import REPO, fixture, rel, session_files

MULTI = "examples/acp-agent/tests/snapshots/multi-turn/session.jsonl"


def copy_fixture(tmp_path, r, name="session.jsonl"):
    d = tmp_path / "store"
    d.mkdir(exist_ok=True)
    p = d / name
    shutil.copy(fixture(r), p)
    return p


def sha(p):
    return hashlib.sha256(open(p, "rb").read()).hexdigest()


def test_child_is_the_inclusive_prefix_with_lineage(tmp_path):
    p = copy_fixture(tmp_path, MULTI)
    before = sha(p)
    parent = LogReader.open(str(p))
    pe = parent.events()
    res = fork(parent, 34)                       # turn 1's reply: promoted through its turn/end (seq 36)
    # the newest dsh host cuts right after the boundary turn's turn/end (issue 27 item 4; decision 0018)
    assert (res["boundary"], res["seedLength"]) == (36, 37)
    assert pe[38].type == "turn/start" and pe[36].type == "turn/end"
    child = LogReader.open(res["child"])
    assert child.header.parentSession == parent.header.id and child.header.seedLength == 37
    assert child.header.cwd == parent.header.cwd and child.header.id == res["id"]
    ce = child.events()
    assert [e.raw for e in ce[:37]] == [e.raw for e in pe[:37]]                  # byte-for-byte rows
    assert ce[37].type == "session/end-seed" and ce[37].seq == 37 and len(ce) == 38
    assert ce[37].time == pe[36].time                     # the marker has event B's time, as the newest host
    assert analysis.messages(child, through=36, as_written=True) == analysis.messages(parent, through=36, as_written=True)
    # today's dsh's shape: the same, but the system head's id (a hash over each log's session id; issue 27)
    cm, pm = analysis.messages(child, through=36), analysis.messages(parent, through=36)
    assert cm[1:] == pm[1:] and dict(cm[0], id=None) == dict(pm[0], id=None) and cm[0]["id"] != pm[0]["id"]
    assert sha(p) == before
    # the child is listed under its parent in the store's lineage tree
    tree = discover(str(tmp_path / "store")).tree()
    assert len(tree) == 1 and tree[0][0].id == parent.header.id
    assert [c[0].id for c in tree[0][1]] == [res["id"]]


def normalize(msgs, reader):
    """Legacy message ids are derived from the reading session's id (spec §1.7): neutralize it."""
    out = json.dumps(msgs).replace(f"legacy-message:{reader.header.id}:", "legacy-message:*:")
    return json.loads(out)


FORKABLE = [p for p in session_files()
            if not any(s in rel(p) for s in ("cordis-tool-round", "authored-error", "blocked-log"))]


@pytest.mark.parametrize("path", FORKABLE[::3], ids=rel)
@pytest.mark.slow
def test_every_anchor_rereads_to_the_parents_messages(tmp_path, path):
    p = tmp_path / "session.jsonl"
    shutil.copy(path, p)
    parent = LogReader.open(str(p))
    pe = parent.events()
    anchors = [e.seq for e in pe if e.type == "assistant/message"][:4] or [None]
    for a in anchors:
        try:
            res = fork(parent, a)
        except ForkError as e:
            assert e.code == "FORK_UNAVAILABLE" and not any(x.type == "turn/end" for x in pe)
            continue
        child = LogReader.open(res["child"])
        b = res["boundary"]
        ce = child.events()
        logical = parent.events(logical=True)
        # stored rows byte-for-byte, legacy-shape rows in their converted form (as the dsh host
        # forks from converted events), closers as the logical view has them
        assert [e.envelope() if (l.synthesized or l.legacy) else e.raw for e, l in zip(ce[:b + 1], logical[:b + 1])] == \
            [l.envelope() if (l.synthesized or l.legacy) else l.raw for l in logical[:b + 1]]
        assert not any(e.legacy for e in ce[:b + 1])
        # legacy ids keep the parent's id: the child's messages are the parent's, exactly (as written); in today's
        # dsh's shape too, but the system head's id, a hash over each log's own session id (issue 27)
        assert analysis.messages(child, through=b, as_written=True) == \
            analysis.messages(parent, through=b, as_written=True)
        cm, pm = analysis.messages(child, through=b), analysis.messages(parent, through=b)
        assert [m for m in cm if m["role"] != "system"] == [m for m in pm if m["role"] != "system"]
        assert [dict(m, id=None) for m in cm if m["role"] == "system"] == \
            [dict(m, id=None) for m in pm if m["role"] == "system"]
        if a is not None:
            # the boundary is the first turn/end at or after the anchor (the newest dsh host's cut)
            te = next(e.seq for e in logical if e.type == "turn/end" and e.seq >= a)
            assert b == te


def test_refusals_name_the_reason(tmp_path):
    open_tail = LogReader.open(str(fixture("packages/test-support/acp-snapshot/tests/fixtures/suite/pin-turn/session.jsonl")))
    with pytest.raises(ForkError) as e:
        plan_fork(open_tail, 2, live=True)
    assert e.value.code == "OPEN_TURN" and "open turn" in e.value.reason
    # a cold crashed source forks from its logical view instead
    plan = plan_fork(open_tail, 2)
    assert plan.synthesized_seqs == [3] and plan.boundary == 3
    gap = LogReader.open(str(fixture("apps/web/tests/snapshots/cordis-tool-round/session.jsonl")))
    with pytest.raises(ForkError) as e:
        plan_fork(gap, 3)
    assert e.value.code == "INVALID_BOUNDARY" and "contiguous" in e.value.reason
    with pytest.raises(ForkError) as e:
        plan_fork(LogReader.open(str(fixture("packages/test-support/acp-snapshot/tests/fixtures/suite/blocked-log/session.jsonl"))))
    assert e.value.code == "FORK_UNAVAILABLE"


def test_cold_crashed_source_copies_marked_closers_and_leaves_parent(tmp_path):
    src = fixture("examples/headless-agent/tests/semantic-checkpoint-snapshots/tool-outcome-unknown/session.expected.jsonl")
    lines = src.read_bytes().split(b"\n")
    p = tmp_path / "session.jsonl"
    p.write_bytes(b"\n".join(lines[:6]) + b"\n")
    before = sha(p)
    res = fork(LogReader.open(str(p)), 3)
    assert res["synthesized"] == [5, 6, 7] and res["seedLength"] == 8
    child_rows = open(res["child"], "rb").read().split(b"\n")
    assert [json.loads(x) for x in child_rows[6:9]] == [json.loads(x) for x in lines[6:9]]   # = dsh's repair
    assert json.loads(child_rows[9])["type"] == "session/end-seed"
    assert sha(p) == before


def test_empty_source_is_refused_like_the_dsh_host(tmp_path):
    # (was: an empty child; the dsh host refuses a session without a completed turn, issue 12)
    p = copy_fixture(tmp_path, "examples/acp-agent/tests/snapshots/reject-extra-dirs/session.jsonl")
    before = sorted(os.listdir(tmp_path / "store"))
    with pytest.raises(ForkError) as e:
        fork(LogReader.open(str(p)))
    assert e.value.code == "FORK_UNAVAILABLE" and "no completed turn" in e.value.reason
    assert sorted(os.listdir(tmp_path / "store")) == before


def test_seed_ending_with_end_seed_gets_no_second_one(tmp_path):
    p = copy_fixture(tmp_path, "examples/headless-agent/tests/workspace-context-resume-snapshots/offline-edit/session.expected.jsonl")
    r = LogReader.open(str(p))
    evs = r.events()
    res = fork(r)
    ce = LogReader.open(res["child"]).events()
    assert [e.type for e in ce].count("session/end-seed") == [e.type for e in evs[:res["boundary"] + 1]].count(
        "session/end-seed") + (0 if evs[res["boundary"]].type == "session/end-seed" else 1)


def test_eligibility_rules_on_fixtures():
    evs = LogReader.open(str(fixture(MULTI))).events()
    el = eligibility(evs)
    assert el[34][0] and el[68][0]
    evs = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl"))).events()
    el = eligibility(evs)
    msgs = [e.seq for e in evs if e.type == "assistant/message"]
    assert [el[s][0] for s in msgs] == [False] * (len(msgs) - 1) + [True]
    assert "not the last reply" in el[msgs[0]][1]
    evs = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/subagent-max-tokens-partial/session.1.jsonl"))).events()
    el = eligibility(evs)
    empty = next(e.seq for e in evs if e.type == "assistant/message" and not e.data["message"]["content"])
    assert el[empty] == (False, "empty message: nothing to fork from")
    r = LogReader.open(str(fixture("examples/acp-agent/tests/snapshots/cancel/session.jsonl")))
    evs = r.events()
    # a crashed (open) tail: cut the turn/end and the message's turn is open when live
    cut = [e for e in evs if e.type != "turn/end"]
    el_live = eligibility(cut, tail_closure=[], live=True)
    msg = next(e.seq for e in cut if e.type == "assistant/message")
    assert el_live[msg][0] is False and "still open" in el_live[msg][1]


# ---------------------------------------------------------------------------- crash injection

def grow(rows_lines: list, times: int) -> list:
    """Repeat a log's turns ``times`` times, renumbering seqs and turns (a bigger real-shaped log)."""
    rows = [json.loads(l) for l in rows_lines]
    n_events = max((r.get("seq0", r.get("seq", -1)) + (len(r["data"]["dt"]) if "seq0" in r else 0)) for r in rows) + 1
    n_turns = max((r["data"].get("turn", 0) for r in rows if isinstance(r.get("data"), dict)), default=0)
    out = []
    for k in range(times):
        for r in rows:
            r = json.loads(json.dumps(r))
            if "seq0" in r:
                r["seq0"] += k * n_events
            else:
                r["seq"] += k * n_events
            if isinstance(r.get("data"), dict) and isinstance(r["data"].get("turn"), int):
                r["data"]["turn"] += k * n_turns
            if "sourceEventSeqs" in r:
                r["sourceEventSeqs"] = [s + k * n_events for s in r["sourceEventSeqs"]]
            if isinstance(r.get("surfaceOp"), dict):
                r["surfaceOp"] = {**r["surfaceOp"], "start": r["surfaceOp"]["start"] + k * n_events,
                                  "end": r["surfaceOp"]["end"] + k * n_events}
            out.append(json.dumps(r, separators=(",", ":"), ensure_ascii=False).encode())
    return out


def make_big(tmp_path, times=300):
    lines = fixture(MULTI).read_bytes().rstrip(b"\n").split(b"\n")
    d = tmp_path / "store"
    d.mkdir()
    p = d / "session.jsonl"
    p.write_bytes(b"\n".join([lines[0]] + grow(lines[1:], times)) + b"\n")
    return p


def visible_children(store, parent_path):
    listing = discover(str(store))
    return [s for s in listing.sessions if s.path != str(parent_path)]


def assert_complete_or_absent(store, parent_path, parent_sha, expect_seed=None, memo=None):
    """Every listed child is a complete fork of the parent (its rows the parent's prefix, then the end-seed marker).

    memo (a dict kept by the caller across calls): a child whose bytes were verified before is not parsed again.
    The verdict is a function of the child's path and bytes and the parent's bytes only, and the parent's bytes are
    checked equal to parent_sha on every call, so a child whose (path, sha256) was verified needs no second parse.
    """
    assert sha(parent_path) == parent_sha, "the parent's bytes changed"
    memo = {} if memo is None else memo
    kids = visible_children(store, parent_path)
    for k in kids:
        key = (k.path, sha(k.path), expect_seed)
        if key in memo:
            continue
        r = LogReader.open(k.path)
        assert r.fatal is None
        items = r.items()
        assert all(type(i).__name__ == "Event" for i in items), "a listed child holds a torn row"
        ev = [i for i in items if type(i).__name__ == "Event"]
        sl = r.header.seedLength
        assert ev[-1].type == "session/end-seed" and len(ev) == sl + 1
        if ("parent", parent_sha) not in memo:
            memo[("parent", parent_sha)] = [e.raw for e in LogReader.open(str(parent_path)).events()]
        assert [e.raw for e in ev[:sl]] == memo[("parent", parent_sha)][:sl]
        if expect_seed is not None:
            assert sl == expect_seed
        memo[key] = True
    return kids


def run_fork(path, at, child_id, step=None):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    if step:
        env["SESSION_LENS_FAULT_STEP"] = step
    return subprocess.run([sys.executable, "-m", "app", "fork", str(path), "--at", str(at), "--id", child_id,
                           "--json"], capture_output=True, text=True, cwd=REPO, env=env)


WRITER_STEPS = ("before-publish",) + PUBLISH_STEPS + ("after-publish",)


@pytest.mark.slow
def test_sigkill_at_every_publication_step(tmp_path):
    p = make_big(tmp_path, times=20)
    psha = sha(p)
    store = p.parent
    for i, step in enumerate(WRITER_STEPS):
        res = run_fork(p, 34, f"child-{i}", step)
        assert res.returncode == -signal.SIGKILL, (step, res.returncode, res.stderr)
        kids = assert_complete_or_absent(store, p, psha, expect_seed=37)     # through turn 1's turn/end
        ids = {k.id for k in kids}
        published = WRITER_STEPS.index(step) >= WRITER_STEPS.index("linked")
        assert (f"child-{i}" in ids) == published, step
    # a run without a fault still succeeds next to the debris, and reports only when durable
    res = run_fork(p, 34, "child-ok")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["seedLength"] == 37
    assert_complete_or_absent(store, p, psha)


def _fork_proc(p, at, child_id):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.Popen([sys.executable, "-m", "app", "fork", str(p), "--at", str(at), "--id", child_id, "--json"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_sigkill_at_random_times_many_times(tmp_path):
    p = make_big(tmp_path, times=400)                  # a few MB: kills land mid-copy too
    psha = sha(p)
    store = p.parent
    rng = random.Random(7)
    last_turn_msg = max(e.seq for e in LogReader.open(str(p)).events() if e.type == "assistant/message")
    # The kill delays scale with this machine's uncontended fork (start-up, copy, publication): fixed delays let
    # every fork finish first on a fast, quiet machine, and kill every one during start-up on a slow one.
    runs = []
    for i in range(3):
        t0 = time.perf_counter()
        proc = _fork_proc(p, last_turn_msg, f"m-{i}")
        out, err = proc.communicate()
        runs.append(time.perf_counter() - t0)
        assert proc.returncode == 0, err
    full = min(runs)
    outcomes = {"killed-before": 0, "killed-after": 0, "finished": 0}
    memo: dict = {}                                    # children verified once, by their bytes (see the helper)
    for i in range(25):
        proc = _fork_proc(p, last_turn_msg, f"r-{i}")
        time.sleep(full * rng.uniform(0.3, 1.1))       # from past start-up to just after a finish
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate()
        kids = assert_complete_or_absent(store, p, psha, memo=memo)
        seen = f"r-{i}" in {k.id for k in kids}
        if proc.returncode == 0:
            outcomes["finished"] += 1
            assert seen
        else:
            outcomes["killed-after" if seen else "killed-before"] += 1
    assert outcomes["killed-before"] > 0, (outcomes, runs)


def test_zstd_fork_mid_session_copies_frames_and_reframes_the_cut(tmp_path):
    from app.store.writer import write_session
    lines = fixture(MULTI).read_bytes().rstrip(b"\n").split(b"\n")
    body = lines[1:]
    src = tmp_path / "store" / "session.jsonl.zstd"
    write_session(str(src), json.loads(lines[0]), [body[i:i + 5] for i in range(0, len(body), 5)], fmt="zstd")
    before = sha(src)
    parent = LogReader.open(str(src))
    assert parent.source.kind == "zstd"
    res = fork(parent, 34)
    assert res["format"] == "zstd" and res["child"].endswith(".jsonl.zstd") and res["seedLength"] == 37
    child = LogReader.open(res["child"])
    ce, pe = child.events(), parent.events()
    assert [e.raw for e in ce[:37]] == [e.raw for e in pe[:37]] and ce[37].type == "session/end-seed"
    assert sha(src) == before


def test_sqlite_fork_in_one_transaction(tmp_path):
    from app.store.faces import open_reader
    from app.store.sqlite_writer import jsonl_to_sqlite
    db = tmp_path / "store.sqlite"
    jsonl_to_sqlite(str(fixture(MULTI)), str(db))
    parent = open_reader(str(db))
    rev = parent.source.revision()
    res = fork(parent, 34, child_id="child-sql")
    assert res["format"] == "sqlite" and res["seedLength"] == 37
    child = open_reader(str(db), "child-sql")
    assert child.header.parentSession == parent.header.id and child.header.seedLength == 37
    ce, pe = child.events(), open_reader(str(db), parent.header.id).events()
    assert [e.envelope() for e in ce[:37]] == [e.envelope() for e in pe[:37]]
    assert ce[37].type == "session/end-seed" and len(ce) == 38
    assert open_reader(str(db), parent.header.id).source.revision() == rev
