"""Generations of the open session: an info line above the history and File › Open generation.

A dsh session folder may hold several generation files (``session.jsonl``,
``session.v3.jsonl``, ``session.v4.jsonl.zstd`` …): dsh reads the highest and, when it
migrates, leaves the older ones as they were.  The line says which generation is open and
lists the others (earlier generations are immutable: the newer one was migrated from them);
the submenu opens any one of them explicitly (a file path opens exactly that file).

Everything here is built from the listing's facts (``SessionInfo.generation``/``generations``,
read in the listing worker); opening another generation reads its header in a worker.
"""
from __future__ import annotations

import os
from typing import Optional

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QMenu

from ..store.discovery import discover


def generation_job(job, path: str):
    """The session of exactly this generation file (header read; explicit: not the newest is said)."""
    return discover(path).sessions[0]


def _entries(info) -> list:
    """[(name, version, path, open)] of every generation of ``info``'s session, newest first."""
    out = []
    if info.generation:
        out.append((info.generation, info.version, info.path, True))
    for g in info.generations or []:
        out.append((g.get("name") or os.path.basename(g.get("path", "")), g.get("version"), g.get("path"), False))
    out.sort(key=lambda e: (-(e[1] if isinstance(e[1], int) else -1), e[0]))
    return out


def generation_summary(info) -> str:
    """Plain text: the generation open and the others, or "" when the folder holds only one."""
    if info is None or not info.generations or not info.generation:
        return ""
    gens = _entries(info)
    newest = gens[0]
    cur = next(e for e in gens if e[3])
    parts = []
    if cur is newest:
        parts.append(f"Generation {cur[0]} (format v{cur[1]}): the newest, the one dsh reads.")
    else:
        parts.append(f"Generation {cur[0]} (format v{cur[1]}), opened as asked: an earlier generation, immutable "
                     f"(dsh reads {newest[0]}).")
    others = []
    for i, (name, v, _p, is_open) in enumerate(gens):
        if is_open:
            continue
        vv = f"v{v}" if isinstance(v, int) else "unknown version"
        if i == 0:
            others.append(f"{name} ({vv}): the newest generation")
        else:
            others.append(f"{name} ({vv}): earlier generation, immutable; {gens[i - 1][0]} was migrated from it")
    parts.append("Other generations: " + "; ".join(others) + ". File › Open generation opens one.")
    return " ".join(parts)


class GenerationActions(QObject):
    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self.info = None
        self.job = None
        self.line = QLabel("")
        self.line.setObjectName("generationLine")
        self.line.setTextFormat(Qt.TextFormat.PlainText)       # file names come from the disk
        self.line.setWordWrap(True)
        self.line.setContentsMargins(8, 3, 8, 3)
        self.line.hide()
        win.history_column.insertWidget(1, self.line)          # under the banner, above the history
        self.menu = QMenu("Open &generation…", win)
        self.menu.setObjectName("generationMenu")
        self.menu.setToolTipsVisible(True)
        self.menu.menuAction().setEnabled(False)
        win.file_actions.add_submenu(self.menu)
        # after FileActions (connected first): win.session is the activated session
        win.sessions.sessionActivated.connect(self.show_session)
        win.storeLoaded.connect(lambda _p: self.show_session(win.session if win.sessions.model.sessions() else None))

    # ------------------------------------------------------------------ display
    def show_session(self, info) -> None:
        self.info = info
        text = generation_summary(info)
        self.line.setText(text)
        self.line.setVisible(bool(text))
        self.menu.clear()
        gens = _entries(info) if info is not None and info.format != "sqlite" else []
        for name, v, path, is_open in gens:
            label = f"{name}  (v{v})" if isinstance(v, int) else name
            if gens and name == gens[0][0]:
                label += " — newest"
            a = QAction(label, self.menu, checkable=True, checked=is_open)
            a.setToolTip(path or "")
            a.setData(path)
            a.triggered.connect(lambda _c=False, p=path: self.open_generation(p))
            self.menu.addAction(a)
        self.menu.menuAction().setEnabled(len(gens) > 1)

    def actions(self) -> list:
        return list(self.menu.actions())

    # ------------------------------------------------------------------ opening one
    def open_generation(self, path: Optional[str]) -> None:
        """Open exactly this generation file of the open session (the list keeps its selection)."""
        cur = self.info
        if not path or (cur is not None and os.path.abspath(path) == os.path.abspath(cur.path)):
            self.show_session(cur)                             # keep the check mark on the open one
            return
        self.win.statusBar().showMessage(f"Opening generation {os.path.basename(path)} …")
        self.job = self.win.jobs.submit(generation_job, path, name="generation", group="generation",
                                        on_done=self._on_info, on_error=self._on_failed)

    def _on_info(self, info) -> None:
        self.job = None
        self.win.open_session(info)
        self.show_session(info)

    def _on_failed(self, msg: str) -> None:
        self.job = None
        self.win.statusBar().showMessage(f"Cannot open that generation: {msg}", 10000)
        self.show_session(self.info)
