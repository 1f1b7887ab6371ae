"""Qt's model tester (pytest-qt ``qtmodeltester``) on every custom item model, while the
models change the way the application changes them: the history list model through paging,
the sliding window, face switches, search and live rows; the session tree through a
listing, titles, writer states and the filter; the JSON tree through lazy expansion and a
new value.  Both the C++ QAbstractItemModelTester (its "FAIL!" warnings fail the test) and
pytest-qt's Python tester (assertions on every signal) run."""
from __future__ import annotations

import json

import pytest

import app.ui  # noqa: F401  (PySide6 work-around first)
from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history.model import HistoryModel
from app.ui.workers import Jobs

from fixtures_util import FIXTURES, fixture

BIG = "apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl"        # 2,098 events
RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
WAIT = 120_000  # a limit on waiting for a condition, not on speed
FAST = {"poll_interval": 0.05, "idle_after": 0.3, "crash_after": 1.0}


@pytest.fixture(params=[False, True], ids=["qt-tester", "py-tester"])
def tester(request, qtmodeltester, qtlog):
    """check(model) (one tester per model); at the end no tester failure may have been reported."""
    from pytestqt.modeltest import ModelTester
    force_py = request.param
    extra = []

    def check(model):
        if not extra:
            extra.append(qtmodeltester)
            qtmodeltester.check(model, force_py=force_py)
        else:
            t = ModelTester(None)
            extra.append(t)
            t.check(model, force_py=force_py)
    yield check
    fails = [r.message for r in qtlog.records if "FAIL" in r.message]
    assert not fails, fails[:5]


def _idle(qtbot, m):
    qtbot.waitUntil(lambda: not m.loading, timeout=WAIT)


def test_history_model_under_the_model_tester(qtbot, tester, monkeypatch):
    import app.ui.history.window as W
    monkeypatch.setattr(W, "MAX_EXPOSED", 60)          # the window slides and trims often
    import app.ui.history.shed as S                     # (dropping far pages is tested by test_window_shed and
    monkeypatch.setattr(S, "KEEP_PAGES", 10_000)        # test_window_held_rows: here the tester's eager fetchMore
    # would read older pages back while the loop below walks down, once the seq index is ready)
    m = HistoryModel(Jobs(), page_size=3, follow_live=False)
    tester(m)
    with qtbot.waitSignal(m.tailInstalled, timeout=WAIT):
        m.open(str(fixture(BIG)))
    pages = 0
    while m.has_more and pages < 12:
        _idle(qtbot, m)
        m.request_older()
        _idle(qtbot, m)
        pages += 1
    assert m.hidden_rows or len(m.pages) > 3
    m.show_around(0)
    assert m.newer_hidden > 0
    # the newest rows are reached: pages dropped while the window slid up are read again (asynchronously), and
    # the tester's eager fetchMore reads older pages meanwhile (whose rows trim the newest again), so the check
    # is made right after the window stops moving down, before events run
    reached = False
    for _ in range(400):
        while m.request_newer():
            pass
        if m.newer_hidden == 0:
            reached = True
            break
        _idle(qtbot, m)
        qtbot.wait(5)
    assert reached
    m.set_find("the")
    assert m.matches
    m.set_current_match(m.matches[0])
    r = m.find(m.matches[0], forward=False)           # may move the window
    assert r is None or r in m.matches
    for physical, attempts in ((True, False), (True, True), (False, True), (False, False)):
        m.set_physical(physical)
        m.set_show_attempts(attempts)
        _idle(qtbot, m)
    assert m.row_for_seq(5) is not None               # exposes the oldest rows again
    m.close()
    assert m.rowCount() == 0


@pytest.mark.slow
def test_history_model_live_rows_under_the_model_tester(qtbot, tester, tmp_path, monkeypatch):
    import app.ui.history.pages as P
    monkeypatch.setattr(P, "LIVE_SPLIT", 6)
    monkeypatch.setattr(P, "LIVE_KEEP", 3)
    src = tmp_path / "src.jsonl"
    write_jsonl(str(src), SessionSynth(41), target_bytes=120_000, crash=True, batch_events=(1, 8))
    lines = src.read_bytes().splitlines(keepends=True)
    path = tmp_path / "session.jsonl"
    first = len(lines) // 3
    path.write_bytes(b"".join(lines[:first]))
    m = HistoryModel(Jobs(), page_size=4, live_options=FAST)
    tester(m)
    with qtbot.waitSignal(m.tailInstalled, timeout=WAIT):
        m.open(str(path))
    qtbot.waitUntil(lambda: m.live_state is not None, timeout=WAIT)
    with open(path, "ab", buffering=0) as f:
        for i in range(first, len(lines), 9):
            f.write(b"".join(lines[i:i + 9]))
            qtbot.wait(15)
    qtbot.waitUntil(lambda: m.live_stats["batches"] > 3 and m._live_job is None and not m._live_queue,
                    timeout=WAIT)
    assert m.live_stats["splits"] > 0
    m.close()


@pytest.mark.slow
def test_session_models_under_the_model_tester(qtbot, tester):
    from app.ui.session_model import SessionFilterModel, SessionTreeModel, discover_job, titles_job
    m = SessionTreeModel()
    tester(m)
    listing, tree, _ = discover_job(None, str(FIXTURES))
    assert len(listing.sessions) > 5
    m.set_listing(listing, tree)
    assert m.rowCount() > 0
    streamed = []

    class _Job:
        def check(self):
            pass

        def stream(self, batch):
            streamed.append(batch)
    titles_job(_Job(), m.sessions())
    for batch in streamed:
        m.set_titles(batch)
    keys = [s.key for s in m.sessions()]
    m.set_states({keys[0]: "live", keys[-1]: "crashed"})
    m.set_states({keys[0]: "complete"})
    proxy = SessionFilterModel()
    proxy.setSourceModel(m)
    tester(proxy)
    for needle in ("snap", "zzz-no-such-session", "", "retry"):
        proxy.set_needle(needle)
    m.set_listing(listing, tree)                       # listed again (a fork, a refresh)


def test_json_model_under_the_model_tester(qtbot, tester):
    from app.ui.json_model import JsonTreeModel
    rows = [json.loads(x) for x in fixture(RETRY).read_text().splitlines()[:40] if x.strip()]
    m = JsonTreeModel({"rows": rows, "empty": {}, "list": [1, [2, [3, None]], {"k": True}]})
    tester(m)
    # walk every node (the model makes children when first asked for them)
    stack = [m.index(r, 0) for r in range(m.rowCount())]
    seen = 0
    while stack:
        ix = stack.pop()
        seen += 1
        for r in range(m.rowCount(ix)):
            stack.append(m.index(r, 0, ix))
    assert seen > 200
    m.set_value([{"a": 1}, "text"])
    m.set_value(None)
    m.set_value(rows[0])


def test_a_newer_face_switch_supersedes_one_still_building(qtbot, tester, monkeypatch):
    import app.ui.history.model as hm
    m = HistoryModel(Jobs(), page_size=40, follow_live=False)
    tester(m)
    with qtbot.waitSignal(m.tailInstalled, timeout=WAIT):
        m.open(str(fixture(RETRY)))
    logical = [r.key for r in m.rows]
    monkeypatch.setattr(hm, "FACE_SYNC_EVENTS", -1)     # every switch builds in the face job group
    faces = []
    m.faceChanged.connect(lambda: faces.append((m.physical, m.show_attempts)))
    m.set_show_attempts(True)
    m.set_physical(True)
    m.set_physical(False)
    m.set_show_attempts(False)                          # back where it started: only this one lands
    assert m.loading
    qtbot.waitUntil(lambda: not m.loading, timeout=WAIT)
    qtbot.wait(100)
    assert faces == [(False, False)]
    assert [r.key for r in m.rows] == logical
    monkeypatch.setattr(hm, "FACE_SYNC_EVENTS", 20_000)
    m.set_show_attempts(True)                           # small: at once
    assert faces[-1] == (False, True) and not m.loading
    assert len(m.rows) > len(logical)
    m.close()
