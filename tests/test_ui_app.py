"""The window around the history: stores, session tree, filter, welcome, theme, drops, CLI."""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent, QPalette

from conftest import REPO_ROOT, fixture

FORK_DIR = "examples/acp-agent/tests/snapshots/subagent-fork-in-process"     # parent + forked child
RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


@pytest.mark.slow
def test_folder_store_lists_lineage_tree_and_filters(qtbot, win):
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(fixture(FORK_DIR)))
    m = win.sessions.model
    assert m.session_count >= 2
    roots = [m.info_at(m.index(r, 0)) for r in range(m.rowCount())]
    parent_ix = next(m.index(r, 0) for r in range(m.rowCount()) if m.rowCount(m.index(r, 0)) > 0)
    child = m.info_at(m.index(0, 0, parent_ix))
    parent = m.info_at(parent_ix)
    assert child.parent == parent.id, "the fork child sits under its parent"
    assert child.header.get("seedLength") == 42
    assert "fork" in m.label(child)
    assert win.sessions.isVisible() and "session" in win.sessions.count.text()
    # titles arrive from a worker (quick_title), headers were enough for the tree
    qtbot.waitUntil(lambda: bool(m.titles), timeout=WAIT)
    # the filter keeps matches and their ancestors
    title = next(iter(m.titles.values()))
    win.sessions.filter.setText(child.id[:10])
    qtbot.waitUntil(lambda: "shown" in win.sessions.count.text(), timeout=WAIT)
    p = win.sessions.proxy
    assert p.rowCount() >= 1
    win.sessions.filter.setText("no-such-session-zzz")
    qtbot.waitUntil(lambda: p.rowCount() == 0, timeout=WAIT)
    win.sessions.filter.clear()
    qtbot.waitUntil(lambda: p.rowCount() == len(roots), timeout=WAIT)
    # choosing the child opens its history
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.sessions.select_key(child.key)
    assert win.history.path == child.path
    assert any(r.event is not None and r.event.type == "session/end-seed" for r in win.history.rows)
    assert title is not None


@pytest.mark.slow
def test_many_sessions_listed_from_headers_only(qtbot, win, tmp_path):
    """A home with many sessions appears from headers; titles stream in afterwards."""
    home = tmp_path / "home"
    root = home / "sessions" / "--tmp-proj--"
    src = fixture(RETRY).read_bytes()
    n = 400
    for i in range(n):
        d = root / f"s{i:04d}"
        d.mkdir(parents=True)
        hdr, rest = src.split(b"\n", 1)
        hdr = hdr.replace(b'"id":"', b'"id":"x' + str(i).encode() + b'-', 1)
        (d / "session.jsonl").write_bytes(hdr + b"\n" + rest)
    with qtbot.waitSignal(win.storeLoaded, timeout=WAIT):
        win.open_store(str(home))
    assert win.sessions.model.session_count == n
    assert win.sessions.model.listing.kind == "home"
    qtbot.waitUntil(lambda: len(win.sessions.model.titles) == n, timeout=WAIT)


def test_welcome_view_when_demo_store_missing(qtbot, win, monkeypatch, tmp_path):
    import app.ui.main_window as mw
    monkeypatch.setattr(mw, "demo_store", lambda: tmp_path / "nope")
    win.open_default()
    assert win.stack.currentIndex() == 0
    assert "demo store" in win.welcome.text() and "not installed" in win.welcome.text()


@pytest.mark.slow
def test_default_opens_demo_store(qtbot, win):
    from app.ui.main_window import demo_store
    if not demo_store().exists():
        pytest.skip("demo store not generated")
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_default()
    assert win.stack.currentIndex() == 1 and win.sessions.model.session_count > 1
    assert win.history.rows


def test_recent_stores_and_drop(qtbot, win):
    from app.ui import recent
    path = str(fixture(RETRY))
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(path)])
    ev = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.NoButton,
                    Qt.KeyboardModifier.NoModifier)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.dropEvent(ev)
    assert win.history.path == path
    assert recent.load()[0] == os.path.abspath(path)
    assert any(a.text() == os.path.abspath(path) for a in win.recent_menu.actions())
    assert win.sessions.isVisible() and win.sessions.model.session_count == 1, "a single file: its one row"


def test_dark_mode_palette_and_rows(qtbot, win):
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(fixture(RETRY)))
    win.set_theme_mode("dark")
    from PySide6.QtWidgets import QApplication
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightnessF() < 0.3
    assert win.view.delegate.theme.dark
    row = next(r for r in win.history.rows if r.kind == "user")
    doc = win.view.delegate.document(row)
    from PySide6.QtGui import QColor, QTextCursor
    cur = QTextCursor(doc)
    cur.movePosition(QTextCursor.MoveOperation.End)
    fg = cur.charFormat().foreground().color()
    bg = QColor(win.theme.user_bg)
    assert abs(fg.lightnessF() - bg.lightnessF()) > 0.5, "text stays readable on the dark row"
    win.set_theme_mode("light")
    assert QApplication.palette().color(QPalette.ColorRole.Window).lightnessF() > 0.7


def test_follows_system_colour_scheme():
    from app.ui.theme import Theme, is_dark
    assert Theme.current("dark").dark and not Theme.current("light").dark
    assert is_dark("auto") in (True, False)


def _png_size(p: Path):
    data = p.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.slow
def test_cli_screenshot(tmp_path):
    out = tmp_path / "shot.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LANG="C.UTF-8",
               SESSION_LENS_CONFIG_DIR=str(tmp_path / "cfg"))
    r = subprocess.run([sys.executable, "-m", "app", "gui", str(fixture(RETRY)), "--screenshot", str(out),
                        "--attempts", "--select", "9", "--size", "1000x700"],
                       cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert out.exists() and _png_size(out) == (1000, 700)


def test_cli_screenshot_of_the_request_tab_on_a_row_without_a_request(tmp_path):
    """``--select S --request`` on a row that has no request (a system message: the tab says why) used to wait
    for a request that was never computed, until the 120 s screenshot timeout; now it is taken at once."""
    out = tmp_path / "shot.png"
    demo = REPO_ROOT / "resources/demo/sessions/--home-dev-demo-project--/demo-plain-turn/session.v3.jsonl"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", LANG="C.UTF-8",
               SESSION_LENS_CONFIG_DIR=str(tmp_path / "cfg"), SESSION_LENS_CACHE_DIR=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "-m", "app", "gui", str(demo), "--screenshot", str(out),
                        "--select", "2", "--request", "--size", "1000x700"],
                       cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert out.exists() and _png_size(out) == (1000, 700)
