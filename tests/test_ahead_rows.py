"""Issue 29: the one background pass takes plain rows (chunks, step and turn boundaries, tool calls, splices,
retries) from their lean records (:mod:`app.log.query.ahead_rows`) instead of decoding them, and its products stay
EXACTLY equal to the separate builds -- on generated v0 and v4 logs, and on the same logs with every such row bent
just inside or just outside what the lean records accept."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.log.index.reader import LogReader
from app.log.query.ahead import build_ahead
from app.tools.synth import SessionSynth, write_jsonl
from test_ahead_pass import assert_same, separate

# (as app.log.query.ahead_rows.LEAN_TYPES: the plain rows the pass may take from their lean records)
LEAN_TYPES = frozenset({"assistant/chunk", "step/start", "step/end", "tool/call", "todo/write", "agent/inbox/spliced",
                        "llm/retry", "llm/retry-started", "turn/start", "turn/end", "assistant/attempt"})


@pytest.fixture(scope="module")
def base_logs(tmp_path_factory) -> dict[int, Path]:
    d = tmp_path_factory.mktemp("rows")
    out = {}
    for v in (0, 4):
        p = d / f"v{v}.jsonl"
        write_jsonl(str(p), SessionSynth(seed=8, version=v, context_window=8_000), target_bytes=600_000)
        out[v] = p
    return out


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


# each bends every plain row of a log the same way (some keep the row lean, most send it the exact way)
BENDS = {
    "extra-data-key": _set(("data", "zz"), 1), "extra-key": _set(("zz",), 1),
    "surface-op": _set(("surfaceOp",), "append"), "source-seqs": _set(("sourceEventSeqs",), [0]),
    "turn-str": _set(("data", "turn"), "1"), "turn-float": _set(("data", "turn"), 1.5),
    "turn-huge": _set(("data", "turn"), 2 ** 70), "turn-none": _set(("data", "turn"), None),
    "step-none": _set(("data", "step"), None), "no-time": _set(("time",), None, drop=True),
    "time-float": _set(("time",), 1.5), "ignorable": _set(("ignorable",), True),
    "name-empty": _set(("data", "name"), ""), "name-num": _set(("data", "name"), 7),
    "finish-error": _set(("data", "chunk"), {"type": "finish", "reason": {"kind": "error", "failure": {"x": 1}}}),
    "finish-str": _set(("data", "chunk"), {"type": "finish", "reason": "error"}),
    "chunk-untyped": _set(("data", "chunk"), {"reason": {"kind": "error"}}),
    "reason-list": _set(("data", "reason"), {"kind": ["error"]}),
    "reason-aborted": _set(("data", "reason"), {"kind": "aborted", "reason": "x"}),
    "reason-legacy": _set(("data", "reason"), {"kind": "error", "error": "boom"}),
    "retry-obj": _set(("data", "retry"), {"n": [1, {"a": None}]}),
    "seq-back": lambda row: row.__setitem__("seq", max(0, row.get("seq", 1) - 3)) if isinstance(row.get("seq"), int) else None,
    "big-number": _set(("data", "zz"), 10 ** 30), "inf-number": None,
    # (a log-only attempt's stream: failed, odd records, not records)
    "stream-failed": _set(("data", "stream"), [{"type": "chunk", "time": 1, "chunk": {"type": "text-delta"}},
                                               {"type": "chunk", "chunk": {"type": "finish", "reason": {
                                                   "kind": "error", "failure": {"message": "x"}}}}]),
    "stream-odd": _set(("data", "stream"), [{"type": "chunk", "chunk": None}, {"type": "text-chunks", "texts": "x"},
                                            {"type": "chunk", "chunk": {"type": "finish", "reason": "error"}},
                                            {"type": "chunk", "chunk": {"type": "usage", "usage": {"a": [1]}}},
                                            {"type": "reasoning-chunks", "texts": ["a", "b"], "dt": [1]}]),
    "stream-not-records": _set(("data", "stream"), [1, "x"]), "usage-str": _set(("data", "usage"), "x"),
}


def _bent(src: Path, dst: Path, name: str, every: int) -> int:
    """``src`` with one plain row in ``every`` bent by ``BENDS[name]``; -> rows bent."""
    out, n, k = [], 0, 0
    for line in src.read_bytes().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(row, dict) and row.get("type") in LEAN_TYPES:
            k += 1
            if k % every == 0:
                if name == "inf-number":
                    line = line[:-1] + b',"zz":1e999}'
                else:
                    BENDS[name](row)
                    line = json.dumps(row, separators=(",", ":"), ensure_ascii=False).encode()
                n += 1
        out.append(line)
    dst.write_bytes(b"\n".join(out) + b"\n")
    return n


@pytest.mark.parametrize("version", [0, 4])
def test_the_pass_equals_the_separate_builds_on_generated_logs(base_logs, version):
    from app.log.query.ahead_rows import LEAN_TYPES as taken
    assert taken == LEAN_TYPES
    assert_same(build_ahead(LogReader.open(str(base_logs[version]))), separate(LogReader.open(str(base_logs[version]))))


@pytest.mark.parametrize("name", sorted(BENDS))
@pytest.mark.parametrize("version", [0, 4])
def test_the_pass_equals_the_separate_builds_on_bent_rows(base_logs, tmp_path, version, name):
    p = tmp_path / "bent.jsonl"
    assert _bent(base_logs[version], p, name, every=3 if name != "seq-back" else 15) > 5
    assert_same(build_ahead(LogReader.open(str(p))), separate(LogReader.open(str(p))))


@pytest.mark.parametrize("version", [0, 4])
def test_the_pass_decodes_few_plain_rows(base_logs, version, monkeypatch):
    """Most plain rows never reach the codec (the old pass decoded every row that is not a clean packed one)."""
    from app.log.format.codec import RowCodec
    seen: dict[str, int] = {}
    real = RowCodec.decode_row

    def counting(self, raw, *a, **k):
        t = raw[9:raw.find(b'"', 9)].decode()
        seen[t] = seen.get(t, 0) + 1
        return real(self, raw, *a, **k)
    monkeypatch.setattr(RowCodec, "decode_row", counting)
    build_ahead(LogReader.open(str(base_logs[version])))
    plain = {t: n for t, n in seen.items() if t in LEAN_TYPES}
    rows = {}
    for line in base_logs[version].read_bytes().splitlines():
        t = json.loads(line).get("type")
        rows[t] = rows.get(t, 0) + 1
    assert sum(n for t, n in rows.items() if t in LEAN_TYPES) > 50 and rows.get("tool/call", 0) > 10
    for t in ("assistant/chunk", "tool/call"):      # (taken lean in every version)
        assert plain.get(t, 0) == 0, (t, plain, rows.get(t))
    if version >= 3:                                  # (no legacy edge reads any of them)
        assert sum(plain.values()) * 20 < sum(n for t, n in rows.items() if t in LEAN_TYPES), plain
