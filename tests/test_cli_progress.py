"""Progress of long commands on stderr: shown on a terminal (a pseudo-terminal here), never when stderr is
piped, never with ``--quiet``; the answer on stdout is the same either way."""
from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest

from app.store.eta import Eta, fmt_left
from app.tools.synth import SessionSynth, write_jsonl

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def log(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("cliprog") / "session.jsonl"
    write_jsonl(str(p), SessionSynth(21), target_bytes=2 << 20)
    return p


def _run(argv: list[str], tty: bool) -> tuple[int, bytes, bytes]:
    """Run ``python -m app ARGV`` with stderr on a pseudo-terminal (``tty``) or a pipe; (rc, stdout, stderr)."""
    cmd = [sys.executable, "-m", "app", *argv]
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if not tty:
        p = subprocess.run(cmd, capture_output=True, cwd=REPO, env=env, timeout=120)
        return p.returncode, p.stdout, p.stderr
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, cwd=REPO, env=env)
    os.close(slave)
    err = b""
    while True:
        r, _, _ = select.select([master], [], [], 120)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:                 # EIO: the child closed the terminal
            break
        if not chunk:
            break
        err += chunk
    out = proc.stdout.read() if proc.stdout else b""
    rc = proc.wait(timeout=120)
    os.close(master)
    return rc, out, err


@pytest.mark.parametrize("argv", [["export", "{log}", "--format", "html", "--out", "{out}"],
                                  ["find", "{log}", "the"],
                                  ["index", "{log}"]])
def test_progress_on_a_terminal_only(log, tmp_path, argv):
    def args(k: int, *extra: str) -> list[str]:
        return [a.format(log=log, out=tmp_path / f"o{k}.html") for a in argv] + list(extra)
    rc, out_tty, err_tty = _run(args(1), tty=True)
    assert rc == 0, err_tty
    assert b"%" in err_tty and b"100%" in err_tty and argv[0].encode() in err_tty
    rc, out_pipe, err_pipe = _run(args(2), tty=False)
    assert rc == 0 and err_pipe == b""
    rc, out_quiet, err_quiet = _run(args(3, "--quiet"), tty=True)
    assert rc == 0 and b"%" not in err_quiet
    if argv[0] == "find":
        assert out_tty == out_pipe == out_quiet and b"match" in out_tty       # the answer never changes


def test_eta_percent_and_time_left():
    now = [0.0]
    e = Eta(clock=lambda: now[0])
    e.update(0, 1000)
    assert e.percent == 0 and e.seconds_left() is None          # no estimate at the start
    for k in range(1, 6):
        now[0] = k * 0.2
        e.update(k * 100, 1000)
    assert e.percent == 50
    left = e.seconds_left()
    assert left is not None and 0.8 < left < 1.2                # 500 bytes to go at 500 bytes/s
    e.update(300, 1000)                                         # never goes back
    assert e.percent == 50
    assert fmt_left(1.0) == "about 1 s left" and fmt_left(None) == ""
