"""Generations in the window: the demo opens on a v4 session, the info line lists the other
generations of the open session, File › Open generation opens one, a file path opens exactly
that file (pytest-qt, on the demo home shipped in resources/)."""
from __future__ import annotations

import os

import pytest

from conftest import REPO_ROOT

DEMO = REPO_ROOT / "resources" / "demo"
PROJ = DEMO / "sessions" / "--home-dev-demo-project--"
WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


def _menu_entries(win):
    return [(a.data(), a.isChecked()) for a in win.generation_actions.actions()]


@pytest.mark.slow
def test_no_argument_opens_the_demo_on_a_v4_session(qtbot, win):
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_default()
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)    # the first page's rest follows its paint
    assert win.stack.currentIndex() == 1 and win.sessions.model.session_count > 10
    assert win.session.version == 4 and win.session.format == "zstd"
    assert win.history.path.endswith(os.path.join("demo-v4-advanced", "session.v4.jsonl.zstd"))
    assert win.history.reader.format_version == 4
    assert win.history.rows and win.history.stats()["hiddenAttempts"] == 1     # the failed, retried call
    assert "format: zstd" in win.status_face.text()
    # one generation in that folder: no line, nothing to choose
    assert win.generation_actions.line.isHidden()
    assert not win.generation_actions.menu.menuAction().isEnabled()


@pytest.mark.slow
def test_generation_line_and_submenu_open_the_older_generation(qtbot, win):
    newest, older = str(PROJ / "demo-migrated" / "session.v4.jsonl"), str(PROJ / "demo-migrated" / "session.jsonl")
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(DEMO), select_path=newest)
    ga = win.generation_actions
    assert win.history.path == newest and win.history.reader.format_version == 4
    assert not ga.line.isHidden()
    text = ga.line.text()
    assert "session.v4.jsonl (format v4): the newest" in text
    assert "session.jsonl (v0): earlier generation, immutable; session.v4.jsonl was migrated from it" in text
    assert ga.menu.menuAction().isEnabled()
    assert ga.menu.menuAction() in win.file_actions.file_menu.actions()
    assert _menu_entries(win) == [(newest, True), (older, False)]
    # File › Open generation › session.jsonl opens exactly that file
    act = next(a for a in ga.actions() if a.data() == older)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        act.trigger()
    assert win.history.path == older and win.session.path == older
    assert win.history.reader.format_version == 0 and win.session.version == 0
    assert win.history.stats()["hiddenAttempts"] >= 1
    assert "an earlier generation, immutable (dsh reads session.v4.jsonl)" in ga.line.text()
    assert any("older-generation" in p for p in win.session.problems)
    assert _menu_entries(win) == [(newest, False), (older, True)]
    # and back to the newest
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        next(a for a in ga.actions() if a.data() == newest).trigger()
    assert win.history.path == newest and win.history.reader.format_version == 4
    # both files untouched by opening them
    assert sorted(os.listdir(PROJ / "demo-migrated")) == ["session.jsonl", "session.v4.jsonl"]


def test_a_file_path_opens_exactly_that_generation(qtbot, win):
    v2 = str(PROJ / "demo-plain-turn" / "session.v2.jsonl")
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(v2)
    assert win.history.path == v2 and win.history.reader.format_version == 2
    assert "dsh reads session.v3.jsonl" in win.generation_actions.line.text()
    assert [p for p, _c in _menu_entries(win)] == [str(PROJ / "demo-plain-turn" / "session.v3.jsonl"), v2]
