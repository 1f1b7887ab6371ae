"""The one child-process launcher (app/store/childproc.py): every worker kind resolves to a
callable entry point, runs in its own process through ``python -m app --session-lens-worker``,
and an unknown kind is refused with exit code 2."""
from __future__ import annotations

import importlib
import pickle
import subprocess

import pytest

from app.store import childproc
from app.store.childproc import WORKERS, child_env, worker_argv
from app.store.indexer import build_index_isolated
from tests.fixtures_util import FIXTURES


@pytest.mark.parametrize("kind", sorted(WORKERS))
def test_every_worker_kind_names_a_callable_entry(kind):
    module, func = WORKERS[kind].split(":")
    assert callable(getattr(importlib.import_module(module), func))
    argv = worker_argv(kind, "x")
    assert argv[-3:] == [childproc.WORKER_FLAG, kind, "x"]


def test_an_unknown_kind_is_refused():
    with pytest.raises(KeyError):
        worker_argv("nope")
    r = subprocess.run(worker_argv("index")[:-1] + ["nope"], capture_output=True, text=True, env=child_env(),
                       timeout=60)
    assert r.returncode == 2 and "unknown worker kind" in r.stderr


def test_the_index_worker_runs_in_a_child_process(monkeypatch, tmp_path):
    """The seq index of a real fixture, built by the index worker in another process, equals the
    in-process one; the launcher's command is the one that ran (its pid differs from ours)."""
    started: list[list[str]] = []
    real = childproc.subprocess.Popen

    def popen(argv, *a, **kw):
        started.append(list(argv))
        return real(argv, *a, **kw)
    monkeypatch.setattr(childproc.subprocess, "Popen", popen)
    monkeypatch.delenv("SESSION_LENS_INDEX_INPROC", raising=False)
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))      # no cached index to answer
    path = next(p for p in sorted(FIXTURES.rglob("session.jsonl")))
    idx, mode = build_index_isolated(str(path), None)
    assert mode == "process" and started and started[0][-4:-2] == [childproc.WORKER_FLAG, "index"]
    assert idx is not None and idx.events > 0 and idx.last >= 0


def test_the_scan_worker_answers_over_the_pipe():
    """A whole-log outline pass through the scan worker answers ``done`` on a real fixture."""
    path = next(p for p in sorted(FIXTURES.rglob("session.jsonl")))
    r = subprocess.run(worker_argv("scan"), input=pickle.dumps(("outline", str(path), None, {})),
                       capture_output=True, env=child_env(), timeout=120)
    stream = __import__("io").BytesIO(r.stdout)
    last = None
    while True:
        try:
            last = pickle.load(stream)
        except EOFError:
            break
    assert last is not None and last[0] == "done", r.stderr.decode()[-400:]
