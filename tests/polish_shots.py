"""Screenshots of the frame (issue 19), light and dark (not a test; run under Xvfb; written to
tests/artifacts/, the README uses copies in docs/screenshots/):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/polish_shots.py [OUT_DIR]

polish-long-session-{light,dark}.png   a long session (2,098 events), inspector summary, toolbar
polish-session-list-{light,dark}.png   the fixture corpus (dsh + dsh-next): titles, updated, project, format
polish-empty-{light,dark}.png          a header-only session's empty state
polish-markdown-{light,dark}.png       Markdown in a message (headings, lists, code, table, a link)
polish-shortcuts-{light,dark}.png      Help › Keyboard shortcuts
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from shots_util import settle, wait  # noqa: E402

SHARED = ROOT.parent / "shared" / "fixtures"
BIG = SHARED / "dsh/apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl"
RETRY = SHARED / "dsh/examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"

MD = """## Plan for the failing test

The retry loop **drops** the last chunk when the stream ends early. Steps:

1. Reproduce with `pytest -k retry` and keep the log.
2. Compare the *stored* rows with the request:
   - the physical tail keeps the torn row,
   - the logical tail closes the turn.
3. Fix the stitcher, then re-run.

| check | before | after |
|-------|--------|-------|
| rows  | 41     | 42    |
| torn  | 1      | 0     |

```python
def closure(tail):
    return [ev for ev in tail if ev.synthesized]
```

> HTML such as <b>this</b> stays text. See [the spec](https://example.com/spec#tail).
"""


def md_session(tmp: Path) -> Path:
    out = []
    for line in RETRY.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d.get("type") == "assistant/message":
            for b in d["data"]["message"]["content"]:
                if b.get("type") == "text":
                    b["text"] = MD
        out.append(json.dumps(d, ensure_ascii=False))
    p = tmp / "markdown-demo" / "session.jsonl"
    p.parent.mkdir(parents=True)
    p.write_text("\n".join(out) + "\n", encoding="utf-8")
    return p


def empty_session(tmp: Path) -> Path:
    p = tmp / "header-only" / "session.jsonl"
    p.parent.mkdir(parents=True)
    p.write_bytes(RETRY.read_bytes().split(b"\n", 1)[0] + b"\n")
    return p


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="sl-polish-shots-"))
    os.environ["SESSION_LENS_CONFIG_DIR"] = str(tmp / "config")
    os.environ["SESSION_LENS_NO_TOUR"] = "1"
    from app.ui.app import make_app
    qapp = make_app()
    import app.ui.main_window as mw
    md, empty = md_session(tmp), empty_session(tmp)
    for theme in ("light", "dark"):
        win = mw.MainWindow(theme_mode=theme)
        win.resize(1500, 900)
        win.show()

        def open_path(p, select=None):
            win.open_store(str(p), remember=False, select_path=select)
            wait(qapp, lambda: win.history.reader is not None and not win.history.loading
                 and win.view.settled() and (select is None or win.history.path == select))
            settle(qapp, 40)

        def shot(name, widget=None):
            settle(qapp, 20)
            (widget or win).grab().save(str(out / f"polish-{name}-{theme}.png"))

        open_path(BIG)
        wait(qapp, lambda: win.history.index_state == "ready")
        win.frame_actions.update_summary()
        shot("long-session")
        open_path(SHARED)
        wait(qapp, lambda: len(win.sessions.model.titles) > 20, 60)
        win.sessions.tree.collapseAll()
        win.split.setSizes([620, 520, 360])
        shot("session-list")
        win.split.setSizes([340, 760, 400])
        open_path(empty)
        shot("empty")
        open_path(md)
        h = win.history
        r = next(i for i, row in enumerate(h.rows) if row.kind == "assistant")
        win.select_row(r)
        win.view.scrollTo(h.index(r, 0), win.view.ScrollHint.PositionAtTop)
        shot("markdown")
        d = win.frame_actions.show_shortcuts()
        d.resize(640, 720)
        shot("shortcuts", d)
        d.close()
        win.shutdown()
        win.deleteLater()
        settle(qapp, 10)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "artifacts"))
