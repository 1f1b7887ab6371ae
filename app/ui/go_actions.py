"""Go anywhere in a long session: the Go menu, the outline, the problems panel, view filters.

Places its own entries: the Go menu (``win.menu("Go")``: start and end of the log, go to
seq / turn (Ctrl+G), previous / next turn, next / previous error (F8 / Shift+F8)), panel and
filter entries in the View menu, and two docks:

* **Outline**: one row per turn (:func:`app.log.query.outline.build_outline`, built in the
  ``outline`` job group on its own reader): the first line of the prompt, steps, tools used,
  markers for errors, retries and interruption; selecting one jumps there.
* **Problems**: every problem of the log from the same pass, each with line, byte offset and
  seq (a jump when there is one); the banner counts them and a click on it opens the panel.

F8 / Shift+F8 go to the next / previous error of the whole log (failed tools, failed
attempts, error turn ends: the outline pass records their seqs), loading its page directly.
"""
from __future__ import annotations

import re
from typing import Optional

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QDockWidget, QInputDialog, QLabel, QListView, QTableView,
                               QVBoxLayout, QWidget)

from ..log.blockfile import BlockFile
from ..store import scan_child
from .find_actions import dock
from .frame_actions import action
from .find_models import SEQ_ROLE, OutlineModel, ProblemsModel
from .history.navigation import neighbour_index
from .history.pages import nearest_seq_job
from .history.window import FILTER_LABELS, FILTERS


def parse_goto(text: str) -> Optional[tuple]:
    """"1234" / "seq 1234" -> ("seq", 1234); "t12" / "turn 12" -> ("turn", 12); else None."""
    m = re.fullmatch(r"\s*(seq|s|turn|t)?\s*#?\s*(\d+)\s*", text or "", re.IGNORECASE)
    if not m:
        return None
    what = (m.group(1) or "seq").lower()
    return ("turn" if what.startswith("t") else "seq", int(m.group(2)))


# --------------------------------------------------------------------------- the controller


class GoActions(QObject):
    outlineReady = Signal()

    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self.h = win.history
        self.ctl = win.history_actions.controller
        self._pass_blocks = BlockFile()       # (the whole-log pass's turn blocks, sent ahead of its outline)
        self.outline_model = OutlineModel(self)
        self.problems_model = ProblemsModel(self)
        self.outline = None                 # app.log.query.outline.Outline once built
        self.outline_job = None             # the whole-log pass's Job (its progress pane: outline_tasks)
        self.error_seqs: list = []
        self._pending_step: Optional[bool] = None
        self._last_error: Optional[tuple] = None
        self._near: Optional[tuple] = None     # (problem, seq): a jump to the row nearest a problem
        self._build_docks()
        self._build_menus()
        self.ctl.seqSelected.connect(self._on_seq_selected)
        self.h.opened.connect(self._on_opened)
        self.h.openFailed.connect(lambda _m: self._reset())

    def job_group(self, name: str) -> str:
        return f"go-{id(self)}-{name}"

    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        return dock(self.win, title, name, widget, area)

    def _build_docks(self):
        # outline
        self.outline_view = QListView()
        self.outline_view.setObjectName("outline")
        self.outline_view.setModel(self.outline_model)
        self.outline_view.setUniformItemSizes(True)
        self.outline_view.setWordWrap(False)
        self.outline_view.setMinimumWidth(320)          # the first line of a prompt stays readable
        self.outline_view.activated.connect(lambda ix: self._jump_role(ix))
        self.outline_view.clicked.connect(lambda ix: self._jump_role(ix))
        ow, self.outline_label = self._panel(self.outline_view)
        from .progress_pane import TaskStrip
        self.outline_tasks = TaskStrip()            # the whole-log pass: progress, time left, Cancel (progress_pane.py)
        self.outline_tasks.cancelled.connect(self._pass_cancelled)
        lay = ow.layout()
        assert isinstance(lay, QVBoxLayout)
        lay.insertWidget(0, self.outline_tasks)
        self.outline_dock = self._dock("Outline", "outlineDock", ow, Qt.DockWidgetArea.LeftDockWidgetArea)
        # problems
        self.problems_view = QTableView()
        self.problems_view.setObjectName("problems")
        self.problems_view.setModel(self.problems_model)
        self.problems_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.problems_view.setWordWrap(False)
        self.problems_view.verticalHeader().hide()
        self.problems_view.horizontalHeader().setStretchLastSection(True)
        self.problems_view.activated.connect(lambda ix: self.goto_problem(ix.row()))
        self.problems_view.clicked.connect(lambda ix: self.goto_problem(ix.row()))
        pw, self.problems_label = self._panel(self.problems_view)
        self.problems_dock = self._dock("Problems", "problemsDock", pw, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.win.tabifyDockWidget(self.win.find_actions.results_dock, self.problems_dock)

    @staticmethod
    def _panel(view: QWidget) -> tuple[QWidget, QLabel]:
        """A dock's content: a plain-text status line over ``view``."""
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(4, 2, 4, 2)
        label = QLabel("")
        label.setTextFormat(Qt.TextFormat.PlainText)
        lay.addWidget(label)
        lay.addWidget(view, 1)
        return w, label

    def _build_menus(self):
        win = self.win
        gm = win.menu("Go")
        ha = win.history_actions
        self.act_start = action("&Start of log", win, shortcut="Ctrl+Home", triggered=self.ctl.goto_start)
        self.act_end = action("&End of log", win, shortcut="Ctrl+End", triggered=self.ctl.goto_end)
        self.act_goto = action("&Go to seq / turn…", win, shortcut="Ctrl+G", triggered=self.goto_dialog)
        self.act_next_error = action("Next &error", win, shortcut="F8",
                                      triggered=lambda: self.goto_error(True))
        self.act_prev_error = action("Previous e&rror", win, shortcut="Shift+F8",
                                      triggered=lambda: self.goto_error(False))
        for a in (self.act_start, self.act_end, self.act_goto, None, ha.act_prev_turn, ha.act_next_turn, None,
                  self.act_next_error, self.act_prev_error):
            gm.addSeparator() if a is None else gm.addAction(a)
        for a in (self.act_start, self.act_end, self.act_goto, self.act_next_error, self.act_prev_error):
            win.addAction(a)
        # View: panels and filters
        vm = ha.view_menu
        vm.addSeparator()
        for d in (self.outline_dock, self.win.find_actions.results_dock, self.problems_dock):
            vm.addAction(d.toggleViewAction())
        self.outline_dock.toggleViewAction().setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.problems_dock.toggleViewAction().setShortcut(QKeySequence("Ctrl+Shift+R"))
        # the banner counts the problems; a click on it opens the panel
        win.banner.installEventFilter(self)
        win.banner.setCursor(Qt.CursorShape.PointingHandCursor)
        win.banner.setToolTip("Click: the Problems panel")
        fm = vm.addMenu("Show &rows")
        self.filter_actions = {}
        for k in FILTERS:
            a = action(FILTER_LABELS[k], win, checkable=True, checked=True, toggled=lambda _on: self._apply_filter())
            fm.addAction(a)
            self.filter_actions[k] = a
        fm.addSeparator()
        self.act_errors_only = action("&Errors only", win, checkable=True, shortcut="Ctrl+Shift+E",
                                       toggled=lambda _on: self._apply_filter())
        fm.addAction(self.act_errors_only)

    def eventFilter(self, obj, e):
        from PySide6.QtCore import QEvent
        if obj is self.win.banner and e.type() == QEvent.Type.MouseButtonRelease:
            self.show_problems()
            return True
        return super().eventFilter(obj, e)

    def show_problems(self) -> None:
        self.problems_dock.show()
        self.problems_dock.raise_()

    def set_enabled(self, has_session: bool) -> None:
        for a in (self.act_start, self.act_end, self.act_goto, self.act_next_error, self.act_prev_error):
            a.setEnabled(has_session)

    def _reset(self) -> None:
        self.win.jobs.cancel_group(self.job_group("outline"))
        self.outline = None
        self.error_seqs = []
        self.h.jumps.set_wanted([])
        self._last_error = None
        self.outline_model.set_turns([])
        self.problems_model.set_problems([])

    def _on_opened(self) -> None:
        self._reset()
        self.set_enabled(True)
        self.outline_label.setText("Building the outline…")
        self.problems_label.setText("Reading the whole log for problems…")
        h = self.h
        h.expect_pass_surface()         # (its surface index goes to the row statuses: the first open reads the log once)
        # outline and problems of the whole log, built in a background child (app.store.scan_child)
        self._pass_blocks = BlockFile(prefix="session-lens-turns-")      # (the turns' blocks, sent ahead)
        job = self.win.jobs.submit_child(scan_child.spec("outline", h.path, h.session_id, {"blocks_apart": True}),
                                         name="outline", group=self.job_group("outline"), on_done=self._outline_done,
                                         on_partial=self._pass_message,
                                         on_end=lambda j: h.surface_pass_ended() if j is self.outline_job else None,
                                         on_error=lambda msg: self.outline_label.setText(f"Outline failed: {msg}"),
                                         on_progress=lambda d, t: self.outline_label.setText(
                                             f"Building the outline… {100 * d / max(1, t):.0f}%"))
        self.outline_tasks.track(job, "Reading the whole log ahead: turns, errors, problems")
        self.outline_job = job

    def _pass_message(self, m) -> None:
        if m[0] == "surface":
            self.h.surface_from_pass(m[1])
        elif m[0] == "turn-blocks":
            self._pass_blocks.add_joined(m[1], m[2])

    def _pass_cancelled(self, _title: str) -> None:
        """Cancel of the whole-log pass (the pane cancelled its job: the job API killed its child, stopped
        or not, within ~20 ms; no other background child is touched)."""
        self.outline_label.setText("Outline cancelled: turns, errors (F8) and problems stay unknown until the "
                                   "session is opened again")

    def _outline_done(self, ol) -> None:
        from ..log.query.outline_packed import packed
        from .memory import trim
        from .outline_turns import keep_small
        ol = packed(ol)                               # (the child packed its turns already: issue 36)
        scan_child.take_blocks(ol.turns, self._pass_blocks)    # (their blocks came ahead, in a file already)
        self._pass_blocks = BlockFile()
        keep_small(ol.turns)                          # (their blocks in a temporary file, 32-bit columns)
        trim()                                        # (and the freed heap of the message back)
        self.outline = ol
        self.outline_model.set_turns(ol.turns)
        self.problems_model.set_problems(ol.problems)
        self.error_seqs = ol.turns.error_seqs         # (sorted array; seq -> stored row: compact, outline_turns)
        self.h.jumps.set_wanted(self.error_seqs, ol.turns.error_where)
        n = len(ol.turns)
        self.outline_label.setText(f"{n:,} turn{'s' if n != 1 else ''}, {ol.events:,} events"
                                   + ("" if ol.complete else " (incomplete)"))
        k = len(ol.problems)
        self.problems_label.setText("No problem in this log." if not k else
                                    f"{k:,} problem{'s' if k != 1 else ''} in this log")
        self.problems_view.resizeColumnsToContents()
        self.win.update_banner()
        if self._pending_step is not None:
            fwd, self._pending_step = self._pending_step, None
            self.goto_error(fwd)
        self.outlineReady.emit()

    def problem_count(self) -> Optional[int]:
        return len(self.outline.problems) if self.outline is not None else None

    def turn_count(self) -> Optional[int]:
        if self.outline is not None and self.outline.complete:
            return len(self.outline.turns)
        idx = self.h.seq_index
        if idx is not None:
            return sum(1 for c in idx.mark_code if c == 0)
        return None

    def _jump_role(self, ix) -> None:
        seq = ix.data(SEQ_ROLE)
        if seq is not None:
            self.ctl.goto_seq(int(seq))

    def goto_problem(self, i: int) -> None:
        if not (0 <= i < len(self.problems_model.problems)):
            return
        p = self.problems_model.problems[i]
        if p.seq is not None:
            self.ctl.goto_seq(p.seq)
            return
        where = ", ".join(x for x in (f"line {p.line}" if p.line is not None else "",
                                      f"byte {p.offset:,}" if p.offset is not None and p.offset >= 0 else "") if x)
        if not where or self.h.path is None:
            self.win.statusBar().showMessage(f"{p.code}: no position in the log to go to", 8000)
            return
        # no seq (a malformed row): the nearest stored event, found from the byte offset or line
        h = self.h
        offset = p.offset if p.offset is not None and p.offset >= 0 else None
        self.win.statusBar().showMessage(f"{p.code} at {where}: finding the nearest row…", 4000)
        self.win.jobs.submit(nearest_seq_job, h.path, h.session_id, h.seq_index, offset, p.line,
                             name="nearest-row", group=self.job_group("nearest"),
                             on_done=lambda seq: self._goto_near(p, where, seq))

    def _goto_near(self, p, where: str, seq: Optional[int]) -> None:
        if seq is None:
            self.win.statusBar().showMessage(f"{p.code} at {where}: the log has no event to go to", 8000)
            return
        self._near = (p, seq)
        self.ctl.goto_seq(seq)
        self.win.statusBar().showMessage(f"{p.code} at {where} has no seq: showing the nearest row, seq {seq}"
                                         + ("" if self.h.physical else " (the physical face shows the bad row itself)"),
                                         8000)

    def _on_seq_selected(self, seq: int) -> None:
        near, self._near = self._near, None
        if near is not None and near[1] == seq:
            self._select_bad_row(near[0])

    def _select_bad_row(self, p) -> bool:
        """The stored bad row of problem ``p`` when it is shown (physical face): select it."""
        for i, r in enumerate(self.h.rows):
            b = r.bad
            if b is not None and ((p.offset is not None and b.offset == p.offset)
                                  or (p.offset is None and p.line is not None and b.line == p.line)):
                self.win.view.setCurrentIndex(self.h.index(i, 0))
                self.win.view.scrollTo(self.h.index(i, 0))
                return True
        return False

    def goto_text(self, text: str) -> bool:
        """"seq 1234", "1234", "turn 12", "t12": go there; False when it does not parse or the
        turn is unknown."""
        g = parse_goto(text)
        if g is None:
            self.win.statusBar().showMessage(f"Not a seq or turn: {text!r}", 5000)
            return False
        what, n = g
        if what == "seq":
            self.ctl.goto_seq(n)
            return True
        if self.outline is None:
            self.win.statusBar().showMessage("The outline is still being built: turn numbers are not known yet", 5000)
            return False
        for t in self.outline.turns:
            if t.turn == n:
                self.ctl.goto_seq(t.first_seq)
                self.outline_view.setCurrentIndex(self.outline_model.index(self.outline.turns.index(t), 0))
                return True
        self.win.statusBar().showMessage(f"No turn {n} in this log", 5000)
        return False

    def goto_dialog(self) -> None:
        text, ok = QInputDialog.getText(self.win, "Go to", "seq (1234) or turn (t12, turn 12):")
        if ok and text.strip():
            self.goto_text(text)

    def goto_error(self, forward: bool) -> None:
        """The next (F8) or previous (Shift+F8) error of the whole log."""
        if self.outline is None:
            self._pending_step = forward
            self.win.statusBar().showMessage("Finding the errors of the whole log…", 3000)
            return
        errs = self.error_seqs
        if not errs:
            self.win.statusBar().showMessage("No error in this log", 4000)
            return
        row = self.win.view.current_row()
        cur = hi = None
        if row is not None and row.seq is not None:
            cur = row.seq if forward else (row.first_seq if row.first_seq is not None else row.seq)
            hi = max(cur, row.last_seq or cur)
        last = getattr(self, "_last_error", None)
        if last is not None and (row is None or last[1] == row.key):
            cur = hi = last[0]             # the last error had no row of its own (a hidden attempt: none framed)
        if cur is None:
            seq = errs[0] if forward else errs[-1]
        else:
            i = neighbour_index(errs, cur, forward, hi)
            seq = errs[i] if i is not None else None
        if seq is None:
            self.win.statusBar().showMessage("No more errors" + (" after this row" if forward else " before this row"),
                                             4000)
            return
        k = errs.index(seq)
        self.win.statusBar().showMessage(f"Error {k + 1} of {len(errs)} (seq {seq})", 4000)
        self._last_error = None
        self.ctl.goto_seq(seq)
        if self._last_error is None and self.h.row_for_seq(seq, expose=False) is None:
            row = self.win.view.current_row()
            self._last_error = (seq, row.key if row is not None else None)

    def _apply_filter(self) -> None:
        hidden = frozenset(k for k, a in self.filter_actions.items() if not a.isChecked())
        self.h.jumps.set_filter(hidden, self.act_errors_only.isChecked())

    def set_filter(self, hidden=frozenset(), errors_only: bool = False) -> None:
        for k, a in self.filter_actions.items():
            a.blockSignals(True)
            a.setChecked(k not in hidden)
            a.blockSignals(False)
        self.act_errors_only.blockSignals(True)
        self.act_errors_only.setChecked(errors_only)
        self.act_errors_only.blockSignals(False)
        self._apply_filter()
