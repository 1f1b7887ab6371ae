"""Find anything in a long session: whole-log search, go to, outline, problems, filters.

Places its own entries: the Go menu (``win.menu("Go")``: start, end, seq/turn…, turns,
errors), filter and panel entries in the View menu, search options in the search bar, and
three docks:

* **Search results**: the search bar's text runs :func:`app.log.search.find` over the whole
  stored log in the ``find`` job group (a new query cancels the old; Cancel stops it), hits
  stream into a results table (seq, turn, kind, snippet) with progress and a count that says
  exactly what was searched.  Enter / F3 step through the hits; a click jumps to the hit,
  reading the page it is on (``HistoryModel.jump_to``).
* **Outline**: one row per turn (:func:`app.log.outline.build_outline`, built in the
  ``outline`` job group on its own reader), selecting one jumps there.
* **Problems**: every problem of the log from the same pass, each with line, byte offset and
  seq (a jump when there is one); the banner counts them and opens the panel.

F8 / Shift+F8 go to the next / previous error of the whole log (failed tools, failed
attempts, error turn ends: the outline pass records their seqs).
"""
from __future__ import annotations

import bisect
import re
import time
from typing import Optional

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDockWidget, QHBoxLayout, QHeaderView,
                               QInputDialog, QLabel, QListView, QProgressBar, QPushButton, QTableView,
                               QVBoxLayout, QWidget)

from ..log.search import FindOptions, FindStats, compile_matcher, find
from ..log.textview import KINDS
from ..store.faces import open_reader
from .find_models import SEQ_ROLE, FindResultsModel, OutlineModel, ProblemsModel, search_wording
from .history.window import FILTER_LABELS, FILTERS

HIT_LIMIT = 100_000          # hits kept for the results pane (the count says when it was reached)
STREAM_EVERY = 0.08          # seconds between batches of streamed hits


# --------------------------------------------------------------------------- worker bodies (no Qt)

def find_job(job, path: str, session_id: Optional[str], opts: FindOptions, limit: int = HIT_LIMIT):
    """The whole-log search in a worker: hits streamed in batches, FindStats returned."""
    reader = open_reader(path, session_id)
    try:
        st = FindStats()
        batch: list = []
        last = time.perf_counter()
        for h in find(reader, opts, cancel=lambda: job.cancelled, stats=st, limit=limit,
                      progress=lambda d, t: job.report(d, t)):
            batch.append(h)
            now = time.perf_counter()
            if now - last >= STREAM_EVERY or len(batch) >= 2000 or len(batch) == 1 and st.hits == 1:
                job.stream(batch)
                batch, last = [], now
        if batch:
            job.stream(batch)
        job.check()
        return st
    finally:
        reader.close()


def outline_job(job, path: str, session_id: Optional[str]):
    from ..log.outline import build_outline
    reader = open_reader(path, session_id)
    try:
        return build_outline(reader, progress=lambda d, t: job.report(d, t), cancel=lambda: job.cancelled)
    finally:
        reader.close()


def parse_goto(text: str) -> Optional[tuple]:
    """"1234" / "seq 1234" -> ("seq", 1234); "t12" / "turn 12" -> ("turn", 12); else None."""
    m = re.fullmatch(r"\s*(seq|s|turn|t)?\s*#?\s*(\d+)\s*", text or "", re.IGNORECASE)
    if not m:
        return None
    what = (m.group(1) or "seq").lower()
    return ("turn" if what.startswith("t") else "seq", int(m.group(2)))


# --------------------------------------------------------------------------- the controller

class FindActions(QObject):
    searchFinished = Signal(str)          # the wording of a finished (or cancelled) search
    outlineReady = Signal()

    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self.h = win.history
        self.ctl = win.history_actions.controller
        self.results = FindResultsModel(self)
        self.outline_model = OutlineModel(self)
        self.problems_model = ProblemsModel(self)
        self.outline = None                 # app.log.outline.Outline once built
        self.error_seqs: list = []
        self.stats: Optional[FindStats] = None
        self.query: Optional[FindOptions] = None
        self.status = ""
        self.first_hit_at: Optional[float] = None
        self.started_at = 0.0
        self._progress = (0, 0)
        self._cur_hit: Optional[int] = None
        self._want_seq: Optional[int] = None
        self._pending_step: Optional[bool] = None
        self._auto = False                  # the first hit to show is still to be chosen
        self._ref_seq: Optional[int] = None
        self._build_docks()
        self._build_search_options()
        self._build_menus()
        self.h.opened.connect(self._on_opened)
        self.h.openFailed.connect(lambda _m: self._reset())
        self.ctl.seqSelected.connect(self._on_seq_selected)

    # ------------------------------------------------------------------ groups
    def _group(self, name: str) -> str:
        return f"find-{id(self)}-{name}"

    # ------------------------------------------------------------------ UI
    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        d = QDockWidget(title, self.win)
        d.setObjectName(name)
        d.setWidget(widget)
        self.win.addDockWidget(area, d)
        d.hide()
        return d

    def _build_docks(self):
        # results
        w = QWidget()
        lay = QVBoxLayout(w)
        lay.setContentsMargins(4, 2, 4, 2)
        top = QHBoxLayout()
        self.result_label = QLabel("")
        self.result_label.setTextFormat(Qt.TextFormat.PlainText)
        self.result_progress = QProgressBar()
        self.result_progress.setRange(0, 1000)
        self.result_progress.setMaximumWidth(160)
        self.result_progress.setTextVisible(False)
        self.result_progress.hide()
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        top.addWidget(self.result_label, 1)
        top.addWidget(self.result_progress)
        top.addWidget(self.cancel_button)
        lay.addLayout(top)
        self.result_view = QTableView()
        self.result_view.setObjectName("findResults")
        self.result_view.setModel(self.results)
        self.result_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.result_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.result_view.setWordWrap(False)
        self.result_view.verticalHeader().hide()
        self.result_view.verticalHeader().setDefaultSectionSize(self.result_view.fontMetrics().height() + 6)
        hh = self.result_view.horizontalHeader()
        hh.setStretchLastSection(True)
        for c, width in ((0, 80), (1, 60), (2, 140)):
            hh.resizeSection(c, width)
        hh.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.result_view.activated.connect(lambda ix: self.goto_hit(ix.row()))
        self.result_view.clicked.connect(lambda ix: self.goto_hit(ix.row()))
        lay.addWidget(self.result_view, 1)
        self.results_dock = self._dock("Search results", "searchResultsDock", w, Qt.DockWidgetArea.BottomDockWidgetArea)
        # outline
        self.outline_view = QListView()
        self.outline_view.setObjectName("outline")
        self.outline_view.setModel(self.outline_model)
        self.outline_view.setUniformItemSizes(True)
        self.outline_view.setWordWrap(False)
        self.outline_view.activated.connect(lambda ix: self._jump_role(ix))
        self.outline_view.clicked.connect(lambda ix: self._jump_role(ix))
        ow = QWidget()
        ol = QVBoxLayout(ow)
        ol.setContentsMargins(4, 2, 4, 2)
        self.outline_label = QLabel("")
        self.outline_label.setTextFormat(Qt.TextFormat.PlainText)
        ol.addWidget(self.outline_label)
        ol.addWidget(self.outline_view, 1)
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
        pw = QWidget()
        pl = QVBoxLayout(pw)
        pl.setContentsMargins(4, 2, 4, 2)
        self.problems_label = QLabel("")
        self.problems_label.setTextFormat(Qt.TextFormat.PlainText)
        pl.addWidget(self.problems_label)
        pl.addWidget(self.problems_view, 1)
        self.problems_dock = self._dock("Problems", "problemsDock", pw, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.win.tabifyDockWidget(self.results_dock, self.problems_dock)

    def _build_search_options(self):
        ha = self.win.history_actions
        lay = ha.search_bar.layout()
        self.opt_case = QCheckBox("Aa")
        self.opt_case.setToolTip("Match case")
        self.opt_word = QCheckBox("Word")
        self.opt_word.setToolTip("Whole words only")
        self.opt_regex = QCheckBox(".*")
        self.opt_regex.setToolTip("Regular expression")
        self.opt_kind = QComboBox()
        self.opt_kind.addItem("all kinds", None)
        for k in KINDS:
            self.opt_kind.addItem(k, k)
        self.opt_kind.setToolTip("Search only this kind of text")
        at = lay.indexOf(ha.search_edit) + 1
        for i, x in enumerate((self.opt_case, self.opt_word, self.opt_regex, self.opt_kind)):
            lay.insertWidget(at + i, x)
        for cb in (self.opt_case, self.opt_word, self.opt_regex):
            cb.toggled.connect(lambda _on: ha._apply_search() if ha.search_edit.text() else None)
        self.opt_kind.currentIndexChanged.connect(lambda _i: ha._apply_search() if ha.search_edit.text() else None)
        ha.search_edit.setPlaceholderText("Find in the whole log (Enter: older hit, Shift+Enter: newer)")

    def _build_menus(self):
        win = self.win
        gm = win.menu("&Go")
        ha = win.history_actions
        self.act_start = QAction("&Start of log", win, shortcut=QKeySequence("Ctrl+Home"), triggered=self.ctl.goto_start)
        self.act_end = QAction("&End of log", win, shortcut=QKeySequence("Ctrl+End"), triggered=self.ctl.goto_end)
        self.act_goto = QAction("&Go to seq / turn…", win, shortcut=QKeySequence("Ctrl+G"), triggered=self.goto_dialog)
        self.act_next_error = QAction("Next &error", win, shortcut=QKeySequence("F8"),
                                      triggered=lambda: self.goto_error(True))
        self.act_prev_error = QAction("Previous e&rror", win, shortcut=QKeySequence("Shift+F8"),
                                      triggered=lambda: self.goto_error(False))
        for a in (self.act_start, self.act_end, self.act_goto, None, ha.act_prev_turn, ha.act_next_turn, None,
                  self.act_next_error, self.act_prev_error):
            gm.addSeparator() if a is None else gm.addAction(a)
        for a in (self.act_start, self.act_end, self.act_goto, self.act_next_error, self.act_prev_error):
            win.addAction(a)
        self.go_menu = gm
        # View: panels and filters
        vm = ha.view_menu
        vm.addSeparator()
        for d in (self.outline_dock, self.results_dock, self.problems_dock):
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
            a = QAction(FILTER_LABELS[k], win, checkable=True, checked=True, toggled=lambda _on: self._apply_filter())
            fm.addAction(a)
            self.filter_actions[k] = a
        fm.addSeparator()
        self.act_errors_only = QAction("&Errors only", win, checkable=True, shortcut=QKeySequence("Ctrl+Shift+E"),
                                       toggled=lambda _on: self._apply_filter())
        fm.addAction(self.act_errors_only)
        self.filter_menu = fm

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

    # ------------------------------------------------------------------ session
    def _reset(self) -> None:
        for g in ("find", "outline"):
            self.win.jobs.cancel_group(self._group(g))
        self.results.clear()
        self.outline = None
        self.error_seqs = []
        self.outline_model.set_turns([])
        self.problems_model.set_problems([])
        self.stats = None
        self._cur_hit = None
        self._set_status("")
        self.result_progress.hide()
        self.cancel_button.hide()

    def _on_opened(self) -> None:
        self._reset()
        self.set_enabled(True)
        self.outline_label.setText("Building the outline…")
        self.problems_label.setText("Reading the whole log for problems…")
        h = self.h
        self.win.jobs.submit(outline_job, h.path, h.session_id, name="outline", group=self._group("outline"),
                             on_done=self._outline_done,
                             on_error=lambda msg: self.outline_label.setText(f"Outline failed: {msg}"),
                             on_progress=lambda d, t: self.outline_label.setText(
                                 f"Building the outline… {100 * d / max(1, t):.0f}%"))

    def _outline_done(self, ol) -> None:
        self.outline = ol
        self.outline_model.set_turns(ol.turns)
        self.problems_model.set_problems(ol.problems)
        self.error_seqs = sorted(s for t in ol.turns for s in t.error_seqs)
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

    # ------------------------------------------------------------------ search
    def options(self, text: str) -> FindOptions:
        k = self.opt_kind.currentData()
        return FindOptions(text=text, regex=self.opt_regex.isChecked(), case=self.opt_case.isChecked(),
                           word=self.opt_word.isChecked(), kinds=frozenset({k}) if k else None)

    def run(self, text: str) -> None:
        """A new query over the whole log (the running one is cancelled)."""
        self.win.jobs.cancel_group(self._group("find"))
        self.results.clear()
        self._cur_hit = None
        self.stats = None
        self.first_hit_at = None
        h = self.h
        plain = text if not self.opt_regex.isChecked() else ""
        h.set_search(plain)
        self.win.view.viewport().update()
        if not text or h.path is None:
            self.query = None
            self._set_status("")
            self.result_progress.hide()
            self.cancel_button.hide()
            return
        opts = self.options(text)
        try:
            compile_matcher(opts)
        except ValueError as e:
            self.query = None
            self._set_status(str(e))
            return
        self.query = opts
        self._progress = (0, 0)
        row = self.win.view.current_row()
        self._ref_seq = row.seq if row is not None and row.seq is not None else None   # None: the end
        self._auto = True
        self.started_at = time.perf_counter()
        self.results_dock.show()
        self.results_dock.raise_()
        self.result_progress.setValue(0)
        self.result_progress.show()
        self.cancel_button.show()
        self._set_status("searching the whole log…")
        self.win.jobs.submit(find_job, h.path, h.session_id, opts, name="find", group=self._group("find"),
                             on_done=self._done, on_error=self._failed, on_partial=self._hits,
                             on_progress=self._on_progress)

    def _on_progress(self, done: int, total: int) -> None:
        self._progress = (done, total)
        self.result_progress.setValue(int(1000 * done / max(1, total)))
        self._set_status(search_wording(len(self.results.hits), False, False, None, done, total))

    def _hits(self, batch: list) -> None:
        first = not self.results.hits
        n0 = len(self.results.hits)
        self.results.append(batch)
        if first and batch:
            self.first_hit_at = time.perf_counter()
        if self._auto:
            # the hit to show first: the newest at or before the current row (Enter goes on to
            # older ones); known as soon as a hit after the row streams in
            for k, x in enumerate(batch):
                if self._ref_seq is not None and x.seq > self._ref_seq:
                    self._auto = False
                    self.goto_hit(max(0, n0 + k - 1))
                    break
        d, t = self._progress
        self._set_status(search_wording(len(self.results.hits), False, False, None, d, t))

    def _done(self, st: FindStats) -> None:
        self.stats = st
        self.result_progress.hide()
        self.cancel_button.hide()
        n = len(self.results.hits)
        txt = search_wording(n, st.complete, st.cancelled, self.turn_count(), st.bytes_scanned, st.bytes_total,
                             limit_hit=not st.complete and not st.cancelled)
        self._set_status(txt)
        if self._auto and n:
            self._auto = False
            self.goto_hit(n - 1)
        self.searchFinished.emit(txt)
        if n == 0:
            self.ctl.searchMoved.emit(None)

    def _failed(self, msg: str) -> None:
        self.result_progress.hide()
        self.cancel_button.hide()
        self._set_status(f"search failed: {msg}")
        self.searchFinished.emit(self.status)

    def cancel(self) -> None:
        if self.win.jobs.cancel_group(self._group("find")):
            d, t = self._progress
            if self._auto and self.results.hits:
                self._auto = False
                self.goto_hit(len(self.results.hits) - 1)
            self.result_progress.hide()
            self.cancel_button.hide()
            txt = search_wording(len(self.results.hits), False, True, None, d, t)
            self._set_status(txt)
            self.searchFinished.emit(txt)

    @property
    def running(self) -> bool:
        return bool(self.win.jobs.group_busy(self._group("find")))

    def _set_status(self, text: str) -> None:
        self.status = text
        self.result_label.setText(text)
        pos = ""
        if self._cur_hit is not None and self.results.hits:
            pos = f"{self._cur_hit + 1:,}/"
        self.win.history_actions.search_count.setText(pos + text if pos and text[:1].isdigit() else text)
        self.ctl.searchStatus.emit(text)

    # ------------------------------------------------------------------ hits
    def goto_hit(self, i: int, select_result: bool = True) -> None:
        hits = self.results.hits
        if not (0 <= i < len(hits)):
            return
        self._cur_hit = i
        if select_result:
            ix = self.results.index(i, 0)
            self.result_view.setCurrentIndex(ix)
            self.result_view.scrollTo(ix)
        self._want_seq = hits[i].seq
        self._set_status(self.status)
        self.ctl.goto_seq(hits[i].seq)

    def _on_seq_selected(self, seq: int) -> None:
        if seq != self._want_seq:
            return
        self._want_seq = None
        row = self.ctl.current_row_index()
        r = self.h.row_at(row) if row is not None else None
        ok = r is not None and r.first_seq is not None and (r.first_seq <= seq <= max(r.seq or 0, r.last_seq or 0)) \
            or (r is not None and r.seq == seq)
        term = self.h.search_term
        view = self.win.view
        if ok and term and term not in r.search_text() and r.clipped:
            # the match is in the clipped part ("… N more lines"): expand the row in place
            view.toggle_expanded(self.h.index(row, 0), True)
        self.h.set_current_match(row if ok else None)
        if ok and term and r.expanded:
            view.scroll_to_text(self.h.index(row, 0), term)
        view.viewport().update()
        self.ctl.searchMoved.emit(row if ok else None)

    def step(self, forward: bool) -> None:
        """The next newer (forward) or older hit than the current one (or the current row)."""
        hits = self.results.hits
        if not hits:
            if not self.running:
                self.win.statusBar().showMessage(self.status or "no search", 4000)
                self.ctl.searchMoved.emit(None)
            return
        self._auto = False
        if self._cur_hit is not None:
            d = 1 if forward else -1
            i = self._cur_hit + d
            while 0 <= i < len(hits) and hits[i].seq == hits[self._cur_hit].seq:
                i += d                      # another field of the same event: the same row
        else:
            row = self.win.view.current_row()
            seq = row.seq if row is not None and row.seq is not None else None
            i = (self.results.row_for_seq(seq, forward) if seq is not None else (0 if forward else len(hits) - 1))
        if i is None or not (0 <= i < len(hits)):
            self.win.statusBar().showMessage("No more matches" + (" (last hit)" if forward else " (first hit)"), 4000)
            self.ctl.searchMoved.emit(self.h.current_match_row)
            return
        self.goto_hit(i)

    # ------------------------------------------------------------------ go to
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
        else:
            where = ", ".join(x for x in (f"line {p.line}" if p.line is not None else "",
                                          f"byte {p.offset:,}" if p.offset is not None else "") if x)
            self.win.statusBar().showMessage(f"{p.code}: {where or 'no position'} (no event seq to go to; "
                                             "the physical tail shows stored bad rows)", 8000)

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
        if last is not None and last[1] == (row.key if row is not None else None):
            cur = hi = last[0]             # the last error had no row of its own (a hidden attempt)
        if cur is None:
            seq = errs[0] if forward else errs[-1]
        elif forward:
            i = bisect.bisect_right(errs, hi)
            seq = errs[i] if i < len(errs) else None
        else:
            i = bisect.bisect_left(errs, cur) - 1
            seq = errs[i] if i >= 0 else None
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

    # ------------------------------------------------------------------ filters
    def _apply_filter(self) -> None:
        hidden = frozenset(k for k, a in self.filter_actions.items() if not a.isChecked())
        self.h.set_filter(hidden, self.act_errors_only.isChecked())

    def set_filter(self, hidden=frozenset(), errors_only: bool = False) -> None:
        for k, a in self.filter_actions.items():
            a.blockSignals(True)
            a.setChecked(k not in hidden)
            a.blockSignals(False)
        self.act_errors_only.blockSignals(True)
        self.act_errors_only.setChecked(errors_only)
        self.act_errors_only.blockSignals(False)
        self._apply_filter()
