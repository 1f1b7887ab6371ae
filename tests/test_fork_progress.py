"""Progress and Cancel of a fork (issue 29 item 2): ``fork(..., progress=)`` reports the copy then the verify
in bytes, monotonically to 100 %; a progress callback that raises (Cancel) stops the fork during the copy or
the verify and leaves nothing (no child, no temporary, no folder made for it) for JSONL and zstd sources of
a generated v4 log; the CLI shows the progress on a terminal only."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.log.index.reader import LogReader
from app.store.forking import fork
from app.tools.synth import SessionSynth, write_jsonl

from test_cli_progress import _run


class Stop(Exception):
    pass


@pytest.fixture(scope="module", params=["jsonl", "zstd"])
def source(request, tmp_path_factory) -> Path:
    from app.log.source.zstdframes import encode_session
    d = tmp_path_factory.mktemp("forkprog")
    raw = d / "gen" / "session.v4.jsonl"
    raw.parent.mkdir()
    write_jsonl(str(raw), SessionSynth(seed=29, version=4), target_bytes=3_000_000)
    if request.param == "jsonl":
        return raw
    head, body = raw.read_bytes().split(b"\n", 1)
    rows = body.split(b"\n")[:-1]
    p = d / "z" / "session.v4.jsonl.zstd"
    p.parent.mkdir()
    p.write_bytes(encode_session(head + b"\n", [b"\n".join(rows[i:i + 64]) + b"\n" for i in range(0, len(rows), 64)]))
    return p


def _anchor(parent: LogReader) -> int:
    pe = parent.events()
    ends = [e.seq for e in pe if e.type == "turn/end"]
    return next(e.seq for e in pe if e.type == "assistant/message" and e.seq > ends[-3])


def _left(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_progress_moves_monotonically_to_100(source, tmp_path):
    parent = LogReader.open(str(source))
    seen: list[tuple[int, int]] = []
    out = tmp_path / "out"
    res = fork(parent, _anchor(parent), out_store=str(out), progress=lambda d, t: seen.append((d, t)))
    assert os.path.isfile(res["child"])
    totals = {t for _d, t in seen}
    assert len(totals) == 1                                       # one total: the percent never jumps back
    total = totals.pop()
    done = [d for d, _t in seen]
    assert done == sorted(done) and done[-1] == total and done[0] < total // 2
    assert len(set(done)) > 2                                     # the copy and the verify both report
    assert total >= os.path.getsize(res["child"]) // 2            # bytes, not a count of steps


@pytest.mark.parametrize("stage", ["copy", "verify"])
def test_a_raising_progress_stops_the_fork_and_leaves_nothing(source, tmp_path, stage):
    parent = LogReader.open(str(source))
    out = tmp_path / "out"
    out.mkdir()
    seen: list[tuple[int, int]] = []

    def published() -> bool:
        return any(".jsonl" in p.name and not p.name.endswith(".tmp") for p in out.rglob("session*"))

    def progress(done: int, total: int) -> None:
        seen.append((done, total))
        if stage == "copy" and done > 0 and not published():        # copying: nothing published yet
            raise Stop()
        if stage == "verify" and published() and done < total:      # the child is out: being verified
            raise Stop()
    with pytest.raises(Exception) as e:
        fork(parent, _anchor(parent), out_store=str(out), progress=progress)
    assert isinstance(e.value, Stop) or isinstance(e.value.__cause__, Stop) or "Stop" in repr(e.value)
    assert seen and seen[-1][0] < seen[-1][1]                    # stopped before the end
    assert _left(out) == []                                      # no child, no temporary, no folder
    assert parent.source.revision() == LogReader.open(str(source)).source.revision()


def test_cli_fork_progress_on_a_terminal_only(source, tmp_path):
    if source.suffix == ".zstd":
        pytest.skip("(one source is enough for the terminal)")
    argv = ["fork", str(source), "--out"]
    rc, out_tty, err_tty = _run([*argv, str(tmp_path / "a")], tty=True)
    assert rc == 0, err_tty
    assert b"fork" in err_tty and b"100%" in err_tty and b"MB" in err_tty
    rc, out_pipe, err_pipe = _run([*argv, str(tmp_path / "b")], tty=False)
    assert rc == 0 and err_pipe == b"" and b"forked" in out_pipe
    rc, _out, err_quiet = _run([*argv, str(tmp_path / "c"), "--quiet"], tty=True)
    assert rc == 0 and b"%" not in err_quiet
