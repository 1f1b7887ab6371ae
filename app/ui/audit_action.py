"""Audit entry points of the main window: a Tools menu (audit window, trace of the selected
row, diffs, plots), "Trace this row" in the history's context menu, and File > Export.

Attached like :class:`app.ui.fork_action.ForkAction`: ``AuditAction(window)`` adds its
actions to the window, so the main window only creates it.  Nothing here reads a file on
the UI thread: the audit window decodes the log in a worker (:meth:`AuditWindow.load`),
and every export runs in a worker (``window.jobs``) and reports in the status bar.
Opening never writes; an export writes only where the save dialog says, never over the
session file itself.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Optional
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu

from .frame_actions import action

if TYPE_CHECKING:                     # (imported when first opened: not on the way to the first page painted)
    from .audit import AuditWindow

# format -> (menu text, default suffix, dialog filter)
EXPORTS = {
    "raw": ("&Raw (stored bytes + SHA-256 sidecar)…", ".jsonl", "Session log (*.jsonl *.jsonl.zstd *.zst);;All files (*)"),
    "logical": ("&Logical JSONL…", ".logical.jsonl", "JSON Lines (*.jsonl);;All files (*)"),
    "markdown": ("&Markdown transcript…", ".md", "Markdown (*.md);;All files (*)"),
    "html": ("&HTML transcript (self-contained)…", ".html", "HTML (*.html *.htm);;All files (*)"),
    "zip": ("&ZIP bundle (with descendants)…", ".zip", "ZIP archive (*.zip);;All files (*)"),
}
FORMAT_NAMES = {"raw": "raw", "logical": "logical JSONL", "markdown": "Markdown", "html": "HTML", "zip": "ZIP bundle"}


def save_dialog(parent, title: str, default: str, filters: str) -> str:
    """Ask where to save (the dialog asks before replacing a file)."""
    path, _ = QFileDialog.getSaveFileName(parent, title, default, filters)
    return path


_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def safe_file_stem(title: Optional[str], limit: int = 60) -> str:
    """A session title as a file name stem on every platform ("" when nothing usable is left):
    letters and digits of any script kept, every run of anything else (slashes, colons, quotes,
    control and format characters, spaces, dots) one "-", cut at a word boundary."""
    import unicodedata
    text = unicodedata.normalize("NFC", str(title or ""))
    out, dash = [], False
    for ch in text:
        if ch.isalnum() or ch in "_+()[],'&":
            out.append(ch)
            dash = False
        elif not dash and out:
            out.append("-")
            dash = True
    stem = "".join(out).strip("-")
    if len(stem) > limit:
        cut = stem[:limit]
        stem = (cut.rsplit("-", 1)[0] if "-" in cut[limit // 2:] else cut).strip("-")
    if stem.split(".")[0].lower() in _RESERVED:
        stem = f"session-{stem}"
    return stem


def default_name(session_id: Optional[str], fmt: str, redact: bool, source: Optional[str] = None,
                 title: Optional[str] = None) -> str:
    """The proposed export file name: the session's title made safe (else its id)."""
    from ..store.export import sanitize_id
    sid = safe_file_stem(title) or sanitize_id(session_id or "session") or "session"
    suffix = EXPORTS[fmt][1]
    if fmt == "raw" and source and source.endswith((".zstd", ".zst")) and not redact:
        suffix = ".jsonl.zstd"           # the stored bytes are compressed (a redacted raw export is plain JSONL)
    stem = f"dsh-session-{sid}" if fmt == "zip" else sid
    return stem + (".redacted" if redact else "") + suffix


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except OSError:
        return False


def export_job(job, path: str, session_id: Optional[str], fmt: str, out: str, redact: bool) -> dict:
    """Worker body: open the session, export, close.  Refuses to write over the session file."""
    from ..store.export import export
    from ..store.faces import open_reader
    for target in (out, out + ".sha256", out + ".redaction.json"):
        if _same_file(target, path):
            raise ValueError(f"{target} is the session file itself: choose another name")
    reader = open_reader(path, session_id)
    try:
        job.check()
        res = export(reader, fmt, out, redact=redact, overwrite=True, progress=job.report)
    finally:
        reader.close()
    return {**res, "format": fmt, "redacted": redact}


def describe_export(res: dict) -> str:
    """One status-bar line for a finished export."""
    fmt = res.get("format", "?")
    name = FORMAT_NAMES.get(fmt, fmt)
    out = res.get("out", "?")
    bits = []
    if fmt == "raw":
        bits.append(f"{res.get('bytes', 0)} bytes, sha256 {str(res.get('sha256', ''))[:12]}… in "
                    f"{os.path.basename(res.get('sidecar', ''))}")
        if res.get("redacted"):
            bits.append("re-encoded, not byte-identical")
    elif fmt == "logical":
        bits.append(f"{res.get('events', 0)} events")
    elif fmt in ("markdown", "html"):
        bits.append(f"{res.get('entries', 0)} entries")
    elif fmt == "zip":
        bits.append(f"{len(res.get('entries', []))} files")
        if res.get("problems"):
            bits.append(f"{len(res['problems'])} problem(s): {res['problems'][0]}")
    if res.get("redacted"):
        n = sum((res.get("redaction") or {}).get("counts", {}).values())
        bits.append(f"redacted {n} secret(s), report {os.path.basename(res.get('report', ''))}")
    return f"Exported {name} to {out} ({'; '.join(bits)})"


class AuditAction(QObject):
    """Attach to a MainWindow: Tools menu, "Trace this row" in the row menu, File > Export."""
    opened = Signal(object)           # the AuditWindow, once its data is installed
    exported = Signal(dict)
    failed = Signal(str)

    def __init__(self, window, ask_path: Callable[[object, str, str, str], str] = save_dialog):
        super().__init__(window)
        self.win = window
        self.ask_path = ask_path
        self.window: Optional[AuditWindow] = None
        self._window_key: Optional[tuple] = None
        self.export_dir: Optional[str] = None
        self._exporting = 0
        self.last_job = None                  # the newest export's Job (tests, the task strip)

        self.act_audit = action("&Audit session…", window, shortcut=QKeySequence("Ctrl+Shift+T"),
                                triggered=lambda: self.open_audit(self.current_seq(), tab="trace"))
        self.act_audit.setStatusTip("Trace, diffs, plots and stats of this session (the trace of the selected row)")
        self.act_trace = action("&Trace this row", window, triggered=self.trace_row)
        self.act_trace.setStatusTip("Why this row is or is not in the model's view, where it came from, "
                                    "which requests it was part of")
        self.act_trace.setProperty("contextMenu", True)        # listed in the history view's row menu
        self.act_diffs = action("&Diffs (attempts, steps, fork)…", window,
                                triggered=lambda: self.open_audit(self.current_seq(), tab="diff"))
        self.act_plots = action("&Plots and stats…", window,
                                triggered=lambda: self.open_audit(self.current_seq(), tab="plots"))
        window.view.addAction(self.act_trace)

        tm = window.menu("Tools")
        for a in (self.act_audit, self.act_trace, None, self.act_diffs, self.act_plots):
            tm.addSeparator() if a is None else tm.addAction(a)
        self.tools_menu = tm

        em = QMenu("&Export", window)
        em.setObjectName("exportMenu")
        self.act_redact = QAction("Re&dact secrets (API keys, tokens, e-mails, home paths)", window, checkable=True)
        self.act_redact.setStatusTip("Mask secrets in the export and write a report beside it; "
                                     "a redacted raw export is no longer byte-identical")
        em.addAction(self.act_redact)
        em.addSeparator()
        self.export_actions: dict = {}
        for fmt, (text, _, _) in EXPORTS.items():
            a = action(text, window, triggered=lambda _=False, f=fmt: self.export(f))
            em.addAction(a)
            self.export_actions[fmt] = a
        self.export_menu = em
        window.file_actions.add_submenu(em)                                 # File > Export, above Quit

        window.view.selectionModel().currentChanged.connect(lambda *_: self.update())
        window.history.modelReset.connect(self.update)
        window.sessionLoaded.connect(self.update)
        self.update()

    # ------------------------------------------------------------------ state
    def _session(self) -> tuple:
        h = self.win.history
        return h.path, h.session_id

    def current_seq(self) -> Optional[int]:
        row = self.win.view.current_row()
        if row is None:
            return None
        return row.seq if row.seq is not None else (row.event.seq if row.event is not None else None)

    def update(self, *_):
        has = self._session()[0] is not None
        for a in (self.act_audit, self.act_diffs, self.act_plots, *self.export_actions.values()):
            a.setEnabled(has)
        self.export_menu.setEnabled(has)
        row = self.win.view.current_row()
        ok = has and row is not None and self.current_seq() is not None
        self.act_trace.setEnabled(ok)
        why = "" if ok else ("open a session first" if not has else
                             "select a row with an event (a bad row has no seq)" if row is not None else "select a row")
        self.act_trace.setToolTip("Trace this row" if ok else f"Cannot trace: {why}")

    # ------------------------------------------------------------------ audit window
    def trace_row(self):
        seq = self.current_seq()
        if seq is None:
            self.failed.emit("no row with a seq selected")
            return
        self.open_audit(seq, tab="trace")

    def open_audit(self, seq: Optional[int] = None, tab: str = "trace") -> Optional[AuditWindow]:
        path, sid = self._session()
        if path is None:
            self.failed.emit("no session open")
            return None
        key = (path, sid)
        w = self.window
        if w is None:
            from .audit import AuditWindow
            w = AuditWindow(None, parent=self.win, jobs=self.win.jobs)
            w.setWindowFlag(Qt.WindowType.Window, True)
            w.loaded.connect(self._on_loaded)
            w.loadFailed.connect(lambda msg: self.win.statusBar().showMessage(f"Audit failed: {msg}", 10000))
            self.window = w
        live = bool(getattr(getattr(self.win, "session", None), "live", False))
        reuse = (self._window_key == key and w.data is not None and not w.loading and not live
                 and w.has_seq(seq))
        w.show()
        w.raise_()
        w.activateWindow()
        if reuse:
            w.select_tab(tab)
            if seq is not None:
                w.show_trace(seq)
            self.opened.emit(w)
        else:
            self._window_key = key
            self.win.statusBar().showMessage("Opening the audit window (decoding the log in the background) …", 4000)
            w.load(path, sid, seq, tab=tab)
        return w

    def _on_loaded(self):
        w = self.window
        d = w.data if w is not None else None
        if d is None:                 # (loaded is emitted once the data is installed)
            return
        self.win.statusBar().showMessage(
            f"Audit window: {len(d.events)} events, {len(d.diffs)} comparison(s); "
            + (f"trace of seq {d.seq}" if d.seq is not None else "nothing to trace"), 6000)
        self.opened.emit(w)

    # ------------------------------------------------------------------ exports
    def _session_title(self) -> Optional[str]:
        """The open session's own title (None when it has none: the id is proposed then)."""
        info = getattr(self.win, "session", None)
        if info is None:
            return None
        from .session_model import is_placeholder
        t = self.win.sessions.model.titles.get(info.key) or info.title
        return None if not t or is_placeholder(t) else str(t)

    def _default_dir(self) -> str:
        return self.export_dir or str(Path.home())

    def export(self, fmt: str, out: Optional[str] = None, redact: Optional[bool] = None) -> None:
        path, sid = self._session()
        if path is None:
            self.failed.emit("no session open")
            return
        redact = self.act_redact.isChecked() if redact is None else redact
        if out is None:
            session_name = sid or getattr(self.win.session, "id", None)
            title = f"Export {FORMAT_NAMES[fmt]}" + (" (redacted)" if redact else "")
            name = default_name(session_name, fmt, redact, path, self._session_title())
            out = self.ask_path(self.win, title, os.path.join(self._default_dir(), name), EXPORTS[fmt][2])
            if not out:
                self.win.statusBar().showMessage("Export cancelled", 3000)
                return
        self.export_dir = os.path.dirname(os.path.abspath(out))
        self._exporting += 1
        self.win.statusBar().showMessage(f"Exporting {FORMAT_NAMES[fmt]}{' (redacted)' if redact else ''} "
                                         f"to {out} …")
        job = self.win.jobs.submit(export_job, path, sid, fmt, out, redact, name=f"export-{fmt}",
                                   on_done=self._exported, on_error=lambda msg, f=fmt: self._export_failed(f, msg))
        tasks = getattr(self.win, "tasks", None)
        if tasks is not None:                 # progress, time left and Cancel in the window's task strip
            tasks.track(job, f"Exporting {FORMAT_NAMES[fmt]}{' (redacted)' if redact else ''} to {out}")
            job.failed.connect(lambda _m, job=job: self._export_cancelled(job))
        self.last_job = job

    def _exported(self, res: dict):
        self._exporting -= 1
        self.win.statusBar().showMessage(describe_export(res), 12000)
        self.exported.emit(res)

    def _export_cancelled(self, job) -> None:
        if job.cancelled:                     # (the job's own callbacks never run once it is cancelled)
            self._exporting -= 1
            self.win.statusBar().showMessage("Export cancelled: nothing was written", 6000)

    def _export_failed(self, fmt: str, msg: str):
        self._exporting -= 1
        self.win.statusBar().showMessage(f"Export ({FORMAT_NAMES.get(fmt, fmt)}) failed: {msg}", 12000)
        self.failed.emit(msg)
