"""*Help › Diagnostics*: the ``session-lens doctor`` report in a dialog, with a Copy button.

    qt_facts()                      # Qt, PySide6, the platform plugin, emoji and CJK fonts (a Q*Application exists)
    show_diagnostics(parent, jobs)  # the dialog; the report (worker checks start processes) is made by a job
    qt_probe_main(argv)             # worker "qt-probe": the same facts from a child process (the CLI's doctor)

The report itself is :func:`app.store.doctor.report`; this module adds the part only Qt can tell.
"""
from __future__ import annotations

import os
from typing import Any, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout, QWidget

from ..store import doctor
from .about import APP_NAME
from .recent import config_dir

FONT_LIST_MAX = 6
_CJK = (QFontDatabase.WritingSystem.SimplifiedChinese, QFontDatabase.WritingSystem.TraditionalChinese,
        QFontDatabase.WritingSystem.Japanese, QFontDatabase.WritingSystem.Korean)


def qt_facts() -> dict[str, Any]:
    """What Qt runs with (call where a Q*Application exists)."""
    import PySide6
    from PySide6.QtCore import QLibraryInfo, qVersion
    families = QFontDatabase.families()
    emoji = sorted(f for f in families if "emoji" in f.lower())
    cjk = sorted({f for ws in _CJK for f in QFontDatabase.families(ws)})
    return {"qt": qVersion(), "pyside6": getattr(PySide6, "__version__", "?"),
            "platform": QGuiApplication.platformName(),
            "plugins": QLibraryInfo.path(QLibraryInfo.LibraryPath.PluginsPath),
            "fonts": {"emoji": emoji[:FONT_LIST_MAX], "cjk": cjk[:FONT_LIST_MAX],
                      "emojiCount": len(emoji), "cjkCount": len(cjk)}}


def qt_probe_main(_argv: list[str]) -> int:
    """Worker ``qt-probe``: start Qt as the window would (the platform plugin the environment picks;
    ``offscreen`` when there is no display at all) and answer :func:`qt_facts`.  A plugin that cannot
    load aborts this child, not the doctor."""
    from ..store.childproc import serve
    note = ""
    if not (os.environ.get("QT_QPA_PLATFORM") or os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        note = "no display: checked with offscreen"

    def body(_send: Any) -> dict[str, Any]:
        app = QGuiApplication.instance() or QGuiApplication(["session-lens-qt-probe"])
        facts = qt_facts()
        facts["settings"] = str(config_dir() / "settings.json")     # (the CLI's doctor imports nothing of app.ui)
        if note:
            facts["note"] = note
        del app
        return facts
    return serve(body, 0)


class DiagnosticsDialog(QDialog):
    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setWindowTitle(f"{APP_NAME}: diagnostics")
        self.report: Optional[dict[str, Any]] = None
        lay = QVBoxLayout(self)
        self.text = QPlainTextEdit("Checking the workers…")
        self.text.setReadOnly(True)
        self.text.setObjectName("diagnosticsReport")
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        fm = self.text.fontMetrics()
        self.text.setMinimumSize(fm.horizontalAdvance("x" * 100), fm.lineSpacing() * 24)
        lay.addWidget(self.text)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.copy = bb.addButton("Copy", QDialogButtonBox.ButtonRole.ActionRole)
        self.copy.setEnabled(False)
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.text.toPlainText()))
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)

    def show_report(self, rep: dict[str, Any]) -> None:
        self.report = rep
        self.text.setPlainText(doctor.report_text(rep))
        self.copy.setEnabled(True)

    def show_error(self, message: str) -> None:
        self.text.setPlainText(f"The report could not be made: {message}")


def show_diagnostics(parent: Optional[QWidget], jobs: Any) -> DiagnosticsDialog:
    """Open the dialog; the report (a few child processes) is made off the UI thread by ``jobs``."""
    dlg = DiagnosticsDialog(parent)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    qt = qt_facts()
    settings = config_dir() / "settings.json"
    jobs.submit(lambda _job: doctor.report(qt=qt, settings=settings), name="diagnostics", group="diagnostics",
                on_done=dlg.show_report, on_error=dlg.show_error)
    dlg.open()
    return dlg
