"""One session file opened on its own (``python -m app gui path/to/session.jsonl``): the left
panel lists that session as one row with the title the list gives it in its home or folder, and
the line under *Search all sessions* says that the search covers the file's folder (its
"N sessions not indexed yet" counts that folder, not the one row).  A v0 fixture, a v4 fixture
and a .jsonl.zstd of the demo store."""
from __future__ import annotations

import os

import pytest
from PySide6.QtCore import QModelIndex, Qt

from conftest import REPO_ROOT, fixture

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower
V0 = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
V4 = (REPO_ROOT.parent / "shared" / "fixtures" / "dsh-next" / "Hebilicious+deepseek-harness@4934042113"
      / "snapshots" / "acp" / "cancel-tool-calls" / "session.v4.jsonl")
DEMO = REPO_ROOT / "resources" / "demo"
ZSTD = DEMO / "sessions" / "--home-dev-demo-project--" / "demo-v4-long" / "session.v4.jsonl.zstd"


def _rows(model, parent=QModelIndex()) -> list:
    out = []
    for r in range(model.rowCount(parent)):
        ix = model.index(r, 0, parent)
        out.append(ix)
        out += _rows(model, ix)
    return out


def _listed(qtbot, win, store: str, path: str) -> tuple:
    """Open ``store`` (a home, a folder or the file itself): the list row of ``path`` once its title
    is in and refined (a big log's title read from its head and tail is provisional), as the list
    shows it (title, format)."""
    m = win.sessions.model
    with qtbot.waitSignals([win.storeLoaded, m.titlesRefined], timeout=WAIT):
        win.open_store(store, remember=False)
    qtbot.waitUntil(lambda: win.session is not None and not win.history.loading, timeout=WAIT)
    ix = next(ix for ix in _rows(m) if os.path.abspath(m.info_at(ix).path) == os.path.abspath(path))
    assert m.info_at(ix).key in m.titles
    return m.data(ix, Qt.ItemDataRole.DisplayRole), m.data(ix.siblingAtColumn(3), Qt.ItemDataRole.DisplayRole)


@pytest.mark.parametrize("which", ["v0", "v4", "zstd"])
def test_a_single_file_is_listed_as_one_row_with_its_title(qtbot, win, which):
    path = {"v0": fixture(V0), "v4": V4, "zstd": ZSTD}[which]
    if not path.exists():
        pytest.fail(f"missing {path}")
    store = DEMO if which == "zstd" else path.parent        # where the list normally shows it
    in_store = _listed(qtbot, win, str(store), str(path))
    assert win.sessions.model.session_count >= 1
    alone = _listed(qtbot, win, str(path), str(path))
    sp = win.sessions
    assert sp.model.listing.kind == "file" and sp.model.session_count == 1
    assert sp.isVisible() and sp.tree.isVisible(), "the list shows the file's session, not an empty panel"
    assert sp.proxy.rowCount() == 1
    assert sp.tree.visualRect(sp.proxy.index(0, 0)).height() > 0, "its row is drawn"
    assert alone == in_store, "the title (and format) as the list shows them for its home or folder"
    assert not alone[0].startswith("{{") and len(alone[0]) > 8, alone          # a title, not an id
    assert win.history.path == str(path)
    assert sp.tree.currentIndex().isValid(), "the open session is the current row"
    assert sp.count.text() == "1 session · single file"
    # the search under the box covers the file's folder, and the line says so
    hs = win.home_search
    assert hs.root == str(path.parent)
    qtbot.waitUntil(lambda: hs.indexed is not None or hs.behind is not None, timeout=WAIT)
    status = hs.panel.status.text()
    assert status.startswith(f"Searches {path.parent.name}/, this file's folder: "), status
    assert "this file's folder" in hs.panel.edit.placeholderText()


def test_a_home_after_a_file_says_all_sessions_again(qtbot, win):
    _listed(qtbot, win, str(ZSTD), str(ZSTD))
    _listed(qtbot, win, str(DEMO), str(ZSTD))
    hs = win.home_search
    assert hs.file_folder is None and "this file's folder" not in hs.panel.status.text()
    assert hs.panel.edit.placeholderText().startswith("Search all sessions")
    n = win.sessions.model.session_count
    assert n > 1 and win.sessions.count.text().startswith(f"{n} sessions · ")
