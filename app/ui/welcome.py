"""The welcome view: the main window's first page (no session open yet).

    welcome = WelcomeView(lazy=True)        # the main window's welcome page; connect its signals:
    welcome.openPathRequested.connect(win.open_store)      # the Harness home
    welcome.openFileRequested.connect(win.open_file_dialog)
    welcome.set_message("why the page is shown"); welcome.refresh()   # MainWindow.show_welcome

``find_harness_home()`` is its Qt-free part (``$DSH_HOME``, else ``~/.dsh``, through
``app.store.discovery.harness_home``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from .about import APP_NAME

MAX_LISTED = 5


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
        self.explicit_home = explicit_home
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
        return self.show_home(find_harness_home(self.explicit_home))

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
