""""Fork from here": eligibility on the selected row, a preview before confirming, the fork
in a worker (durable before it reports), and the child opened selected under its parent.

The confirmation (:class:`ForkDialog`) names the child's title (dsh's rule, "X" -> "X (1)",
:func:`app.store.lineage.fork_child_title`) and its destination folder, which the user may
change (the choice is put in the preview as ``outStore`` and passed to the fork)."""
from __future__ import annotations

import os
from typing import Optional
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFileDialog, QHBoxLayout, QLabel, QPushButton,
                               QVBoxLayout)

from .history.row_kind import RowKind



CHILD_ID_PLACEHOLDER = "session-<new id>"


def _preview_job(job, path: str, session_id: Optional[str], seq: int, live: bool) -> dict:
    from ..store.faces import open_reader
    from ..store.forking import child_location, preview
    reader = open_reader(path, session_id)
    pv = preview(reader, seq, live=live)
    from ..store.demo import fork_store_for
    demo_out = fork_store_for(reader.source.path) if reader.source.kind != "sqlite" else None
    if demo_out is not None:                # the shipped demo store is never written (app/store/demo.py)
        pv["outStore"] = pv["demoForkStore"] = demo_out
    # (the demo fork store gets its sessions/ folder when the fork runs: the preview writes nothing)
    pv["childPath"] = child_location(reader, CHILD_ID_PLACEHOLDER,
                                     os.path.join(demo_out, "sessions") if demo_out else None)
    pv["childTitle"] = None
    try:
        from ..store.lineage import fork_child_title
        pv["childTitle"] = fork_child_title(path) if reader.source.kind != "sqlite" else None
    except Exception:                    # no title rule answer: the dialog says the child keeps the parent's
        pass
    h = reader.header
    pv["cwd"] = h.cwd if h is not None else None
    pv["compressed"] = reader.source.kind == "zstd"
    pv["version"] = getattr(reader, "version", 0) or 0
    pv["sqlite"] = reader.source.kind == "sqlite"
    return pv


def _fork_job(job, path: str, session_id: Optional[str], seq: int, live: bool, out_store: Optional[str] = None) -> dict:
    from ..store.faces import open_reader
    from ..store.forking import fork
    # progress: the copy then the verify, in bytes; Cancel makes job.report raise, and the fork then
    # leaves nothing (no child, no temporary, no folder made for it)
    return fork(open_reader(path, session_id), seq, live=live, out_store=out_store, progress=job.report)


def destination_folder(pv: dict, out_store: Optional[str] = None) -> str:
    """The folder the child's session folder is created in (the child's own folder is named by its id)."""
    if out_store and out_store != pv.get("demoForkStore"):
        from ..store.layout import session_path
        root = os.path.join(out_store, "sessions") if os.path.isdir(os.path.join(out_store, "sessions")) else out_store
        p = session_path(root, CHILD_ID_PLACEHOLDER, pv.get("cwd"), bool(pv.get("compressed")), pv.get("version") or 0)
    else:
        p = pv.get("childPath") or ""
    return os.path.dirname(os.path.dirname(p)) if p else ""


class ForkDialog(QDialog):
    """What the child will contain, its title and its destination folder (changeable)."""

    def __init__(self, parent, pv: dict):
        super().__init__(parent)
        self.pv = pv
        self.out_store: Optional[str] = None
        self.setWindowTitle("Fork from here")
        self.setMinimumWidth(620)
        lay = QVBoxLayout(self)
        lay.setSpacing(10)

        def label(text: str, name: str = "") -> QLabel:
            lb = QLabel(text)
            lb.setTextFormat(Qt.TextFormat.PlainText)        # log text: never markup
            lb.setWordWrap(True)
            if name:
                lb.setObjectName(name)
            lay.addWidget(lb)
            return lb
        last = (pv.get("lastMessage") or "").strip().replace("\n", " ")
        label(f"Create a child session with seq 0–{pv['boundary']} of {pv.get('parentSession')}: "
              f"{pv['turns']} completed turn{'' if pv['turns'] == 1 else 's'}, then a session/end-seed marker (the Fork seed).")
        label(f"Last message: {last[:300] or '—'}")
        if pv.get("synthesized"):
            label(f"Closers of the crashed turn are copied: seq {pv['synthesized']}.")
        title = pv.get("childTitle")
        self.title_label = label(f"Child title: {title}" if title else "Child title: the parent's (it has none)",
                                 "forkTitle")
        self.folder_label = label("", "forkFolder")
        row = QHBoxLayout()
        self.choose = QPushButton("Choose folder…")
        self.choose.setEnabled(not pv.get("sqlite"))
        self.choose.clicked.connect(self._choose)
        self.reset_btn = QPushButton("Beside the parent" if not pv.get("demoForkStore") else "The demo fork folder")
        self.reset_btn.clicked.connect(lambda: self.set_folder(None))
        row.addWidget(self.choose)
        row.addWidget(self.reset_btn)
        row.addStretch(1)
        lay.addLayout(row)
        label("The child is written once, durably (the parent's copied range is flushed first), into a new "
              "folder; nothing existing is changed. A fresh child is a seed at rest, not a live session.")
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        bb.button(QDialogButtonBox.StandardButton.Ok).setText("Fork")
        bb.accepted.connect(self.accept)
        bb.rejected.connect(self.reject)
        lay.addStretch(1)                  # spare height below the text, not spread between its lines
        lay.addWidget(bb)
        self.set_folder(None)
        w = self.minimumWidth()
        self.resize(w, max(self.heightForWidth(w), self.minimumSizeHint().height()))

    def folder(self) -> str:
        return destination_folder(self.pv, self.out_store)

    def set_folder(self, out_store: Optional[str]) -> None:
        demo = self.pv.get("demoForkStore")
        self.out_store = out_store or demo or None
        where = "the SQLite store itself" if self.pv.get("sqlite") else self.folder()
        note = ("" if out_store is None else "  — chosen") if not demo or out_store else (
            f"\nThe demo store is never changed: forks of its sessions go to {demo} (your data folder).")
        self.folder_label.setText(f"Destination folder: {where}\n(the child gets its own folder there, named by its id)"
                                  + note)
        self.reset_btn.setEnabled(out_store is not None)

    def _choose(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Fork destination (a store or any folder)", self.folder())
        if d:
            self.set_folder(d)


def confirm_dialog(parent, pv: dict) -> bool:
    """Ask before writing: what the child will contain, its title, where it goes (``pv["outStore"]``)."""
    dlg = ForkDialog(parent, pv)
    ok = dlg.exec() == QDialog.DialogCode.Accepted
    if ok and dlg.out_store:
        pv["outStore"] = dlg.out_store
    return ok


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
        self.preview: Optional[dict] = None
        self._out_store: Optional[str] = None
        self.last_job = None                  # the newest fork's Job (tests, the task strip)
        self.update()

    def _live(self) -> bool:
        info = getattr(self.win, "session", None)
        return bool(getattr(info, "live", False))

    def eligible(self, row) -> tuple:
        if row is None or row.event is None or row.kind != RowKind.ASSISTANT or row.event.type != "assistant/message":
            return False, "Fork from here works on an assistant message of a completed turn"
        evs = [r.event for r in self.win.history.rows if r.event is not None]
        from ..log.fold.fork import eligibility
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
        self.preview = pv
        self.win.statusBar().clearMessage()      # the preview is ready: no "Preparing…" behind the dialog
        if not self.confirm(self.win, pv):
            self.win.statusBar().showMessage("Fork cancelled", 3000)
            return
        h = self.win.history
        self._out_store = pv.get("outStore")
        self.win.statusBar().showMessage("Forking… (the child is reported only once it is durable)")
        job = self.win.jobs.submit(_fork_job, h.path, h.session_id, seq, live, pv.get("outStore"), name="fork",
                                   serial=True, on_done=self._done, on_error=self._error)
        tasks = getattr(self.win, "tasks", None)
        if tasks is not None:                 # progress (copy, then verify), time left and Cancel
            tasks.track(job, f"Forking {pv.get('parentSession') or 'the session'} at seq {seq}: copy, then verify")
            job.failed.connect(lambda _m, job=job: self._cancelled(job))
        self.last_job = job

    def _cancelled(self, job) -> None:
        if job.cancelled:                     # (the job's own callbacks never run once it is cancelled)
            self.win.statusBar().showMessage("Fork cancelled: nothing was written", 6000)

    def _done(self, res: dict):
        self.win.statusBar().showMessage(f"Forked: {res['id']} (seedLength {res['seedLength']})", 8000)
        store = self.win.store_path
        if self._out_store:                    # a chosen folder: list it, the child selected
            store = self._out_store
        if store and os.path.isfile(store) and not store.endswith((".sqlite", ".sqlite3", ".db")):
            store = os.path.dirname(store)     # a single-file store: list its folder, parent and child
        if store:
            self.win.open_store(store, remember=False, select_path=res["child"])
        self.forked.emit(res)

    def _error(self, msg: str):
        self.win.statusBar().showMessage(f"Fork failed: {msg}", 10000)
        self.failed.emit(msg)
