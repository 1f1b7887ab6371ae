"""File actions of the main window: the File menu, the welcome page, opening stores and
sessions (listing in a worker), recent stores, file dialogs and drops.

Places its own entries: the File menu (first in the menu bar) and the open buttons of the
toolbar.  Other controllers add File entries through :meth:`FileActions.add_submenu`
(inserted above Quit), never by looking menus up by their text.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

from PySide6.QtCore import QObject
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu

from ..store.discovery import harness_home
from . import recent
from .frame_actions import action
from .session_model import discover_job, refine_titles_job, titles_job
from .status import humane_error
from .welcome import HarnessHome, find_harness_home


# a path naming one session file (not a SQLite store) is read while it is listed
PREOPEN_SUFFIXES = (".jsonl", ".jsonl.zstd", ".jsonl.zst")

# the demo session selected when the demo store opens: dsh's current format, many capabilities
DEMO_START = "sessions/--home-dev-demo-project--/demo-v4-advanced/session.v4.jsonl.zstd"
# …and the row selected in it: the first tool call, after a retried model call and its request
# (what the app is for), not the session's tail of feedback and command rows
DEMO_START_SEQ = 21


def _find_home_job(job, explicit: Optional[str]):
    return find_harness_home(explicit)


class FileActions(QObject):
    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self.home_job = None
        self._select_key_after_open: Optional[str] = None
        self._preopened: Optional[str] = None    # the session file open_store started reading
        self._tail_waiting = False               # its tail page came before the listing
        w = win.welcome
        w.openPathRequested.connect(self.open_store)
        w.openFileRequested.connect(self.open_file_dialog)
        w.openFolderRequested.connect(self.open_folder_dialog)
        w.openDemoRequested.connect(lambda: self.open_demo(remember=False))
        win.sessions.sessionActivated.connect(self.open_session)
        self._build_menu()

    @staticmethod
    def demo_store() -> Path:
        # the window module owns the demo store's place (looked up at call time: replaceable)
        from . import main_window
        return main_window.demo_store()

    @staticmethod
    def demo_available() -> bool:
        from . import main_window
        return main_window.demo_available()

    def _build_menu(self):
        win = self.win
        fm = win.menu("File")
        self.act_open = action("&Open session file…", win, shortcut=QKeySequence.StandardKey.Open,
                               triggered=self.open_file_dialog)
        self.act_open_dir = action("Open &folder (Harness home, project)…", win,
                                   shortcut=QKeySequence("Ctrl+Shift+O"), triggered=self.open_folder_dialog)
        self.recent_menu = fm.addMenu("Open &recent")
        self.act_reload = action("&Reload session", win, shortcut=QKeySequence("F5"), triggered=self.reload)
        self.act_demo = action("Open the &demo store", win, triggered=lambda: self.open_demo())
        self.act_quit = action("&Quit", win, shortcut=QKeySequence.StandardKey.Quit, triggered=win.close)
        fm.insertAction(self.recent_menu.menuAction(), self.act_open)
        fm.insertAction(self.recent_menu.menuAction(), self.act_open_dir)
        fm.addAction(self.act_reload)
        fm.addAction(self.act_demo)
        self.quit_section = fm.addSeparator()
        fm.addAction(self.act_quit)
        self.file_menu = fm
        self.fill_recent()
        win.toolbar.addAction(self.act_open)
        win.toolbar.addAction(self.act_open_dir)

    def add_submenu(self, menu: QMenu) -> None:
        """Another controller's submenu, in its own section above Quit."""
        self.file_menu.insertSeparator(self.file_menu.insertMenu(self.quit_section, menu))

    # ------------------------------------------------------------------ welcome
    def show_welcome(self, message: str = ""):
        """The welcome page: ``message`` says why, then the Harness home found (or how to open a
        file).  The home is looked for in a worker (it reads session headers); ``welcomeReady``
        fires when the page shows what was found."""
        win = self.win
        win.welcome.set_message(message)
        win.welcome.set_demo_available(self.demo_available())
        win.welcome.show_looking()
        win.stack.setCurrentIndex(0)
        self.home_job = win.jobs.submit(_find_home_job, win.welcome.explicit_home, name="harness-home",
                                        group="harness-home", on_done=self._on_home_found,
                                        on_error=self._on_home_failed)

    def _on_home_found(self, home):
        self.home_job = None
        self.win.welcome.show_home(home)
        self.win.welcomeReady.emit()

    def _on_home_failed(self, msg: str):
        self.home_job = None
        self.win.welcome.show_home(HarnessHome(path=Path("~/.dsh"), exists=False, problem=msg))
        self.win.welcomeReady.emit()

    def open_demo(self, remember: bool = True):
        """The demo store, opened on its showcase session (a current-format v4 session)."""
        start = self.demo_store() / DEMO_START
        self.open_store(str(self.demo_store()), remember=remember,
                        select_path=str(start) if start.is_file() else None)
        if start.is_file():
            self._demo_place(str(start))

    def _demo_place(self, path: str) -> None:
        """Once the demo's start session is loaded, its showcase row is selected (once)."""
        win = self.win

        def go():
            win.sessionLoaded.disconnect(go)
            if win.history.path == path:
                win.goto_seq(DEMO_START_SEQ)
        win.sessionLoaded.connect(go)

    def open_default(self):
        if self.demo_available():
            self.open_demo(remember=False)
        else:
            self.show_welcome("The demo store (resources/demo) is not installed.")

    # ------------------------------------------------------------------ stores and sessions
    def open_store(self, path: str, remember: bool = True, select_path: Optional[str] = None):
        win = self.win
        p = os.path.abspath(os.path.expanduser(path))
        start = self.demo_store() / DEMO_START if self.demo_available() else None
        if select_path is None and start is not None and start.is_file() and p == os.path.abspath(self.demo_store()):
            select_path = str(start)             # the demo store named on the command line: its showcase
            self._demo_place(select_path)
        if not os.path.exists(p):
            win.statusBar().showMessage(f"No such file or folder: {path}", 8000)
            if win.store_path is None:
                self.show_welcome(f"No such file or folder:\n{path}")
            win.storeFailed.emit(f"no such file or folder: {path}")
            return
        win.jobs.cancel_group("titles")
        win.start.cancel()
        # a filter typed for the previous store would hide what is being opened
        win.sessions.clear_filter()
        win.store_path = p
        self._select_key_after_open = select_path
        self._preopened = None
        self._tail_waiting = False
        if os.path.isfile(p) and p.endswith(PREOPEN_SUFFIXES):
            # one session file: its tail page is read while it is listed (the listing then adopts it)
            self._preopened = p
            self._prepare_open(switching=win.session is not None and win.history.path is not None)
            win.session = None
            win.update_title()
            win.stack.setCurrentIndex(1)
            win.history.open(p, None)
        if remember:
            recent.add(p)
            self.fill_recent()
            from . import settings
            settings.update(lastDir=p if os.path.isdir(p) else os.path.dirname(p))
        win.statusBar().showMessage(f"Listing {p} …")
        win.jobs.submit(discover_job, p, name="discover", group="discover",
                                          on_done=self._on_store, on_error=self._on_store_failed)

    def _on_store(self, result):
        win = self.win
        listing, tree, elapsed = result
        win.stack.setCurrentIndex(1)
        win.sessions.set_listing(listing, tree)
        n = len(listing.sessions)
        win.statusBar().showMessage(f"{listing.kind}: {n} session{'s' if n != 1 else ''} "
                                    f"listed in {elapsed * 1000:.0f} ms (headers only)", 6000)
        if not (self._select_key_after_open and win.sessions.select_key(self._select_key_after_open)):
            win.sessions.select_first()
        if n == 0:
            win.history.close()
            win.inspector.clear()
            win.show_banner(f"No sessions found under {listing.root}")
        sessions = win.sessions.model.sessions()
        model = win.sessions.model

        def refine(_n, sessions=sessions):        # provisional titles: refined in the background (decision 0016)
            win.jobs.submit(refine_titles_job, sessions, name="refine titles", group="titles",
                            on_partial=model.set_refined, on_done=model.refined)
        win.start.after_first_paint(lambda: win.jobs.submit(titles_job, sessions, name="titles", group="titles",
                                                            on_partial=model.set_titles, on_done=refine))
        win.live_actions.store_listed()
        win.storeLoaded.emit(win.store_path or "")

    def _on_store_failed(self, msg: str):
        win = self.win
        if self._preopened is not None:          # not a session after all: the listing says why
            self._preopened = None
            self._tail_waiting = False
            win.history.close()
        summary, _ = humane_error(msg)
        if win.stack.currentIndex() == 0 or win.session is None:
            win.statusBar().showMessage(f"Cannot open {win.store_path}: {summary}", 10000)
            self.show_welcome(f"Cannot open {win.store_path}:\n{summary}")
        else:
            win.show_error(f"Cannot open {win.store_path}", msg)
        win.storeFailed.emit(msg)

    def tail_before_listing(self) -> bool:
        """The tail page of the session file being read before its listing is in: the window
        takes it (summary, banner, ``sessionLoaded``) once the listing names the session."""
        if self._preopened is None:
            return False
        self._tail_waiting = True
        return True

    @property
    def preopening(self) -> bool:
        """The session file being opened is read before its listing is in (``open_store``)."""
        return self._preopened is not None

    def _prepare_open(self, switching: bool) -> None:
        win = self.win
        win.history_actions.controller.close_pending()
        win.inspector.set_summary("")
        win.inspector.clear()
        win.request_view.clear()
        win.hide_banner()
        win.history.close()
        win.history_actions.new_session(switching)   # no stale find; faces reset unless kept on purpose

    def open_session(self, info):
        win = self.win
        path = info.store or info.path if info.format == "sqlite" else info.path
        sid = info.id if info.format == "sqlite" else None
        pre, self._preopened = self._preopened, None
        h = win.history
        if pre is not None and sid is None and os.path.abspath(path) == pre and h.path == pre and h.open_error is None:
            win.session = info                   # read since open_store: adopted as it is
            win.update_title()
            if self._tail_waiting:               # its tail came first: the window takes it now
                self._tail_waiting = False
                win.on_tail()
            return
        self._tail_waiting = False
        switching = win.session is not None and win.session.key != info.key and win.history.path is not None
        win.session = info
        self._prepare_open(switching)
        win.update_title()
        win.history.open(path, sid)
        win.statusBar().showMessage(f"Opening {info.path} …")

    def reload(self):
        if self.win.session is not None:
            self.open_session(self.win.session)

    # ------------------------------------------------------------------ dialogs, recent, drops
    def open_file_dialog(self):
        path, _ = QFileDialog.getOpenFileName(self.win, "Open a session file", self._dialog_dir(),
                                              "Session logs (*.jsonl *.jsonl.zstd *.zst *.sqlite *.sqlite3 *.db);;All files (*)")
        if path:
            self.open_store(path)

    def open_folder_dialog(self):
        path = QFileDialog.getExistingDirectory(self.win, "Open a Harness home, JSONL root or project folder",
                                                self._dialog_dir())
        if path:
            self.open_store(path)

    def _dialog_dir(self) -> str:
        sp = self.win.store_path
        if sp:
            return os.path.dirname(sp) if os.path.isfile(sp) else sp
        from . import settings
        last = settings.load().get("lastDir")
        if isinstance(last, str) and os.path.isdir(last):
            return last
        h = harness_home()
        return str(h if h.exists() else Path.home())

    def fill_recent(self):
        m = self.recent_menu
        m.clear()
        items = recent.load()
        if not items:
            a = m.addAction("(none yet)")
            a.setEnabled(False)
            return
        for p in items:
            a = m.addAction(p)
            a.triggered.connect(lambda _=False, p=p: self.open_store(p))
        m.addSeparator()
        m.addAction("Clear list", self.clear_recent)

    def clear_recent(self) -> None:
        recent.clear()
        self.fill_recent()

    def accepts_drop(self, e) -> bool:
        return e.mimeData().hasUrls() and any(u.isLocalFile() for u in e.mimeData().urls())

    def drop(self, e) -> bool:
        for u in e.mimeData().urls():
            if u.isLocalFile():
                self.open_store(u.toLocalFile())
                return True
        return False

    def shutdown(self):
        self.win.jobs.cancel_group("titles")
