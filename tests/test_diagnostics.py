"""Diagnostics that survive a crash (app/store/diagnostics.py, app/ui/crash.py, app/ui/fatal_report.py).

A worker started through the one launcher dies of SIGSEGV in the middle of a whole-log find over a
real fixture: its faulthandler report is in the log folder, the parent's warning is in the rotating
log, and no file in the folder holds any text of the transcript (nor the find's query).  The next
start offers that report once.  A worker killed on purpose (a cancelled find) leaves nothing.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from app.log.query.find import FindOptions
from app.store import diagnostics
from app.store.scan_child import ScanFailed, run_isolated

from conftest import fixture

BIG = "apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl"
QUERY = "the"
TEXT_KEYS = {"text", "arguments", "output", "content", "result", "title", "summary", "reasoning"}


def _transcript_strings(path: Path) -> set[str]:
    """Every string of 12+ characters under a text-bearing key of the log's events."""
    out: set[str] = set()

    def walk(v: object, key: str = "") -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, k)
        elif isinstance(v, list):
            for x in v:
                walk(x, key)
        elif isinstance(v, str) and key in TEXT_KEYS and len(v.strip()) >= 12:
            out.add(v.strip()[:60])
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        walk(json.loads(line))
    return out


def _folder_text(d: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(d.iterdir()) if p.is_file())


@pytest.fixture
def logs(tmp_path, monkeypatch):
    """The log folder, with this process's warnings going to its rotating log (as the window's do)."""
    d = tmp_path / "logs"
    monkeypatch.setenv("SESSION_LENS_LOG_DIR", str(d))
    handler = diagnostics.open_log("test")
    assert handler is not None
    yield d
    diagnostics.close_log(handler)


def _segv_find(logs: Path, monkeypatch) -> tuple[Path, str]:
    monkeypatch.setenv("SESSION_LENS_WORKER_CRASH_TEST", "scan")
    path = fixture(BIG)
    got: list[object] = []
    with pytest.raises(ScanFailed) as err:
        run_isolated("find", str(path), None, {"opts": FindOptions(text=QUERY), "limit": 500}, got.append,
                     lambda: False)
    assert got == []                        # it died before its first message went out
    return path, str(err.value)


@pytest.mark.slow
def test_a_worker_killed_by_sigsegv_leaves_its_fatal_report_without_transcript_text(logs, monkeypatch):
    path, err = _segv_find(logs, monkeypatch)
    assert "exit code -11" in err
    (fatal,) = logs.glob("fatal-*-worker-scan-*.log")
    text = fatal.read_text(encoding="utf-8")
    assert "Fatal Python error: Segmentation fault" in text
    assert "scan_child.py" in text and "childproc.py" in text      # where it died: frames of the worker
    pid = fatal.name.rsplit("-", 1)[1].removesuffix(".log")
    log = (logs / diagnostics.LOG_FILE).read_text(encoding="utf-8")
    assert f"find process {pid} ended without a result (exit code -11)" in log
    # ids, seqs, paths and error types only: not one transcript string, not the query
    everything = _folder_text(logs)
    strings = _transcript_strings(path)
    assert len(strings) > 20
    leaked = [s for s in strings if s in everything]
    assert leaked == []
    assert f"'{QUERY}'" not in everything and "FindOptions" not in everything
    # the next start offers it once (and keeps it, renamed)
    from app.ui.fatal_report import collect_fatal_report
    found = collect_fatal_report()
    assert found is not None
    shown, shown_text, older = found
    assert older == 0 and "Segmentation fault" in shown_text and shown.name.endswith(".reported.log")
    assert collect_fatal_report() is None


@pytest.mark.slow
def test_a_cancelled_worker_leaves_no_fatal_file(logs):
    seen: list[object] = []
    with pytest.raises(InterruptedError):
        run_isolated("find", str(fixture(BIG)), None, {"opts": FindOptions(text=QUERY), "limit": None},
                     seen.append, lambda: bool(seen))
    assert seen, "the child ran and sent a message before the cancel"
    assert list(logs.glob("fatal-*.log")) == []


def test_a_header_only_file_of_a_dead_process_is_swept(logs):
    import subprocess
    r = subprocess.run([sys.executable, "-c", "import os, signal\nfrom app.store import diagnostics\n"
                        "print(diagnostics.setup('window'))\nos.kill(os.getpid(), signal.SIGKILL)"],
                       capture_output=True, text=True, timeout=60)
    left = Path(r.stdout.strip())
    assert left.parent == logs and left.exists(), "SIGKILL leaves the header-only file"
    assert diagnostics.pending_fatal_reports() == []
    assert not left.exists()


def test_crash_log_and_rotating_log_hold_the_error_type_not_its_message(qtbot, logs):
    from app.ui.crash import CrashDialog, install_crash_handler
    secret = "user said: please refactor the payment module"
    diagnostics.log.warning("index of session %s failed: %s", "abc-123", "OSError")   # an earlier line
    crash = install_crash_handler()
    try:
        try:
            raise ValueError(secret)
        except ValueError:
            path = crash.handle(*sys.exc_info(), where="main thread")
        assert path is not None and path.parent == logs
        text = path.read_text(encoding="utf-8")
        assert "builtins.ValueError (message withheld" in text and "test_diagnostics.py" in text
        assert secret not in _folder_text(logs)
        log = (logs / diagnostics.LOG_FILE).read_text(encoding="utf-8")
        assert "unexpected ValueError in main thread; crash report" in log
        qtbot.waitUntil(lambda: crash.dialog is not None and crash.dialog.isVisible(), timeout=3000)
        dlg = crash.dialog
        assert isinstance(dlg, CrashDialog)
        assert secret in dlg.details.toPlainText(), "the dialog (on screen, not on disk) shows the message"
        assert "unexpected ValueError" in dlg.log_tail.toPlainText()
        assert "index of session abc-123 failed: OSError" in dlg.log_tail.toPlainText()
    finally:
        crash.uninstall()
