"""Background children yield the cores while the user scrolls (issue 15/17: smooth scrolling on
2 shared cores).

The outline/problems pass reads the whole log in a child process (``app.store.scan_child``,
already at a low priority); on a machine with two cores it takes one of them for the whole pass,
right when the user scrolls through older pages and the window needs both (the UI thread, and
the page worker decoding the next page).  :class:`ScrollPause` stops such children
(:func:`~app.store.childproc.pause_background`) at the first scroll gesture and lets them go on
``IDLE_MS`` after the last one; a pass paused this way completes later, never differently.

Gestures are the scroll bar's *actions* (wheel, slider drag, page/step clicks and keys: what
``QAbstractSlider.actionTriggered`` reports) and key presses in the view, not every change of
the scroll position: the window moves it on its own to keep the rows in place when a page is
prepended, or to follow a live session, and that must not hold the pass back.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QTimer

from ..store.childproc import pause_background, resume_background

IDLE_MS = 300     # the background children go on this long after the last gesture


class ScrollPause(QObject):
    def __init__(self, view, parent=None):
        super().__init__(parent)
        self.active = False
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(IDLE_MS)
        self.timer.timeout.connect(self.resume)
        view.verticalScrollBar().actionTriggered.connect(self.poke)
        view.installEventFilter(self)

    def eventFilter(self, obj, e):
        if e.type() == QEvent.Type.KeyPress:
            self.poke()
        return False

    def poke(self, *_a) -> None:
        """A scroll gesture: stop the background children (once), and restart the idle timer."""
        if not self.active:
            self.active = True
            pause_background()
        self.timer.start()

    def resume(self) -> None:
        """The user stopped scrolling (or the window closes): the children go on."""
        self.timer.stop()
        if self.active:
            self.active = False
            resume_background()
