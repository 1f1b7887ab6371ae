"""Trace panel: the answer of :func:`app.log.query.trace.trace_event` for one seq, as plain text.

Takes plain data (the trace dict); emits :attr:`TracePanel.seqRequested` when the user
asks for another seq (the spin box, or a click on a linked seq).  Transcript-derived
text is never rendered as rich text: labels use ``Qt.TextFormat.PlainText``, the JSON view is a
``QPlainTextEdit``.
"""
from __future__ import annotations

import json
from typing import Any, Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QFormLayout, QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QSpinBox,
                               QSplitter, QVBoxLayout, QWidget)

SURFACE_COLORS: dict[Any, tuple[str, str]] = {"current": ("#1a7f37", "#dafbe1"), "shadowed": ("#9a6700", "#fff8c5"),
                  "log-only": ("#57606a", "#eaeef2")}


def _plain(text: str = "") -> QLabel:
    lab = QLabel(text)
    lab.setTextFormat(Qt.TextFormat.PlainText)
    lab.setWordWrap(True)
    lab.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return lab


def _seqs(xs, cap: int = 30) -> str:
    xs = list(xs or [])
    if not xs:
        return "—"
    s = ", ".join(str(x) for x in xs[:cap])
    return s + (f", … (+{len(xs) - cap})" if len(xs) > cap else "")


def describe(trace: dict) -> list:
    """[(field, value text)] rows of a trace, in display order."""
    t = trace.get("target", {})
    where = f"seq {t.get('seq')} · {t.get('type')}"
    if t.get("turn") is not None:
        where += f" · turn {t.get('turn')}" + (f" step {t.get('step')}" if t.get("step") is not None else "")
    rows = [("event", where), ("surface", trace.get("surface", "?"))]
    op = t.get("surfaceOp")
    if isinstance(op, dict):
        rows.append(("surfaceOp", f"replace {op.get('start')}–{op.get('end')}"))
    elif op:
        rows.append(("surfaceOp", str(op)))
    rows.append(("replaced by", str(trace["replacedBy"]) if trace.get("replacedBy") is not None else "—"))
    rows.append(("replacement chain", " → ".join(str(x) for x in [t.get("seq")] + trace.get("replacementChain", []))
                 if trace.get("replacementChain") else "—"))
    rows.append(("replaced events", _seqs(trace.get("replacedEventSeqs"))))
    rows.append(("cites (sourceEventSeqs)", _seqs(trace.get("sourceEventSeqs"))))
    rows.append(("cited by (derived)", _seqs(trace.get("derivedEventSeqs"))))
    a = trace.get("attempt")
    if a:
        s = f"{a.get('firstSeq')}–{a.get('lastSeq')} · {a.get('status')} · {a.get('chunks')} chunks"
        f = a.get("failure") or {}
        if f:
            s += f" · {f.get('code')}: {f.get('message', '')}"
        if a.get("messageSeq") is not None:
            s += f" · message {a.get('messageSeq')}"
        if a.get("retrySeq") is not None:
            s += f" · retry {a.get('retryNumber')} at {a.get('retrySeq')}"
        rows.append(("attempt", s))
    else:
        rows.append(("attempt", "—"))
    c = trace.get("compaction")
    if c:
        rng = c.get("shadowedRange") or {}
        rows.append(("compaction", f"{c.get('compactionId')} · start {c.get('startSeq')} · summary "
                                   f"{c.get('summarySeq')} · replacement {c.get('replacementSeq')} · end "
                                   f"{c.get('endSeq')} · shadowed {rng.get('start')}–{rng.get('end')}"))
    else:
        rows.append(("compaction", "—"))
    rq = trace.get("requests") or {}
    s = _seqs(rq.get("boundaries"))
    if rq:
        s += f"   ({rq.get('count', 0)} of {rq.get('dispatches', 0)} dispatches"
        s += ", list capped)" if rq.get("capped") else ")"
    rows.append(("part of requests at", s))
    return rows


class TracePanel(QWidget):
    seqRequested = Signal(int)

    def __init__(self, trace: Optional[dict] = None, parent=None):
        super().__init__(parent)
        v = QVBoxLayout(self)
        v.setContentsMargins(8, 8, 8, 8)
        bar = QHBoxLayout()
        bar.addWidget(_plain("Trace seq"))
        self.spin = QSpinBox()
        self.spin.setRange(0, 2 ** 31 - 1)
        bar.addWidget(self.spin)
        self.go = QPushButton("Trace")
        self.go.clicked.connect(lambda: self.seqRequested.emit(self.spin.value()))
        bar.addWidget(self.go)
        bar.addStretch(1)
        self.error = _plain("")
        self.error.setStyleSheet("color:#cf222e")
        bar.addWidget(self.error)
        v.addLayout(bar)
        split = QSplitter(Qt.Orientation.Vertical)
        top = QFrame()
        self.form = QFormLayout(top)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.fields: dict = {}
        for name in ("event", "surface", "surfaceOp", "replaced by", "replacement chain", "replaced events",
                     "cites (sourceEventSeqs)", "cited by (derived)", "attempt", "compaction", "part of requests at"):
            lab = _plain("—")
            self.fields[name] = lab
            key = _plain(name + ":")
            key.setWordWrap(False)
            key.setStyleSheet("color:palette(placeholder-text)")
            self.form.addRow(key, lab)
        split.addWidget(top)
        self.json = QPlainTextEdit()
        self.json.setReadOnly(True)
        self.json.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        f = self.json.font()
        f.setFamily("monospace")
        f.setStyleHint(f.StyleHint.Monospace)
        self.json.setFont(f)
        split.addWidget(self.json)
        split.setStretchFactor(0, 0)              # the form keeps its height, the JSON takes the rest
        split.setStretchFactor(1, 1)
        split.setSizes([top.sizeHint().height(), 10000])
        v.addWidget(split, 1)
        self.trace: Optional[dict] = None
        if trace is not None:
            self.set_trace(trace)

    def set_error(self, text: str) -> None:
        self.error.setText(text)

    def set_trace(self, trace: dict) -> None:
        self.trace = trace
        self.error.setText("")
        t = trace.get("target", {})
        if isinstance(t.get("seq"), int):
            self.spin.blockSignals(True)
            self.spin.setValue(t["seq"])
            self.spin.blockSignals(False)
        for lab in self.fields.values():
            lab.setText("—")
        for name, text in describe(trace):
            if name in self.fields:
                self.fields[name].setText(text)
        fg, bg = SURFACE_COLORS.get(trace.get("surface"), ("#57606a", "#eaeef2"))
        self.fields["surface"].setStyleSheet(f"QLabel{{color:{fg};background:{bg};padding:1px 6px;"
                                             f"border-radius:3px;font-weight:600}}")
        self.fields["surface"].setWordWrap(False)
        self.fields["surface"].setMaximumWidth(self.fields["surface"].fontMetrics().horizontalAdvance(
            trace.get("surface", "?")) + 20)
        self.json.setPlainText(json.dumps(trace, ensure_ascii=False, indent=2))
