"""First run wired into the app as run from source: Help > About, the welcome page, the crash handler."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys

import app.ui  # noqa: F401  (PySide6 refcount work-around before any Qt code)
import pytest
from PySide6.QtCore import QTimer

from conftest import REPO_ROOT, fixture

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower
RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    """No real settings, Harness home or log folder."""
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SESSION_LENS_LOG_DIR", str(tmp_path / "logs"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DSH_HOME", raising=False)


@pytest.fixture
def no_demo(monkeypatch, tmp_path):
    import app.ui.main_window as mw
    monkeypatch.setattr(mw, "demo_store", lambda: tmp_path / "no-demo")


def test_help_menu_opens_about_with_versions(qtbot, win):
    from app import __version__
    from app.ui.about import AboutDialog
    menus = {a.text(): a.menu() for a in win.menuBar().actions() if a.menu() is not None}
    assert "&Help" in menus and list(menus)[-1] == "&Help"
    about = next(a for a in menus["&Help"].actions() if a.text() == "&About Session Lens")
    about.trigger()
    qtbot.waitUntil(lambda: any(d.isVisible() for d in win.findChildren(AboutDialog)), timeout=30_000)
    dlg = next(d for d in win.findChildren(AboutDialog) if d.isVisible())
    assert dlg.parent() is win and dlg.windowTitle() == "About Session Lens"
    text = dlg.details.toPlainText()
    for name in ("Session Lens", "Python", "PySide6", "Qt", "msgspec", "qasync"):
        assert any(line.startswith(name + " ") for line in text.splitlines()), (name, text)
    assert __version__ in text and "from source" in text and "not installed" not in text
    # a second trigger raises the open dialog instead of stacking another one
    about.trigger()
    assert sum(d.isVisible() for d in win.findChildren(AboutDialog)) == 1
    dlg.close()


def test_welcome_page_without_harness_home_or_demo(qtbot, win, tmp_path, monkeypatch, no_demo):
    from app.ui.welcome import WelcomeView
    empty = tmp_path / "empty-dsh"
    empty.mkdir()
    monkeypatch.setenv("DSH_HOME", str(empty))
    with qtbot.waitSignal(win.welcomeReady, timeout=WAIT):
        win.open_default()
    assert win.stack.currentIndex() == 0 and win.stack.currentWidget() is win.welcome
    assert isinstance(win.welcome, WelcomeView)
    text = win.welcome.text()
    assert "No Harness home" in text and str(empty) in text, text
    assert "File > Open" in text and "DSH_HOME" in text          # how to open a file
    assert "demo store" in text and "not installed" in text       # why the page is shown
    w = win.welcome
    assert w.btn_home.isHidden() and w.btn_demo.isHidden()
    assert w.btn_file.isVisibleTo(w) and w.btn_folder.isVisibleTo(w)
    # $DSH_HOME unset and no ~/.dsh: the default place is named
    monkeypatch.delenv("DSH_HOME")
    with qtbot.waitSignal(win.welcomeReady, timeout=WAIT):
        win.open_default()
    assert "No Harness home found" in win.welcome.text()
    assert str(tmp_path / "home" / ".dsh") in win.welcome.text()


@pytest.mark.slow
def test_welcome_page_offers_the_harness_home(qtbot, win, tmp_path, monkeypatch, no_demo):
    demo = REPO_ROOT / "resources" / "demo"
    if not (demo / "sessions").is_dir():
        pytest.skip("demo store not present")
    home = tmp_path / "dsh"
    shutil.copytree(demo, home)
    monkeypatch.setenv("DSH_HOME", str(home))
    with qtbot.waitSignal(win.welcomeReady, timeout=WAIT):
        win.open_store(str(tmp_path / "missing.jsonl"))         # no store open yet: the welcome page says why
    assert win.stack.currentIndex() == 0
    text = win.welcome.text()
    assert "No such file or folder" in text and f"Harness home: {home}" in text
    assert win.welcome.btn_home.isVisibleTo(win.welcome)
    with qtbot.waitSignal(win.storeLoaded, timeout=WAIT) as sig:
        win.welcome.btn_home.click()
    assert sig.args == [str(home)] and win.stack.currentIndex() == 1


def test_welcome_page_when_the_store_cannot_be_opened(qtbot, win, tmp_path, no_demo):
    bad = tmp_path / "not-a-store.sqlite"
    bad.write_bytes(b"this is not sqlite" * 10)
    with qtbot.waitSignals([win.storeFailed, win.welcomeReady], timeout=WAIT):
        win.open_store(str(bad))
    if win.stack.currentIndex() != 0:
        pytest.skip("this file is listed as a store, not refused")
    text = win.welcome.text()
    assert f"Cannot open {bad}" in text and "File > Open" in text


@pytest.mark.qt_no_exception_capture
def test_crash_handler_logs_an_exception_from_a_qt_slot(qtbot, tmp_path):
    from PySide6.QtWidgets import QApplication
    from app.ui.crash import CrashDialog, install_crash_handler
    logdir = tmp_path / "logs"
    h = install_crash_handler(QApplication.instance())

    def slot():
        raise ZeroDivisionError("from a Qt slot in a test")
    try:
        QTimer.singleShot(0, slot)
        qtbot.waitUntil(lambda: bool(list(logdir.glob("crash-*.log"))), timeout=30_000)
        (log,) = logdir.glob("crash-*.log")
        text = log.read_text()
        assert "builtins.ZeroDivisionError (message withheld" in text and "in slot" in text
        assert "from a Qt slot in a test" not in text
        assert "PySide6" in text and "qasync" in text
        qtbot.waitUntil(lambda: h.dialog is not None and h.dialog.isVisible(), timeout=30_000)
        assert isinstance(h.dialog, CrashDialog) and h.dialog.log_path == log
    finally:
        h.uninstall()


@pytest.mark.slow
def test_gui_from_source_installs_crash_handler_and_indexes(tmp_path):
    """`python -m app PATH` (what `make run` runs): a Qt slot's exception becomes a crash log under
    SESSION_LENS_LOG_DIR, the window still renders, and the seq index is built in a child process."""
    png = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "SESSION_LENS_CRASH_TEST": "1",
           "SESSION_LENS_NO_CRASH_DIALOG": "1", "SESSION_LENS_INDEX_INPROC": "",
           "SESSION_LENS_CACHE_DIR": str(tmp_path / "cache")}          # no saved index: a child scans
    r = subprocess.run([sys.executable, "-m", "app", str(fixture(RETRY)), "--screenshot", str(png), "--wait-index"],
                       cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert png.stat().st_size > 1000
    assert "index: ready, mode process" in r.stdout, r.stdout
    logs = list((tmp_path / "logs").glob("crash-*.log"))
    assert len(logs) == 1, r.stderr
    text = logs[0].read_text()
    assert "in _crash_test" in text and "builtins.RuntimeError" in text and "from source" in text
    assert f"crash log written to {logs[0]}" in r.stderr
