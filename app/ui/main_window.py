"""Session Lens main window: the frame (layout, status bar, banner, theme, Help menu) and
its named controllers, each placing its own menu entries:

  FileActions      (file_actions.py)     File menu, welcome page, stores, sessions, recent, drops
  HistoryActions   (history_actions.py)  View menu, search bar, faces; HistoryController navigates
  AuditAction      (audit_action.py)     Tools menu, "Trace this row", File > Export
  ForkAction       (fork_action.py)      "Fork from here" (toolbar, row menu)
  LiveActions      (live_actions.py)     follower state, writer states of the listed sessions
  GenerationActions (generation_actions.py) the open session's generations: info line, File > Open generation
  HomeSearch       (home_search.py)      search box above the session list: every session of the home

Everything that touches files goes through workers (discover, titles, pages, index,
event_at, request).  The window only wires view models to widgets.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QPainter, QPalette
from PySide6.QtWidgets import (QApplication, QHBoxLayout, QLabel, QMainWindow, QMenu, QMessageBox, QSplitter,
                               QStackedWidget, QTabWidget, QToolBar, QToolButton, QVBoxLayout, QWidget)

from .about import APP_NAME, AboutDialog
from .help_menu import build_help_menu, raise_or_show_about, show_diagnostics_of, track_index_build
from .file_actions import FileActions
from .history.model import DEFAULT_PAGE_SIZE, HistoryModel
from .history.view import HistoryView
from .history_actions import HistoryActions
from .inspector import EventInspector
from .live_actions import LIVE_STATUS, LiveActions
from .request_view import RequestView, request_seq_for
from .session_list import SessionPanel
from .status import (StatusBar, StatusLabel, banner_lines, count_text, empty_state_text, ensure_menu, error_details_box,
                     humane_error, status_texts)
from .theme import Theme, apply_palette
from .welcome import WelcomeView
from .window_start import WindowStart
from .workers import Jobs


def demo_store() -> Path:
    from ..store.demo import shipped_demo          # (a checkout or bundle: resources/demo; a wheel: its copy)
    return shipped_demo()


def demo_available() -> bool:
    d = demo_store()
    return d.is_dir() and any(d.iterdir())


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
    findMoved = Signal(object)      # row index of the current match (None: no match)
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
        self.history = HistoryModel(self.jobs, page_size, self, live_options=live_options)
        self._build_ui()
        self.start = WindowStart(self)          # first paint: deferred jobs, the splitter's sizes
        # the controllers, in menu bar order (File, View, Tools, Help)
        self.file_actions = FileActions(self)
        self.history_actions = HistoryActions(self, self.history_column)
        self.live_actions = LiveActions(self)
        from .find_actions import FindActions
        from .go_actions import GoActions
        self.find_actions = FindActions(self)
        self.go_actions = GoActions(self)
        build_help_menu(self)                  # About, Diagnostics (app/ui/help_menu.py)
        self._wire()
        self.resize(1400, 860)
        try:
            QGuiApplication.styleHints().colorSchemeChanged.connect(self._on_scheme)
        except AttributeError:
            pass
        self.update_status()
        from .fork_action import ForkAction
        self.fork_action = ForkAction(self)
        from .audit_action import AuditAction
        self.audit_action = AuditAction(self)
        from .generation_actions import GenerationActions
        self.generation_actions = GenerationActions(self)
        from .frame_actions import FrameActions
        self.frame_actions = FrameActions(self)
        self.sessions.model.dataChanged.connect(lambda *_: self.update_title())
        self.frame_actions.restore_geometry()
        from .truth_views import TruthActions
        self.truth_actions = TruthActions(self)
        from .home_search import HomeSearch
        self.home_search = HomeSearch(self)
        from .timeline_dock import TimelineAction
        self.timeline_action = TimelineAction(self)          # View > Timeline (issue 31)
        from .replay import ReplayActions
        self.replay_actions = ReplayActions(self)          # the time scrubber (issue 30)

    # ------------------------------------------------------------------ UI
    def _build_ui(self):
        self.stack = QStackedWidget()
        self.setCentralWidget(self.stack)
        # welcome: the first-run view (Harness home, or how to open a file), filled by show_welcome
        self.welcome = WelcomeView(lazy=True, demo=False)
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
        # "Details…" beside the banner (shown with an error only): the error's full text on demand
        self.banner_row = QWidget()
        self.banner_row.setObjectName("bannerRow")
        self.banner_row.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        bl = QHBoxLayout(self.banner_row)
        bl.setContentsMargins(0, 0, 0, 0)
        bl.setSpacing(0)
        bl.addWidget(self.banner, 1)
        self.banner_details = QToolButton()
        self.banner_details.setText("Details…")
        self.banner_details.setObjectName("bannerDetails")
        self.banner_details.clicked.connect(self.show_error_details)
        self.banner_details.hide()
        bl.addWidget(self.banner_details, 0, Qt.AlignmentFlag.AlignVCenter)
        self._error_details = ""
        cl.addWidget(self.banner_row)
        self.view = HistoryView(self.theme)
        self.view.setModel(self.history)
        from .scroll_pause import ScrollPause
        self.scroll_pause = ScrollPause(self.view, self)     # the outline pass yields the cores while scrolling
        cl.addWidget(self.view, 1)
        from .progress_pane import TaskStrip
        self.tasks = TaskStrip()                              # progress and Cancel of long jobs (progress_pane.py)
        cl.addWidget(self.tasks)
        self.index_tasks = TaskStrip()                        # the seq index build of a huge log (its own strip)
        cl.addWidget(self.index_tasks)
        # the empty state: a session with a header and no events yet
        self.empty_state = QLabel("")
        self.empty_state.setObjectName("emptyState")
        self.empty_state.setTextFormat(Qt.TextFormat.PlainText)
        self.empty_state.setWordWrap(True)
        self.empty_state.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_state.setContentsMargins(40, 40, 40, 40)
        self.empty_state.hide()
        cl.addWidget(self.empty_state, 1)
        self.history_column = cl
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
        self.stack.addWidget(self.split)
        # status bar: temporary messages elide in their own label, left of the counters
        self.setStatusBar(StatusBar(self))
        sb = self.statusBar()
        self.status_counts = StatusLabel("")     # (elided, never widening the window)
        self.status_counts.setTextFormat(Qt.TextFormat.PlainText)
        self.status_face = StatusLabel("")
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
        # the toolbar: each controller adds its section
        tb = QToolBar("Main")
        tb.setObjectName("mainToolbar")
        tb.setMovable(False)
        self.addToolBar(tb)
        self.toolbar = tb

    def menu(self, name: str) -> QMenu:
        """The menu bar's ``name`` menu (File, Edit, View, Go, Tools, Help), created on first
        use in that order: every controller adds its entries through here."""
        return ensure_menu(self.menuBar(), name)

    def show_diagnostics(self):
        return show_diagnostics_of(self)      # Help > Diagnostics: the doctor report, with a Copy button

    def show_about(self) -> AboutDialog:
        """Help > About (one dialog at a time)."""
        return raise_or_show_about(self)

    def _wire(self):
        h = self.history
        h.tailInstalled.connect(self.on_tail)
        h.openFailed.connect(self._on_open_failed)
        h.pageFailed.connect(lambda msg: self.statusBar().showMessage(f"Could not read an older page: {msg}", 8000))
        h.statsChanged.connect(self.update_status)
        h.indexProgress.connect(self._on_index_progress)
        h.indexJob.connect(lambda job: track_index_build(self, job))   # a long seq index build: pane + Cancel
        h.indexReady.connect(self._on_index_ready)
        h.loadingChanged.connect(lambda _b: self.update_status())
        h.faceChanged.connect(self.update_banner)          # the banner speaks of the face on screen
        h.liveAppended.connect(lambda _n: self.update_empty_state())
        h.modelReset.connect(self.update_empty_state)
        ctl = self.history_actions.controller
        ctl.rowSelected.connect(self.update_request)
        ctl.seqSelected.connect(self.seqSelected)
        ctl.findMoved.connect(self.findMoved)
        self.view.copyRequested.connect(lambda what: self.statusBar().showMessage(f"Copied {what} to the clipboard", 3000))
        self.tabs.currentChanged.connect(lambda _i: self.update_request())

    # ------------------------------------------------------------------ the controllers' entry points
    # (kept on the window: tests, benchmarks, the CLI and the other controllers call them here)
    def open_store(self, path: str, remember: bool = True, select_path: Optional[str] = None):
        self.file_actions.open_store(path, remember, select_path)

    def open_default(self):
        self.file_actions.open_default()

    def show_welcome(self, message: str = ""):
        self.file_actions.show_welcome(message)

    def open_file_dialog(self):
        self.file_actions.open_file_dialog()

    def open_session(self, info):
        self.file_actions.open_session(info)

    def reload(self):
        self.file_actions.reload()

    @property
    def recent_menu(self):
        return self.file_actions.recent_menu

    @property
    def _home_job(self):
        return self.file_actions.home_job

    def set_physical(self, on: bool):
        self.history_actions.set_physical(on)

    def set_show_attempts(self, on: bool):
        self.history_actions.set_show_attempts(on)

    def goto_seq(self, seq: int):
        self.history_actions.controller.goto_seq(seq)

    def goto_turn(self, direction: int):
        self.history_actions.controller.goto_turn(direction)

    def select_row(self, r: int, focus_seq: Optional[int] = None):
        self.history_actions.controller.select_row(r, focus_seq)

    def open_search(self):
        self.history_actions.open_search()

    def close_search(self):
        self.history_actions.close_search()

    def search_step(self, forward: bool):
        self.history_actions.search_step(forward)

    find_bar = property(lambda self: self.history_actions.find_bar)
    find_edit = property(lambda self: self.history_actions.find_edit)
    act_physical = property(lambda self: self.history_actions.act_physical)
    act_attempts = property(lambda self: self.history_actions.act_attempts)

    # ------------------------------------------------------------------ drops
    def dragEnterEvent(self, e):
        if self.file_actions.accepts_drop(e):
            e.acceptProposedAction()
        else:
            e.ignore()

    def dragMoveEvent(self, e):
        self.dragEnterEvent(e)

    def dropEvent(self, e):
        if self.file_actions.drop(e):
            e.acceptProposedAction()
        else:
            e.ignore()

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
        self.banner_row.setStyleSheet(f"QWidget#bannerRow, QLabel#banner {{ background: {bg}; color: {fg}; }}")

    def show_banner(self, text: str, fatal: bool = False, details: str = ""):
        self.banner.setText(text)
        self._style_banner(fatal)
        self._error_details = details
        self.banner_details.setVisible(bool(details))
        self.banner.show()

    def hide_banner(self):
        self._error_details = ""
        self.banner_details.hide()
        self.banner.hide()

    def show_error_details(self) -> Optional[QMessageBox]:
        """The error's full text (as the worker reported it), plain text, copyable."""
        return error_details_box(self, self.banner.text(), self._error_details) if self._error_details else None

    def show_error(self, what: str, msg: str, fatal: bool = True) -> str:
        """An error in words (banner, with the worker's text behind "Details…"); returns the summary."""
        summary, details = humane_error(msg)
        self.show_banner(f"{what}: {summary}", fatal, details)
        self.statusBar().showMessage(f"{what}: {summary}", 10000)
        return summary

    # ------------------------------------------------------------------ history events
    def on_tail(self):
        if self.file_actions.tail_before_listing():
            return                     # (the rows are painted meanwhile: the view has them)
        self.view.after_paint(self.frame_actions.update_summary)     # (it reads every loaded event)
        self.update_banner()
        self.update_empty_state()
        s = self.history.stats()
        self.statusBar().showMessage(f"Tail page: {count_text(s['rows'], 'row')} in "
                                     f"{self.history.tail_elapsed * 1000:.0f} ms", 5000)
        self.history_actions.on_tail()
        self.sessionLoaded.emit()

    def update_empty_state(self):
        """A session that opened with no rows at all (a header-only log) explains itself."""
        h = self.history
        empty = (h.path is not None and h.reader is not None and not h.loading and h.rowCount() == 0
                 and not h.has_more and not h.open_error)
        if empty:
            self.empty_state.setText(empty_state_text(h.reader))
        self.empty_state.setVisible(empty)
        self.view.setVisible(not empty)

    def update_banner(self):
        """What the user should know about the log, for the face on screen (called on open,
        on every face switch and as live rows arrive)."""
        lines, fatal = banner_lines(self.history, getattr(self, "go_actions", None))
        if lines:
            self.show_banner("\n".join(lines), bool(fatal))
        elif self.history.open_error is None:
            self.hide_banner()

    def _on_open_failed(self, msg: str):
        if self.file_actions.preopening:
            return                 # read before its listing: the listing says what it is (then reopens)
        self.show_error("Cannot open this session", msg)
        self.update_empty_state()
        self.sessionLoaded.emit()

    def _on_index_progress(self, done: int, total: int):
        self.progress.show()
        self.progress.setValue(int(1000 * done / max(1, total)))

    def _on_index_ready(self):
        self.progress.hide()
        self.frame_actions.update_summary()
        self.update_status()

    def update_status(self):
        """Short permanent counters (details in their tooltip); one count of stored events,
        the closure rows are counted apart in the face label."""
        s = self.history.stats()
        has_session = self.history.path is not None
        self.history_actions.set_enabled(has_session)
        if getattr(self, "go_actions", None) is not None:
            self.go_actions.set_enabled(has_session)
        self.file_actions.act_reload.setEnabled(has_session)
        if not has_session:
            self.status_counts.setText("")
            self.status_counts.setToolTip("")
            self.status_face.setText("")
            return
        counts, tip, face = status_texts(s)
        self.status_counts.setText(counts)
        self.status_counts.setToolTip(tip)
        live = LIVE_STATUS.get(s["live"] or "", "")
        self.status_face.setText(face + (f" · {live}" if live else ""))

    # ------------------------------------------------------------------ request inspector
    def update_request(self):
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

    # ------------------------------------------------------------------ teardown
    def update_title(self):
        """Session title · store · Session Lens (a template id like {{sessionId}} is never shown)."""
        from .session_model import window_title
        self.setWindowTitle(window_title(self.session, self.sessions.model.titles, self.store_path, APP_NAME))

    def closeEvent(self, e):
        self.frame_actions.save_geometry()
        self.shutdown()
        super().closeEvent(e)

    def shutdown(self):
        self.start.cancel()
        self.home_search.shutdown()
        self.live_actions.shutdown()
        self.file_actions.shutdown()
        self.scroll_pause.resume()           # (a stopped child would keep its worker waiting)
        self.jobs.shutdown(10000)
        self.request_view.clear()
