"""The demo Harness home shipped in resources/ shows every capability on the formats dsh
writes today (v4, mostly ``session.v4.jsonl.zstd``), plus older generations and v0 legacy
sessions, and every session in it opens through every read face.  Today's dsh opens every one of them
but ``demo-refused-by-dsh``, kept to show a refusal (issue 35)."""
from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from app.log.query import analysis
from app.log.fold.attempts import find_attempts
from app.log.query.stats import compute_stats
from app.log.query.trace import trace_event
from app.log.format.versions import file_version, header_version
from app.store import forking
from app.store.discovery import discover, parse_generation
from app.store.export import export
from app.store.faces import open_info, open_reader
from app.log.index.reader import LogReader
from app.log.index.verdict import dsh_verdict
from app.tools.make_demo import REFUSED, build
from app.ui.file_actions import DEMO_START, DEMO_START_SEQ
from fixtures_util import REPO, fast_sample

DEMO = REPO / "resources" / "demo"
SESSIONS = DEMO / "sessions"
FILES = sorted(p for p in SESSIONS.rglob("*") if p.is_file())
IDS = ["/".join(p.parts[-2:]) for p in FILES]


def _listing():
    listing = discover(str(DEMO))
    assert listing.kind == "home" and not listing.problems
    return listing, {s.id: s for s in listing.sessions}


@pytest.mark.slow
def test_demo_is_what_make_demo_builds(tmp_path):
    """resources/demo is reproducible: a fresh build from the shared fixtures is byte-identical."""
    out = tmp_path / "demo"
    build(REPO.parent / "shared" / "fixtures", out)
    built = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert built == [p.relative_to(DEMO) for p in FILES]
    for rel in built:
        assert (out / rel).read_bytes() == (DEMO / rel).read_bytes(), rel


def test_demo_is_light_and_mostly_todays_format():
    assert sum(p.stat().st_size for p in FILES) < 3_000_000
    names = [p.name for p in FILES]
    assert all(parse_generation(n) is not None for n in names)       # only canonical generation files
    listing, infos = _listing()
    newest = [os.path.basename(s.path) for s in listing.sessions]
    assert newest.count("session.v4.jsonl.zstd") > len(newest) / 3            # what dsh writes today
    assert newest.count("session.v4.jsonl.zstd") > max(newest.count(n) for n in set(newest) - {"session.v4.jsonl.zstd"})
    assert "session.v4.jsonl" in newest and "session.v3.jsonl" in newest
    v0 = [s.id for s in listing.sessions if s.version == 0]
    assert 2 <= len(v0) < len(listing.sessions) / 3                             # a few legacy sessions
    assert {s.version for s in listing.sessions} == {0, 3, 4}
    # older generations live beside the newest, never listed as sessions of their own
    with_older = {s.id: [g["name"] for g in s.generations] for s in listing.sessions if s.generations}
    assert with_older["demo-migrated"] == ["session.jsonl"]
    assert with_older["demo-plain-turn"] == ["session.v2.jsonl"]
    assert os.path.basename(infos["demo-migrated"].path) == "session.v4.jsonl"
    assert len(listing.sessions) == len(FILES) - sum(len(v) for v in with_older.values())


@pytest.mark.parametrize("path", fast_sample(FILES, spread=3), ids=IDS)
def test_every_demo_file_opens_through_every_face(path, tmp_path):
    want = parse_generation(path.name)[1]
    assert file_version(str(path)) == want
    r = open_reader(str(path))
    assert r.fatal is None and r.format_version == want
    info = analysis.inspect(r)
    assert info["formatVersion"] == want and "fatal" not in info
    # no problem, but that the newest dsh refuses the one session kept for it (said as dshWouldRefuse says it)
    assert not [p for p in info["problems"] if not p.startswith("dsh-would-refuse")], info["problems"]
    assert info["dshWouldRefuse"] is bool(info["problems"]) is (path.parent.name == REFUSED)
    evs = r.events(logical=True)
    assert [e.seq for e in evs] == list(range(len(evs)))
    msgs = analysis.messages(r)
    assert all(isinstance(m, dict) and m.get("role") for m in msgs)
    # (a v2 log's header prompt becomes a system message through dsh's v2->v3 migration)
    assert bool(msgs) == any(e.data.get("message") or e.type == "user/message" for e in evs if isinstance(e.data, dict)
                             and e.type in ("user/message", "assistant/message", "system/message")) or \
        (want == 2 and any(e.type == "request/header" and e.data["header"].get("system") for e in evs))
    bounds = analysis.dispatches(r.events())
    assert len(bounds) == info["attempts"]
    step = 1 if len(bounds) <= 60 else len(bounds) // 8                     # the long session: a sample, and its last
    headers = [e.seq for e in evs if e.type == "request/header"]
    from app.log.index.verdict import migration_refuses
    migrated = want <= 2 and r.source.kind in ("jsonl", "zstd") and not migration_refuses(r)
    for b, _a in bounds[::step] + bounds[-1:]:
        if not [h for h in headers if h < b]:            # dsh built no request there (issue 27)
            with pytest.raises(analysis.RequestError):
                analysis.request_at(r, b)
            continue
        req = analysis.request_at(r, b)
        assert req["boundary"] == b and "messages" in req["request"]
        # v3, and a v0-v2 log that dsh's migration accepts: derived on the v4 shape (issue 27)
        assert ("toolHistory" in req["request"]) == (want >= 3 or migrated)
    # pages back to seq 0, every stored event once
    seen, page = [], r.tail_page(max_messages=20)
    while True:
        seen = [it.seq for it in page.events] + seen
        if not page.has_more:
            break
        page = r.page_before(page, max_messages=20)
    assert seen == list(range(info["events"]))
    tstep = 1 if len(evs) <= 1200 else len(evs) // 40
    for e in evs[::tstep]:
        assert trace_event(r, e.seq)["target"]["seq"] == e.seq
    assert compute_stats(r) is not None
    export(r, "raw", str(tmp_path / "raw"))
    assert (tmp_path / "raw").read_bytes() == path.read_bytes()
    for fmt in ("logical", "markdown", "html", "zip"):
        export(r, fmt, str(tmp_path / fmt))
        assert (tmp_path / fmt).stat().st_size > 0
    answered = [e.seq for e in evs if e.type == "assistant/message"]
    if answered:
        pv = forking.preview(r, answered[0])
        assert pv["parentSession"] == r.header.id


def test_demo_cli_inspect_reports_the_generation():
    from app.cli.main import main
    p = SESSIONS / "--home-dev-demo-project--" / "demo-migrated" / "session.v4.jsonl"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["inspect", str(p), "--json"]) == 0
    out = json.loads(buf.getvalue())
    assert out["formatVersion"] == 4 and out["generation"] == "session.v4.jsonl"
    assert [g["name"] for g in out["generations"]] == ["session.jsonl"]


@pytest.mark.slow
def test_demo_store_covers_the_features():
    listing, infos = _listing()
    facts = {sid: analysis.inspect(open_info(s)) for sid, s in infos.items()}
    v4 = {sid for sid, s in infos.items() if s.version == 4}
    # tool rounds with presenters, on v4
    assert sum(facts[s]["types"].get("tool/call", 0) for s in v4) >= 10
    # a failed model call retried after an image offload (v4 hidden assistant/attempt)
    adv = open_info(infos["demo-v4-advanced"])
    failed = [a for a in find_attempts(adv.events()).attempts if a.failed]
    assert len(failed) == 1 and "IMAGE_OFFLOAD_REQUIRED" in failed[0].failure_reason()
    assert facts["demo-v4-advanced"]["types"]["image/offload"] == 1
    assert facts["demo-v4-crashed"]["hiddenAttempts"] >= 1 and facts["demo-migrated"]["hiddenAttempts"] >= 1
    # an aborted turn (user cancel) and a crashed open tail closed in memory only
    cancel = [e for e in open_info(infos["demo-v4-cancel"]).events() if e.type == "turn/end"]
    assert cancel[-1].data["reason"] == {"kind": "aborted", "reason": {"kind": "user"}}
    crashed = open_info(infos["demo-v4-crashed"])
    st = crashed.tail_state()
    assert facts["demo-v4-crashed"]["openTail"] and st.closure and st.closure[-1].type == "turn/end"
    assert all(e.synthesized for e in st.closure)
    assert len(crashed.events(logical=True)) == len(crashed.events(logical=False)) + len(st.closure)
    # compaction with a shadowed message: the derived messages drop what the checkpoint replaced
    # (dsh's two real v4 logs, and the generated long session, which overflows its context window 3 times)
    assert facts["demo-v4-long"]["types"]["compaction/start"] == 3
    for sid in ("demo-v4-image-compaction", "demo-v4-compaction", "demo-v4-long"):
        r = open_info(infos[sid])
        summ = next(e for e in r.events() if e.type == "compaction/summary")
        shadowed = set(summ.data.get("shadowedSeqs") or [])
        assert shadowed
        ids = {(r.event_at(s).data.get("message") or r.event_at(s).data).get("id") for s in shadowed}
        assert not ids & {m.get("id") for m in analysis.messages(r)}
    # subagents with lineage, dsh's children and the Session Lens fork in v4
    tree = {s.id: [c[0].id for c in kids] for s, kids in listing.tree()}
    assert tree["demo-v4-advanced"] == ["demo-v4-advanced-child-1", "demo-v4-advanced-child-2"]
    assert sorted(tree["preview-showcase"]) == ["preview-architecture-review", "preview-follow-up-builder"]
    assert tree["demo-v4-long"] == ["demo-v4-long-fork"] and tree["demo-long-goal"] == ["demo-long-goal-fork"]
    fork = infos["demo-v4-long-fork"]
    assert fork.version == 4 and fork.format == "zstd" and fork.header["isSeeded"] is True
    child = open_info(fork)
    seeds = [e for e in child.events() if e.type == "session/end-seed"]
    assert len(seeds) == 1 and seeds[0].data.get("inherited") is True
    parent = open_info(infos["demo-v4-long"])
    cut = seeds[0].seq                      # the child re-reads with the parent's messages through the seed
    assert [e.raw for e in child.events()[:cut]] == [e.raw for e in parent.events()[:cut]]
    assert analysis.messages(child) == analysis.messages(parent, through=cut - 1)
    # a long multi-page session
    assert facts["demo-v4-long"]["turns"] >= 200
    assert open_info(infos["demo-v4-long"]).tail_page().has_more


def _first_request(sid: str, infos: dict, pred) -> dict:
    r = open_info(infos[sid])
    for b, _a in analysis.dispatches(r.events()):
        rq = analysis.request_at(r, b)["request"]
        if pred(rq):
            return rq
    raise AssertionError(f"no request of {sid} matches")


def test_demo_requests_carry_system_and_developer_messages():
    _, infos = _listing()
    # v3: the system prompt is the live system/message at the head of the request (not a header field)
    rq = _first_request("demo-v3-team-targets", infos, lambda rq: True)
    assert rq["messages"][0]["role"] == "system" and "system" not in rq
    # v4: a developer/message (tool registry update) is sent in the exact request
    rq = _first_request("demo-v4-developer", infos,
                        lambda rq: any(m.get("role") == "developer" for m in rq["messages"]))
    assert rq["messages"][0]["role"] == "system"
    # the older v2 generation keeps the system prompt in its request header (as written); today's dsh takes
    # it through its v2->v3 migration (the step opens first), which makes it the system message at the head
    r = open_reader(str(SESSIONS / "--home-dev-demo-project--" / "demo-plain-turn" / "session.v2.jsonl"))
    assert r.format_version == 2 and header_version(Path(r.source.path).read_bytes().split(b"\n")[0]) == 2
    (b, a), = analysis.dispatches(r.events())
    assert a.failed and a.failure_reason() == "abandoned (no finish)"
    written = analysis.request_at(r, b, as_written=True)["request"]
    head = analysis.request_at(r, b)["request"]["messages"][0]
    assert written["system"] and "system" not in analysis.request_at(r, b)["request"]
    assert head["role"] == "system" and head["id"].startswith("v2-to-v3-system-")
    assert head["content"] == [{"type": "text", "text": written["system"]}]


def test_todays_dsh_opens_every_demo_session_but_the_one_kept_to_show_a_refusal():
    """Every generation file in the demo passes the newest dsh's read path (its v2->v3 migration for the
    v0/v2 files, native v4 admission with no retired plugin source), except ``demo-refused-by-dsh``: one
    early-v4 log as dsh wrote it, refused for its plugin-sourced system message."""
    refused = {}
    for p in FILES:
        why = [pr.message for pr in dsh_verdict(LogReader.open(str(p)))]
        if why:
            refused["/".join(p.parts[-2:])] = why
    assert list(refused) == [f"{REFUSED}/session.v4.jsonl"], refused
    (why,) = refused[f"{REFUSED}/session.v4.jsonl"]
    assert "retired source {kind: \"plugin\"" in why and "earlier v4 builds wrote it" in why
    # older generations are still there to show (a v0 beside a v4, a v2 beside a v3), and v0 legacy sessions
    names = {"/".join(p.parts[-2:]) for p in FILES}
    assert {"demo-migrated/session.jsonl", "demo-plain-turn/session.v2.jsonl", "demo-crashed/session.jsonl"} <= names


def test_the_demo_opens_on_a_v4_session_dsh_accepts_at_its_first_tool_call():
    p = DEMO / DEMO_START
    assert parse_generation(p.name)[1] == 4 and p.parent.name == "demo-v4-advanced"
    r = open_reader(str(p))
    assert r.format_version == 4 and dsh_verdict(r) == []
    info = analysis.inspect(r)
    assert info["dshWouldRefuse"] is False and not info["problems"]
    first_call = next(e for e in r.events() if e.type == "tool/call")
    start = r.event_at(DEMO_START_SEQ)
    assert start.type == "assistant/message"
    assert [b["id"] for b in start.data["message"]["content"] if b.get("type") == "tool-call"] == \
        [first_call.data["callId"]]
