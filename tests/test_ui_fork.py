"""Fork from here in the real window: eligibility, tooltip, preview, durable child selected under its parent."""
from __future__ import annotations

import hashlib
import shutil

import pytest

from conftest import fixture

MULTI = "examples/acp-agent/tests/snapshots/multi-turn/session.jsonl"
PARALLEL = "examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl"
WAIT = 15000


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


def window(qtbot, store):
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=50, theme_mode="light")
    qtbot.addWidget(w)
    w.show()
    seen = []
    fa = w.fork_action                       # the window's own action; the dialog answered by the test
    fa.confirm = lambda win, pv: seen.append(pv) or True
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.open_store(str(store))
    qtbot.waitUntil(lambda: not w.history.loading, timeout=WAIT)
    return w, fa, seen


def row_index(w, seq):
    return next(i for i, r in enumerate(w.history.rows) if r.event is not None and r.event.seq == seq)


@pytest.mark.slow
def test_fork_from_an_eligible_reply(qtbot, tmp_path):
    store = tmp_path / "store"
    store.mkdir()
    src = store / "session.jsonl"
    shutil.copy(fixture(MULTI), src)
    before = hashlib.sha256(src.read_bytes()).hexdigest()
    w, fa, seen = window(qtbot, src)
    w.select_row(row_index(w, 34))
    assert fa.action.isEnabled() and "turn 1" in fa.action.toolTip()
    with qtbot.waitSignal(fa.forked, timeout=WAIT) as blocker:
        fa.action.trigger()
    res = blocker.args[0]
    assert seen and seen[0]["boundary"] == 36 and seen[0]["turns"] == 1 and seen[0]["lastMessage"]   # its turn/end (decision 0018)
    assert res["seedLength"] == 37
    # the child is durable (reported only after publication) and opens selected in the tree
    from app.log.index.reader import LogReader
    assert LogReader.open(res["child"]).events()[-1].type == "session/end-seed"
    qtbot.waitUntil(lambda: w.session is not None and w.session.path == res["child"], timeout=WAIT)
    assert w.session.parent is not None
    assert hashlib.sha256(src.read_bytes()).hexdigest() == before
    w.shutdown()


def test_ineligible_rows_are_disabled_with_a_reason(qtbot, tmp_path):
    w, fa, _ = window(qtbot, fixture(PARALLEL))
    msgs = [r.event.seq for r in w.history.rows if r.event is not None and r.event.type == "assistant/message"]
    w.select_row(row_index(w, msgs[0]))
    assert not fa.action.isEnabled() and "not the last reply" in fa.action.toolTip()
    w.select_row(row_index(w, msgs[-1]))
    assert fa.action.isEnabled()
    user = next(i for i, r in enumerate(w.history.rows) if r.kind == "user")
    w.select_row(user)
    assert not fa.action.isEnabled() and "assistant message" in fa.action.toolTip()
    w.shutdown()
