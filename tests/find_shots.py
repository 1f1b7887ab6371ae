"""Screenshots of the find panels (not a test; run under Xvfb to refresh docs/screenshots/):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/find_shots.py [LOG] [OUT_DIR]

find-results.png    the whole-log search results pane over a large generated log (bench/data)
find-outline.png    the outline dock of the same log, scrolled to the middle
find-problems.png   the problems panel of the v0 fixture cordis-tool-round (seq gaps), a gap row in the history
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401
from shots_util import settle, wait  # noqa: E402

CORDIS = ROOT.parent / "shared" / "fixtures" / "dsh" / "apps/web/tests/snapshots/cordis-tool-round/session.jsonl"


def main() -> int:
    log = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "bench" / "data" / "search-100MB.jsonl")
    out = Path(sys.argv[2] if len(sys.argv) > 2 else ROOT / "docs" / "screenshots")
    os.environ.setdefault("SESSION_LENS_CONFIG_DIR", "/tmp/find-shots-config")
    from PySide6.QtWidgets import QApplication
    from app.ui.main_window import MainWindow
    qapp = QApplication.instance() or QApplication([sys.argv[0]])
    win = MainWindow(theme_mode="light")
    win.resize(1600, 1000)
    win.show()
    h, fa, ga = win.history, win.find_actions, win.go_actions
    win.open_store(log)
    wait(qapp, lambda: h.rows and h.index_state == "ready" and ga.outline is not None, 600)
    win.open_search()
    win.find_edit.setText("timeout")
    wait(qapp, lambda: fa.query is not None and not fa.running and fa.status.endswith("turns"), 600)
    wait(qapp, lambda: not h.loading)
    settle(qapp)
    win.grab().save(str(out / "find-results.png"))
    ga.outline_dock.show()
    ga.outline_view.scrollTo(ga.outline_model.index(ga.outline_model.rowCount() // 2, 0))
    settle(qapp)
    win.grab().save(str(out / "find-outline.png"))
    ga.outline_dock.hide()
    win.close_search()
    loaded = []
    win.sessionLoaded.connect(lambda: loaded.append(1))
    win.open_store(str(CORDIS))
    wait(qapp, lambda: loaded and h.rows and ga.outline is not None and not h.loading)
    win.history_actions.controller.goto_seq(87)
    wait(qapp, lambda: not h.loading)
    settle(qapp)
    ga.show_problems()
    settle(qapp)
    win.grab().save(str(out / "find-problems.png"))
    print(fa.status, ga.outline_label.text(), ga.problems_label.text())
    win.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
