"""The Timeline dock (issue 31): a click on a bar selects its row, the selected row outlines its bar, exports
are real PNG and SVG files, tooltips are plain text."""
from __future__ import annotations

import json
from bisect import bisect_right
from pathlib import Path

import pytest

from tests.fixtures_util import REPO, write_log

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower
DEMO = REPO / "resources" / "demo" / "sessions" / "--home-dev-demo-project--" / "demo-migrated" / "session.v4.jsonl"


def _open(qtbot, win, path: Path):
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(path))
    ta = win.timeline_action
    with qtbot.waitSignal(ta.computed, timeout=WAIT):
        ta.act.trigger()                       # View > Timeline
    from PySide6.QtCore import Qt
    win.resizeDocks([ta.dock], [420], Qt.Orientation.Vertical)
    qtbot.wait(50)
    return ta


def _covers(row, seq: int) -> bool:
    lo = row.first_seq if row.first_seq is not None else row.seq
    hi = max(row.seq or 0, row.last_seq or 0)
    return lo <= seq <= hi


@pytest.mark.parametrize("kind", ["tool", "attempt", "turn"])
def test_click_on_a_bar_selects_its_row(qtbot, win, kind):
    from PySide6.QtCore import Qt
    ta = _open(qtbot, win, DEMO)
    wf = ta.dock.waterfall
    bars = [b for b in wf.lay.bars if b.kind == kind and wf.bar_rect(b).width() >= 3]
    bar = bars[len(bars) // 2]
    center = wf.bar_rect(bar).center().toPoint()
    assert wf.bar_at(center.x(), center.y()) is bar
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        qtbot.mouseClick(wf, Qt.MouseButton.LeftButton, pos=center)
    row = win.view.current_row()
    assert row is not None and _covers(row, bar.seq), (bar.seq, row.seq)


def test_selected_row_outlines_its_bar(qtbot, win):
    ta = _open(qtbot, win, DEMO)
    wf = ta.dock.waterfall
    tools = [b for b in wf.lay.bars if b.kind == "tool"]
    target = tools[-1]
    wf.selected = None
    with qtbot.waitSignal(win.seqSelected, timeout=WAIT):
        win.goto_seq(target.seq)
    qtbot.waitUntil(lambda: wf.selected is not None, timeout=WAIT)
    assert wf.selected is target                       # the tool call row -> its own bar, not its step's
    assert wf.v0 <= target.x0 <= wf.v1


def test_exports_png_and_svg(qtbot, win, tmp_path):
    from PySide6.QtGui import QImage
    from PySide6.QtSvg import QSvgRenderer
    ta = _open(qtbot, win, DEMO)
    for what in ("waterfall", "context meter"):
        png = Path(ta.dock.export(what, str(tmp_path / "x.png")))
        img = QImage(str(png))
        assert not img.isNull() and img.width() == 1600
        svg = Path(ta.dock.export(what, str(tmp_path / "x.svg")))
        assert QSvgRenderer(str(svg)).isValid()
        assert b"<rect" in svg.read_bytes() or b"<path" in svg.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.png", "x.svg"]      # no temporary left


def test_tooltips_are_plain_text(qtbot, win, tmp_path):
    from app.ui.plaintext import tooltip
    from app.ui.timeline_model import tip
    name = "<b>bold</b><img src=file:///etc/passwd>"
    rows = [{"type": "turn/start", "seq": 0, "time": 1000, "data": {"turn": 1}},
            {"type": "step/start", "seq": 1, "time": 1001, "data": {"turn": 1, "step": 1}},
            {"type": "tool/call", "seq": 2, "time": 1002, "data": {"turn": 1, "step": 1, "callId": "c1", "name": name,
                                                                   "arguments": "{}"}},
            {"type": "tool/result", "seq": 3, "time": 1050, "surfaceOp": "append", "sourceEventSeqs": [2],
             "data": {"turn": 1, "step": 1, "message": {"id": "m", "role": "user", "source": {"kind": "tool",
                                                                                               "callId": "c1"},
                                                        "content": [{"type": "tool-result", "toolCallId": "c1",
                                                                     "content": [{"type": "text", "text": "ok"}]}]}}},
            {"type": "step/end", "seq": 4, "time": 1060, "data": {"turn": 1, "step": 1}},
            {"type": "turn/end", "seq": 5, "time": 1070, "data": {"turn": 1, "reason": {"kind": "completed"}}}]
    p = write_log(tmp_path / "s" / "session.jsonl", rows)
    ta = _open(qtbot, win, p)
    bar = next(b for b in ta.dock.waterfall.lay.bars if b.kind == "tool")
    assert bar.span["durationMs"] == 48
    shown = tooltip(tip(bar.span))
    assert "&lt;b&gt;bold&lt;/b&gt;" in shown and "<b>" not in shown and "<img" not in shown
    assert json.dumps(name)[1:-1] in json.dumps(tip(bar.span))


def test_snapshot_without_times_says_so(qtbot, win):
    from tests.fixtures_util import FIXTURES
    p = next((FIXTURES.parent / "dsh-next").rglob("compaction-output-reserve/session.v4.jsonl"))
    ta = _open(qtbot, win, p)
    assert ta.dock.waterfall.lay.axis == "seq"
    assert "No times in this log" in ta.dock.status.text()
    assert all(b.span["durationMs"] is None for b in ta.dock.waterfall.lay.bars)


def test_dense_rows_merge_per_pixel_column_without_losing_errors(tmp_path):
    """Zoomed out, a row's bars are merged per pixel column: each column's rectangle reaches the furthest end of
    the bars starting in it and is red when any of them is bad (checked against a walk over every bar)."""
    from app.log.query.timeline import timeline
    from app.log.query.timeline_summary import summarize
    from app.store.faces import open_reader
    from app.tools.synth import SessionSynth, write_jsonl
    from app.ui.timeline_model import layout
    p = tmp_path / "s" / "session.jsonl"
    write_jsonl(str(p), SessionSynth(4, p_retry=0.2, p_tool_error=0.2), target_bytes=3_000_000)
    lay = layout(summarize(timeline(open_reader(str(p))))["spans"])
    lo_v, hi_v = lay.extent
    width = 300
    edges = [lo_v + (hi_v - lo_v) * c / width for c in range(width)] + [float("inf")]
    checked_bad = 0
    for r, bars in lay.by_row.items():
        lo, hi = lay.visible_range(r, lo_v, hi_v)
        assert (lo, hi) == (0, len(bars))
        want: dict[int, tuple[float, bool]] = {}
        for b in bars:
            c = max(0, bisect_right(edges, b.x0) - 1)
            end, bad = want.get(c, (float("-inf"), False))
            want[c] = (max(end, b.x1), bad or b.bad)
        got = {c: (end, bad) for c, end, bad in lay.columns(r, lo, hi, edges)}
        assert got == want, r
        checked_bad += sum(bad for _e, bad in got.values())
    assert checked_bad > 10


def test_refresh_after_the_log_grew(qtbot, win, tmp_path):
    from PySide6.QtCore import Qt
    src = DEMO.read_bytes().split(b"\n")
    head = [ln for ln in src if ln.strip()]
    cut = next(i for i, ln in enumerate(head) if b'"turn/end"' in ln) + 1      # the first turn only
    p = tmp_path / "g" / "session.v4.jsonl"
    p.parent.mkdir()
    p.write_bytes(b"\n".join(head[:cut]) + b"\n")
    ta = _open(qtbot, win, p)
    assert [t["turn"] for t in ta.data["result"]["turns"]] == [1]
    with open(p, "ab") as f:                      # the session goes on (append-only)
        f.write(b"\n".join(head[cut:]) + b"\n")
    with qtbot.waitSignal(ta.computed, timeout=WAIT):
        qtbot.mouseClick(ta.dock.buttons["refresh"], Qt.MouseButton.LeftButton)
    assert len(ta.data["result"]["turns"]) == 6 and ta.data["cache"] == "built"
