"""First run: the welcome view, the About dialog and the crash report handler.

For the main window:

    from .first_run import WelcomeView, show_about, install_crash_handler

    h = install_crash_handler(app)          # once, after the QApplication exists (app.ui.app.run_gui does)
    h.attach_loop(loop)                     # and the asyncio (qasync) loop's unhandled task exceptions
    welcome = WelcomeView(lazy=True)        # the main window's welcome page; connect its signals:
    welcome.openPathRequested.connect(win.open_store)      # the Harness home
    welcome.openFileRequested.connect(win.open_file_dialog)
    welcome.set_message("why the page is shown"); welcome.refresh()   # MainWindow.show_welcome
    show_about(parent)                      # Help > About Session Lens

``find_harness_home()`` is the Qt-free part of the welcome view (``$DSH_HOME``, else ``~/.dsh``,
through ``app.store.discovery.harness_home``).  ``install_crash_handler`` replaces
``sys.excepthook`` and ``threading.excepthook`` (and, given ``loop=``, the asyncio loop's
exception handler): an unexpected exception writes a log file under
``platformdirs.user_log_dir("session-lens")`` (``$SESSION_LENS_LOG_DIR`` overrides it) and shows a
non-modal crash dialog naming that file, instead of the app vanishing.
"""
from __future__ import annotations

import datetime as _dt
import os
import platform
import sys
import threading
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import (QApplication, QDialog, QDialogButtonBox, QHBoxLayout, QLabel, QPlainTextEdit,
                               QPushButton, QVBoxLayout, QWidget)

APP_NAME = "Session Lens"
APP_SLUG = "session-lens"
MAX_LISTED = 5


# --------------------------------------------------------------------------- versions

def _dist_version(dist: str, module: Optional[str] = None) -> str:
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:
        pass
    if module:
        try:
            import importlib
            mod = importlib.import_module(module)
            v = getattr(mod, "__version__", None)
            if v:
                return str(v)
        except Exception:
            pass
    return "not installed"


def versions() -> dict:
    """Name -> version of Session Lens and what it runs on (for About and crash logs)."""
    from PySide6 import QtCore
    import PySide6
    from .. import __version__
    out = {
        APP_NAME: __version__,
        "Python": platform.python_version(),
        "PySide6": getattr(PySide6, "__version__", "?"),
        "Qt": QtCore.qVersion(),
        "msgspec": _dist_version("msgspec", "msgspec"),
        "qasync": _dist_version("qasync", "qasync"),
        "platformdirs": _dist_version("platformdirs", "platformdirs"),
    }
    if sys.version_info < (3, 14):
        out["backports.zstd"] = _dist_version("backports.zstd")
    libc = platform.libc_ver()
    out["System"] = " ".join(x for x in (platform.system(), platform.release(), platform.machine(),
                                         "-".join(libc) if libc[0] else "") if x)
    app = QGuiApplication.instance()
    if app is not None:
        out["Qt platform"] = QGuiApplication.platformName()
    out["Build"] = "packaged (PyInstaller)" if getattr(sys, "frozen", False) else "from source"
    return out


def versions_text() -> str:
    v = versions()
    width = max(len(k) for k in v)
    return "\n".join(f"{k:<{width}}  {val}" for k, val in v.items())


# --------------------------------------------------------------------------- welcome

@dataclass
class HarnessHome:
    path: Path
    exists: bool
    sessions: int = 0
    projects: int = 0
    recent: list = field(default_factory=list)      # [(id, title or None, project or None, path)] newest first
    problem: Optional[str] = None

    @property
    def found(self) -> bool:
        return self.exists and self.sessions > 0


def find_harness_home(explicit: Optional[str] = None, limit: int = MAX_LISTED) -> HarnessHome:
    """The user's Harness home (``$DSH_HOME``, else ``~/.dsh``) and what it holds (header reads only)."""
    from ..store.discovery import discover, harness_home
    from ..store.titles import session_title
    try:
        home = harness_home(explicit)
    except RuntimeError as e:          # Path.home() without HOME / passwd entry
        return HarnessHome(path=Path("~/.dsh"), exists=False, problem=str(e))
    if not home.is_dir():
        return HarnessHome(path=home, exists=False)
    try:
        listing = discover(str(home))
    except Exception as e:              # unreadable: say so, do not fail the welcome view
        return HarnessHome(path=home, exists=True, problem=f"cannot list it: {e}")
    sessions = sorted(listing.sessions, key=lambda s: -(s.mtime or 0))
    recent = []
    for s in sessions[:limit]:
        try:
            title = session_title(s)
        except Exception:
            title = None
        recent.append((s.id, title, s.project, s.path))
    return HarnessHome(path=home, exists=True, sessions=len(sessions),
                       projects=len({s.project for s in sessions if s.project}), recent=recent,
                       problem="; ".join(listing.problems[:3]) or None)


HOW_TO_OPEN = ("To open a session log, use File > Open (Ctrl+O) on a session.jsonl or session.jsonl.zstd file, "
               "a project folder or a SQLite store, drop it on this window, or run: session-lens PATH. "
               "Set DSH_HOME if your Harness home is somewhere else.")


def welcome_text(h: HarnessHome) -> str:
    """The plain text of the welcome view (tested without widgets)."""
    if h.found:
        lines = [f"Harness home: {h.path}",
                 f"{h.sessions} session{'s' if h.sessions != 1 else ''}"
                 + (f" in {h.projects} project{'s' if h.projects != 1 else ''}" if h.projects else "") + "."]
        if h.recent:
            lines.append("")
            lines.append("Most recent:")
            for sid, title, project, _path in h.recent:
                lines.append(f"  {sid}" + (f"  {title}" if title else "") + (f"  ({project})" if project else ""))
        if h.problem:
            lines += ["", f"Note: {h.problem}"]
        return "\n".join(lines)
    if h.exists:
        why = f" ({h.problem})" if h.problem else ""
        head = f"No Harness home with sessions found: {h.path} exists but holds no session logs{why}."
    else:
        head = f"No Harness home found (looked for {h.path}{'; ' + h.problem if h.problem else ''})."
    return head + "\n\n" + HOW_TO_OPEN


def _centred_text(name: str) -> QLabel:
    """A wrapped, centred, selectable plain-text label (never rich text: paths are untrusted)."""
    lb = QLabel("")
    lb.setObjectName(name)
    lb.setTextFormat(Qt.TextFormat.PlainText)
    lb.setWordWrap(True)
    lb.setAlignment(Qt.AlignmentFlag.AlignCenter)
    lb.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return lb


class WelcomeView(QWidget):
    """The first-run page: the Harness home and its latest sessions, or how to open a file.

    ``notice`` (``set_message``) sits above that text: why the page is shown (the demo store is
    missing, a path could not be opened).  ``lazy=True`` defers the Harness home lookup to the
    first ``refresh()`` (the main window refreshes when it shows the page)."""

    openPathRequested = Signal(str)     # a Harness home or the demo store
    openFileRequested = Signal()        # the window's File > Open dialog
    openFolderRequested = Signal()      # the window's File > Open folder dialog
    openDemoRequested = Signal()

    def __init__(self, parent: Optional[QWidget] = None, explicit_home: Optional[str] = None, demo: bool = True,
                 lazy: bool = False):
        super().__init__(parent)
        self.setObjectName("firstRunWelcome")
        self._explicit = explicit_home
        self.home: Optional[HarnessHome] = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(32, 32, 32, 32)
        lay.addStretch(1)
        self.title = QLabel(f"Welcome to {APP_NAME}")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        f = self.title.font()
        f.setPointSizeF(f.pointSizeF() * 1.6)
        f.setBold(True)
        self.title.setFont(f)
        self.title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        lay.addWidget(self.title)
        self.notice = _centred_text("firstRunNotice")
        nf = self.notice.font()
        nf.setBold(True)
        self.notice.setFont(nf)
        self.notice.hide()
        lay.addWidget(self.notice)
        self.body = _centred_text("firstRunBody")
        lay.addWidget(self.body)
        row = QHBoxLayout()
        row.addStretch(1)
        self.btn_home = QPushButton("Open Harness home")
        self.btn_home.clicked.connect(lambda: self.home and self.openPathRequested.emit(str(self.home.path)))
        self.btn_file = QPushButton("Open session file…")
        self.btn_file.clicked.connect(self.openFileRequested.emit)
        self.btn_folder = QPushButton("Open folder…")
        self.btn_folder.clicked.connect(self.openFolderRequested.emit)
        self.btn_demo = QPushButton("Open the demo store")
        self.btn_demo.clicked.connect(self.openDemoRequested.emit)
        self.btn_demo.setVisible(demo)
        for b in (self.btn_home, self.btn_file, self.btn_folder, self.btn_demo):
            row.addWidget(b)
        row.addStretch(1)
        lay.addLayout(row)
        lay.addStretch(2)
        self.btn_home.setVisible(False)
        if not lazy:
            self.refresh()

    def refresh(self) -> HarnessHome:
        """Look for the Harness home now (reads its session headers: the main window runs
        ``find_harness_home`` in a worker and calls :meth:`show_home` instead)."""
        return self.show_home(find_harness_home(self._explicit))

    def show_home(self, home: HarnessHome) -> HarnessHome:
        self.home = home
        self.body.setText(welcome_text(home))
        self.btn_home.setVisible(home.found)
        self.btn_home.setDefault(home.found)
        self.btn_file.setDefault(not home.found)
        return home

    def show_looking(self) -> None:
        """While the Harness home is being looked for."""
        self.body.setText("Looking for your Harness home …\n\n" + HOW_TO_OPEN)
        self.btn_home.setVisible(False)

    def set_message(self, message: str = "") -> None:
        """Why the page is shown (empty: no notice)."""
        self.notice.setText(message)
        self.notice.setVisible(bool(message))

    def set_demo_available(self, available: bool) -> None:
        self.btn_demo.setVisible(available)

    def text(self) -> str:
        """The notice (when set) and the Harness home / how-to-open text, as shown."""
        return "\n\n".join(t for t in (self.notice.text(), self.body.text()) if t)


# --------------------------------------------------------------------------- about

class AboutDialog(QDialog):
    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setWindowTitle(f"About {APP_NAME}")
        lay = QVBoxLayout(self)
        title = QLabel(f"{APP_NAME} {versions()[APP_NAME]}")
        f = title.font()
        f.setPointSizeF(f.pointSizeF() * 1.4)
        f.setBold(True)
        title.setFont(f)
        lay.addWidget(title)
        lay.addWidget(QLabel("A desktop history browser for AI-agent session logs (dsh stores)."))
        self.details = QPlainTextEdit(versions_text())
        self.details.setReadOnly(True)
        self.details.setObjectName("aboutVersions")
        fm = self.details.fontMetrics()
        self.details.setMinimumSize(fm.horizontalAdvance("x" * 60), fm.lineSpacing() * 12)
        from PySide6.QtGui import QFontDatabase
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        lay.addWidget(self.details)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = bb.addButton("Copy versions", QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.details.toPlainText()))
        bb.rejected.connect(self.reject)
        bb.accepted.connect(self.accept)
        lay.addWidget(bb)


def show_about(parent: Optional[QWidget] = None) -> AboutDialog:
    dlg = AboutDialog(parent)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    dlg.open()
    return dlg


# --------------------------------------------------------------------------- crash reports

def crash_log_dir() -> Path:
    env = os.environ.get("SESSION_LENS_LOG_DIR")
    if env:
        return Path(env)
    import platformdirs
    return Path(platformdirs.user_log_dir(APP_SLUG, appauthor=False))


def format_crash(exc_type, exc, tb, where: str = "main thread") -> str:
    now = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    try:
        vers = versions_text()
    except Exception as e:               # never let the report itself fail
        vers = f"(versions unavailable: {e})"
    body = "".join(traceback.format_exception(exc_type, exc, tb))
    return (f"{APP_NAME} crash report\n"
            f"time: {now}\nwhere: {where}\npid: {os.getpid()}\nargv: {sys.argv!r}\n\n"
            f"{vers}\n\n{body}")


def write_crash_log(exc_type, exc, tb, where: str = "main thread") -> tuple[Optional[Path], str]:
    """Write a crash log; returns (path or None when no folder is writable, report text)."""
    text = format_crash(exc_type, exc, tb, where)
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    for d in (crash_log_dir(), Path(os.environ.get("TMPDIR", "/tmp"))):
        try:
            d.mkdir(parents=True, exist_ok=True)
            p = d / f"crash-{stamp}-{os.getpid()}.log"
            with open(p, "x", encoding="utf-8") as f:
                f.write(text)
            return p, text
        except OSError:
            continue
    return None, text


class CrashDialog(QDialog):
    def __init__(self, summary: str, details: str, log_path: Optional[Path], parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.log_path = log_path
        self.setWindowTitle(f"{APP_NAME}: unexpected error")
        lay = QVBoxLayout(self)
        where = (f"The details were saved to:\n{log_path}" if log_path
                 else "The details could not be saved to a file; copy them below.")
        msg = QLabel(f"{APP_NAME} hit an unexpected error and may not work correctly until restarted.\n\n"
                     f"{summary}\n\n{where}")
        msg.setObjectName("crashMessage")
        msg.setTextFormat(Qt.TextFormat.PlainText)
        msg.setWordWrap(True)
        msg.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        lay.addWidget(msg)
        self.details = QPlainTextEdit(details)
        self.details.setReadOnly(True)
        self.details.setObjectName("crashDetails")
        fm = self.details.fontMetrics()
        self.details.setMinimumSize(fm.horizontalAdvance("x" * 80), fm.lineSpacing() * 14)
        lay.addWidget(self.details)
        bb = QDialogButtonBox()
        copy = bb.addButton("Copy details", QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(details))
        if log_path:
            folder = bb.addButton("Open log folder", QDialogButtonBox.ButtonRole.ActionRole)
            folder.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(log_path.parent))))
        quit_ = bb.addButton("Quit", QDialogButtonBox.ButtonRole.DestructiveRole)
        quit_.clicked.connect(self._quit)
        cont = bb.addButton("Continue", QDialogButtonBox.ButtonRole.AcceptRole)
        cont.setDefault(True)
        bb.accepted.connect(self.accept)
        lay.addWidget(bb)

    def _quit(self):
        self.accept()
        app = QApplication.instance()
        if app is not None:
            app.exit(70)   # EX_SOFTWARE


class _Bridge(QObject):
    """Carries a report from any thread to the GUI thread (queued when emitted elsewhere)."""
    report = Signal(str, str, str)       # summary, details, log path ("" when none)


class CrashHandler:
    """Installed by ``install_crash_handler``; ``uninstall()`` restores the previous hooks."""

    def __init__(self, app=None, show_dialog: bool = True, loop=None,
                 on_report: Optional[Callable[[Optional[Path], str], None]] = None):
        self.app = app
        self.show_dialog = show_dialog
        self.on_report = on_report
        self.logs: list[Path] = []
        self.dialog: Optional[CrashDialog] = None
        self._busy = threading.local()
        self._prev_excepthook = sys.excepthook
        self._prev_thread_hook = threading.excepthook
        self._loop = loop
        self._prev_loop_handler = loop.get_exception_handler() if loop is not None else None
        self._bridge = _Bridge()
        self._bridge.report.connect(self._show)
        sys.excepthook = self._excepthook
        threading.excepthook = self._thread_hook
        if loop is not None:
            loop.set_exception_handler(self._loop_handler)

    def attach_loop(self, loop) -> None:
        """Also report unhandled exceptions of ``loop``'s tasks and callbacks (once the loop exists)."""
        if self._loop is not None:
            self._loop.set_exception_handler(self._prev_loop_handler)
        self._loop = loop
        self._prev_loop_handler = loop.get_exception_handler()
        loop.set_exception_handler(self._loop_handler)

    # hooks ----------------------------------------------------------------
    def _excepthook(self, exc_type, exc, tb):
        if issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
            return self._prev_excepthook(exc_type, exc, tb)
        self.handle(exc_type, exc, tb, "main thread")

    def _thread_hook(self, args):
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        self.handle(args.exc_type, args.exc_value, args.exc_traceback, f"thread {name}")

    def _loop_handler(self, loop, context):
        exc = context.get("exception")
        if exc is None:
            if self._prev_loop_handler:
                return self._prev_loop_handler(loop, context)
            return loop.default_exception_handler(context)
        where = f"asyncio: {context.get('message', 'unhandled exception')}"
        self.handle(type(exc), exc, exc.__traceback__, where)

    # report ---------------------------------------------------------------
    def handle(self, exc_type, exc, tb, where: str = "main thread") -> Optional[Path]:
        if getattr(self._busy, "on", False):        # an error while reporting: stderr only
            traceback.print_exception(exc_type, exc, tb)
            return None
        self._busy.on = True
        try:
            path, text = write_crash_log(exc_type, exc, tb, where)
            if path:
                self.logs.append(path)
            summary = f"{exc_type.__name__}: {exc}"
            try:
                sys.stderr.write(f"session-lens: {summary}\n"
                                 + (f"session-lens: crash log written to {path}\n" if path else text))
            except Exception:
                pass
            if self.on_report:
                self.on_report(path, text)
            if self.show_dialog and QApplication.instance() is not None:
                self._bridge.report.emit(summary, text, str(path) if path else "")
            return path
        finally:
            self._busy.on = False

    def _show(self, summary: str, details: str, path: str):
        if self.dialog is not None and self.dialog.isVisible():
            # one dialog at a time: append later reports to it
            self.dialog.details.appendPlainText("\n" + "-" * 60 + "\n" + details)
            return
        parent = QApplication.activeWindow()
        self.dialog = CrashDialog(summary, details, Path(path) if path else None, parent)
        self.dialog.open()

    def uninstall(self) -> None:
        if sys.excepthook == self._excepthook:
            sys.excepthook = self._prev_excepthook
        if threading.excepthook == self._thread_hook:
            threading.excepthook = self._prev_thread_hook
        if self._loop is not None:
            self._loop.set_exception_handler(self._prev_loop_handler)
        if self.dialog is not None:
            self.dialog.close()
            self.dialog = None


def install_crash_handler(app=None, show_dialog: bool = True, loop=None,
                          on_report: Optional[Callable[[Optional[Path], str], None]] = None) -> CrashHandler:
    """Log unexpected exceptions to a file and show a crash dialog instead of vanishing.

    ``app``: the QApplication (optional; the dialog needs one to exist).  ``loop``: an asyncio
    loop (e.g. qasync's) whose unhandled task exceptions should be reported too.
    Set ``SESSION_LENS_NO_CRASH_DIALOG=1`` to only write the log (headless runs)."""
    if os.environ.get("SESSION_LENS_NO_CRASH_DIALOG"):
        show_dialog = False
    return CrashHandler(app=app, show_dialog=show_dialog, loop=loop, on_report=on_report)
