"""Every error path of the command line exits with its documented code (app/cli/errors.py, README).

The codes come from the error's class (one hierarchy, ``CliError.exit_code``; the core's and the store's
errors matched by class in ``expected_errors``), never from its name: a renamed class breaks an import,
not an exit code.  Each expected error class is raised through ``main`` by a command of the test's own;
real refusals (missing file, FIFO, folder named like a session, bad option, an existing fork id, an
unknown worker) run the real CLI; and an ``ast`` walk checks that the CLI raises only its own errors.
"""
from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main as cli
from app.cli.errors import (EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_REFUSED, CliError, InputError,
                            InternalError, UsageError, WriteError, exit_code_of, expected_errors)

from conftest import REPO_ROOT, fixture

MULTI = "examples/acp-agent/tests/snapshots/multi-turn/session.jsonl"


def _instance(cls: type[BaseException]) -> BaseException:
    try:
        return cls("a refused input")
    except TypeError:
        return cls("CODE", "a refused input")


def _run_raising(monkeypatch, capsys, exc: BaseException) -> tuple[int, str]:
    def run(_args):
        raise exc
    monkeypatch.setitem(cli.COMMANDS, "boom", ("raises", lambda p: None, run))
    code = cli.main(["boom"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("cls", expected_errors(), ids=lambda c: c.__name__)
def test_each_expected_core_and_store_error_exits_2(cls, monkeypatch, capsys):
    code, err = _run_raising(monkeypatch, capsys, _instance(cls))
    assert code == EXIT_REFUSED == 2
    assert err.count("\n") == 1 and err.startswith("session-lens boom: ") and "internal error" not in err


@pytest.mark.parametrize("exc, code", [(CliError("x"), 2), (UsageError("x"), 2), (InputError("x"), 2),
                                       (WriteError("x"), 2), (InternalError("x"), 3), (RuntimeError("x"), 3),
                                       (KeyError("x"), 3), (AssertionError("x"), 3)],
                         ids=lambda v: type(v).__name__ if isinstance(v, BaseException) else str(v))
def test_cli_errors_carry_their_code_and_the_rest_is_internal(exc, code, monkeypatch, capsys):
    got, err = _run_raising(monkeypatch, capsys, exc)
    assert got == code == exit_code_of(exc)
    assert err.count("\n") == 1
    assert ("internal error" in err) == (code == EXIT_INTERNAL)
    if code == EXIT_INTERNAL and not isinstance(exc, CliError):
        assert f"internal error: {type(exc).__name__}" in err


def test_interrupt_and_a_closed_pipe(monkeypatch, capsys):
    assert _run_raising(monkeypatch, capsys, KeyboardInterrupt())[0] == EXIT_INTERRUPTED == 130
    assert _run_raising(monkeypatch, capsys, BrokenPipeError())[0] == EXIT_OK == 0


def test_a_renamed_store_error_keeps_its_code(monkeypatch, capsys):
    """The old code matched ``type(e).__name__`` against a list: a subclass or a renamed class fell to 3."""
    from app.store.publish import PublishError

    class PublishFailedAgain(PublishError):
        pass
    assert _run_raising(monkeypatch, capsys, PublishFailedAgain("disk full"))[0] == 2


def _real(*args: str, cwd: Path = REPO_ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_real_refusals_exit_2_with_one_line(tmp_path):
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    folder = tmp_path / "dir" / "session.jsonl"
    folder.mkdir(parents=True)
    src = tmp_path / "store" / "session.jsonl"
    src.parent.mkdir()
    src.write_bytes(fixture(MULTI).read_bytes())
    first = _real("fork", str(src), "--at", "34", "--id", "session-taken", "--json")
    assert first.returncode == 0, first.stderr
    cases = {
        "missing file": ("inspect", str(tmp_path / "nope.jsonl")),
        "fifo": ("inspect", str(fifo)),
        "folder named like a session": ("page", str(folder)),
        "bad option": ("page", str(src), "--limit", "many"),
        "unknown command option": ("inspect", str(src), "--no-such-option"),
        "existing fork id": ("fork", str(src), "--at", "34", "--id", "session-taken"),
        "export usage": ("export", str(src)),
    }
    for what, args in cases.items():
        r = _real(*args)
        assert r.returncode == 2, (what, r.returncode, r.stderr)
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr, (what, r.stderr)
    assert _real("inspect", str(src)).returncode == 0


def _cli_error_names() -> set[str]:
    import app.cli.errors as errors
    return {n for n, v in vars(errors).items() if isinstance(v, type) and issubclass(v, CliError)}


def test_the_cli_raises_only_its_own_errors():
    """Every ``raise X(...)`` in app/cli names a CliError class (a bare ``raise`` re-raises)."""
    allowed = _cli_error_names()
    bad = []
    for p in sorted((REPO_ROOT / "app" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                name = target.id if isinstance(target, ast.Name) else ast.unparse(target)
                if name not in allowed:
                    bad.append(f"{p.relative_to(REPO_ROOT)}:{node.lineno}: raise {name}")
    assert bad == []
