"""What the tree models (the request's JSON, the session list) share: nodes that know their
parent, their row under it and their ``kids``; the root node is not shown.  QtCore only."""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex


class NodeTreeModel(QAbstractItemModel):
    """A tree over ``_root``'s nodes (``parent``, ``row``, ``kids``); subclasses add columns and data."""
    _root: Any

    def node(self, index: QModelIndex) -> Any:
        return index.internalPointer() if index.isValid() else self._root

    def index(self, row, column, parent=QModelIndex()):
        kids = self.node(parent).kids
        if 0 <= row < len(kids) and 0 <= column < self.columnCount():
            return self.createIndex(row, column, kids[row])
        return QModelIndex()

    def parent(self, index=QModelIndex()):
        if not index.isValid():
            return QModelIndex()
        p = index.internalPointer().parent
        if p is None or p is self._root:
            return QModelIndex()
        return self.createIndex(p.row, 0, p)

    def rowCount(self, parent=QModelIndex()):
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self.node(parent).kids)
