""""Fork from here": eligibility on the selected row, a preview before confirming, the fork
in a worker (durable before it reports), and the child opened selected under its parent."""
from __future__ import annotations

import os
from typing import Optional
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMessageBox

from ..log.fork import eligibility


def _preview_job(job, path: str, session_id: Optional[str], seq: int, live: bool) -> dict:
    from ..store.faces import open_reader
    from ..store.forking import preview
    return preview(open_reader(path, session_id), seq, live=live)


def _fork_job(job, path: str, session_id: Optional[str], seq: int, live: bool) -> dict:
    from ..store.faces import open_reader
    from ..store.forking import fork
    return fork(open_reader(path, session_id), seq, live=live)


def confirm_dialog(parent, pv: dict) -> bool:
    """Ask before writing: what the child will contain."""
    box = QMessageBox(parent)
    box.setWindowTitle("Fork from here")
    box.setTextFormat(__import__("PySide6.QtCore", fromlist=["Qt"]).Qt.TextFormat.PlainText)
    last = (pv.get("lastMessage") or "").strip().replace("\n", " ")
    box.setText(f"Create a child session with seq 0–{pv['boundary']} of {pv.get('parentSession')}:\n"
                f"{pv['turns']} completed turn(s), then a session/end-seed marker.")
    info = f"Last message: {last[:300] or '—'}"
    if pv.get("synthesized"):
        info += f"\nClosers of the crashed turn are copied: seq {pv['synthesized']}."
    box.setInformativeText(info)
    box.setStandardButtons(QMessageBox.StandardButton.Ok | QMessageBox.StandardButton.Cancel)
    box.button(QMessageBox.StandardButton.Ok).setText("Fork")
    return box.exec() == QMessageBox.StandardButton.Ok


class ForkAction(QObject):
    """Attach to a MainWindow: a toolbar/context action enabled only on eligible rows."""
    forked = Signal(dict)
    failed = Signal(str)

    def __init__(self, window, confirm: Callable[[object, dict], bool] = confirm_dialog):
        super().__init__(window)
        self.win = window
        self.confirm = confirm
        self.action = QAction("Fork from here", window)
        self.action.setShortcut(QKeySequence("Ctrl+Alt+F"))   # Ctrl+Shift+F: search all sessions
        self.action.setEnabled(False)
        self.action.triggered.connect(self.trigger)
        window.toolbar.addSeparator()
        window.toolbar.addAction(self.action)
        window.view.addAction(self.action)
        window.view.selectionModel().currentChanged.connect(lambda *_: self.update())
        window.history.modelReset.connect(self.update)
        self.reason = "select an assistant message"
        self.update()

    def _live(self) -> bool:
        info = getattr(self.win, "session", None)
        return bool(getattr(info, "live", False))

    def eligible(self, row) -> tuple:
        if row is None or row.event is None or row.kind != "assistant" or row.event.type != "assistant/message":
            return False, "Fork from here works on an assistant message of a completed turn"
        evs = [r.event for r in self.win.history.rows if r.event is not None]
        el = eligibility(evs, live=self._live())
        return el.get(row.event.seq, (False, "not an assistant message"))

    def update(self, *_):
        ok, why = self.eligible(self.win.view.current_row())
        self.reason = why
        self.action.setEnabled(ok)
        self.action.setToolTip(why if ok else f"Cannot fork here: {why}")
        self.action.setStatusTip(self.action.toolTip())

    def trigger(self):
        row = self.win.view.current_row()
        ok, why = self.eligible(row)
        if not ok:
            self.failed.emit(why)
            return
        h = self.win.history
        seq, live = row.event.seq, self._live()
        self.win.statusBar().showMessage("Preparing fork preview…")
        self.win.jobs.submit(_preview_job, h.path, h.session_id, seq, live, name="fork-preview",
                             on_done=lambda pv: self._confirmed(pv, seq, live),
                             on_error=self._error)

    def _confirmed(self, pv: dict, seq: int, live: bool):
        if not self.confirm(self.win, pv):
            self.win.statusBar().showMessage("Fork cancelled", 3000)
            return
        h = self.win.history
        self.win.statusBar().showMessage("Forking… (the child is reported only once it is durable)")
        self.win.jobs.submit(_fork_job, h.path, h.session_id, seq, live, name="fork", serial=True,
                             on_done=self._done, on_error=self._error)

    def _done(self, res: dict):
        self.win.statusBar().showMessage(f"Forked: {res['id']} (seedLength {res['seedLength']})", 8000)
        store = self.win.store_path
        if store and os.path.isfile(store) and not store.endswith((".sqlite", ".sqlite3", ".db")):
            store = os.path.dirname(store)     # a single-file store: list its folder, parent and child
        if store:
            self.win.open_store(store, remember=False, select_path=res["child"])
        self.forked.emit(res)

    def _error(self, msg: str):
        self.win.statusBar().showMessage(f"Fork failed: {msg}", 10000)
        self.failed.emit(msg)
