"""Audit entry points in the real main window (pytest-qt, offscreen, real fixtures):
Tools > Audit session… and "Trace this row" open the audit window loaded in a worker, traced at
the selected row; File > Export writes raw bytes identical to the source with a correct sha256
sidecar, and a redacted HTML transcript without the planted secrets."""
from __future__ import annotations

import hashlib
import json
import shutil

import pytest

import app.ui  # noqa: F401  (PySide6 refcount work-around before any Qt code)
from conftest import fixture

pytest.importorskip("PySide6")
from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMenu  # noqa: E402

COMPACTION = "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


def window(qtbot, path):
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=50, theme_mode="light")
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.open_store(str(path))
    qtbot.waitUntil(lambda: not w.history.loading, timeout=WAIT)
    return w, w.audit_action


def row_index(w, seq):
    return next(i for i, r in enumerate(w.history.rows) if r.seq == seq)


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def copy_fixture(tmp_path, rel, name="session.jsonl"):
    d = tmp_path / "store"
    d.mkdir(exist_ok=True)
    p = d / name
    shutil.copy(fixture(rel), p)
    return p


def test_menus_and_disabled_without_a_session(qtbot):
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=50, theme_mode="light")
    qtbot.addWidget(w)
    aa = w.audit_action
    titles = [a.text().replace("&", "") for a in w.menuBar().actions()]
    assert "Tools" in titles
    file_menu = next(a.menu() for a in w.menuBar().actions() if a.text().replace("&", "") == "File")
    texts = [a.text().replace("&", "") for a in file_menu.actions()]
    assert "Export" in texts and texts.index("Export") < texts.index("Quit")
    export_texts = [a.text().replace("&", "") for a in aa.export_menu.actions()]
    assert any("SHA-256" in t for t in export_texts) and any("Redact" in t for t in export_texts)
    assert aa.act_audit.shortcut().toString() == "Ctrl+Shift+T"
    assert not aa.act_audit.isEnabled() and not aa.act_trace.isEnabled()
    assert not aa.export_actions["raw"].isEnabled()
    w.shutdown()


@pytest.mark.slow
def test_audit_session_opens_at_the_selected_row(qtbot, tmp_path):
    src = copy_fixture(tmp_path, COMPACTION)
    before = sha(src)
    w, aa = window(qtbot, src)
    assert aa.act_audit.isEnabled()
    w.select_row(row_index(w, 4))
    assert aa.act_trace.isEnabled() and aa.current_seq() == 4
    with qtbot.waitSignal(aa.opened, timeout=WAIT) as blocker:
        aa.act_audit.trigger()
        aw = aa.window
        # the log is decoded in a worker: the window first shows its loading page
        assert aw is not None and aw.isVisible() and aw.stack.currentIndex() == 0
    assert blocker.args[0] is aw and not aw.loading and aw.stack.currentIndex() == 1
    assert aw.isWindow() and aw.parent() is w
    f = aw.trace_panel.fields
    assert f["event"].text().startswith("seq 4 ") and aw.trace_panel.spin.value() == 4
    assert f["surface"].text() == "shadowed" and f["replaced by"].text() == "21"
    assert [aw.tabs.tabText(i) for i in range(aw.tabs.count())] == ["Trace", "Diff", "Plots", "Stats"]
    assert aw.stats is not None and aw.plots.tokens_step.labels
    # a comparison other than the first is computed in a worker when chosen
    items = [aw.diff_view.chooser.itemText(i) for i in range(aw.diff_view.chooser.count())]
    assert items[0].startswith("attempt 18–18 (CONTEXT_WINDOW_EXCEEDED)")       # precomputed
    assert "CONTEXT_WINDOW_EXCEEDED" in aw.diff_view.summary.text()
    req = items.index("requests of steps 1.1 → 1.2")
    with qtbot.waitSignal(aw.diffShown, timeout=WAIT) as b:
        aw.diff_view.chooser.setCurrentIndex(req)
    assert b.args[0] == req and "messages 1 → 3: common prefix 0" in aw.diff_view.summary.text()
    # a second row: the same window, the trace computed in a worker (the replacement is one of
    # the rows a collapsed compaction folds: expanded first)
    qtbot.waitUntil(lambda: w.history.window.sindex is not None, timeout=WAIT)      # statuses in a worker
    comp = next(r for r in w.history.rows if r.kind == "compaction")
    w.history.toggle_compaction(comp.group["compactionId"])
    w.select_row(row_index(w, 21))
    with qtbot.waitSignal(aw.traceShown, timeout=WAIT) as b2:
        aa.act_audit.trigger()
    assert b2.args[0] == 21 and aa.window is aw
    assert aw.trace_panel.fields["cites (sourceEventSeqs)"].text() == "19, 20, 4"
    # the panel's own control also traces in a worker
    with qtbot.waitSignal(aw.traceShown, timeout=WAIT):
        aw.trace_panel.spin.setValue(9999)
        aw.trace_panel.go.click()
    assert "NOT_FOUND" in aw.trace_panel.error.text()
    assert sha(src) == before                      # opening never writes
    assert sorted(p.name for p in src.parent.iterdir()) == ["session.jsonl"]
    w.shutdown()


@pytest.mark.slow
def test_audit_work_runs_off_the_ui_thread(qtbot, tmp_path, monkeypatch):
    """Decoding, tracing, comparing and exporting all happen on worker threads."""
    import threading
    from app.log.index.reader import LogReader
    from app.ui.audit import data as audit_data
    from app.store import export as export_mod
    w, aa = window(qtbot, fixture(COMPACTION))
    calls = []

    def spy(name, fn):
        def wrapper(*a, **k):
            calls.append((name, threading.current_thread() is threading.main_thread()))
            return fn(*a, **k)
        return wrapper
    monkeypatch.setattr(LogReader, "iter_events", spy("iter_events", LogReader.iter_events))
    monkeypatch.setattr(audit_data, "trace_event", spy("trace", audit_data.trace_event))
    monkeypatch.setattr(audit_data, "request_diff", spy("request_diff", audit_data.request_diff))
    monkeypatch.setattr(audit_data, "compute_stats", spy("stats", audit_data.compute_stats))
    monkeypatch.setattr(export_mod, "export_raw", spy("export_raw", export_mod.export_raw))
    w.select_row(row_index(w, 4))
    with qtbot.waitSignal(aa.opened, timeout=WAIT):
        aa.trace_row()
    aw = aa.window
    with qtbot.waitSignal(aw.traceShown, timeout=WAIT):
        aw.show_trace(21)
    items = [aw.diff_view.chooser.itemText(i) for i in range(aw.diff_view.chooser.count())]
    with qtbot.waitSignal(aw.diffShown, timeout=WAIT):
        aw.diff_view.chooser.setCurrentIndex(items.index("requests of steps 1.1 → 1.2"))
    aa.ask_path = lambda *a: str(tmp_path / "x.jsonl")
    with qtbot.waitSignal(aa.exported, timeout=WAIT):
        aa.export_actions["raw"].trigger()
    names = {n for n, _ in calls}
    assert {"iter_events", "trace", "request_diff", "stats", "export_raw"} <= names
    assert not [c for c in calls if c[1]], calls          # none on the UI thread
    w.shutdown()


@pytest.mark.slow
def test_trace_this_row_from_the_context_menu(qtbot, tmp_path):
    w, aa = window(qtbot, fixture(RETRY))
    idx = w.history.index(row_index(w, 4), 0)
    w.view.scrollTo(idx)
    pos = w.view.visualRect(idx).center()
    seen = []

    def pick():
        menu = QApplication.activePopupWidget()
        if not isinstance(menu, QMenu):
            QTimer.singleShot(20, pick)
            return
        seen.extend(a.text() for a in menu.actions())
        act = next(a for a in menu.actions() if a.text().replace("&", "") == "Trace this row")
        menu.close()
        act.trigger()

    QTimer.singleShot(0, pick)
    with qtbot.waitSignal(aa.opened, timeout=WAIT):
        w.view._context_menu(pos)           # the row's menu (sets the row current, then shows the menu)
    assert "Copy seq" in seen and "&Trace this row" in seen
    aw = aa.window
    assert aw.trace_panel.fields["event"].text().startswith("seq 4 · user/message")
    assert aw.tabs.currentIndex() == 0
    # the diffs tab of the same window: the failed attempt beside the committed message
    items = [aw.diff_view.chooser.itemText(i) for i in range(aw.diff_view.chooser.count())]
    assert items and items[0].startswith("attempt 9–10 (EMPTY_RESPONSE)")
    assert "Recovered." in aw.diff_view.right.toPlainText()
    w.shutdown()


@pytest.mark.slow
def test_export_raw_identical_with_sha256_sidecar(qtbot, tmp_path):
    src = copy_fixture(tmp_path, RETRY)
    w, aa = window(qtbot, src)
    asked = []
    out = tmp_path / "out" / "copy.jsonl"
    out.parent.mkdir()
    aa.ask_path = lambda win, title, default, filters: asked.append((title, default)) or str(out)
    with qtbot.waitSignal(aa.exported, timeout=WAIT) as blocker:
        aa.export_actions["raw"].trigger()
    res = blocker.args[0]
    assert asked and "{" not in asked[0][1]                # a sanitized default name
    assert asked[0][1].endswith(".jsonl") and "Export raw" in asked[0][0]
    assert out.read_bytes() == src.read_bytes()
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    assert res["sha256"] == digest and res["byteIdentical"]
    assert (tmp_path / "out" / "copy.jsonl.sha256").read_text() == f"{digest}  copy.jsonl\n"
    assert "Exported raw" in w.statusBar().currentMessage() and digest[:12] in w.statusBar().currentMessage()
    # a cancelled dialog starts nothing
    aa.ask_path = lambda *a: ""
    aa.export_actions["logical"].trigger()
    assert w.statusBar().currentMessage() == "Export cancelled"
    # the session file itself is refused, and stays as it was
    before = sha(src)
    aa.ask_path = lambda *a: str(src)
    with qtbot.waitSignal(aa.failed, timeout=WAIT) as b2:
        aa.export_actions["raw"].trigger()
    assert "session file itself" in b2.args[0] and sha(src) == before
    assert "failed" in w.statusBar().currentMessage()
    w.shutdown()


SECRETS = ["sk-ant-api03-PLANTEDsecretKEY0123456789abcdef", "ghp_PLANTEDgithubTOKEN0123456789abcd",
           "alice.planted@example.com", "PLANTEDbearerVALUE12345678", "hunter2PLANTEDpw"]


def hostile_log(tmp_path):
    """RETRY with secrets and markup planted in the user prompt and the committed reply."""
    out = []
    for ln in fixture(RETRY).read_text().splitlines():
        o = json.loads(ln)
        if o.get("type") == "user/message" and o.get("seq") == 4:
            o["data"]["content"][0]["text"] = (
                f"my key is {SECRETS[0]} and token {SECRETS[1]}; mail {SECRETS[2]}; "
                f"curl -H 'Authorization: Bearer {SECRETS[3]}' password={SECRETS[4]} in /home/alice/work")
        if o.get("seq") == 18:
            o["data"]["message"]["content"][0]["text"] = "<b>bold</b><script>alert(1)</script><img src=x onerror=y>"
        out.append(json.dumps(o))
    d = tmp_path / "hostile"
    d.mkdir()
    p = d / "session.jsonl"
    p.write_text("\n".join(out) + "\n")
    return p


def test_redacted_html_export_has_no_planted_secret(qtbot, tmp_path):
    src = hostile_log(tmp_path)
    assert all(s in src.read_text() for s in SECRETS)
    w, aa = window(qtbot, src)
    aa.act_redact.setChecked(True)
    out = tmp_path / "t.html"
    asked = []
    aa.ask_path = lambda win, title, default, filters: asked.append((title, default, filters)) or str(out)
    with qtbot.waitSignal(aa.exported, timeout=WAIT) as blocker:
        aa.export_actions["html"].trigger()
    res = blocker.args[0]
    assert "(redacted)" in asked[0][0] and ".redacted.html" in asked[0][1] and "*.html" in asked[0][2]
    html = out.read_text()
    for s in SECRETS:
        assert s not in html, s
    assert "/home/alice" not in html and "[REDACTED" in html
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html
    report = tmp_path / "t.html.redaction.json"
    rep = json.loads(report.read_text())
    assert res["report"] == str(report) and sum(rep["counts"].values()) >= len(SECRETS)
    assert not any(s in report.read_text() for s in SECRETS)
    assert "redacted" in w.statusBar().currentMessage()
    w.shutdown()


def test_export_zip_and_markdown_from_the_window(qtbot, tmp_path):
    import zipfile
    src = copy_fixture(tmp_path, RETRY)
    w, aa = window(qtbot, src)
    for fmt, name in (("zip", "b.zip"), ("markdown", "t.md"), ("logical", "l.jsonl")):
        out = tmp_path / name
        aa.ask_path = lambda *a, out=out: str(out)
        with qtbot.waitSignal(aa.exported, timeout=WAIT):
            aa.export_actions[fmt].trigger()
        assert out.is_file() and out.stat().st_size > 0
    with zipfile.ZipFile(tmp_path / "b.zip") as z:
        assert z.read("session.jsonl") == src.read_bytes()
    assert "Recovered." in (tmp_path / "t.md").read_text()
    w.shutdown()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run not installed")
def test_xvfb_screenshot_audit_from_main():
    """Main window with the audit window opened from it (Tools > Audit session… on seq 4), under Xvfb."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    from PySide6.QtGui import QImage
    repo = Path(__file__).resolve().parents[1]
    out = repo / "tests" / "artifacts" / "audit-from-main.png"
    env = dict(os.environ)
    env.pop("QT_QPA_PLATFORM", None)            # a real X server (Xvfb), not offscreen
    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", sys.executable,
                        str(repo / "tests" / "shot_audit_from_main.py"), str(fixture(COMPACTION)), "4", str(out)],
                       capture_output=True, text=True, timeout=180, env=env, cwd=repo)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout.strip().splitlines()[-1])
    assert info["loadingPageShown"] and info["traceEvent"] == "seq 4 · user/message"
    assert info["status"].startswith("Audit window:")
    img = QImage(str(out))
    assert (img.width(), img.height()) == (1600, 1000)
    colors = {img.pixel(x, y) for y in range(0, 1000, 9) for x in range(0, 1600, 9)}
    assert len(colors) > 20
