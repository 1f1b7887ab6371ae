"""Screenshots of the home search (not a test; run under Xvfb; writes tests/artifacts/ (ignored; copy a new reference into docs/screenshots/ by hand)):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/home_search_shots.py [OUT_DIR]

home-search-results.png    a query over a generated home (fixture copies + planted sessions):
                           results grouped by session, matched words drawn highlighted
home-search-opened-hit.png the hit activated: its session open at the row of that seq, word highlighted
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from shots_util import fresh_settings, settle, wait  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures" / "dsh"


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    tmp = fresh_settings("sl-home-search-shots-")
    os.environ["SESSION_LENS_CACHE_DIR"] = str(tmp / "cache")
    from app.tools.plant import make_home
    # the default planted words (axolotltext, pangolinreason...) in three more sessions
    home = tmp / "dsh"
    make_home(str(home), str(FIXTURES), copies=1, planted=4, synth_turns=6)
    from app.tools.plant import PlantingSynth
    from app.tools.synth import write_jsonl
    for i in range(3):
        sid = f"5eed{i:04d}-0000-4000-8000-00000000000{i}"
        s = PlantingSynth(seed=500 + i, session_id=sid, at_turn=2 + i,
                          created_at=1_791_000_000_000 + i * 86_400_000)
        write_jsonl(str(home / "sessions" / "--home-dev-alpha--" / sid / "session.jsonl"), s, turns=6)
    from app.ui.app import make_app
    qapp = make_app()
    import app.ui.main_window as mw
    win = mw.MainWindow(theme_mode="light")
    win.resize(1500, 900)
    win.show()
    win.open_store(str(home), remember=False)
    wait(qapp, lambda: win.session is not None and not win.history.loading)
    hs = win.home_search
    win.split.setSizes([560, 560, 380])
    hs.update_index()
    wait(qapp, lambda: hs.building is None and hs.ready_root is not None)
    hs.panel.edit.setFocus()
    hs.search("axolotltext OR pangolinreason")
    wait(qapp, lambda: hs.model.result is not None)
    settle(qapp, 40)
    win.grab().save(str(out / "home-search-results.png"))
    ix = hs.model.first_hit_index()
    hs.panel.results.setCurrentIndex(ix)
    done = []
    hs.hitOpened.connect(done.append)
    hs.activate(ix)
    wait(qapp, lambda: bool(done))
    settle(qapp, 40)
    win.grab().save(str(out / "home-search-opened-hit.png"))
    for name in ("home-search-results.png", "home-search-opened-hit.png"):
        print(out / name)
    print("opened", done, win.session.id if win.session else None)
    win.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "artifacts"))
