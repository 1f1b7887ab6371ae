"""Screenshots of the demo store's views (not a test; run under Xvfb from the repository root):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/demo_shots.py OUT_DIR [--theme dark]
        [--session TITLE] [--views tour,main,outline,problems,find,request,audit,attempts,fork,older]

``make run`` opens the demo store; this opens it the same way (fresh settings: the first-run tour
shows) and saves, per view: ``tour-1..3.png`` (each hint), ``main.png``, ``outline.png``,
``problems.png``, ``find.png`` (the word ``--find``), ``request.png`` (the newest assistant row),
``audit-{trace,diff,plots,stats}.png``, ``attempts.png`` (hidden attempts shown), ``fork.png`` (the
confirmation of "Fork from here"), ``older-{0,1,2}.png`` (the summary: first page, after older pages,
after a jump).  ``--session`` picks the session whose title contains TITLE.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from shots_util import fresh_settings, settle, wait  # noqa: E402

ALL = "tour,main,outline,problems,find,request,audit,attempts,fork,older"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--theme", default="light", choices=("light", "dark"))
    ap.add_argument("--session", default="")
    ap.add_argument("--views", default=ALL)
    ap.add_argument("--find", default="tool")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    views = set(a.views.split(","))
    fresh_settings("demo-shots-")
    os.environ.setdefault("SESSION_LENS_CACHE_DIR", str(Path(os.environ["HOME"]) / "cache"))
    if "tour" not in views:
        os.environ["SESSION_LENS_NO_TOUR"] = "1"
    from app.ui.app import make_app
    from app.ui.main_window import MainWindow
    qapp = make_app()
    win = MainWindow(theme_mode=a.theme)
    win.resize(1500, 950)
    win.show()
    win.open_default()
    h = win.history
    wait(qapp, lambda: h.reader is not None and not h.loading)
    if a.session:
        m = win.sessions.tree.model()
        todo = [m.index(r, 0) for r in range(m.rowCount())]
        while todo:
            ix = todo.pop()
            if a.session in str(m.data(ix)):
                win.sessions.tree.setCurrentIndex(ix)
                break
            todo += [m.index(r, 0, ix) for r in range(m.rowCount(ix))]
        settle(qapp, 10)
        wait(qapp, lambda: h.reader is not None and not h.loading)
    settle(qapp)

    def shot(w, name: str) -> None:
        settle(qapp, 15)
        w.grab().save(str(out / name))
        print(out / name)

    def newest(kind: str):
        return next((r.event.seq for r in reversed(h.rows) if r.event is not None and r.event.type == kind), None)

    ga = win.go_actions
    if "tour" in views:
        wait(qapp, lambda: win.tour is not None, 10)
        for i in range(3):
            if win.tour is None:
                break
            shot(win, f"tour-{i + 1}.png")
            win.tour.next.click()
    if "main" in views:
        shot(win, "main.png")
    wait(qapp, lambda: ga.outline is not None)
    if "older" in views:
        shot(win, "older-0.png")
        for _ in range(6):
            pages = (len(h.pages), h.hidden_rows)
            if not h.request_older():
                break
            wait(qapp, lambda: (len(h.pages), h.hidden_rows) != pages and not h.loading, 30)
        shot(win, "older-1.png")
        seq = h.seq_index.events // 2 if h.seq_index is not None else 0
        win.goto_seq(seq)
        wait(qapp, lambda: h.is_loaded(seq) and not h.loading, 30)
        win.view.setCurrentIndex(h.index(-1, 0))
        win.inspector.clear()
        shot(win, "older-2.png")
        win.go_actions.ctl.goto_end()
    if "outline" in views:
        ga.outline_dock.show()
        shot(win, "outline.png")
    if "problems" in views:
        ga.show_problems()
        shot(win, "problems.png")
    if "find" in views:
        fa = win.find_actions
        fa.results_dock.show()
        fa.results_dock.raise_()
        fa.run(a.find)
        wait(qapp, lambda: not fa.running)
        shot(win, "find.png")
    seq = newest("assistant/message")
    if "request" in views and seq is not None:
        win.goto_seq(seq)
        win.show_request_tab()
        wait(qapp, lambda: win.request_view.shown_seq is not None, 30)
        shot(win, "request.png")
        win.tabs.setCurrentIndex(0)
    if "audit" in views and seq is not None:
        aw = win.audit_action.open_audit(seq)
        wait(qapp, lambda: aw is not None and aw.data is not None and not aw.loading, 60)
        if aw is not None:
            aw.resize(1300, 850)
            for tab in ("trace", "diff", "plots", "stats"):
                aw.select_tab(tab)
                shot(aw, f"audit-{tab}.png")
            aw.close()
    if "attempts" in views:
        win.set_show_attempts(True)
        shot(win, "attempts.png")
        win.set_show_attempts(False)
    if "fork" in views:
        from app.ui.fork_action import ForkDialog, _preview_job
        row = next((r for r in reversed(h.rows) if win.fork_action.eligible(r)[0]), None)
        if row is not None:
            d = ForkDialog(win, _preview_job(None, h.path, h.session_id, row.event.seq, False))
            d.show()
            shot(d, "fork.png")
            d.close()
    win.shutdown()
    win.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
