"""Replay (issue 30): the session as it stood at a seq, from the fold checkpoints.

Each feature on a real fixture and on a minimal log of its own: a compaction (the replaced rows
current before, shadowed after), a title change, ``todo/write``, a v4 ``image/offload``, a pending
tool call.  As of the last seq, the messages, the request and the surface statuses equal the normal
faces on every fixture of both corpora; at sampled positions the answer equals a fold of the prefix
from scratch.  The command line: ``asof --seq N [--diff B] --json`` and one clear line for a bad seq.
"""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from app.cli.main import main
from app.log.fold.asof import AsOfError, SideIndex, as_of, status_as_of, surface_as_of
from app.log.fold.checkpoints import build_checkpoints
from app.log.fold.folds import SurfaceFold, is_surface_type
from app.log.fold.v2heads import derive_as
from app.log.fold.surface import build_index, index_for, page_surface, row_surface
from app.log.index.reader import LogReader
from app.log.query import analysis
from app.log.query.asofdiff import diff_states
from app.log.source.sources import RawJsonlSource
from fixtures_util import FIXTURES, REPO, ev, fast_sample, fixture, session_files, write_log

NEXT_DIR = REPO.parent / "shared" / "fixtures" / "dsh-next"
ALL = session_files(FIXTURES) + session_files(NEXT_DIR)
COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
TITLES = "examples/acp-agent/tests/snapshots/session-title-after-turn/session.jsonl"
TODOS = "examples/acp-agent/tests/snapshots/todo-write/session.jsonl"
SUBAGENTS = "examples/acp-agent/tests/snapshots/subagent-mixed/session.jsonl"
OFFLOAD = NEXT_DIR / "0217po+deepseek-harness@f4a32dbd0a/scripts/snapshots/python-sdk-single-exe/advanced/session.v4.jsonl"


def ident(p: Path) -> str:
    for base in (FIXTURES, NEXT_DIR):
        if p.is_relative_to(base):
            return f"{base.name}:{p.relative_to(base)}"
    return p.name


class Log:
    """A reader with a checkpoint at (nearly) every segment, so every answer restores one."""

    def __init__(self, path: Path, block: int = 1024) -> None:
        self.r = LogReader.open(str(path)) if path.name.endswith(".zstd") else \
            LogReader(RawJsonlSource(str(path), block=block))         # (zstd: a checkpoint per frame)
        self.r.build_index()
        self.cps = build_checkpoints(self.r, every=0)
        self.side = SideIndex(self.r, self.cps)
        self.events = self.r.events()
        self.index = index_for(self.r)

    def at(self, seq: int, request: bool = True) -> dict:
        return as_of(self.r, seq, self.cps, self.side, request=request)

    def status(self, row: int, n: int) -> str:
        ev_ = next(e for e in self.events if e.seq == row)
        return str(status_as_of(self.index, ev_, n)["surface"])


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main([str(a) for a in argv])
    return rc, out.getvalue(), err.getvalue()


V4_HEADER = {"type": "session", "version": 4, "id": "s4", "createdAt": 1, "delegationDepth": 0}


def v4_log(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r, separators=(",", ":")) for r in [V4_HEADER, *rows]) + "\n")
    return path


def msg(role: str, text: str, mid: str, **extra) -> dict:
    return {"id": mid, "role": role, "content": [{"type": "text", "text": text}], **extra}


def turn_rows(seq0: int = 0) -> list[dict]:
    """turn 1, step 1: a user message, an assistant tool call, its tool/call (no result yet)."""
    s = seq0
    return [ev(s, "turn/start", {"turn": 1}),
            ev(s + 1, "step/start", {"turn": 1, "step": 1}),
            ev(s + 2, "user/message", msg("user", "hello", "u1", source={"kind": "user"}), surfaceOp="append"),
            ev(s + 3, "assistant/message", {"turn": 1, "step": 1, "message": {
                "id": "a1", "role": "assistant", "source": {"kind": "model"},
                "content": [{"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}]}},
               surfaceOp="append"),
            ev(s + 4, "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"})]


# --------------------------------------------------------------------------- compaction

def test_compaction_fixture_replaced_rows_current_before_shadowed_after():
    log = Log(fixture(COMPACTION))
    # compaction/start 19, summary 20, user/message 21 replaces {start:4, end:4}
    assert [e.type for e in log.events if e.seq in (19, 20, 21)] == \
        ["compaction/start", "compaction/summary", "user/message"]
    for n in (4, 10, 19, 20):
        assert log.status(4, n) == "current", n
        assert 4 in log.at(n)["nodes"]
    for n in (21, 25, log.events[-1].seq):
        assert log.status(4, n) == "shadowed", n
        st = log.at(n)
        assert 4 not in st["nodes"] and 21 in st["nodes"]
        # (today's dsh: the system head first, linked to the stored row it is anchored at, then the checkpoint)
        assert st["messageSeqs"][1] == 21 and st["messages"][0]["role"] == "system"
        assert st["messageSeqs"][0] in (e.seq for e in log.events if e.type in ("step/start", "request/header"))
    before, after = log.at(20), log.at(21)
    assert {"seq": 4, "status": "current"} in surface_as_of(log.index, 20)
    assert {"seq": 4, "status": "shadowed"} in surface_as_of(log.index, 21)
    d = diff_states(before, after, log.index)
    assert [x["seq"] for x in d["messagesShadowed"]] == [4]
    assert [(x["seq"], x["replaces"]) for x in d["messagesReplaced"]] == [(21, [4])]


def test_compaction_minimal_log(tmp_path):
    rows = [ev(0, "user/message", msg("user", "one", "u0"), surfaceOp="append"),
            ev(1, "user/message", msg("user", "two", "u1"), surfaceOp="append"),
            ev(2, "compaction/start", {"compactionId": "k", "turn": None}),
            ev(3, "compaction/summary", {"compactionId": "k", "summary": "short"}),
            ev(4, "user/message", msg("user", "summary of one and two", "u0"),
               sourceEventSeqs=[2, 3, 0, 1], surfaceOp={"op": "replace", "start": 0, "end": 1}),
            ev(5, "compaction/end", {"compactionId": "k", "turn": None})]
    log = Log(write_log(tmp_path / "session.jsonl", rows))
    for n in (1, 2, 3):
        assert [log.status(0, n), log.status(1, n)] == ["current", "current"]
        assert [m["content"][0]["text"] for m in log.at(n)["messages"]] == ["one", "two"]
    for n in (4, 5):
        assert [log.status(0, n), log.status(1, n), log.status(4, n)] == ["shadowed", "shadowed", "current"]
        assert [m["content"][0]["text"] for m in log.at(n)["messages"]] == ["summary of one and two"]
    assert surface_as_of(log.index, 3) == [{"seq": 0, "status": "current"}, {"seq": 1, "status": "current"}]
    assert surface_as_of(log.index, 5) == [{"seq": 0, "status": "shadowed"}, {"seq": 1, "status": "shadowed"},
                                           {"seq": 4, "status": "current"}]
    # the shadowed row's compaction bracket is not closed yet at seq 4
    st = status_as_of(log.index, log.events[0], 4)
    assert st["compaction"]["endSeq"] is None and status_as_of(log.index, log.events[0], 5)["compaction"]["endSeq"] == 5


# --------------------------------------------------------------------------- title, todos, modes

def test_title_fixture_before_and_after():
    log = Log(fixture(TITLES))
    assert log.at(5)["title"] is None
    assert log.at(6)["title"] == log.at(17)["title"] == "Reply with exactly TITLE_DONE. Do"
    assert log.at(18)["title"] == "Late durable session title"
    assert diff_states(log.at(6), log.at(18))["title"] == {"before": "Reply with exactly TITLE_DONE. Do",
                                                           "after": "Late durable session title"}


def test_title_and_todos_minimal_log(tmp_path):
    todos1 = [{"content": "a", "status": "in_progress"}]
    todos2 = [{"content": "a", "status": "completed"}, {"content": "b", "status": "pending"}]
    rows = [ev(0, "session/title", {"title": "first", "messageSeqs": [], "source": {"kind": "fallback"}}),
            ev(1, "todo/write", {"todos": todos1}),
            ev(2, "plan/mode", {"active": True}),
            ev(3, "session/title", {"title": "second", "messageSeqs": [], "source": {"kind": "user"}}),
            ev(4, "todo/write", {"todos": todos2}),
            ev(5, "plan/mode", {"active": False})]
    log = Log(write_log(tmp_path / "session.jsonl", rows))
    got = [(s["title"], s["todos"], s["modes"].get("plan")) for s in map(log.at, range(6))]
    assert got == [("first", [], None), ("first", todos1, None), ("first", todos1, True),
                   ("second", todos1, True), ("second", todos2, True), ("second", todos2, False)]
    d = diff_states(log.at(1), log.at(5))
    assert d["todos"] == {"before": todos1, "after": todos2} and d["modes"] == {"plan": {"before": None, "after": False}}


def test_todo_write_fixture_before_and_after():
    log = Log(fixture(TODOS))
    assert log.at(97)["todos"] == []
    after = log.at(98)["todos"]
    assert [t["content"] for t in after] == ["read the code", "watch the background build", "write the fix"]
    assert log.at(log.events[-1].seq)["todos"] == [e for e in log.events if e.type == "todo/write"][-1].data["todos"]


def test_modes_fixture_v4():
    log = Log(OFFLOAD)
    assert log.at(0)["modes"] == {"permission": "danger-full-access"}
    assert log.at(2)["modes"] == {"permission": "danger-full-access", "sandbox": "danger-full-access",
                                  "approval": "never"}


# --------------------------------------------------------------------------- v4 image/offload

def _images(state: dict, seq: int) -> list:
    m = state["messages"][state["messageSeqs"].index(seq)]
    return [b for b in m["content"] if b.get("type") == "image"]


def test_image_offload_fixture_before_and_after():
    log = Log(OFFLOAD)
    assert next(e for e in log.events if e.seq == 18).type == "image/offload"
    before, after = log.at(17), log.at(18)
    assert [b.get("offloaded") for b in _images(before, 13)] == [None]
    assert [b.get("offloaded") for b in _images(after, 13)] == [True]
    assert [b.get("offloaded") for b in _images(log.at(log.events[-1].seq), 13)] == [True]
    d = diff_states(before, after, log.index)                     # the projection changed seq 13 in place
    assert [x["seq"] for x in d["messagesChanged"]] == [13] and not d["messagesAdded"] + d["messagesShadowed"]


def test_image_offload_minimal_v4_log(tmp_path):
    img = {"type": "image", "attachment": {"attachmentId": "sha256:00", "mediaType": "image/png"}}
    rows = [{"type": "user/message", "data": {"id": "u", "role": "user", "content": [img, dict(img)],
                                              "source": {"kind": "user"}}, "surfaceOp": "append"},
            {"type": "user/message", "data": msg("user", "look", "u2", source={"kind": "user"}), "surfaceOp": "append"},
            {"type": "image/offload", "data": {"targets": [{"seq": 0, "imageIndexes": [1]}]}}]
    log = Log(v4_log(tmp_path / "session.v4.jsonl", rows))
    assert log.r.version == 4
    assert [b.get("offloaded") for b in _images(log.at(1), 0)] == [None, None]
    assert [b.get("offloaded") for b in _images(log.at(2), 0)] == [None, True]


# --------------------------------------------------------------------------- pending tool calls, children

def test_pending_tool_call_fixture_listed_before_result_gone_after():
    log = Log(fixture(SUBAGENTS))
    call = next(e for e in log.events if e.seq == 117)
    assert call.type == "tool/call" and next(e for e in log.events if e.seq == 118).type == "tool/result"
    cid = call.data["callId"]
    named = next(e.seq for e in log.events if e.type == "assistant/message" and cid in json.dumps(e.data))
    assert named < 117
    assert cid not in log.at(named - 1)["pendingToolCalls"]
    assert log.at(named)["pendingDetail"] == [{"callId": cid, "callSeq": None}]        # requested, not started
    assert log.at(117)["pendingDetail"] == [{"callId": cid, "callSeq": 117}]
    assert cid not in log.at(118)["pendingToolCalls"]
    kids = [c["tool"] for c in log.at(log.events[-1].seq)["children"]]
    assert kids == ["subagent", "subagent_fork"]
    assert [c["tool"] for c in log.at(117)["children"]] == ["subagent"]


def test_pending_tool_call_minimal_log(tmp_path):
    rows = turn_rows() + [
        ev(5, "tool/result", {"turn": 1, "step": 1, "message": {
            "id": "t1", "role": "user", "source": {"kind": "tool", "callId": "c1"},
            "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "ok"}]}]}},
           sourceEventSeqs=[4], surfaceOp="append"),
        ev(6, "step/end", {"turn": 1, "step": 1}), ev(7, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})]
    log = Log(write_log(tmp_path / "session.jsonl", rows))
    assert log.at(2)["pendingToolCalls"] == []
    assert log.at(3)["pendingToolCalls"] == ["c1"]          # named by the assistant message
    assert log.at(4)["pendingDetail"] == [{"callId": "c1", "callSeq": 4}]
    assert log.at(5)["pendingToolCalls"] == []
    assert (log.at(4)["turn"], log.at(4)["step"], log.at(4)["openTurn"]) == (1, 1, True)
    assert (log.at(7)["step"], log.at(7)["openTurn"]) == (None, False)


# --------------------------------------------------------------------------- every fixture

def _dispatch_seqs(events) -> list[int]:
    """A seq naming each attempt (its last stored row: a chunk or the v2+ settlement)."""
    return [a.last_seq for _b, a in analysis.dispatches(events)]


def _scratch(prefix, reader):
    """The messages of a fold of ``prefix`` from scratch, derived as the faces derive them (today's dsh)."""
    sf = derive_as(SurfaceFold(version=reader.version), reader)
    for e in prefix:
        sf.apply(e)
    return sf.messages()


@pytest.mark.parametrize("path", fast_sample(ALL, spread=6), ids=ident)
def test_as_of_last_seq_equals_the_normal_faces(path):
    log = Log(path, block=4096)
    if not log.events:
        with pytest.raises(AsOfError):
            log.at(0)
        return
    last = log.events[-1].seq
    st = log.at(last)
    assert st["messages"] == analysis.messages(log.r, through=last)                       # messages face
    if st["dispatchSeq"] is not None:                                                     # request face
        assert (st["request"], st["requestNote"]) == _request_face(log, st["requestBoundary"])
        assert st["request"] == _request_face(log, st["dispatchSeq"])[0]
    else:
        assert st["request"] is None and st["requestNote"] is None and (not st["openTurn"] or st["step"] is None or _no_attempt(log, st))
    face = page_surface(log.index, log.events)                                            # surface face
    listed = {x["seq"]: x["status"] for x in surface_as_of(log.index, last)}
    for e in log.events:
        if is_surface_type(e) and face[e.seq]["surface"] != "log-only":
            assert listed.get(e.seq) == face[e.seq]["surface"], e.seq
        assert status_as_of(log.index, e, last) == row_surface(log.index, e)
    assert all(face[s]["surface"] == v for s, v in listed.items())
    # at sampled positions: a fold of the prefix from scratch, statuses of a prefix index, the request face
    seqs = [e.seq for e in log.events]
    for n in seqs[::max(1, len(seqs) // 12)] + _dispatch_seqs(log.events)[:6]:
        prefix = [e for e in log.events if e.seq <= n]
        got = log.at(n)
        assert got["messages"] == _scratch(prefix, log.r), n
        pre = build_index(prefix, log.r.version)
        assert {e.seq: status_as_of(log.index, e, n)["surface"] for e in prefix} == \
            {e.seq: row_surface(pre, e)["surface"] for e in prefix}, n
        if got["dispatchSeq"] is not None:
            assert (got["request"], got["requestNote"]) == _request_face(log, got["requestBoundary"]), n
            assert got["request"] == _request_face(log, got["dispatchSeq"])[0], n


def _request_face(log: Log, at: int) -> tuple:
    """(request, None) as ``request --at`` builds it, or (None, its one line) where dsh built none
    (no request/header before the boundary: :class:`analysis.RequestError`, issue 27 item 3)."""
    try:
        return analysis.request_at(log.r, at)["request"], None
    except analysis.RequestError as e:
        return None, str(e)


def _no_attempt(log: Log, st: dict) -> bool:
    """The open step has no model attempt at or before the position."""
    start = st["turnStartSeq"] or 0
    return not any(e.type == "assistant/chunk" or (e.type in ("assistant/message", "assistant/attempt")
                                                    and isinstance(e.data, dict) and "stream" in e.data)
                   for e in log.events if start <= e.seq <= st["seq"])


def test_request_as_of_a_position_inside_an_attempt_is_that_attempts_request():
    log = Log(fixture(COMPACTION))
    # the failed attempt (CONTEXT_WINDOW_EXCEEDED) and the retry after the compaction
    for b, a in analysis.dispatches(log.events):
        st = log.at(a.last_seq)
        assert st["requestBoundary"] == b
        assert st["request"] == analysis.request_at(log.r, b)["request"]
    assert log.at(log.events[-1].seq)["request"] is None          # the turn is over


# --------------------------------------------------------------------------- command line

def test_cli_asof_json_fields_and_diff(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    path = fixture(COMPACTION)
    rc, out, err = run("asof", path, "--seq", "20", "--json")
    assert rc == 0, err
    obj = json.loads(out)
    for k in ("seq", "turn", "step", "title", "todos", "messages", "surface", "pendingToolCalls", "request"):
        assert k in obj
    assert obj["seq"] == 20 and obj["turn"] == 1
    assert {"seq": 4, "status": "current"} in obj["surface"]
    assert obj["messages"] == analysis.messages(Log(path).r, through=20)
    rc, out, _ = run("asof", path, "--seq", "20", "--diff", "21", "--json")
    d = json.loads(out)["diff"]
    assert rc == 0 and [x["seq"] for x in d["messagesShadowed"]] == [4]
    rc, out, _ = run("asof", path, "--seq", "21")
    assert rc == 0 and out.startswith("As of seq 21 · turn 1")


@pytest.mark.parametrize("bad,why", [("-1", "negative"), ("31", "past the end"), ("x7", "whole number"),
                                     ("1.5", "whole number")])
def test_cli_bad_seq_one_line_exit_2(tmp_path, monkeypatch, bad, why):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    for flag in ("--seq", "--diff"):
        argv = ["asof", fixture(COMPACTION), "--seq", bad] if flag == "--seq" else \
            ["asof", fixture(COMPACTION), "--seq", "3", "--diff", bad]
        rc, out, err = run(*argv, "--json")
        assert rc == 2 and out == ""
        assert len(err.strip().splitlines()) == 1 and why in err and err.startswith("session-lens asof: ")


# --------------------------------------------------------------------------- generated logs (v0 and v4)

@pytest.fixture(scope="module", params=[0, 4, "zstd"], ids=["v0", "v4", "v0-zstd"])
def synth_log(request, tmp_path_factory):
    from app.log.source.zstdframes import encode_frame
    from app.tools.synth import SessionSynth, batches, write_jsonl
    d = tmp_path_factory.mktemp("asof")
    if request.param == "zstd":
        p = d / "session.jsonl.zstd"
        p.write_bytes(b"".join(encode_frame(b"".join(lines))
                               for lines in batches(SessionSynth(seed=33), target_bytes=500_000)))
    else:
        p = d / ("session.jsonl" if request.param == 0 else "session.v4.jsonl")
        write_jsonl(str(p), SessionSynth(seed=30, version=request.param), target_bytes=600_000)
    log = Log(p, block=1 << 14)
    assert log.r.version == (request.param if request.param != "zstd" else 0) and len(log.cps.points) > 5
    return log


def test_generated_log_any_position_equals_a_fold_from_scratch(synth_log):
    """Positions spread over a generated log (compactions, retries, packed rows, tool calls): the
    messages equal a fold of the prefix, the request the request face at the same attempt."""
    log = synth_log
    seqs = [e.seq for e in log.events]
    requests = 0
    for n in seqs[::max(1, len(seqs) // 40)]:
        got = log.at(n)
        prefix = [e for e in log.events if e.seq <= n]
        assert got["messages"] == _scratch(prefix, log.r), n
        if got["dispatchSeq"] is not None:
            want = analysis.request_at(log.r, got["dispatchSeq"])
            assert (got["requestBoundary"], got["request"]) == (want["boundary"], want["request"]), n
            requests += 1
    assert requests >= 5


def test_replay_child_answers_as_the_core_does(tmp_path, monkeypatch):
    """The window's replay process (worker kind ``replay``): the same state as :func:`as_of`, the
    diff, the side index's background pass done on its own, one bad request never ending it."""
    import time

    from app.store.replay_child import ReplayClient
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    path = fixture(COMPACTION)
    log = Log(path)
    client = ReplayClient(str(path), None)
    try:
        assert client.info["last"] == log.events[-1].seq
        assert client.info["turns"] == [e.seq for e in log.events if e.type == "turn/start"]
        end = time.time() + 60
        while not client.ask("status") and time.time() < end:
            time.sleep(0.05)
        assert client.ask("status") is True
        for n in (4, 20, 21, 30):
            got = client.answer(n, None)
            want = as_of(log.r, n, request=False)
            assert {k: got[k] for k in want} == want, n
        got = client.answer(28, 20)
        assert [x["seq"] for x in got["diff"]["messagesShadowed"]] == [4]
        with pytest.raises(ValueError, match="past the end"):
            client.answer(10_000, None)
        assert client.answer(5, None)["seq"] == 5
    finally:
        client.close()


@pytest.mark.parametrize("kind", ["zstd", "sqlite"])
def test_cli_asof_on_zstd_and_sqlite_stores(tmp_path, monkeypatch, kind):
    """The other physical sources: a zstd log (checkpoints over frames), a SQLite store (no
    checkpoints: the fold from seq 0); the answer equals the messages face at every sampled seq."""
    from app.store.faces import open_reader
    from app.store.sqlite_writer import jsonl_to_sqlite
    from app.log.source.zstdframes import encode_frame
    from app.tools.synth import SessionSynth, batches
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    if kind == "zstd":
        path = tmp_path / "session.jsonl.zstd"
        path.write_bytes(b"".join(encode_frame(b"".join(lines))
                                  for lines in batches(SessionSynth(seed=31), target_bytes=300_000)))
        argv, r = [path], open_reader(str(path))
    else:
        src = fixture(COMPACTION)
        path = tmp_path / "store.db"
        jsonl_to_sqlite(src, path, batch_rows=7)
        sid = json.loads(src.read_bytes().split(b"\n")[0])["id"]
        argv, r = [path, "--session", sid], open_reader(str(path), sid)
    assert r.source.kind == kind
    events = r.events()
    for e in events[::max(1, len(events) // 8)] + events[-1:]:
        rc, out, err = run("asof", *argv, "--seq", e.seq, "--json")
        assert rc == 0, err
        got = json.loads(out)
        assert got["seq"] == e.seq and got["messages"] == analysis.messages(r, through=e.seq, logical=False)


def test_a_chunk_of_another_step_is_never_skipped_as_part_of_the_open_attempt(tmp_path, monkeypatch):
    """Rows of an attempt already open are not decoded, but only rows of that attempt's own step:
    a chunk of another step while it is open begins that step's attempt (as dsh's grouping says).
    With no request/header before the boundary dsh built no request (issue 27 item 3): none, and why."""
    def chunk(seq, step, ctype):
        return ev(seq, "assistant/chunk", {"turn": 1, "step": step, "chunk": {"type": ctype, "index": 0,
                                                                             "blockType": "text"}})
    head = [ev(0, "request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"})]
    for k, pre in enumerate(([], head)):
        rows = pre + [ev(k, "turn/start", {"turn": 1}),
                      ev(k + 1, "user/message", msg("user", "go", "u1"), surfaceOp="append"),
                      chunk(k + 2, 1, "block-start"), chunk(k + 3, 1, "block-start"),
                      chunk(k + 4, 2, "block-start"), chunk(k + 5, 2, "block-start")]
        log = Log(write_log(tmp_path / f"session{k}.jsonl", rows))
        for n, want in ((k + 2, k + 2), (k + 3, k + 2), (k + 4, k + 4), (k + 5, k + 4)):
            st = log.at(n)
            assert st["requestBoundary"] == want == analysis.dispatch_boundary(log.r, n)[0], n
            assert (st["request"], st["requestNote"]) == _request_face(log, want), n
            assert st["request"] == _request_face(log, n)[0], n
            assert (st["request"] is None) == (k == 0) and (st["requestNote"] is None) == (k == 1), n
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    note = _request_face(Log(tmp_path / "session0.jsonl"), 2)[1]
    rc, out, _ = run("asof", tmp_path / "session0.jsonl", "--seq", "3", "--json")
    assert rc == 0 and (json.loads(out)["request"], json.loads(out)["requestNote"]) == (None, note)
    rc, out, _ = run("asof", tmp_path / "session0.jsonl", "--seq", "3")
    assert rc == 0 and f"request: none ({note})" in out


def test_time_is_the_rows_own_even_when_the_replay_skips_it():
    """A chunk row inside an open attempt is not decoded by the replay; its time is still its own."""
    log = Log(fixture(COMPACTION))
    for e in log.events:
        assert log.at(e.seq, request=False)["time"] == e.time, e.seq


V3_WITH_REQUESTS = [p for p in ALL if p.name.endswith(".v3.jsonl")]


def test_a_v3_log_as_of_in_todays_shape_or_as_written():
    """A v3 log as of a dispatch is derived as the normal faces derive it (issue 27 item 1): today's dsh's v4
    shape (``toolHistory`` in the request) by default, the writer-era shape with ``as_written``."""
    checked = 0
    for path in V3_WITH_REQUESTS:
        log = Log(path, block=4096)
        for _b, a in analysis.dispatches(log.events)[:3]:
            for aw in (False, True):
                st = as_of(log.r, a.last_seq, log.cps, log.side, as_written=aw)
                assert st["messages"] == analysis.messages(log.r, through=a.last_seq, as_written=aw)
                try:
                    face = analysis.request_at(log.r, st["requestBoundary"], as_written=aw)["request"]
                except analysis.RequestError:
                    continue
                assert st["request"] == face and ("toolHistory" in st["request"]) == (not aw)
                checked += 1
    assert checked >= 4
