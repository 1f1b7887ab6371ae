"""History actions of the main window: the View menu (faces, hidden attempts, find, turns,
copy), their toolbar buttons, the search bar, and the ``[``/``]`` keys on the list.

Places its own entries (View menu after File, toolbar section, search bar above the list);
the navigation itself is :class:`app.ui.history.controller.HistoryController`.
"""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtGui import QAction, QKeySequence, QPainter, QPalette, QShortcut
from PySide6.QtWidgets import QApplication, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget

from ..log.query.textview import fold_case
from .frame_actions import action
from .history.controller import HistoryController

SEARCH_DEBOUNCE_MS = 150
# the controller's messages while a go-to reads (HistoryController._goto, goto_start): shown until it ends
GOTO_PROGRESS = ("Reading the page around seq ", "Loading older pages to reach seq ", "Reading the start of the log")


class CountLabel(QLabel):
    """The find bar's count.  Its text ("983 matches so far, 1% of the log searched…") never
    widens the bar (minimum width 1 px): the splitter would widen the history column, and every
    row would be re-wrapped and laid out again at the new width (100-500 ms on the 1 GB bench).
    When the bar is too narrow the text is drawn elided ("…"); ``text()`` and the tooltip keep
    all of it."""

    def __init__(self):
        super().__init__("")
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setMinimumWidth(1)

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def paintEvent(self, e):
        r = self.contentsRect()
        full = self.text()
        shown = self.fontMetrics().elidedText(full, Qt.TextElideMode.ElideRight, r.width())
        if shown == full:
            super().paintEvent(e)
            return
        p = QPainter(self)
        p.setPen(self.palette().color(QPalette.ColorRole.WindowText))
        p.drawText(r, int(self.alignment()), shown)
        p.end()


class HistoryActions(QObject):
    def __init__(self, win, column):
        super().__init__(win)
        self.win = win
        self.controller = HistoryController(win.history, win.view, win.inspector,
                                            lambda text, ms=0: win.statusBar().showMessage(text, ms), self)
        self._build_find_bar(column)
        self._build_menu()
        self._find_timer = QTimer(self)
        self._find_timer.setSingleShot(True)
        self._find_timer.setInterval(SEARCH_DEBOUNCE_MS)
        self._find_timer.timeout.connect(self.apply_find)
        self.find_edit.textChanged.connect(lambda _t: self._find_timer.start())
        self.find_edit.returnPressed.connect(self._find_return)
        self.search_prev.clicked.connect(lambda: self.search_step(forward=False))
        self.search_next.clicked.connect(lambda: self.search_step(forward=True))
        self.controller.searchStatus.connect(self.search_count.setText)
        self.controller.seqSelected.connect(self._end_progress_message)
        win.inspector.seqLinkActivated.connect(self.controller.goto_seq)

    def _end_progress_message(self, _seq: int) -> None:
        """A go-to finished: its "Reading the page around seq N …" (shown until then) goes."""
        sb = self.win.statusBar()
        if sb.currentMessage().startswith(GOTO_PROGRESS):
            sb.clearMessage()

    def _build_find_bar(self, column):
        self.find_bar = QWidget()
        sl = QHBoxLayout(self.find_bar)
        sl.setContentsMargins(6, 4, 6, 4)
        self.find_edit = QLineEdit()
        self.find_edit.setObjectName("search")
        self.find_edit.setPlaceholderText("Find in session (Enter: older match, Shift+Enter: newer)")
        self.find_edit.setClearButtonEnabled(True)
        # room for the query when the count is long (a fixed minimum: it never varies with the text)
        self.find_edit.setMinimumWidth(self.find_edit.fontMetrics().horizontalAdvance("M" * 10))
        sl.addWidget(self.find_edit, 1)
        self.search_prev = QToolButton()
        self.search_prev.setText("↑ Older")
        self.search_next = QToolButton()
        self.search_next.setText("↓ Newer")
        self.search_count = CountLabel()
        close = QToolButton()
        close.setText("✕")
        close.clicked.connect(self.close_search)
        for x in (self.search_prev, self.search_next, self.search_count, close):
            sl.addWidget(x)
        self.find_bar.hide()
        column.insertWidget(column.indexOf(self.win.view), self.find_bar)

    def _build_menu(self):
        win = self.win
        vm = win.menu("View")
        self.act_physical = action("&Physical tail", win, checkable=True,
                                   shortcut=QKeySequence("Ctrl+Shift+P"), toggled=self.set_physical)
        self.act_physical.setToolTip("Off: logical face (closure rows added, torn tail removed). "
                                     "On: exactly the stored rows, bad rows included.")
        self.act_attempts = action("&Hidden attempts", win, checkable=True,
                                   shortcut=QKeySequence("Ctrl+Shift+A"), toggled=self.set_show_attempts)
        self.act_attempts.setToolTip("Failed / retried model calls, in place, with their failure reason")
        self.act_find = action("&Find…", win, shortcut=QKeySequence.StandardKey.Find, triggered=self.open_search)
        self.act_find_older = action("Find older match", win, shortcut=QKeySequence("F3"),
                                     triggered=lambda: self.search_step(forward=False))
        self.act_find_newer = action("Find newer match", win, shortcut=QKeySequence("Shift+F3"),
                                     triggered=lambda: self.search_step(forward=True))
        self.act_prev_turn = action("Previous turn", win, shortcut=QKeySequence("Ctrl+Up"),
                                    triggered=lambda: self.controller.goto_turn(-1))
        self.act_next_turn = action("Next turn", win, shortcut=QKeySequence("Ctrl+Down"),
                                    triggered=lambda: self.controller.goto_turn(+1))
        self.act_copy = action("&Copy message", win, triggered=lambda: win.view.copy_current("text"))
        self.act_keep_faces = QAction("&Keep face choices for the next session", win, checkable=True)
        self.act_keep_faces.setToolTip("Off: each session opens on the logical tail with hidden attempts off. "
                                       "On: the physical tail / hidden attempts switches stay as set (said in the "
                                       "status bar when a session opens).")
        # find sits in Edit, turns in Go (frame_actions.py); the View menu keeps the faces
        for a in (self.act_physical, self.act_attempts, self.act_keep_faces):
            vm.addSeparator() if a is None else vm.addAction(a)
        self.view_menu = vm
        win.addAction(self.act_find_older)
        win.addAction(self.act_find_newer)
        # [ and ] navigate turns while the history list has focus (not while typing)
        for key, d in (("[", -1), ("]", +1)):
            sc = QShortcut(QKeySequence(key), win.view)
            sc.setContext(Qt.ShortcutContext.WidgetShortcut)
            sc.activated.connect(lambda d=d: self.controller.goto_turn(d))
        esc = QShortcut(QKeySequence("Escape"), self.find_bar)
        esc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        esc.activated.connect(self.close_search)
        from .tour import ESC_CLOSES
        self.find_bar.setProperty(ESC_CLOSES, True)      # Esc in it closes it first (even with the tour up)
        tb = win.toolbar
        tb.addSeparator()
        tb.addAction(self.act_physical)
        tb.addAction(self.act_attempts)
        tb.addSeparator()
        tb.addAction(self.act_find)
        tb.addAction(self.act_prev_turn)
        tb.addAction(self.act_next_turn)
        self._label_switches()

    def set_enabled(self, has_session: bool) -> None:
        for a in (self.act_find, self.act_find_older, self.act_find_newer, self.act_prev_turn, self.act_next_turn,
                  self.act_copy, self.act_physical, self.act_attempts):
            a.setEnabled(has_session)
        request = getattr(getattr(self.win, "frame_actions", None), "act_request", None)
        if request is not None:                   # (no session: no request to show)
            request.setEnabled(has_session)

    # ------------------------------------------------------------------ faces
    def _label_switches(self):
        """Toggles show their state as a checked button; the text stays the same."""

    def new_session(self, switching: bool = True) -> None:
        """A session is opening (the model is closed): the find bar starts empty; when it
        replaces another session the faces go back to logical / attempts off unless the user
        chose to keep them (the first session opens on the faces set before it, e.g. --physical)."""
        self._find_timer.stop()
        self.find_edit.blockSignals(True)
        self.find_edit.clear()
        self.find_edit.blockSignals(False)
        self.search_count.setText("")
        self.find_bar.hide()
        fa = getattr(self.win, "find_actions", None)
        if fa is not None:
            fa.bar_closed(keep_hits=False)     # a results dock the search opened goes with the bar
        kept = [name for act, name in ((self.act_physical, "physical tail"), (self.act_attempts, "hidden attempts shown"))
                if act.isChecked()]
        if self.act_keep_faces.isChecked() or not switching:
            if kept and switching:
                self._kept_note = "Kept from the previous session: " + ", ".join(kept) + \
                                  " (View › Keep face choices for the next session)"
            return
        self._kept_note = ""
        for act in (self.act_physical, self.act_attempts):
            act.blockSignals(True)
            act.setChecked(False)
            act.blockSignals(False)
        self.win.history.reset_face(False, False)

    def set_physical(self, on: bool):
        if self.act_physical.isChecked() != on:
            self.act_physical.setChecked(on)
            return
        self.win.history.set_physical(on)
        self._label_switches()
        self.controller.refresh_inspector()

    def set_show_attempts(self, on: bool):
        if self.act_attempts.isChecked() != on:
            self.act_attempts.setChecked(on)
            return
        self.win.history.set_show_attempts(on)
        self._label_switches()
        self.controller.refresh_inspector()

    # ------------------------------------------------------------------ search
    _kept_note = ""

    def on_tail(self):
        """A session's tail page is in: a search term still typed applies to it."""
        if self._kept_note:
            self.win.statusBar().showMessage(self._kept_note, 8000)
            self._kept_note = ""
        if self.find_edit.text():
            self.apply_find()

    def open_search(self):
        self.find_bar.show()
        self.find_edit.setFocus()
        self.find_edit.selectAll()

    def close_search(self):
        self.find_bar.hide()
        self.find_edit.clear()
        self._find_timer.stop()
        fa = getattr(self.win, "find_actions", None)
        if fa is not None:
            fa.bar_closed()             # its results dock closes with it, unless the user keeps it
        self.win.history.set_find("")
        self.win.view.setFocus()

    def apply_find(self):
        self._find_timer.stop()
        fa = getattr(self.win, "find_actions", None)
        if fa is not None:                        # whole-log search (find_actions.py)
            fa.run(self.find_edit.text())
        else:
            self.controller.apply_find(self.find_edit.text())

    def _find_return(self):
        mods = QApplication.keyboardModifiers()
        self.search_step(forward=bool(mods & Qt.KeyboardModifier.ShiftModifier))

    def search_step(self, forward: bool):
        fa = getattr(self.win, "find_actions", None)
        if fa is not None:
            if self._find_timer.isActive() or (self.find_edit.text() and fa.query is None):
                self.apply_find()
                return
            fa.step(forward)
            return
        if self._find_timer.isActive() or self.win.history.find_term != fold_case(self.find_edit.text()):
            self.apply_find()
            return
        self.controller.search_step(forward)

    def goto_seq(self, seq: int) -> None:
        self.controller.goto_seq(seq)

    def select_row(self, r: int, focus_seq: Optional[int] = None) -> None:
        self.controller.select_row(r, focus_seq)
