"""The replay's widgets (issue 30): the time scrubber bar, the Model view pane, the What changed pane.

Every log-derived string goes into plain-text widgets (list items, plain-text labels, a plain-text
editor); nothing here reads a file (the answers come from :class:`app.ui.replay_model.ReplayModel`).
"""
from __future__ import annotations

import bisect
from typing import Any, Optional

from PySide6.QtCore import QLineF, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPlainTextEdit, QPushButton,
                               QSlider, QSpinBox, QStyle, QStyleOptionSlider, QVBoxLayout, QWidget)

from .history.delegate import mono_font

SEQ_ROLE = Qt.ItemDataRole.UserRole + 1


def preview(m: Any, width: int = 160) -> str:
    """One line of a message (plain text)."""
    from ..log.query.asofdiff import message_line
    return message_line(m, width)


class TickSlider(QSlider):
    """A horizontal slider over seqs with a tick at each turn start (at most one per pixel)."""

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(Qt.Orientation.Horizontal, parent)
        self.ticks: list[int] = []
        self._lines: list[QLineF] = []
        self._lines_key: Optional[tuple[int, ...]] = None
        self.setObjectName("replaySlider")
        self.setMinimumHeight(26)

    def set_ticks(self, ticks: list[int]) -> None:
        self.ticks, self._lines_key = ticks, None
        self.update()

    def _groove(self) -> tuple[int, int]:
        opt = QStyleOptionSlider()
        self.initStyleOption(opt)
        groove = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, opt,
                                             QStyle.SubControl.SC_SliderGroove, self)
        handle = self.style().subControlRect(QStyle.ComplexControl.CC_Slider, opt,
                                             QStyle.SubControl.SC_SliderHandle, self)
        half = handle.width() // 2
        return groove.left() + half, groove.right() - half

    def paintEvent(self, e) -> None:
        super().paintEvent(e)
        if not self.ticks or self.maximum() <= self.minimum():
            return
        x0, x1 = self._groove()
        key = (x0, x1, self.minimum(), self.maximum(), len(self.ticks), self.height())
        if self._lines_key != key:            # (a drag repaints often: the ticks' pixels are computed once)
            span = self.maximum() - self.minimum()
            xs = sorted({int(x0 + (x1 - x0) * (s - self.minimum()) / span) for s in self.ticks})
            h = self.height()
            self._lines = [QLineF(x, h - 6, x, h - 1) for x in xs]
            self._lines_key = key
        p = QPainter(self)
        p.setPen(QPen(QColor(self.palette().color(self.palette().ColorRole.Mid)), 1))
        p.drawLines(self._lines)
        p.end()


class ReplayBar(QWidget):
    """The scrubber above the history: slider with turn ticks, the position, Now."""

    moved = Signal(int)            # the slider's position (coalesced by the model)
    now = Signal()

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.setObjectName("replayBar")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(8, 2, 8, 2)
        self.label = QLabel("Replay")
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        lay.addWidget(self.label)
        self.slider = TickSlider()
        self.slider.setToolTip("Time scrubber: the session as it stood at a seq.  Alt+Left/Right: previous/next step, "
                               "Alt+Shift+Left/Right: previous/next turn, Alt+End: now")
        lay.addWidget(self.slider, 1)
        self.pos_label = QLabel("")
        self.pos_label.setTextFormat(Qt.TextFormat.PlainText)
        self.pos_label.setMinimumWidth(120)
        lay.addWidget(self.pos_label)
        self.now_btn = QPushButton("Now")
        self.now_btn.setToolTip("Back to the end of the log (Alt+End)")
        self.now_btn.clicked.connect(self.now)
        lay.addWidget(self.now_btn)
        self.slider.valueChanged.connect(self._on_value)
        self._quiet = False

    def set_range(self, last: int, ticks: list[int]) -> None:
        self._quiet = True
        self.slider.setRange(0, max(0, last))
        self.slider.setPageStep(max(1, last // 50))
        self.slider.set_ticks(ticks)
        self._quiet = False

    def set_position(self, seq: int) -> None:
        self._quiet = True
        self.slider.setValue(seq)
        self._quiet = False
        self.pos_label.setText(f"seq {seq:,} / {self.slider.maximum():,}")

    def _on_value(self, v: int) -> None:
        self.pos_label.setText(f"seq {v:,} / {self.slider.maximum():,}")
        if not self._quiet:
            self.moved.emit(v)


class ModelViewPane(QWidget):
    """The messages the model would see at the scrubber's position, each linked to its row."""

    goto = Signal(int)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self.head = QLabel("Scrub the history (Alt+Left) to see the model's view as of a seq.")
        self.head.setTextFormat(Qt.TextFormat.PlainText)
        self.head.setWordWrap(True)
        lay.addWidget(self.head)
        self.list = QListWidget()
        self.list.setObjectName("modelView")
        self.list.setWordWrap(True)
        self.list.setAlternatingRowColors(True)
        self.list.itemActivated.connect(self._activate)
        self.list.itemDoubleClicked.connect(self._activate)
        lay.addWidget(self.list, 1)

    def show_state(self, st: dict[str, Any]) -> None:
        self.list.clear()
        msgs = st["messages"]
        self.head.setText(f"As of seq {st['seq']:,}: the {len(msgs)} message{'s' if len(msgs) != 1 else ''} the "
                          "model would see, in order (double-click or Enter: go to the row it came from)")
        for seq, m in zip(st["messageSeqs"], msgs):
            role = m.get("role") if isinstance(m, dict) else "?"
            where = f"seq {seq:,}" if seq >= 0 else "seq ?"
            it = QListWidgetItem(f"{where} · {role}\n{preview(m)}")
            it.setData(SEQ_ROLE, seq)
            self.list.addItem(it)

    def clear_state(self, text: str = "") -> None:
        self.list.clear()
        self.head.setText(text or "Scrub the history (Alt+Left) to see the model's view as of a seq.")

    def _activate(self, it: QListWidgetItem) -> None:
        seq = it.data(SEQ_ROLE)
        if isinstance(seq, int) and seq >= 0:
            self.goto.emit(seq)


class WhatChangedPane(QWidget):
    """What changed between a pinned position (A) and the scrubber's position."""

    changed_from = Signal(int)

    def __init__(self, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        row = QHBoxLayout()
        lbl = QLabel("Compare from seq")
        lbl.setTextFormat(Qt.TextFormat.PlainText)
        row.addWidget(lbl)
        self.from_box = QSpinBox()
        self.from_box.setObjectName("replayFrom")
        self.from_box.setRange(0, 0)
        self.from_box.setKeyboardTracking(False)
        self.from_box.valueChanged.connect(self.changed_from)
        row.addWidget(self.from_box)
        row.addStretch(1)
        lay.addLayout(row)
        # on a line of its own, wrapped: the pane never widens the inspector (the history keeps its width)
        self.to_label = QLabel("to the scrubber's position")
        self.to_label.setTextFormat(Qt.TextFormat.PlainText)
        self.to_label.setWordWrap(True)
        lay.addWidget(self.to_label)
        self.text = QPlainTextEdit()
        self.text.setObjectName("whatChanged")
        self.text.setReadOnly(True)
        self.text.setFont(mono_font())
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        lay.addWidget(self.text, 1)

    def set_range(self, last: int) -> None:
        self.from_box.blockSignals(True)
        self.from_box.setRange(0, max(0, last))
        self.from_box.blockSignals(False)

    def set_from(self, seq: int) -> None:
        self.from_box.blockSignals(True)
        self.from_box.setValue(seq)
        self.from_box.blockSignals(False)

    def show_diff(self, st: dict[str, Any]) -> None:
        from ..log.query.asofdiff import diff_lines
        d = st.get("diff")
        self.to_label.setText(f"to seq {st['seq']:,} (the scrubber's position)")
        self.text.setPlainText("\n".join(diff_lines(d)) if d else f"seq {st['seq']:,}: same position, nothing changed")


def nearest(marks: list[int], seq: int, direction: int) -> Optional[int]:
    """The mark before (``direction`` < 0) or after ``seq``, None at either end."""
    if direction < 0:
        i = bisect.bisect_left(marks, seq)
        return marks[i - 1] if i > 0 else None
    i = bisect.bisect_right(marks, seq)
    return marks[i] if i < len(marks) else None
