"""Audit window: trace, diffs, plots and stats of one session in tabs.

``open_audit_window(reader, seq=None)`` builds (and shows) the window from a LogReader,
computing everything inline (the ``session-lens audit --screenshot`` path).  The main
window instead creates ``AuditWindow(jobs=...)`` and calls :meth:`AuditWindow.load`: the
log is decoded and the first trace, comparisons and stats are computed in a worker
(:func:`.data.load_audit_job`) while the window shows a progress page; later traces and
comparisons run in workers too.  The panels take plain data and can be embedded
elsewhere.  ``save_screenshot(widget, path)`` grabs a widget to a PNG.  All computations
are the pure functions of :mod:`app.log.query.trace`, :mod:`app.log.query.diff` and
:mod:`app.log.query.stats`; a failure in one tab is shown in that tab.
"""
from __future__ import annotations

import os
from typing import Optional

from ..plaintext import isolate
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QApplication, QLabel, QProgressBar, QPushButton, QStackedWidget, QTabWidget,
                               QVBoxLayout, QWidget)

from .data import (AuditData, compute_audit, diff_job, diff_sides, is_cheap, load_audit_job,
                   trace_job, trace_of)
from .diff_view import DiffView
from .plots import BarChart, StatsPlots
from .stats_panel import StatsPanel
from .trace_panel import TracePanel

__all__ = ["open_audit_window", "AuditWindow", "AuditData", "compute_audit", "TracePanel", "DiffView", "BarChart",
           "StatsPlots", "StatsPanel", "save_screenshot"]

TABS = ("trace", "diff", "plots", "stats")


def _error_label(text: str) -> QLabel:
    lab = QLabel(text)
    lab.setTextFormat(Qt.TextFormat.PlainText)
    lab.setWordWrap(True)
    lab.setAlignment(Qt.AlignmentFlag.AlignCenter)
    return lab


class AuditWindow(QWidget):
    """The tabbed audit window over one session.

    ``source``: a LogReader (computed inline), an :class:`AuditData`, or None (empty until
    :meth:`load`).  With ``jobs`` every later trace / comparison runs in a worker."""
    loaded = Signal()                 # data installed (panels built)
    loadFailed = Signal(str)
    traceShown = Signal(object)       # the seq whose trace (or error) is now shown
    diffShown = Signal(int)           # the comparison index now shown

    def __init__(self, source=None, seq: Optional[int] = None, parent=None, jobs=None):
        super().__init__(parent)
        self.jobs = jobs
        self.data: Optional[AuditData] = None
        self.events: list = []
        self.header = None
        self.stats: Optional[dict] = None
        self._diffs: list = []
        self._sides: dict = {}          # comparison index -> sides (computed)
        self._load_job = None
        self._trace_job = None
        self._diff_job = None
        self._trace_token = 0
        self.setWindowTitle("Audit")
        self.resize(980, 640)
        v = QVBoxLayout(self)
        v.setContentsMargins(4, 4, 4, 4)
        self.stack = QStackedWidget()
        v.addWidget(self.stack)

        # loading page
        page = QWidget()
        lv = QVBoxLayout(page)
        lv.addStretch(1)
        self.loading_label = _error_label("")
        lv.addWidget(self.loading_label)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setTextVisible(False)
        self.progress.setFixedWidth(420)
        lv.addWidget(self.progress, 0, Qt.AlignmentFlag.AlignHCenter)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_load)
        lv.addWidget(self.cancel_button, 0, Qt.AlignmentFlag.AlignHCenter)
        lv.addStretch(2)
        self.stack.addWidget(page)

        # tabs
        self.tabs = QTabWidget()
        self.trace_panel = TracePanel()
        self.trace_panel.seqRequested.connect(self.show_trace)
        self.tabs.addTab(self.trace_panel, "Trace")
        self.diff_view = DiffView()
        self.diff_view.chooser.currentIndexChanged.connect(self.show_diff)
        self.tabs.addTab(self.diff_view, "Diff")
        self.plots = StatsPlots()
        self.stats_panel = StatsPanel()
        self.tabs.addTab(self.plots, "Plots")
        self.tabs.addTab(self.stats_panel, "Stats")
        self.stack.addWidget(self.tabs)

        self._close_keys()

        if source is None:
            self.loading_label.setText("Nothing loaded")
            self.cancel_button.hide()
        elif isinstance(source, AuditData):
            self.set_data(source)
        else:
            self.set_data(compute_audit(source, seq))

    def _close_keys(self) -> None:
        """Esc and Ctrl+W (the platform's Close) close the window, like any other secondary window."""
        act = QAction("Close", self)
        keys = [QKeySequence(Qt.Key.Key_Escape), QKeySequence("Ctrl+W")]
        keys += [k for k in QKeySequence.keyBindings(QKeySequence.StandardKey.Close) if k not in keys]
        act.setShortcuts(keys)              # (a key listed twice would be ambiguous: never triggered)
        act.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        act.triggered.connect(self.close)
        self.addAction(act)

    # ------------------------------------------------------------------ loading
    @property
    def loading(self) -> bool:
        return self._load_job is not None

    def load(self, path: str, session_id: Optional[str] = None, seq: Optional[int] = None,
             tab: Optional[str] = None) -> None:
        """Decode and precompute in a worker; show progress meanwhile (needs ``jobs``)."""
        if self.jobs is None:
            raise RuntimeError("AuditWindow.load needs jobs")
        self.cancel_load()
        self._cancel_followups()
        self.stack.setCurrentIndex(0)
        self.setWindowTitle(f"Audit — loading {os.path.basename(path)}")
        self.loading_label.setText(f"Loading {path} …")
        self.progress.setRange(0, 0)
        self.cancel_button.show()
        self.cancel_button.setEnabled(True)
        self._want_tab = tab
        self._load_job = self.jobs.submit(load_audit_job, path, session_id, seq, name="audit-load",
                                          on_done=self._on_loaded, on_error=self._on_load_failed,
                                          on_progress=self._on_progress, on_partial=self._on_phase)

    def _on_progress(self, done: int, total: int) -> None:
        if total > 0:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(done, total) / total))

    def _on_phase(self, obj) -> None:
        if isinstance(obj, tuple) and obj and obj[0] == "phase":
            self.loading_label.setText(str(obj[1]))
            self.progress.setRange(0, 0)

    def _on_loaded(self, data: AuditData) -> None:
        self._load_job = None
        self.set_data(data)
        if self._want_tab:
            self.select_tab(self._want_tab)
        self.loaded.emit()

    def _on_load_failed(self, msg: str) -> None:
        self._load_job = None
        self.stack.setCurrentIndex(0)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.cancel_button.hide()
        self.loading_label.setText(f"Cannot audit this session: {msg}")
        self.setWindowTitle("Audit — failed")
        self.loadFailed.emit(msg)

    def cancel_load(self) -> None:
        if self._load_job is not None:
            self._load_job.cancel()
            self._load_job = None
            self.loading_label.setText("Cancelled")
            self.progress.setRange(0, 1)
            self.cancel_button.setEnabled(False)

    def _cancel_followups(self) -> None:
        for j in (self._trace_job, self._diff_job):
            if j is not None:
                j.cancel()
        self._trace_job = self._diff_job = None

    def closeEvent(self, e):
        self.cancel_load()
        self._cancel_followups()
        super().closeEvent(e)

    # ------------------------------------------------------------------ data -> panels (UI thread)
    def set_data(self, data: AuditData) -> None:
        self._cancel_followups()
        self.data = data
        self.events = data.events
        self.header = data.header
        self.setWindowTitle(isolate(data.title))
        if data.trace is not None:
            self.trace_panel.set_trace(data.trace)
        else:
            self.trace_panel.set_error(data.trace_error or "nothing to trace")
        self._diffs = list(data.diffs)
        self._sides = {0: data.first_sides} if data.diffs and data.first_sides is not None else {}
        ch = self.diff_view.chooser
        ch.blockSignals(True)
        ch.clear()
        for label, _ in self._diffs:
            ch.addItem(label)
        ch.setCurrentIndex(0 if self._diffs else -1)
        ch.blockSignals(False)
        if self._diffs:
            self.show_diff(0)
        else:
            self.diff_view.set_sides("", "", "", "", "nothing to compare: no failed attempts, one step, not a fork")
        self.stats = data.stats
        cur = self.tabs.currentIndex()
        for i in (3, 2):
            w = self.tabs.widget(i)
            self.tabs.removeTab(i)
            if w is not None:
                w.deleteLater()
        if data.stats is not None:
            self.plots = StatsPlots(data.stats)
            self.stats_panel = StatsPanel(data.stats)
            self.tabs.addTab(self.plots, "Plots")
            self.tabs.addTab(self.stats_panel, "Stats")
        else:
            self.tabs.addTab(_error_label(data.stats_error or "no stats"), "Plots")
            self.tabs.addTab(_error_label(data.stats_error or "no stats"), "Stats")
        self.tabs.setCurrentIndex(max(0, cur))
        self.stack.setCurrentIndex(1)
        self.traceShown.emit(data.seq)

    def has_seq(self, seq: Optional[int]) -> bool:
        return self.data is not None and self.data.has_seq(seq)

    # ------------------------------------------------------------------ trace / diff on demand
    def show_trace(self, seq: Optional[int]) -> None:
        if self.data is None:
            return
        self._trace_token += 1
        if self.jobs is None:
            self._install_trace((seq, *trace_of(self.events, seq)), self._trace_token)
            return
        if self._trace_job is not None:
            self._trace_job.cancel()
        self.trace_panel.set_error(f"tracing seq {seq} …")
        tok = self._trace_token
        self._trace_job = self.jobs.submit(trace_job, self.events, seq, name="audit-trace",
                                           on_done=lambda res: self._install_trace(res, tok),
                                           on_error=lambda msg: self._install_trace((seq, None, msg), tok))

    def _install_trace(self, res: tuple, token: int) -> None:
        if token != self._trace_token:
            return
        self._trace_job = None
        seq, trace, err = res
        if trace is not None:
            self.trace_panel.set_trace(trace)
        else:
            self.trace_panel.set_error(err or "nothing to trace")
        self.traceShown.emit(seq)

    def show_diff(self, index: int) -> None:
        if not (0 <= index < len(self._diffs)):
            return
        if self._diff_job is not None:
            self._diff_job.cancel()
            self._diff_job = None
        spec = self._diffs[index][1]
        if index in self._sides:
            self._install_sides(index, self._sides[index])
        elif self.jobs is None or is_cheap(spec):
            try:
                sides = diff_sides(self.events, self.header, spec)
            except Exception as e:
                sides = ("", "", "", "", f"diff failed: {type(e).__name__}: {e}")
            self._install_sides(index, sides)
        else:
            self.diff_view.set_sides("", "", "", "", f"comparing: {self._diffs[index][0]} …")
            self._diff_job = self.jobs.submit(
                diff_job, self.events, self.header, index, spec, name="audit-diff",
                on_done=lambda res: self._install_sides(*res),
                on_error=lambda msg, i=index: self._install_sides(i, ("", "", "", "", f"diff failed: {msg}")))

    def _install_sides(self, index: int, sides: tuple) -> None:
        self._sides[index] = sides
        if index != self.diff_view.chooser.currentIndex():
            return
        self._diff_job = None
        self.diff_view.set_sides(*sides)
        self.diffShown.emit(index)

    def select_tab(self, name: str) -> None:
        if name in TABS:
            self.tabs.setCurrentIndex(TABS.index(name))


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
    assert app is not None, "save_screenshot needs a QApplication"
    for _ in range(3):
        app.processEvents()
    pix = widget.grab()
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    if not pix.save(path, "PNG"):
        raise OSError(f"could not write {path}")
    return path
