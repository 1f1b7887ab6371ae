"""*Errors only*'s page in the window is the same with its rows read lean and their payloads decoded when shown
(``sparse.LEAN``, :class:`~app.log.format.lazyevent.LazyEvent`) as read the exact way: what each row shows, the
inspector of a selected row, the selection F8 and Shift+F8 move through, the summary's counts; and the window
decodes no payload of an event it has no row for (a hidden attempt) (pytest-qt, offscreen, a generated v4 log
with many errors)."""
from __future__ import annotations

import pytest

import app.ui  # noqa: F401  (PySide6 refcount work-around before any Qt code)

pytest.importorskip("PySide6")

from app.tools.synth import SessionSynth, write_jsonl  # noqa: E402

WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    p = tmp_path_factory.mktemp("errs-lazy") / "store" / "session.jsonl"
    p.parent.mkdir()
    write_jsonl(str(p), SessionSynth(seed=29, version=4, context_window=24_000, p_tool_error=0.25, p_turn_error=0.05),
                target_bytes=3_000_000)
    return p


def _inspector_text(w) -> list:
    from PySide6.QtWidgets import QLabel, QPlainTextEdit, QTextEdit
    out = []
    for c in w.inspector.findChildren(QLabel) + w.inspector.findChildren(QPlainTextEdit) + \
            w.inspector.findChildren(QTextEdit):
        if c.isVisibleTo(w.inspector):
            out.append(c.text() if isinstance(c, QLabel) else c.toPlainText())
    return out


def _errors_only(qtbot, tmp_path, monkeypatch, log, lean: bool) -> dict:
    import app.ui.history.sparse as sparse_mod
    from app.log.format.lazyevent import LazyEvent
    from app.ui.main_window import MainWindow
    from app.ui.summary import loaded_tally
    monkeypatch.setattr(sparse_mod, "LEAN", lean)
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / f"config-{lean}"))
    monkeypatch.setenv("SESSION_LENS_CACHE_DIR", str(tmp_path / f"cache-{lean}"))
    w = MainWindow(page_size=50, theme_mode="light")
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    with qtbot.waitSignal(w.sessionLoaded, timeout=WAIT):
        w.open_store(str(log))
    h, go = w.history, w.go_actions
    qtbot.waitUntil(lambda: not h.loading and go.outline is not None and h.jumps.can_jump(), timeout=WAIT)
    go.act_errors_only.trigger()
    qtbot.waitUntil(lambda: not h.loading and h.jumps.paging_done(), timeout=WAIT)
    qtbot.wait(300)                                           # (painted)
    out: dict = {}
    lazy = [ev for ev in h.window.events.values() if type(ev) is LazyEvent]
    out["lazy"] = len(lazy)
    shown = {id(r.event) for lp in h.window.pages for r in lp.rows_for(h.physical, h.show_attempts).rows}
    out["rowless"] = [ev.decoded for ev in lazy if id(ev) not in shown]   # (hidden attempts: the window has no row)
    out["tally"] = loaded_tally(h.window)
    out["shown"] = [(r.key, r.kind, r.marks, r.first_seq, r.last_seq, r.content().plain_text())
                    for r in h.window.all_rows]               # (every row of the window, exposed or not yet)
    rows = [r for r in h.window.all_rows if r.seq is not None]
    out["inspector"] = []
    for i in sorted({0, 1, 2, len(rows) // 2, len(rows) - 2, len(rows) - 1}):
        w.goto_seq(rows[i].seq)
        qtbot.waitUntil(lambda: not h.loading and w.view.current_row() is not None, timeout=WAIT)
        qtbot.waitUntil(lambda: not any("tracing…" in t for t in _inspector_text(w)), timeout=WAIT)   # (its trace)
        out["inspector"].append((w.view.current_row().key, _inspector_text(w)))
    w.select_row(0)
    moves = []
    for act in [go.act_next_error] * 6 + [go.act_prev_error] * 4:
        act.trigger()
        qtbot.waitUntil(lambda: not h.loading, timeout=WAIT)
        row = w.view.current_row()
        moves.append((row.key if row is not None else None, w.statusBar().currentMessage()))
    out["f8"] = moves
    w.shutdown()
    return out


def test_errors_only_shows_the_same_page_with_lazy_rows(qtbot, tmp_path, monkeypatch, log):
    exact = _errors_only(qtbot, tmp_path, monkeypatch, log, False)
    lean = _errors_only(qtbot, tmp_path, monkeypatch, log, True)
    assert exact["lazy"] == 0 and lean["lazy"] >= 80
    assert len(lean["rowless"]) >= 20 and not any(lean["rowless"])    # (payloads of events with no row: unread)
    for k in ("tally", "shown", "inspector", "f8"):
        assert lean[k] == exact[k], k
    assert len({m for _k, m in exact["f8"]}) >= 6 and all(exact["inspector"][i][1] for i in range(len(exact["inspector"])))
