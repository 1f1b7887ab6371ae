"""Screenshots of issue 16's window views (not a test; run under Xvfb; writes tests/artifacts/ (ignored; copy a new reference into docs/screenshots/ by hand)):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/truth_shots.py [OUT_DIR]

truth-shadowed-why.png     compaction-recovery: seq 4 dimmed, "not in the model's view since seq 21", the why
truth-compaction-row.png   a v4 compaction as one collapsed row, and expanded
truth-live-midstream.png   a live writer (simulate --lock in another process) mid-turn: no closure
truth-tails-side-by-side.png  logical vs physical tails of a crashed, torn log
truth-fork-dialog.png      the fork dialog: child title and destination folder
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from shots_util import finish, settle, shot_window, wait  # noqa: E402

FIX = ROOT.parent / "shared" / "fixtures" / "dsh"
NEXT = ROOT.parent / "shared" / "fixtures" / "dsh-next"




def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    tmp, qapp, win = shot_window("sl-truth-shots-", 1500, 900)
    ta = win.truth_actions
    h = win.history

    def open_file(p: Path) -> None:
        win.open_store(str(p), remember=False)
        wait(qapp, lambda: h.path is not None and os.path.samefile(h.path, p) and not h.loading)
        settle(qapp, 40)

    # 1. a shadowed row and its why
    p = tmp / "cr" / "session.jsonl"
    p.parent.mkdir()
    shutil.copy(FIX / "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl", p)
    open_file(p)
    i4 = next(i for i, r in enumerate(h.rows) if r.seq == 4)
    win.select_row(i4)
    wait(qapp, lambda: ta.trace_result is not None)
    win.view.scrollTo(h.index(i4, 0), win.view.ScrollHint.PositionAtTop)
    settle(qapp, 40)
    win.grab().save(str(out / "truth-shadowed-why.png"))

    # 2. the compaction row (v4), collapsed then expanded
    p = tmp / "v4" / "session.v4.jsonl"
    p.parent.mkdir()
    shutil.copy(NEXT / "0217po+deepseek-harness@321a6fa740/snapshots/acp/image-compaction/session.v4.jsonl", p)
    open_file(p)
    ic = next(i for i, r in enumerate(h.rows) if r.kind == "compaction")
    win.select_row(ic)
    win.view.scrollTo(h.index(ic, 0), win.view.ScrollHint.PositionAtCenter)
    settle(qapp, 30)
    win.grab().save(str(out / "truth-compaction-row.png"))
    h.toggle_compaction(h.rows[ic].group["compactionId"])
    settle(qapp, 30)
    win.view.scrollTo(h.index(ic, 0), win.view.ScrollHint.PositionAtTop)
    settle(qapp, 30)
    win.grab().save(str(out / "truth-compaction-expanded.png"))

    # 3. a live writer mid-stream (another process, holding session.lock)
    live = tmp / "live" / "session.jsonl"
    live.parent.mkdir()
    exe = Path(sys.executable).with_name("session-lens")
    proc = subprocess.Popen([str(exe), "simulate", str(live), "--events", "100000", "--rate", "60", "--lock",
                             "--seed", "11", "--no-pack"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(qapp, lambda: live.exists() and live.stat().st_size > 20000)
        open_file(live)
        wait(qapp, lambda: h.live_state == "live" and h.feed.last_batch is not None)
        wait(qapp, lambda: any(r.kind == "streaming" for r in h.rows[-4:]), timeout=40)
        settle(qapp, 10)
        win.view.scrollToBottom()
        settle(qapp, 10)
        win.grab().save(str(out / "truth-live-midstream.png"))
    finally:
        proc.kill()
        proc.wait()

    # 4. the two tails side by side (a crashed log with a torn last write)
    from app.tools.synth import SessionSynth, write_jsonl
    c = tmp / "crash" / "session.jsonl"
    write_jsonl(str(c), SessionSynth(32), target_bytes=60_000, crash=True, batch_events=(1, 8))
    with open(c, "ab") as f:
        f.write(b'{"type":"assistant/chunk","seq":999999,"da')
    open_file(c)
    d = ta.show_tails()
    wait(qapp, lambda: bool(d.rows))
    settle(qapp, 30)
    d.grab().save(str(out / "truth-tails-side-by-side.png"))
    d.close()

    # 5. the fork dialog
    from app.ui.fork_action import ForkDialog
    m = tmp / "fork" / "session.jsonl"
    m.parent.mkdir()
    shutil.copy(FIX / "examples/acp-agent/tests/snapshots/multi-turn/session.jsonl", m)
    open_file(m)
    from app.ui.fork_action import _preview_job

    class J:
        cancelled = False

        def check(self):
            pass
    pv = _preview_job(J(), str(m), None, 34, False)
    fd = ForkDialog(win, pv)
    fd.show()
    settle(qapp, 30)
    fd.grab().save(str(out / "truth-fork-dialog.png"))
    fd.close()
    ta.show_legend().grab().save(str(out / "truth-legend.png"))
    return finish(win, tmp, [out / name for name in sorted(os.listdir(out)) if name.startswith("truth-")])


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "artifacts"))
