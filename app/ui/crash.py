"""The crash handler: unexpected exceptions are logged to a file and shown in a dialog.

    h = install_crash_handler(app)          # once, after the QApplication exists (app.ui.app.run_gui does)
    h.attach_loop(loop)                     # and the asyncio (qasync) loop's unhandled task exceptions

``install_crash_handler`` replaces ``sys.excepthook`` and ``threading.excepthook`` (and, given
``loop=``, the asyncio loop's exception handler), and receives the errors of background jobs
that have no ``on_error`` of their own (``app.ui.workers.set_error_sink``): an unexpected
exception writes a log file under ``platformdirs.user_log_dir("session-lens")``
(``$SESSION_LENS_LOG_DIR`` overrides it) and shows a non-modal crash dialog naming that file,
instead of the app vanishing.
"""
from __future__ import annotations

import datetime as _dt
import os
import sys
import threading
import traceback
from pathlib import Path
from typing import Optional
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from ..store import diagnostics
from . import workers
from .about import APP_NAME, versions_text


# --------------------------------------------------------------------------- crash reports

def crash_log_dir() -> Path:
    return diagnostics.log_dir()


def format_crash(exc_type, exc, tb, where: str = "main thread", redact: bool = True) -> str:
    """The crash report: versions and the traceback; ``redact`` (what is written to disk) drops the
    exception's message, which may quote a log (the dialog shows it in full, on screen only)."""
    now = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    try:
        vers = versions_text()
    except Exception as e:               # never let the report itself fail
        vers = f"(versions unavailable: {type(e).__name__})"
    body = (diagnostics.redacted_traceback(exc_type, tb) if redact
            else "".join(traceback.format_exception(exc_type, exc, tb)))
    return (f"{APP_NAME} crash report\n"
            f"time: {now}\nwhere: {where}\npid: {os.getpid()}\nargv: {sys.argv!r}\n\n"
            f"{vers}\n\n{body}")


def write_crash_log(exc_type, exc, tb, where: str = "main thread") -> tuple[Optional[Path], str]:
    """Write a crash log (no exception message: see :func:`format_crash`); returns (path or None when
    no folder is writable, the text written)."""
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


def report_body(lay, message: str, details: str, name: str) -> QPlainTextEdit:
    """A report dialog's body in ``lay``: the message (plain, selectable, wrapped; object name
    ``<name>Message``) and the read-only details below it (``<name>Details``, 80 columns by 14 lines)."""
    msg = QLabel(message)
    msg.setObjectName(f"{name}Message")
    msg.setTextFormat(Qt.TextFormat.PlainText)
    msg.setWordWrap(True)
    msg.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    lay.addWidget(msg)
    box = QPlainTextEdit(details)
    box.setReadOnly(True)
    box.setObjectName(f"{name}Details")
    fm = box.fontMetrics()
    box.setMinimumSize(fm.horizontalAdvance("x" * 80), fm.lineSpacing() * 14)
    lay.addWidget(box)
    return box


class CrashDialog(QDialog):
    def __init__(self, summary: str, details: str, log_path: Optional[Path], parent: Optional[QWidget] = None,
                 log_tail: str = ""):
        super().__init__(parent)
        self.log_path = log_path
        self.setWindowTitle(f"{APP_NAME}: unexpected error")
        lay = QVBoxLayout(self)
        where = (f"A report (the error's type and where, no session text) was saved to:\n{log_path}" if log_path
                 else "The details could not be saved to a file; copy them below.")
        self.details = report_body(lay, f"{APP_NAME} hit an unexpected error and may not work correctly until "
                                        f"restarted.\n\n{summary}\n\n{where}", details, "crash")
        log_label = QLabel(f"Last lines of the log {diagnostics.log_path()}:")
        log_label.setTextFormat(Qt.TextFormat.PlainText)
        log_label.setObjectName("crashLogPath")
        lay.addWidget(log_label)
        self.log_tail = QPlainTextEdit(log_tail or "(empty)")
        self.log_tail.setReadOnly(True)
        self.log_tail.setObjectName("crashLogTail")
        self.log_tail.setMaximumHeight(self.details.fontMetrics().lineSpacing() * 8)
        lay.addWidget(self.log_tail)
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
    report = Signal(str, str, str, str)  # summary, details, crash log path ("" when none), the log's last lines


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
        workers.set_error_sink(self._job_error)

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

    def _job_error(self, name: str, message: str) -> None:
        """A background job failed and nobody asked for its errors (UI thread)."""
        exc = RuntimeError(f"background job {name!r} failed: {message}")
        kind = message.partition(":")[0]          # the job's error type (its message stays off the disk)
        self.handle(RuntimeError, exc, None, f"job {name}" + (f" ({kind})" if kind.isidentifier() else ""))

    # report ---------------------------------------------------------------
    def handle(self, exc_type, exc, tb, where: str = "main thread") -> Optional[Path]:
        if getattr(self._busy, "on", False):        # an error while reporting: stderr only
            traceback.print_exception(exc_type, exc, tb)
            return None
        self._busy.on = True
        try:
            path, text = write_crash_log(exc_type, exc, tb, where)
            diagnostics.log.error("unexpected %s in %s; crash report %s", exc_type.__name__, where, path)
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
                full = format_crash(exc_type, exc, tb, where, redact=False)
                self._bridge.report.emit(summary, full, str(path) if path else "",
                                         diagnostics.tail(diagnostics.log_path(), 12))
            return path
        finally:
            self._busy.on = False

    def _show(self, summary: str, details: str, path: str, log_tail: str = ""):
        if self.dialog is not None and self.dialog.isVisible():
            # one dialog at a time: append later reports to it
            self.dialog.details.appendPlainText("\n" + "-" * 60 + "\n" + details)
            return
        parent = QApplication.activeWindow()
        self.dialog = CrashDialog(summary, details, Path(path) if path else None, parent, log_tail)
        self.dialog.open()

    def uninstall(self) -> None:
        workers.set_error_sink(None)
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
