"""The timeline's fast row pass (issue 31): rows of the types its spans read are taken as lean records
(:func:`app.log.format.fastrows.timeline_decoders`), a segment's refused rows are found in whole-segment passes
(:func:`app.log.format.fastrows.refused_split`).  Both must give exactly what the exact path gives: the spans
of ``timeline(reader)`` equal those of the exact events, on logs whose rows of those types carry the fields
the lean records read in every shape (and in shapes the lean records refuse)."""
from __future__ import annotations

import json
import random
from pathlib import Path

from app.log.format import fastrows
from app.log.query.timeline import timeline
from app.log.query.timeline_summary import in_log_order
from app.store.faces import open_reader
from app.tools.hostile import deep_row
from app.tools.synth import SessionSynth, write_jsonl
from tests.fixtures_util import FIXTURES

NEXT = FIXTURES.parent / "dsh-next"


def _blocks(data: bytes, size: int) -> list[bytes]:
    """``data`` cut after a newline every ``size`` bytes or so (as a file source gives segments)."""
    out, at = [], 0
    while at < len(data):
        nl = data.find(b"\n", at + size)
        end = len(data) if nl < 0 else nl + 1
        out.append(data[at:end])
        at = end
    return out


def test_refused_split_is_refused_rows():
    """Row by row and segment at once: the same refused rows (size, depth, UTF-8) on every fixture and on
    hostile rows: deep, brackets in strings, invalid UTF-8 (one row of a segment, the last row, a torn one)."""
    files = sorted(FIXTURES.rglob("*.jsonl")) + sorted(NEXT.rglob("*.jsonl"))
    hostile = [deep_row(7, 300), deep_row(8, 256), deep_row(9, 257),
               b'{"type":"x","seq":1,"data":"' + b"[{" * 400 + b'"}',
               b'{"type":"tool/result","seq":2,"data":{"t":"caf\xc3\xa9 \xff\xfe"}}',
               b'{"type":"x","seq":3,"data":"\xed\xa0\x80"}',
               '{"type":"x","seq":4,"data":"ünï"}'.encode(), b'{"type":"x","seq":5,"data":"\xe2\x82"}']
    blobs = [p.read_bytes() for p in files] + [b"\n".join(hostile) + b"\n", b"\n".join(hostile[:3] + hostile[4:5]),
                                               b"\n".join(hostile[6:]) + b"\n"]
    seen = 0
    for blob in blobs:
        for data in _blocks(blob, 4096):
            rows = data.split(b"\n")
            rows.pop()
            want = fastrows.refused_rows(rows, data.isascii())
            assert fastrows.refused_split(data, rows) == want, data[:80]
            seen += len(want)
    assert seen >= 5


def _mutate(row: dict, rng: random.Random) -> dict:
    """A row of a type the lean records read, with the fields they read in other shapes (some the lean
    record refuses, so the row goes the exact way; the rest it takes)."""
    d = row.get("data")
    t = row["type"]
    if not isinstance(d, dict):
        return row
    pick = rng.random()
    trng = random.Random(str(row.get("seq")))                  # (its own draws: the others stay as they were)
    if trng.random() < 0.1:
        row["time"] = trng.choice([-5, 0, 2 ** 60, 1.5, "7", None, 10 ** 13])
    if t == "tool/result" and isinstance(d.get("message"), dict):
        m = d["message"]
        if pick < 0.2:
            m["isError"] = True
            m["role"] = "tool"
        elif pick < 0.4 and isinstance(m.get("content"), list) and m["content"]:
            m["content"][0]["isError"] = rng.choice([True, 1, "yes", None])
        elif pick < 0.5:
            d["error"] = rng.choice(["broken", {"code": "ABORTED"}, {"kind": "x"}, 0])
        elif pick < 0.6:
            m.pop("source", None)
            m["toolCallId"] = rng.choice([None, 5])
    elif t == "llm/retry":
        if pick < 0.5:
            d["delayMs"] = rng.choice([1.5, "7", None, -3, 10 ** 20])
            d["failure"] = rng.choice([{"message": "m"}, "text", [1], {"code": None}])
        else:
            d["retryId"] = rng.choice([None, 3, "r"])
    elif t == "llm/retry-started" and pick < 0.5:
        d["retryId"] = rng.choice([None, 3, "r"])
        d["retry"] = rng.choice([None, "2", [2]])
    elif t == "assistant/message":
        if pick < 0.2:
            row["sourceEventSeqs"] = [row["seq"] - 1, row["seq"] - 1]            # (repeats a seq: exact way)
        elif pick < 0.4:
            d["interrupted"] = rng.choice([True, "yes", None])
        elif pick < 0.6:
            d["usage"] = rng.choice([{"inputTokens": "1"}, {"inputTokens": 3, "outputTokens": 4}, None])
    elif t == "turn/end" and pick < 0.4:
        d["reason"] = rng.choice([{"kind": "disposed"}, {"kind": "error", "error": "boom"}, {"kind": "error",
                                  "error": {"code": "X"}}, {"kind": "aborted"}])
    elif t in ("step/start", "step/end", "tool/call") and pick < 0.2:
        d["step"] = rng.choice(["1", None, 2.0])
    elif t == "tool/call" and pick < 0.4:
        d["name"] = rng.choice(["subagent-x", 7, None])
    return row


def test_lean_rows_give_the_exact_spans(tmp_path: Path):
    """Generated v0 and v4 logs (tools, retries, failed attempts) whose rows of the lean types are changed in
    shape: the row pass gives exactly the spans of the exact event pass, and the changed fields show in them."""
    statuses: set[object] = set()
    for version in (0, 4):
        src = tmp_path / f"v{version}.jsonl"
        write_jsonl(str(src), SessionSynth(21 + version, version=version, p_retry=0.3), target_bytes=400_000)
        lines = src.read_bytes().split(b"\n")
        rng = random.Random(version)
        out = [lines[0]]
        for ln in lines[1:]:
            if ln and rng.random() < 0.5:
                row = json.loads(ln)
                if "seq" in row:
                    ln = json.dumps(_mutate(row, rng), ensure_ascii=False, separators=(",", ":")).encode()
            out.append(ln)
        p = tmp_path / f"m{version}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(b"\n".join(out))
        r = open_reader(str(p))
        assert not r.fatal
        spans = list(timeline(r))
        assert spans == list(timeline(r.iter_events(logical=True)))
        statuses |= {s.get("status") for s in spans if s["kind"] == "tool"}
        assert any(s["kind"] == "retry-wait" and s["delayMs"] is None for s in spans)
    assert {"ok", "error", "no-result"} <= statuses


def test_lean_settlements_summarise_as_stream_summary(tmp_path: Path):
    """A v2+ settlement read lean: its stream's chunks, finish, usage and first/last times are exactly
    :func:`app.log.format.versions.stream_summary`'s of the exact row, on real, generated and hostile streams
    (those the lean record refuses go the exact way)."""
    from app.log.format.versions import stream_summary
    from app.log.query.timeline import Settlement
    from app.log.query.timeline_rows import lean_item
    gen = tmp_path / "v4.jsonl"
    write_jsonl(str(gen), SessionSynth(31, version=4, p_retry=0.3), target_bytes=300_000)
    rows = []
    for p in sorted(NEXT.rglob("*.jsonl")) + [gen]:
        lines = p.read_bytes().split(b"\n")
        try:
            version = json.loads(lines[0]).get("version", 0)
        except ValueError:
            continue
        rows += [(ln, version if type(version) is int else 0) for ln in lines[1:] if b'"stream"' in ln]
    hostile = [[], [{"type": 3}], [{"type": "text-chunks", "time0": "9", "texts": ["a", "b"], "dt": [5]}],
               [{"type": "text-chunks", "time0": 10, "texts": ["a", "b", "c"], "dt": [2, "x"]}],
               [{"type": "chunk", "time": None, "chunk": {"type": "usage", "usage": {"inputTokens": 2}}}],
               [{"type": "chunk", "time": 7, "chunk": None}, {"type": "tool-call-chunks", "time0": 3, "args": [],
                                                              "dt": []}],
               [{"type": "reasoning-chunks", "time0": None, "texts": ["a", "b", "c"], "dt": [-1]},
                {"type": "chunk", "chunk": {"type": "finish", "reason": "stop"}}, {"type": None, "texts": ["x"]}]]
    for k, st in enumerate(hostile):
        rows.append((json.dumps({"type": "assistant/attempt", "seq": 5 + k, "time": 9,
                                 "data": {"turn": 1, "step": 1, "stream": st}}, separators=(",", ":")).encode(), 4))
    taken = 0
    hostile_taken = 0
    for raw, version in rows:
        it = lean_item(raw, version)
        if isinstance(it, Settlement):
            want = stream_summary(json.loads(raw)["data"]["stream"])
            want.pop("text")
            assert it.summ == want, raw[:200]
            taken += 1
            hostile_taken += b'"time":9,"data"' in raw
    assert taken >= 50 and hostile_taken >= 4


def test_saved_timeline_is_told_by_its_head(tmp_path: Path, monkeypatch):
    """The saved timeline: MAGIC, the head's length, the head (the log's identity, size, mtime, header hash),
    the spans, a CRC-32.  A hit gives the spans computed; a changed byte anywhere, a cut file, or garbage
    spans (even under a valid CRC) are misses, never wrong spans; a grown log is told by the head."""
    import zlib

    import msgspec

    from app.store.timeline_cache import MAGIC, cached_spans
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    p = tmp_path / "s" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(41, version=0), target_bytes=200_000)
    spans, how = cached_spans(open_reader(str(p)))
    assert how == "built" and spans == in_log_order(timeline(open_reader(str(p))))
    [f] = list((tmp_path / "cache").rglob("*.timeline"))
    blob = f.read_bytes()
    m = len(MAGIC)
    assert blob[:m] == MAGIC
    end = m + 4 + int.from_bytes(blob[m:m + 4], "little")
    head = msgspec.msgpack.decode(blob[m + 4:end])
    assert p.stat().st_size in head and str(p.resolve()) in head
    from app.log.query.timeline_table import SpanTable
    assert SpanTable.unpack(msgspec.msgpack.decode(blob[end:-4])) == spans          # (the spans by column)
    assert cached_spans(open_reader(str(p)), build=False) == (spans, "hit")

    def sealed(body: bytes) -> bytes:
        return body + zlib.crc32(body).to_bytes(4, "little")
    bad = [blob[:k] + bytes([blob[k] ^ 0x20]) + blob[k + 1:] for k in (3, m + 2, m + 6, end + 1, len(blob) // 2,
                                                                        len(blob) - 2)]
    bad += [blob[:-1], blob[:end], sealed(blob[:end] + b"\xc1" * 64), sealed(blob[:end] + blob[end:-4][:-3])]
    for b in bad:
        f.write_bytes(b)
        assert cached_spans(open_reader(str(p)), build=False) == (None, "miss")
    f.write_bytes(blob)
    with open(p, "ab") as fh:                      # the log grows: the head no longer matches
        fh.write(b'{"type":"session/title","seq":999999,"time":1,"data":{"title":"x"}}\n')
    assert cached_spans(open_reader(str(p)), build=False) == (None, "miss")
    assert cached_spans(open_reader(str(p)))[1] == "built"
    assert cached_spans(open_reader(str(p)))[1] == "hit"


def _turn_starts(p: Path) -> list[int]:
    data = p.read_bytes()
    out, at = [], data.find(b"\n") + 1
    while True:
        i = data.find(b'\n{"type":"turn/start",', at - 1)
        if i < 0:
            return out
        out.append(i + 1)
        at = i + 2


def test_two_parts_join_into_the_one_pass(tmp_path: Path):
    """Cut at every turn start of fixtures and generated logs (retries, failed attempts, compactions, tools left
    without results, mutants): the two parts join into exactly the spans of one pass, or say they cannot."""
    from app.log.query.timeline_split import merge, part, split_point
    from app.tools.hostile import jsonl_mutants
    logs = []
    for version in (0, 4):
        p = tmp_path / f"g{version}" / "session.jsonl"
        write_jsonl(str(p), SessionSynth(51 + version, version=version, p_retry=0.3), target_bytes=700_000)
        logs.append(p)
    lines = logs[0].read_bytes().split(b"\n")                 # a turn without its end, and a step without its end
    ends = [i for i, ln in enumerate(lines) if ln.startswith(b'{"type":"turn/end",')]
    steps = [i for i, ln in enumerate(lines) if ln.startswith(b'{"type":"step/end",')]
    for k, drop in enumerate((ends[len(ends) // 2], steps[len(steps) // 4])):
        p = tmp_path / f"open{k}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(b"\n".join(lines[:drop] + lines[drop + 1:]))
        logs.append(p)
    starts = [i for i, ln in enumerate(lines) if ln.startswith(b'{"type":"turn/start",')]
    t = json.loads(lines[starts[1]])["data"]["turn"]          # a chunk of the turn before, after a turn start
    k = next(i for i in range(starts[1], len(lines)) if b'chunk' in lines[i][:30] and
             b'"data":{"turn":%d,' % t in lines[i])
    p = tmp_path / "late" / "session.jsonl"
    p.parent.mkdir()
    p.write_bytes(b"\n".join(lines[:k] + [lines[k].replace(b'"data":{"turn":%d,' % t, b'"data":{"turn":%d,' % (t - 1))]
                             + lines[k + 1:]))
    logs.append(p)
    files = [p for p in sorted(FIXTURES.rglob("*.jsonl")) if b'\n{"type":"turn/start",' in p.read_bytes()]
    src = FIXTURES / "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
    for k, (_n, blob, _kept) in enumerate(jsonl_mutants(src.read_bytes(), seed=5, count=12)):
        p = tmp_path / f"m{k}" / "session.jsonl"
        p.parent.mkdir()
        p.write_bytes(blob)
        logs.append(p)
    joined = refused = 0
    for p in files[:40] + logs:
        r = open_reader(str(p))
        if r.fatal or r.envelope_free:
            continue
        whole = list(timeline(r))
        cuts = _turn_starts(p)
        for at in cuts[1:] if p in logs else cuts[1:: max(1, len(cuts) // 6)]:
            got = merge(part(r, None, at), part(r, at, None))
            if got is None:
                refused += 1
            else:
                assert got == whole, (p, at)
                joined += 1
        mid = split_point(r)
        assert mid is None or mid in cuts
    assert joined >= 30 and refused >= 3


def test_a_big_log_is_read_in_two_processes(tmp_path: Path, monkeypatch):
    """A raw JSONL log past the size: its second half is read by a ``timeline-part`` child while the first is
    read here; the spans (and the saved ones) are those of one pass.  A log that grew meanwhile: the child
    refuses, one pass is made."""
    from app.store import timeline_child
    from app.store.timeline_cache import cached_spans
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(timeline_child, "SPLIT_MIN", 0)
    monkeypatch.setattr(timeline_child, "PART_MIN", 0)
    monkeypatch.setattr(timeline_child, "SPLIT_WHEN_BUSY", True)
    p = tmp_path / "s" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(61, version=0, p_retry=0.2), target_bytes=400_000)
    r = open_reader(str(p))
    whole = list(timeline(r))
    assert timeline_child.split_spans(r) == whole
    assert cached_spans(open_reader(str(p))) == (in_log_order(whole), "built")
    assert cached_spans(open_reader(str(p)))[1] == "hit"
    import os
    monkeypatch.setattr(timeline_child, "SPLIT_WHEN_BUSY", False)       # no core free: one pass
    monkeypatch.setattr(os, "getloadavg", lambda: (float(os.cpu_count() or 1), 0.0, 0.0))
    assert timeline_child.split_spans(open_reader(str(p))) is None
    if (os.cpu_count() or 1) >= 2:
        monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.0, 0.0))
        assert timeline_child.split_spans(open_reader(str(p))) == whole
    r = open_reader(str(p))
    with open(p, "ab") as fh:
        fh.write(b'{"type":"session/title","seq":999999,"time":1,"data":{"title":"x"}}\n')
    assert timeline_child.split_spans(r) is None


def test_every_fixture_in_every_backend_reads_as_its_events(tmp_path: Path):
    """Every fixture (dsh v0, dsh-next v2-v4) as raw JSONL, as zstd frames and (every fifth v0 one: a store's
    writes are synced) as a SQLite store: the fast
    row pass gives exactly the spans of the exact event pass of the same reader."""
    from app.log.source.zstdframes import encode_session
    from app.store.sqlite_writer import jsonl_to_sqlite
    files = [p for p in sorted(FIXTURES.rglob("*.jsonl")) if "stream-json" not in p.name] + \
        sorted(NEXT.rglob("*.jsonl"))
    seen = {"jsonl": 0, "zstd": 0, "sqlite": 0}
    for k, p in enumerate(files):
        lines = p.read_bytes().split(b"\n")
        try:
            head = json.loads(lines[0])
        except ValueError:
            continue
        body = [ln for ln in lines[1:] if ln]
        z = tmp_path / f"z{k}" / "session.jsonl.zstd"
        z.parent.mkdir()
        z.write_bytes(encode_session(lines[0], [b"\n".join(body[i:i + 7]) + b"\n" for i in range(0, len(body), 7)]))
        readers = [("jsonl", str(p), None), ("zstd", str(z), None)]
        if isinstance(head, dict) and not head.get("version") and isinstance(head.get("id"), str) and k % 5 == 0:
            db = tmp_path / f"s{k}.db"
            try:
                jsonl_to_sqlite(p, db, batch_rows=5)
                readers.append(("sqlite", str(db), head["id"]))
            except Exception:                               # noqa: BLE001 - (a header the store cannot hold)
                pass
        for kind, path, sid in readers:
            r = open_reader(path, sid)
            if r.fatal or r.envelope_free:
                continue
            assert list(timeline(r)) == list(timeline(r.iter_events(logical=True))), (kind, p)
            seen[kind] += 1
    assert seen["jsonl"] >= 100 and seen["zstd"] >= 100 and seen["sqlite"] >= 10, seen
