"""The timeline (issue 31): every span's figures against values computed here from the stored rows themselves.

The rows are read with ``json`` and expanded by the spec's rules (packed member k: ``time0 + Σdt[0..k-1]``;
a v2+ stream: each record's ``time`` / ``time0 + Σdt``), not with the app's codec, so the checks are
independent of the code under test.  Fixture times are often 0 or from mixed clocks: a duration is
expected only when both times are > 0 and the difference is in [0, 6 h]; else ``None``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.log.query.timeline import timeline

from app.log.query.timeline_summary import KINDS, NO_TIMES, summarize
from app.store.faces import open_reader
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

NEXT = FIXTURES.parent / "dsh-next"
SIX_H = 6 * 3600 * 1000

WITH_TIMES = [FIXTURES / p for p in (
    "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl",          # llm/retry
    "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl",      # compaction
    "examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl",           # overlapping tools
    "examples/acp-agent/tests/snapshots/cancel-tool-calls/session.jsonl",             # not started / aborted
    "examples/acp-agent/tests/snapshots/subagent-mixed/session.jsonl",                # subagents
    "examples/acp-agent/tests/snapshots/escalation-approved/session.jsonl",           # approval
    "apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl",                 # big, parallel tools
    "examples/headless-agent/tests/semantic-checkpoint-snapshots/tool-outcome-unknown/session.expected.jsonl",
)] + sorted(NEXT.rglob("preview-*/session.v*.jsonl"))


def want(a: object, b: object) -> object:
    """The duration from logged time ``a`` to ``b`` as this test expects it (None: not measurable)."""
    if type(a) is int and type(b) is int and a > 0 and b > 0 and 0 <= b - a <= SIX_H:
        return b - a
    return None


def stream_times(stream: list) -> list[int]:
    out: list[int] = []
    for rec in stream:
        if rec.get("type") == "chunk":
            out.append(rec.get("time", 0))
        elif rec.get("type") in ("text-chunks", "reasoning-chunks", "tool-call-chunks"):
            t = rec.get("time0", 0)
            dt = rec.get("dt") or []
            n = len(rec.get("args") if rec.get("type") == "tool-call-chunks" else rec.get("texts"))
            for k in range(n):
                if k:
                    t += dt[k - 1]
                out.append(t)
    return out


def rows_by_seq(path: Path) -> dict[int, dict]:
    """seq -> {type, time, data} of every stored event (packed rows expanded by the spec's formula)."""
    out: dict[int, dict] = {}
    for line in path.read_bytes().split(b"\n")[1:]:
        if not line.strip():
            continue
        r = json.loads(line)
        if r["type"].endswith("-chunks"):
            d = r["data"]
            payload = d["args"] if r["type"] == "tool-call-chunks" else d["texts"]
            t = r["time0"]
            for k in range(len(payload)):
                if k:
                    t += d["dt"][k - 1]
                out[r["seq0"] + k] = {"type": "assistant/chunk", "time": t,
                                      "data": {"turn": d["turn"], "step": d["step"]}}
        else:
            out[r["seq"]] = r
    return out


def dispatch_of(rows: dict[int, dict], first: int) -> int:
    """The attempt's dispatch: the last request/header, llm/retry-started or step/start of its turn before it."""
    for s in range(first - 1, -1, -1):
        t = rows[s]["type"]
        if t in ("request/header", "llm/retry-started", "step/start"):
            return s
        if t == "turn/start":
            break
    raise AssertionError(f"no dispatch row before {first}")


def check_log(path: Path) -> dict[str, int]:
    r = open_reader(str(path))
    spans = list(timeline(r))
    rows = rows_by_seq(path)
    seen = {k: 0 for k in KINDS}
    for s in spans:
        seen[s["kind"]] += 1
        if s["kind"] == "tool":
            call = rows[s["seq"]]
            assert call["type"] == "tool/call"
            if s["endSeq"] is None or s["endSeq"] not in rows:             # no result, or a repair closer
                assert s["durationMs"] is None
                continue
            res = rows[s["endSeq"]]
            m = res["data"]["message"]
            assert (m.get("source") or {}).get("callId", m.get("toolCallId")) == call["data"]["callId"]
            assert s["durationMs"] == want(call["time"], res["time"]), s
        elif s["kind"] == "attempt":
            first = s["firstChunkSeq"]
            if rows[first]["type"] == "assistant/chunk":
                t_first = rows[first]["time"]
            else:                                                              # a v2+ settlement
                t_first = stream_times(rows[first]["data"]["stream"])[0]
            d = dispatch_of(rows, first)
            assert s["dispatchSeq"] == d and s["dispatchType"] == rows[d]["type"]
            assert s["ttftMs"] == want(rows[d]["time"], t_first), s
        elif s["kind"] == "retry-wait":
            row = rows[s["seq"]]
            assert row["type"] == "llm/retry"
            assert s["delayMs"] == row["data"]["delayMs"]
            assert s["failure"] == row["data"]["failure"]["code"]
            if s["endSeq"] is not None:
                started = rows[s["endSeq"]]
                assert started["type"] == "llm/retry-started"
                assert started["data"]["retryId"] == row["data"]["retryId"]
                assert s["durationMs"] == want(row["time"], started["time"])
        elif s["kind"] in ("approval", "compaction", "turn", "step"):
            if s["endSeq"] is not None and s["seq"] is not None and s["endSeq"] in rows:
                assert s["durationMs"] == want(rows[s["seq"]]["time"], rows[s["endSeq"]]["time"]), s
    # every attempt has its span (failed, committed, finished uncited, cut by a boundary)
    from app.log.fold.attempts import find_attempts
    assert seen["attempt"] == find_attempts(open_reader(str(path)).iter_events(logical=True)).count, path
    # every logged call, retry, compaction and approval has its span
    for typ, kind in (("tool/call", "tool"), ("llm/retry", "retry-wait"), ("compaction/start", "compaction"),
                      ("approval/asked", "approval")):
        logged = sorted(s for s, row in rows.items() if row["type"] == typ)
        assert sorted(s["seq"] for s in spans if s["kind"] == kind) == logged, (path, kind)
    return seen


@pytest.mark.parametrize("path", WITH_TIMES, ids=lambda p: p.parent.name)
def test_spans_match_the_rows_on_fixtures(path: Path):
    seen = check_log(path)
    assert seen["turn"] and seen["attempt"]


def test_fixture_features_are_all_covered():
    """Across the fixtures: measured tool, attempt and approval durations, a logged retry, a compaction."""
    spans = [s for p in WITH_TIMES for s in timeline(open_reader(str(p)))]
    kinds_measured = {s["kind"] for s in spans if s["durationMs"] is not None}
    assert {"tool", "attempt", "approval", "turn", "compaction"} <= kinds_measured
    assert any(s["kind"] == "retry-wait" and s["delayMs"] == 1 for s in spans)
    assert any(s["kind"] == "attempt" and s["ttftMs"] is not None and s["dispatchType"] == "request/header"
               for s in spans)
    tools = [s for s in spans if s["kind"] == "tool"]
    assert {"not-started", "interrupted"} <= {s["status"] for s in tools}
    approvals = [s for s in spans if s["kind"] == "approval"]
    assert approvals and all(s["turn"] is not None for s in approvals)       # counted in their turn's user wait


@pytest.fixture(scope="module")
def synth_logs(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("synth")
    out = []
    for seed, version in ((11, 0), (12, 4)):
        p = d / f"v{version}" / "session.jsonl"
        write_jsonl(str(p), SessionSynth(seed, version=version, p_retry=0.15), target_bytes=1_500_000)
        out.append(p)
    return out


def test_spans_match_the_rows_on_generated_logs(synth_logs):
    for p in synth_logs:
        seen = check_log(p)
        assert seen["retry-wait"] and seen["tool"] > 20 and seen["compaction"] + seen["subagent"] > 0, seen
        spans = list(timeline(open_reader(str(p))))
        # generated times are monotonic: every tool and attempt is measured
        assert all(s["durationMs"] is not None for s in spans if s["kind"] in ("tool", "attempt"))
        assert all(s["ttftMs"] is not None for s in spans if s["kind"] == "attempt")
        # parallel calls: the overlaps are the calls of the same step whose [call, result] times intersect
        rows = rows_by_seq(p)
        tools = [s for s in spans if s["kind"] == "tool" and s["endSeq"] in rows]
        for s in tools:
            a, z = rows[s["seq"]]["time"], rows[s["endSeq"]]["time"]
            assert s["overlaps"] == [o["seq"] for o in tools if o is not s and (o["turn"], o["step"]) ==
                                     (s["turn"], s["step"]) and rows[o["seq"]]["time"] < z
                                     and a < rows[o["endSeq"]]["time"]]
        assert any(s["overlaps"] for s in tools)


def test_the_row_pass_gives_the_event_pass(synth_logs):
    """The timeline's own pass (packed rows as blocks, unread types skipped) gives the spans of the exact events."""
    files = [p for p in FIXTURES.rglob("*.jsonl") if "stream-json" not in p.name] + list(NEXT.rglob("*.jsonl"))
    for p in files + synth_logs:
        r = open_reader(str(p))
        if r.fatal:
            continue
        assert list(timeline(r)) == list(timeline(r.iter_events(logical=True))) or r.envelope_free, p


def test_envelope_free_snapshot_has_no_durations():
    p = next(NEXT.rglob("compaction-output-reserve/session.v4.jsonl"))
    r = open_reader(str(p))
    assert r.envelope_free
    out = summarize(timeline(r))
    assert out["spans"] and all(s["durationMs"] is None and s["note"] == NO_TIMES for s in out["spans"])
    assert out["totals"]["timesKnown"] is False and out["totals"]["wallMs"] == 0
    assert out["totals"]["counts"]["compaction"] == 1 and out["totals"]["tokens"]["input"] > 0


def test_totals_and_turns(synth_logs):
    out = summarize(timeline(open_reader(str(synth_logs[0]))), {"deepseek-*": {"input": 1, "output": 2,
                                                                              "cacheRead": 0.5}})
    tot = out["totals"]
    atts = [s for s in out["spans"] if s["kind"] == "attempt"]
    tk = {k: sum(a["tokens"][k] for a in atts) for k in ("input", "output", "cacheRead", "reasoning")}
    assert tot["tokens"]["input"] == tk["input"] and tot["tokens"]["output"] == tk["output"]
    want_cost = ((tk["input"] + tot["tokens"]["cacheWrite"]) * 1 + tk["cacheRead"] * 0.5
                 + (tk["output"] + tk["reasoning"]) * 2) / 1e6
    assert tot["cost"]["estimate"] is True and tot["cost"]["amount"] == pytest.approx(want_cost, abs=1e-6)
    assert tot["wallMs"] == sum(t["durationMs"] for t in out["turns"])
    assert sum(t["tokens"]["output"] for t in out["turns"]) == tk["output"]
    assert tot["modelMs"] == sum(a["durationMs"] for a in atts)
    # tool time counts overlapping calls once
    tools = [s for s in out["spans"] if s["kind"] == "tool"]
    assert tot["toolMs"] <= sum(s["durationMs"] for s in tools)
    one = summarize(out["spans"], turn=out["turns"][1]["turn"])
    assert {s.get("turn") for s in one["spans"]} == {out["turns"][1]["turn"]}


def test_cache_and_subagent_links(tmp_path):
    from app.store.timeline_cache import session_timeline
    src = FIXTURES / "examples/acp-agent/tests/snapshots/subagent-mixed"
    for f in src.iterdir():
        (tmp_path / f.name).write_bytes(f.read_bytes())
    p = tmp_path / "session.jsonl"
    first = session_timeline(open_reader(str(p)), path=str(p))
    again = session_timeline(open_reader(str(p)), path=str(p))
    assert (first["cache"], again["cache"]) == ("built", "hit")
    assert first["spans"] == again["spans"]
    kids = [s["childSession"]["id"] for s in again["spans"] if s["kind"] == "subagent"]
    heads = [json.loads((tmp_path / f"session.{i}.jsonl").read_bytes().split(b"\n")[0])["id"] for i in (1, 2)]
    assert kids == heads
    with open(p, "ab") as f:              # the log changed: computed afresh
        f.write(b'{"type":"session/title","seq":292,"time":1,"data":{"title":"x","messageSeqs":[]}}\n')
    os.utime(p, ns=(1, 1))
    assert session_timeline(open_reader(str(p)), path=str(p))["cache"] == "built"


def test_cli_json_and_text(tmp_path, capsys, monkeypatch):
    from app.cli.main import main
    p = FIXTURES / "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
    assert main(["timeline", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"spans", "turns", "totals"}
    for s in out["spans"]:
        assert {"kind", "seq", "endSeq", "start", "end", "durationMs", "label"} <= set(s)
    att = [s for s in out["spans"] if s["kind"] == "attempt"]
    assert all("ttftMs" in s and "tokens" in s for s in att)
    assert out["totals"]["cost"]["estimate"] is True
    # the price table is the user's (settings.json), read without Qt
    cfg = Path(os.environ["SESSION_LENS_CONFIG_DIR"])
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "settings.json").write_text(json.dumps({"timelinePrices": {"deepseek-v4-flash": {"input": 1e6,
                                                                                             "output": 0}}}))
    assert main(["timeline", str(p), "--json"]) == 0
    priced = json.loads(capsys.readouterr().out)
    assert priced["totals"]["cost"]["amount"] == pytest.approx(12.0)     # 12 input tokens at $1 each
    assert main(["timeline", str(p), "--turn", "1"]) == 0
    text = capsys.readouterr().out
    assert "retry-wait" in text and "logged delay 1ms after EMPTY_RESPONSE" in text and "estimated cost" in text


def test_mutants_and_hostile_types_never_break_it(tmp_path):
    """Truncated, flipped, garbage and deeply nested rows of a real log with tools and retries: the timeline
    still comes out (bad rows are skipped as everywhere else), the row pass equals the exact event pass, and
    no duration is computed from a time that is not a logged positive integer."""
    from app.tools.hostile import deep_row, jsonl_mutants
    src = FIXTURES / "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
    data = src.read_bytes() + deep_row(21, 5000) + b"\n"
    n = 0
    for k, (_name, blob, _kept) in enumerate(jsonl_mutants(data, seed=3, count=40)):
        p = tmp_path / f"m{k}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(blob)
        r = open_reader(str(p))
        if r.fatal:
            continue
        spans = list(timeline(r))
        assert spans == list(timeline(r.iter_events(logical=True))), k
        for s in spans:
            assert s["durationMs"] is None or (type(s["start"]) is int and s["start"] > 0 and s["durationMs"] >= 0)
        summarize(spans)
        n += 1
    assert n >= 20


def test_every_backend_gives_the_same_spans(synth_logs, tmp_path):
    """The same v0 and v4 logs stored as raw JSONL, zstd frames and (v0) a SQLite store: the same spans; the zstd
    file is cached like the raw one, the SQLite store is computed (no file identity to key a cache on)."""
    from app.log.source.zstdframes import encode_session
    from app.store.sqlite_writer import jsonl_to_sqlite
    from app.store.timeline_cache import cached_spans
    for k, p in enumerate(synth_logs):
        want = list(timeline(open_reader(str(p))))
        lines = p.read_bytes().split(b"\n")
        body = lines[1:-1]
        z = tmp_path / f"z{k}" / "session.jsonl.zstd"
        z.parent.mkdir()
        z.write_bytes(encode_session(lines[0], [b"\n".join(body[i:i + 50]) + b"\n" for i in range(0, len(body), 50)]))
        assert list(timeline(open_reader(str(z)))) == want
        assert [cached_spans(open_reader(str(z)))[1] for _ in range(2)] == ["built", "hit"]
        if json.loads(lines[0]).get("version"):
            continue                                   # (the SQLite store holds v0 sessions: spec §1.6)
        db = tmp_path / f"s{k}.db"
        jsonl_to_sqlite(p, db, batch_rows=37)
        sid = json.loads(lines[0])["id"]
        r = open_reader(str(db), sid)
        assert r.source.kind == "sqlite"
        assert list(timeline(r)) == want
        spans, status = cached_spans(r)
        assert status == "uncached" and len(spans) == len(want)



def test_stream_summary_times_are_the_first_and_last_chunk_times(synth_logs):
    """What the timeline relies on for a v2+ settlement: stream_summary's time0/time1 (computed without building
    the chunks) are the first and last times stream_chunks gives, on real, generated and hostile streams."""
    from app.log.format.versions import stream_chunks, stream_summary
    streams = []
    for p in list(NEXT.rglob("*.jsonl")) + synth_logs:
        for line in p.read_bytes().split(b"\n")[1:]:
            if b'"stream"' in line:
                streams.append(json.loads(line)["data"].get("stream"))
    hostile = [None, [], [1, "x", {"type": 3}], [{"type": "text-chunks", "time0": "9", "texts": ["a", "b"], "dt": [5]}],
               [{"type": "text-chunks", "time0": 10, "texts": ["a", "b", "c"], "dt": [2, "x"]}],
               [{"type": "chunk", "time": 7, "chunk": []}, {"type": "tool-call-chunks", "time0": 3, "args": [],
                                                            "dt": []}],
               [{"type": "reasoning-chunks", "time0": 4, "texts": ["a", "b", "c"], "dt": [-1]}, {"type": "chunk",
                                                                                                 "chunk": {}}]]
    assert len(streams) > 50
    for st in streams + hostile:
        times = [t for t, _c in stream_chunks(st)]
        summ = stream_summary(st)
        assert summ["chunks"] == len(times)
        if times:
            assert (summ["time0"], summ["time1"]) == (times[0], times[-1]), st


def test_context_window_from_the_log_else_from_settings():
    """The meter's window: the logged request/context.contextWindow; a log without one (v0 fixtures) takes the
    model's contextWindow from the price table, marked as such; neither: none."""
    from app.log.query.timeline_summary import context_points
    v4 = next(NEXT.rglob("compaction-output-reserve/session.v4.jsonl"))
    logged = {json.loads(ln)["data"]["contextWindow"] for ln in v4.read_bytes().split(b"\n")[1:]
              if b'"request/context"' in ln and b"contextWindow" in ln}
    pts = context_points(timeline(open_reader(str(v4))), {"*": {"contextWindow": 5}})
    assert pts and {p["contextWindow"] for p in pts} <= logged and {p["windowFrom"] for p in pts} == {"log"}
    v0 = FIXTURES / "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
    spans = list(timeline(open_reader(str(v0))))
    assert {p["contextWindow"] for p in context_points(spans)} == {None}
    pts = context_points(spans, {"deepseek-v4-*": {"contextWindow": 1000}, "deepseek-*": {"contextWindow": 9}})
    assert {(p["contextWindow"], p["windowFrom"]) for p in pts} == {(1000, "settings")}    # the longest prefix


def test_summary_cached_per_log_revision_and_price_table(synth_logs, tmp_path):
    """Turns and totals are saved beside the spans: the same as computed, reused while the log and the price table
    stay the same, computed again when either changes; a damaged file is ignored."""
    from app.store.timeline_cache import cached_summary
    p = tmp_path / "c" / "session.jsonl"
    p.parent.mkdir()
    p.write_bytes(synth_logs[0].read_bytes())
    spans = summarize(timeline(open_reader(str(p))))["spans"]
    a, b = {"deepseek-*": {"input": 1, "output": 2}}, {"deepseek-*": {"input": 3, "output": 2}}
    want = summarize(spans, a, ordered=True)
    got = [cached_summary(open_reader(str(p)), spans, a) for _ in range(2)]
    assert [how for _s, how in got] == ["built", "hit"]
    assert got[1][0] == {"turns": want["turns"], "totals": want["totals"]}
    other, how = cached_summary(open_reader(str(p)), spans, b)
    assert how == "built" and other["totals"]["cost"]["amount"] > want["totals"]["cost"]["amount"]
    with open(p, "ab") as f:
        f.write(b"\n")
    assert cached_summary(open_reader(str(p)), spans, b)[1] == "built"
    for f in Path(os.environ["SESSION_LENS_CACHE_DIR"], "index").glob("*.tlsum"):
        blob = f.read_bytes()
        f.write_bytes(blob[:-1] + bytes([blob[-1] ^ 0xFF]))   # (always a change: an "x" matched 1 byte in 256)
    assert cached_summary(open_reader(str(p)), spans, b)[1] == "built"
