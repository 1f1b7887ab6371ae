"""Issue 27 item 1 (v2): a v2 log that dsh's v2->v3 migration accepts is derived as today's dsh derives it
after migrating (v2 -> v3 -> v4): the request prompt becomes a ``system-prompt`` system message (the
migration's head, with its deterministic id), requests lose ``system`` and carry ``toolHistory``, tool
results are ``role: "tool"`` messages.  The migration renumbers the log; the seq map leads back to the
stored rows.  Where the migration refuses (6 of the 7 real v2 logs), the messages stay as written.

The expected migration output below is written out by hand from the rules of dsh's
``session-format-v2-to-v3/src/migration.ts`` and ``references.ts`` (spec-versions §4.3), not from our code."""
from __future__ import annotations

import hashlib
import io
import json
import contextlib
from pathlib import Path
from typing import Any

from app.cli.main import main
from app.log.fold.asof import as_of
from app.log.fold.checkpoints import build_checkpoints, request_at as request_at_cp
from app.log.fold.v2heads import migrate
from app.log.index.reader import LogReader
from app.log.query import analysis

from fixtures_util import REPO

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
V2S = sorted(NEXT.rglob("*.v2.jsonl"))
SID = "v2-accepted"
TOOLS = [{"name": "read", "description": "read a file", "parameters": {"type": "object"}}]


def _hdr(system: Any, reason: str) -> dict:
    h: dict = {"config": {"provider": "p", "model": "m"}, "tools": TOOLS, "adapterDefaults": {}}
    if system is not None:
        h["system"] = system
    return {"header": h, "reason": reason}


def _asst(mid: str, content: list, turn: int, step: int) -> dict:
    return {"type": "assistant/message", "surfaceOp": "append",
            "data": {"turn": turn, "step": step, "stream": [],
                     "message": {"id": mid, "role": "assistant", "content": content,
                                 "source": {"kind": "model", "provider": "p", "model": "m"}}}}


def _user(mid: str, text: str, op: Any = "append", cites: Any = None) -> dict:
    row = {"type": "user/message", "surfaceOp": op,
           "data": {"id": mid, "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}}
    if cites is not None:
        row["sourceEventSeqs"] = cites
    return row


# the stored v2 log (seq = index): two turns, a prompt set in step 1, changed in step 2 (same turn),
# kept in turn 2, a tool round trip, a replacement over turn 1's messages and a title citing a message
ROWS: list[dict] = [
    {"type": "turn/start", "data": {"turn": 1}},                                               # 0
    {"type": "step/start", "data": {"turn": 1, "step": 1}},                                    # 1
    _user("u1", "read a.txt"),                                                                 # 2
    {"type": "request/header", "data": _hdr("You are S1.", "initial")},                        # 3
    _asst("a1", [{"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}], 1, 1),  # 4
    {"type": "tool/call", "data": {"turn": 1, "step": 1, "callId": "c1", "name": "read", "arguments": "{}"}},  # 5
    {"type": "tool/result", "surfaceOp": "append",                                             # 6
     "data": {"turn": 1, "step": 1, "message": {
         "id": "r1", "role": "user", "source": {"kind": "tool", "callId": "c1"},
         "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "A"}]}]}}},
    {"type": "step/end", "data": {"turn": 1, "step": 1}},                                      # 7
    {"type": "step/start", "data": {"turn": 1, "step": 2}},                                    # 8
    {"type": "request/header", "data": _hdr("You are S2.", "change")},                         # 9
    _asst("a2", [{"type": "text", "text": "a.txt says A"}], 1, 2),                             # 10
    {"type": "step/end", "data": {"turn": 1, "step": 2}},                                      # 11
    {"type": "turn/end", "data": {"turn": 1, "reason": {"kind": "completed"}}},                # 12
    {"type": "turn/start", "data": {"turn": 2}},                                               # 13
    {"type": "step/start", "data": {"turn": 2, "step": 1}},                                    # 14
    _user("u2", "and now?"),                                                                   # 15
    {"type": "request/header", "data": _hdr("You are S2.", "series")},                         # 16
    _user("sum", "turn 1: a.txt says A", {"op": "replace", "start": 2, "end": 10}, [2, 4, 6, 10]),  # 17
    _asst("a3", [{"type": "text", "text": "done"}], 2, 1),                                     # 18
    {"type": "session/title", "data": {"title": "reading a.txt", "messageSeqs": [2],
                                       "source": {"kind": "fallback"}}},                     # 19
    {"type": "step/end", "data": {"turn": 2, "step": 1}},                                      # 20
    {"type": "turn/end", "data": {"turn": 2, "reason": {"kind": "completed"}}},                # 21
]


def stored() -> list[dict]:
    return [dict(r, seq=i, time=1000 + i) for i, r in enumerate(ROWS)]


def write_v2(tmp: Path) -> Path:
    hdr = {"type": "session", "version": 2, "id": SID, "createdAt": 1000, "isSeeded": False, "delegationDepth": 0}
    d = tmp / "v2"
    d.mkdir(exist_ok=True)
    p = d / "session.v2.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in [hdr] + stored()))
    return p


def sys_id(anchor_seq: int, anchor_type: str) -> str:
    """The rule: sha256 of the JSON text of ["session-format-v2-to-v3", <header id>, <v2 seq>, <type>]."""
    text = f'["session-format-v2-to-v3","{SID}",{anchor_seq},"{anchor_type}"]'
    return "v2-to-v3-system-" + hashlib.sha256(text.encode()).hexdigest()


def system_row(seq: int, time: int, turn: int, step: int, anchor: tuple[int, str], text: str, head: Any) -> dict:
    row: dict = {"type": "system/message", "seq": seq, "time": time, "data": {"turn": turn, "step": step, "message": {
        "id": sys_id(*anchor), "role": "system",
        "source": {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"},
        "content": [{"type": "text", "text": text}] if text else []}}}
    if head is None:
        row["surfaceOp"] = "append"
    else:
        row["surfaceOp"] = {"op": "replace", "startSeq": head, "endSeq": head}
        row["sourceEventSeqs"] = [head]
    return row


def expected_v3() -> tuple[list[dict], list[Any]]:
    """(the migrated v3 events, the stored seq of each (None: inserted)), worked out by hand:
    an empty head after the first step/start (anchor 1); a replacement before header 3 (S1, replacing the
    head at 2) and before header 9 (S2, replacing the one at 4); header 16 keeps the prompt: nothing.
    So stored 0-1 -> 0-1, 2 -> 3, 3-8 -> 5-10, 9-21 -> 12-24."""
    src = stored()
    new = {0: 0, 1: 1, 2: 3, **{s: s + 2 for s in range(3, 9)}, **{s: s + 3 for s in range(9, 22)}}

    def moved(s: int, **data_changes: Any) -> dict:
        row = dict(src[s], seq=new[s])
        if data_changes:
            row["data"] = dict(row["data"], **data_changes)
        return row

    def header(s: int) -> dict:
        h = {"config": {"provider": "p", "model": "m"}, "tools": TOOLS}         # system and {} adapterDefaults dropped
        return moved(s, header=h)
    rows = [moved(0), moved(1),
            system_row(2, 1001, 1, 1, (1, "step/start"), "", None),
            moved(2),
            system_row(4, 1003, 1, 1, (3, "request/header"), "You are S1.", 2),
            header(3), moved(4), moved(5), moved(6), moved(7), moved(8),
            system_row(11, 1009, 1, 2, (9, "request/header"), "You are S2.", 4),
            header(9), moved(10), moved(11), moved(12), moved(13), moved(14), moved(15), header(16),
            dict(moved(17), surfaceOp={"op": "replace", "startSeq": 3, "endSeq": 13}, sourceEventSeqs=[3, 6, 8, 13]),
            moved(18), moved(19, messageSeqs=[3]), moved(20), moved(21)]
    origin = [0, 1, None, 2, None, 3, 4, 5, 6, 7, 8, None, *range(9, 22)]
    return rows, origin


def write_v3(tmp: Path) -> Path:
    hdr = {"type": "session", "version": 3, "id": SID, "createdAt": 1000, "isSeeded": False, "delegationDepth": 0}
    d = tmp / "v3"
    d.mkdir(exist_ok=True)
    p = d / "session.v3.jsonl"
    p.write_text("".join(json.dumps(x) + "\n" for x in [hdr] + expected_v3()[0]))
    return p


def test_the_migration_stream_renumbers_as_dsh_does_with_a_seq_map_back(tmp_path):
    r = LogReader.open(str(write_v2(tmp_path)))
    got = list(migrate(r.iter_events(logical=False), SID))
    rows, origin = expected_v3()
    assert [g[0] for g in got] == rows
    assert [g[1] for g in got] == origin
    # an inserted message leads to the stored row it is anchored at (the step/start, the changed header)
    assert [g[2] for g in got if g[1] is None] == [1, 3, 9]


def test_an_accepted_v2_log_derives_what_dsh_derives_after_migrating(tmp_path):
    p2, p3 = write_v2(tmp_path), write_v3(tmp_path)
    info = analysis.inspect(LogReader.open(str(p2)))
    assert info["dshWouldRefuse"] is False and info["problems"] == [], info["problems"]
    msgs = analysis.messages(LogReader.open(str(p2)))
    system = {"id": sys_id(9, "request/header"), "role": "system", "source": {"kind": "system-prompt"},
              "content": [{"type": "text", "text": "You are S2."}]}
    assert msgs[0] == system and list(msgs[0]) == ["id", "role", "source", "content"]
    assert [m["id"] for m in msgs] == [system["id"], "sum", "u2", "a3"]
    # the same as the migrated v3 log's (read as a v3 log: its own system messages, lifted on the v4 edge)
    assert msgs == analysis.messages(LogReader.open(str(p3)))
    # every request: the stored boundary and the migrated one give the same request
    new = {s: o for o, s in enumerate(expected_v3()[1]) if s is not None}
    r2, r3 = LogReader.open(str(p2)), LogReader.open(str(p3))
    cps = build_checkpoints(r2, every=1)
    for at in (4, 10, 18):
        q2 = analysis.request_at(r2, at)["request"]
        assert q2 == analysis.request_at(r3, new[at])["request"]
        assert q2 == request_at_cp(r2, at, cps)["request"]               # from checkpoints too
        assert "system" not in q2 and q2["toolHistory"] == {"tools": TOOLS, "updates": []}
    first = analysis.request_at(r2, 4)["request"]
    assert first["messages"] == [
        {"id": sys_id(3, "request/header"), "role": "system", "source": {"kind": "system-prompt"},
         "content": [{"type": "text", "text": "You are S1."}]},
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "read a.txt"}], "source": {"kind": "user"}}]
    second = analysis.request_at(r2, 10)["request"]["messages"]
    assert second[0]["id"] == sys_id(9, "request/header") and second[-1] == {
        "role": "tool", "source": {"kind": "tool", "callId": "c1"}, "toolCallId": "c1",
        "content": [{"type": "text", "text": "A"}], "id": "r1"}


def test_as_written_and_the_model_view_link(tmp_path):
    p2 = write_v2(tmp_path)
    old = analysis.messages(LogReader.open(str(p2)), as_written=True)
    assert [m["id"] for m in old] == ["sum", "u2", "a3"]
    q = analysis.request_at(LogReader.open(str(p2)), 4, as_written=True)["request"]
    assert q["system"] == "You are S1." and "toolHistory" not in q
    # the model view (replay): the system message leads to the stored header that set its prompt
    r = LogReader.open(str(p2))
    st = as_of(r, 12, build_checkpoints(r, every=1))
    assert st["messageSeqs"][0] == 9 and st["messages"][0]["source"] == {"kind": "system-prompt"}
    assert st["messageSeqs"][1:] == [2, 4, 6, 10]
    st = as_of(r, 18, build_checkpoints(r, every=1))
    assert st["messageSeqs"] == [9, 17, 15, 18]
    assert st["request"] == analysis.request_at(LogReader.open(str(p2)), 18)["request"]


def test_cli_messages_and_request(tmp_path):
    p2 = write_v2(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["messages", str(p2), "--json"]) == 0
    got = json.loads(out.getvalue())
    assert got["dshWouldRefuse"] is False and got["messages"][0]["role"] == "system"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["request", str(p2), "--at", "18", "--json"]) == 0
    req = json.loads(out.getvalue())["request"]
    assert req["messages"][0]["id"] == sys_id(9, "request/header") and "system" not in req


def test_real_v2_logs_the_migration_refuses_stay_as_written():
    assert len(V2S) == 7
    refused = 0
    for p in V2S:
        r = LogReader.open(str(p))
        info = analysis.inspect(r)
        msgs = analysis.messages(LogReader.open(str(p)))
        if info["dshWouldRefuse"]:
            refused += 1
            assert msgs == analysis.messages(LogReader.open(str(p)), as_written=True), p
            assert all(m.get("role") != "system" for m in msgs)
        else:                         # blocked-log: no step, so no head, and no message at all
            assert msgs == [] and list(migrate(r.iter_events(logical=False), r.header.id))[0][1] == 0
    assert refused == 6


def test_a_type_outside_the_migrations_inventory_refuses_even_ignorable(tmp_path):
    """dsh's v2->v3 edge admits only the released-v2 event inventory: any other type (an ignorable plugin
    event, or a type of the newest vocabulary such as ``agent/harness``) refuses the log."""
    for extra in ({"type": "acme/note", "ignorable": True, "data": {"n": 1}},
                  {"type": "agent/harness", "data": {"harness": "dsh"}}):
        p = tmp_path / extra["type"].replace("/", "_") / "session.v2.jsonl"
        p.parent.mkdir()
        rows = [dict(r, seq=i, time=1000 + i) for i, r in enumerate(ROWS[:5] + [extra])]
        hdr = {"type": "session", "version": 2, "id": SID, "createdAt": 1000, "isSeeded": False, "delegationDepth": 0}
        p.write_text("".join(json.dumps(x) + "\n" for x in [hdr] + rows))
        info = analysis.inspect(LogReader.open(str(p)))
        assert info["dshWouldRefuse"] is True
        assert any(f"{extra['type']} at seq 5 is not an event type the migration can transform" in x
                   for x in info["problems"]), info["problems"]
        msgs = analysis.messages(LogReader.open(str(p)))       # refused: as written (no system head)
        assert [m["id"] for m in msgs][:2] == ["u1", "a1"]
        assert msgs == analysis.messages(LogReader.open(str(p)), as_written=True)


def test_the_migrations_delivery_marker_rules(tmp_path):
    """A delivery marker claiming format v3 refuses the migration; so does a v2 marker naming another session
    in a log that did not inherit it; a marker of this session's own is accepted (and the log normalized)."""
    hdr = {"type": "session", "version": 2, "id": SID, "createdAt": 1000, "isSeeded": False, "delegationDepth": 0}
    cases = {"v3-claim": ({"sessionId": SID, "throughSeq": 3, "sessionFormatVersion": 3}, "claims the target format v3"),
             "foreign": ({"sessionId": "other", "throughSeq": 3, "sessionFormatVersion": 2}, "names another session"),
             "own": ({"sessionId": SID, "throughSeq": 3, "sessionFormatVersion": 2}, None)}
    for name, (data, want) in cases.items():
        rows = ROWS[:8] + [{"type": "session-log-deepseek/delivery-accepted", "data": data}]
        p = tmp_path / name / "session.v2.jsonl"
        p.parent.mkdir()
        p.write_text("".join(json.dumps(x) + "\n" for x in [hdr] + [dict(r, seq=i, time=1000 + i)
                                                                    for i, r in enumerate(rows)]))
        info = analysis.inspect(LogReader.open(str(p)))
        msgs = analysis.messages(LogReader.open(str(p)))
        if want is None:
            assert info["dshWouldRefuse"] is False and msgs[0]["role"] == "system", info["problems"]
        else:
            assert info["dshWouldRefuse"] is True and any(want in x for x in info["problems"]), info["problems"]
            assert msgs == analysis.messages(LogReader.open(str(p)), as_written=True)
