"""Session list panel: filter box + lineage tree (fork and subagent children under parents)."""
from __future__ import annotations

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QLineEdit, QStyledItemDelegate,
                               QStyleOptionViewItem, QTreeView, QVBoxLayout, QWidget)

from .session_model import DISTINCT_ROLE, PROVISIONAL_ROLE, SessionFilterModel, SessionTreeModel


def distinct_elide(fm, text: str, width: int, distinct: int) -> str:
    """``text`` fitted to ``width`` px keeping the part that tells it apart from the most alike
    other label (it starts at ``distinct``): "⤷ subagent · R…exactly WORKFLOW_CHILD_OK and"
    rather than a middle elision that hides it.  Plain middle elision when the start differs."""
    if fm.horizontalAdvance(text) <= width:
        return text
    if distinct < 16:
        return fm.elidedText(text, Qt.TextElideMode.ElideMiddle, width)
    head = text[:12].rstrip() + "…"
    cut = text.rfind(" ", 12, distinct) + 1 or distinct      # the word where the difference begins
    tail = text[max(12, cut):]
    room = width - fm.horizontalAdvance(head)
    if room < fm.horizontalAdvance("M" * 4):
        return fm.elidedText(text, Qt.TextElideMode.ElideMiddle, width)
    return head + fm.elidedText(tail, Qt.TextElideMode.ElideRight, room)


class _TitleDelegate(QStyledItemDelegate):
    """The Session column elided around the part that differs from the most alike title; a provisional
    title (``PROVISIONAL_ROLE``) in italics."""

    def initStyleOption(self, option: QStyleOptionViewItem, index) -> None:   # noqa: N802 (Qt name)
        super().initStyleOption(option, index)
        if index.data(PROVISIONAL_ROLE):
            option.font.setItalic(True)
        if index.column() != 0 or not option.text:
            return
        distinct = index.data(DISTINCT_ROLE) or 0
        width = option.rect.width() - 8 - (option.decorationSize.width() + 4 if not option.icon.isNull() else 0)
        option.text = distinct_elide(option.fontMetrics, option.text, max(20, width), int(distinct))


class SessionPanel(QWidget):
    sessionActivated = Signal(object)     # SessionInfo

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setMinimumWidth(220)            # narrow (a dock beside it): Format, then Project give way
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
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setTextElideMode(Qt.TextElideMode.ElideMiddle)     # a long title keeps its start and end
        self.tree.setItemDelegateForColumn(0, _TitleDelegate(self.tree))  # …and the part that differs
        h = self.tree.header()
        h.setStretchLastSection(False)
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in (1, 2, 3):                  # as wide as what they show; the title takes the rest
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
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
        m = self.model
        self._one_project = len({m.data(m.index_for_key(i.key).siblingAtColumn(2)) for i in m.sessions()}) <= 1
        self._fit_columns()

    def resizeEvent(self, e):                                           # noqa: N802 (Qt name)
        super().resizeEvent(e)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Columns that say nothing or do not fit give way to the title: Project when every session
        has the same one, then Format, Project and Updated when the panel is narrow."""
        w = self.tree.viewport().width()
        self.tree.setColumnHidden(3, w < 330)
        self.tree.setColumnHidden(2, getattr(self, "_one_project", False) or w < 270)
        self.tree.setColumnHidden(1, w < 240)      # (a dock beside the list: the titles alone)

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
