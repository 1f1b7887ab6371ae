"""Audit window (pytest-qt, offscreen) and Xvfb screenshots of the trace panel, a diff and the plots."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402
from PySide6.QtWidgets import QLabel  # noqa: E402

from app.log.index.reader import LogReader  # noqa: E402
from app.ui.audit import BarChart, DiffView, open_audit_window  # noqa: E402
from app.ui.audit.plots import nice_axis  # noqa: E402

repo_root = Path(__file__).resolve().parents[1]
fixtures = repo_root.parent / "shared" / "fixtures" / "dsh"
SNAP = fixtures / "examples/acp-agent/tests/snapshots"
COMPACTION = fixtures / "examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl"
RETRY = SNAP / "empty-response-retry/session.jsonl"
PACKED = SNAP / "packed-chunks/session.jsonl"
FORK_CHILD = SNAP / "subagent-fork-in-process/session.1.jsonl"
ARTIFACTS = repo_root / "tests" / "artifacts"


def test_audit_window_trace_and_tabs(qtbot):
    w = open_audit_window(LogReader.open(str(COMPACTION)), seq=4)
    qtbot.addWidget(w)
    assert [w.tabs.tabText(i) for i in range(w.tabs.count())] == ["Trace", "Diff", "Plots", "Stats"]
    f = w.trace_panel.fields
    assert f["surface"].text() == "shadowed" and f["replaced by"].text() == "21"
    assert "338e88fa" in f["compaction"].text() and "8, 18" in f["part of requests at"].text()
    # another seq through the panel's own control
    w.trace_panel.spin.setValue(21)
    qtbot.mouseClick(w.trace_panel.go, Qt.LeftButton)
    assert w.trace_panel.fields["cites (sourceEventSeqs)"].text() == "19, 20, 4"
    w.show_trace(9999)
    assert "NOT_FOUND" in w.trace_panel.error.text()
    # every label shows plain text only
    for lab in w.findChildren(QLabel):
        assert lab.textFormat() == Qt.PlainText or not lab.text(), lab.text()


def test_audit_window_diffs(qtbot):
    w = open_audit_window(LogReader.open(str(RETRY)), show=False)
    qtbot.addWidget(w)
    items = [w.diff_view.chooser.itemText(i) for i in range(w.diff_view.chooser.count())]
    assert items[0].startswith("attempt 9–10 (EMPTY_RESPONSE)")
    assert "Recovered." in w.diff_view.right.toPlainText()
    assert "EMPTY_RESPONSE" in w.diff_view.summary.text()
    assert w.diff_view.changed_lines[1] > 0

    f = open_audit_window(LogReader.open(str(FORK_CHILD)), show=False)
    qtbot.addWidget(f)
    labels = [f.diff_view.chooser.itemText(i) for i in range(f.diff_view.chooser.count())]
    assert "fork child vs parent" in labels
    f.diff_view.chooser.setCurrentIndex(labels.index("fork child vs parent"))
    s = f.diff_view.summary.text()
    assert "common prefix 42" in s and "diverge at seq 42" in s and "end-seed at 42: ok" in s
    assert "session/end-seed" in f.diff_view.right.toPlainText()


def test_request_diff_tab_and_stats(qtbot):
    w = open_audit_window(LogReader.open(str(PACKED)), show=False)
    qtbot.addWidget(w)
    labels = [w.diff_view.chooser.itemText(i) for i in range(w.diff_view.chooser.count())]
    assert "requests of steps 1.1 → 1.2" in labels
    w.diff_view.chooser.setCurrentIndex(labels.index("requests of steps 1.1 → 1.2"))
    assert "added #" in w.diff_view.summary.text()
    assert w.stats_panel.table.rowCount() == 2
    assert w.plots.tokens_step.labels == ["1.1", "1.2"]
    assert w.plots.tools.series                      # bash with an outcome


def test_hostile_text_stays_plain(qtbot, tmp_path):
    lines = RETRY.read_text().splitlines()
    out = []
    for ln in lines:
        o = json.loads(ln)
        if o.get("seq") == 18:
            o["data"]["message"]["content"][0]["text"] = "<b>bold</b><script>alert(1)</script>"
        out.append(json.dumps(o))
    p = tmp_path / "session.jsonl"
    p.write_text("\n".join(out) + "\n")
    w = open_audit_window(LogReader.open(str(p)), show=False)
    qtbot.addWidget(w)
    assert "<b>bold</b><script>alert(1)</script>" in w.diff_view.right.toPlainText()


def test_bar_chart_paints(qtbot):
    c = BarChart("t", ["a", "b", "c"], {"x": [1, 5, None], "y": [2, 0, 3]}, stacked=False)
    qtbot.addWidget(c)
    c.resize(400, 240)
    img = c.grab().toImage()
    assert img.width() == 400 and len(c._bars) >= 5
    assert nice_axis(3045) == (4000.0, 1000.0, 4)
    assert nice_axis(3) == (3.0, 1.0, 3)
    assert DiffView() is not None


def _colors(img: QImage) -> int:
    seen = set()
    for y in range(0, img.height(), 7):
        for x in range(0, img.width(), 7):
            seen.add(img.pixel(x, y))
    return len(seen)


SHOTS = [
    ("audit-trace.png", COMPACTION, ["--seq", "4", "--tab", "trace"]),
    ("audit-diff.png", RETRY, ["--tab", "diff"]),
    ("audit-fork-diff.png", FORK_CHILD, ["--tab", "diff", "--diff", "-1"]),
    ("audit-plots.png", PACKED, ["--tab", "plots"]),
]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="xvfb-run not installed")
@pytest.mark.parametrize("name,path,extra", SHOTS, ids=[s[0] for s in SHOTS])
def test_xvfb_screenshots(name, path, extra):
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    out = ARTIFACTS / name
    env = dict(os.environ)
    env.pop("QT_QPA_PLATFORM", None)            # a real X server (Xvfb), not offscreen
    r = subprocess.run(["xvfb-run", "-a", sys.executable, "-m", "app", "audit", str(path), *extra,
                        "--size", "980x640", "--screenshot", str(out), "--json"],
                       capture_output=True, text=True, timeout=120, env=env, cwd=repo_root)
    assert r.returncode == 0, r.stderr
    img = QImage(str(out))
    assert (img.width(), img.height()) == (980, 640)
    assert _colors(img) > 8                       # not a blank window
    assert out.stat().st_size < 250_000
