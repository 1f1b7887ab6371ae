"""Screenshots of replay (issue 30; not a test; run under Xvfb; written to tests/artifacts/, copies
of the good ones in docs/screenshots/):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/replay_shots.py [OUT_DIR]

replay-before-compaction.png   scrubbed to seq 20 of compaction-recovery: the replaced row 4 is current
replay-after-compaction.png    scrubbed to seq 21 (the replacing user/message): row 4 is dimmed (shadowed)
replay-model-view.png          the Model view tab at seq 20 (the messages the model sees, linked to rows)
replay-what-changed.png        the What changed tab from seq 20 to seq 28
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from shots_util import finish, settle, shot_window, wait  # noqa: E402

COMPACTION = ROOT.parent / "shared/fixtures/dsh/examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    os.environ["SESSION_LENS_NO_TOUR"] = "1"
    tmp, qapp, win = shot_window("sl-replay-shots-", 1500, 900)
    os.environ["SESSION_LENS_CACHE_DIR"] = str(tmp / "cache")
    win.open_store(str(COMPACTION), remember=False)
    wait(qapp, lambda: win.history.reader is not None and not win.history.loading and win.view.settled())
    settle(qapp, 20)
    ra = win.replay_actions
    shots = []

    def at(seq: int) -> None:
        ra.set_bar_visible(True)
        wait(qapp, lambda: ra.model.ctx is not None)
        ra.scrub_to(seq)
        wait(qapp, lambda: ra.answer is not None and ra.answer["seq"] == seq)
        settle(qapp, 30)

    def shot(name: str) -> None:
        settle(qapp, 20)
        p = out / f"replay-{name}.png"
        win.grab().save(str(p))
        shots.append(p)

    win.split.setSizes([300, 760, 440])
    at(20)
    shot("before-compaction")
    at(21)
    shot("after-compaction")
    at(20)
    win.tabs.setCurrentWidget(ra.model_pane)
    shot("model-view")
    win.tabs.setCurrentWidget(ra.changed_pane)
    ra.changed_pane.from_box.setValue(20)              # A pinned at seq 20
    at(28)
    wait(qapp, lambda: ra.answer.get("diffFrom") == 20)
    settle(qapp, 20)
    shot("what-changed")
    return finish(win, tmp, shots)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "artifacts"))
