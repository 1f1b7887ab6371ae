"""Screenshots of issue 27 (not a test): the window's banner on a log the newest dsh refuses.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/trust_shots.py OUT_DIR
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from shots_util import finish, settle, shot_window, wait  # noqa: E402

NEXT = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "dsh-next"


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    tmp, qapp, win = shot_window("sl-trust-shots-", 1400, 800)
    h = win.history
    p = tmp / "early" / "session.v4.jsonl"
    p.parent.mkdir()
    shutil.copy(NEXT / "0217po+deepseek-harness@f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl", p)
    win.open_store(str(p), remember=False)
    wait(qapp, lambda: h.path is not None and os.path.samefile(h.path, p) and not h.loading)
    wait(qapp, lambda: getattr(win.go_actions, "outline", None) is not None)
    settle(qapp, 40)
    shot = out / "issue27-banner-dsh-would-refuse.png"
    win.grab().save(str(shot))
    return finish(win, tmp, [shot])


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp")))
