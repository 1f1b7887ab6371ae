"""Frame actions of the main window: the Edit menu (Copy, Copy as Markdown, Find), the
View menu's theme / font size / Markdown switches, the Go menu's start and end, Help ›
Keyboard shortcuts, "Show request" (row menu and Tools), toolbar icons, and the window
geometry kept between runs.

Menus are created through :meth:`MainWindow.menu` (one function, canonical order), so
other controllers add to the same Edit / View / Go menus without looking them up by text.
"""
from __future__ import annotations

import base64
import os
from collections.abc import Callable
from typing import Optional, Union

from PySide6.QtCore import QByteArray, QObject, Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (QApplication, QDialog, QDialogButtonBox, QHeaderView, QStyle, QTableWidget,
                               QTableWidgetItem, QVBoxLayout)

from . import settings
from .markdown_copy import rows_markdown

FONT_MIN, FONT_MAX = 7.0, 22.0


def action(text: str, parent: QObject, triggered: Optional[Callable[..., object]] = None,
           shortcut: Union[str, QKeySequence, QKeySequence.StandardKey, None] = None, checkable: bool = False,
           toggled: Optional[Callable[[bool], object]] = None, checked: bool = False) -> QAction:
    """A QAction wired by signal: the one way the controllers make their menu entries (the
    typed stubs take no ``triggered=`` / ``toggled=`` keyword in the QAction constructor)."""
    a = QAction(text, parent)
    if checkable:
        a.setCheckable(True)
        a.setChecked(checked)
    if shortcut is not None:
        a.setShortcut(QKeySequence(shortcut))
    if triggered is not None:
        a.triggered.connect(triggered)
    if toggled is not None:
        a.toggled.connect(toggled)
    return a


class ShortcutsDialog(QDialog):
    """Help › Keyboard shortcuts: every action of the window that has one (plain text)."""

    def __init__(self, win):
        super().__init__(win)
        self.setWindowTitle("Keyboard shortcuts")
        self.setObjectName("shortcutsDialog")
        rows = shortcut_rows(win)
        lay = QVBoxLayout(self)
        t = QTableWidget(len(rows), 3, self)
        t.setObjectName("shortcutsTable")
        t.setHorizontalHeaderLabels(["Keys", "Action", "Menu"])
        t.verticalHeader().hide()
        t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        t.setAlternatingRowColors(True)
        for i, (keys, label, where) in enumerate(rows):
            for j, v in enumerate((keys, label, where)):
                t.setItem(i, j, QTableWidgetItem(v))
        t.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        t.resizeColumnToContents(0)
        t.resizeColumnToContents(2)
        lay.addWidget(t)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)
        self.table = t
        self.resize(620, 560)


def shortcut_rows(win) -> list:
    """[(keys, action text, menu)] of the menu bar's actions with a shortcut, plus list keys."""
    from .toolbar_fit import action_keys, menu_text
    out, seen = [], set()

    def walk(menu, where):
        for a in menu.actions():
            if a.menu() is not None:
                walk(a.menu(), f"{where} › {a.menu().title().replace('&', '')}")
                continue
            keys = action_keys(a)
            if keys and id(a) not in seen:
                seen.add(id(a))
                out.append((", ".join(keys), menu_text(a), where))
    for a in win.menuBar().actions():
        if a.menu() is not None:
            walk(a.menu(), a.menu().title().replace("&", ""))
    out += [("[ / ]", "Previous / next turn (history list focused)", "History list"),
            ("Enter / Shift+Enter", "Older / newer match (find bar)", "Find bar"),
            ("Esc", "Close the find bar", "Find bar"),
            ("Shift/Ctrl+click", "Select several rows (for Copy as Markdown)", "History list")]
    return out


class FrameActions(QObject):
    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self.prefs = settings.load()
        self._build_edit()
        self._build_view()
        self._build_go()
        self._build_help()
        self._build_request()
        self._icons()
        self.confirm = confirm_link            # replaceable (tests)
        self.opener = None                     # replaceable (tests); default QDesktopServices.openUrl
        win.view.linkRequested.connect(self.open_link)
        win.tour = None
        # the first session opened starts the tour (once ever; SESSION_LENS_NO_TOUR=1: never)
        self.tour_enabled = not os.environ.get("SESSION_LENS_NO_TOUR")
        win.sessionLoaded.connect(self._maybe_tour)
        from .summary_refresh import SummaryRefresh
        self.summary_refresh = SummaryRefresh(win)
        font = self.prefs.get("fontSize")
        if isinstance(font, (int, float)):
            self.set_font_size(float(font), save=False)

    # ------------------------------------------------------------------ Edit
    def _build_edit(self):
        win = self.win
        em = win.menu("Edit")
        ha = win.history_actions
        self.act_copy = ha.act_copy
        self.act_copy.setText("&Copy")
        self.act_copy.setShortcut(QKeySequence.StandardKey.Copy)
        self.act_copy.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.act_copy_md = action("Copy as &Markdown", win, self.copy_markdown, "Ctrl+Shift+C")
        self.act_copy_md.setStatusTip("The selected rows (or the current message) as Markdown")
        self.act_copy_md.setProperty("contextMenu", True)
        win.view.addAction(self.act_copy_md)
        for a in (self.act_copy, self.act_copy_md, None, ha.act_find, ha.act_find_older, ha.act_find_newer):
            em.addSeparator() if a is None else em.addAction(a)

    def copy_markdown(self) -> str:
        rows = self.win.view.selected_rows()
        if not rows:
            return ""
        text = rows_markdown(rows)
        QApplication.clipboard().setText(text)
        n = len(rows)
        self.win.statusBar().showMessage(f"Copied {n} row{'s' if n != 1 else ''} as Markdown", 3000)
        return text

    # ------------------------------------------------------------------ View
    def _build_view(self):
        win = self.win
        vm = win.menu("View")
        vm.addSeparator()
        tm = vm.addMenu("&Theme")
        group = QActionGroup(win)
        self.theme_actions = {}
        for mode, label in (("auto", "&System"), ("light", "&Light"), ("dark", "&Dark")):
            a = action(label, win, checkable=True)
            a.setChecked(win.theme_mode == mode)
            a.triggered.connect(lambda _=False, m=mode: self.set_theme(m))
            group.addAction(a)
            tm.addAction(a)
            self.theme_actions[mode] = a
        self.act_bigger = action("&Bigger text", win, lambda: self.step_font(+1), QKeySequence.StandardKey.ZoomIn)
        self.act_smaller = action("&Smaller text", win, lambda: self.step_font(-1), QKeySequence.StandardKey.ZoomOut)
        self.act_font_reset = action("&Normal text size", win, lambda: self.set_font_size(None), "Ctrl+0")
        for a in (self.act_bigger, self.act_smaller, self.act_font_reset):
            vm.addAction(a)
        vm.addSeparator()
        self.act_markdown = action("Render &Markdown in messages", win, None, "Ctrl+M", True, self.set_markdown)
        self.act_markdown.setToolTip("On: headings, lists, emphasis, code and tables drawn (no HTML, no images; "
                                     "links open only after you confirm). Off: the raw text.")
        self.act_markdown.setChecked(bool(self.prefs.get("markdown", True)))
        vm.addAction(self.act_markdown)

    def _tint_arrows(self):
        """The standard arrow icons are black: drawn in the theme's text colour instead, so
        they stay visible on a dark toolbar."""
        from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
        st, P = self.win.style(), QStyle.StandardPixmap
        for act, px in ((self.win.history_actions.act_prev_turn, P.SP_ArrowUp),
                        (self.win.history_actions.act_next_turn, P.SP_ArrowDown)):
            pm = QPixmap(st.standardIcon(px).pixmap(32, 32))
            p = QPainter(pm)
            p.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceIn)
            p.fillRect(pm.rect(), QColor(self.win.theme.fg))
            p.end()
            act.setIcon(QIcon(pm))

    def set_theme(self, mode: str):
        self.win.set_theme_mode(mode)
        self._tint_arrows()
        for m, a in self.theme_actions.items():
            a.setChecked(m == mode)
        settings.update(theme=mode)

    def _base_font(self):
        return QApplication.font().pointSizeF() if QApplication.instance() else 10.0

    def font_size(self) -> float:
        return self.win.view.font().pointSizeF()

    def step_font(self, d: int):
        self.set_font_size(self.font_size() + d)

    def set_font_size(self, size, save: bool = True):
        win = self.win
        size = self._base_font() if size is None else max(FONT_MIN, min(FONT_MAX, float(size)))
        for w in (win.view, win.inspector):
            f = w.font()
            f.setPointSizeF(size)
            w.setFont(f)
        win.view.set_theme(win.theme)
        win.inspector.set_theme(win.theme)
        if save:
            settings.update(fontSize=size)

    def set_markdown(self, on: bool):
        self.win.view.delegate.set_markdown(bool(on))
        self.win.view.relayout()
        settings.update(markdown=bool(on))

    def _maybe_tour(self):
        if self.tour_enabled and self.win.history.reader is not None and self.win.isVisible():
            from .tour import maybe_start
            ha = self.win.history_actions
            maybe_start(self.win, [ha.act_physical, ha.act_attempts, self.act_request])

    def open_link(self, href: str) -> bool:
        """A link clicked in a message: opened only after the confirmation shows its target."""
        if not self.confirm(self.win, href):
            return False
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices
        (self.opener or QDesktopServices.openUrl)(QUrl(href))
        return True

    def update_summary(self):
        """The inspector's session summary (shown while no row is selected), now; it also follows
        the loaded pages and the whole log's figures by itself (``summary_refresh``)."""
        self.summary_refresh.refresh()

    # ------------------------------------------------------------------ geometry
    def restore_geometry(self):
        """The window's geometry and state (maximized, its screen) as Qt saved them last time
        (``saveGeometry``); an older settings file's four numbers are still read."""
        saved = settings.load().get("windowGeometry")
        if isinstance(saved, str):
            try:
                blob = base64.b64decode(saved.encode("ascii"), validate=True)
            except (ValueError, UnicodeError):
                blob = b""
            if blob and self.win.restoreGeometry(QByteArray(blob)):
                return
        g = settings.load().get("geometry")
        if isinstance(g, list) and len(g) == 4 and all(isinstance(x, int) for x in g):
            x, y, w, h = g
            self.win.resize(max(640, w), max(400, h))
            self.win.move(x, y)

    def save_geometry(self):
        win = self.win
        if not win.isMinimized():
            blob = bytes(win.saveGeometry().data())
            settings.update(windowGeometry=base64.b64encode(blob).decode("ascii"))

    # ------------------------------------------------------------------ Go
    def _build_go(self):
        win = self.win
        go = getattr(win, "go_actions", None)
        if go is not None:          # the Go menu is built (start/end through page jumps, turns, errors)
            self.act_start, self.act_end = go.act_start, go.act_end
            return
        gm = win.menu("Go")
        have = {a.text().replace("&", "") for a in gm.actions()}
        ha = win.history_actions
        self.act_start = action("&Start of log", win, lambda: win.goto_seq(0), "Ctrl+Home")
        self.act_end = action("&End of log", win, self.goto_end, "Ctrl+End")
        for a in (self.act_start, self.act_end):
            if a.text().replace("&", "") not in have:           # the find/outline work may add them first
                gm.addAction(a)
        gm.addSeparator()
        for a in (ha.act_prev_turn, ha.act_next_turn):
            gm.addAction(a)

    def goto_end(self):
        h = self.win.history
        h.show_tail()
        if h.rowCount():
            self.win.select_row(h.rowCount() - 1)
            self.win.view.scrollToBottom()

    # ------------------------------------------------------------------ Help
    def _build_help(self):
        win = self.win
        self.act_shortcuts = action("&Keyboard shortcuts", win, self.show_shortcuts, "F1")
        win.help_menu.insertAction(win.act_about, self.act_shortcuts)

    def show_shortcuts(self) -> ShortcutsDialog:
        for d in self.win.findChildren(ShortcutsDialog):
            if d.isVisible():
                d.raise_()
                return d
        d = ShortcutsDialog(self.win)
        d.show()
        return d

    # ------------------------------------------------------------------ Show request
    def _build_request(self):
        win = self.win
        self.act_request = action("Show &request", win, self.show_request, "Ctrl+R")
        self.act_request.setStatusTip("The exact request sent at this row's dispatch boundary")
        self.act_request.setProperty("contextMenu", True)
        self.act_request.setEnabled(win.history.path is not None)     # (history_actions.set_enabled follows)
        win.view.addAction(self.act_request)
        tools = getattr(getattr(win, "audit_action", None), "tools_menu", None)
        (tools or win.menu("Go")).addAction(self.act_request)
        fork = getattr(getattr(win, "fork_action", None), "action", None)
        if fork is not None:
            fork.setProperty("contextMenu", True)
            (tools or win.menu("Go")).addAction(fork)

    def show_request(self):
        self.win.show_request_tab()

    # ------------------------------------------------------------------ icons
    def _icons(self):
        win = self.win
        st = win.style()
        P = QStyle.StandardPixmap
        icons = [(win.file_actions.act_open, P.SP_DialogOpenButton), (win.file_actions.act_open_dir, P.SP_DirOpenIcon),
                 (win.file_actions.act_reload, P.SP_BrowserReload),
                 (win.history_actions.act_physical, P.SP_DriveHDIcon),
                 (win.history_actions.act_attempts, P.SP_MessageBoxWarning),
                 (win.history_actions.act_find, P.SP_FileDialogContentsView),
                 (win.history_actions.act_prev_turn, P.SP_ArrowUp), (win.history_actions.act_next_turn, P.SP_ArrowDown),
                 (self.act_request, P.SP_FileDialogDetailedView)]
        fork = getattr(getattr(win, "fork_action", None), "action", None)
        if fork is not None:
            icons.append((fork, P.SP_FileDialogNewFolder))
        for act, px in icons:
            act.setIcon(st.standardIcon(px))
        self._tint_arrows()
        self._toolbar(fork)

    def _toolbar(self, fork) -> None:
        """Show request beside the turn buttons (before Fork: a key capability stays in view);
        short labels, and the buttons that go icon-only when the window is narrow (toolbar_fit.py)."""
        from .toolbar_fit import ToolbarFit, label
        win, fa, ha = self.win, self.win.file_actions, self.win.history_actions
        tb = win.toolbar
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        if fork is not None and fork in tb.actions():
            tb.insertAction(fork, self.act_request)
        else:
            tb.addAction(self.act_request)
        label(fa.act_open, "Open file", "Open a session file")
        label(fa.act_open_dir, "Open folder", "Open a folder: a Harness home or a project")
        label(ha.act_find, "Find", "Find in this session")
        label(ha.act_prev_turn, "Previous turn")
        label(ha.act_next_turn, "Next turn")
        label(self.act_request, "Show request", "Show the exact request sent at the selected row's dispatch boundary")
        self.toolbar_fit = ToolbarFit(tb, [(fa.act_open, fa.act_open_dir), (ha.act_prev_turn, ha.act_next_turn)])


def confirm_link(parent, href: str) -> bool:
    """Ask before opening a link from a transcript: the full target, as plain text."""
    from PySide6.QtWidgets import QMessageBox
    from .history.markdown import link_allowed
    box = QMessageBox(parent)
    box.setObjectName("confirmLink")
    box.setWindowTitle("Open link?")
    box.setTextFormat(Qt.TextFormat.PlainText)
    if not link_allowed(href):
        box.setIcon(QMessageBox.Icon.Warning)
        box.setText("This link is not a web or mail address and is not opened:\n\n" + href)
        box.setStandardButtons(QMessageBox.StandardButton.Close)
        box.exec()
        return False
    box.setText("A message in this session links to:\n\n" + href + "\n\nOpen it in your browser?")
    box.setStandardButtons(QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box.exec() == QMessageBox.StandardButton.Open
