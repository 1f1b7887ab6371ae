"""The time scrubber (issue 30) in the window: keys, rows as of a position, the chip, the Model view,
What changed, the Request tab as of the position, coalesced positions."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.log.fold.asof import as_of
from app.log.index.reader import LogReader
from app.log.query import analysis
from fixtures_util import fixture

COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
WAIT = 120_000  # a limit on waiting for a condition, not on speed


@pytest.fixture
def scrub(qtbot, win, tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    path = fixture(COMPACTION)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(path))
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    events = LogReader.open(str(path)).events()
    return win, win.replay_actions, events


def key(qtbot, win, k, shift=False):
    mods = Qt.KeyboardModifier.AltModifier | (Qt.KeyboardModifier.ShiftModifier if shift else Qt.KeyboardModifier(0))
    win.view.setFocus()
    qtbot.keyClick(win.view, k, mods)


def settled(qtbot, ra, seq):
    qtbot.waitUntil(lambda: ra.answer is not None and ra.answer["seq"] == seq, timeout=WAIT)


def test_scrubber_keys_step_turn_and_now(qtbot, scrub):
    win, ra, events = scrub
    last = events[-1].seq
    steps = sorted({e.seq for e in events if e.type in ("turn/start", "turn/end", "assistant/message")})
    turns = [e.seq for e in events if e.type == "turn/start"]
    assert not ra.bar.isVisible()
    key(qtbot, win, Qt.Key.Key_Left)                       # Alt+Left: the scrubber appears, one step back
    want = max(s for s in steps if s < last)
    qtbot.waitUntil(lambda: ra.position == want, timeout=WAIT)
    assert ra.bar.isVisible()
    settled(qtbot, ra, want)
    key(qtbot, win, Qt.Key.Key_Left)
    want2 = max(s for s in steps if s < want)
    qtbot.waitUntil(lambda: ra.position == want2, timeout=WAIT)
    key(qtbot, win, Qt.Key.Key_Right)                      # Alt+Right: one step forward
    qtbot.waitUntil(lambda: ra.position == want, timeout=WAIT)
    key(qtbot, win, Qt.Key.Key_Left, shift=True)           # Alt+Shift+Left: the turn's start
    qtbot.waitUntil(lambda: ra.position == max(s for s in turns if s < want), timeout=WAIT)
    key(qtbot, win, Qt.Key.Key_Right, shift=True)          # no later turn: the end
    qtbot.waitUntil(lambda: ra.position == last, timeout=WAIT)
    settled(qtbot, ra, last)
    assert win.truth_actions.chip.text().startswith(f"As of seq {last}")
    key(qtbot, win, Qt.Key.Key_End)                        # Alt+End: now
    qtbot.waitUntil(lambda: ra.position is None, timeout=WAIT)
    assert win.truth_actions.chip.text().startswith("Showing:")
    assert not any(win.view.isRowHidden(i) for i in range(win.history.rowCount()))


@pytest.mark.parametrize("child", [True, False], ids=["replay-child", "in-process"])
def test_rows_chip_and_statuses_before_and_after_the_compaction(qtbot, scrub, monkeypatch, child):
    win, ra, events = scrub
    if not child:                              # no child process can be started: the same, in-process
        import app.store.childproc as cp

        def refuse(*_a, **_k):
            raise OSError("no child processes here")
        monkeypatch.setattr(cp, "spawn_worker", refuse)
    h = win.history
    row4 = next(i for i, r in enumerate(h.rows) if r.seq == 4)
    # the surface statuses come from a worker: on a loaded machine they may not be on the rows yet
    qtbot.waitUntil(lambda: h.rows[next(i for i, r in enumerate(h.rows) if r.seq == 4)].surface is not None,
                    timeout=WAIT)
    row4 = next(i for i, r in enumerate(h.rows) if r.seq == 4)
    assert h.rows[row4].surface["surface"] == "shadowed"          # the whole log: replaced at seq 21
    ra.set_bar_visible(True)
    qtbot.waitUntil(lambda: ra.model.ctx is not None, timeout=WAIT)
    assert ra.model.ctx.child is child
    ra.scrub_to(20)
    settled(qtbot, ra, 20)
    assert h.rows[row4].surface["surface"] == "current"
    assert win.truth_actions.chip.text().startswith("As of seq 20 · turn 1 · ")
    for i, r in enumerate(h.rows):
        if r.seq is not None:
            assert win.view.isRowHidden(i) == (r.seq > 20 or (r.kind == "compaction" and r.last_seq > 20)), r.seq
    assert "As of seq 20" in win.inspector.summary and "title: Establish a durable compaction premise" \
        in win.inspector.summary
    ra.scrub_to(21)
    settled(qtbot, ra, 21)
    assert h.rows[row4].surface["surface"] == "shadowed"
    qtbot.waitUntil(lambda: ra.model.filled, timeout=WAIT)       # the side index's background pass ends
    ra.back_to_now()
    assert h.rows[row4].surface["surface"] == "shadowed" and not win.view.isRowHidden(row4)
    assert "As of seq" not in win.inspector.summary


def test_model_view_links_and_what_changed(qtbot, scrub):
    win, ra, events = scrub
    ra.set_bar_visible(True)
    qtbot.waitUntil(lambda: ra.model.ctx is not None, timeout=WAIT)
    ra.scrub_to(20)
    settled(qtbot, ra, 20)
    r = LogReader.open(str(fixture(COMPACTION)))
    want = as_of(r, 20)
    lst = ra.model_pane.list
    # (today's dsh: the system-prompt head first, linked to the stored row it is anchored at; issue 27)
    assert lst.count() == len(want["messages"]) == 4 and want["messages"][0]["role"] == "system"
    assert [lst.item(i).data(Qt.ItemDataRole.UserRole + 1) for i in range(lst.count())] == want["messageSeqs"]
    win.tabs.setCurrentWidget(ra.model_pane)
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        ra.model_pane._activate(lst.item(0))
    assert win.view.current_row().seq == want["messageSeqs"][0]
    win.tabs.setCurrentWidget(ra.changed_pane)                    # (the diff is computed while it is shown)
    settled(qtbot, ra, 20)
    ra.scrub_to(28)
    qtbot.waitUntil(lambda: ra.answer is not None and ra.answer["seq"] == 28 and ra.answer["diffFrom"] == 20,
                    timeout=WAIT)
    text = ra.changed_pane.text.toPlainText()
    assert text.startswith("What changed from seq 20 to seq 28")
    assert "- seq 4 [user]" in text and "~ seq 21 [user] replaces seq 4" in text and "+ seq 28 [assistant]" in text


def test_request_tab_shows_the_request_as_of_the_position(qtbot, scrub):
    win, ra, events = scrub
    win.show_request_tab()
    ra.set_bar_visible(True)
    qtbot.waitUntil(lambda: ra.model.ctx is not None, timeout=WAIT)
    r = LogReader.open(str(fixture(COMPACTION)))
    b, attempt = analysis.dispatches(events)[-1]                  # the retry after the compaction
    with qtbot.waitSignal(win.request_view.computed, timeout=WAIT):
        ra.scrub_to(attempt.last_seq)
    res = win.request_view.result
    assert res["boundary"] == b and res["request"] == analysis.request_at(r, b)["request"]
    ra.scrub_to(events[-1].seq)                                   # the turn is over: no request
    settled(qtbot, ra, events[-1].seq)
    qtbot.waitUntil(lambda: "no model dispatch" in win.request_view.status.text(), timeout=WAIT)


def test_positions_are_coalesced_and_stale_answers_dropped(qtbot, scrub):
    win, ra, events = scrub
    ra.set_bar_visible(True)
    qtbot.waitUntil(lambda: ra.model.ctx is not None, timeout=WAIT)
    got = []
    ra.model.answered.connect(lambda st: got.append(st["seq"]))
    asked0 = ra.model.asked
    for s in range(0, events[-1].seq + 1):                       # a drag over every position
        ra.bar.slider.setValue(s)
    settled(qtbot, ra, events[-1].seq)
    qtbot.waitUntil(lambda: not ra.model.busy, timeout=WAIT)
    assert got[-1] == events[-1].seq and ra.position == events[-1].seq
    # the first position's job ran while the others came: they replaced one wanted position, and
    # its answer (no longer wanted) was stopped in the child or dropped, never shown
    assert ra.model.asked - asked0 == 2 and ra.model.dropped + ra.model.cancelled >= 1
    assert got == [events[-1].seq]


def test_a_grown_log_is_read_again_at_the_next_scrub(qtbot, win, tmp_path, monkeypatch):
    import json
    import shutil
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "session.jsonl"
    shutil.copy(fixture(COMPACTION), path)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(path))
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    ra = win.replay_actions
    ra.set_bar_visible(True)
    qtbot.waitUntil(lambda: ra.model.ctx is not None, timeout=WAIT)
    last = ra.model.ctx.last
    with open(path, "a", encoding="utf-8") as f:                  # a writer appends a new turn's title
        f.write(json.dumps({"type": "session/title", "seq": last + 1, "time": 1,
                            "data": {"title": "grown", "messageSeqs": [], "source": {"kind": "user"}}}) + "\n")
    win.history.liveAppended.emit(1)
    ra.scrub_to(last + 1)
    qtbot.waitUntil(lambda: ra.answer is not None and ra.answer["seq"] == last + 1, timeout=WAIT)
    assert ra.model.ctx.last == last + 1 and ra.answer["title"] == "grown"
    assert ra.bar.slider.maximum() == last + 1
