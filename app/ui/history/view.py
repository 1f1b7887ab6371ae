"""The history list: a QListView (virtualized) with a row delegate.

* Newest row at the bottom; scrolling near the top asks the model for an older page.
* When rows are prepended (or the model is reset by a face toggle) the view keeps the
  row that was at the top of the viewport at the same pixel position, so the content
  does not jump; a view that was at the bottom stays at the bottom on a reset.
* The selection stays on its row when the user scrolls far away from it: a trimmed current
  or selected row is *parked* (:mod:`app.ui.history.parking`), not moved to a neighbour.
"""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QApplication, QListView, QMenu

from ...log.query.textview import fold_spans
from .delegate import HistoryDelegate, row_of
from .frames import FrameKeeper
from .model import HistoryModel
from .new_rows import NewRowsMarker
from .parking import SelectionParking
from .rows import Row
from .warm import RowWarmer
from ..theme import Theme




AFTER_PAINT_MS = 200   # after_paint work waits at most this long for a paint
# keys that move the current row: with the current row parked (scrolled out of the view) they
# start from it, brought back into the view first
_NAV_KEYS = frozenset((Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown))


class HistoryView(QListView):
    rowsPainted = Signal()            # first paint after a tail install
    copyRequested = Signal(str)       # what = text | raw | seq
    rowActivated = Signal(int)
    linkRequested = Signal(str)       # a Markdown link clicked (the window confirms before opening)

    def __init__(self, theme: Theme, parent=None):
        super().__init__(parent)
        self.setObjectName("history")
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # always on: a scroll bar appearing would re-wrap every row and move the anchor
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setUniformItemSizes(False)
        self.setLayoutMode(QListView.LayoutMode.SinglePass)
        # Shift/Ctrl-click select several rows (Copy as Markdown); a plain click selects one
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setWordWrap(True)
        self.setSpacing(0)
        self.setMouseTracking(False)
        self.verticalScrollBar().setSingleStep(24)
        self.delegate = HistoryDelegate(self, theme)
        self.setItemDelegate(self.delegate)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._context_menu)
        self._anchor: Optional[tuple] = None
        self.parking = SelectionParking(self)     # the selection while it is scrolled out of the view
        self._batch_anchor: Optional[tuple] = None
        self.frames = FrameKeeper(self)           # a prepend that changes nothing on screen repaints nothing
        self._scroll_at = 0
        self._painted = True
        self._follow_bottom = True
        self._live_follow = False
        self.verticalScrollBar().valueChanged.connect(self._on_scroll)
        self.delegate.sizeHintChanged.connect(self.frames.dirty)
        self._fill_timer = QTimer(self)
        self._fill_timer.setSingleShot(True)
        self._fill_timer.setInterval(0)
        self._fill_timer.timeout.connect(self._maybe_fetch_older)
        self._bottom_timer = QTimer(self)
        self._bottom_timer.setSingleShot(True)
        self._bottom_timer.setInterval(0)
        self._bottom_timer.timeout.connect(self.scrollToBottom)
        self._newer_timer = QTimer(self)
        self._newer_timer.setSingleShot(True)
        self._newer_timer.setInterval(0)
        self._newer_timer.timeout.connect(self._maybe_show_newer)
        # idle time: documents and heights of the loaded rows next to the window, built a few
        # at a time, so exposing them (scrolling) lays out cached rows
        self.warmer = RowWarmer(self)
        self._after_paint: list = []         # after_paint: run once the view has painted
        self._after_paint_timer = QTimer(self)
        self._after_paint_timer.setSingleShot(True)
        self._after_paint_timer.setInterval(AFTER_PAINT_MS)
        self._after_paint_timer.timeout.connect(self._run_after_paint)
        self.new_rows = NewRowsMarker(self)  # "▼ N new rows below" while a live session grows out of view

    # ------------------------------------------------------------------ model hookup
    def setModel(self, model: Optional[QAbstractItemModel]) -> None:
        super().setModel(model)
        if not isinstance(model, HistoryModel):
            return
        model.prepare_rows = self.delegate.warm              # rows slid in: documents built first, in slices
        model.after_paint, model.keeps_rows = self.after_paint, self.parking.parked   # (a parked row's page stays)
        model.prependAhead.connect(self._before_batch)
        model.rowsLeaving.connect(self.parking.park)
        model.changesApplied.connect(self.parking.unpark)
        self.selectionModel().currentChanged.connect(self.parking.on_current)
        self.parking.forget()
        model.rowsAboutToBeInserted.connect(self._before_insert)
        model.rowsInserted.connect(self._after_insert)
        model.rowsAboutToBeRemoved.connect(self._before_insert)
        model.rowsRemoved.connect(self._after_insert)
        model.modelAboutToBeReset.connect(self._before_reset)
        model.modelReset.connect(self._after_reset)
        model.tailInstalled.connect(self._on_tail)
        model.loadingChanged.connect(lambda on: on or self._fill_timer.start())   # (at value 0 no scroll asks again)
        model.findChanged.connect(self.viewport().update)
        for sig in (model.dataChanged, model.modelReset, model.layoutChanged, model.findChanged,
                    self.selectionModel().selectionChanged, self.selectionModel().currentChanged):
            sig.connect(self.frames.dirty)
        model.liveAboutToAppend.connect(self._live_before)
        model.liveAppended.connect(self._live_after)
        self.new_rows.bind(model)
        for sig in (model.olderInstalled, model.newerInstalled, model.jumped, model.tailInstalled, model.opened,
                    model.surfaceReady, model.faceChanged, model.modelReset):
            sig.connect(lambda *_a: self.warmer.timer.start())        # rows new or touched

    def hmodel(self) -> Optional[HistoryModel]:
        """The history model shown (None before one is set)."""
        m = self.model()
        return m if isinstance(m, HistoryModel) else None

    def set_theme(self, theme: Theme) -> None:
        self.delegate.set_theme(theme)
        self.relayout()

    def relayout(self) -> None:
        self.delegate.clear_cache()
        self.scheduleDelayedItemsLayout()
        self.viewport().update()

    def resizeEvent(self, e):
        self.frames.dirty()
        at_bottom = self.at_bottom()
        self.delegate.viewport_resized(self.viewport().width())
        if e.oldSize().isValid() and e.oldSize().width() == e.size().width():
            # only the height changed (the find bar or a dock opened): row heights depend on the
            # width alone, so no re-layout of every row (QListView schedules one for word wrap)
            QAbstractItemView.resizeEvent(self, e)
        else:
            super().resizeEvent(e)
        if at_bottom:
            self._bottom_timer.start()

    def settled(self) -> bool:
        """No page load, older-page check or stick-to-bottom pending (tests, screenshots)."""
        m = self.hmodel()
        return not (self._fill_timer.isActive() or self._bottom_timer.isActive() or self._newer_timer.isActive()
                    or (m is not None and m.loading))

    # ------------------------------------------------------------------ anchors
    def at_bottom(self) -> bool:
        sb = self.verticalScrollBar()
        return sb.value() >= sb.maximum() - 2

    def _top_anchor(self):
        m = self.hmodel()
        if m is None or m.rowCount() == 0:
            return None
        idx = self.indexAt(QPoint(8, 2))
        if not idx.isValid():
            idx = self.indexAt(QPoint(8, self.viewport().height() // 2))
        if not idx.isValid():
            return None
        row = row_of(idx)
        return (row.key, self.visualRect(idx).top())

    # ------------------------------------------------------------------ live rows
    def _live_before(self):
        """Live rows are coming: a reader at the bottom keeps following, anyone else stays
        exactly where they are reading."""
        m = self.hmodel()
        self._live_follow = self.at_bottom() and m is not None and not m.newer_hidden

    def _live_after(self, _added: int):
        follow, self._live_follow = self._live_follow, False
        if follow:
            self.doItemsLayout()
            self.scrollToBottom()

    def _before_batch(self):
        """Rows are trimmed at the bottom, then prepended (one change batch): the anchor is taken
        before the trim (afterwards ``indexAt`` would lay every row out first)."""
        self._batch_anchor = ("prepend", self._top_anchor(), self.at_bottom())
        self.frames.take()

    def _before_insert(self, parent: QModelIndex, first: int, last: int):
        if first == 0:
            a, self._batch_anchor = self._batch_anchor, None
            if not self._live_follow:
                self._anchor = a if a is not None else ("prepend", self._top_anchor(), self.at_bottom())
                if a is None:
                    self.frames.take()

    def scrollContentsBy(self, dx: int, dy: int) -> None:
        if self.frames.anchoring:                # the anchor's own shift: nothing moves on screen
            return
        self.frames.dirty()
        super().scrollContentsBy(dx, dy)


    def _after_insert(self, parent: QModelIndex, first: int, last: int):
        if first == 0 and self._anchor is not None:
            self._restore(self._anchor)
            self._anchor = None

    def _before_reset(self):
        sel_row = self.current_row()
        sel_key = sel_row.key if sel_row is not None else None
        self.parking.before_reset(sel_row)
        self._anchor = ("reset", self._top_anchor(), self.at_bottom(), sel_key)

    def _after_reset(self):
        self.delegate.render_whole = False       # (a first paint of new rows: drawn directly)
        a = self._anchor
        self._anchor = None
        self.parking.unpark()
        if a is None:
            return
        self._restore(a)

    def _restore(self, a):
        kind, top, at_bottom = a[0], a[1], a[2]
        self.doItemsLayout()
        self.warmer.busy()
        if kind == "reset" and at_bottom:
            self.scrollToBottom()
            return
        if top is None:
            return
        key, y = top
        m = self.hmodel()
        r = m.row_for_key(key) if m is not None else None
        if m is None or r is None:
            return
        rect = self.visualRect(m.index(r, 0))
        sb = self.verticalScrollBar()
        if kind == "prepend":
            self.frames.anchor(sb, sb.value() + rect.top() - y)
        else:
            sb.setValue(sb.value() + rect.top() - y)
        self._fill_timer.start()

    def _on_tail(self):
        self._painted = False
        self.delegate.render_whole = False
        self.doItemsLayout()
        self.scrollToBottom()
        self._fill_timer.start()

    # ------------------------------------------------------------------ older pages
    def _threshold(self) -> int:
        return max(120, self.viewport().height() // 3)

    def _on_scroll(self, value: int):
        self.warmer.scroll_dir = value - self._scroll_at
        self._scroll_at = value
        self.warmer.start()                 # rows coming on screen: their pixmaps in idle time
        if value <= self._threshold():
            self._fill_timer.start()
        m = self.hmodel()
        if m is not None and m.newer_hidden and value >= self.verticalScrollBar().maximum() - self._threshold():
            self._newer_timer.start()

    def _maybe_show_newer(self):
        m = self.hmodel()
        if m is None or not m.newer_hidden:
            return
        sb = self.verticalScrollBar()
        if sb.value() >= sb.maximum() - self._threshold():
            m.request_newer()
            self._newer_timer.start()       # keep filling while the user stays at the bottom

    def _maybe_fetch_older(self):
        m = self.hmodel()
        if m is None or not m.has_more or m.loading:
            return
        if self.verticalScrollBar().value() <= self._threshold():
            m.request_older()

    # ------------------------------------------------------------------ GIL-friendly layout
    def doItemsLayout(self):
        """Enter layouts through Python: the many nested sizeHint calls then run with the
        GIL already held instead of re-acquiring it per row (a busy worker thread would
        make every acquisition wait up to the interpreter's switch interval)."""
        super().doItemsLayout()

    def updateGeometries(self):
        super().updateGeometries()

    # ------------------------------------------------------------------ paint hook
    def paintEvent(self, e):
        d = self.delegate
        if not self.frames.paint(e):             # (True: the backing store holds this frame)
            d.exposed = e.rect()
            super().paintEvent(e)
            d.exposed = None
            d.render_whole = True
            self.frames.clean = True
        if self._after_paint:
            self._run_after_paint()
        self.warmer.busy()
        if d.missed:                        # rows drawn without a pixmap: render theirs in idle time
            d.missed = 0
            self.warmer.start()
        if not self._painted and self.model() is not None and self.model().rowCount() > 0:
            self._painted = True
            self.rowsPainted.emit()

    def after_paint(self, fn) -> None:
        """Run ``fn`` on the loop turn after the view's next paint (a zero timer alone runs
        before it: paint requests are low-priority events), or within AFTER_PAINT_MS if the
        view does not paint (hidden)."""
        self._after_paint.append(fn)
        if not self._after_paint_timer.isActive():
            self._after_paint_timer.start()

    def _run_after_paint(self) -> None:
        self._after_paint_timer.stop()
        todo, self._after_paint = self._after_paint, []
        for fn in todo:
            QTimer.singleShot(0, self, fn)      # (the view as context: dropped if the window is gone)

    # ------------------------------------------------------------------ keys / menu
    def keyPressEvent(self, e):
        if e.matches(QKeySequence.StandardKey.Copy):
            self.copy_current("text")
            return
        if e.key() == Qt.Key.Key_Space and not e.modifiers() and self.toggle_expanded(self.currentIndex()):
            return
        if e.key() in _NAV_KEYS and self.parking.row is not None and not self.currentIndex().isValid():
            self.parking.bring_back()         # (then the key moves from the selected row, not from the window's edge)
        super().keyPressEvent(e)

    def toggle_expanded(self, ix, on: Optional[bool] = None) -> bool:
        """Expand a clipped row in place ("… N more lines"), or collapse an expanded one."""
        row = row_of(ix)
        if row is None:
            return False
        if not row.set_expanded((not row.expanded) if on is None else on):
            return False
        self.itemDelegate().sizeHintChanged.emit(ix)
        self.viewport().update()
        return True

    def mouseReleaseEvent(self, e):
        if e.button() == Qt.MouseButton.LeftButton and not e.modifiers():
            idx = self.indexAt(e.position().toPoint())
            href = self.delegate.anchor_at(idx, e.position().toPoint()) if idx.isValid() else ""
            if href:
                super().mouseReleaseEvent(e)
                self.linkRequested.emit(href)
                return
        # a click on the last lines of a clipped (or expanded) row: the "… N more lines" note
        ix = self.indexAt(e.position().toPoint())
        row = row_of(ix)
        if e.button() == Qt.MouseButton.LeftButton and row is not None and (row.expanded or row.clipped):
            rect = self.visualRect(ix)
            if rect.bottom() - e.position().y() <= 2.2 * self.fontMetrics().height() + 12:
                super().mouseReleaseEvent(e)
                self.toggle_expanded(ix)
                return
        super().mouseReleaseEvent(e)

    def scroll_to_text(self, ix, text: str) -> bool:
        """Scroll so that the first occurrence of ``text`` inside row ``ix`` is in the middle of
        the viewport (a match deep inside an expanded tool output)."""
        row = row_of(ix)
        if row is None or not text:
            return False
        doc = self.delegate.document(row, ix)
        from PySide6.QtGui import QTextCursor
        spans = fold_spans(doc.toPlainText(), text, 1, utf16=True)     # (as the row matched it: casefolded)
        if not spans:
            return False
        cur = QTextCursor(doc)
        cur.setPosition(spans[0][0])
        block = cur.block()
        line = block.layout().lineForTextPosition(spans[0][0] - block.position()) if block.layout() else None
        # the line inside its block: a tool output is one block of hundreds of lines
        y = doc.documentLayout().blockBoundingRect(block).top() + (line.y() if line is not None and line.isValid() else 0)
        self.doItemsLayout()
        rect = self.visualRect(ix)
        sb = self.verticalScrollBar()
        sb.setValue(int(sb.value() + rect.top() + y - self.viewport().height() / 2))
        return True

    def selected_rows(self) -> list:
        """Selected rows oldest first; the current row when nothing else is selected."""
        m = self.hmodel()
        idx = sorted(i.row() for i in self.selectionModel().selectedIndexes())
        got = [m.row_at(i) for i in idx] if m is not None else []
        rows: list[Row] = [r for r in got if r is not None]
        if self.parking.sel and m is not None:
            rows = sorted(rows + self.parking.sel, key=lambda r: m.window.row_ordinal(r) or 0)
        if not rows and self.current_row() is not None:
            rows = [self.current_row()]
        return rows

    def current_row(self):
        """The current row: the one selected in the view, or the parked one scrolled out of it."""
        idx = self.currentIndex()
        return row_of(idx) if idx.isValid() else self.parking.row

    def copy_current(self, what: str = "text") -> Optional[str]:
        row = self.current_row()
        if row is None:
            return None
        text = copy_text(row, what)
        QApplication.clipboard().setText(text)
        self.copyRequested.emit(what)
        return text

    def _context_menu(self, pos: QPoint):
        idx = self.indexAt(pos)
        if not idx.isValid():
            return
        self.setCurrentIndex(idx)
        menu = QMenu(self)
        for label, what in (("Copy text", "text"), ("Copy raw JSON row", "raw"), ("Copy seq", "seq")):
            act = QAction(label, menu)
            act.triggered.connect(lambda _=False, w=what: self.copy_current(w))
            menu.addAction(act)
        extra = [a for a in self.actions() if a.property("contextMenu")]   # e.g. Trace this row (audit_action)
        if extra:
            menu.addSeparator()
            menu.addActions(extra)
        menu.exec(self.viewport().mapToGlobal(pos))


def copy_text(row: Row, what: str) -> str:
    """What Copy puts on the clipboard for ``row``: its raw JSON row ("raw"), its seq ("seq") or
    its text (anything else)."""
    if what == "raw":
        if row.bad is not None:
            return row.bad.raw.decode("utf-8", errors="replace")
        if row.event is not None and row.event.raw:
            return row.event.raw.decode("utf-8", errors="replace")
        if row.event is not None:
            import json
            return json.dumps(row.event.envelope(), ensure_ascii=False)
        return ""
    if what == "seq":
        return "" if row.seq is None else str(row.seq)
    return row.copy_text()
