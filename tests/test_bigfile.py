"""bench/bigfile.py: a log extended by re-sequenced copies of a synth base's body is a valid log."""
from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

from app.log.analysis import inspect
from app.log.reader import LogReader

_spec = importlib.util.spec_from_file_location("bigfile", Path(__file__).resolve().parents[1] / "bench" / "bigfile.py")
assert _spec is not None and _spec.loader is not None
bigfile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bigfile)


@pytest.mark.parametrize("version", [0, 4])
def test_extended_log_is_valid(tmp_path, version):
    base = tmp_path / "base.jsonl"
    meta = bigfile.make_base(base, 5 << 20, version)
    out = tmp_path / "big.jsonl"
    st = bigfile.extend(base, out, 14 << 20)
    assert st["copies"] >= 2 and out.stat().st_size >= 14 << 20
    raw = out.read_bytes()
    assert raw.startswith(base.read_bytes())
    assert raw.endswith(b"\n") and b'"type":"turn/end"' in raw[raw.rstrip(b"\n").rfind(b"\n"):]

    base_info = inspect(LogReader.open(str(base)))
    info = inspect(LogReader.open(str(out)))
    assert base_info["problems"] == [] and info["problems"] == []
    assert info["events"] == info["lastSeq"] + 1 > 2 * base_info["events"] - meta["start"]
    assert info["turns"] > base_info["turns"] + meta["endTurn"] - meta["startTurn"]
    assert not info["openTail"] and info["tornRows"] == 0
    assert LogReader.open(str(out)).build_index().events == info["events"]

    # the first copy starts where the base ends: the seq after its last, a later time, the next turn
    first = json.loads(raw[len(base.read_bytes()):].split(b"\n", 1)[0])
    assert first["seq"] == meta["end"] and first["time"] == meta["endTime"]
    turns = [int(t) for t in re.findall(rb'"type":"turn/start","seq":\d+,"time":\d+,"data":\{"turn":(\d+)', raw)]
    assert turns == list(range(1, len(turns) + 1))
    # ids stay unique: tool calls and user messages
    calls = re.findall(rb'"type":"tool/call","seq":\d+,"time":\d+,"data":\{[^\n]*?"callId":"([^"]+)"', raw)
    assert len(calls) > 100 and len(set(calls)) == len(calls)
    msgs = re.findall(rb'"type":"user/message"[^\n]*"role":"user","id":"([^"]+)"', raw)
    assert len(msgs) > 10 and len(set(msgs)) == len(msgs)


def test_messages_memory_does_not_grow_with_the_log(tmp_path):
    """v4 ``messages`` (the whole surface fold) keeps only the surface: four times the log, not four
    times the memory (before: every surface event ever folded was kept, 515 MB for a 100 MB log)."""
    import tracemalloc

    from app.log.analysis import messages
    base = tmp_path / "base.jsonl"
    bigfile.make_base(base, 5 << 20, 4)
    big = tmp_path / "big.jsonl"
    bigfile.extend(base, big, 20 << 20)
    peaks = {}
    for p in (base, big):
        tracemalloc.start()
        got = messages(LogReader.open(str(p)))
        peaks[p.name] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert got and got[0]["role"] == "system"
    assert big.stat().st_size > 4 * base.stat().st_size
    assert peaks["big.jsonl"] < 1.5 * peaks["base.jsonl"], peaks
