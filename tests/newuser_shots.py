"""Screenshots of issue 35's window fixes (not a test; run under Xvfb from the repository root):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/newuser_shots.py OUT_DIR LONG_LOG [--theme dark]
    ... tests/newuser_shots.py OUT_DIR --only demo live     (some parts; LONG_LOG only for "long")

Saves ``newuser-<item>-<what>-<theme>.png``: the demo as it opens (23, with the session list of 16),
the demo with the Outline dock (9), a long generated log (LONG_LOG: many compactions) on a row
replaced many times (2) and with the Outline dock (9), a planted log after the first Find jump (3),
and a live session written by ``session-lens simulate`` (1), scrolled up (20).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from shots_util import fresh_settings, settle, wait  # noqa: E402


def _window(theme: str):
    from app.ui.main_window import MainWindow
    win = MainWindow(page_size=50, theme_mode=theme)
    win.frame_actions.tour_enabled = False
    win.resize(1400, 860)
    win.show()
    return win


def _loaded(qapp, win, path=None):
    wait(qapp, lambda: win.history.path is not None and not win.history.loading and (path is None or win.history.path == path))
    settle(qapp, 30)


def _save(qapp, win, out: Path, name: str) -> str:
    settle(qapp, 15)
    p = str(out / name)
    win.grab().save(p)
    print(p, win.width(), file=sys.stderr)
    return p


PARTS = ("demo", "long", "find", "live")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("long", nargs="?", help="the long generated log (needed unless --only names other parts)")
    ap.add_argument("--theme", default="light", choices=("light", "dark"))
    ap.add_argument("--only", nargs="*", choices=PARTS, default=PARTS, help="the parts to render (default: all)")
    a = ap.parse_args()
    if "long" in a.only and not a.long:
        ap.error("the long part needs LONG_LOG")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t = a.theme
    fresh_settings("newuser-shots-")
    from app.ui.app import make_app
    qapp = make_app()
    tmp = Path(tempfile.mkdtemp(prefix="newuser-shots-"))
    if "demo" in a.only:
        _demo(qapp, out, t)
    if "long" in a.only:
        _long(qapp, out, t, a.long)
    if "find" in a.only:
        _find(qapp, out, t, tmp)
    if "live" in a.only:
        _live(qapp, out, t, tmp)
    return 0


def _demo(qapp, out: Path, t: str) -> None:
    # 23 (and 16): the demo as it opens
    win = _window(t)
    win.open_default()
    wait(qapp, lambda: win.view.current_row() is not None and win.view.current_row().seq == 21)
    wait(qapp, lambda: win.go_actions.outline is not None and bool(win.sessions.model.titles), 60)
    settle(qapp, 60)                                   # settled: what a new user sees after a second
    _save(qapp, win, out, f"newuser-23-demo-opens-{t}.png")
    # 9: the outline dock beside it
    win.go_actions.outline_dock.show()
    settle(qapp, 40)
    _save(qapp, win, out, f"newuser-9-demo-outline-{t}.png")
    win.shutdown()
    win.close()


def _long(qapp, out: Path, t: str, long: str) -> None:
    # 2 and 9: the long generated log
    win = _window(t)
    win.open_store(long)
    _loaded(qapp, win)
    wait(qapp, lambda: win.history.window.sindex is not None)
    from app.log.fold.surface import index_for
    from app.log.index.reader import LogReader
    r = LogReader.open(long)
    idx = index_for(r)
    seq = max(idx.fold.replaced_by, key=lambda s: (len(idx.replacement_chain(s)), s))
    r.close()
    win.goto_seq(seq)
    ta = win.truth_actions
    wait(qapp, lambda: ta.trace_result is not None and ta._why_seq == seq and "tracing" not in ta.why.text(), 180)
    _save(qapp, win, out, f"newuser-2-long-chain-{t}.png")
    win.go_actions.outline_dock.show()
    settle(qapp, 40)
    _save(qapp, win, out, f"newuser-9-long-outline-{t}.png")
    win.shutdown()
    win.close()


def _find(qapp, out: Path, t: str, tmp: Path) -> None:
    # 3: the first Find jump on a planted log
    from app.tools.plant import PlantingSynth
    from app.tools.synth import write_jsonl
    s = PlantingSynth(seed=11, at_turn=30, plants={"zebraquokka": "tool-output-line-700"})
    planted = tmp / "p" / "session.jsonl"
    write_jsonl(str(planted), s, turns=40)
    win = _window(t)
    win.open_store(str(planted))
    _loaded(qapp, win)
    wait(qapp, lambda: win.history.index_state == "ready")
    win.open_search()
    win.find_edit.setText("zebraquokka")
    win.history_actions.search_step(forward=False)
    wait(qapp, lambda: win.find_actions.stats is not None)
    settle(qapp, 60)
    _save(qapp, win, out, f"newuser-3-find-jump-{t}.png")
    win.shutdown()
    win.close()


def _live(qapp, out: Path, t: str, tmp: Path) -> None:
    # 1 and 20: a live session, then scrolled up (once the rows fill more than the view)
    live = tmp / "live" / "session.jsonl"
    live.parent.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "app", "simulate", str(live), "--events", "6000", "--rate", "60",
                             "--lock", "--seed", "3"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        end = time.time() + 20
        while not (live.exists() and live.stat().st_size > 4000) and time.time() < end:
            time.sleep(0.05)
        win = _window(t)
        win.open_store(str(live))
        _loaded(qapp, win)
        wait(qapp, lambda: "writer live" in win.truth_actions.live_label.text())
        settle(qapp, 100)
        _save(qapp, win, out, f"newuser-1-live-{t}.png")
        bar = win.view.verticalScrollBar()
        wait(qapp, lambda: bar.maximum() > win.view.viewport().height(), 60)
        bar.setValue(0)
        wait(qapp, lambda: win.view.new_rows.isVisible(), 20)
        settle(qapp, 30)
        _save(qapp, win, out, f"newuser-20-live-scrolled-up-{t}.png")
        win.shutdown()
        win.close()
    finally:
        proc.kill()
        proc.wait(10)


if __name__ == "__main__":
    sys.exit(main())
