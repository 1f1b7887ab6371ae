"""Screenshots of the first-run views (not a test; run under Xvfb; writes tests/artifacts/ (ignored; copy a new reference into docs/screenshots/ by hand)):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/first_run_shots.py [OUT_DIR]

welcome-no-home.png   the main window's welcome page: no demo store, $DSH_HOME an empty folder
welcome-home.png      the same page with a Harness home found ($DSH_HOME = a copy of the demo store)
about.png             Help > About Session Lens over the main window
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from shots_util import finish, fresh_settings, settle  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    tmp = fresh_settings("sl-shots-")
    from app.ui.app import make_app
    qapp = make_app()
    import app.ui.main_window as mw
    real_demo = mw.demo_store()
    mw.demo_store = lambda: tmp / "no-demo"          # as when the demo store is not installed
    win = mw.MainWindow(theme_mode="light")
    win.resize(1100, 700)
    win.show()
    empty = tmp / "empty-dsh"
    empty.mkdir()
    os.environ["DSH_HOME"] = str(empty)
    win.open_default()
    while win._home_job is not None:          # the Harness home is looked for in a worker
        qapp.processEvents()
    settle(qapp)
    win.grab().save(str(out / "welcome-no-home.png"))
    home = tmp / "dsh"
    shutil.copytree(real_demo, home)
    os.environ["DSH_HOME"] = str(home)
    win.open_default()
    while win._home_job is not None:          # the Harness home is looked for in a worker
        qapp.processEvents()
    settle(qapp)
    win.grab().save(str(out / "welcome-home.png"))
    win.act_about.trigger()
    settle(qapp, 30)
    screen = QGuiApplication.primaryScreen()
    g = win.frameGeometry()
    screen.grabWindow(0, g.x(), g.y(), g.width(), g.height()).save(str(out / "about.png"))
    return finish(win, tmp, [out / name for name in ("welcome-no-home.png", "welcome-home.png", "about.png")])


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "artifacts"))
