"""Side-by-side diff view (plain text only).

:class:`DiffView` shows two read-only ``QPlainTextEdit`` panes with differing lines
highlighted (``difflib`` opcodes, extra selections) and a summary line.  The two sides
come from :mod:`.sides` (plain functions of the plain dicts of :mod:`app.log.query.diff`).
"""
from __future__ import annotations

import difflib

from ..plaintext import tooltip
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QTextCursor, QTextFormat
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QSizePolicy, QSplitter, QTextEdit,
                               QVBoxLayout, QWidget)

DEL_BG = QColor("#ffd7d5")
ADD_BG = QColor("#ccffd8")
CHG_BG = QColor("#fff5b1")
HIGHLIGHT_FG = QColor("#1f2328")     # text on those light backgrounds, in either theme (the dark
                                     # theme's light text on them was unreadable)


def _pane() -> QPlainTextEdit:
    e = QPlainTextEdit()
    e.setReadOnly(True)
    e.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)      # one line per block: highlights cover whole lines
    f = e.font()
    f.setFamily("monospace")
    f.setStyleHint(f.StyleHint.Monospace)
    e.setFont(f)
    return e


class DiffView(QWidget):
    def __init__(self, parent=None):
        super().__init__(parent)
        v = QVBoxLayout(self)
        v.setContentsMargins(8, 8, 8, 8)
        top = QHBoxLayout()
        self.chooser = QComboBox()
        self.chooser.setMinimumContentsLength(30)
        cmp_label = QLabel("Compare")
        cmp_label.setTextFormat(Qt.TextFormat.PlainText)
        top.addWidget(cmp_label)
        top.addWidget(self.chooser, 1)
        v.addLayout(top)
        self.summary = QLabel()
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        v.addWidget(self.summary)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.left_title, self.right_title = QLabel(), QLabel()
        self.left, self.right = _pane(), _pane()
        for title, pane in ((self.left_title, self.left), (self.right_title, self.right)):
            w = QWidget()
            lv = QVBoxLayout(w)
            lv.setContentsMargins(0, 0, 0, 0)
            title.setTextFormat(Qt.TextFormat.PlainText)
            title.setWordWrap(False)          # one line each: both panes start at the same height (full text: tooltip)
            title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            title.setContentsMargins(0, 0, 8, 0)
            title.setStyleSheet("font-weight:600")
            lv.addWidget(title)
            lv.addWidget(pane, 1)
            split.addWidget(w)
        split.setChildrenCollapsible(False)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([10000, 10000])
        self.split = split
        v.addWidget(split, 1)
        self._sync = False
        self.left.verticalScrollBar().valueChanged.connect(lambda x: self._follow(self.right, x))
        self.right.verticalScrollBar().valueChanged.connect(lambda x: self._follow(self.left, x))
        self.changed_lines = (0, 0)

    def _follow(self, other: QPlainTextEdit, value: int) -> None:
        if self._sync:
            return
        self._sync = True
        other.verticalScrollBar().setValue(value)
        self._sync = False

    def set_sides(self, left_title: str, left_text: str, right_title: str, right_text: str,
                  summary: str = "") -> None:
        self.left_title.setText(left_title)
        self.right_title.setText(right_title)
        self.left_title.setToolTip(tooltip(left_title))
        self.right_title.setToolTip(tooltip(right_title))
        self.summary.setText(summary)
        self.left.setPlainText(left_text)
        self.right.setPlainText(right_text)
        a, b = left_text.splitlines(), right_text.splitlines()
        la, lb = [], []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            color_a = DEL_BG if tag == "delete" else CHG_BG
            color_b = ADD_BG if tag == "insert" else CHG_BG
            la += [(i, color_a) for i in range(i1, i2)]
            lb += [(j, color_b) for j in range(j1, j2)]
        self._highlight(self.left, la)
        self._highlight(self.right, lb)
        self.changed_lines = (len(la), len(lb))

    @staticmethod
    def _highlight(edit: QPlainTextEdit, lines: list) -> None:
        sels = []
        doc = edit.document()
        for n, color in lines:
            block = doc.findBlockByNumber(n)
            if not block.isValid():
                continue
            sel = QTextEdit.ExtraSelection()
            sel.format.setBackground(color)
            sel.format.setForeground(HIGHLIGHT_FG)
            sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            cur = QTextCursor(block)
            sel.cursor = cur
            sels.append(sel)
        edit.setExtraSelections(sels)
