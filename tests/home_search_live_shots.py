"""Screenshot of home search results streaming in while the index is being built (not a test;
run under Xvfb; writes tests/artifacts/ (ignored; copy a new reference into docs/screenshots/ by hand)):

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/home_search_live_shots.py [OUT_DIR]

home-search-streaming.png  a never-indexed home (fixture copies, planted sessions): the build runs
                           (its progress under the box, held half-way so the moment can be caught)
                           while a query's hits stream in from the scan of the sessions not indexed
                           yet ("N sessions being indexed: scanning them… k/N").  Each scanned session
                           is slowed by 20 ms so the streamed state lasts long enough to be grabbed.
"""
from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around before any Qt code)
from shots_util import fresh_settings, settle, wait  # noqa: E402

FIXTURES = ROOT.parent / "shared" / "fixtures" / "dsh"


def main(out: Path) -> int:
    out.mkdir(parents=True, exist_ok=True)
    tmp = fresh_settings("sl-home-search-live-shots-")
    os.environ["SESSION_LENS_CACHE_DIR"] = str(tmp / "cache")
    from app.tools.plant import make_home
    home = tmp / "dsh"
    make_home(str(home), str(FIXTURES), copies=2, planted=4, synth_turns=6)
    from app.store import ftsstream, ftswrite
    from app.ui import home_search as hs_mod
    ftswrite._COMMIT_SESSIONS = 20
    go = threading.Event()

    def paused_index_job(job, root, db_path):              # the build, held half-way
        with hs_mod._open_index(root, db_path) as ix:
            def progress(done, total, _n):
                job.progress.emit(int(done), int(total))
                if done == 120:
                    go.wait(60)
            rep = ix.update(progress=progress, cancel=lambda: job.cancelled, workers=0)
            return rep, ix.indexed_count(), len(ix.session_problems())
    hs_mod.index_job = paused_index_job
    real_scan = ftsstream.StreamScan.scan

    def slow_scan(self, p):
        time.sleep(0.02)
        return real_scan(self, p)
    ftsstream.StreamScan.scan = slow_scan
    from app.ui import settings
    settings.update(tourSeen=True)                          # the first-run tour would cover the sidebar
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
    wait(qapp, lambda: hs.building is not None and hs.building[0] >= 120)
    partial = []
    hs.partialResults.connect(lambda: partial.append(hs.model.result.scanned))
    hs.panel.edit.setFocus()
    hs.search("error")
    wait(qapp, lambda: len(partial) >= 6)
    settle(qapp, 5)
    win.grab().save(str(out / "home-search-streaming.png"))
    print(out / "home-search-streaming.png", "scanned so far", partial[-1], "of", len(hs.model.result.unindexed))
    go.set()
    wait(qapp, lambda: hs.building is None)
    win.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "tests" / "artifacts"))
