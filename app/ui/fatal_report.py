"""The next start offers the report of a process that died of a fatal signal last time.

A crash in C (the row scanner, a ctypes call, Qt's reference-count abort) ends the process before
any Python handler runs; ``faulthandler`` (set up by :mod:`app.store.diagnostics` in the window and
in every worker) leaves a ``fatal-*.log`` in the log folder.  :func:`offer_fatal_reports` finds
those not yet offered (off the UI thread), shows the newest in a dialog with Copy and Open folder,
and marks them all as offered, so each is shown once.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Optional

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout, QWidget

from ..store import diagnostics
from .about import APP_NAME
from .crash import report_body


class FatalReportDialog(QDialog):
    def __init__(self, path: Path, text: str, more: int, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.path = path
        self.setWindowTitle(f"{APP_NAME}: the last run ended with a crash")
        lay = QVBoxLayout(self)
        also = f"\n({more} earlier report(s) are in the same folder.)" if more else ""
        self.details = report_body(lay, f"A {APP_NAME} process ended with a fatal error last time. Its report "
                                        f"(program locations only, no session text) is in:\n{path}{also}\n\n"
                                        "Please attach it to a bug report.", text, "fatal")
        bb = QDialogButtonBox()
        copy = bb.addButton("Copy report", QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(text))
        folder = bb.addButton("Open log folder", QDialogButtonBox.ButtonRole.ActionRole)
        folder.clicked.connect(lambda: QDesktopServices.openUrl(QUrl.fromLocalFile(str(path.parent))))
        close = bb.addButton(QDialogButtonBox.StandardButton.Close)
        close.clicked.connect(self.accept)
        lay.addWidget(bb)


def collect_fatal_report() -> Optional[tuple[Path, str, int]]:
    """(newest report, its text, how many older) with every pending report marked offered; None: none."""
    reports = diagnostics.pending_fatal_reports()
    if not reports:
        return None
    moved = [diagnostics.mark_reported(p) for p in reports]
    newest = moved[-1]
    try:
        text = newest.read_text(encoding="utf-8", errors="replace")[:200_000]
    except OSError as e:
        text = f"(could not read the report: {type(e).__name__})"
    return newest, text, len(moved) - 1


async def offer_fatal_reports(parent: Optional[QWidget]) -> Optional[FatalReportDialog]:
    """Show the previous fatal crash's report, if any (the folder is read in a worker thread)."""
    found = await asyncio.get_event_loop().run_in_executor(None, collect_fatal_report)
    if found is None:
        return None
    dlg = FatalReportDialog(*found, parent=parent)
    dlg.open()
    return dlg
