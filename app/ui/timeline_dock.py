"""View > Timeline: a dock with the session's waterfall, its context meter and tokens and cost per turn.

The timeline is computed off the UI thread: a worker job reads it from the cache, or has a child process
compute and cache it (:mod:`app.store.timeline_child`), then lays it out (:mod:`app.ui.timeline_model`); the
window never waits on it.  A click on a bar (or on a turn in the table) goes to its row; the selected row
outlines its bar.  Export writes the waterfall or the meter as PNG or SVG.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Optional

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (QDockWidget, QFileDialog, QHBoxLayout, QLabel, QMenu, QSplitter, QToolButton,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from .plaintext import set_plain
from .timeline_model import fmt_ms, layout
from .timeline_view import ContextMeter, Waterfall, export_picture


POINT_KEYS = ("kind", "seq", "start", "tokens", "contextWindow", "model", "turn")   # (what context_points reads)


def compute_job(job: Any, path: str, session: Optional[str]) -> dict[str, Any]:
    """The worker: spans (cache or child), linked, summarised and laid out."""
    from ..log.query.timeline_summary import context_points
    from ..store.faces import open_reader
    from ..store.timeline_cache import cached_summary, link_children, load_prices
    from ..store.timeline_child import spans_for
    spans, status = spans_for(path, session, job)      # (the job's cancel kills the child at once)
    job.check()
    if session is None:
        link_children(path, spans)
    prices = load_prices()
    reader = open_reader(path, session)
    summary, _how = cached_summary(reader, spans, prices)        # (saved beside the spans, per price table)
    reader.close()
    result = {"spans": spans, **summary}
    return {"result": result, "cache": status, "layout": layout(spans),        # (by column: no span dict built)
            "points": context_points(spans.of_kind("attempt", POINT_KEYS), prices),
            "compactions": spans.of_kind("compaction")}


class TimelineDock(QDockWidget):
    def __init__(self, theme: Any, parent: Optional[QWidget] = None) -> None:
        super().__init__("Timeline", parent)
        self.setObjectName("timelineDock")
        body = QWidget()
        v = QVBoxLayout(body)
        v.setContentsMargins(4, 2, 4, 2)
        bar = QHBoxLayout()
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.buttons: dict[str, QToolButton] = {}
        for key, text, tip in (("in", "+", "Zoom in"), ("out", "−", "Zoom out"), ("fit", "Fit", "Show everything"),
                               ("export", "Export…", "Save the waterfall or the context meter as PNG or SVG"),
                               ("refresh", "Refresh", "Compute the timeline again (a live session has grown)")):
            b = QToolButton()
            b.setText(text)
            b.setToolTip(tip)
            self.buttons[key] = b
            bar.addWidget(b)
        bar.addWidget(self.status, 1)
        v.addLayout(bar)
        split = QSplitter(Qt.Orientation.Vertical)
        self.waterfall = Waterfall(theme)
        self.meter = ContextMeter(theme)
        self.turns = QTreeWidget()
        self.turns.setRootIsDecorated(False)
        self.turns.setHeaderLabels(["turn", "wall", "model", "tools", "input", "cache read", "output",
                                    "est. cost"])
        split.addWidget(self.waterfall)
        split.addWidget(self.meter)
        split.addWidget(self.turns)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setStretchFactor(2, 1)
        v.addWidget(split, 1)
        self.setWidget(body)
        self.buttons["in"].clicked.connect(lambda: self.waterfall.zoom(2.0))
        self.buttons["out"].clicked.connect(lambda: self.waterfall.zoom(0.5))
        self.buttons["fit"].clicked.connect(self.waterfall.fit)
        menu = QMenu(self.buttons["export"])
        for what, fmt in (("waterfall", "PNG"), ("waterfall", "SVG"), ("context meter", "PNG"),
                          ("context meter", "SVG")):
            menu.addAction(f"{what.capitalize()} as {fmt}…", partial(self.export_dialog, what, fmt))
        self.buttons["export"].setMenu(menu)
        self.buttons["export"].setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)

    def show_data(self, data: dict[str, Any]) -> None:
        res = data["result"]
        self.waterfall.set_layout(data["layout"])
        self.meter.set_data(data["points"], data["compactions"])
        self.turns.clear()
        for t in res["turns"]:
            tk = t["tokens"]
            it = QTreeWidgetItem([str(t["turn"]), fmt_ms(t["durationMs"]), fmt_ms(t["modelMs"]), fmt_ms(t["toolMs"]),
                                  f"{tk['input']:,}", f"{tk['cacheRead']:,}", f"{tk['output']:,}",
                                  f"~${t['cost']:.4f}"])
            it.setData(0, Qt.ItemDataRole.UserRole, t["seq"])
            self.turns.addTopLevelItem(it)
        tot = res["totals"]
        c = tot["cost"]
        hit = f"{tot['cacheHitRate'] * 100:.0f} %" if tot["cacheHitRate"] is not None else "?"
        wall = tot["wallMs"] if any(t["durationMs"] is not None for t in res["turns"]) else None
        text = (f"wall {fmt_ms(wall)} · model {fmt_ms(tot['modelMs'])} · tools {fmt_ms(tot['toolMs'])} · "
                f"user {fmt_ms(tot['userWaitMs'])} · cache hits {hit} · ~${c['amount']:.4f} (estimate)")
        note = data["layout"].note
        if not tot["timesKnown"]:
            note = "No times in this log (an envelope-free snapshot): no duration is shown. " + note
        set_plain(self.status, text + (f"\n{note}" if note else ""))

    def export_dialog(self, what: str, fmt: str) -> Optional[str]:
        path, _ = QFileDialog.getSaveFileName(self, f"Export the {what}", f"timeline-{what.replace(' ', '-')}."
                                              f"{fmt.lower()}", f"{fmt} (*.{fmt.lower()})")
        if not path:
            return None
        if not path.lower().endswith("." + fmt.lower()):
            path += "." + fmt.lower()
        return self.export(what, path)

    def export(self, what: str, path: str) -> str:
        return export_picture(self.waterfall if what == "waterfall" else self.meter, path)


class TimelineAction(QObject):
    """The window's hook: View > Timeline, the compute job, selection both ways."""
    computed = Signal()

    def __init__(self, win: Any) -> None:
        super().__init__(win)
        self.win = win
        self.dock = TimelineDock(win.theme, win)
        self.dock.hide()
        win.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.dock)
        self.act = self.dock.toggleViewAction()
        self.act.setText("&Timeline")
        self.act.setShortcut("Ctrl+Shift+M")
        win.menu("View").addAction(self.act)
        self.shown_for: Optional[tuple[str, Optional[str]]] = None
        self.data: Optional[dict[str, Any]] = None
        self.dock.visibilityChanged.connect(lambda vis: self.refresh() if vis else None)
        win.sessionLoaded.connect(self.refresh)
        win.history_actions.controller.rowSelected.connect(self.follow_row)
        self.dock.waterfall.barClicked.connect(self.goto)
        self.dock.buttons["refresh"].clicked.connect(lambda: self.refresh(force=True))
        self.dock.turns.itemActivated.connect(lambda it, _c: self.zoom_to_turn(it.data(0, Qt.ItemDataRole.UserRole)))
        self.dock.turns.itemClicked.connect(lambda it, _c: self.goto(it.data(0, Qt.ItemDataRole.UserRole)))

    def refresh(self, force: bool = False) -> None:
        h = self.win.history
        if not self.dock.isVisible() or h.path is None:
            return
        key = (h.path, h.session_id)
        if key == self.shown_for and not force:
            return
        self.shown_for = key
        set_plain(self.dock.status, "Computing the timeline…")
        self.dock.waterfall.set_layout(None)
        self.win.jobs.submit(compute_job, h.path, h.session_id, group="timeline", name="timeline",
                             on_done=self._done, on_error=self._failed)

    def _done(self, data: dict[str, Any]) -> None:
        self.data = data
        self.dock.waterfall.theme = self.dock.meter.theme = self.win.theme
        self.dock.show_data(data)
        self.follow_row()
        self.computed.emit()

    def _failed(self, msg: str) -> None:
        self.shown_for = None
        set_plain(self.dock.status, f"Could not compute the timeline: {msg}")

    def goto(self, seq: Any) -> None:
        if isinstance(seq, int):
            self.win.goto_seq(seq)

    def zoom_to_turn(self, seq: Any) -> None:
        """Go to the turn starting at ``seq`` and fit the waterfall to it."""
        wf = self.dock.waterfall
        if wf.lay is not None and isinstance(seq, int):
            b = next((b for b in wf.lay.bars if b.kind == "turn" and b.seq == seq), None)
            if b is not None:
                wf.zoom_to(b.x0, b.x1)
        self.goto(seq)

    def follow_row(self) -> None:
        row = self.win.view.current_row()
        seq = getattr(row, "seq", None) if row is not None else None
        if seq is None and row is not None:
            seq = getattr(row, "first_seq", None)
        if self.data is not None:
            self.dock.waterfall.highlight_seq(seq)
