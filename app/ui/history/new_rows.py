"""The "new rows below" marker of a live session (a widget over the history's bottom edge).

While a writer appends and the reader has scrolled up, the view keeps its place (the new rows
are not followed); the marker says how many arrived below, and a click goes to them.  It goes
away once the view is at the bottom again (or another session opens).
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QToolButton


class NewRowsMarker(QToolButton):
    def __init__(self, view):
        super().__init__(view)
        self.view = view
        self.count = 0
        self._following = True
        self.setObjectName("newRowsMarker")
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.setStyleSheet("QToolButton#newRowsMarker { background: palette(highlight); color: palette(highlighted-text);"
                           " border-radius: 10px; padding: 3px 12px; font-weight: bold; }")
        self.clicked.connect(self.go_down)
        self.hide()
        view.verticalScrollBar().valueChanged.connect(self._on_scroll)
        self._watch = _Resized(self)
        view.viewport().installEventFilter(self._watch)

    def bind(self, model) -> None:
        self._batches = 0
        model.liveAboutToAppend.connect(self._before)
        model.liveAppended.connect(self._after)
        model.statsChanged.connect(self._on_stats)       # (also batches that went to rows kept out of view)
        model.modelReset.connect(self.clear)

    def _before(self) -> None:
        m = self.view.hmodel()
        self._following = self.view.at_bottom() and m is not None and not m.newer_hidden

    def _after(self, added: int) -> None:
        if not self._following and added > 0:
            self.count += added

    def _on_stats(self) -> None:
        m = self.view.hmodel()
        feed = getattr(m, "feed", None)
        batches = feed.stats.get("batches", 0) if feed is not None else 0
        if batches == self._batches:
            return
        self._batches = batches
        if (self._following or self.view.at_bottom()) and not m.newer_hidden and not self.count:
            return                                 # following the tail (scrolled along): nothing to say
        n = self.count
        self.setText(f"▼ {n:,} new row{'s' if n != 1 else ''} below" if n else "▼ new rows below")
        self.adjustSize()
        self.place()
        self.show()
        self.raise_()

    def place(self) -> None:
        vp = self.view.viewport()
        g = vp.geometry()
        self.move(g.x() + (g.width() - self.width()) // 2, g.y() + g.height() - self.height() - 10)

    def _on_scroll(self, _v: int) -> None:
        m = self.view.hmodel()
        if not self.view.at_bottom():
            self._following = False
        if self.isVisible() and self.view.at_bottom() and (m is None or not m.newer_hidden):
            self.clear()

    def clear(self) -> None:
        self.count = 0
        self.hide()
        m = self.view.hmodel()
        feed = getattr(m, "feed", None) if m is not None else None
        self._batches = feed.stats.get("batches", 0) if feed is not None else 0

    def go_down(self) -> None:
        m = self.view.hmodel()
        if m is not None and m.newer_hidden:
            m.show_tail()
        self.view.scrollToBottom()
        self.clear()


class _Resized(QObject):
    def __init__(self, marker: NewRowsMarker):
        super().__init__(marker)
        self.marker = marker

    def eventFilter(self, obj, e):                                      # noqa: N802 (Qt name)
        if e.type() == QEvent.Type.Resize and self.marker.isVisible():
            self.marker.place()
        return False
