"""Session list panel: filter box + lineage tree (fork and subagent children under parents)."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QLineEdit, QStyledItemDelegate,
                               QStyleOptionViewItem, QTreeView, QVBoxLayout, QWidget)

from .session_model import PROVISIONAL_ROLE, SessionFilterModel, SessionTreeModel


class ProvisionalTitleDelegate(QStyledItemDelegate):
    """Draws a provisional title (``PROVISIONAL_ROLE``) in italics."""

    def initStyleOption(self, option: QStyleOptionViewItem, index) -> None:
        super().initStyleOption(option, index)
        if index.data(PROVISIONAL_ROLE):
            option.font.setItalic(True)


class SessionPanel(QWidget):
    sessionActivated = Signal(object)     # SessionInfo

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMinimumWidth(340)            # a title column beside Updated, Project and Format
        self.model = SessionTreeModel(self)
        self.proxy = SessionFilterModel(self)
        self.proxy.setSourceModel(self.model)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.setSpacing(4)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter sessions (title, id, folder)")
        self.filter.setClearButtonEnabled(True)
        self.filter.setObjectName("sessionFilter")
        self._filter_timer = QTimer(self)
        self._filter_timer.setSingleShot(True)
        self._filter_timer.setInterval(120)
        self._filter_timer.timeout.connect(self._apply_filter)
        self.filter.textChanged.connect(lambda _t: self._filter_timer.start())
        lay.addWidget(self.filter)
        self.tree = QTreeView()
        self.tree.setObjectName("sessionTree")
        self.tree.setModel(self.proxy)
        self.tree.setItemDelegate(ProvisionalTitleDelegate(self.tree))
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)     # a long title keeps its start and end
        h = self.tree.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c, w in ((1, 84), (2, 64), (3, 56)):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.Interactive)
            self.tree.setColumnWidth(c, w)
        self.tree.selectionModel().currentChanged.connect(self._on_current)
        lay.addWidget(self.tree, 1)
        self.count = QLabel("")
        self.count.setTextFormat(Qt.TextFormat.PlainText)
        lay.addWidget(self.count)
        self.model.modelReset.connect(self._update_count)

    def clear_filter(self) -> None:
        """No filter (a newly opened store must show the session just opened)."""
        self._filter_timer.stop()
        self.filter.blockSignals(True)
        self.filter.clear()
        self.filter.blockSignals(False)
        self.proxy.set_needle("")
        self._update_count()

    def _apply_filter(self):
        self.proxy.set_needle(self.filter.text())
        if self.filter.text():
            self.tree.expandAll()
        self._update_count()

    def _update_count(self):
        n = self.model.session_count
        lst = self.model.listing
        kind = f" · {'single file' if lst.kind == 'file' else lst.kind}" if lst is not None else ""
        shown = ""
        if self.filter.text():
            shown = f" · filter: {self._visible_count()} shown"
        self.count.setText(f"{n} session{'s' if n != 1 else ''}{kind}{shown}")

    def _visible_count(self) -> int:
        def count(parent):
            c = 0
            for r in range(self.proxy.rowCount(parent)):
                ix = self.proxy.index(r, 0, parent)
                c += 1 + count(ix)
            return c
        return count(QModelIndex())

    def set_listing(self, listing, tree):
        self.model.set_listing(listing, tree)
        self.tree.expandToDepth(2)
        self._update_count()

    def _on_current(self, cur, prev):
        if not cur.isValid():
            return
        info = self._info(cur)
        if info is not None:
            self.sessionActivated.emit(info)

    def _info(self, proxy_index):
        """SessionInfo behind a proxy index (read from the node, not via ``.data()``)."""
        if not proxy_index.isValid():
            return None
        src = self.proxy.mapToSource(proxy_index)
        return self.model.info_at(src)

    def select_first(self):
        ix = self.proxy.index(0, 0)
        if ix.isValid():
            self.tree.setCurrentIndex(ix)

    def select_key(self, key) -> bool:
        src = self.model.index_for_key(key)
        if not src.isValid():
            return False
        ix = self.proxy.mapFromSource(src)
        if ix.isValid():
            self.tree.setCurrentIndex(ix)
            return True
        return False
