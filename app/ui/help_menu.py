"""Small pieces of the main window kept out of MainWindow (which holds the frame): the Help menu (About,
Diagnostics) and the progress pane of a huge log's seq index build."""
from __future__ import annotations

import os
from typing import Any

from PySide6.QtGui import QAction

from .about import APP_NAME, AboutDialog, show_about
from .frame_actions import action


def build_help_menu(win: Any) -> None:
    """Help > About and Help > Diagnostics on ``win`` (``act_about``, ``act_diagnostics``, ``help_menu``)."""
    hm = win.menu("Help")
    win.act_about = action(f"&About {APP_NAME}", win, triggered=win.show_about)
    win.act_about.setMenuRole(QAction.MenuRole.AboutRole)
    hm.addAction(win.act_about)
    win.act_diagnostics = action("&Diagnostics…", win, triggered=win.show_diagnostics)
    hm.addAction(win.act_diagnostics)
    win.help_menu = hm


def raise_or_show_about(win: Any) -> AboutDialog:
    """The About dialog (versions of Session Lens, Python, PySide6/Qt, msgspec, qasync): the open one
    raised, else a new one."""
    for dlg in win.findChildren(AboutDialog):
        if dlg.isVisible():
            dlg.raise_()
            dlg.activateWindow()
            return dlg
    return show_about(win)


def show_diagnostics_of(win: Any) -> Any:
    """Help > Diagnostics: the ``session-lens doctor`` report, with a Copy button."""
    from .diagnostics_dialog import show_diagnostics
    return show_diagnostics(win, win.jobs)


INDEX_PANE_BYTES = 16 << 20      # smaller logs: no index pane (the demo opens without one)
INDEX_PANE_DELAY_MS = 500        # the pane shows once the build has run this long (a quick one never shows it)


def track_index_build(win: Any, job: Any) -> None:
    """Opening a huge log: the seq index build's progress (percent, time left) and Cancel under the
    history after half a second (never for a quick one: a log under INDEX_PANE_BYTES is indexed in about
    the time its child process takes to start); Cancel kills its child scan."""
    try:
        if os.path.getsize(win.history.path) < INDEX_PANE_BYTES:
            return
    except (OSError, TypeError):
        pass
    win.index_tasks.track(job, "Indexing the log (seq index): go-to and far pages wait for it", delay_ms=INDEX_PANE_DELAY_MS)
    job.failed.connect(lambda _m, job=job: _index_cancelled(win, job))
    job.done.connect(lambda _r, job=job: _index_cancelled(win, job))    # (it ended as Cancel was clicked)
    if job.finished:                  # (handed over after it ended: its signals are gone, settle it now)
        _index_cancelled(win, job)


def _index_cancelled(win: Any, job: Any) -> None:
    if job.cancelled and win.history.indexer.state == "cancelled":      # (not a session switch)
        win.progress.hide()
        win.statusBar().showMessage("Indexing cancelled: the tail is shown; far seqs need the index", 8000)
