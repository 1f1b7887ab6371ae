"""*Errors only* covers the whole log (pytest-qt, offscreen, a generated long log): once the whole-log
pass knows where the errors are, the filter reads the pages down to the oldest of them, so every
failed tool and error turn end of the log is shown, including the ones on pages never loaded before."""
from __future__ import annotations

import pytest

import app.ui  # noqa: F401  (PySide6 refcount work-around before any Qt code)

pytest.importorskip("PySide6")

from app.log.index.reader import LogReader  # noqa: E402
from app.tools.synth import SessionSynth, write_jsonl  # noqa: E402

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))


def _error_seqs(path) -> set[int]:
    """Failed tools and error turn ends of the whole log, read straight from its events."""
    out = set()
    for ev in LogReader.open(str(path)).iter_events(logical=True):
        d = ev.data if isinstance(ev.data, dict) else {}
        if ev.type == "tool/result" and (d.get("error") is not None or d.get("isError") is True):
            out.add(ev.seq)
        elif ev.type == "turn/end":
            rs = d.get("reason")
            if (rs.get("kind") if isinstance(rs, dict) else rs) == "error":
                out.add(ev.seq)
    return out


def test_errors_only_finds_every_error_of_a_long_log(qtbot, tmp_path):
    from app.ui.history.navigation import row_is_error
    from app.ui.main_window import MainWindow
    p = tmp_path / "store" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(41), target_bytes=4_000_000)
    want = _error_seqs(p)
    assert len(want) >= 5
    w = MainWindow(page_size=50, theme_mode="light")
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.open_store(str(p))
    h, go = w.history, w.go_actions
    qtbot.waitUntil(lambda: not h.loading and go.outline is not None, timeout=WAIT)
    first, _last = h.window.loaded_range()
    assert first is not None and first > min(want)          # the oldest errors are on pages never loaded
    go.act_errors_only.trigger()
    qtbot.waitUntil(lambda: not h.loading and h.jumps.paging_done(), timeout=WAIT)
    shown = {r.seq for r in h.window.all_rows if row_is_error(r) and r.seq is not None}
    assert want <= shown, sorted(want - shown)[:10]
    assert h.rows and all(row_is_error(r) for r in h.rows)       # the view shows errors only
    assert {r.seq for r in h.rows} >= want                        # every one of them on screen
    go.act_errors_only.trigger()                                  # off: no more paging
    assert not h.jumps._paging
    w.shutdown()
