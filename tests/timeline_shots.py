"""Screenshots of the Timeline dock (not a test; run under Xvfb; writes OUT_DIR, default tests/artifacts/):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/timeline_shots.py PATH NAME [OUT_DIR] [SEQ]

NAME-window.png     the window with the Timeline dock shown (View > Timeline) on session PATH; with SEQ,
                    that row selected (its bar outlined); ZOOM_TURN=1: the waterfall fitted to that row's turn
NAME-waterfall.png  the waterfall exported by the dock (also .svg)
NAME-meter.png      the context meter exported by the dock (also .svg)
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from PySide6.QtCore import Qt  # noqa: E402
from shots_util import finish, settle, shot_window, wait  # noqa: E402


def main(path: str, name: str, out: Path, seq: int | None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    os.environ["SESSION_LENS_NO_TOUR"] = "1"
    tmp, qapp, win = shot_window("sl-timeline-shots-", 1500, 980)
    win.open_store(path)
    wait(qapp, lambda: win.history.path is not None and not win.history.loading and bool(win.history.rows))
    ta = win.timeline_action
    ta.act.trigger()
    wait(qapp, lambda: ta.data is not None, 600)
    dock = ta.dock
    win.resizeDocks([dock], [560], Qt.Orientation.Vertical)
    if seq is not None:
        win.goto_seq(seq)
        wait(qapp, lambda: ta.dock.waterfall.selected is not None, 30)
        sel = ta.dock.waterfall.selected
        if sel is not None and os.environ.get("ZOOM_TURN"):        # fit the waterfall to the selected row's turn
            turn = max((b for b in ta.dock.waterfall.lay.bars if b.kind == "turn" and b.seq <= sel.seq),
                       key=lambda b: b.seq)
            ta.dock.waterfall.zoom_to(turn.x0, turn.x1)
    settle(qapp, 30)
    shots = [out / f"{name}-window.png"]
    win.grab().save(str(shots[0]))
    for what, stem in (("waterfall", "waterfall"), ("context meter", "meter")):
        for ext in ("png", "svg"):
            shots.append(Path(dock.export(what, str(out / f"{name}-{stem}.{ext}"))))
    return finish(win, tmp, shots)


if __name__ == "__main__":
    a = sys.argv[1:]
    sys.exit(main(a[0], a[1], Path(a[2]) if len(a) > 2 else ROOT / "tests" / "artifacts",
                  int(a[3]) if len(a) > 3 else None))
