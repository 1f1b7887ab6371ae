"""Issue 16 in the window: surface statuses on rows, the compaction row, the live face, the named
truths (chips, legend, side-by-side tails), the inspector's "why", and the fork dialog."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import fixture
from fixtures_util import WorkerJob

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower
NEXT = Path(__file__).resolve().parents[1].parent / "shared" / "fixtures" / "dsh-next"
COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
V4_IMAGE = NEXT / "0217po+deepseek-harness@321a6fa740/snapshots/acp/image-compaction/session.v4.jsonl"
V4_RESERVE = NEXT / "0217po+deepseek-harness@321a6fa740/snapshots/session/compaction-output-reserve/session.v4.jsonl"
MULTI = "examples/acp-agent/tests/snapshots/multi-turn/session.jsonl"


def crashed_log(tmp_path, torn: bool = False) -> Path:
    """A synthetic session whose writer died inside a turn (the corpus has no real open tail)."""
    from app.tools.synth import SessionSynth, write_jsonl
    p = tmp_path / "crash" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(32), target_bytes=60_000, crash=True, batch_events=(1, 8))
    if torn:
        with open(p, "ab") as f:
            f.write(b'{"type":"assistant/chunk","seq":999999,"da')        # a torn last write
    return p


def _window(path, page_size=500):
    """A RowWindow over the whole log (older pages read until none is left), every row exposed."""
    from app.ui.history.pages import older_job, _open_job, surface_job
    from app.ui.history.window import RowWindow
    w = RowWindow()
    reader, lp = _open_job(WorkerJob(), str(path), None, page_size, False, False, w.expanded)
    w.install_tail(lp)
    assert not [r for r in w.rows if r.surface or r.kind == "compaction"]     # the first paint does not wait
    w.set_surface(surface_job(WorkerJob(), str(path), None))
    while w.pages[0].page.has_more:
        older = older_job(WorkerJob(), reader, w.pages[0].page, page_size, False, False, w.expanded, w.sindex)
        if not older.page.items:
            break
        w.add_older_page(older)
    reader.close()
    w.set_window(0, 0)
    return w


def _by_seq(rows):
    return {r.seq: r for r in rows if r.seq is not None and r.kind != "compaction"}


# --------------------------------------------------------------------------- Qt-free: rows and window

@pytest.mark.parametrize("path,shadowed,since,group", [
    (fixture(COMPACTION), [4], 21, [19, 20, 21, 22]),
    (V4_IMAGE, [8], 22, [19, 21, 22, 23]),
    (V4_RESERVE, [8, 9], 19, [17, 18, 19, 20]),
])
def test_rows_carry_surface_status_and_compaction_collapses(path, shadowed, since, group):
    from app.ui.history.window import apply_changes
    w = _window(path)
    rows = _by_seq(w.rows)
    for s in shadowed:
        st = rows[s].surface
        assert st["surface"] == "shadowed" and st["since"] == since and st["replacedBy"] == since
        c = rows[s].content()
        assert c.link == since
        assert any(k == "shadow" and f"since seq {since}" in t for t, k in c.pills)
        assert c.blocks[0].text.startswith(f"Not in the model's view since seq {since}")
    # every other message row is current (or log-only), never dimmed
    for r in w.rows:
        if r.seq not in shadowed and r.surface:
            assert r.surface["surface"] in ("current", "log-only")
    # the compaction: one collapsed row where its four rows were
    comp = [r for r in w.rows if r.kind == "compaction"]
    assert len(comp) == 1
    head = comp[0]
    assert [k.seq for k in head.children] == group
    assert not [r for r in w.rows if r.seq in group and r.kind != "compaction"]
    g = head.group
    assert g["replacedCount"] == len(shadowed) and g["shadowedSeqs"] == shadowed
    assert g["tokensBefore"] > g["tokensAfter"] > 0
    c = head.content()
    assert c.badge == "COMPACTION"
    assert f"{len(shadowed)} item" in c.title and f"~{g['tokensBefore']:,} → ~{g['tokensAfter']:,} tokens" in c.title
    assert c.blocks[0].label == "Summary" and c.blocks[0].text.strip() == g["summary"].strip()[:2400].strip()
    assert "[{" not in c.plain_text()                    # the summary as text, not a list repr
    # expanding inserts the four rows after it (exact change records), collapsing removes them
    mirror = list(w.rows)
    before = len(w.rows)
    ch = w.toggle_compaction(g["compactionId"])
    apply_changes(mirror, ch, w)
    assert mirror == w.rows and len(w.rows) == before + 4
    at = w.rows.index(next(r for r in w.rows if r.kind == "compaction"))
    assert w.rows[at] is head                  # the same header object: a selection on it stays
    after = [r.seq for r in w.rows[at + 1:] if r.kind != "compaction"]
    assert [s for s in after if s in group] == group and after[0] == group[0] and "expanded" in w.rows[at].marks
    assert after[:len(group) + 1] == sorted(after[:len(group) + 1])          # in log order
    ch = w.toggle_compaction(g["compactionId"])
    apply_changes(mirror, ch, w)
    assert mirror == w.rows and len(w.rows) == before
    # the replacement seq maps to the collapsed row (a jump lands on it)
    assert w.all_rows[w.seq_ordinal(since) - w.origin].kind == "compaction"


def test_compaction_state_survives_the_face_switch():
    w = _window(fixture(COMPACTION))
    cid = next(r for r in w.rows if r.kind == "compaction").group["compactionId"]
    w.toggle_compaction(cid)
    w.set_face(True, False)
    assert [r.seq for r in w.rows if r.seq in (19, 20, 21, 22) and r.kind != "compaction"] == [19, 20, 21, 22]
    w.set_face(False, False)
    assert "expanded" in next(r for r in w.rows if r.kind == "compaction").marks


def test_live_face_on_a_crashed_tail_and_back(tmp_path):
    """The same crashed tail: closure rows (logical) when the writer is gone; none, and the call in
    flight, while it is live; the physical streaming row says the writer is gone once it is."""
    from app.ui.history.window import apply_changes
    w = _window(crashed_log(tmp_path))
    assert w.live is None
    closed = [r for r in w.rows if r.synthesized]
    assert closed, "the crash closure is shown by default"
    mirror = list(w.rows)
    apply_changes(mirror, w.set_live(True), w)
    assert mirror == w.rows
    assert not [r for r in w.all_rows if r.synthesized]
    assert not [r for r in w.all_rows if r.kind == "turn-end" and "interrupted" in r.content().title]
    apply_changes(mirror, w.set_live(False), w)
    assert [r.key for r in w.all_rows if r.synthesized] == [r.key for r in closed]


# --------------------------------------------------------------------------- the window

def _open(qtbot, win, path):
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(path))
    qtbot.waitUntil(lambda: not win.history.loading and win.history.window.sindex is not None, timeout=WAIT)
    return win.history


def test_shadowed_row_link_why_and_chip(qtbot, win, tmp_path):
    src = tmp_path / "s" / "session.jsonl"
    src.parent.mkdir()
    shutil.copy(fixture(COMPACTION), src)
    h = _open(qtbot, win, src)
    ta = win.truth_actions
    assert ta.chip.isVisible()
    assert "What the user sees" in ta.chip.text() and "Dimmed rows" in ta.chip.text()
    win.set_physical(True)
    qtbot.waitUntil(lambda: "Everything on disk" in ta.chip.text(), timeout=WAIT)
    win.set_physical(False)
    i4 = next(i for i, r in enumerate(h.rows) if r.seq == 4)
    row = h.rows[i4]
    assert row.surface["surface"] == "shadowed"
    # the inspector: the status in words, then the trace (computed in a worker)
    win.select_row(i4)
    assert ta.why_status.text().startswith("Surface: Not in the model's view since seq 21")
    qtbot.waitUntil(lambda: ta.trace_result is not None, timeout=WAIT)
    tr = ta.trace_result
    assert tr["surface"] == "shadowed" and tr["replacementChain"] == [21]
    assert tr["compaction"]["startSeq"] == 19 and tr["compaction"]["endSeq"] == 22
    assert "Replacement chain:" in ta.why.text() and 'href="seq:21"' in ta.why.text()
    assert "Compaction bracket" in ta.why.text() and "request" in ta.why.text()
    # the pill is a link: a click on it (hit-tested in the painted document) jumps to the replacement
    view = win.view
    view.scrollTo(h.index(i4, 0))
    qtbot.wait(50)
    rect = view.visualRect(h.index(i4, 0))
    doc = view.delegate.document(row, h.index(i4, 0))
    from PySide6.QtCore import QPoint
    hit = None
    for y in range(rect.top(), min(rect.bottom(), rect.top() + 40), 2):
        for x in range(rect.left(), rect.right(), 6):
            href = ta.link_at(QPoint(x, y))
            if href:
                hit = (QPoint(x, y), href)
                break
        if hit:
            break
    assert hit is not None and hit[1] == "seq:21", "the shadow pill carries an anchor to seq 21"
    assert doc is not None
    from PySide6.QtCore import Qt
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=hit[0])
    qtbot.waitUntil(lambda: view.current_row() is not None and view.current_row().kind == "compaction", timeout=WAIT)
    assert 21 in [k.seq for k in view.current_row().children]


@pytest.mark.slow
def test_compaction_row_click_expands(qtbot, win, tmp_path):
    src = tmp_path / "s" / "session.v4.jsonl"
    src.parent.mkdir()
    shutil.copy(V4_RESERVE, src)
    h = _open(qtbot, win, src)
    ic = next(i for i, r in enumerate(h.rows) if r.kind == "compaction")
    n = len(h.rows)
    from PySide6.QtCore import Qt
    win.view.scrollTo(h.index(ic, 0))
    qtbot.wait(30)
    qtbot.mouseClick(win.view.viewport(), Qt.MouseButton.LeftButton, pos=win.view.visualRect(h.index(ic, 0)).center())
    qtbot.waitUntil(lambda: len(h.rows) == n + 4, timeout=WAIT)
    assert [r.seq for r in h.rows[ic + 1:ic + 5]] == [17, 18, 19, 20]
    assert h.rows[ic + 3].surface["replaces"] == [8, 9]


@pytest.mark.slow
def test_help_legend_and_request_chip(qtbot, win, tmp_path):
    from app.log.fold.tails import TRUTHS
    assert win.truth_actions.act_legend in win.help_menu.actions()
    d = win.truth_actions.show_legend()
    names = [d.table.item(i, 0).text() for i in range(d.table.rowCount())]
    assert names == [v[0] for v in TRUTHS.values()]
    assert {"Model's view", "Everything on disk", "Logical history (crash closed in memory)",
            "Exact request at seq N", "Fork seed"} <= set(names)
    d.close()
    src = tmp_path / "s" / "session.jsonl"
    src.parent.mkdir()
    shutil.copy(fixture(MULTI), src)
    h = _open(qtbot, win, src)
    i = next(i for i, r in enumerate(h.rows) if r.kind == "assistant")
    win.select_row(i)
    with qtbot.waitSignal(win.request_view.computed, timeout=WAIT) as b:
        win.show_request_tab()
    assert win.truth_actions.request_chip.text().startswith(f"Exact request at seq {b.args[0]}")


@pytest.mark.slow
def test_side_by_side_tails_align_seqs(qtbot, win, tmp_path):
    """A crashed tail with a torn last row: the stored rows left, the logical rows right, one line
    per seq; the closers sit in the logical column, marked; the torn row in the physical gutter."""
    src = crashed_log(tmp_path, torn=True)
    _open(qtbot, win, src)
    d = win.truth_actions.show_tails()
    qtbot.waitUntil(lambda: bool(d.rows), timeout=WAIT)
    from app.log.index.reader import LogReader
    r = LogReader.open(str(src))
    page = r.tail_page(200)
    t = d.table
    assert t.rowCount() == len(d.rows) > 0
    stored = [it.seq for it in page.items if hasattr(it, "seq") and getattr(it, "type", None)]
    seqs = [int(t.item(i, 2).text()) for i in range(t.rowCount()) if t.item(i, 2).text()]
    assert seqs == sorted(seqs), "aligned by seq"
    assert set(stored) <= set(seqs)
    synth = [i for i in range(t.rowCount()) if "synth" in t.item(i, 4).text()]
    assert len(synth) == len(page.closure) > 0
    for i in synth:
        assert t.item(i, 3).text() and int(t.item(i, 2).text()) in {e.seq for e in page.closure}
    torn = [i for i in range(t.rowCount()) if "torn" in t.item(i, 0).text()]
    assert len(torn) == 1 and not t.item(torn[0], 3).text()
    both = [i for i in range(t.rowCount()) if t.item(i, 1).text() and t.item(i, 3).text()]
    assert both and all(t.item(i, 1).text() == t.item(i, 3).text() for i in both if not t.item(i, 0).text()
                        and not t.item(i, 4).text())
    d.close()
    r.close()


@pytest.mark.slow
def test_fork_dialog_names_folder_and_title_and_can_move_it(qtbot, win, tmp_path, monkeypatch):
    from app.ui import fork_action as fa_mod
    store = tmp_path / "store"
    (store / "--tmp--").mkdir(parents=True)
    src = store / "session.jsonl"
    shutil.copy(fixture(MULTI), src)
    h = _open(qtbot, win, src)
    fa = win.fork_action
    shown = {}
    dest = tmp_path / "elsewhere"
    dest.mkdir()

    def confirm(parent, pv):
        dlg = fa_mod.ForkDialog(parent, pv)
        shown["title"] = dlg.title_label.text()
        shown["folder_default"] = dlg.folder_label.text()
        dlg.set_folder(str(dest))
        shown["folder_chosen"] = dlg.folder_label.text()
        shown["dlg"] = dlg
        pv["outStore"] = dlg.out_store
        return True
    fa.confirm = confirm
    i = next(i for i, r in enumerate(h.rows) if r.event is not None and r.event.seq == 34)
    win.select_row(i)
    with qtbot.waitSignal(fa.forked, timeout=WAIT) as b:
        fa.action.trigger()
    res = b.args[0]
    from app.store.lineage import fork_child_title
    from app.store.discovery import quick_title, session_info
    parent_title = quick_title(session_info(str(src)))
    assert shown["title"] == f"Child title: {parent_title} (1)"
    assert f"Destination folder: {src.parent}" in shown["folder_default"]
    assert f"Destination folder: {dest}" in shown["folder_chosen"]
    assert os.path.commonpath([res["child"], str(dest)]) == str(dest)
    assert not os.listdir(store / "--tmp--")                   # nothing written beside the parent
    # the fresh child is a seed at rest: not live, not drawn in the live face
    qtbot.waitUntil(lambda: win.session is not None and win.session.path == res["child"], timeout=WAIT)
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    assert win.history.window.live is not True
    qtbot.waitUntil(lambda: win.history.live_state is not None, timeout=WAIT)
    assert win.history.live_state != "live"
    assert fork_child_title(str(src)) == f"{parent_title} (1)"      # the child went to another store


# --------------------------------------------------------------------------- a live writer in another process

def _simulate(out: Path, *extra: str) -> subprocess.Popen:
    exe = Path(sys.executable).with_name("session-lens")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "app"]
    return subprocess.Popen(cmd + ["simulate", str(out), *extra], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


@pytest.mark.slow
def test_live_writer_in_flight_then_closed_once_killed(qtbot, win, tmp_path):
    out = tmp_path / "live" / "session.jsonl"
    out.parent.mkdir()
    # the writer dies by itself (SIGKILL) before a chunk in the middle of a turn, ~5 s in
    from app.tools.synth import SessionSynth
    evs: list = []
    for turn in SessionSynth(7).turns():
        evs.extend(turn)
        if len(evs) > 2000:
            break
    crash = next(e["seq"] for e in evs[1500:] if e["type"] == "assistant/chunk")
    proc = _simulate(out, "--events", "20000", "--rate", "300", "--lock", "--seed", "7", "--no-pack",
                     "--crash-at", str(crash))
    try:
        deadline = time.time() + 20
        while not (out.exists() and out.stat().st_size > 4000) and time.time() < deadline:
            time.sleep(0.05)
        h = _open(qtbot, win, out)
        qtbot.waitUntil(lambda: h.live_state == "live", timeout=WAIT)
        assert h.window.live is True
        # wait for a moment when the writer is inside a turn (a crash would need closers now)
        qtbot.waitUntil(lambda: bool(h.pages) and bool(h.pages[-1].page.closure) and h.window.live is True,
                        timeout=WAIT)
        assert not [r for r in h.window.all_rows if r.synthesized], "no synthesized rows while live"
        assert not [r for r in h.window.all_rows if r.kind == "attempt-open"]
        assert not [r for r in h.window.all_rows if "interrupted (crash repair" in r.content().title]
        assert "Live snapshot" in win.truth_actions.chip.text()
        qtbot.waitUntil(lambda: h.feed.last_batch is not None, timeout=WAIT)
        text = win.truth_actions.live_label.text()
        assert "writer live" in text and "since the previous batch" in text and "write-behind" in text
        assert "write-behind window" in win.truth_actions.live_label.toolTip()
    finally:
        try:
            rc = proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise
    assert rc == -signal.SIGKILL
    # the writer is gone (its lock released): the crash closure, at once
    qtbot.waitUntil(lambda: h.live_state in ("crashed", "complete"), timeout=WAIT)
    qtbot.waitUntil(lambda: h.window.live is False and not h.loading and h.feed.job is None and not h.feed.queue,
                    timeout=WAIT)
    tail = h.pages[-1].page
    assert h.live_state == "crashed"          # killed inside a turn: the released lock says gone at once
    qtbot.waitUntil(lambda: h.pages[-1].page.last_seq == crash - 1, timeout=WAIT)
    tail = h.pages[-1].page
    if h.live_state == "crashed":
        assert tail.closure
        assert [r.seq for r in h.window.all_rows if r.synthesized] == [e.seq for e in tail.closure
                                                                        if e.seq in {r.seq for r in h.window.all_rows}]
        assert [r for r in h.window.all_rows if r.synthesized]
        assert "Logical history (crash closed in memory)" in win.truth_actions.chip.text()
    assert win.truth_actions.live_label.text() == ""


# --------------------------------------------------------------------------- lineage in a real home layout

def _home_with_forks(tmp_path) -> tuple[Path, Path, str]:
    """The demo's store as a Harness home, its fork child moved to another project folder, and a
    grandchild forked from that child: (parent, child, grandchild path)."""
    from app.store.faces import open_reader
    from app.store.forking import fork
    demo = Path(__file__).resolve().parents[1] / "resources" / "demo" / "sessions"
    home = tmp_path / "home" / "sessions"
    shutil.copytree(demo, home)
    (home / "--other-project--").mkdir()
    shutil.move(str(home / "--home-dev-demo-project--" / "demo-long-goal-fork"), str(home / "--other-project--"))
    parent = home / "--home-dev-demo-project--" / "demo-long-goal" / "session.jsonl"
    child = home / "--other-project--" / "demo-long-goal-fork" / "session.jsonl"
    r = open_reader(str(child))
    grand = fork(r, None)["child"]
    r.close()
    return parent, child, grand


@pytest.mark.slow
def test_lineage_view_and_audit_parent_across_project_folders(qtbot, win, tmp_path):
    parent, child, grand = _home_with_forks(tmp_path)
    # the audit window's fork diff finds the parent in the other project folder
    from app.log.index.reader import LogReader
    from app.ui.audit.data import FORK, diff_specs
    r = LogReader.open(str(child))
    specs = dict(diff_specs(list(r.iter_events()), r.header, str(child)))
    r.close()
    assert specs["fork child vs parent"] == (FORK, str(parent))
    h = _open(qtbot, win, child)
    assert h.path is not None
    d = win.truth_actions.show_lineage()
    qtbot.waitUntil(lambda: d.lineage is not None, timeout=WAIT)
    t = d.tree
    root = t.topLevelItem(0)
    assert root.text(0) == "demo-long-goal" and root.data(0, 256) == str(parent)
    me = root.child(0)
    assert me.text(0) == "▶ demo-long-goal-fork" and me.text(3) == "--other-project--"
    kid = me.child(0)
    assert kid.data(0, 256) == grand and kid.text(2)                 # a grandchild, with its seed length
    assert "1 ancestor" in d.status.text() and "1 descendant" in d.status.text()
    d.close()


def test_session_list_titles_fork_children_by_dsh_rule(qtbot, win, tmp_path):
    """Two forks of one parent (the children copy its title): listed as "X (1)" and "X (2)"."""
    from app.store.faces import open_reader
    from app.store.forking import fork
    from app.store.discovery import quick_title, session_info
    store = tmp_path / "store"
    store.mkdir()
    src = store / "session.jsonl"
    shutil.copy(fixture(MULTI), src)
    kids = []
    for _ in range(2):
        r = open_reader(str(src))
        kids.append(fork(r, 34)["child"])
        r.close()
        time.sleep(0.01)
    _open(qtbot, win, store)
    title = quick_title(session_info(str(src)))
    m = win.sessions.model
    keys = {os.path.abspath(s.path): s.key for s in m.sessions()}
    qtbot.waitUntil(lambda: m.titles.get(keys[os.path.abspath(kids[1])], "").endswith("(2)"), timeout=WAIT)
    assert m.titles[keys[os.path.abspath(str(src))]] == title
    assert m.titles[keys[os.path.abspath(kids[0])]] == f"{title} (1)"
    assert m.titles[keys[os.path.abspath(kids[1])]] == f"{title} (2)"


def test_a_live_compaction_shadows_rows_loaded_before_it(tmp_path):
    """The compaction arrives while the session is open: seq 4, loaded as current, turns shadowed
    (the index is fed by the live job; older loaded rows are repainted, records exact)."""
    from app.store.faces import open_reader
    from app.ui.history.pages import live_job
    from app.ui.history.window import apply_changes
    src = fixture(COMPACTION)
    lines = src.read_bytes().splitlines(keepends=True)
    p = tmp_path / "s" / "session.jsonl"
    p.parent.mkdir()
    cut = next(i for i, ln in enumerate(lines) if b'"compaction/start"' in ln)
    p.write_bytes(b"".join(lines[:cut]))
    w = _window(p, page_size=1)
    assert len(w.pages) > 1 and 4 not in w.pages[-1].events      # seq 4 is on an older page
    mirror = list(w.rows)
    assert _by_seq(w.rows)[4].surface["surface"] == "current"
    p.write_bytes(b"".join(lines))
    r = open_reader(str(p))
    rest = [e for e in r.iter_events() if e.seq > w.pages[-1].page.last_seq]
    r.close()
    new = live_job(WorkerJob(), w.pages[-1], rest, False, False, [])
    added, ch = w.apply_live(w.pages[-1], new)
    apply_changes(mirror, ch, w)
    assert mirror == w.rows
    st = _by_seq(w.all_rows)[4].surface
    assert st["surface"] == "shadowed" and st["since"] == 21
    assert [r for r in w.all_rows if r.kind == "compaction"]


def test_live_face_draws_a_tool_call_without_result_as_running(tmp_path):
    """A log that ends right after a tool/call (the tool is running): live, the call row is
    marked running and no synthesized TOOL_OUTCOME_UNKNOWN result is shown; once the writer is
    gone, the crash closure brings that result and the mark goes."""
    from app.log.fold.inflight import in_flight
    from app.tools.synth import SessionSynth, write_jsonl
    full = tmp_path / "full.jsonl"
    write_jsonl(str(full), SessionSynth(33), target_bytes=200_000, batch_events=(1, 8), pack=False)
    lines = full.read_bytes().splitlines(keepends=True)
    cut = [i for i, ln in enumerate(lines) if b'"type":"tool/call"' in ln][-1]
    p = tmp_path / "s" / "session.jsonl"
    p.parent.mkdir()
    p.write_bytes(b"".join(lines[:cut + 1]))
    w = _window(p)
    call_seq = w.pages[-1].page.last_seq
    tail = w.pages[-1].page
    assert [c["seq"] for c in in_flight(tail.tail_state.tracker)["runningTools"]] == [call_seq]
    closers = [r for r in w.all_rows if r.synthesized]
    assert any(r.kind == "tool-result" for r in closers)
    w.set_live(True)
    (call,) = [r for r in w.all_rows if r.seq == call_seq]
    assert "running" in call.marks and call.content().status == "running"
    assert ("running · no result yet", "warn") in call.content().pills
    assert not [r for r in w.all_rows if r.synthesized]
    w.set_live(False)
    (call,) = [r for r in w.all_rows if r.seq == call_seq]
    assert "running" not in call.marks
    assert [r.key for r in w.all_rows if r.synthesized] == [r.key for r in closers]


@pytest.mark.parametrize("index_at", ["before the read", "during the read", "after the install"])
def test_a_jump_page_carries_surface_status_and_the_shared_expanded_set(index_at):
    """A page read around a far seq (Go to seq) shows the same truths as pages read in order:
    the shadowed row's status, the window's expanded compactions; a page read before the surface
    index was built takes it when installed."""
    from app.ui.history.pages import _open_job, range_job, surface_job, range_around
    from app.ui.history.window import RowWindow
    path = fixture(COMPACTION)
    w = RowWindow()
    reader, lp = _open_job(WorkerJob(), str(path), None, 2, False, False, w.expanded)
    reader.index = reader.build_index()
    w.install_tail(lp)
    assert w.loaded_range()[0] > 4                       # seq 4 is not on the tail page
    sindex = surface_job(WorkerJob(), str(path), None)
    if index_at == "before the read":
        w.set_surface(sindex)
    lo, hi = range_around(reader.index, 4, 2)
    page = range_job(WorkerJob(), reader, lo, hi, False, False, w.expanded, w.sindex)
    assert page.expanded is w.expanded and page.sindex is w.sindex
    if index_at == "during the read":
        w.set_surface(sindex)                            # the page was read without it: adopted on install
    w.install_range(page, 4)
    if index_at == "after the install":
        w.set_surface(sindex)
    reader.close()
    assert w.has_newer and page.sindex is sindex
    row = next(r for r in w.all_rows if r.seq == 4)
    assert row.surface["surface"] == "shadowed" and row.surface["since"] == 21
    assert row.content().link == 21
