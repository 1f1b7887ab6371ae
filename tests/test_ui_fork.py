"""Fork from here in the real window: eligibility, tooltip, preview, durable child selected under its parent."""
from __future__ import annotations

import hashlib
import shutil

import pytest

from conftest import fixture

MULTI = "examples/acp-agent/tests/snapshots/multi-turn/session.jsonl"
PARALLEL = "examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl"
WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


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


@pytest.mark.slow
def test_a_fork_from_the_demo_store_goes_to_the_data_folder_and_the_demo_stays_clean(qtbot, tmp_path, monkeypatch):
    """The shipped demo store is never written: the dialog names the demo fork folder (user data dir),
    the child is published there, and `git status` of resources/demo stays empty."""
    import subprocess
    from conftest import REPO_ROOT
    from app.ui.fork_action import ForkDialog
    monkeypatch.setenv("SESSION_LENS_DATA_DIR", str(tmp_path / "data"))
    forks = tmp_path / "data" / "demo-forks"
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=50, theme_mode="light")
    qtbot.addWidget(w)
    w.show()
    fa = w.fork_action
    texts = []

    def confirm(win, pv):                   # the real dialog, accepted as it comes
        dlg = ForkDialog(win, pv)
        texts.append(dlg.folder_label.text())
        if dlg.out_store:
            pv["outStore"] = dlg.out_store
        dlg.deleteLater()
        return True
    fa.confirm = confirm
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.file_actions.open_demo(remember=False)
    qtbot.waitUntil(lambda: not w.history.loading, timeout=WAIT)
    parent = w.history.path
    assert "resources/demo" in parent
    i = next(i for i, r in enumerate(w.history.rows) if fa.eligible(r)[0])
    w.select_row(i)
    with qtbot.waitSignal(fa.forked, timeout=WAIT) as blocker:
        fa.action.trigger()
    res = blocker.args[0]
    assert texts and f"forks of its sessions go to {forks}" in texts[0]
    assert f"Destination folder: {forks / 'sessions'}" in texts[0]
    assert res["child"].startswith(str(forks / "sessions") + "/")
    from app.log.index.reader import LogReader
    assert LogReader.open(res["child"]).events()[-1].type == "session/end-seed"
    qtbot.waitUntil(lambda: w.session is not None and w.session.path == res["child"], timeout=WAIT)
    st = subprocess.run(["git", "status", "--short", "--", "resources/demo"], cwd=REPO_ROOT, capture_output=True,
                        text=True, check=True)
    assert st.stdout == ""
    w.shutdown()


def test_the_cli_fork_of_a_demo_session_goes_to_the_data_folder(tmp_path, monkeypatch):
    import subprocess
    import sys
    from conftest import REPO_ROOT
    monkeypatch.setenv("SESSION_LENS_DATA_DIR", str(tmp_path / "data"))
    demo = REPO_ROOT / "resources/demo/sessions/--home-dev-demo-project--/demo-todo/session.jsonl"
    from app.log.index.reader import LogReader
    from app.log.fold.fork import eligibility
    evs = LogReader.open(str(demo)).events()
    at = next(s for s, (ok, _why) in sorted(eligibility(evs).items()) if ok)
    r = subprocess.run([sys.executable, "-m", "app", "fork", str(demo), "--at", str(at), "--json"], cwd=REPO_ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    import json
    child = json.loads(r.stdout)["child"]
    assert child.startswith(str(tmp_path / "data" / "demo-forks" / "sessions") + "/")
    st = subprocess.run(["git", "status", "--short", "--", "resources/demo"], cwd=REPO_ROOT, capture_output=True,
                        text=True, check=True)
    assert st.stdout == ""
