"""The history view's selection while it is scrolled out of the view ("parked"; no widgets built here).

The view holds a bounded slice of the loaded rows, so scrolling trims rows at the far end.  When
the current (or a selected) row is trimmed, Qt would move the current index to a neighbour at
every step, and the inspector, the "why" and the actions would follow it.  Instead the row is
*parked*: :class:`SelectionParking` takes it out of Qt's selection model with the signals blocked,
answers it as the current row (``HistoryView.current_row``/``selected_rows``) while it is out of
the view, and selects it again, quietly, when it is in the view again (scrolling back, a
re-centre).  An arrow or page key (and the previous/next turn keys: the controller) first brings
the parked row back (:meth:`SelectionParking.bring_back`) and moves from there.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from PySide6.QtCore import QItemSelection, QItemSelectionModel, QModelIndex

from .rows import Row

if TYPE_CHECKING:
    from .view import HistoryView

_SILENT = QItemSelectionModel.SelectionFlag.NoUpdate
_SELECT = QItemSelectionModel.SelectionFlag.Select
_DESELECT = QItemSelectionModel.SelectionFlag.Deselect


class SelectionParking:
    """The current row (``row``) and the selected rows (``sel``) of a view while they are out of it."""

    def __init__(self, view: HistoryView) -> None:
        self.view = view
        self.row: Optional[Row] = None            # the current row while it is out of the view
        self.sel: list[Row] = []                  # selected rows out of the view

    def parked(self) -> list[Row]:
        """The parked rows (the model never drops a page that holds one: ``app.ui.history.shed``)."""
        return ([self.row] if self.row is not None else []) + self.sel

    def forget(self) -> None:
        self.row, self.sel = None, []

    def before_reset(self, sel_row: Optional[Row]) -> None:
        """A model reset is coming (Qt clears the current index and the selection): park them."""
        if sel_row is not None and self.row is None:
            self.row = sel_row
        sm = self.view.selectionModel()
        m = self.view.hmodel()
        if sm is not None and sm.hasSelection() and m is not None:
            rows = [m.row_at(ix.row()) for ix in sm.selectedIndexes()]
            self.sel.extend(r for r in rows if r is not None and r is not sel_row
                            and all(r is not q for q in self.sel))

    def park(self, first: int, count: int) -> None:
        """Rows ``first``..``first+count-1`` are about to be trimmed (they stay loaded): a current or
        selected row among them is remembered and taken out of Qt's selection model quietly, so Qt
        does not move the current index to a neighbour (nothing else changes for the user)."""
        sm = self.view.selectionModel()
        m = self.view.hmodel()
        if sm is None or m is None:
            return
        cur = sm.currentIndex()
        hit_cur = cur.isValid() and first <= cur.row() < first + count
        sel = [ix for ix in sm.selectedIndexes() if first <= ix.row() < first + count] if sm.hasSelection() else []
        if not hit_cur and not sel:
            return
        was = sm.blockSignals(True)
        try:
            if sel:
                self.sel.extend(r for r in (m.row_at(ix.row()) for ix in sel) if r is not None)
                sm.select(QItemSelection(m.index(first, 0), m.index(first + count - 1, 0)), _DESELECT)
            if hit_cur:
                self.row = m.row_at(cur.row())
                sm.setCurrentIndex(QModelIndex(), _SILENT)
        finally:
            sm.blockSignals(was)

    def unpark(self) -> None:
        """Parked rows that are in the view again are selected again (quietly: nothing changed).
        Rows no longer loaded (another session, a jump) are forgotten; a current row replaced by
        another Row of the same key (a face switch) becomes current as that one (told: it is new)."""
        if self.row is None and not self.sel:
            return
        view = self.view
        sm = view.selectionModel()
        m = view.hmodel()
        if sm is None or m is None:
            return
        p = self.row
        if p is not None and m.row_index(p) is None and not m.is_loaded_row(p):
            self.row = None
            k = m.row_for_key(p.key)
            if k is not None:
                view.setCurrentIndex(m.index(k, 0))
        self.sel = [r for r in self.sel if m.is_loaded_row(r)]
        back: list[int] = []                  # exposed indexes of selected rows back in the view
        keep: list[Row] = []
        for r in self.sel:
            i = m.row_index(r)
            if i is None:
                keep.append(r)
            else:
                back.append(i)
        self.sel = keep
        i_cur = m.row_index(self.row) if self.row is not None else None
        if i_cur is None and not back:
            return
        was = sm.blockSignals(True)
        try:
            for i in back:
                ix = m.index(i, 0)
                sm.select(ix, _SELECT)
                view.update(ix)
            if i_cur is not None:
                self.row = None
                ix = m.index(i_cur, 0)
                sm.setCurrentIndex(ix, _SELECT)
                view.update(ix)
        finally:
            sm.blockSignals(was)
        view.frames.dirty()

    def on_current(self, cur: QModelIndex, _prev: QModelIndex) -> None:
        if cur.isValid():                     # a row made current (a click, a key, a go-to): not parked any more
            self.forget()

    def bring_back(self) -> bool:
        """The parked current row into the view again (the window moves there), selected."""
        m = self.view.hmodel()
        p = self.row
        if m is None or p is None:
            return False
        i = m.expose_row(p)
        if i is None:
            self.row = None                   # (no longer loaded)
            return False
        self.unpark()
        self.view.scrollTo(m.index(i, 0))
        return True
