"""First-run tour: three short hints the first time a session is opened (faces, hidden
attempts, request), each near the control it explains; dismissible at any step (Skip tour,
or Esc anywhere in the window but in a part the user opened that Esc closes: the find bar
closes first, the next Esc ends the tour) and shown once (remembered in the settings file).

Where the bubble goes (:func:`place_bubble`, pure geometry): as near its toolbar button as it
can be without covering what it talks about: never the top of the history (the truth chip and
its first visible rows, :func:`history_top`), the button itself or the toolbar.  It prefers the
side panels (the session list beside the first two buttons, the inspector below its tabs for
the third), then lower in the history, then the bottom corner of the window."""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from . import settings

HINTS = (
    ("Two faces of the tail",
     "“Physical tail” shows exactly the rows stored on disk. Off (the default), you see the logical tail: "
     "what the model saw, with an interrupted last turn closed by marked, synthesized rows."),
    ("Hidden attempts",
     "Model calls that failed and were retried are hidden, as in the agent. Turn on “Hidden attempts” to "
     "see them in place, with why they failed."),
    ("The exact request",
     "Select an assistant or step row and choose “Show request” (Ctrl+R, or the row's menu) to see the "
     "request sent at that point: system prompt, tools and messages."),
)
BODY_WIDTH = 300          # the hint's text column (px): the bubble fits beside the history at 1,200 px
FIRST_ROWS = 3            # the history's first visible rows the bubble never covers
MARGIN = 8


def _in_win(win: QWidget, w: QWidget, r: Optional[QRect] = None) -> QRect:
    """``r`` (``w``'s own rect by default), in ``win``'s coordinates."""
    r = w.rect() if r is None else r
    return QRect(w.mapTo(win, r.topLeft()), r.size())


def history_top(win) -> QRect:
    """The top of the history in window coordinates: from the top of its column (banner, truth
    chip) to the bottom of its FIRST_ROWS-th visible row (at least a third of the list)."""
    view = win.view
    vp = view.viewport()
    col = view.parentWidget()
    top = _in_win(win, col).top() if col is not None else _in_win(win, vp).top()
    bottom = vp.height() // 3
    first = view.indexAt(QPoint(4, 1))
    if first.isValid():
        r = first.row()
        last = min(view.model().rowCount() - 1, r + FIRST_ROWS - 1)
        bottom = max(bottom, view.visualRect(view.model().index(last, 0)).bottom())
    area = _in_win(win, vp)
    return QRect(area.left(), top, area.width(), min(area.bottom(), area.top() + bottom) - top + 1)


def _free(win) -> QRect:
    """The window's central area (below the toolbar, above the status bar)."""
    c = win.centralWidget()
    r = _in_win(win, c) if c is not None else win.rect()
    return r.adjusted(MARGIN, MARGIN, -MARGIN, -MARGIN)


def candidates(win, size: QSize) -> list:
    """Places for a bubble of ``size`` (top-left points), best tier first: over the side panels,
    in the history below its first rows, in the bottom corners of the window."""
    w, h = size.width(), size.height()
    free = _free(win)
    side = []
    panel = win.split.widget(0)                                       # the session list's column
    if panel.isVisible() and panel.width() >= w + 2 * MARGIN:         # over it, on its right
        r = _in_win(win, panel)
        side.append(QPoint(r.right() - MARGIN - w, r.top() + MARGIN))
    tabs = win.tabs
    if tabs.isVisible() and tabs.width() >= w + 2 * MARGIN:           # over the inspector, below its tabs
        r = _in_win(win, tabs)
        bar = tabs.tabBar().height()
        side.append(QPoint(r.left() + MARGIN, r.top() + bar + MARGIN + 28))
    top = history_top(win)
    return [side, [QPoint(top.left() + MARGIN, top.bottom() + MARGIN)],
            [QPoint(free.right() - w, free.bottom() - h), QPoint(free.left(), free.bottom() - h)]]


def place_bubble(win, size: QSize, anchor: Optional[QRect]) -> QPoint:
    """Top-left of the bubble: in the first tier of :func:`candidates` that has one, the place
    nearest ``anchor`` (window coordinates) that lies in the central area and covers neither the
    history's top nor the anchor; the bottom-right corner if none does."""
    free = _free(win)
    avoid = [history_top(win)] + ([anchor] if anchor is not None else [])
    goal = anchor.center() if anchor is not None else QPoint(free.center().x(), free.top())
    for tier in candidates(win, size):
        best, best_d = None, None
        for p in tier:
            r = QRect(p, size)
            if not free.contains(r) or any(r.intersects(a) for a in avoid):
                continue
            d = (r.center() - goal).manhattanLength()
            if best_d is None or d < best_d:
                best, best_d = p, d
        if best is not None:
            return best
    return QPoint(max(free.left(), free.right() - size.width()), max(free.top(), free.bottom() - size.height()))


ESC_CLOSES = "escCloses"     # widget property: while True (and shown), Esc inside it closes it


def esc_closes_inner(w: QWidget) -> bool:
    """Whether ``w`` (the focus widget) sits in a part the user opened that Esc closes (the
    find bar, the results of Search all sessions: they set ``ESC_CLOSES``): Esc closes that
    first, innermost first, and the tour stays for the next Esc."""
    p: Optional[QWidget] = w
    while p is not None and not p.isWindow():
        if p.property(ESC_CLOSES) is True and p.isVisible():
            return True
        p = p.parentWidget()
    return False


class Tour(QFrame):
    def __init__(self, win, anchors: list):
        super().__init__(win)
        self.setObjectName("tour")
        self.win = win
        self.anchors = anchors            # a toolbar action per hint (the bubble sits near its button)
        self.step = 0
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setStyleSheet("QFrame#tour { background: palette(base); border: 1px solid palette(highlight);"
                           " border-radius: 4px; }")
        lay = QVBoxLayout(self)
        self.title = QLabel("")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        self.body = QLabel("")
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        self.body.setFixedWidth(BODY_WIDTH)
        row = QHBoxLayout()
        self.count = QLabel("")
        self.skip = QPushButton("Skip tour")
        self.skip.setToolTip("Esc")
        self.next = QPushButton("Next")
        self.next.setDefault(True)
        row.addWidget(self.count)
        row.addStretch(1)
        row.addWidget(self.skip)
        row.addWidget(self.next)
        for w in (self.title, self.body):
            lay.addWidget(w)
        lay.addLayout(row)
        self.skip.clicked.connect(self.finish)
        self.next.clicked.connect(self.advance)
        # Esc anywhere in the window ends the tour (the key goes to the focus widget, or to the
        # window when none has focus: only those two are watched, not every event of the app);
        # a resize or a moved splitter places the bubble again
        self._watched: Optional[QWidget] = None
        self._done = False
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._focus_changed)
            self._watch(app.focusWidget())
        win.installEventFilter(self)
        win.split.splitterMoved.connect(self._replace)
        self._show_step()

    def _show_step(self):
        t, b = HINTS[self.step]
        self.title.setText(t)
        self.body.setText(b)
        self.count.setText(f"{self.step + 1} of {len(HINTS)}")
        self.next.setText("Done" if self.step == len(HINTS) - 1 else "Next")
        self.adjustSize()
        self.place()
        self.show()
        self.raise_()

    def anchor_rect(self) -> Optional[QRect]:
        """The current hint's toolbar button, in window coordinates (None: not shown)."""
        act = self.anchors[self.step] if self.step < len(self.anchors) else None
        btn = self.win.toolbar.widgetForAction(act) if act is not None else None
        if btn is None or not btn.isVisible():
            return None
        return _in_win(self.win, btn)

    def place(self):
        self.move(place_bubble(self.win, self.size(), self.anchor_rect()))

    def _replace(self, *_):
        if self.isVisible():
            QTimer.singleShot(0, self, self.place)       # after the layout settled

    def _watch(self, w: Optional[QWidget]) -> None:
        if self._watched is not None:
            try:
                self._watched.removeEventFilter(self)
            except RuntimeError:            # (deleted meanwhile)
                pass
        self._watched = None
        if w is not None and not self._done and w.window() is self.win and w is not self.win:
            w.installEventFilter(self)
            self._watched = w

    def _focus_changed(self, _old, new) -> None:
        if not self._done:
            self._watch(new)

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        t = e.type()
        if obj is self.win and t in (QEvent.Type.Resize, QEvent.Type.LayoutRequest):
            self._replace()
        elif t in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) and isinstance(e, QKeyEvent) \
                and self.isVisible() and isinstance(obj, QWidget) and obj.window() is self.win \
                and e.key() == Qt.Key.Key_Escape and e.modifiers() == Qt.KeyboardModifier.NoModifier \
                and not esc_closes_inner(QApplication.focusWidget() or obj):   # (the key climbs to the window)
            if t == QEvent.Type.ShortcutOverride:
                e.accept()                 # the key comes as a key press (no Esc shortcut takes it first)
            else:
                self.finish()
            return True
        return super().eventFilter(obj, e)

    def advance(self):
        if self.step >= len(HINTS) - 1:
            self.finish()
            return
        self.step += 1
        self._show_step()

    def finish(self):
        settings.update(tourSeen=True)
        self._done = True
        self._watch(None)
        self.win.removeEventFilter(self)
        self.hide()
        self.deleteLater()
        if getattr(self.win, "tour", None) is self:
            self.win.tour = None


def maybe_start(win, anchors: list):
    """Start the tour unless it was seen (or is showing)."""
    if getattr(win, "tour", None) is not None or settings.load().get("tourSeen"):
        return None
    win.tour = Tour(win, anchors)
    return win.tour
