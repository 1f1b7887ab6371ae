"""Screenshots of newer-format sessions (not a test; run under Xvfb; writes tests/artifacts/ (ignored; copy a new reference into docs/screenshots/ by hand)):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/formats_shots.py [OUT_DIR]

formats-v4-session.png        a v4 session (dsh's advanced snapshot: image offload, PTC, catalog, role:tool results)
formats-v3-request.png        the exact request of a v3 session: its system message is the first message
formats-v2-hidden-attempt.png a v2 assistant/attempt, shown with "show hidden attempts" (hidden by default)
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)

NEXT = ROOT.parent / "shared" / "fixtures" / "dsh-next"


def settle(app, n: int = 25) -> None:
    for _ in range(n):
        app.processEvents()
        time.sleep(0.02)


def wait(app, cond, timeout: float = 20.0) -> None:
    end = time.time() + timeout
    while time.time() < end and not cond():
        app.processEvents()
        time.sleep(0.02)


def one(pattern: str) -> Path:
    (p,) = [p for p in NEXT.rglob("*.jsonl") if str(p).endswith(pattern)]
    return p


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="sl-fmt-shots-"))
    os.environ["SESSION_LENS_CONFIG_DIR"] = str(tmp / "config")
    os.environ["HOME"] = str(tmp / "home")
    from app.ui.app import make_app
    qapp = make_app()
    import app.ui.main_window as mw
    from app.log import analysis
    from app.log.reader import LogReader
    win = mw.MainWindow(theme_mode="light")
    win.resize(1400, 860)
    win.show()

    def open_file(p: Path) -> None:
        win.open_store(str(p), remember=False)
        wait(qapp, lambda: win.history.path is not None and os.path.samefile(win.history.path, p)
             and not win.history.loading)
        settle(qapp, 40)

    open_file(one("f4a32dbd0a/scripts/snapshots/python-sdk-single-exe/advanced/session.v4.jsonl"))
    win.grab().save(str(out / "formats-v4-session.png"))

    p3 = one("team-targets/session.v3.jsonl")
    open_file(p3)
    b, _ = analysis.dispatches(LogReader.open(str(p3)).events())[1]
    win.show_request_tab()
    win.request_view.compute(str(p3), None, b)
    wait(qapp, lambda: win.request_view.result is not None and win.request_view.shown_seq == b)
    settle(qapp, 40)
    win.grab().save(str(out / "formats-v3-request.png"))

    open_file(one("suite/plain-turn/session.v2.jsonl"))
    win.set_show_attempts(True)
    settle(qapp, 40)
    win.grab().save(str(out / "formats-v2-hidden-attempt.png"))
    for name in ("formats-v4-session.png", "formats-v3-request.png", "formats-v2-hidden-attempt.png"):
        print(out / name)
    win.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "artifacts"))
