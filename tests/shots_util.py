"""Helpers shared by the screenshot scripts (``tests/*_shots.py``; not tests, not collected):
turning the Qt event loop while a window settles, and a throw-away settings folder and $HOME."""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path


def settle(app, n: int = 25) -> None:
    """Process events ``n`` times, 20 ms apart (layouts, timers and paints run)."""
    for _ in range(n):
        app.processEvents()
        time.sleep(0.02)


def wait(app, cond, timeout: float = 120.0) -> None:
    """Process events until ``cond()`` holds or ``timeout`` seconds pass."""
    end = time.time() + timeout
    while time.time() < end and not cond():
        app.processEvents()
        time.sleep(0.02)


def fresh_settings(prefix: str) -> Path:
    """A new temporary folder holding the app's settings and $HOME (no recent files or state of the user's)."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ["SESSION_LENS_CONFIG_DIR"] = str(tmp / "config")
    os.environ["HOME"] = str(tmp / "home")
    return tmp


def shot_window(prefix: str, width: int, height: int, theme: str = "light"):
    """(temporary folder, QApplication, shown MainWindow) with fresh settings, as the app starts."""
    tmp = fresh_settings(prefix)
    from app.ui.app import make_app
    qapp = make_app()
    import app.ui.main_window as mw
    win = mw.MainWindow(theme_mode=theme)
    win.resize(width, height)
    win.show()
    return tmp, qapp, win


def finish(win, tmp: Path, shots) -> int:
    """Print the paths written, close the window, remove the temporary folder."""
    for p in shots:
        print(p)
    win.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0
