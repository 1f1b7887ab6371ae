"""Packaging checks (fast): desktop entry, AppStream metainfo, MIME types, icons, first-run widgets."""
from __future__ import annotations

import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RES = ROOT / "resources"
APP_ID = "io.sessionlens.SessionLens"
SIZES = (16, 32, 48, 64, 128, 256, 512)
DESKTOP = RES / f"{APP_ID}.desktop"
METAINFO = RES / f"{APP_ID}.metainfo.xml"
MIME = RES / "mime" / "session-lens.xml"
FIXTURES = ROOT.parent / "shared" / "fixtures" / "dsh"


def _run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(not shutil.which("desktop-file-validate"), reason="desktop-file-utils not installed")
def test_desktop_entry_validates():
    r = _run(["desktop-file-validate", str(DESKTOP)])
    assert r.returncode == 0 and not r.stdout.strip(), r.stdout + r.stderr


def test_desktop_entry_opens_session_files():
    text = DESKTOP.read_text(encoding="utf-8")
    keys = dict(line.split("=", 1) for line in text.splitlines() if "=" in line and not line.startswith("#"))
    assert keys["Exec"] == "session-lens %F"
    assert keys["Icon"] == APP_ID
    mimes = set(filter(None, keys["MimeType"].split(";")))
    assert {"application/x-dsh-session-jsonl", "application/x-dsh-session-zstd"} <= mimes


@pytest.mark.skipif(not shutil.which("appstreamcli"), reason="appstream not installed")
def test_metainfo_validates():
    r = _run(["appstreamcli", "validate", "--no-net", str(METAINFO)])
    assert r.returncode == 0, r.stdout + r.stderr


def test_mime_globs():
    ns = {"m": "http://www.freedesktop.org/standards/shared-mime-info"}
    root = ET.parse(MIME).getroot()
    globs = {}
    for mt in root.findall("m:mime-type", ns):
        globs[mt.get("type")] = {g.get("pattern") for g in mt.findall("m:glob", ns)}
    assert {"session.jsonl", "*.jsonl"} <= globs["application/x-dsh-session-jsonl"]
    assert "*.jsonl.zstd" in globs["application/x-dsh-session-zstd"]


@pytest.mark.skipif(not shutil.which("update-mime-database"), reason="shared-mime-info not installed")
def test_mime_database_accepts_the_package(tmp_path):
    pk = tmp_path / "mime" / "packages"
    pk.mkdir(parents=True)
    shutil.copy(MIME, pk / MIME.name)
    r = _run(["update-mime-database", str(tmp_path / "mime")])
    assert r.returncode == 0, r.stdout + r.stderr
    globs = (tmp_path / "mime" / "globs2").read_text()
    assert "application/x-dsh-session-zstd:*.jsonl.zstd" in globs
    assert "application/x-dsh-session-jsonl:session.jsonl" in globs


def _png_size(p: Path):
    head = p.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", p
    return struct.unpack(">II", head[16:24])


@pytest.mark.parametrize("n", SIZES)
def test_icon_sizes(n):
    p = RES / "icons" / "hicolor" / f"{n}x{n}" / "apps" / f"{APP_ID}.png"
    assert p.is_file(), p
    assert _png_size(p) == (n, n)


def test_icon_svg():
    p = RES / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    root = ET.parse(p).getroot()
    assert root.tag.endswith("svg") and root.get("viewBox") == "0 0 512 512"


@pytest.mark.slow
def test_icon_script_matches_committed_svg(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "packaging" / "make_icons.py"), str(tmp_path)],
                       capture_output=True, text=True, timeout=60, env={**__import__("os").environ,
                                                                         "QT_QPA_PLATFORM": "offscreen"})
    assert r.returncode == 0, r.stderr
    rel = Path("hicolor/scalable/apps") / f"{APP_ID}.svg"
    assert (tmp_path / rel).read_text() == (RES / "icons" / rel).read_text()
    for n in SIZES:
        assert _png_size(tmp_path / f"hicolor/{n}x{n}/apps/{APP_ID}.png") == (n, n)


# --------------------------------------------------------------------------- first run (Qt, offscreen)

@pytest.fixture
def logdir(tmp_path, monkeypatch):
    import platformdirs
    d = tmp_path / "logs"
    monkeypatch.delenv("SESSION_LENS_LOG_DIR", raising=False)
    monkeypatch.setattr(platformdirs, "user_log_dir", lambda *a, **k: str(d))
    return d


def test_crash_handler_writes_log(qtbot, logdir):
    from app.ui.crash import CrashDialog, install_crash_handler
    from PySide6.QtWidgets import QApplication
    h = install_crash_handler(QApplication.instance())
    try:
        assert sys.excepthook == h._excepthook
        try:
            raise RuntimeError("boom from a test")
        except RuntimeError:
            sys.excepthook(*sys.exc_info())
        logs = list(logdir.glob("crash-*.log"))
        assert len(logs) == 1
        text = logs[0].read_text()
        assert "builtins.RuntimeError (message withheld" in text and "Traceback" in text
        assert "boom from a test" not in text          # the message stays on screen (the dialog)
        assert "PySide6" in text and "msgspec" in text
        qtbot.waitUntil(lambda: h.dialog is not None and h.dialog.isVisible(), timeout=3000)
        assert isinstance(h.dialog, CrashDialog)
        from PySide6.QtWidgets import QLabel
        assert h.dialog.log_path == logs[0]
        assert str(logs[0]) in h.dialog.findChild(QLabel, "crashMessage").text()
        assert "boom from a test" in h.dialog.details.toPlainText()
    finally:
        h.uninstall()
    assert sys.excepthook != h._excepthook


def test_crash_handler_catches_worker_threads(qtbot, logdir):
    import threading
    from app.ui.crash import install_crash_handler
    h = install_crash_handler(show_dialog=False)
    try:
        def work():
            raise ValueError("worker failed")
        t = threading.Thread(target=work, name="decoder")
        t.start()
        t.join()
        logs = list(logdir.glob("crash-*.log"))
        assert len(logs) == 1
        assert "thread decoder" in logs[0].read_text() and "builtins.ValueError" in logs[0].read_text()
    finally:
        h.uninstall()


def test_about_lists_versions(qtbot):
    from app.ui.about import AboutDialog, versions
    v = versions()
    for k in ("Session Lens", "Python", "PySide6", "Qt", "msgspec", "qasync"):
        assert v.get(k) and v[k] != "not installed", (k, v)
    dlg = AboutDialog()
    qtbot.addWidget(dlg)
    assert "qasync" in dlg.details.toPlainText()


def test_welcome_without_harness_home(qtbot, tmp_path, monkeypatch):
    from app.ui.welcome import WelcomeView
    home = tmp_path / "emptyhome"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("DSH_HOME", raising=False)
    w = WelcomeView()
    qtbot.addWidget(w)
    assert "no harness home" in w.text().lower()
    assert "File > Open" in w.text()
    assert not w.home.found and w.btn_home.isHidden()


def test_welcome_lists_harness_home(qtbot, tmp_path, monkeypatch):
    from app.ui.welcome import WelcomeView
    demo = ROOT / "resources" / "demo"
    if not (demo / "sessions").is_dir():
        pytest.skip("demo store not present")
    home = tmp_path / "dsh"
    shutil.copytree(demo, home)
    monkeypatch.setenv("DSH_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))
    w = WelcomeView()
    qtbot.addWidget(w)
    from app.store.discovery import discover
    # sessions, not files: a folder with older generations beside the newest is one session
    n = len({p.parent for p in (home / "sessions").rglob("session*.jsonl*")})
    assert n == len(discover(str(home)).sessions) == 23
    assert w.home.found and w.home.sessions == n
    assert f"Harness home: {home}" in w.text()
    assert f"{n} sessions" in w.text()
    assert "no harness home" not in w.text().lower()
    assert w.btn_home.isVisibleTo(w)
    with qtbot.waitSignal(w.openPathRequested) as sig:
        w.btn_home.click()
    assert sig.args == [str(home)]
