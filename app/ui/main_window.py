"""Session Lens main window: store list, history, inspectors, search and navigation.

Everything that touches files goes through workers (discover, titles, pages, index,
event_at, request).  The window only wires view models to widgets.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from .plaintext import isolate
from PySide6.QtCore import QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence, QPainter, QPalette, QShortcut
from PySide6.QtWidgets import (QApplication, QFileDialog, QHBoxLayout, QLabel, QLineEdit, QMainWindow,
                               QSplitter, QStackedWidget, QTabWidget, QToolBar,
                               QToolButton, QVBoxLayout, QWidget)

from ..store.discovery import harness_home
from . import recent
from .first_run import AboutDialog, HarnessHome, WelcomeView, find_harness_home, show_about
from .history_model import DEFAULT_PAGE_SIZE, HistoryModel
from .history_view import HistoryView
from .inspector import EventInspector
from .request_view import RequestView, request_seq_for
from .session_list import SessionPanel
from .session_model import discover_job, live_states_job, titles_job
from .theme import Theme, apply_palette
from .workers import Jobs

APP_NAME = "Session Lens"
GOTO_PAGE_BUDGET = 40        # older pages fetched to reach a linked seq before falling back to event_at
SEARCH_PAGE_BUDGET = 40      # older pages fetched per search step
STATES_POLL_MS = 4000        # session list: writer states refreshed this often
LIVE_STATUS = {"live": "● live", "idle": "◌ writer idle", "complete": "finished", "crashed": "✕ writer gone"}


def demo_store() -> Path:
    return Path(__file__).resolve().parents[2] / "resources" / "demo"


def demo_available() -> bool:
    d = demo_store()
    return d.is_dir() and any(d.iterdir())


def _find_home_job(job, explicit: Optional[str]):
    return find_harness_home(explicit)


class LazyProgress(QWidget):
    """A status-bar progress bar that repaints with the next frame.

    QProgressBar.setValue repaints synchronously whenever its percentage changes, and a
    synchronous repaint flushes every dirty region of the window - the history list
    included - from inside the progress slot: 25 extra full paints a second while a log
    indexes.  This one only schedules an update()."""

    def __init__(self, label: str, parent=None):
        super().__init__(parent)
        self.label = label
        self._value = 0
        self._max = 1000
        self.setFixedWidth(180)
        self.setMinimumHeight(self.fontMetrics().height() + 4)

    def value(self) -> int:
        return self._value

    def maximum(self) -> int:
        return self._max

    def setValue(self, v: int) -> None:
        v = max(0, min(self._max, int(v)))
        if v * 100 // self._max != self._value * 100 // self._max:
            self.update()
        self._value = v

    def text(self) -> str:
        return f"{self.label} {self._value * 100 // self._max}%"

    def paintEvent(self, _e):
        p = QPainter(self)
        pal = self.palette()
        r = self.rect().adjusted(0, 1, -1, -2)
        p.setPen(pal.color(QPalette.ColorRole.Mid))
        p.setBrush(pal.color(QPalette.ColorRole.Base))
        p.drawRect(r)
        done = r.adjusted(1, 1, 0, 0)
        done.setWidth(int((r.width() - 1) * self._value / self._max))
        p.fillRect(done, pal.color(QPalette.ColorRole.Highlight))
        p.setPen(pal.color(QPalette.ColorRole.Text))
        p.drawText(r, Qt.AlignmentFlag.AlignCenter, self.text())
        p.end()


class MainWindow(QMainWindow):
    storeLoaded = Signal(str)
    storeFailed = Signal(str)
    sessionLoaded = Signal()          # tail page of the selected session installed
    seqSelected = Signal(int)         # a goto_seq finished (row selected or event shown)
    searchMoved = Signal(object)      # row index of the current match (None: no match)
    welcomeReady = Signal()           # the welcome page shows the Harness home lookup's result

    def __init__(self, page_size: int = DEFAULT_PAGE_SIZE, theme_mode: str = "auto", parent=None,
                 live_options: Optional[dict] = None):
        super().__init__(parent)
        self.setWindowTitle(APP_NAME)
        self.setAcceptDrops(True)
        self.theme_mode = theme_mode
        self.theme = Theme.current(theme_mode)
        app = QApplication.instance()
        if app is not None:
            apply_palette(app, self.theme)
        self.jobs = Jobs(self)
        self.store_path: Optional[str] = None
        self.session = None                  # SessionInfo
        self._titles_job = None
        self._store_job = None
        self._pending_goto: Optional[tuple] = None       # (seq, pages_left)
        self._pending_search: Optional[tuple] = None     # (forward, pages_left)
        self._pending_turn: Optional[tuple] = None
        self._focus_seq: Optional[int] = None
        self._select_key_after_open = None

        self.history = HistoryModel(self.jobs, page_size, self, live_options=live_options)
        self._states_job = None
        self._home_job = None
        self._build_ui()
        self._build_actions()
        self._wire()
        self.resize(1400, 860)
        try:
            QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_scheme)
        except AttributeError:
            pass
        self._update_status()
        from .fork_action import ForkAction
        self.fork_action = ForkAction(self)
        from .audit_action import AuditAction
        self.audit_action = AuditAction(self)

    # ------------------------------------------------------------------ UI
    def _build_ui(self):
        self.stack = QStackedWidget()
        self.setCentralWidget(self.stack)
        # welcome: the first-run view (Harness home, or how to open a file), filled by show_welcome
        self.welcome = WelcomeView(lazy=True, demo=False)
        self.welcome.openPathRequested.connect(self.open_store)
        self.welcome.openFileRequested.connect(self.open_file_dialog)
        self.welcome.openFolderRequested.connect(self.open_folder_dialog)
        self.welcome.openDemoRequested.connect(lambda: self.open_store(str(demo_store()), remember=False))
        self.stack.addWidget(self.welcome)
        # main
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.sessions = SessionPanel()
        self.split.addWidget(self.sessions)
        col = QWidget()
        cl = QVBoxLayout(col)
        cl.setContentsMargins(0, 0, 0, 0)
        cl.setSpacing(0)
        self.banner = QLabel("")
        self.banner.setObjectName("banner")
        self.banner.setTextFormat(Qt.TextFormat.PlainText)
        self.banner.setWordWrap(True)
        self.banner.setContentsMargins(8, 4, 8, 4)
        self.banner.hide()
        cl.addWidget(self.banner)
        self.search_bar = QWidget()
        sl = QHBoxLayout(self.search_bar)
        sl.setContentsMargins(6, 4, 6, 4)
        self.search_edit = QLineEdit()
        self.search_edit.setObjectName("search")
        self.search_edit.setPlaceholderText("Find in session (Enter: older match, Shift+Enter: newer)")
        self.search_edit.setClearButtonEnabled(True)
        sl.addWidget(self.search_edit, 1)
        self.search_prev = QToolButton()
        self.search_prev.setText("↑ Older")
        self.search_next = QToolButton()
        self.search_next.setText("↓ Newer")
        self.search_count = QLabel("")
        self.search_count.setTextFormat(Qt.TextFormat.PlainText)
        close = QToolButton()
        close.setText("✕")
        close.clicked.connect(self.close_search)
        for x in (self.search_prev, self.search_next, self.search_count, close):
            sl.addWidget(x)
        self.search_bar.hide()
        cl.addWidget(self.search_bar)
        self.view = HistoryView(self.theme)
        self.view.setModel(self.history)
        cl.addWidget(self.view, 1)
        self.split.addWidget(col)
        self.tabs = QTabWidget()
        self.inspector = EventInspector(self.theme)
        self.request_view = RequestView(self.jobs)
        self.tabs.addTab(self.inspector, "Event")
        self.tabs.addTab(self.request_view, "Request")
        self.split.addWidget(self.tabs)
        self.split.setStretchFactor(0, 0)
        self.split.setStretchFactor(1, 1)
        self.split.setStretchFactor(2, 0)
        self.split.setSizes([340, 660, 400])
        self.stack.addWidget(self.split)
        # status bar
        sb = self.statusBar()
        self.status_counts = QLabel("")
        self.status_counts.setTextFormat(Qt.TextFormat.PlainText)
        self.status_face = QLabel("")
        self.status_face.setTextFormat(Qt.TextFormat.PlainText)
        self.status_face.setObjectName("faceLabel")
        self.progress = LazyProgress("indexing")
        sp = self.progress.sizePolicy()
        sp.setRetainSizeWhenHidden(True)      # showing it must not re-lay out (and repaint) the window
        self.progress.setSizePolicy(sp)
        self.progress.hide()
        sb.addPermanentWidget(self.status_counts)
        sb.addPermanentWidget(self.progress)
        sb.addPermanentWidget(self.status_face)

    def _build_actions(self):
        m = self.menuBar()
        fm = m.addMenu("&File")
        self.act_open = QAction("&Open session file…", self, shortcut=QKeySequence.StandardKey.Open,
                                triggered=self.open_file_dialog)
        self.act_open_dir = QAction("Open &folder (Harness home, project)…", self,
                                    shortcut=QKeySequence("Ctrl+Shift+O"), triggered=self.open_folder_dialog)
        self.recent_menu = fm.addMenu("Open &recent")
        self.act_reload = QAction("&Reload session", self, shortcut=QKeySequence("F5"), triggered=self.reload)
        self.act_demo = QAction("Open the &demo store", self, triggered=lambda: self.open_store(str(demo_store())))
        act_quit = QAction("&Quit", self, shortcut=QKeySequence.StandardKey.Quit, triggered=self.close)
        fm.insertAction(self.recent_menu.menuAction(), self.act_open)
        fm.insertAction(self.recent_menu.menuAction(), self.act_open_dir)
        fm.addAction(self.act_reload)
        fm.addAction(self.act_demo)
        fm.addSeparator()
        fm.addAction(act_quit)
        self._fill_recent()
        vm = m.addMenu("&View")
        self.act_physical = QAction("&Physical tail (stored rows)", self, checkable=True,
                                    shortcut=QKeySequence("Ctrl+Shift+P"), toggled=self.set_physical)
        self.act_physical.setToolTip("Off: logical face (closure rows added, torn tail removed). "
                                     "On: exactly the stored rows, bad rows included.")
        self.act_attempts = QAction("Show &hidden attempts", self, checkable=True,
                                    shortcut=QKeySequence("Ctrl+Shift+A"), toggled=self.set_show_attempts)
        self.act_attempts.setToolTip("Failed / retried model calls, in place, with their failure reason")
        self.act_find = QAction("&Find…", self, shortcut=QKeySequence.StandardKey.Find, triggered=self.open_search)
        self.act_find_older = QAction("Find older match", self, shortcut=QKeySequence("F3"),
                                      triggered=lambda: self.search_step(forward=False))
        self.act_find_newer = QAction("Find newer match", self, shortcut=QKeySequence("Shift+F3"),
                                      triggered=lambda: self.search_step(forward=True))
        self.act_prev_turn = QAction("Previous turn", self, shortcut=QKeySequence("Ctrl+Up"),
                                     triggered=lambda: self.goto_turn(-1))
        self.act_next_turn = QAction("Next turn", self, shortcut=QKeySequence("Ctrl+Down"),
                                     triggered=lambda: self.goto_turn(+1))
        self.act_copy = QAction("&Copy message", self, triggered=lambda: self.view.copy_current("text"))
        for a in (self.act_physical, self.act_attempts, None, self.act_find, self.act_find_older,
                  self.act_find_newer, None, self.act_prev_turn, self.act_next_turn, self.act_copy):
            vm.addSeparator() if a is None else vm.addAction(a)
        self.addAction(self.act_find_older)
        self.addAction(self.act_find_newer)
        # [ and ] navigate turns while the history list has focus (not while typing)
        for key, d in (("[", -1), ("]", +1)):
            sc = QShortcut(QKeySequence(key), self.view)
            sc.setContext(Qt.ShortcutContext.WidgetShortcut)
            sc.activated.connect(lambda d=d: self.goto_turn(d))
        esc = QShortcut(QKeySequence("Escape"), self.search_bar)
        esc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        esc.activated.connect(self.close_search)
        tb = QToolBar("Main")
        tb.setObjectName("mainToolbar")
        tb.setMovable(False)
        tb.addAction(self.act_open)
        tb.addAction(self.act_open_dir)
        tb.addSeparator()
        tb.addAction(self.act_physical)
        tb.addAction(self.act_attempts)
        tb.addSeparator()
        tb.addAction(self.act_find)
        tb.addAction(self.act_prev_turn)
        tb.addAction(self.act_next_turn)
        self.addToolBar(tb)
        self.toolbar = tb
        self._build_help_menu(m)
        self._label_switches()

    def _build_help_menu(self, m):
        hm = m.addMenu("&Help")
        self.act_about = QAction(f"&About {APP_NAME}", self, triggered=self.show_about)
        self.act_about.setMenuRole(QAction.MenuRole.AboutRole)
        hm.addAction(self.act_about)
        self.help_menu = hm

    def show_about(self) -> AboutDialog:
        """Help > About: versions of Session Lens, Python, PySide6/Qt, msgspec, qasync (one dialog at a time)."""
        for dlg in self.findChildren(AboutDialog):
            if dlg.isVisible():
                dlg.raise_()
                dlg.activateWindow()
                return dlg
        return show_about(self)

    def _label_switches(self):
        self.act_physical.setText("Tail: physical" if self.act_physical.isChecked() else "Tail: logical")
        self.act_attempts.setText("Hidden attempts: shown" if self.act_attempts.isChecked() else "Hidden attempts: off")

    def _wire(self):
        h = self.history
        h.tailInstalled.connect(self._on_tail)
        h.liveStateChanged.connect(self._on_live_state)
        h.liveAppended.connect(lambda _n: self._update_banner())
        self._states_timer = QTimer(self)
        self._states_timer.setInterval(STATES_POLL_MS)
        self._states_timer.timeout.connect(self._poll_states)
        h.olderInstalled.connect(self._on_older)
        h.openFailed.connect(self._on_open_failed)
        h.pageFailed.connect(lambda msg: self.statusBar().showMessage(f"Could not read an older page: {msg}", 8000))
        h.statsChanged.connect(self._update_status)
        h.indexProgress.connect(self._on_index_progress)
        h.indexReady.connect(self._on_index_ready)
        h.eventFetched.connect(self._on_event_fetched)
        h.loadingChanged.connect(lambda _b: self._update_status())
        self.view.selectionModel().currentChanged.connect(self._on_current_row)
        self.view.copyRequested.connect(lambda what: self.statusBar().showMessage(f"Copied {what} to the clipboard", 3000))
        self.inspector.seqLinkActivated.connect(self.goto_seq)
        self.sessions.sessionActivated.connect(self.open_session)
        self.tabs.currentChanged.connect(lambda _i: self._update_request())
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(150)
        self._search_timer.timeout.connect(self._apply_search)
        self.search_edit.textChanged.connect(lambda _t: self._search_timer.start())
        self.search_edit.returnPressed.connect(self._search_return)
        self.search_prev.clicked.connect(lambda: self.search_step(forward=False))
        self.search_next.clicked.connect(lambda: self.search_step(forward=True))

    # ------------------------------------------------------------------ theme
    def _on_scheme(self, *_):
        if self.theme_mode == "auto":
            self.set_theme_mode("auto")

    def set_theme_mode(self, mode: str):
        self.theme_mode = mode
        self.theme = Theme.current(mode)
        app = QApplication.instance()
        if app is not None:
            apply_palette(app, self.theme)
        self.view.set_theme(self.theme)
        self.inspector.set_theme(self.theme)
        self._style_banner()

    def _style_banner(self, fatal: bool = False):
        th = self.theme
        bg, fg = (th.bad_bg, th.bad_fg) if fatal else (th.synth_bg, th.synth_fg)
        self.banner.setStyleSheet(f"QLabel#banner {{ background: {bg}; color: {fg}; }}")

    # ------------------------------------------------------------------ stores
    def show_welcome(self, message: str = ""):
        """The welcome page: ``message`` says why, then the Harness home found (or how to open a
        file).  The home is looked for in a worker (it reads session headers); ``welcomeReady``
        fires when the page shows what was found."""
        self.welcome.set_message(message)
        self.welcome.set_demo_available(demo_available())
        self.welcome.show_looking()
        self.stack.setCurrentIndex(0)
        if self._home_job is not None:
            self._home_job.cancel()
        self._home_job = self.jobs.submit(_find_home_job, self.welcome._explicit, name="harness-home",
                                          on_done=self._on_home_found, on_error=self._on_home_failed)

    def _on_home_found(self, home):
        self._home_job = None
        self.welcome.show_home(home)
        self.welcomeReady.emit()

    def _on_home_failed(self, msg: str):
        self._home_job = None
        self.welcome.show_home(HarnessHome(path=Path("~/.dsh"), exists=False, problem=msg))
        self.welcomeReady.emit()

    def open_default(self):
        if demo_available():
            self.open_store(str(demo_store()), remember=False)
        else:
            self.show_welcome("The demo store (resources/demo) is not installed.")

    def open_store(self, path: str, remember: bool = True, select_path: Optional[str] = None):
        p = os.path.abspath(os.path.expanduser(path))
        if not os.path.exists(p):
            self.statusBar().showMessage(f"No such file or folder: {path}", 8000)
            if self.store_path is None:
                self.show_welcome(f"No such file or folder:\n{path}")
            self.storeFailed.emit(f"no such file or folder: {path}")
            return
        if self._store_job is not None:
            self._store_job.cancel()
        if self._titles_job is not None:
            self._titles_job.cancel()
        self.store_path = p
        self._select_key_after_open = select_path
        if remember:
            recent.add(p)
            self._fill_recent()
        self.statusBar().showMessage(f"Listing {p} …")
        self._store_job = self.jobs.submit(discover_job, p, name="discover",
                                           on_done=self._on_store, on_error=self._on_store_failed)

    def _on_store(self, result):
        listing, tree, elapsed = result
        self._store_job = None
        self.stack.setCurrentIndex(1)
        self.sessions.set_listing(listing, tree)
        n = len(listing.sessions)
        self.statusBar().showMessage(f"{listing.kind}: {n} session{'s' if n != 1 else ''} "
                                     f"listed in {elapsed * 1000:.0f} ms (headers only)", 6000)
        # a single session file needs no list; any store shows it
        self.sessions.setVisible(listing.kind != "file")
        if not (self._select_key_after_open and self.sessions.select_key(self._select_key_after_open)):
            self.sessions.select_first()
        if n == 0:
            self.history.close()
            self.inspector.clear()
            self.banner.setText(f"No sessions found under {listing.root}")
            self._style_banner()
            self.banner.show()
        self._titles_job = self.jobs.submit(titles_job, self.sessions.model.sessions(), name="titles",
                                            on_partial=self.sessions.model.set_titles)
        self._poll_states()
        self._states_timer.start()
        self.storeLoaded.emit(self.store_path or "")

    def _on_store_failed(self, msg: str):
        self._store_job = None
        self.statusBar().showMessage(f"Cannot open {self.store_path}: {msg}", 10000)
        if self.stack.currentIndex() == 0 or self.session is None:
            self.show_welcome(f"Cannot open {self.store_path}:\n{msg}")
        self.storeFailed.emit(msg)

    def open_session(self, info):
        self.session = info
        self.close_pending()
        self.inspector.clear()
        self.request_view.clear()
        self.banner.hide()
        path = info.store or info.path if info.format == "sqlite" else info.path
        sid = info.id if info.format == "sqlite" else None
        title = self.sessions.model.titles.get(info.key) or info.title or info.id
        self.setWindowTitle(f"{isolate(title)} — {APP_NAME}")
        self.history.open(path, sid)
        self.statusBar().showMessage(f"Opening {info.path} …")

    def reload(self):
        if self.session is not None:
            self.open_session(self.session)

    def close_pending(self):
        self._pending_goto = None
        self._pending_search = None
        self._pending_turn = None

    # ------------------------------------------------------------------ dialogs, recent, drops
    def open_file_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self, "Open a session file", self._dialog_dir(),
                                              "Session logs (*.jsonl *.jsonl.zstd *.zst *.sqlite *.sqlite3 *.db);;All files (*)")
        if path:
            self.open_store(path)

    def open_folder_dialog(self):
        path = QFileDialog.getExistingDirectory(self, "Open a Harness home, JSONL root or project folder",
                                                self._dialog_dir())
        if path:
            self.open_store(path)

    def _dialog_dir(self) -> str:
        if self.store_path:
            return os.path.dirname(self.store_path) if os.path.isfile(self.store_path) else self.store_path
        h = harness_home()
        return str(h if h.exists() else Path.home())

    def _fill_recent(self):
        self.recent_menu.clear()
        items = recent.load()
        if not items:
            a = self.recent_menu.addAction("(none yet)")
            a.setEnabled(False)
            return
        for p in items:
            a = self.recent_menu.addAction(p)
            a.triggered.connect(lambda _=False, p=p: self.open_store(p))
        self.recent_menu.addSeparator()
        self.recent_menu.addAction("Clear list", lambda: (recent.clear(), self._fill_recent()))

    def dragEnterEvent(self, e):
        if e.mimeData().hasUrls() and any(u.isLocalFile() for u in e.mimeData().urls()):
            e.acceptProposedAction()
        else:
            e.ignore()

    def dragMoveEvent(self, e):
        self.dragEnterEvent(e)

    def dropEvent(self, e):
        for u in e.mimeData().urls():
            if u.isLocalFile():
                self.open_store(u.toLocalFile())
                e.acceptProposedAction()
                return
        e.ignore()

    # ------------------------------------------------------------------ faces
    def set_physical(self, on: bool):
        if self.act_physical.isChecked() != on:
            self.act_physical.setChecked(on)
            return
        self.history.set_physical(on)
        self._label_switches()
        self._refresh_inspector()

    def set_show_attempts(self, on: bool):
        if self.act_attempts.isChecked() != on:
            self.act_attempts.setChecked(on)
            return
        self.history.set_show_attempts(on)
        self._label_switches()
        self._refresh_inspector()

    def _refresh_inspector(self):
        row = self.view.current_row()
        if row is not None:
            self.inspector.show_row(row, self._focus_seq)

    # ------------------------------------------------------------------ history events
    def _on_tail(self):
        self._update_banner()
        s = self.history.stats()
        self.statusBar().showMessage(f"Tail page: {s['rows']} rows in {self.history.tail_elapsed * 1000:.0f} ms", 5000)
        if self.search_edit.text():
            self._apply_search()
        self.sessionLoaded.emit()

    def _update_banner(self):
        r = self.history.reader
        probs = [p for p in (r.problems if r else [])]
        st = self.history.pages[-1].page if self.history.pages else None
        lines = []
        fatal = r.fatal if r else None
        if fatal:
            lines.append(f"This log is not valid: {fatal}. Its stored rows are shown as read.")
        if st is not None and st.tail:
            if st.closure and not self.history.physical:
                if self.history.live_state in ("live", "idle"):
                    lines.append(f"The writer is still in this turn: the {len(st.closure)} closure row(s) at the end "
                                 "(marked) are what a repair would add if it stopped now.")
                else:
                    lines.append(f"The last turn is open: {len(st.closure)} closure row(s) are synthesized in memory "
                                 "(marked). Switch to the physical tail to see only stored rows.")
            if st.dropped:
                lines.append(f"{len(st.dropped)} stored row(s) at the tail are torn or unreadable; a repair would "
                             "truncate them (shown in the physical tail).")
        others = [str(p) for p in probs if not p.fatal][:3]
        if others:
            lines.append("Problems: " + "; ".join(others))
        if lines:
            self.banner.setText("\n".join(lines))
            self._style_banner(bool(fatal))
            self.banner.show()
        else:
            self.banner.hide()

    def _on_open_failed(self, msg: str):
        self.banner.setText(f"Cannot open this session: {msg}")
        self._style_banner(True)
        self.banner.show()
        self.statusBar().showMessage(f"Cannot open: {msg}", 10000)
        self.sessionLoaded.emit()

    def _on_older(self, n: int):
        if self._pending_goto is not None:
            seq, left = self._pending_goto
            self._pending_goto = None
            self._goto(seq, left - 1)
        if self._pending_search is not None:
            fwd, left = self._pending_search
            self._pending_search = None
            self._search_step(fwd, left - 1)
        if self._pending_turn is not None:
            d, left = self._pending_turn
            self._pending_turn = None
            self._goto_turn(d, left - 1, from_top=True)

    def _on_index_progress(self, done: int, total: int):
        self.progress.show()
        self.progress.setValue(int(1000 * done / max(1, total)))

    def _on_index_ready(self):
        self.progress.hide()
        self._update_status()

    def _update_status(self):
        s = self.history.stats()
        has_session = self.history.path is not None
        for a in (self.act_find, self.act_find_older, self.act_find_newer, self.act_prev_turn, self.act_next_turn,
                  self.act_copy, self.act_reload):
            a.setEnabled(has_session)
        if not has_session:
            self.status_counts.setText("")
            self.status_face.setText("")
            return
        parts = [f"{s['rows']} rows", f"{s['events']} events loaded", f"{s['pages']} page{'s' if s['pages'] != 1 else ''}"]
        if s["hasMore"]:
            parts.append(f"older from seq {s['baseSeq']}")
        else:
            parts.append("whole log loaded")
        if s["indexedEvents"] is not None:
            parts.append(f"{s['indexedEvents']:,} events in log")
        if s["hiddenAttempts"]:
            parts.append(f"{s['hiddenAttempts']} hidden attempt{'s' if s['hiddenAttempts'] != 1 else ''}"
                         + (" (shown)" if s["showAttempts"] else ""))
        if s["matches"]:
            parts.append(f"{s['matches']} matches")
        if s["loading"]:
            parts.append("loading…")
        self.status_counts.setText(" · ".join(parts))
        face = s["face"]
        extra = ""
        if face == "logical" and s["closure"]:
            extra = f" (+{s['closure']} synthesized)"
        if face == "physical" and s["dropped"]:
            extra = f" ({s['dropped']} bad/torn tail rows)"
        live = LIVE_STATUS.get(s["live"] or "", "")
        self.status_face.setText(f"face: {face}{extra} · format: {s['format'] or '?'}" + (f" · {live}" if live else ""))

    # ------------------------------------------------------------------ writer states
    def _on_live_state(self, state: str):
        if self.session is not None and state in LIVE_STATUS:
            self.sessions.model.set_states({self.session.key: state})
        if state.startswith("error"):
            self.statusBar().showMessage(f"Live follow stopped: {state[6:].strip()}", 8000)
        self._update_status()
        self._update_banner()

    def _poll_states(self):
        """Which listed sessions a writer is touching (stat + tail of recent files, in a worker)."""
        if self._states_job is not None or not self.sessions.model.session_count:
            return
        prev = dict(self.sessions.model.states)

        def done(states):
            self._states_job = None
            if self.session is not None and self.history.live_state in LIVE_STATUS:
                states.pop(self.session.key, None)      # the follower knows better
            self.sessions.model.set_states(states)

        def failed(_msg):
            self._states_job = None
        self._states_job = self.jobs.submit(live_states_job, self.sessions.model.sessions(), prev,
                                            name="live-states", on_done=done, on_error=failed)

    # ------------------------------------------------------------------ selection / inspector
    def _on_current_row(self, cur: QModelIndex, prev: QModelIndex):
        row = self.view.current_row()
        focus = self._focus_seq if (row is not None and self._focus_seq is not None and
                                    row.first_seq is not None and row.first_seq <= self._focus_seq <= max(row.seq or 0, row.last_seq or 0)) else None
        self._focus_seq = focus
        self.inspector.show_row(row, focus)
        self._update_request()

    def _update_request(self):
        if self.tabs.currentWidget() is not self.request_view:
            return
        row = self.view.current_row()
        seq = request_seq_for(row)
        if seq is None or self.history.path is None:
            self.request_view.clear("Select an assistant, attempt or step row: the request is the one sent "
                                    "at that row's dispatch boundary.")
            return
        self.request_view.compute(self.history.path, self.history.session_id, seq)

    def show_request_tab(self):
        self.tabs.setCurrentWidget(self.request_view)

    def select_row(self, r: int, focus_seq: Optional[int] = None):
        self._focus_seq = focus_seq
        ix = self.history.index(r, 0)
        self.view.setCurrentIndex(ix)
        self.view.scrollTo(ix, HistoryView.ScrollHint.PositionAtCenter)
        if focus_seq is not None:
            self.inspector.show_row(self.history.row_at(r), focus_seq)

    def goto_seq(self, seq: int):
        """Select the row showing ``seq`` (fetch older pages as needed, else event_at)."""
        self._goto(int(seq), GOTO_PAGE_BUDGET)

    def _goto(self, seq: int, budget: int):
        h = self.history
        r = h.row_for_seq(seq)
        if r is not None:
            self.select_row(r, seq)
            self.seqSelected.emit(seq)
            return
        ev = h.event_for_seq(seq)
        if ev is not None:
            a = h.hidden_attempt_of(seq)
            note = "in a hidden failed attempt — turn on “Hidden attempts” to see its row" if a else "no row in this face"
            self.inspector.show_row(None, seq, ev, note=note)
            self.statusBar().showMessage(f"seq {seq}: {note}", 6000)
            self.seqSelected.emit(seq)
            return
        base = h.base_seq
        if base is not None and seq < base and h.has_more and budget > 0:
            self._pending_goto = (seq, budget)
            self.statusBar().showMessage(f"Loading older pages to reach seq {seq} …")
            if not h.request_older() and not h.loading:
                self._pending_goto = None
                h.fetch_event(seq)
            return
        self.statusBar().showMessage(f"seq {seq} is not loaded: reading it by index …", 4000)
        h.fetch_event(seq)

    def _on_event_fetched(self, seq: int, ev):
        if ev is None:
            self.statusBar().showMessage(f"seq {seq} is not in this log", 6000)
        else:
            self.inspector.show_row(None, seq, ev, note="not loaded in the list; read by index")
        self.seqSelected.emit(seq)

    # ------------------------------------------------------------------ turns
    def _current_row_index(self) -> Optional[int]:
        ix = self.view.currentIndex()
        if ix.isValid():
            return ix.row()
        top = self.view.indexAt(QPoint(8, 4))
        return top.row() if top.isValid() else None

    def goto_turn(self, direction: int):
        self._goto_turn(direction, GOTO_PAGE_BUDGET)

    def _goto_turn(self, direction: int, budget: int, from_top: bool = False):
        h = self.history
        turns = h.turn_rows()
        cur = self._current_row_index()
        if cur is None:
            cur = h.rowCount()
        if direction < 0:
            cands = [t for t in turns if t < cur]
            if cands:
                self.select_row(cands[-1])
                self.view.scrollTo(h.index(cands[-1], 0), HistoryView.ScrollHint.PositionAtTop)
                return
            r = h.turn_beyond(False)
            if r is not None:
                self.select_row(r)
                self.view.scrollTo(h.index(r, 0), HistoryView.ScrollHint.PositionAtTop)
                return
            if h.pages and h.pages[0].page.has_more and budget > 0:
                self._pending_turn = (direction, budget)
                h.request_older()
                return
            if h.rowCount():
                self.select_row(0)
        else:
            cands = [t for t in turns if t > cur]
            r = cands[0] if cands else h.turn_beyond(True)
            if r is not None:
                self.select_row(r)
                self.view.scrollTo(h.index(r, 0), HistoryView.ScrollHint.PositionAtTop)
                return
            h.show_tail()
            if h.rowCount():
                self.select_row(h.rowCount() - 1)

    # ------------------------------------------------------------------ search
    def open_search(self):
        self.search_bar.show()
        self.search_edit.setFocus()
        self.search_edit.selectAll()

    def close_search(self):
        self.search_bar.hide()
        self.search_edit.clear()
        self.history.set_search("")
        self.view.setFocus()

    def _apply_search(self):
        self._search_timer.stop()
        term = self.search_edit.text()
        self.history.set_search(term)
        self.view.viewport().update()
        if not term:
            self.search_count.setText("")
            return
        self._update_search_count()
        # jump to the newest match at or above the current position
        m = self.history.matches
        if m:
            cur = self._current_row_index()
            start = (cur + 1) if cur is not None else self.history.rowCount()
            older = [i for i in m if i < start]
            self._set_match(older[-1] if older else m[-1])
        else:
            # nothing in the rows on screen: look through the other loaded rows, then older pages
            self._search_step(False, SEARCH_PAGE_BUDGET)

    def _update_search_count(self):
        m = self.history.matches
        cur = self.history.current_match_row
        pos = f"{m.index(cur) + 1}/" if cur in m else ""
        more = " (older pages not searched yet)" if self.history.has_more else ""
        self.search_count.setText(f"{pos}{len(m)} in loaded rows{more}" if m else f"no match in loaded rows{more}")

    def _set_match(self, r: Optional[int]):
        self.history.set_current_match(r)
        if r is not None:
            self.select_row(r)
        self._update_search_count()
        self.searchMoved.emit(r)

    def _search_return(self):
        mods = QApplication.keyboardModifiers()
        self.search_step(forward=bool(mods & Qt.KeyboardModifier.ShiftModifier))

    def search_step(self, forward: bool):
        if self._search_timer.isActive() or self.history.search_term != self.search_edit.text().casefold():
            self._apply_search()
            return
        self._search_step(forward, SEARCH_PAGE_BUDGET)

    def _search_step(self, forward: bool, budget: int):
        h = self.history
        if not h.search_term:
            return
        start = h.current_match_row if h.current_match_row is not None else self._current_row_index()
        if start is None:
            start = h.rowCount()
        r = h.find(start, forward)
        if r is not None:
            self._set_match(r)
            return
        if not forward and h.pages and h.pages[0].page.has_more and budget > 0:
            self._pending_search = (forward, budget)
            self.search_count.setText("searching older pages…")
            if not h.request_older():
                self._pending_search = None if not h.loading else self._pending_search
            return
        self.statusBar().showMessage("No more matches" + (" (newest reached)" if forward else " (start of log reached)"), 4000)
        self._update_search_count()
        self.searchMoved.emit(h.current_match_row)

    # ------------------------------------------------------------------ teardown
    def closeEvent(self, e):
        self.shutdown()
        super().closeEvent(e)

    def shutdown(self):
        self._states_timer.stop()
        self.history.stop_live()
        if self._titles_job is not None:
            self._titles_job.cancel()
        self.jobs.shutdown(10000)
        self.request_view.clear()
