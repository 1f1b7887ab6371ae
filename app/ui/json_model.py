"""A lazy tree model over decoded JSON (children are made when first asked for).

Used by the request inspector: a request can hold thousands of messages, so nothing is
expanded up front.  Values are shown as plain text (Qt item views never parse markup in
DisplayRole strings).
"""
from __future__ import annotations

import json
from typing import Any, Optional

from PySide6.QtCore import QModelIndex, Qt

from .tree_model import NodeTreeModel

PREVIEW = 160


class _Node:
    __slots__ = ("key", "value", "parent", "row", "_kids")

    def __init__(self, key, value, parent, row):
        self.key, self.value, self.parent, self.row = key, value, parent, row
        self._kids: Optional[list] = None

    @property
    def kids(self) -> list:
        if self._kids is None:
            v = self.value
            if isinstance(v, dict):
                self._kids = [_Node(k, x, self, i) for i, (k, x) in enumerate(v.items())]
            elif isinstance(v, list):
                self._kids = [_Node(i, x, self, i) for i, x in enumerate(v)]
            else:
                self._kids = []
        return self._kids

    def has_kids(self) -> bool:
        v = self.value
        return isinstance(v, (dict, list)) and len(v) > 0


def _n(n: int, one: str) -> str:
    return f"{n} {one}{'' if n == 1 else 's'}"


def preview(v: Any) -> str:
    if isinstance(v, dict):
        if "role" in v and "content" in v:
            text = ""
            for b in v.get("content") or []:
                if isinstance(b, dict) and b.get("type") == "text":
                    text = str(b.get("text", ""))
                    break
            first = text.split("\n", 1)[0]
            if first:
                return f"{v.get('role')}: {first[:PREVIEW]}"
            c = v.get("content")
            blocks: list = c if isinstance(c, list) else []
            kinds = sorted({str(b.get("type")) for b in blocks if isinstance(b, dict) and b.get("type")})
            return f"{v.get('role')} · {_n(len(blocks), 'block')}" + (f" ({', '.join(kinds)})" if kinds else "")
        return f"{{{_n(len(v), 'key')}}}"
    if isinstance(v, list):
        return f"[{_n(len(v), 'item')}]"
    if isinstance(v, str):
        first = v.split("\n", 1)[0]
        more = "…" if len(first) > PREVIEW or "\n" in v else ""
        return json.dumps(first[:PREVIEW], ensure_ascii=False)[:-1] + more + '"'
    return json.dumps(v, ensure_ascii=False)


class JsonTreeModel(NodeTreeModel):
    def __init__(self, value: Any = None, parent=None):
        super().__init__(parent)
        self._root = _Node("", value, None, 0)

    def set_value(self, value: Any) -> None:
        self.beginResetModel()
        self._root = _Node("", value, None, 0)
        self.endResetModel()

    def value_at(self, index: QModelIndex) -> Any:
        return self.node(index).value

    def path_of(self, index: QModelIndex) -> str:
        parts = []
        n = self.node(index)
        while n is not None and n.parent is not None:
            parts.append(f"[{n.key}]" if isinstance(n.key, int) else f".{n.key}")
            n = n.parent
        return "".join(reversed(parts)) or "(request)"

    def hasChildren(self, parent=QModelIndex()):
        return self.node(parent).has_kids() if parent.isValid() else bool(self._root.kids)

    def columnCount(self, parent=QModelIndex()):
        return 2

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        n: _Node = index.internalPointer()
        if role == Qt.ItemDataRole.DisplayRole:
            return str(n.key) if index.column() == 0 else preview(n.value)
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 1 and isinstance(n.value, str):
            return None
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return ("key", "value")[section]
        return None
