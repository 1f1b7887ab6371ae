"""Screenshots of newer-format sessions in the demo home (not a test; run under Xvfb; writes
tests/artifacts/ (ignored; copy a new reference into docs/screenshots/ by hand)):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/formats_shots.py [OUT_DIR]

formats-v4-session.png        the app with no argument: the demo home, its v4 showcase session (dsh's advanced
                              snapshot: image offload, PTC, subagent catalog, role:tool results), a tool row selected
formats-v3-request.png        the exact request of a v3 session (demo-v3-team-targets, an assistant row selected):
                              its system message is the first message
formats-v2-hidden-attempt.png a v2 assistant/attempt (demo-plain-turn's older v2 generation, opened with
                              File › Open generation), shown with "show hidden attempts" (hidden by default)
formats-generations.png       a session with an older generation beside the newest: the generation line and the
                              File › Open generation submenu
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from shots_util import finish, settle, shot_window, wait  # noqa: E402

PROJ = ROOT / "resources" / "demo" / "sessions" / "--home-dev-demo-project--"


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    tmp, qapp, win = shot_window("sl-fmt-shots-", 1400, 860)

    def loaded(p) -> bool:
        return (win.history.path is not None and os.path.samefile(win.history.path, p)
                and not win.history.loading and bool(win.history.rows))

    def select(kind_or_type: str, last: bool = False) -> None:
        rows = list(enumerate(win.history.rows))
        if last:
            rows.reverse()
        r = next(i for i, row in rows if row.kind == kind_or_type
                 or (row.event is not None and row.event.type == kind_or_type))
        win.select_row(r)
        settle(qapp, 20)

    # 1. no argument: the demo home opens on its v4 session
    win.open_default()
    v4 = PROJ / "demo-v4-advanced" / "session.v4.jsonl.zstd"
    wait(qapp, lambda: loaded(v4))
    settle(qapp, 40)
    select("tool-call", last=True)
    win.grab().save(str(out / "formats-v4-session.png"))

    # 2. a v3 request: select an assistant row, the Request tab shows the exact request
    p3 = PROJ / "demo-v3-team-targets" / "session.v3.jsonl"
    win.sessions.select_key(str(p3))
    wait(qapp, lambda: loaded(p3))
    settle(qapp, 30)
    win.show_request_tab()
    select("assistant")
    wait(qapp, lambda: win.request_view.result is not None)
    settle(qapp, 40)
    win.grab().save(str(out / "formats-v3-request.png"))
    win.tabs.setCurrentWidget(win.inspector)

    # 3. generations: demo-plain-turn holds v2 beside v3; open the v2 generation from the File menu's submenu
    p3, p2 = PROJ / "demo-plain-turn" / "session.v3.jsonl", PROJ / "demo-plain-turn" / "session.v2.jsonl"
    win.sessions.select_key(str(p3))
    wait(qapp, lambda: loaded(p3))
    settle(qapp, 30)
    ga = win.generation_actions
    next(a for a in ga.actions() if a.data() == str(p2)).trigger()
    wait(qapp, lambda: loaded(p2))
    win.set_show_attempts(True)
    settle(qapp, 30)
    select("attempt-failed")
    settle(qapp, 30)
    win.grab().save(str(out / "formats-v2-hidden-attempt.png"))

    # 4. the generation line and submenu on a migrated session (v0 beside v4)
    p4 = PROJ / "demo-migrated" / "session.v4.jsonl"
    win.sessions.select_key(str(p4))
    wait(qapp, lambda: loaded(p4))
    settle(qapp, 40)
    fm = win.file_actions.file_menu
    fm.popup(win.mapToGlobal(win.rect().topLeft()) + win.menuBar().geometry().bottomLeft())
    settle(qapp, 10)
    fm.setActiveAction(ga.menu.menuAction())
    ga.menu.popup(fm.mapToGlobal(fm.actionGeometry(ga.menu.menuAction()).topRight()))
    settle(qapp, 20)
    shot = win.screen().grabWindow(0)
    g = win.frameGeometry()
    shot.copy(g.x(), g.y(), g.width(), g.height()).save(str(out / "formats-generations.png"))
    ga.menu.hide()
    fm.hide()
    return finish(win, tmp, [out / name for name in ("formats-v4-session.png", "formats-v3-request.png",
                                                     "formats-v2-hidden-attempt.png", "formats-generations.png")])


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "artifacts"))
