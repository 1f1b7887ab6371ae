"""A fork server for ``hardening_probe.py``: the same probe, each run in a fresh process, without paying
Python's start-up and the app's imports once per run.

The server imports the app's modules once (reading no log), then for each request forks a child that runs
exactly what ``hardening_probe.py FACES PATH CAP EXTRA…`` runs (its ``main``, the address-space cap set in
the child before any face), its stdout and stderr going to the request's own pipe and file, and killed by
SIGALRM at the time cap.  The child starts from the untouched server each time: nothing one run reads or
caches reaches the next.  Its address space and peak RSS include the preloaded modules, as the probe's own
do once it has imported them, so the caps hold it no looser.

Used by the fuzz campaign (tests/test_hardening.py: run_campaign).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PRELOAD = ("app.cli.main", "app.store.faces", "app.store.export", "app.store.export_rows", "app.store.forking",
           "app.log.index.reader")


def _serve() -> int:
    import importlib
    import hardening_probe
    for m in PRELOAD:
        importlib.import_module(m)
    reply = os.fdopen(os.dup(1), "w")
    requests = sys.stdin
    for line in requests:
        faces, path, cap, extra, timeout = json.loads(line)
        r, w = os.pipe()
        with tempfile.TemporaryFile() as errf:
            pid = os.fork()
            if pid == 0:                                  # the child: the probe, as its own process would run
                code = 1
                try:
                    os.close(r)
                    os.dup2(w, 1)
                    os.dup2(errf.fileno(), 2)
                    signal.alarm(int(timeout))
                    sys.argv = ["hardening_probe.py", faces, path, str(cap), *extra]
                    code = hardening_probe.main()
                    sys.__stdout__.flush()
                except BaseException:                     # noqa: BLE001 - reported as the probe's crash
                    import traceback
                    traceback.print_exc()
                finally:
                    try:
                        sys.stderr.flush()
                    finally:
                        os._exit(code)
            os.close(w)
            with os.fdopen(r, "rb") as rf:
                out = rf.read()
            _, status = os.waitpid(pid, 0)
            errf.seek(0)
            err = errf.read()
        rc = os.waitstatus_to_exitcode(status)
        reply.write(json.dumps({"rc": rc, "stdout": out.decode(errors="replace"),
                                "stderr": err.decode(errors="replace")}) + "\n")
        reply.flush()
    return 0


class ProbeServer:
    """The client: ``probe_many`` as tests/test_hardening.py's, answered by one forking server process."""

    def __init__(self, repo_root: Path):
        env = dict(os.environ, PYTHONPATH=str(repo_root) + os.pathsep + str(HERE))
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve())], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=repo_root, env=env)

    def probe_many(self, faces, path, *extra, cap: int, timeout: int = 60) -> list:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps([",".join(faces), str(path), cap, [str(x) for x in extra], timeout]) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, "the probe server stopped"
        res = json.loads(line)
        assert res["rc"] == 0, (res["rc"], res["stderr"][-2000:])
        return [json.loads(x) for x in res["stdout"].strip().splitlines()]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)

    def __enter__(self) -> ProbeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            self.proc.kill()
        self.close()


if __name__ == "__main__":
    sys.exit(_serve())
