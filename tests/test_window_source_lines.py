"""The window lets go of the source lines ``linecache`` holds once a log is open (issue 36).

PySide's import hook reads the source of every module imported after PySide (``inspect``, which
fills ``linecache``): in the window ~200 files, 3.5 M characters, 80 K Python blocks, a third of
an empty window's heap, kept for nothing.  ``app.ui.memory.trim`` (called once the open's seq
index is ready, and after far pages are dropped) now clears it.  In the real window on a
generated log: the source lines cached before the open (this file's, and those of the modules
imported so far) are gone once the index is ready.  Fails on the old code (nothing cleared them)."""
from __future__ import annotations

import linecache

from app.tools.synth import SessionSynth, write_jsonl

from test_ui_history import WAIT, make_window, open_and_wait  # noqa: F401 (fixtures)


def test_cached_source_lines_are_dropped_once_the_log_is_open(qtbot, make_window, tmp_path):  # noqa: F811
    path = tmp_path / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=3), turns=12)
    win = make_window(page_size=20)
    assert linecache.getlines(__file__), "this file's lines are cached"
    before = len(linecache.cache)
    h = open_and_wait(qtbot, win, path)
    qtbot.waitUntil(lambda: h.index_state == "ready", timeout=WAIT * 2)
    assert __file__ not in linecache.cache
    assert len(linecache.cache) < max(2, before // 4), f"{len(linecache.cache)} files cached (were {before})"
