"""Issue 27 item 5: a legal packed row of any member count is read fully, its members streamed in bounded memory.
dsh's JSONL packer has no maximum run, so one row may hold 200,000 members: the event faces read every member
(a batch at a time, app/log/format/packedstream.py), the same events the ordinary expansion builds; the page view
still shows such a row as one stored row, said to be over Session Lens's limit (never corrupt, never refused)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from app.log.format import packedstream
from app.log.format.codec import expand_packed
from app.log.index.reader import LogReader
from app.log.query import analysis

from fixtures_util import REPO, ev, write_log

N = 200_000


def big_log(tmp: Path, n: int = N, tag: str = "text-chunks") -> Path:
    text = [f"w{i} \u00e9\"" for i in range(n)]
    data: dict = {"turn": 1, "step": 1, "index": 0}
    if tag == "tool-call-chunks":
        data.update(id="c1", name="read", args=text)
    else:
        data["texts"] = text
    data["dt"] = [i % 3 for i in range(n - 1)]
    rows = [ev(0, "turn/start", {"turn": 1}), ev(1, "step/start", {"turn": 1, "step": 1}),
            ev(2, "request/header", {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}),
            {"type": tag, "seq0": 3, "time0": 100, "data": data},
            ev(3 + n, "step/end", {"turn": 1, "step": 1}),
            ev(4 + n, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})]
    return write_log(tmp / tag / "session.jsonl", rows)


def test_every_member_of_a_200k_row_is_read_in_bounded_memory(tmp_path):
    p = big_log(tmp_path)
    assert p.stat().st_size > 2 * packedstream.STREAM_BYTES
    # in a fresh interpreter: the peak memory the event stream adds, beside the row's own bytes (about 5 MB)
    code = f"""
import resource, sys
sys.path.insert(0, {str(REPO)!r})
from app.log.index.reader import LogReader
r = LogReader.open({str(p)!r})
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
n, last, probe = 0, None, {{}}
for e in r.iter_events():
    n += 1
    if e.seq in (3, 4, 4099, 199_999, {N + 2}):
        probe[e.seq] = [e.time, e.data["chunk"]["text"], e.member]
    last = e.seq
print(n, last, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024, probe)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True).stdout
    n, last, grew, probe = out.split(" ", 3)
    assert (int(n), int(last)) == (N + 5, N + 4)
    assert int(grew) < 48, f"the event stream grew the peak by {grew} MB"      # all 200k events at once: ~150 MB
    # member k: seq 3 + k, time 100 + sum(dt[:k]) with dt[i] = i % 3, its own text
    want = {s: [100 + sum(i % 3 for i in range(s - 3)), f"w{s - 3} \u00e9\"", s - 3] for s in (3, 4, 4099, 199_999, N + 2)}
    assert eval(probe) == want          # noqa: S307 - (our own child's repr of ints and strings)


def test_the_streamed_events_are_the_ordinary_expansions(tmp_path, monkeypatch):
    """Below the member limit, the stream and the ordinary expansion give the same events (all three tags)."""
    monkeypatch.setattr(packedstream, "STREAM_BYTES", 0)
    for tag in ("text-chunks", "reasoning-chunks", "tool-call-chunks"):
        for n in (3, 4096, 4097, 9001):
            raw = big_log(tmp_path / f"{n}", n, tag).read_bytes().split(b"\n")[4]
            want = [(e.seq, e.time, e.data) for e in expand_packed(json.loads(raw))]
            ps = packedstream.open_stream(raw)
            assert ps is not None and ps.n == n
            assert [(e.seq, e.time, e.data) for e in ps.events()] == want, (tag, n)


def test_a_malformed_big_row_is_bad_packed_not_streamed(tmp_path):
    p = big_log(tmp_path, 150_000)
    lines = p.read_bytes().split(b"\n")
    lines[4] = lines[4].replace(b'"dt":[0,', b'"dt":[0.5,', 1)        # a non-integer dt: the whole row is bad
    p.write_bytes(b"\n".join(lines))
    r = LogReader.open(str(p))
    items = list(r.iter_items())
    bad = [it for it in items if not hasattr(it, "seq")]
    assert len(bad) == 1 and bad[0].kind == "bad-packed" and "dt must hold integers" in bad[0].reason
    assert sum(1 for it in items if hasattr(it, "seq")) == 5


def test_inspect_and_the_page_view_say_it_is_ours_not_dshs(tmp_path):
    p = big_log(tmp_path)
    info = analysis.inspect(LogReader.open(str(p)))
    assert info["events"] == N + 5 and info["dshWouldRefuse"] is False
    over = [x for x in info["problems"] if x.startswith("over-limit")]
    assert len(over) == 1 and "the event faces read them a batch at a time" in over[0]


def test_the_logical_export_holds_every_member(tmp_path):
    """The logical JSONL export (events, one per line) writes every member of a 200,000-member row."""
    from app.cli.main import main
    import contextlib
    import io
    p = big_log(tmp_path)
    out = tmp_path / "logical.jsonl"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["export", str(p), "--format", "logical", "--out", str(out)]) == 0
    seqs = [json.loads(line)["seq"] for line in out.read_bytes().split(b"\n")[1:] if line]
    assert seqs == list(range(N + 5))
