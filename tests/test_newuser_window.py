"""Issue 35 in the window (what a new user hit, round 3), each on the demo store or a generated log."""
from __future__ import annotations

import pytest
from PySide6.QtWidgets import QApplication

from test_ui_history import WAIT, make_window  # noqa: F401 (fixtures)

SESSION_DIR = "--home-dev-demo-project--"


def _infos():
    from app.store.discovery import discover
    from app.ui.main_window import demo_store
    return {s.id: s for s in discover(str(demo_store())).sessions}


def _demo(qtbot, make_window, session="demo-v4-advanced", size=(1400, 860)):  # noqa: F811
    from app.ui.main_window import demo_store
    store = demo_store()
    info = _infos()[session]
    win = make_window(page_size=50)
    win.resize(*size)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(store), select_path=info.path)
    qtbot.waitUntil(lambda: win.history.path == info.path and not win.history.loading, timeout=WAIT)
    return win, win.history


def _switch(qtbot, win, session: str):
    info = _infos()[session]
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_session(info)
    qtbot.waitUntil(lambda: win.history.path == info.path and not win.history.loading, timeout=WAIT)


def test_request_chip_is_reset_when_another_session_opens(qtbot, make_window):  # noqa: F811
    """Item 4: the Request tab kept "Exact request at seq 27 …" of the previous session."""
    win, h = _demo(qtbot, make_window)
    i = max(i for i, r in enumerate(h.rows) if r.event is not None and r.event.type == "assistant/message")
    win.select_row(i)
    with qtbot.waitSignal(win.request_view.computed, timeout=WAIT):
        win.show_request_tab()
    chip = win.truth_actions.request_chip
    assert chip.text().startswith("Exact request at seq")
    win.tabs.setCurrentIndex(0)
    _switch(qtbot, win, "demo-v4-tool-turn")
    QApplication.processEvents()
    assert not chip.text().startswith("Exact request at seq"), chip.text()
    assert "the selected dispatch" in chip.text()


def test_fork_preview_message_is_gone_while_the_dialog_is_open(qtbot, make_window, tmp_path):  # noqa: F811
    """Item 11: "Preparing fork preview…" stayed in the status bar behind the fork dialog."""
    import shutil

    from conftest import fixture
    src = tmp_path / "store" / "session.jsonl"
    src.parent.mkdir()
    shutil.copy(fixture("examples/acp-agent/tests/snapshots/multi-turn/session.jsonl"), src)
    win = make_window()
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(src))
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    fa = win.fork_action
    shown: list = []
    fa.confirm = lambda w, pv: shown.append(w.statusBar().currentMessage()) or False
    win.select_row(next(i for i, r in enumerate(win.history.rows) if r.event is not None and r.event.seq == 34))
    fa.action.trigger()
    assert win.statusBar().currentMessage() == "Preparing fork preview…"
    qtbot.waitUntil(lambda: bool(shown), timeout=WAIT)
    assert "Preparing" not in shown[0], shown


@pytest.mark.parametrize("key", ["Escape", "Ctrl+W"])
def test_audit_window_closes_on_escape_and_ctrl_w(qtbot, make_window, key):  # noqa: F811
    """Item 12: the Audit window ignored Esc and Ctrl+W."""
    from PySide6.QtGui import QKeySequence
    win, _h = _demo(qtbot, make_window)
    aa = win.audit_action
    with qtbot.waitSignal(aa.opened, timeout=WAIT):
        aa.act_audit.trigger()
    aw = aa.window
    aw.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is aw, timeout=WAIT)
    focus = aw.focusWidget() or aw
    seq = QKeySequence(key)[0]
    qtbot.keyClick(focus, seq.key(), seq.keyboardModifiers())
    qtbot.waitUntil(lambda: not aw.isVisible(), timeout=WAIT)
    assert win.isVisible()


def _session_actions(win):
    ha = win.history_actions
    return {"physical": ha.act_physical, "attempts": ha.act_attempts, "request": win.frame_actions.act_request}


def test_face_toggles_and_show_request_need_a_session(qtbot, make_window, tmp_path):  # noqa: F811
    """Item 13: the face toggles and Show request were enabled with no session open, e.g. after a
    `.jsonl` that is no session was refused."""
    win = make_window()
    QApplication.processEvents()
    assert not [n for n, a in _session_actions(win).items() if a.isEnabled()]
    win2, _h = _demo(qtbot, make_window)
    assert all(a.isEnabled() for a in _session_actions(win2).values())
    bad = tmp_path / "notes.jsonl"
    bad.write_text('{"hello": "world"}\n{"not": "a session"}\n')
    with qtbot.waitSignal(win.welcomeReady, timeout=WAIT):
        win.open_store(str(bad))
    QApplication.processEvents()
    assert win.history.path is None
    assert not [n for n, a in _session_actions(win).items() if a.isEnabled()]


@pytest.mark.parametrize("ending", ["done", "failed", "progress"])
def test_a_job_outliving_its_window_prints_no_traceback(qtbot, capfd, ending):
    """Item 18: a job (the inspector's trace) still running when the window closed printed
    "RuntimeError: Signal source has been deleted" once it ended: its job object had gone with
    the window.  Now the end has nowhere to go and nothing is printed; a job still reporting
    progress is stopped."""
    import threading

    import shiboken6

    from app.ui.workers import Jobs
    jobs = Jobs()
    go = threading.Event()
    ran = []

    def work(job):
        go.wait(10)
        if ending == "progress":
            try:
                for k in range(3):
                    job.report(k, 3)
            except BaseException as e:
                ran.append(type(e).__name__)
                raise
        if ending == "failed":
            raise ValueError("no such seq")
        return {"seq": 1}

    job = jobs.submit(work, name="trace-why")
    shiboken6.delete(job)                 # what closing the window does to it
    go.set()
    assert jobs.pool.waitForDone(10000)
    err = capfd.readouterr().err
    assert "Signal source has been deleted" not in err and "Traceback" not in err, err
    if ending == "progress":
        assert ran == ["Cancelled"]


@pytest.fixture(scope="module")
def synth_log(tmp_path_factory):
    """A generated 40-turn log (reasoning in most replies, tool calls, retries, compactions)."""
    from app.tools.synth import SessionSynth, write_jsonl
    p = tmp_path_factory.mktemp("synth") / "s" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(35, context_window=24_000), turns=40)
    return p


def _open(qtbot, win, path):
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(path))
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    return win.history


def test_copy_as_markdown_labels_reasoning(qtbot, make_window, synth_log):  # noqa: F811
    """Item 7: Copy as Markdown pasted reasoning as if it were the reply; the export labels it."""
    win = make_window()
    h = _open(qtbot, win, synth_log)

    def blocks(r):
        msg = (r.event.data or {}).get("message") or {}
        return [b.get("type") for b in msg.get("content") or [] if isinstance(b, dict)]
    i = max(i for i, r in enumerate(h.rows)
            if r.kind == "assistant" and r.event is not None and {"reasoning", "text"} <= set(blocks(r)))
    msg = h.rows[i].event.data["message"]
    reasoning = next(b["text"] for b in msg["content"] if b.get("type") == "reasoning")
    reply = next(b["text"] for b in msg["content"] if b.get("type") == "text")
    win.select_row(i)
    text = win.frame_actions.copy_markdown()
    assert "*reasoning:*" in text
    first = reasoning.splitlines()[0]
    assert f"> {first}" in text                               # quoted under its label
    assert text.index("*reasoning:*") < text.index(f"> {first}")
    assert reply.splitlines()[0] in text and f"> {reply.splitlines()[0]}" not in text   # the reply is not quoted


def test_export_proposes_the_title_as_a_safe_file_name(qtbot, make_window, tmp_path):  # noqa: F811
    """Item 21: export file names used the session id; the title, made safe, is proposed."""
    import os

    from app.ui.audit_action import safe_file_stem
    win, _h = _demo(qtbot, make_window)
    titles = win.sessions.model.titles
    qtbot.waitUntil(lambda: bool(titles.get(win.session.key) or win.session.title), timeout=WAIT)
    title = titles.get(win.session.key) or win.session.title
    assert title and win.session.id not in title
    aa = win.audit_action
    asked: list = []
    aa.ask_path = lambda w, t, default, filters: asked.append(default) or ""
    for fmt in ("markdown", "zip"):
        aa.export(fmt)
    names = [os.path.basename(a) for a in asked]
    stem = safe_file_stem(title)
    assert stem and names == [f"{stem}.md", f"dsh-session-{stem}.zip"], names
    assert win.session.id not in names[0]
    # hostile titles: separators, reserved names, controls, a long sentence
    assert safe_file_stem('fix: "a/b\\c" <now>?\x00\t') == "fix-a-b-c-now"
    assert safe_file_stem("CON") == "session-CON" and safe_file_stem("...") == ""
    long = safe_file_stem("word " * 40)
    assert len(long) <= 60 and not long.endswith("-") and long.endswith("word")
    assert safe_file_stem("Résumé 日本語 ✓ tests") == "Résumé-日本語-tests"


def test_lineage_dialog_shows_v4_seed_length_and_the_whole_folder(qtbot, make_window):  # noqa: F811
    """Item 10: the child's seed length cell was empty (v2+ headers have no seedLength) and the
    folder column was clipped."""
    win, _h = _demo(qtbot, make_window, session="demo-v4-long")
    d = win.truth_actions.show_lineage()
    qtbot.waitUntil(lambda: d.lineage is not None, timeout=WAIT)
    QApplication.processEvents()
    t = d.tree
    me = t.topLevelItem(0)
    assert me.text(0) == "▶ demo-v4-long"
    kid = me.child(0)
    assert kid.text(0) == "demo-v4-long-fork"
    # its seed length: the seq of its session/end-seed {inherited: true}, read from the child's own rows
    from app.store.faces import open_reader
    r = open_reader(_infos()["demo-v4-long-fork"].path, None)
    try:
        end_seed = next(e.seq for e in r.iter_events() if e.type == "session/end-seed")
    finally:
        r.close()
    assert kid.text(2) == str(end_seed)
    folder = kid.text(3)
    assert folder == SESSION_DIR
    fm = t.fontMetrics()
    assert t.columnWidth(3) >= fm.horizontalAdvance(folder)
    right = t.header().sectionViewportPosition(3) + t.columnWidth(3)
    assert right <= t.viewport().width(), (right, t.viewport().width())
    assert kid.toolTip(3) == kid.data(0, 256)
    d.close()
    win2, _ = _demo(qtbot, make_window, session="demo-v4-advanced")
    d = win2.truth_actions.show_lineage()
    qtbot.waitUntil(lambda: d.lineage is not None, timeout=WAIT)
    sub = d.tree.topLevelItem(0).child(0)
    assert sub.text(2) == "none (subagent)"           # a subagent child inherits nothing
    d.close()


# --------------------------------------------------------------------------- a live writer (another process)

def _simulate(out, *extra):
    import subprocess
    import sys
    return subprocess.Popen([sys.executable, "-m", "app", "simulate", str(out), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.mark.slow
def test_live_session_never_widens_the_window_and_its_age_ticks(qtbot, make_window, tmp_path):  # noqa: F811
    """Item 1: with `simulate --rate 60` writing, the window widened from 1,400 px (the permanent
    status texts were not elided) and never shrank back.  Item 14: "last append (0 s ago)" did not
    tick while the writer paused."""
    import os
    import re
    import signal
    import time
    out = tmp_path / "live" / "session.jsonl"
    out.parent.mkdir()
    proc = _simulate(out, "--events", "3000", "--rate", "60", "--lock", "--seed", "3")
    try:
        deadline = time.time() + 20
        while not (out.exists() and out.stat().st_size > 2000) and time.time() < deadline:
            time.sleep(0.05)
        win = make_window()
        win.resize(1400, 860)
        QApplication.processEvents()
        h = _open(qtbot, win, out)
        qtbot.waitUntil(lambda: h.live_state == "live" and h.feed.last_batch is not None, timeout=WAIT)
        label = win.truth_actions.live_label
        qtbot.waitUntil(lambda: "writer live" in label.text(), timeout=WAIT)
        qtbot.wait(1500)                                  # a few batches and status updates
        assert win.width() == 1400, win.width()
        assert win.minimumSizeHint().width() <= 1400
        assert win.statusBar().minimumSizeHint().width() < 1000
        # the writer pauses (still holding its lock): the age of the last append counts on
        os.kill(proc.pid, signal.SIGSTOP)

        def age():
            m = re.search(r"\((\d+) s ago\)", label.text())
            return int(m.group(1)) if m else None
        qtbot.waitUntil(lambda: age() is not None, timeout=WAIT)
        first = age()
        qtbot.waitUntil(lambda: (age() or 0) >= first + 2, timeout=6000)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        qtbot.waitUntil(lambda: h.live_state in ("crashed", "complete"), timeout=WAIT)
        QApplication.processEvents()
        assert win.width() == 1400, win.width()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_long_seq_lists_are_ranges_and_chains_are_summarised(qtbot, make_window, synth_log):  # noqa: F811
    """Item 2: a replacement chain and a message's sourceEventSeqs were printed seq by seq
    (12 lines per row on a long log).  Runs are ranges now, a long chain says how many times and
    the latest seq, and the whole list is one click away."""
    from app.log.fold.surface import index_for
    from app.log.index.reader import LogReader
    r = LogReader.open(str(synth_log))
    idx = index_for(r)
    seq = max(idx.fold.replaced_by, key=lambda s: (len(idx.replacement_chain(s)), -s))
    chain = idx.replacement_chain(seq)
    cites = max((e for e in r.iter_events() if e.source_event_seqs), key=lambda e: len(e.source_event_seqs))
    r.close()
    assert len(chain) >= 5 and len(cites.source_event_seqs) > 60
    win = make_window(page_size=100_000)            # the whole log in the list (the chain starts early)
    win.resize(1400, 860)
    _open(qtbot, win, synth_log)
    qtbot.waitUntil(lambda: win.history.window.sindex is not None, timeout=WAIT)
    ta = win.truth_actions
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.goto_seq(seq)
    qtbot.waitUntil(lambda: ta.why_status.text().startswith("Surface:"), timeout=WAIT)
    status = ta.why_status.text()
    later = chain[1:]
    assert f"replaced in turn {len(later)} times, latest by seq {later[-1]}" in status, status
    assert str(later[1]) not in status
    qtbot.waitUntil(lambda: ta.trace_result is not None and ta._why_seq == seq and "tracing" not in ta.why.text(),
                    timeout=WAIT)
    why = ta.why.text()
    line = next(ln for ln in why.split("<br>") if ln.startswith("Replacement chain:"))
    assert f"({len(chain)} seqs)" in line and 'href="more:' in line
    assert line.count('href="seq:') == 4, line                    # three runs, "…", the latest
    href = why.split('href="more:', 1)[1].split('"', 1)[0]
    ta._on_link(f"more:{href}")                                 # "all ›": the whole chain
    assert all(f'href="seq:{s}"' in ta.why.text() for s in chain)
    # a message citing its chunk seqs: one range, not a hundred numbers
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.goto_seq(cites.seq)
    links = win.inspector.links.text()
    src = sorted(set(cites.source_event_seqs))
    line = next(ln for ln in links.split("<br>") if ln.startswith("sourceEventSeqs"))
    assert line.count('href="seq:') <= 8, line
    assert f'{src[0]}</a>–<a href="seq:' in line
    assert win.inspector.link_seqs[:len(src)] == list(cites.source_event_seqs)[:len(src)]


def test_finished_log_with_seq_gaps_has_nothing_in_flight(qtbot, make_window):  # noqa: F811
    """Item 8: `cordis-tool-round` (finished; seq gaps) showed "STREAMING model call in flight"
    cards and "60 of 263 events loaded" with all 60 events loaded."""
    from conftest import fixture
    win = make_window()
    h = _open(qtbot, win, fixture("apps/web/tests/snapshots/cordis-tool-round/session.jsonl"))
    qtbot.waitUntil(lambda: h.live_state is not None and h.window.sindex is not None, timeout=WAIT)
    QApplication.processEvents()
    titles = [r.content().title for r in h.rows]
    assert not [t for t in titles if "in flight" in t], titles
    assert "incomplete model call" in titles
    assert not [r for r in h.rows if r.kind == "streaming"]
    counts = win.status_counts.text()
    assert "60 of 60 events loaded" in counts or "60 events loaded" in counts, counts
    assert "263" not in counts


@pytest.mark.parametrize("errors_only", [False, True])
def test_f8_onto_a_hidden_attempt_frames_no_unrelated_row(qtbot, make_window, errors_only):  # noqa: F811
    """Item 6: demo-v4-advanced, Ctrl+Home, F8: the error is the hidden attempt at seq 17, yet
    `image/offload` seq 18 was framed.  Item 5: with Errors only and Shift+F8 onto it, the inspector
    showed the attempt's JSON under the framed row's surface status and trace."""
    from PySide6.QtCore import Qt
    win, h = _demo(qtbot, make_window)
    ga = win.go_actions
    qtbot.waitUntil(lambda: ga.outline is not None, timeout=WAIT * 4)   # (a child process: slow to start on a loaded machine)
    assert 17 in ga.error_seqs and h.hidden_attempt_of(17) is not None
    if errors_only:
        ga.act_errors_only.setChecked(True)
        QApplication.processEvents()
        later = next(s for s in ga.error_seqs if s > 17)
        with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
            win.goto_seq(later)
        with qtbot.waitSignal(win.seqSelected, timeout=WAIT) as b:
            qtbot.keyClick(win.view, Qt.Key.Key_F8, Qt.KeyboardModifier.ShiftModifier)
    else:
        with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
            win.history_actions.controller.goto_start()
        with qtbot.waitSignal(win.seqSelected, timeout=WAIT) as b:
            qtbot.keyClick(win.view, Qt.Key.Key_F8)
    assert b.args[0] == 17
    QApplication.processEvents()
    row = win.view.current_row()
    assert row is None or (row.first_seq or row.seq) <= 17 <= max(row.seq, row.last_seq or row.seq), row.seq
    assert win.inspector.title.text().startswith("assistant/chunk · seq 17") or "seq 17" in win.inspector.title.text()
    assert "Hidden attempts" in win.inspector.title.text() + win.statusBar().currentMessage()
    ta = win.truth_actions
    assert not ta.why_status.isVisible() and not ta.why.isVisible()     # no other row's status or trace


def _word_y(view, row_index: int, word: str):
    """Where ``word`` of the row at ``row_index`` is drawn, in viewport pixels (None: not found)."""
    from PySide6.QtGui import QTextCursor

    from app.log.query.textview import fold_spans
    m = view.model()
    ix = m.index(row_index, 0)
    doc = view.delegate.document(m.row_at(row_index), ix)
    spans = fold_spans(doc.toPlainText(), word, 1, utf16=True)
    if not spans:
        return None
    cur = QTextCursor(doc)
    cur.setPosition(spans[0][0])
    block = cur.block()
    line = block.layout().lineForTextPosition(spans[0][0] - block.position())
    inner = line.y() if line.isValid() else 0.0          # the line inside its block (a block may hold many)
    return view.visualRect(ix).top() + doc.documentLayout().blockBoundingRect(block).top() + inner


@pytest.mark.parametrize("turn,turns", [(3, 9), (3, 40), (37, 40)])
def test_first_find_jump_shows_the_word_after_the_results_dock_opens(qtbot, make_window, tmp_path, turn, turns):  # noqa: F811
    """Item 3: Ctrl+F, a word on line 700 of a long tool output, Enter: the row expanded but the
    line ended below the fold, because the results dock opened after the scroll."""
    from PySide6.QtCore import Qt

    from app.tools.plant import PlantingSynth
    from app.tools.synth import write_jsonl
    s = PlantingSynth(seed=11, at_turn=turn, plants={"zebraquokka": "tool-output-line-700"})
    path = tmp_path / "p" / "session.jsonl"
    write_jsonl(str(path), s, turns=turns)
    seq = s.planted["zebraquokka"][0]
    win = make_window()
    win.resize(1400, 860)
    h = _open(qtbot, win, path)
    qtbot.waitUntil(lambda: h.index_state == "ready", timeout=WAIT)
    fa = win.find_actions
    assert not fa.results_dock.isVisible()
    win.open_search()
    win.find_edit.setText("zebraquokka")
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        qtbot.keyClick(win.find_edit, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: fa.results_dock.isVisible() and fa.stats is not None, timeout=WAIT)
    qtbot.wait(600)                                    # the dock, the row's expansion: all settled
    view = win.view
    r = h.row_for_seq(seq)
    assert r is not None and h.row_at(r).expanded
    y = _word_y(view, r, "zebraquokka")
    assert y is not None and 0 <= y <= view.viewport().height() - view.fontMetrics().height(), \
        (y, view.viewport().height())
    # the layout changes just after the jump (the results dock grows): the word stays in view
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        fa.goto_hit(0)
    qtbot.wait(250)                                    # (after the jump's own second scroll)
    win.resizeDocks([fa.results_dock], [int(win.height() * 0.55)], Qt.Orientation.Vertical)
    qtbot.wait(300)
    y = _word_y(view, h.row_for_seq(seq), "zebraquokka")
    assert y is not None and 0 <= y <= view.viewport().height() - view.fontMetrics().height(), \
        (y, view.viewport().height())


def test_outline_dock_takes_its_width_from_the_session_list_and_the_split_is_kept(qtbot, make_window):  # noqa: F811
    """Item 9: at 1,400 px the Outline dock left the history about 500 px and the inspector 135 px.
    It takes its width from the session list now, gives it back when closed, and a split the user
    dragged is the next window's split."""
    from PySide6.QtCore import Qt
    win, _h = _demo(qtbot, make_window)
    qtbot.waitUntil(lambda: win.start._split_sized, timeout=WAIT)
    QApplication.processEvents()
    before = win.split.sizes()
    ga = win.go_actions
    ga.outline_dock.show()
    qtbot.waitUntil(lambda: sum(win.split.sizes()) < sum(before) - 150, timeout=WAIT)
    qtbot.wait(100)
    lst, hist, insp = win.split.sizes()
    assert hist >= 0.9 * before[1] and insp >= 250, (before, win.split.sizes())
    assert lst < before[0]
    # the inspector at its floor keeps its tabs' whole names (the bar scrolls; "E…", "R…" read as nothing)
    bar = win.tabs.tabBar()
    assert all(bar.tabRect(i).width() >= bar.fontMetrics().horizontalAdvance(bar.tabText(i)) for i in range(bar.count())), \
        [(bar.tabText(i), bar.tabRect(i).width()) for i in range(bar.count())]
    # the dock wide for a moment (it was: its progress pane's title, while the whole-log pass ran),
    # then narrow again: the history gets back what it gave, not the list
    dock = ga.outline_dock
    narrow = dock.width()
    win.resizeDocks([dock], [narrow + 150], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: win.split.sizes()[1] < hist - 100, timeout=WAIT)
    win.resizeDocks([dock], [narrow], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: abs(dock.width() - narrow) <= 2, timeout=WAIT)
    qtbot.wait(100)
    assert abs(win.split.sizes()[1] - hist) <= 10 and win.split.sizes()[0] <= lst + 10, (lst, hist, win.split.sizes())
    from app.ui.progress_pane import ProgressPane      # the pass's pane never widens the dock
    pane = ProgressPane("Reading the whole log ahead: turns, errors, problems")
    assert pane.minimumSizeHint().width() <= ga.outline_view.minimumWidth(), pane.minimumSizeHint()
    pane.deleteLater()
    dock.hide()
    qtbot.waitUntil(lambda: abs(sum(win.split.sizes()) - sum(before)) < 5, timeout=WAIT)
    qtbot.wait(100)
    assert all(abs(a - b) <= 10 for a, b in zip(win.split.sizes(), before)), (before, win.split.sizes())
    # the user drags the split: the next window opens on it
    total = sum(win.split.sizes())
    win.split.setSizes([300, total - 300 - 500, 500])
    win.split.splitterMoved.emit(300, 1)
    qtbot.wait(600)
    win2, _ = _demo(qtbot, make_window)
    qtbot.waitUntil(lambda: win2.start._split_sized, timeout=WAIT)
    QApplication.processEvents()
    got = win2.split.sizes()
    assert abs(got[0] / sum(got) - 300 / total) < 0.03 and abs(got[2] / sum(got) - 500 / total) < 0.03, got


def test_session_titles_alike_are_told_apart_and_columns_share_the_width(qtbot, make_window):  # noqa: F811
    """Item 16: at the default width several titles read the same once elided, and widening the
    panel widened only the Session column (a clipped Project stayed clipped)."""
    win, _h = _demo(qtbot, make_window)
    qtbot.waitUntil(lambda: win.start._split_sized, timeout=WAIT)
    panel = win.sessions
    m, tree = panel.model, panel.tree
    qtbot.waitUntil(lambda: bool(m.titles), timeout=WAIT)
    QApplication.processEvents()
    infos = m.sessions()
    labels = [m.label(i) for i in infos]
    from app.ui.session_list import distinct_elide
    from app.ui.session_model import DISTINCT_ROLE
    a, b = (next(i for i in infos if i.id == f"demo-v4-advanced-child-{k}") for k in (1, 2))
    la, lb = m.label(a), m.label(b)
    fm = tree.fontMetrics()
    w = tree.columnWidth(0) - 40
    assert fm.elidedText(la, tree.textElideMode(), w) == fm.elidedText(lb, tree.textElideMode(), w)  # (the bug)
    # what the list draws now: the part where the two differ is in view
    ea, eb = (distinct_elide(fm, lab, w, m.data(m.index_for_key(i.key), DISTINCT_ROLE))
              for lab, i in ((la, a), (lb, b)))
    assert ea != eb and "WORKF" in ea + eb and "DIREC" in ea + eb, (ea, eb)
    assert fm.horizontalAdvance(ea) <= w and fm.horizontalAdvance(eb) <= w
    assert len(set(labels)) == len(labels), [x for x in labels if labels.count(x) > 1]
    # every column shows its whole text; widening the panel widens the titles, not the others
    for c in (1, 2, 3):
        if tree.isColumnHidden(c):
            continue
        for i in infos:
            text = m.data(m.index_for_key(i.key).siblingAtColumn(c))
            assert fm.horizontalAdvance(text) <= tree.columnWidth(c), (c, text, tree.columnWidth(c))
    sizes = win.split.sizes()
    win.split.setSizes([sizes[0] + 200, sizes[1] - 200, sizes[2]])
    QApplication.processEvents()
    assert tree.columnWidth(0) > 0.5 * tree.viewport().width()


@pytest.mark.parametrize("how", ["default", "path"])
def test_demo_opens_on_a_tool_call_and_generic_rows_read_as_one_line(qtbot, make_window, how):  # noqa: F811
    """Item 23: the demo opened on a run of FEEDBACK/COMMAND rows printed as JSON.  It opens on
    demo-v4-advanced's first tool call (after a retried model call and its request), and a row
    without a card of its own reads as one line of "key value" pairs (the JSON: in the inspector)."""
    from app.ui.main_window import demo_store
    win = make_window()
    win.resize(1400, 860)
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT) as b:
        if how == "default":
            win.open_default()
        else:
            win.open_store(str(demo_store()))
    assert b.args[0] == 21
    assert win.history.path.endswith("demo-v4-advanced/session.v4.jsonl.zstd")
    row = win.view.current_row()
    assert row is not None and row.seq == 21 and row.kind == "assistant"
    assert any(r.kind == "tool-call" for r in win.history.rows[win.history.row_for_seq(21):][:3])
    view = win.view
    ix = view.model().index(win.history.row_for_seq(21), 0)
    assert view.viewport().rect().intersects(view.visualRect(ix))          # in view
    generic = [r for r in win.history.rows if r.event is not None and r.event.type.startswith(("feedback/", "command/done"))]
    assert generic
    for r in generic:
        c = r.content()
        text = c.plain_text()
        body = [blk.text for blk in c.blocks]
        assert all("\n" not in t and not t.lstrip().startswith("{") for t in body), body
        assert '{"' not in text
    rec = next(r for r in generic if r.event.type == "feedback/record")
    assert "text “The session needs a clearer explanation.”" in rec.content().plain_text()
    # what came before seq 21 (the user's prompt, the retried call) is a wheel's turn up away: the view
    # opened at its top (scroll value 0) while a page was loading, and no scroll asked for them again
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    qtbot.wait(300)                                   # (settled: nothing more comes by itself)
    vp = view.viewport()
    for _ in range(12):
        at = QPointF(vp.rect().center())
        QApplication.sendEvent(vp, QWheelEvent(at, vp.mapToGlobal(at), QPoint(0, 0), QPoint(0, 120),
                                               Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                                               Qt.ScrollPhase.NoScrollPhase, False))
        qtbot.wait(50)
    qtbot.waitUntil(lambda: win.history.rows[0].seq == 0, timeout=WAIT)


@pytest.mark.slow
def test_new_rows_below_marker_while_scrolled_up_in_a_live_session(qtbot, make_window, tmp_path):  # noqa: F811
    """Item 20: scrolled up in a live session, nothing said that rows were arriving below."""
    import time
    out = tmp_path / "live" / "session.jsonl"
    out.parent.mkdir()
    proc = _simulate(out, "--events", "4000", "--rate", "80", "--lock", "--seed", "5")
    try:
        deadline = time.time() + 20
        while not (out.exists() and out.stat().st_size > 6000) and time.time() < deadline:
            time.sleep(0.05)
        win = make_window()
        win.resize(1400, 860)
        h = _open(qtbot, win, out)
        qtbot.waitUntil(lambda: h.live_state == "live", timeout=WAIT)
        view, marker = win.view, win.view.new_rows
        qtbot.wait(800)
        assert not marker.isVisible()                       # following the tail: nothing to say
        # the rows fill more than the view (an open of a warm process can come before that: a
        # scroll up then moves nothing, and the view rightly goes on following the tail)
        bar = view.verticalScrollBar()
        qtbot.waitUntil(lambda: bar.maximum() > view.viewport().height() // 2, timeout=30_000)
        assert not marker.isVisible() and view.at_bottom()  # followed all the way: still nothing to say
        bar.setValue(0)                                     # the reader scrolls up
        qtbot.waitUntil(lambda: marker.isVisible(), timeout=WAIT)     # (a count when the rows are loaded)
        assert "new row" in marker.text() and "below" in marker.text()
        vp = view.viewport().geometry()
        assert vp.contains(marker.geometry().center()) and marker.geometry().bottom() <= vp.bottom()
        marker.click()
        qtbot.waitUntil(lambda: view.at_bottom(), timeout=WAIT)
        assert not marker.isVisible()
    finally:
        proc.kill()
        proc.wait(10)
