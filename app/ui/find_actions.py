"""Whole-log search in the window: the search bar, its options and the results pane.

The search bar's text runs :func:`app.log.query.find.find` over the whole stored log in the
``find`` job group (a new query cancels the old one; Cancel stops it).  Hits stream into the
**Find results** dock (seq, turn, kind, snippet: :class:`~app.ui.find_models.FindResultsModel`)
with progress and a count that says exactly what was searched ("12 matches in 3,261 turns",
"no match in 3,261 turns").  A common word's hits come without their snippets (the C's text hits); the pane asks
for the snippets of the rows it shows, made in a worker from their rows (:func:`~app.ui.find_hits.make_snippets`).  The first hit shown is the newest at or before the current row;
Enter / F3 step to older and newer hits; a click jumps to a hit, reading the page it is on
(``HistoryModel.jumps.jump_to``).  A hit inside the clipped part of a row ("… N more lines")
expands that row in place and scrolls to the highlighted word.

The dock belongs to the find bar's search: opened by a search, it closes with the find bar (Esc,
its ✕, another session), its hits cleared.  A dock the user opened (View › Find results), moved
or floated is theirs: it stays, keeping the last search's hits (labelled with their query) when
there are any, else saying what fills it.

The Go menu, the outline, the problems panel and the view filters are
:mod:`app.ui.go_actions`.
"""
from __future__ import annotations

import time
from typing import Optional

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QDockWidget, QHBoxLayout, QHeaderView,
                               QLabel, QProgressBar, QPushButton, QTableView, QVBoxLayout, QWidget)

from ..log.query.find import FindOptions, FindStats, compile_matcher
from ..log.query.textview import KINDS
from ..store import scan_child
from .find_hits import snippets_job
from .find_models import FindResultsModel, search_wording

HIT_LIMIT = 100_000          # hits kept for the results pane (the count says when it was reached)
EMPTY_HINT = "Find (Ctrl+F) searches the whole log; its hits are listed here."


def dock(win, title: str, name: str, widget: QWidget, area) -> QDockWidget:
    """A hidden dock of the main window (shown by its View menu entry or by use)."""
    d = QDockWidget(title, win)
    d.setObjectName(name)
    d.setWidget(widget)
    win.addDockWidget(area, d)
    d.hide()
    return d


class FindActions(QObject):
    searchFinished = Signal(str)          # the wording of a finished (or cancelled) search

    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self.h = win.history
        self.ctl = win.history_actions.controller
        self.results = FindResultsModel(self)
        self.results.snippets_wanted = self._make_snippets
        self.stats: Optional[FindStats] = None
        self.query: Optional[FindOptions] = None
        self.status = ""
        self.first_hit_at: Optional[float] = None
        self.started_at = 0.0
        self._progress = (0, 0)
        self._cur_hit: Optional[int] = None
        self._want_seq: Optional[int] = None
        self._auto = False                  # the first hit to show is still to be chosen
        self._ref_seq: Optional[int] = None
        self.dock_by_search = False         # the results dock was opened by a search: it closes with the bar
        self._kept_query = ""               # the bar closed, the user's dock keeps this query's hits
        self._build_docks()
        self._build_search_options()
        self.h.opened.connect(self._reset)
        self.h.openFailed.connect(lambda _m: self._reset())
        self.ctl.seqSelected.connect(self._on_seq_selected)

    def _group(self, name: str) -> str:
        return f"find-{id(self)}-{name}"

    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        return dock(self.win, title, name, widget, area)

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
        self.results_dock = d = self._dock("Find results", "findResultsDock", w, Qt.DockWidgetArea.BottomDockWidgetArea)
        # the user's own gestures make the dock theirs (a search showing it is none of these)
        d.toggleViewAction().triggered.connect(self._user_owns_dock)
        d.topLevelChanged.connect(lambda _f: self._user_owns_dock() if d.isVisible() else None)
        d.dockLocationChanged.connect(lambda _a: self._user_owns_dock() if d.isVisible() else None)
        self._set_status("")

    def _user_owns_dock(self, _checked: bool = False) -> None:
        self.dock_by_search = False

    def _build_search_options(self):
        ha = self.win.history_actions
        lay = ha.find_bar.layout()
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
        at = lay.indexOf(ha.find_edit) + 1
        for i, x in enumerate((self.opt_case, self.opt_word, self.opt_regex, self.opt_kind)):
            lay.insertWidget(at + i, x)
        for cb in (self.opt_case, self.opt_word, self.opt_regex):
            cb.toggled.connect(lambda _on: ha.apply_find() if ha.find_edit.text() else None)
        self.opt_kind.currentIndexChanged.connect(lambda _i: ha.apply_find() if ha.find_edit.text() else None)
        ha.find_edit.setPlaceholderText("Find in the whole log (Enter: older hit, Shift+Enter: newer)")

    def _reset(self) -> None:
        self.win.jobs.cancel_group(self._group("find"))
        self.results.clear()
        self._kept_query = ""
        self.stats = None
        self._cur_hit = None
        self._set_status("")
        self.result_progress.hide()
        self.cancel_button.hide()
        if self.win.history_actions.find_edit.text():
            self.run(self.win.history_actions.find_edit.text())

    def options(self, text: str) -> FindOptions:
        k = self.opt_kind.currentData()
        return FindOptions(text=text, regex=self.opt_regex.isChecked(), case=self.opt_case.isChecked(),
                           word=self.opt_word.isChecked(), kinds=frozenset({k}) if k else None)

    def run(self, text: str) -> None:
        """A new query over the whole log (the running one is cancelled)."""
        self.win.jobs.cancel_group(self._group("find"))
        self.results.clear()
        self._kept_query = ""
        self._cur_hit = None
        self.stats = None
        self.first_hit_at = None
        h = self.h
        plain = text if not self.opt_regex.isChecked() else ""
        # the loaded rows' own match check (highlights, Enter over loaded rows) in slices: the
        # event loop runs between them (app.ui.history.match_pass)
        cur = self.win.view.currentIndex()
        h.set_find(plain, sliced=True, start_row=cur.row() if cur.isValid() else None)
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
        by_search = self.results_dock.isHidden() or self.dock_by_search
        self.results_dock.show()            # (Qt may say the dock moved: not the user's doing)
        self.results_dock.raise_()
        self.dock_by_search = by_search     # opened by this search: closed with the find bar
        self.result_progress.setValue(0)
        self.result_progress.show()
        self.cancel_button.show()
        self._set_status("searching the whole log…")
        # the whole-log search in a child process (app.store.scan_child: it does not compete with the UI
        # thread for the GIL); hits stream in batches, FindStats is the result
        spec = scan_child.spec("find", h.path, h.session_id, {"opts": opts, "limit": HIT_LIMIT})
        self.win.jobs.submit_child(spec, name="find", group=self._group("find"), on_done=self._done,
                                   on_error=self._failed, on_progress=self._on_progress,
                                   on_partial=lambda msg: self._hits(msg[1]) if msg[0] == "hits" else None)

    def _make_snippets(self, rows: list[int]) -> None:
        """Make the snippets of the hits at ``rows`` (shown, made lazily: the text hits come without them) in a
        worker, from their rows read again (:func:`~app.ui.find_hits.make_snippets`)."""
        items = self.results.items
        wants = [(i, items[i]) for i in rows if 0 <= i < len(items)]
        if not wants or self.query is None or not self.h.path:
            return
        self.win.jobs.submit(snippets_job, self.h.path, self.h.session_id,
                             self.query, wants, name="find-snippets", group=self._group("snippets"), exclusive=False,
                             on_done=lambda made, items=items: self.results.set_snippets(items, made))

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
        from .memory import trim
        trim()                          # (the streamed batches' freed heap back: issue 36)
        self.stats = st
        self.result_progress.hide()
        self.cancel_button.hide()
        n = len(self.results.hits)
        txt = search_wording(n, st.complete, st.cancelled, self.win.go_actions.turn_count(), st.bytes_scanned, st.bytes_total,
                             limit_hit=not st.complete and not st.cancelled)
        self._set_status(txt)
        if self._auto and n:
            self._auto = False
            self.goto_hit(n - 1)
        self.searchFinished.emit(txt)
        if n == 0:
            self.ctl.findMoved.emit(None)

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

    def bar_closed(self, keep_hits: bool = True) -> None:
        """The find bar closed (Esc, its ✕; another session: ``keep_hits`` False): the search
        stops.  A results dock opened by the search closes, its hits cleared; the user's own dock
        (opened from the View menu, moved or floated) stays, keeping the hits of the last search
        under its query."""
        query = self.query.text if self.query is not None else ""
        keep = (keep_hits and not self.dock_by_search and self.results_dock.isVisible()
                and bool(self.results.hits) and bool(query))
        if not keep:
            self.run("")
            if self.dock_by_search:
                self.results_dock.hide()
                self.dock_by_search = False
            return
        if self.running:
            self.cancel()
        self._auto = False
        self.query = None
        self._kept_query = query
        self._set_status(self.status)
        self.win.history_actions.search_count.setText("")

    @property
    def running(self) -> bool:
        return bool(self.win.jobs.group_busy(self._group("find")))

    def _set_status(self, text: str) -> None:
        self.status = text
        if self._kept_query:
            self.result_label.setText(f"Last search \"{self._kept_query}\" (find bar closed): {text}")
        else:
            self.result_label.setText(text or ("" if self.results.hits else EMPTY_HINT))
        pos = ""
        if self._cur_hit is not None and self.results.hits:
            pos = f"{self._cur_hit + 1:,}/"
        self.win.history_actions.search_count.setText(pos + text if pos and text[:1].isdigit() else text)

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
        term = self.h.find_term
        view = self.win.view
        if ok and r is not None and term and term not in r.search_text() and r.clipped:
            # the match is in the clipped part ("… N more lines"): expand the row in place
            view.toggle_expanded(self.h.index(row, 0), True)
        self.h.set_current_match(row if ok else None)
        if ok and r is not None and term and r.expanded:
            # the word, not the top of a very tall row, goes to the middle; again once the
            # view has settled (rows exposed above it move the scroll position)
            key = r.key

            def scroll_to_word():
                i = self.h.row_for_key(key)
                if i is not None and self.h.find_term == term:
                    view.scroll_to_text(self.h.index(i, 0), term)
            scroll_to_word()
            QTimer.singleShot(120, view, scroll_to_word)
            self._follow_resizes(scroll_to_word)
        view.viewport().update()
        self.ctl.findMoved.emit(row if ok else None)

    def _follow_resizes(self, again, ms: int = 1500) -> None:
        """For ``ms`` after a jump, each resize of the history's viewport (the results dock opening
        or growing, the layout settling) scrolls to the word again: it stays in view."""
        vp = self.win.view.viewport()
        old = getattr(self, "_resize_follow", None)
        if old is not None:
            vp.removeEventFilter(old)
        f = _ResizeFollow(again, self)
        self._resize_follow: Optional[_ResizeFollow] = f
        vp.installEventFilter(f)

        def stop():
            if getattr(self, "_resize_follow", None) is f:
                vp.removeEventFilter(f)
                self._resize_follow = None
        QTimer.singleShot(ms, self, stop)

    def step(self, forward: bool) -> None:
        """The next newer (forward) or older hit than the current one (or the current row)."""
        hits = self.results.hits
        if not hits:
            if not self.running:
                self.win.statusBar().showMessage(self.status or "no search", 4000)
                self.ctl.findMoved.emit(None)
            return
        self._auto = False
        i: Optional[int]
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
            self.ctl.findMoved.emit(self.h.current_match_row)
            return
        self.goto_hit(i)


class _ResizeFollow(QObject):
    """Calls ``again`` after each resize of the watched widget (once the resize is applied)."""

    def __init__(self, again, parent=None):
        super().__init__(parent)
        self.again = again

    def eventFilter(self, obj, e):                                      # noqa: N802 (Qt name)
        if e.type() == QEvent.Type.Resize:
            QTimer.singleShot(0, self, self.again)
        return False
