"""First-run tour: three short hints the first time a session is opened (faces, hidden
attempts, request), each next to the control it explains; dismissible at any step and
shown once (remembered in the settings file)."""
from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

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


class Tour(QFrame):
    def __init__(self, win, anchors: list):
        super().__init__(win)
        self.setObjectName("tour")
        self.win = win
        self.anchors = anchors            # a toolbar action per hint (the bubble sits under its button)
        self.step = 0
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        lay = QVBoxLayout(self)
        self.title = QLabel("")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        self.body = QLabel("")
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        self.body.setFixedWidth(320)
        row = QHBoxLayout()
        self.count = QLabel("")
        self.skip = QPushButton("Skip tour")
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

    def place(self):
        act = self.anchors[self.step] if self.step < len(self.anchors) else None
        btn = self.win.toolbar.widgetForAction(act) if act is not None else None
        if btn is not None and btn.isVisible():
            p = btn.mapTo(self.win, QPoint(0, btn.height() + 6))
        else:
            p = QPoint(self.win.width() // 2 - self.width() // 2, 80)
        x = max(8, min(p.x(), self.win.width() - self.width() - 8))
        self.move(x, p.y())

    def advance(self):
        if self.step >= len(HINTS) - 1:
            self.finish()
            return
        self.step += 1
        self._show_step()

    def finish(self):
        settings.update(tourSeen=True)
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
