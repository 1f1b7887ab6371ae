"""``session-lens doctor [--json]``, ``--version`` and Help › Diagnostics (app/store/doctor.py)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from app import __version__
from app.log.index.fastindex import SCANNER
from app.log.source.zstdlib import MODULE_NAME
from app.store.childproc import WORKERS

from conftest import REPO_ROOT

DEMO_FILE = sorted((REPO_ROOT / "resources" / "demo").rglob("*.jsonl.zstd"))[0]


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "app", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "QT_QPA_PLATFORM": "offscreen", **env})


@pytest.mark.slow
def test_doctor_json_reports_this_installation_and_every_worker_kind():
    r = _cli("doctor", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["version"] == __version__
    assert rep["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert rep["python"]["build"] == "source"
    assert rep["zstd"]["module"] == MODULE_NAME and rep["zstd"]["sizedDecoder"] is True
    # the scanner it names is the one the index uses
    idx = _cli("index", str(DEMO_FILE), "--json")
    assert idx.returncode == 0, idx.stderr
    assert rep["scanner"] == json.loads(idx.stdout)["scanner"] == SCANNER
    qt = rep["qt"]
    assert qt["platform"] == "offscreen" and qt["qt"].startswith("6.")
    assert set(qt["fonts"]) >= {"emoji", "cjk"}
    assert rep["cache"]["path"] == os.environ["SESSION_LENS_CACHE_DIR"]
    assert rep["paths"]["log"] == os.path.join(os.environ["SESSION_LENS_LOG_DIR"], "session-lens.log")
    assert rep["paths"]["settings"] == os.path.join(os.environ["SESSION_LENS_CONFIG_DIR"], "settings.json")
    kinds = [w["kind"] for w in rep["workers"]]
    assert kinds == list(WORKERS)
    assert all(w["started"] and w["answered"] and w["ms"] > 0 for w in rep["workers"]), rep["workers"]
    assert len({w["pid"] for w in rep["workers"]}) == len(kinds), "each kind answered from a process of its own"
    assert all(w["ppid"] == rep["pid"] != w["pid"] for w in rep["workers"]), "children of the doctor's process"
    # the report's problems match its facts
    fonts_missing = [k for k in ("emoji", "cjk") if not qt["fonts"][k]]
    assert [p for p in rep["problems"] if p.startswith("fonts:")] == \
        [f"fonts: no {k} font (such text shows as boxes)" for k in fonts_missing]
    assert not [p for p in rep["problems"] if p.startswith("worker")]


@pytest.mark.slow
def test_doctor_names_a_worker_that_does_not_answer():
    r = _cli("doctor", SESSION_LENS_WORKER_CRASH_TEST="titles")     # the titles worker dies of SIGSEGV
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("worker titles"))
    assert "started, no answer" in line and "ChildFailed" in line
    assert "problem: worker titles: no answer (ChildFailed)" in r.stdout
    assert "worker scan" in r.stdout and "problem: worker scan" not in r.stdout


def test_version_names_the_scanner():
    r = _cli("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"session-lens {__version__} (row scanner: {SCANNER})"


@pytest.mark.slow
def test_help_diagnostics_shows_the_report_and_copies_it(qtbot, win):
    from PySide6.QtGui import QGuiApplication
    from app.ui.diagnostics_dialog import DiagnosticsDialog
    assert win.act_diagnostics in win.help_menu.actions()
    win.act_diagnostics.trigger()
    dlg = next(d for d in win.findChildren(DiagnosticsDialog))
    qtbot.waitUntil(lambda: dlg.report is not None, timeout=120_000)
    text = dlg.text.toPlainText()
    for kind in WORKERS:
        assert f"worker {kind}" in text
    assert "Row scanner" in text and "offscreen" in text and MODULE_NAME in text
    assert all(w["answered"] for w in dlg.report["workers"])
    dlg.copy.click()
    assert QGuiApplication.clipboard().text() == text
    dlg.close()
