"""The same frame after a prepend (issue 15: scrolling older pages on shared cores).

Rows slid in above the screen (an older page while scrolling up) do not change what is on screen:
the view's anchor puts the same rows back at the same pixels.  Qt still blitted the viewport by the
anchor's shift and repainted all of it after the layout: 2-3 ms of every such loop turn, the
heaviest ones while scrolling.  A :class:`FrameKeeper` (one per
:class:`~app.ui.history.view.HistoryView`) lets the view skip both: the anchor's own scroll is not
blitted, and when the rows on screen, their places, heights, versions, selection, the current row,
the search term, the current match and the theme equal the frame taken before the change
(``take``), and nothing marked the viewport since the last paint (a scroll, a data change, a reset,
a selection, a resize, a size hint: ``dirty``), the next paint keeps the pixels already in the
window's backing store (the viewport is opaque for that one paint: nothing beneath it is drawn
either).  Anything else changes the signature or the flag, and the frame is painted as always.
"""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QPainter
from shiboken6 import getCppPointer


class FrameKeeper:
    def __init__(self, view):
        self.view = view
        self.clean = False              # the frame last painted is all on screen, unchanged since
        self.frame: Optional[tuple] = None   # ... what it showed, taken before rows are prepended
        self.anchoring = False          # the anchor's own scroll is running (not blitted)
        self.keep: Optional[tuple] = None    # the next paint may keep this frame
        self.kept = 0                   # full repaints skipped: the same rows at the same places

    def dirty(self, *_a) -> None:
        """The viewport is (or will be) drawn differently from the frame last painted."""
        self.clean = False

    def take(self) -> None:
        """Rows are about to be prepended (or removed at the top): what the screen shows now."""
        self.frame = self.signature() if self.clean else None

    def signature(self) -> Optional[tuple]:
        """What the viewport shows: the rows on it with their geometry and state."""
        v = self.view
        m = v.hmodel()
        if m is None or not v.isVisible():
            return None
        vp = v.viewport()
        vh = vp.height()
        top = v.indexAt(QPoint(8, 0))
        if not top.isValid():
            return None
        sel = v.selectionModel()
        cur = v.currentIndex().row()
        rows = []
        r, count = top.row(), m.rowCount()
        while r < count:
            ix = m.index(r, 0)
            rect = v.visualRect(ix)
            if rect.top() >= vh:
                break
            row = m.row_at(r)
            if row is None:
                return None
            rows.append((id(row), row.key, row.version, rect.top(), rect.height(), rect.width(),
                         sel is not None and sel.isSelected(ix), r == cur))
            r += 1
        if not rows or rows[-1][3] + rows[-1][4] < vh:
            return None                          # the frame shows background below the last row
        cm = getattr(m, "current_match_row", None)
        match = m.row_at(cm) if cm is not None else None
        return (vp.width(), vh, v.delegate.theme.generation, getattr(m, "find_term", ""),
                match.key if match is not None else None, tuple(rows))

    def anchor(self, sb, value: int) -> None:
        """Move the scroll bar to the anchor's ``value`` after a prepend: without a blit when the
        frame taken before may stay, and then mark the next paint to keep it if it is the same."""
        shown, self.frame = self.frame, None
        if shown is None or not self.clean:
            sb.setValue(value)
            return
        self.anchoring = True
        try:
            sb.setValue(value)
        finally:
            self.anchoring = False
        vp = self.view.viewport()
        if self.signature() == shown:
            self.keep = shown
            vp.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        else:
            self.clean = False
            vp.update()                          # (the blit was skipped: repaint it all)

    def paint(self, e) -> bool:
        """At the start of the view's paint: True when the paint goes to the window's backing
        store and that already holds this frame (nothing to draw).  A paint into anything else
        (``grab``, ``render``: a screenshot) draws as always."""
        keep, self.keep = self.keep, None
        if keep is None:
            return False
        vp = self.view.viewport()
        vp.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, False)
        p = QPainter(vp)
        try:
            bs = vp.window().backingStore()
            on_screen = bs is not None and getCppPointer(p.paintEngine().paintDevice())[0] == \
                getCppPointer(bs.paintDevice())[0]
            if on_screen and self.clean and self.signature() == keep:
                self.kept += 1
                return True
            p.fillRect(e.rect(), vp.palette().color(vp.backgroundRole()))   # (opaque: no background drawn)
            return False
        finally:
            p.end()
