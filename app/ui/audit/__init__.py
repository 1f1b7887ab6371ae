"""Audit window: trace, diffs, plots and stats of one session in tabs.

``open_audit_window(reader, seq=None)`` builds (and shows) the window from a LogReader;
the panels themselves take plain data and can be embedded by the main window.
``save_screenshot(widget, path)`` grabs a widget to a PNG (used by ``session-lens audit
--screenshot``).  All computations are the pure functions of :mod:`app.log.trace`,
:mod:`app.log.diff` and :mod:`app.log.stats`; a failure in one tab is shown in that tab.
"""
from __future__ import annotations

import os
from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel, QTabWidget, QVBoxLayout, QWidget

from .diff_view import DiffView, attempt_sides, event_lines, fork_sides, request_sides
from .plots import BarChart, StatsPlots
from .stats_panel import StatsPanel
from .trace_panel import TracePanel

__all__ = ["open_audit_window", "AuditWindow", "TracePanel", "DiffView", "BarChart", "StatsPlots", "StatsPanel",
           "save_screenshot"]

TABS = ("trace", "diff", "plots", "stats")


def _default_seq(events: list) -> Optional[int]:
    """A seq worth tracing first: a shadowed/replacing surface event, else the last message."""
    for ev in events:
        if ev.is_replace:
            return ev.surface_op.get("start")
    for ev in reversed(events):
        if ev.type in ("assistant/message", "user/message") and ev.surface_op is not None:
            return ev.seq
    return events[-1].seq if events else None


def _error_label(text: str) -> QLabel:
    lab = QLabel(text)
    lab.setTextFormat(Qt.PlainText)
    lab.setWordWrap(True)
    lab.setAlignment(Qt.AlignCenter)
    return lab


class AuditWindow(QWidget):
    """The tabbed audit window over one reader."""

    def __init__(self, reader, seq: Optional[int] = None, parent=None):
        super().__init__(parent)
        from ...log.diff import attempt_diff, find_parent_path, fork_diff, request_diff, resolve_boundary
        from ...log.stats import compute_stats
        from ...log.trace import TraceError, trace_event
        self.reader = reader
        self.events = list(reader.iter_events(logical=True))
        sid = reader.header.id if reader.header else "?"
        self.setWindowTitle(f"Audit — {sid}")
        self.resize(980, 640)
        v = QVBoxLayout(self)
        v.setContentsMargins(4, 4, 4, 4)
        self.tabs = QTabWidget()
        v.addWidget(self.tabs)

        # trace
        self.trace_panel = TracePanel()
        self._trace_event = trace_event
        self._trace_error = TraceError
        self.trace_panel.seqRequested.connect(self.show_trace)
        self.tabs.addTab(self.trace_panel, "Trace")
        self.show_trace(seq if seq is not None else _default_seq(self.events))

        # diffs
        self.diff_view = DiffView()
        self._diffs: list = []          # (label, callable -> sides)
        try:
            for step in attempt_diff(self.events):
                for i, f in enumerate(step["failed"]):
                    code = (f.get("failure") or {}).get("code") or f.get("finishKind")
                    self._diffs.append((f"attempt {f['firstSeq']}–{f['lastSeq']} ({code}) vs committed, step "
                                        f"{step['turn']}.{step['step']}", lambda s=step, i=i: attempt_sides(s, i)))
            steps = []
            seen = set()
            for ev in self.events:
                if ev.type == "step/start":
                    t, s = ev.turn_step()
                    if (t, s) not in seen:
                        seen.add((t, s))
                        try:
                            resolve_boundary(self.events, f"{t}.{s}")
                            steps.append(f"{t}.{s}")
                        except Exception:
                            pass
            for a, b in zip(steps, steps[1:]):
                self._diffs.append((f"requests of steps {a} → {b}",
                                    lambda a=a, b=b: request_sides(request_diff(self.events_src(), a, b))))
            h = reader.header
            if h is not None and h.parentSession:
                pp = find_parent_path(reader.path)
                if pp:
                    self._diffs.append(("fork child vs parent", lambda pp=pp: self._fork_sides(pp, fork_diff)))
        except Exception as e:  # keep the window usable
            self._diffs.append((f"error: {e}", lambda e=e: ("", str(e), "", "", "diff failed")))
        for label, _ in self._diffs:
            self.diff_view.chooser.addItem(label)
        self.diff_view.chooser.currentIndexChanged.connect(self.show_diff)
        self.tabs.addTab(self.diff_view, "Diff")
        if self._diffs:
            self.show_diff(0)
        else:
            self.diff_view.set_sides("", "", "", "", "nothing to compare: no failed attempts, one step, not a fork")

        # stats + plots
        try:
            self.stats = compute_stats(self.events)
            self.plots = StatsPlots(self.stats)
            self.stats_panel = StatsPanel(self.stats)
            self.tabs.addTab(self.plots, "Plots")
            self.tabs.addTab(self.stats_panel, "Stats")
        except Exception as e:
            self.stats = None
            self.tabs.addTab(_error_label(f"stats failed: {e}"), "Plots")
            self.tabs.addTab(_error_label(f"stats failed: {e}"), "Stats")

    def events_src(self):
        return _EventsWithHeader(self.events, self.reader.header)

    def _fork_sides(self, parent_path: str, fork_diff) -> tuple:
        from ...store.faces import open_reader
        pr = open_reader(parent_path)
        try:
            pe = list(pr.iter_events(logical=True))
            d = fork_diff(_EventsWithHeader(self.events, self.reader.header), _EventsWithHeader(pe, pr.header))
        finally:
            pr.close()
        at = d.get("divergenceSeq")
        return fork_sides(d, event_lines(pe, at), event_lines(self.events, at))

    def show_trace(self, seq: Optional[int]) -> None:
        if seq is None:
            self.trace_panel.set_error("empty log: nothing to trace")
            return
        try:
            self.trace_panel.set_trace(self._trace_event(self.events, int(seq)))
        except self._trace_error as e:
            self.trace_panel.set_error(str(e))

    def show_diff(self, index: int) -> None:
        if not (0 <= index < len(self._diffs)):
            return
        try:
            self.diff_view.set_sides(*self._diffs[index][1]())
        except Exception as e:
            self.diff_view.set_sides("", "", "", "", f"diff failed: {type(e).__name__}: {e}")

    def select_tab(self, name: str) -> None:
        if name in TABS:
            self.tabs.setCurrentIndex(TABS.index(name))


class _EventsWithHeader(list):
    """An event list that also carries ``header`` (what diff functions read from a reader)."""

    def __init__(self, events, header):
        super().__init__(events)
        self.header = header


def open_audit_window(reader, seq: Optional[int] = None, show: bool = True) -> QWidget:
    """The audit window (trace / diff / plots / stats tabs) over ``reader``; shown unless ``show=False``."""
    if QApplication.instance() is None:
        raise RuntimeError("open_audit_window needs a QApplication")
    w = AuditWindow(reader, seq)
    if show:
        w.show()
    return w


def save_screenshot(widget: QWidget, path: str) -> str:
    """Grab ``widget`` (after pending paints) into a PNG at ``path``."""
    app = QApplication.instance()
    for _ in range(3):
        app.processEvents()
    pix = widget.grab()
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    if not pix.save(path, "PNG"):
        raise OSError(f"could not write {path}")
    return path
