"""Search across every session of the opened home (issue 18, the window part).

A search box above the session list (Ctrl+Shift+F) queries the full-text index of the
opened folder/home (:class:`app.store.fulltext.FullTextIndex`) in a worker: group
``home-query``, a new query cancels the old one.  Results replace the session list (a
stacked page of the sidebar), grouped by session: title, date, match count, then per hit
the seq, kind and snippet (plain text; the matched words are drawn highlighted).
Activating a hit opens its session and selects the row of that seq (HistoryController
go-to: it loads the pages up to it), with the matched word highlighted in the list.

The index is built/updated in the background (group ``home-index``, cancellable, progress
under the box) the first time the box is used for a root; afterwards ``behind()`` (stat
only) is polled in a worker every 30 s and when the window is activated, and "index is N
sessions behind" is shown with an Update button.
"""
from __future__ import annotations

import os
from typing import Optional

from PySide6.QtCore import QEvent, QModelIndex, QObject, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence, QPalette
from PySide6.QtWidgets import (QAbstractItemView, QHBoxLayout, QLabel, QLineEdit, QStackedWidget, QStyle,
                               QStyledItemDelegate, QToolButton, QTreeView, QVBoxLayout, QWidget)

from .home_search_model import (GROUP_ROLE, LABEL_ROLE, MARKS_ROLE, SNIPPET_ROLE, HomeSearchModel, index_status)
from .tour import ESC_CLOSES
from .workers import Cancelled

QUERY_DEBOUNCE_MS = 250
BEHIND_POLL_MS = 30_000
RESULT_LIMIT = 200
PARTIAL_EVERY_S = 0.15           # streamed answers of a scan at most this often
HOME_PLACEHOLDER = "Search all sessions (Ctrl+Shift+F): words, \"phrase\", prefix*, kind:error…"
FOLDER_PLACEHOLDER = "Search the sessions in this file's folder (Ctrl+Shift+F): words, \"phrase\"…"


# --------------------------------------------------------------------------- worker functions
# (one FullTextIndex per call: a connection belongs to the thread that made it)

def _open_index(root: str, db_path: Optional[str]):
    from ..store.fulltext import FullTextIndex
    return FullTextIndex(root, db_path=db_path)


def index_job(job, root: str, db_path: Optional[str]):
    """The build: ``job.progress`` in bytes read of the root's session files (the progress pane: percent,
    time left), ``job.partial`` (sessions done, sessions to do) for the line under the box."""
    with _open_index(root, db_path) as ix:
        walked = ix.walk()
        total_bytes = max(1, sum(st.st_size for _p, st, _x in walked[0]) + sum(st.st_size for _p, st in walked[1]))
        read = [0]

        def progress(done, total, nbytes):
            read[0] = max(read[0], min(int(nbytes), total_bytes))     # (monotonic, within the total)
            try:
                if job.report(read[0], total_bytes):                  # the job's one throttled channel
                    job.stream((int(done), int(total)))
            except Cancelled:
                pass                              # the update stops at its next check of the token
        rep = ix.update(progress=progress, cancel=job, walked=walked)
        return rep, ix.indexed_count(), len(ix.session_problems())


def query_job(job, root: str, db_path: Optional[str], query: str, limit: int):
    """The index where it is current, a streaming scan of the sessions it does not hold yet
    (:func:`app.store.ftslive.live_search`): answers stream in through ``job.partial``."""
    from ..store.ftslive import live_search
    with _open_index(root, db_path) as ix:
        job.check()
        return live_search(ix, query, limit=limit, on_partial=job.partial.emit, cancel=job,
                           every=PARTIAL_EVERY_S, exact=False)


def behind_job(job, root: str, db_path: Optional[str]):
    with _open_index(root, db_path) as ix:
        return ix.behind(), ix.indexed_count(), ix.build_state()


# --------------------------------------------------------------------------- widgets

class HitDelegate(QStyledItemDelegate):
    """Session rows: bold title line.  Hit rows: "seq · kind" label, then the snippet as plain
    text with the matched ranges drawn on a highlight background (no rich text)."""

    def __init__(self, parent=None, match_bg: str = "#ffe08a", match_fg: str = "#000000"):
        super().__init__(parent)
        self.match_bg = QColor(match_bg)
        self.match_fg = QColor(match_fg)

    def sizeHint(self, option, index):
        fm = option.fontMetrics
        return QSize(200, fm.height() + 6)

    def paint(self, p, option, index):
        self.initStyleOption(option, index)
        style = option.widget.style() if option.widget else None
        text_saved = option.text
        option.text = ""
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, p, option.widget)
        option.text = text_saved
        r = QRectF(option.rect.adjusted(4, 0, -4, 0))
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        pal = option.palette
        fg = pal.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        dim = pal.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText)
        p.save()
        p.setClipRect(option.rect)
        fm = option.fontMetrics
        y = r.top() + (r.height() - fm.height()) / 2 + fm.ascent()
        if index.data(GROUP_ROLE) is not None:
            f = option.font
            f.setBold(True)
            p.setFont(f)
            p.setPen(fg)
            p.drawText(QRectF(r), Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
                       p.fontMetrics().elidedText(index.data(LABEL_ROLE) or "", Qt.TextElideMode.ElideRight,
                                                  int(r.width())))
            p.restore()
            return
        label = (index.data(LABEL_ROLE) or "") + "  "
        snippet = index.data(SNIPPET_ROLE) or ""
        marks = index.data(MARKS_ROLE) or []
        x = r.left()
        p.setPen(dim)
        p.drawText(int(x), int(y), label)
        x += fm.horizontalAdvance(label)
        right = r.right()
        snippet, marks = fit_first_mark(snippet, marks, fm.horizontalAdvance, right - x)
        at = 0
        pieces = []
        for a, b in marks:
            if a > at:
                pieces.append((snippet[at:a], False))
            pieces.append((snippet[a:b], True))
            at = b
        pieces.append((snippet[at:], False))
        for text, hit in pieces:
            if not text or x >= right:
                continue
            w = fm.horizontalAdvance(text)
            if x + w > right:
                text = fm.elidedText(text, Qt.TextElideMode.ElideRight, int(right - x))
                w = fm.horizontalAdvance(text)
            if hit:
                p.fillRect(QRectF(x, r.top() + 2, w, r.height() - 4), self.match_bg)
                p.setPen(self.match_fg)
            else:
                p.setPen(fg)
            p.drawText(int(x), int(y), text)
            x += w
        p.restore()


def fit_first_mark(text: str, marks: list, advance, width: float) -> tuple:
    """(text, marks) cut at the start so the first matched word shows within ``width``
    (a leading "…" says text was cut); unchanged when it already fits."""
    if not marks or width <= 0:
        return text, marks
    a, b = marks[0]
    if advance(text[:b]) <= width:
        return text, marks
    s = a
    while s > 0 and advance(text[s - 1:b]) < width * 0.6:
        s -= 1
    cut = s - 1                                    # "…" takes one character
    return "…" + text[s:], [(x - cut, y - cut) for x, y in marks if x >= s]


class HomeSearchPanel(QWidget):
    """The sidebar: search box, status line, and a stack (session list | results)."""

    def __init__(self, sessions: QWidget, model: HomeSearchModel, parent=None):
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 0)
        lay.setSpacing(2)
        row = QHBoxLayout()
        row.setSpacing(4)
        self.edit = QLineEdit()
        self.edit.setObjectName("homeSearch")
        self.edit.setPlaceholderText(HOME_PLACEHOLDER)
        self.edit.setClearButtonEnabled(True)
        row.addWidget(self.edit, 1)
        self.back = QToolButton()
        self.back.setText("Sessions")
        self.back.setToolTip("Back to the session list (Esc)")
        self.back.hide()
        row.addWidget(self.back)
        lay.addLayout(row)
        srow = QHBoxLayout()
        srow.setSpacing(4)
        self.status = QLabel("")
        self.status.setObjectName("homeSearchStatus")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        srow.addWidget(self.status, 1)
        self.update_btn = QToolButton()
        self.update_btn.setText("Update index")
        self.update_btn.hide()
        srow.addWidget(self.update_btn)
        self.cancel_btn = QToolButton()
        self.cancel_btn.setText("Stop")
        self.cancel_btn.setToolTip("Stop indexing (what is indexed so far is kept)")
        self.cancel_btn.hide()
        srow.addWidget(self.cancel_btn)
        lay.addLayout(srow)
        from .progress_pane import TaskStrip
        self.tasks = TaskStrip()                 # the build's bar (percent of bytes, time left) and Cancel
        lay.addWidget(self.tasks)
        self.stack = QStackedWidget()
        self.stack.addWidget(sessions)
        page = QWidget()
        pl = QVBoxLayout(page)
        pl.setContentsMargins(0, 0, 0, 0)
        pl.setSpacing(2)
        self.summary = QLabel("")
        self.summary.setObjectName("homeSearchSummary")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        self.summary.setContentsMargins(4, 0, 4, 0)
        pl.addWidget(self.summary)
        self.results = QTreeView()
        self.results.setObjectName("homeSearchResults")
        self.results.setHeaderHidden(True)
        self.results.setUniformRowHeights(True)
        self.results.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.results.setModel(model)
        self.delegate = HitDelegate(self.results)
        self.results.setItemDelegate(self.delegate)
        pl.addWidget(self.results, 1)
        self.stack.addWidget(page)
        lay.addWidget(self.stack, 1)

    def show_results(self, on: bool) -> None:
        self.stack.setCurrentIndex(1 if on else 0)
        self.back.setVisible(on)
        self.setProperty(ESC_CLOSES, on)          # Esc closes the results first (even with the tour up)


# --------------------------------------------------------------------------- controller

class HomeSearch(QObject):
    """Attach to a MainWindow: puts the panel in the sidebar, the action in the View menu."""
    resultsReady = Signal()          # a query's results are in the model
    partialResults = Signal()        # results streamed in while the scan runs are in the model
    queryFailed = Signal(str)
    indexUpdated = Signal(object)    # UpdateReport
    behindChanged = Signal(int)
    hitOpened = Signal(int)          # seq selected after activating a hit

    def __init__(self, win, db_path: Optional[str] = None):
        super().__init__(win)
        self.win = win
        self.db_path = db_path       # tests: a fixed index file; None: the user cache dir
        self.model = HomeSearchModel(self)
        self.root: Optional[str] = None
        self.file_folder: Optional[str] = None   # one session file opened: the folder searched
        self.indexed: Optional[int] = None
        self.behind: Optional[int] = None
        self.problems = 0
        self.building: Optional[tuple] = None
        self.index_job = None                      # the newest build's Job (tests)
        self.state = "done"                        # the index build's state (a build killed: "interrupted")
        self.ready_root: Optional[str] = None     # root whose index was updated in this run
        self._pending_hit: Optional[tuple] = None  # (session_key, seq, word) waiting for the session
        split = win.split
        at, sizes = split.indexOf(win.sessions), split.sizes()
        self.panel = HomeSearchPanel(win.sessions, self.model)      # takes the session list out of the splitter
        split.insertWidget(max(0, at), self.panel)
        split.setStretchFactor(max(0, at), 0)
        split.setSizes(sizes)
        th = getattr(win, "theme", None)
        if th is not None and getattr(th, "match_bg", None):
            self.panel.delegate.match_bg = QColor(th.match_bg)
            self.panel.delegate.match_fg = QColor(th.match_fg)
        p = self.panel
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(QUERY_DEBOUNCE_MS)
        self._timer.timeout.connect(self.run_query)
        p.edit.textChanged.connect(lambda _t: self._timer.start())
        p.edit.returnPressed.connect(self.run_query)
        p.back.clicked.connect(self.close_results)
        p.update_btn.clicked.connect(self.update_index)
        p.cancel_btn.clicked.connect(self.cancel_index)
        p.tasks.cancelled.connect(lambda _t: self.cancel_index())
        p.results.activated.connect(self.activate)          # Enter, and a click or double click per style
        from PySide6.QtGui import QShortcut
        esc = QShortcut(QKeySequence("Escape"), p)
        esc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        esc.activated.connect(self.close_results)
        self.action = QAction("Search &all sessions…", win, shortcut=QKeySequence("Ctrl+Shift+F"))
        self.action.triggered.connect(self.focus)
        self.action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        win.addAction(self.action)
        vm = getattr(win.history_actions, "view_menu", None)
        if vm is not None:
            vm.addSeparator()
            vm.addAction(self.action)
        self._poll = QTimer(self)
        self._poll.setInterval(BEHIND_POLL_MS)
        self._poll.timeout.connect(self.poll_behind)
        self._poll.start()
        win.storeLoaded.connect(self._on_store)
        win.sessionLoaded.connect(self._on_session_loaded)
        win.seqSelected.connect(self._on_seq_selected)
        win.installEventFilter(self)

    # ------------------------------------------------------------------ roots and the index
    def _on_store(self, path: str) -> None:
        root = path or None
        lst = self.win.sessions.model.listing
        one_file = bool(root and lst is not None and lst.kind == "file")     # (not a SQLite store file)
        if root and one_file:
            root = os.path.dirname(root)         # a single log: search its folder (and say so)
        self.file_folder = root if one_file else None
        self.panel.edit.setPlaceholderText(FOLDER_PLACEHOLDER if one_file else HOME_PLACEHOLDER)
        if root != self.root:
            self.win.jobs.cancel_group("home-index")
            self.win.jobs.cancel_group("home-query")
            self.root = root
            self.ready_root = None
            self.indexed = self.behind = None
            self.state = "done"
            self.building = None
            self.model.clear()
            self.close_results()
            self.win.start.after_first_paint(self.poll_behind)
        self._show_status()             # (the same folder opened as a file, or back: worded anew)

    def _show_status(self) -> None:
        p = self.panel
        text = index_status(self.indexed, self.behind, self.building, self.problems, self.state)
        if self.file_folder:                  # the list shows the file; the search covers its folder
            text = f"Searches {os.path.basename(self.file_folder)}/, this file's folder" + (f": {text}" if text else "")
        p.status.setText(text)
        p.update_btn.setVisible(self.building is None and bool(self.behind))
        p.cancel_btn.setVisible(self.building is not None and not p.tasks.panes)   # (the pane has its own)

    def update_index(self) -> None:
        """Update the index of the current root in the background (progress under the box)."""
        if self.root is None or self.win.jobs.group_busy("home-index"):
            return
        self.building = (0, 0)
        self.win.jobs.cancel_group("home-behind")      # a count from before the update would be stale
        self._show_status()
        job = self.win.jobs.submit(index_job, self.root, self.db_path, name="home-index", group="home-index",
                                   on_done=self._on_indexed, on_error=self._on_index_failed,
                                   on_partial=lambda t: self._on_index_progress(*t))
        self.panel.tasks.track(job, "Indexing the sessions for search")
        self.index_job = job

    def cancel_index(self) -> None:
        if self.win.jobs.cancel_group("home-index"):
            self.building = None
            self._show_status()
            self.poll_behind()

    def _on_index_progress(self, done: int, total: int) -> None:
        self.building = (done, total)
        self._show_status()

    def _on_indexed(self, result) -> None:
        rep, indexed, problems = result
        self.building = None
        self.state = "interrupted" if rep.cancelled else "done"
        self.ready_root = self.root
        self.indexed, self.problems = indexed, problems
        self.behind = 0
        self._show_status()
        if rep.fallback:
            self.panel.status.setText(rep.fallback)
        self.indexUpdated.emit(rep)
        self.behindChanged.emit(0)
        if self.panel.edit.text().strip():
            self.run_query()

    def _on_index_failed(self, msg: str) -> None:
        self.building = None
        self._show_status()
        self.panel.status.setText(f"Cannot index {self.root}: {msg}")

    def poll_behind(self) -> None:
        """How many sessions changed since the index was updated (stat only, in a worker)."""
        if self.root is None or self.building is not None:
            return                    # (a newer poll supersedes one still running: exclusive group)
        self.win.jobs.submit(behind_job, self.root, self.db_path, name="home-behind", group="home-behind",
                             on_done=self._on_behind, on_error=lambda _m: None)

    def _on_behind(self, result) -> None:
        behind, indexed, self.state = result
        self.behind, self.indexed = behind, indexed
        self._show_status()
        self.behindChanged.emit(behind)

    def eventFilter(self, obj, ev):
        if obj is self.win and ev.type() == QEvent.Type.WindowActivate:
            self.poll_behind()
        return False

    # ------------------------------------------------------------------ queries
    def focus(self) -> None:
        e = self.panel.edit
        e.setFocus(Qt.FocusReason.ShortcutFocusReason)
        e.selectAll()
        if self.model.result is not None and e.text().strip():
            self.panel.show_results(True)

    def search(self, text: str) -> None:
        """Type ``text`` in the box and run it now."""
        self.panel.edit.setText(text)
        self.run_query()

    def run_query(self) -> None:
        self._timer.stop()
        q = self.panel.edit.text().strip()
        if not q:
            self.win.jobs.cancel_group("home-query")
            self.close_results()
            return
        if self.root is None:
            self.panel.status.setText("Open a Harness home or folder to search its sessions")
            return
        if self.ready_root != self.root and not self.win.jobs.group_busy("home-index"):
            self.update_index()       # results from what is indexed so far; again when it is done
        self.panel.show_results(True)
        self.panel.summary.setText("searching…")
        self.win.jobs.submit(query_job, self.root, self.db_path, q, RESULT_LIMIT, name="home-query",
                             group="home-query", on_done=lambda res, q=q: self._on_results(q, res),
                             on_partial=lambda res, q=q: self._on_results(q, res, final=False),
                             on_error=self._on_query_failed)

    def _on_results(self, q: str, res, final: bool = True) -> None:
        """A query's answer (``final`` False: one streamed while sessions not indexed are scanned).
        The hit the user selected stays selected as more stream in."""
        view = self.panel.results
        cur = self.model.hit_at(view.currentIndex()) if self.model.result is not None else None
        self.model.set_result(q, res)
        view.expandAll()
        if cur is not None:
            at = self.model.index_of_hit(cur.session_key, cur.seq, cur.kind)
            if at.isValid():
                view.setCurrentIndex(at)
        self.panel.summary.setText(self.model.summary())
        if final:
            self.resultsReady.emit()
        else:
            self.partialResults.emit()

    def _on_query_failed(self, msg: str) -> None:
        self.model.clear()
        self.panel.summary.setText(msg.split(": ", 1)[-1] if msg.startswith("QueryError") else msg)
        self.queryFailed.emit(msg)

    def close_results(self) -> None:
        self.panel.show_results(False)

    # ------------------------------------------------------------------ opening a hit
    def activate(self, index: QModelIndex) -> None:
        hit = self.model.hit_at(index)
        if hit is None and index.isValid():            # a session row: its first hit shown
            first = self.model.index(0, 0, index)
            hit = self.model.hit_at(first) if first.isValid() else None
        if hit is not None:
            self.open_hit(hit)

    def open_hit(self, hit) -> None:
        """Open the hit's session (unless shown) and select the row of its seq, match highlighted."""
        word = hit.text[hit.marks[0][0]:hit.marks[0][1]] if hit.marks else ""
        win = self.win
        cur = win.session
        if cur is not None and cur.key == hit.session_key and win.history.path is not None:
            self._pending_hit = (hit.session_key, hit.seq, word)
            if win.history.pages:          # shown: go there (older pages are loaded as needed)
                win.history_actions.controller.goto_seq(hit.seq)
            return                         # else its tail is on the way: sessionLoaded goes there
        self._pending_hit = (hit.session_key, hit.seq, word)
        # a term left in the in-session search would be applied to the new session's tail (and
        # walk older pages for it) before the jump: the hit's word replaces it once there
        ha = win.history_actions
        ha.find_edit.blockSignals(True)
        ha.find_edit.clear()
        ha.find_edit.blockSignals(False)
        ha.controller.close_pending()
        sp = win.sessions
        info = None
        src = sp.model.index_for_key(hit.session_key)
        if src.isValid():
            info = sp.model.info_at(src)
        if info is None:                 # not in the list (another root): read its header in a worker
            win.jobs.submit(lambda _job, hit=hit: _info_for_hit(hit), name="home-hit", group="home-hit",
                            on_done=lambda i, hit=hit: self._open_info(hit, i))
            return
        if not sp.select_key(hit.session_key):
            win.open_session(info)

    def _open_info(self, hit, info) -> None:
        if info is None:
            self._pending_hit = None
            self.win.statusBar().showMessage(f"Cannot open {hit.path}", 8000)
            return
        self.win.open_session(info)

    def _on_session_loaded(self) -> None:
        ph = self._pending_hit
        s = self.win.session
        if ph is None or s is None or s.key != ph[0]:
            return
        self.win.history_actions.controller.goto_seq(ph[1])

    def _on_seq_selected(self, seq: int) -> None:
        ph = self._pending_hit
        s = self.win.session
        if ph is None or s is None or s.key != ph[0] or seq != ph[1]:
            return
        self._pending_hit = None
        word = ph[2]
        h = self.win.history
        ha = self.win.history_actions
        if word:
            e = ha.find_edit
            e.blockSignals(True)
            e.setText(word)
            e.blockSignals(False)
            ha.find_bar.show()
            r = h.row_for_seq(seq, expose=False)
            row = h.row_at(r) if r is not None else None
            if row is not None and row.clipped and word.casefold() not in row.search_text():
                # the word is in the folded or clipped part of the row: expanded in place
                self.win.view.toggle_expanded(h.index(r, 0), True)
            h.set_find(word)
            if r is not None and r in h.matches:
                h.set_current_match(r)
            else:                       # e.g. line 700 of a long tool output: the row shows its start
                self.win.statusBar().showMessage(
                    f"seq {seq}: the match is in text this row does not show in full (see the Event tab)", 10000)
            ha.controller.update_find_status()
        self.win.view.viewport().update()
        self.hitOpened.emit(seq)

    def shutdown(self) -> None:
        self._poll.stop()
        for g in ("home-index", "home-query", "home-behind"):
            self.win.jobs.cancel_group(g)


def _info_for_hit(hit):
    """A SessionInfo for a hit whose session is not in the list (read its header)."""
    from ..store.discovery import discover
    try:
        lst = discover(hit.store or hit.path)
    except Exception:
        return None
    for s in lst.sessions:
        if s.key == hit.session_key:
            return s
    return None
