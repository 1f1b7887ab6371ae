"""Issue 29: the one background pass takes surface appends (``assistant/message``, ``tool/result``: most of a long
log's bytes) from their lean records too (:data:`app.log.query.ahead_rows.SURFACE_TYPES`), keeping each node's
event as its stored row (:class:`~app.log.query.ahead_rows.RowEvent`).  Its products stay EXACTLY equal to the
pass with every row decoded whole (``build_ahead(fast=False)``) and to the separate builds -- on every fixture,
generated v0-v4 logs, hostile and mutated logs, and logs with every surface row bent just inside or just outside
what the lean records accept; and the requests derived from the checkpoints are the same."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.log.fold.checkpoints import request_at
from app.log.index.reader import LogReader
from app.log.source.sources import RawJsonlSource
from app.log.query import ahead_rows
from app.log.query.ahead import build_ahead
from app.tools.hostile import hostile_session, jsonl_mutants
from app.tools.synth import SessionSynth, write_jsonl
from fixtures_util import REPO, session_files
from test_ahead_pass import _surface_state, assert_same, plain, separate

NEXT = REPO.parent / "shared" / "fixtures" / "dsh-next"
SURFACE = ("assistant/message", "tool/result", "user/message")


def _fast_equals_exact(path) -> None:
    """The pass equals the pass that decodes every row, and the separate builds."""
    fast = build_ahead(LogReader.open(str(path)))
    slow = build_ahead(LogReader.open(str(path)), fast=False)
    assert fast.complete == slow.complete
    assert fast.checkpoints.to_builtins() == slow.checkpoints.to_builtins()
    assert _surface_state(fast.surface) == _surface_state(slow.surface)
    assert (fast.surface_end.pos, fast.surface_end.line) == (slow.surface_end.pos, slow.surface_end.line)
    assert plain(fast.outline) == plain(slow.outline)
    assert_same(fast, separate(LogReader.open(str(path))))


@pytest.fixture(scope="module")
def base_logs(tmp_path_factory) -> dict[int, Path]:
    d = tmp_path_factory.mktemp("surface")
    out = {}
    for v in (0, 4):
        p = d / f"v{v}.jsonl"
        write_jsonl(str(p), SessionSynth(seed=11, version=v, context_window=8_000), target_bytes=500_000)
        out[v] = p
    out[3] = max(NEXT.rglob("*.v3.jsonl"), key=lambda q: q.stat().st_size)     # (the generator writes v0 and v4)
    return out


def test_every_fixture_fast_and_exact():
    cases = session_files() + sorted(NEXT.rglob("*.v[1234].jsonl"))
    assert len(cases) > 60
    for p in cases:
        _fast_equals_exact(p)


@pytest.mark.parametrize("version", [0, 4])
def test_generated_logs_fast_and_exact(base_logs, version):
    _fast_equals_exact(base_logs[version])


def _set(path: tuple, value, drop: bool = False):
    def bend(row: dict) -> None:
        d = row
        for k in path[:-1]:
            if not isinstance(d.get(k), dict):
                return
            d = d[k]
        if drop:
            d.pop(path[-1], None)
        else:
            d[path[-1]] = value
    return bend


def _seq_rel(key: str, make):
    def bend(row: dict) -> None:
        if isinstance(row.get("seq"), int):
            row[key] = make(row["seq"])
    return bend


_FINISH = {"type": "chunk", "time": 1, "chunk": {"type": "finish", "reason": {"kind": "error", "failure": {"c": 1}}}}
# each bends every third surface row of a log the same way (some keep the row lean, most send it the exact way)
BENDS = {
    "extra-key": _set(("zz",), 1), "extra-data-key": _set(("data", "zz"), 1),
    "extra-message-key": _set(("data", "message", "zz"), 1),
    "error-obj": _set(("data", "error"), {"kind": "x"}), "error-str": _set(("data", "error"), "boom"),
    "error-none": _set(("data", "error"), None),
    "interrupted": _set(("data", "interrupted"), True), "interrupted-str": _set(("data", "interrupted"), "yes"),
    "content-empty": _set(("data", "message", "content"), []),
    "content-none": _set(("data", "message", "content"), None),
    "content-junk": _set(("data", "message", "content"), [1, {"type": "text"}]),
    "role-num": _set(("data", "message", "role"), 5), "no-message": _set(("data", "message"), None, drop=True),
    "ses-empty": _set(("sourceEventSeqs",), []), "ses-str": _set(("sourceEventSeqs",), ["1"]),
    "ses-none": _set(("sourceEventSeqs",), None),
    "ses-ahead": _seq_rel("sourceEventSeqs", lambda s: [s + 5]),
    "ses-self": _seq_rel("sourceEventSeqs", lambda s: [s]),
    "ses-dup": _seq_rel("sourceEventSeqs", lambda s: [max(0, s - 2)] * 2),
    "ses-back": _seq_rel("sourceEventSeqs", lambda s: [max(0, s - 3), max(0, s - 1)]),
    "op-replace": _seq_rel("surfaceOp", lambda s: {"op": "replace", "start": max(0, s - 2), "end": max(0, s - 1)}),
    "op-none": _set(("surfaceOp",), None, drop=True), "op-bad": _set(("surfaceOp",), "prepend"),
    "stream-drop": _set(("data", "stream"), None, drop=True), "stream-empty": _set(("data", "stream"), []),
    "stream-error": _set(("data", "stream"), [_FINISH]), "stream-junk": _set(("data", "stream"), [1, "x", None]),
    "stream-finish-str": _set(("data", "stream"), [{"type": "chunk", "time": 1, "chunk": {"type": "finish",
                                                                                         "reason": "stop"}}]),
    "usage-str": _set(("data", "usage"), {"inputTokens": "1"}),
    "usage-obj": _set(("data", "usage"), {"inputTokens": 3, "outputTokens": 4}),
    "turn-str": _set(("data", "turn"), "1"), "step-none": _set(("data", "step"), None),
    "ignorable": _set(("ignorable",), True), "time-float": _set(("time",), 1.5),
    "seq-back": lambda row: row.__setitem__("seq", max(0, row.get("seq", 1) - 3)) if isinstance(row.get("seq"), int)
    else None,
    "inf-number": None, "escaped-key": None,
    # (a user message: its payload is the message)
    "source-steer": _set(("data", "source"), {"kind": "steer"}), "source-none": _set(("data", "source"), None),
    "source-user": _set(("data", "source"), {"kind": "user", "x": 1}), "source-str": _set(("data", "source"), "user"),
    "content-str": _set(("data", "content"), "  hello\n world"), "user-content-empty": _set(("data", "content"), []),
    "content-blank-first": _set(("data", "content"), [{"type": "text", "text": " \n "}, {"type": "text", "text": "b"},
                                                      {"type": "image", "mediaType": "image/png", "data": "eA=="}]),
    "content-image": _set(("data", "content"), [{"type": "image", "mediaType": "image/png", "data": "eA=="}]),
    "user-no-id": _set(("data", "id"), None, drop=True), "user-id-num": _set(("data", "id"), 3),
    "user-role": _set(("data", "role"), "assistant"),
}


def _bent(src: Path, dst: Path, name: str, every: int) -> int:
    """``src`` with one surface row in ``every`` bent by ``BENDS[name]``; -> rows bent."""
    out, n, k = [], 0, 0
    for line in src.read_bytes().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(row, dict) and row.get("type") in SURFACE:
            k += 1
            if k % every == 0:
                if name == "inf-number":
                    line = line[:-1] + b',"zz":1e999}'
                elif name == "escaped-key":        # (the same key to a JSON reader; not to the surface index's needles)
                    line = line.replace(b'"surfaceOp"', b'"surface\\u004fp"')
                else:
                    BENDS[name](row)
                    line = json.dumps(row, separators=(",", ":"), ensure_ascii=False).encode()
                n += 1
        out.append(line)
    dst.write_bytes(b"\n".join(out) + b"\n")
    return n


@pytest.mark.parametrize("name", sorted(BENDS))
@pytest.mark.parametrize("version", [3, 4])
def test_bent_surface_rows_fast_and_exact(base_logs, tmp_path, version, name):
    p = tmp_path / "bent.jsonl"
    assert _bent(base_logs[version], p, name, every=(3 if name != "seq-back" else 15) if version == 4 else 2) > 5
    _fast_equals_exact(p)


def test_hostile_and_mutated_logs_fast_and_exact(base_logs, tmp_path):
    data = base_logs[4].read_bytes()
    lines = data.splitlines()
    h = tmp_path / "hostile.jsonl"
    h.write_bytes(hostile_session([ln for ln in lines if ln], seed=5))
    _fast_equals_exact(h)
    for k, (_name, blob, _kept) in enumerate(jsonl_mutants(data, seed=9, count=20)):
        m = tmp_path / f"mutant{k}.jsonl"
        m.write_bytes(blob)
        _fast_equals_exact(m)


def test_requests_from_fast_checkpoints(base_logs):
    """The request at a spread of seqs, derived from the pass's checkpoints, equals the one from the checkpoints of
    the pass that decodes every row (small checkpoint spacing: every request starts from a restored point)."""
    def reader():
        r = LogReader(RawJsonlSource(str(base_logs[4]), block=1 << 14))
        r.build_index()
        return r
    fast = build_ahead(reader(), every=1 << 15).checkpoints
    slow = build_ahead(reader(), every=1 << 15, fast=False).checkpoints
    assert len(fast.points) > 5
    r = reader()
    msgs = [json.loads(ln)["seq"] for ln in base_logs[4].read_bytes().splitlines()
            if b'"type":"assistant/message"' in ln[:40]]
    for seq in msgs[len(msgs) // 20::len(msgs) // 10]:            # (a message's own dispatch)
        got = request_at(r, seq, fast)
        assert got == request_at(r, seq, slow) and got["request"]


def test_surface_rows_are_not_decoded_whole(base_logs, monkeypatch):
    """On a v4 log the pass decodes no clean append of an assistant message, a tool result or a user message
    (the old pass decoded each; a replacement still goes the exact way); ``fast=False`` decodes them all."""
    from app.log.format.codec import RowCodec
    seen: dict[str, int] = {}
    real = RowCodec.decode_row

    def counting(self, raw, *a, **k):
        t = raw[9:raw.find(b'"', 9)].decode()
        seen[t] = seen.get(t, 0) + 1
        return real(self, raw, *a, **k)
    monkeypatch.setattr(RowCodec, "decode_row", counting)
    rows: dict[str, int] = {}
    other: dict[str, int] = {}
    for line in base_logs[4].read_bytes().splitlines():
        row = json.loads(line)
        t = row.get("type")
        rows[t] = rows.get(t, 0) + 1
        if t in SURFACE and row.get("surfaceOp") != "append":
            other[t] = other.get(t, 0) + 1
    assert all(rows.get(t, 0) > 20 for t in SURFACE) and sum(other.values()) < 50
    build_ahead(LogReader.open(str(base_logs[4])))
    assert {t: seen.get(t, 0) for t in SURFACE} == {t: other.get(t, 0) for t in SURFACE}
    seen.clear()
    build_ahead(LogReader.open(str(base_logs[4])), fast=False)
    assert {t: seen.get(t, 0) for t in SURFACE} == {t: rows[t] for t in SURFACE}


def test_an_image_offload_reads_its_lean_node_back(tmp_path, monkeypatch):
    """A v4 tool result carrying images, taken lean, then offloaded: the checkpoints' fold reads the node's row back
    (once) for its projection, and the products equal the exact pass's."""
    decoded = []
    real = ahead_rows.RowEvent.__getattr__

    def spy(self, name):
        decoded.append(self.seq)
        return real(self, name)
    monkeypatch.setattr(ahead_rows.RowEvent, "__getattr__", spy)
    synth = SessionSynth(seed=2, version=4, context_window=8_000)
    lines = [json.dumps(synth.header(), separators=(",", ":"))]
    seq = 0

    def row(t, data, **env):
        nonlocal seq
        r = {"type": t, "seq": seq, "time": 1_000 + seq, "data": data, **env}
        seq += 1
        lines.append(json.dumps(r, separators=(",", ":")))
        return r["seq"]
    img = {"type": "image", "mediaType": "image/png", "data": "aGVsbG8="}
    row("turn/start", {"turn": 1})
    row("user/message", {"role": "user", "content": [{"type": "text", "text": "look"}], "id": "u1",
                         "source": {"kind": "user"}}, surfaceOp="append")
    row("step/start", {"turn": 1, "step": 1})
    res = row("tool/result", {"turn": 1, "step": 1, "message": {"role": "tool", "toolCallId": "c1",
                                                                 "content": [img, {"type": "text", "text": "x"}, img],
                                                                 "id": "t1"}}, surfaceOp="append")
    row("image/offload", {"targets": [{"seq": res, "imageIndexes": [1]}]})
    for k in range(60):                         # (later points: after the offload)
        row("step/end" if k % 2 else "step/start", {"turn": 1, "step": 2 + k // 2})
    row("turn/end", {"turn": 1, "reason": {"kind": "stop"}})
    p = tmp_path / "offload.v4.jsonl"
    p.write_text("\n".join(lines) + "\n")
    _fast_equals_exact(p)
    assert decoded and set(decoded) == {res}
    small = LogReader(RawJsonlSource(str(p), block=1 << 10))
    small.build_index()
    got = build_ahead(small, every=1).checkpoints.points
    assert len(got) > 3 and got[-1].offloaded == [(res, [1])]
