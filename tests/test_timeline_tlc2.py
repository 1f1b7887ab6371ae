"""The timeline's whole turns built in C (issue 31, the tlc2 helper: ``tl_turn`` in the tlc2 section of
``rowscan_c.c``, reached through ``tl_scan``'s TURN flag and taken by ``Builder.turn_c``): its definition is the
Builder fed the same rows one by one.  A turn item equals what a Builder makes of its rows from a clean state (its
spans and the state they leave); the spans, turns and totals of whole logs are the same with whole turns off
(``timeline_rows.TURN_C``), on every fixture, on generated v0 and v4 logs, on hostile mutants and on logs whose
turns are changed in every field the C reader reads or checks; a turn the Builder refuses is read again row by row
(``tl_scan``'s start and index, held equal to ``scan_py``'s)."""
from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Optional

import pytest

from app.log.format.limits import MAX_DEPTH, MAX_PACKED_MEMBERS, MAX_ROW_BYTES
from app.log.index.fastindex import load_rowscan_c
from app.log.index.reader import LogReader
from app.log.query import timeline_rows as tr
from app.log.query import timeline_scan as ts
from app.log.query.timeline import Builder, feed, timeline
from app.log.query.timeline_summary import in_log_order, summarize
from app.store.faces import open_reader
from app.tools.hostile import deep_row, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

NEXT = FIXTURES.parent / "dsh-next"
PRICES = {"deepseek-*": {"input": 0.28, "cacheRead": 0.028, "output": 0.42}}
C: Any = load_rowscan_c()
needs_c = pytest.mark.skipif(getattr(C, "tl_scan", None) is None, reason="the row scanner in C is not built")


class _Count:
    """Builder.turn_c wrapped: how many turn items it took and refused."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, refuse: bool = False) -> None:
        self.taken = self.refused = 0
        real = Builder.turn_c

        def turn_c(b: Builder, x: Any, data: bytes) -> bool:
            ok = False if refuse else real(b, x, data)
            if ok:
                self.taken += 1
            else:
                self.refused += 1
            return ok
        monkeypatch.setattr(Builder, "turn_c", turn_c)


def _all(p: Path, whole: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(tr, "TURN_C", whole)
    r = open_reader(str(p))
    if r.fatal:
        return None
    spans = in_log_order(timeline(r))
    out = summarize(spans, PRICES, ordered=True)
    return json.dumps(out["spans"]), json.dumps(out["turns"]), json.dumps(out["totals"])


def _same(p: Path, monkeypatch: pytest.MonkeyPatch) -> bool:
    got = _all(p, True, monkeypatch)
    assert got == _all(p, False, monkeypatch), p
    return got is not None


def _generated(tmp_path: Path, versions: tuple[int, ...] = (0, 4), size: int = 700_000, **mix: Any) -> list[Path]:
    """Generated logs (``mix``: the generator's mix, e.g. a small context window: compactions, request rows
    within turns)."""
    out = []
    for version in versions:
        for seed, p_retry in ((41, 0.3), (42, 0.0)):
            g = tmp_path / f"g{version}-{seed}" / "session.jsonl"
            g.parent.mkdir(parents=True)
            write_jsonl(str(g), SessionSynth(seed + version, version=version, p_retry=p_retry, **mix),
                        target_bytes=size)
            out.append(g)
    return out


@needs_c
def test_whole_turns_give_the_row_by_row_spans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Every fixture (dsh v0, dsh-next v2 to v4) and generated v0 and v4 logs: the same spans, turns and totals with
    the whole turns in C as row by row; on the generated v4 logs most turns are taken whole."""
    count = _Count(monkeypatch)
    logs = sorted(FIXTURES.rglob("*.jsonl")) + sorted(NEXT.rglob("*.jsonl"))
    read = sum(_same(p, monkeypatch) for p in logs)
    for g in _generated(tmp_path) + _generated(tmp_path / "w", context_window=24_000, p_header_change=0.3):
        assert _same(g, monkeypatch)
    assert read >= 60
    assert count.taken >= 20


@needs_c
def test_refused_turns_are_read_again_row_by_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Every turn item refused by the Builder: its rows read again (tl_scan from the turn's start and row index) give
    the spans of a pass without whole turns."""
    count = _Count(monkeypatch, refuse=True)
    for g in _generated(tmp_path, (4,)):
        assert _same(g, monkeypatch)
    assert count.refused >= 20 and count.taken == 0


def _items(p: Path) -> list[tuple[Any, bytes, Any]]:
    """The turn items of the log at ``p``'s segments (tl_scan with TURN)."""
    r = LogReader.open(str(p))
    readers = tr._readers(r.version)
    flags = ts.SMALL | ts.SETTLE | ts.TURN | ts.TIMED
    out = []
    for seg in r.source.forward(r.source.header_end):
        if seg.bad or seg.rows is not None:
            continue
        out += [it for it in tr._fast_segment(seg, readers, r.codec.decode_row, None, flags)
                if type(it) is tuple and len(it) == 3]
    return out


def _state(b: Builder) -> Any:
    at = b.at
    return (b.dispatch, b.last_time, b.last_input, sorted(b.done), b.turn, b.open, b.calls, b.step_tools, b.times,
            b.compactions, b.model, b.window, b.summaries, b.undone, b.n_kept, dict(at._last), at.pruned, at.attempts, at.open_attempts,
            at._stable, at._last_stable, at._last_new)


@needs_c
def test_a_turn_item_is_what_the_builder_makes_of_its_rows(tmp_path: Path):
    """tl_turn against its definition: for every turn item of generated v4 logs (and of their changed copies), a
    Builder in a clean state given the item has the spans and the state of a Builder in the same state fed the
    turn's rows one by one (a compaction waiting for its next prompt, a model and a context window set; turns with
    compactions and request rows: a small context window)."""
    logs = _generated(tmp_path, (4,)) + _generated(tmp_path / "w", (4,), context_window=24_000, p_header_change=0.3)
    logs += [_changed_log(g, tmp_path, random.Random(k)) for k, g in enumerate(logs)]
    n = 0
    for p in logs:
        for x, data, again in _items(p):
            pair = []
            for whole in (True, False):
                b = Builder(True)
                b.model, b.window, b.last_input = "m-1", 64_000, 5
                b.compactions = [{"kind": "compaction", "tokensAfter": None}]
                if whole:
                    assert b.turn_c(x, data)
                    spans = b.out
                else:
                    spans = list(feed(b, again()))
                pair.append((json.dumps(spans), repr(_state(b))))
            assert pair[0] == pair[1], p
            n += 1
    assert n >= 30


# ----------------------------------------------------------------------------- changed turns

def _dump(row: Any) -> bytes:
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode()


def _change_result(row: Any, rng: random.Random) -> Any:
    d = row["data"]
    m = d.get("message") if isinstance(d.get("message"), dict) else {}
    pick = rng.randrange(22)
    if pick == 0:
        d["error"] = rng.choice([{"name": "E", "code": "ABORTED"}, {"code": "NOT_STARTED"}, {"code": "CANCELLED"},
                                 {"kind": "timeout"}, {"code": ""}, {}, {"code": None, "kind": ""}, {"code": 5},
                                 {"code": "X", "code2": [1]}, None, "bad", {"co\\u0064e": "A"}])
    elif pick == 1:
        m["isError"] = rng.choice([True, False, None, 1, "yes"])
    elif pick == 2:
        m["content"] = rng.choice([[], [{"type": "tool-result", "isError": True}], [{"type": "tool-result", "isError": 1}],
                                   [{"type": "text", "text": "x", "isError": True}], [None], ["x"], "text",
                                   [{"type": 5}], [{"type": "tool-result", "isError": False, "id": 3}],
                                   [{"type": "text", "id": {"a": 1}}]])
    elif pick == 3:
        m["source"] = rng.choice([None, {}, {"callId": None}, {"callId": 7}, {"kind": "tool"}, "x",
                                  {"callId": "nope"}, {"callId": "a\\u0062"}])
    elif pick == 4:
        m["toolCallId"] = rng.choice([None, 5, "nope", True])
        m.pop("source", None)
    elif pick == 5:
        m["role"] = rng.choice(["tool", "user", 5, None])
    elif pick == 6:
        m.pop(rng.choice(["role", "content", "source", "toolCallId"]), None)
    elif pick == 7:
        d[rng.choice(["meta", "extra", "content", "callId"])] = rng.choice([{"a": [1, 2]}, "x", 1.5, None])
    elif pick == 8:
        row["sourceEventSeqs"] = rng.choice([[], [row["seq"]], [2, 1], None, [row["seq"] + 5]])
    elif pick == 9:
        row["surfaceOp"] = rng.choice(["replace", None])
    elif pick == 10:
        row["ignorable"] = rng.choice([True, {"a": 1}])
    elif pick == 11:
        d["turn"] = rng.choice([None, "1", d.get("turn", 0) + 1])
    elif pick == 12:
        m["id"] = rng.choice([None, 5, "x"])
    elif pick == 13:
        d["type"] = rng.choice(["tool/result", "other"])
    elif pick == 14:
        row["time"] = rng.choice([0, -5, row.get("time", 0) + 7 * 3600 * 1000, row.get("time", 0) - 10])
    elif pick == 15:
        m["extra"] = [[[[1]]]]
    else:
        return None
    return row


def _change_call(row: Any, rng: random.Random) -> Any:
    d = row["data"]
    pick = rng.randrange(10)
    if pick == 0:
        d["name"] = rng.choice(["", "subagent_run", "subagent", "a\"b", "é"])
    elif pick == 1:
        d["callId"] = rng.choice(["c-dup", 5, "", "\u00e9x"])
    elif pick == 2:
        d["arguments"] = rng.choice(["\\u00e9\n", 5, None])
    elif pick == 3:
        d["step"] = d.get("step", 0) + rng.choice([0, 1])
    elif pick == 4:
        row["time"] = rng.choice([0, -1])
    elif pick == 5:
        d["turn"] = d.get("turn", 0) + 1
    else:
        return None
    return row


def _change_message(row: Any, rng: random.Random) -> Any:
    d = row["data"]
    st = d.get("stream") if isinstance(d.get("stream"), list) else []
    pick = rng.randrange(12)
    if pick == 0:
        d["usage"] = rng.choice([None, {}, {"inputTokens": 5, "outputTokens": 0}, {"inputTokens": 7, "outputTokens": 2,
                                 "cacheReadTokens": 3, "cacheWriteTokens": None}])
        for rec in st:
            if isinstance(rec, dict) and isinstance(rec.get("chunk"), dict) and rec["chunk"].get("type") == "usage":
                rec["chunk"]["usage"] = rng.choice([None, {"inputTokens": 1.5}, {"outputTokens": 10 ** 17},
                                                    {"inputTokens": 3, "inputTokens2": 4}, [], 7, "x",
                                                    {"outputTokens": True, "inputTokens": -4}])
    elif pick == 1:
        for rec in st:
            if isinstance(rec, dict) and isinstance(rec.get("chunk"), dict) and rec["chunk"].get("type") == "finish":
                rec["chunk"]["reason"] = rng.choice([None, "stop", 5, {"kind": 5}, {}, {"kind": "error", "failure": 1},
                                                     {"kind": "st\\u006fp"}, [1], True])
    elif pick == 2:
        d["stream"] = rng.choice([[], None, [{"type": "chunk", "time": 5, "chunk": {"type": "finish"}}]])
    elif pick == 3:
        d["interrupted"] = rng.choice([True, False, None])
    elif pick == 4:
        for rec in st:
            if isinstance(rec, dict) and "time" in rec:
                rec["time"] = rng.choice([0, -1, rec["time"] + 8 * 3600 * 1000])
    elif pick == 5:
        d["step"] = d.get("step", 0) + 1
    else:
        return None
    return row


def _change_retry(row: Any, rng: random.Random) -> Any:
    d = row["data"]
    pick = rng.randrange(12)
    if pick == 0:
        d["retryId"] = rng.choice(["", None, 5, "r\\u0031", "same-id"])
    elif pick == 1:
        d["retry"] = rng.choice([None, "2", 1.5, 0, -1])
    elif pick == 2:
        d["delayMs"] = rng.choice([None, 1.5, "x", 10 ** 17, True, -4, [1]])
    elif pick == 3:
        d["failure"] = rng.choice([None, {}, {"code": ""}, {"code": "", "message": ""}, {"message": "m"}, "x",
                                   {"code": 5}, {"code": None, "message": "why"}, {"code": "C", "code2": 1}])
    elif pick == 4:
        d[rng.choice(["provider", "foo", "index", "type"])] = rng.choice(["x", 1, "llm/retry"])
    elif pick == 5:
        d["turn"] = d.get("turn", 0) + 1
    elif pick == 6:
        d["step"] = d.get("step", 0) + rng.choice([0, 1])
    elif pick == 7:
        d.pop(rng.choice(["retryId", "retry", "turn", "step"]), None)
    else:
        return None
    return row


def _change_request(row: Any, rng: random.Random) -> Any:
    """A request/header (its header's config's model) or request/context (model, contextWindow) changed: the fields
    Builder._on_dispatch and _on_context read, the shape around them, the row's envelope (the tlc3 helper)."""
    d = row["data"]
    pick = rng.randrange(9)
    models = [None, 5, "", "m\\u0031", "other-model", ["x"], {"a": 1}, "deep\u00e9"]
    if row["type"] == "request/header":
        cfg = d.get("header", {}).get("config", {}) if isinstance(d.get("header"), dict) else {}
        if pick == 0:
            cfg["model"] = rng.choice(models)
        elif pick == 1:
            cfg.pop("model", None)
        elif pick == 2:
            d["header"]["config"] = rng.choice(["x", None, [], {}, {"model": "a", "provider": 1}])
        elif pick == 3:
            d["header"] = rng.choice(["x", None, {}, {"tools": []}, {"config": {"model": "z"}}])
        elif pick == 4:
            d.pop("header", None)
        else:
            return _change_envelope(row, rng, pick)
        return row
    if pick == 0:
        d["model"] = rng.choice(models)
    elif pick == 1:
        d["contextWindow"] = rng.choice([None, 0, -5, 1.5, "24000", True, 10 ** 17, 128000, 1, [1]])
    elif pick == 2:
        d.pop(rng.choice(["model", "contextWindow", "provider"]), None)
    elif pick == 3:
        row["data"] = rng.choice([{}, {"model": "q"}, {"contextWindow": 7}, {"contextWindow": 7, "model": 3}])
    elif pick == 4:
        d["contextWindow"] = rng.choice([2.0, -0, 999999999999999, 1e3, 0.5])
    else:
        return _change_envelope(row, rng, pick)
    return row


def _change_compaction(row: Any, rng: random.Random) -> Any:
    """A compaction/start, /summary or /end changed: its id, the summary's token counts, the end's turn and error (what
    Builder._on_compaction reads), the row's envelope (the tlc3 helper)."""
    d = row["data"]
    typ = row["type"]
    pick = rng.randrange(9)
    if pick == 0:
        d["compactionId"] = rng.choice([None, 5, "", "c\\u0031", "other-id", ["x"]])
    elif pick == 1:
        d.pop("compactionId", None)
    elif pick == 2 and typ == "compaction/summary":
        d["shadowedTokenCount"] = rng.choice([None, 1.5, "5", -3, 10 ** 17, [1], 0, 12])
    elif pick == 3 and typ == "compaction/summary":
        d["usage"] = rng.choice([None, {}, {"outputTokens": 1.5}, {"outputTokens": None}, "x", [1],
                                 {"outputTokens": 7, "x": 1}, {"inputTokens": 3}, {"outputTokens": "7"}])
    elif pick == 4 and typ == "compaction/summary":
        d.pop(rng.choice(["shadowedTokenCount", "usage", "summary"]), None)
    elif pick == 2 and typ == "compaction/end":
        d["turn"] = rng.choice([None, "7", 99, 1.5, d.get("turn"), [1]])
    elif pick == 3 and typ == "compaction/end":
        d["error"] = rng.choice([None, {"code": "X"}, "boom", False, "", {"message": "m"}])
    elif pick == 4 and typ == "compaction/end":
        d.pop("turn", None)
    elif pick >= 5:
        return _change_envelope(row, rng, pick)
    else:
        return None
    return row


def _change_envelope(row: Any, rng: random.Random, pick: int) -> Any:
    """A request row's envelope or data changed (picks 5 to 8)."""
    if pick == 5:
        row["time"] = rng.choice([0, row.get("time", 0) + 7 * 3600 * 1000, -1, None])
    elif pick == 6:
        row["data"][rng.choice(["turn", "foo", "type", "model2"])] = rng.choice(["x", 1, None, {"m": [1]}])
    elif pick == 7:
        row["seq"] = rng.choice([0, row["seq"] - 1, row["seq"] + 1000, None])
    else:
        row["data"] = rng.choice([None, [], "x", 1])
    return row


def _changed_log(g: Path, tmp_path: Path, rng: random.Random) -> Path:
    """A copy of the log at ``g`` whose turns' rows are changed (one field each, or moved, dropped, repeated)."""
    lines = g.read_bytes().split(b"\n")
    out = [lines[0]]
    for ln in lines[1:]:
        if not ln or rng.random() > 0.25:
            out.append(ln)
            continue
        row = json.loads(ln)
        typ = row.get("type")
        new = None
        if typ == "tool/result":
            new = _change_result(row, rng)
        elif typ == "tool/call":
            new = _change_call(row, rng)
        elif typ in ("assistant/message", "assistant/attempt"):
            new = _change_message(row, rng)
        elif typ in ("request/header", "request/context"):
            new = _change_request(row, rng)
        elif typ in ("compaction/start", "compaction/summary", "compaction/end"):
            if rng.random() < 0.15:
                out += [] if rng.random() < 0.5 else [ln, ln]     # (dropped or repeated)
                continue
            new = _change_compaction(row, rng)
        elif typ in ("llm/retry", "llm/retry-started"):
            if rng.random() < 0.15:
                continue                                          # (dropped: a retry left open, a start alone)
            new = _change_retry(row, rng)
        elif typ in ("step/start", "step/end", "turn/end", "turn/start"):
            pick = rng.randrange(6)
            if pick == 0:
                continue                                          # (dropped)
            if pick == 1:
                out += [ln, ln]                                   # (repeated)
                continue
            if pick == 2 and typ == "turn/end":
                row["data"]["reason"] = rng.choice([{"kind": "error", "error": {"code": "X"}}, {"kind": 5}, {},
                                                    {"kind": "c\\u006fmpleted"}])
                new = row
            if pick == 3:
                row["time"] = rng.choice([0, row.get("time", 0) + 7 * 3600 * 1000])
                new = row
        if new is None:
            out.append(ln)
            continue
        text = _dump(new)
        if rng.random() < 0.1:                                    # (blanks: not the writer's layout)
            text = text.replace(b'","', b'", "', 1)
        out.append(text.replace(b"\\\\u", b"\\u"))
    p = tmp_path / f"changed-{g.parent.name}-{rng.random():.6f}" / "session.jsonl"
    p.parent.mkdir()
    p.write_bytes(b"\n".join(out))
    return p


class _Picks:
    """A stand-in for random.Random giving chosen picks: ``randrange`` the first, ``choice`` the second."""

    def __init__(self, a: int, b: int) -> None:
        self.a, self.b = a, b

    def randrange(self, n: int) -> int:
        return self.a % n

    def choice(self, seq: Any) -> Any:
        return seq[self.b % len(seq)]

    def random(self) -> float:
        return 0.5


_CHANGES = {"tool/result": (_change_result, 16, 12), "tool/call": (_change_call, 6, 5),
            "assistant/message": (_change_message, 6, 9), "assistant/attempt": (_change_message, 6, 9),
            "llm/retry": (_change_retry, 8, 9), "llm/retry-started": (_change_retry, 8, 9),
            "request/header": (_change_request, 9, 10), "request/context": (_change_request, 9, 10),
            "compaction/start": (_change_compaction, 9, 9), "compaction/summary": (_change_compaction, 9, 9),
            "compaction/end": (_change_compaction, 9, 9)}


def _one_turn_logs(tmp_path: Path) -> list[Path]:
    """Logs of one turn of a generated v4 log (one with retries and a log-only attempt, one without, one with a
    compaction and the request rows after it), each with one row of it changed one way: every change of every kind of
    row the C reader reads."""
    (tmp_path / "base").mkdir()
    g = _generated(tmp_path / "base", (4,), context_window=24_000)[0]
    lines = g.read_bytes().split(b"\n")
    starts = [k for k, ln in enumerate(lines) if ln.startswith(b'{"type":"turn/start"')]
    turns: list[tuple[Optional[bool], list[bytes]]] = []
    head = lines[:starts[0]]
    for a, z in zip(starts, starts[1:]):
        body = lines[a:z]
        retried = any(ln.startswith(b'{"type":"llm/retry"') for ln in body) and \
            any(ln.startswith(b'{"type":"assistant/attempt"') for ln in body)
        if any(ln.startswith(b'{"type":"compaction/end"') for ln in body):
            retried = None                                        # (a compacted turn: a third kind)
        if any(retried == r for r, _ in turns):
            continue
        p = tmp_path / f"turn-{a}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(b"\n".join(head + body) + b"\n")
        if len(_items(p)) == 1:                                  # (a turn the C reader takes as it is)
            turns.append((retried, body))
    assert len(turns) == 3
    out: list[Path] = []
    for _r, body in turns:
        seen: set[bytes] = set()
        for k, ln in enumerate(body):
            typ = json.loads(ln).get("type") if ln else None
            if typ not in _CHANGES or any(json.loads(x).get("type") == typ for x in body[:k] if x):
                continue                                          # (the first row of each kind)
            fn, na, nb = _CHANGES[typ]
            for a in range(na):
                for b in range(nb):
                    new = fn(json.loads(ln), _Picks(a, b))
                    if new is None:
                        continue
                    text = _dump(new).replace(b"\\\\u", b"\\u")
                    if text in seen:
                        continue
                    seen.add(text)
                    p = tmp_path / f"one-{len(out)}" / "session.jsonl"
                    p.parent.mkdir()
                    p.write_bytes(b"\n".join(head + body[:k] + [text] + body[k + 1:]) + b"\n")
                    out.append(p)
    return out


@needs_c
def test_each_change_of_a_turn_gives_the_row_by_row_spans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """One turn with retries and one without, each with one row changed, one way at a time (every change of the
    random tests below): the same spans, turns and totals as row by row; many of them still taken whole."""
    count = _Count(monkeypatch)
    logs = _one_turn_logs(tmp_path)
    assert len(logs) >= 150
    for p in logs:
        assert _same(p, monkeypatch)
    assert count.taken >= 100 and count.refused == 0


@needs_c
def test_changed_and_hostile_turns_give_the_row_by_row_spans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Generated v4 logs whose turns' rows are changed in every field the C reader reads or checks (tool results'
    errors, outcomes and call ids, calls' names and ids, usages, finish reasons, stream times, turn ends, dropped and
    repeated bounds), and mutants of them (truncated, flipped, garbage, deep, huge rows): the same spans, turns and
    totals as row by row; some turns are still taken whole, others not."""
    count = _Count(monkeypatch)
    gens = _generated(tmp_path, (4,))
    read = 0
    for k, g in enumerate(gens):
        for s in range(3):
            p = _changed_log(g, tmp_path, random.Random(100 * k + s))
            read += _same(p, monkeypatch)
        data = g.read_bytes() + deep_row(10 ** 6, 300) + b"\n"
        for j, (_name, blob, _kept) in enumerate(jsonl_mutants(data, seed=k, count=10)):
            p = tmp_path / f"m{k}-{j}" / "session.jsonl"
            p.parent.mkdir()
            p.write_bytes(blob)
            read += _same(p, monkeypatch)
    assert read >= 20
    assert count.taken >= 50 and count.refused >= 0


@needs_c
def test_scan_from_a_row_is_the_definition():
    """tl_scan from a row's start and index (how a refused turn is read again) is scan_py from there."""
    files = sorted(FIXTURES.rglob("*.jsonl"))[:40] + sorted(NEXT.rglob("*.jsonl"))[:40]
    n = 0
    for p in files:
        blob = p.read_bytes()[:200_000]
        stop = blob.rfind(b"\n") + 1
        starts = [0] + [i + 1 for i in range(len(blob)) if blob[i:i + 1] == b"\n" and i + 1 < stop][:: 7]
        for start in starts[:12]:
            row = blob.count(b"\n", 0, start)
            flags = ts.PACKED | ts.CHUNK | ts.SMALL
            got = C.tl_scan(blob, stop, tr._SKIP_LIST, flags, MAX_DEPTH, MAX_ROW_BYTES, MAX_PACKED_MEMBERS, start, row)
            assert got == ts.scan_py(blob, stop, tr._SKIP_LIST, flags, start=start, index=row), (p, start)
            n += 1
    assert n >= 200


# ----------------------------------------------------------------------------- span order and shapes

def _span_lists(tmp_path: Path) -> list[list[Any]]:
    out = []
    for p in sorted(FIXTURES.rglob("*.jsonl"))[::3] + sorted(NEXT.rglob("*.jsonl"))[::3] + _generated(tmp_path):
        r = open_reader(str(p))
        if not r.fatal:
            out.append(list(timeline(r)))
    rng = random.Random(3)
    base = [s for spans in out for s in spans]
    odd = [dict(s) for s in rng.sample(base, 300)]
    for k, s in enumerate(odd):                          # (ties, None seqs, keys in another order, extra keys)
        s["seq"] = rng.choice([None, s["seq"], 5, 5, -3, 2 ** 62])
        if k % 7 == 0:
            s = odd[k] = dict(reversed(list(s.items())))
        if k % 11 == 0:
            s[f"x{k % 3}"] = k
    out.append(odd)
    out.append([{"kind": "tool", "seq": k % 4, f"k{k}": 1} for k in range(300)])       # (over 256 shapes)
    return out


@needs_c
def test_span_order_and_shapes_in_c_are_their_definitions(tmp_path: Path):
    """tl_order is in_log_order_py and tl_shapes is shapes_py (the same order and groups, the same objects) on the
    spans of fixtures and generated logs, on spans with ties, null seqs, keys in other orders and extra keys, and on
    more than 256 shapes (tl_shapes declines, shapes_py raises); each declines (None) on spans the definition reads
    otherwise (a float, bool or huge seq, a kind not known, a span that is not a dict)."""
    from app.log.query import timeline_summary as tsum
    from app.log.query import timeline_table as tt
    rank = {k: i for i, k in enumerate(tsum.KINDS)}
    lists = _span_lists(tmp_path)
    for spans in lists:
        got = C.tl_order(spans, rank)
        want = tsum.in_log_order_py(spans)
        assert got is not None and [id(s) for s in got] == [id(s) for s in want]
        shaped = C.tl_shapes(spans)
        if len({tuple(s) for s in spans}) > 256:
            assert shaped is None
            with pytest.raises(ValueError):
                tt.shapes_py(spans)
            continue
        order, groups = tt.shapes_py(spans)
        assert shaped[0] == order
        assert [(k, [id(s) for s in rows]) for k, rows in shaped[1]] == [(k, [id(s) for s in rows]) for k, rows in groups]
    good = lists[0][:5]
    for bad in ({"kind": "tool", "seq": 1.5}, {"kind": "tool", "seq": True}, {"kind": "tool", "seq": 2 ** 70},
                {"kind": "nope", "seq": 1}, {"seq": 1}, {"kind": "tool"}, ["kind", "seq"]):
        assert C.tl_order(good + [bad], rank) is None, bad
    assert C.tl_shapes(good + [["kind"]]) is None
    assert tsum.in_log_order(good + [{"kind": "tool", "seq": 1.5}]) == tsum.in_log_order_py(good + [{"kind": "tool", "seq": 1.5}])


@needs_c
def test_a_compaction_with_no_prompt_after_it_in_its_turn_waits_for_the_next(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    """Generated v4 logs with compactions whose turns lose their messages after the compaction: the compaction span
    waits for a later turn's prompt (``tokensAfter``), taken whole and the same as row by row (the tlc3 helper)."""
    count = _Count(monkeypatch)
    waiting = 0
    for g in _generated(tmp_path, (4,), context_window=24_000):
        out, after = [], False
        for ln in g.read_bytes().split(b"\n"):
            if ln.startswith(b'{"type":"compaction/end"'):
                after = True
            elif ln.startswith(b'{"type":"turn/end"'):
                after = False
            elif after and ln.startswith(b'{"type":"assistant/message"'):
                continue
            out.append(ln)
        p = tmp_path / f"w-{g.parent.name}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(b"\n".join(out))
        assert _same(p, monkeypatch)
        waiting += sum(1 for x, _d, _a in _items(p) if x[2][4] is not None and x[2][4][5])
    assert waiting >= 1 and count.taken >= 10


@needs_c
def test_request_and_compaction_rows_with_long_fractions_give_the_row_by_row_spans(tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    """Request and compaction rows holding a number with a fraction of more than 18 digits (a row the lean pass's
    screen refuses, read the exact way): the same spans, turns and totals as row by row (the tlc3 helper)."""
    long = b"0.1234567890123456789012345"
    for g in _generated(tmp_path, (4,), context_window=24_000):
        text = g.read_bytes()
        for old in (b'"provider":"deepseek-official","model"', b'"maxTokens":4096', b'"turn":1}}'):
            text = text.replace(old, old.split(b":")[0] + b":" + long + (b',"model"' if b"model" in old else b"")
                                + (b"}}" if old.endswith(b"}}") else b""), 3)
        p = tmp_path / f"f-{g.parent.name}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(text)
        assert long in text
        assert _same(p, monkeypatch)
