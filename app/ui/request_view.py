"""Request inspector: the exact request at a row's dispatch boundary (spec §3).

It runs in a worker on its own reader (:func:`app.store.requests.exact_request`): from the
saved fold checkpoints plus a short replay, the checkpoints built first by a child process
when missing; a request no longer wanted is cancelled (child killed, replay stopped) and
stale answers (the selection moved on) are dropped.
"""
from __future__ import annotations

import json
import os
import time
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QSplitter, QTreeView,
                               QVBoxLayout, QWidget, QApplication)

from .history.delegate import mono_font
from .history.row_kind import ATTEMPT_KINDS, RowKind
from .json_model import JsonTreeModel
from .workers import Cancelled, Job, Jobs

REQUEST_KINDS = frozenset({RowKind.ASSISTANT, RowKind.STEP_START, RowKind.STEP_END}) | ATTEMPT_KINDS


def _request_job(job, path: str, session_id: Optional[str], seq: int, as_written: bool = False):
    t0 = time.perf_counter()
    try:
        from ..store.requests import exact_request      # (in the worker: not on the way to the first paint)
        out = exact_request(path, session_id, seq, cancelled=job, check=job.check,
                            progress=job.report, as_written=as_written)
    except InterruptedError:
        raise Cancelled(job.name)
    out["elapsed"] = time.perf_counter() - t0
    return out


def request_seq_for(row) -> Optional[int]:
    """The seq naming the dispatch of a row (None: no request for this kind of row)."""
    if row is None or row.kind not in REQUEST_KINDS or row.seq is None:
        return None
    if row.synthesized:
        return None
    if row.kind in ATTEMPT_KINDS:
        return row.first_seq
    return row.seq


class RequestView(QWidget):
    computed = Signal(int)          # seq whose request is shown
    failed = Signal(int, str)
    cleared = Signal()              # no request shown (another row, another session)

    def __init__(self, jobs: Jobs, parent=None):
        super().__init__(parent)
        self.jobs = jobs
        self._job: Optional[Job] = None
        self._group = f"request-{id(self)}"      # a new request supersedes the one in flight
        self._want: Optional[tuple] = None
        self._last: Optional[tuple] = None          # (path, session id, seq) of the last request asked for
        self.result: Optional[dict] = None
        self.shown_seq: Optional[int] = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self.status = QLabel("Select an assistant or step row to see the exact request sent at its dispatch.")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.status.setWordWrap(True)
        lay.addWidget(self.status)
        from .progress_pane import TaskStrip
        self.tasks = TaskStrip()            # a request that waits (checkpoints to build): progress and Cancel
        self.tasks.cancelled.connect(lambda _t: self.status.setText(
            "Request cancelled: select the row again to compute it"))
        lay.addWidget(self.tasks)
        self.summary = QLabel("")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)
        split = QSplitter(Qt.Orientation.Vertical)
        self.tree = QTreeView()
        self.tree.setUniformRowHeights(True)
        self.tree_model = JsonTreeModel(None, self)
        self.tree.setModel(self.tree_model)
        self.tree.setColumnWidth(0, 150)
        self.tree.selectionModel().currentChanged.connect(self._on_node)
        split.addWidget(self.tree)
        self.detail = QPlainTextEdit()
        self.detail.setReadOnly(True)
        self.detail.setFont(mono_font())
        self.detail.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        split.addWidget(self.detail)
        split.setSizes([300, 200])
        lay.addWidget(split, 1)
        row = QHBoxLayout()
        # a v0-v3 log: today's dsh derives its request on the v4 shape (the default); the writer-era shape on demand
        self.as_written = QCheckBox("As written (v0-v3 shape)")
        self.as_written.setObjectName("requestAsWritten")
        self.as_written.setToolTip("Show a v0-v3 log's request in the shape its writer logged it (a v0-v2 prompt in "
                                   "the request's system field, tool results as user messages, plugin sources, no "
                                   "toolHistory) instead of the shape today's dsh derives after migrating it to v4.")
        self.as_written.setChecked(os.environ.get("SESSION_LENS_REQUEST_AS_WRITTEN") == "1")   # (gui --as-written)
        self.as_written.toggled.connect(self._recompute)
        lay.addWidget(self.as_written)          # (its own line: the inspector keeps its narrow minimum width)
        self.copy_btn = QPushButton("Copy request JSON")
        self.copy_btn.setEnabled(False)
        self.copy_btn.clicked.connect(self._copy)
        row.addStretch(1)
        row.addWidget(self.copy_btn)
        lay.addLayout(row)

    def clear(self, message: str = "") -> None:
        self.jobs.cancel_group(self._group)
        self._job = None
        self._want = None
        self.result = None
        self.shown_seq = None
        self.tree_model.set_value(None)
        self.detail.setPlainText("")
        self.summary.setText("")
        self.copy_btn.setEnabled(False)
        self.status.setText(message or "Select an assistant or step row to see the exact request sent at its dispatch.")
        self.cleared.emit()

    def busy(self) -> bool:
        """A request is being computed (its end comes as ``computed`` or ``failed``); False when the selected
        row has none to compute (the tab says why) or it is already shown."""
        return self._job is not None

    def _recompute(self, _checked: bool = False) -> None:
        if self._last is not None:
            self._want = None
            self.compute(*self._last)

    def compute(self, path: str, session_id: Optional[str], seq: int) -> None:
        as_written = self.as_written.isChecked()
        want = (path, session_id, seq, as_written)
        if want == self._want:
            return
        self.clear()
        self._want = want
        self._last = (path, session_id, seq)
        self.status.setText(f"Computing the request at seq {seq} (folding the log prefix)…")
        self._job = self.jobs.submit(_request_job, path, session_id, seq, as_written, name="request", group=self._group,
                                     on_done=lambda res, s=seq: self._done(s, res),
                                     on_error=lambda msg, s=seq: self._fail(s, msg))
        self.tasks.track(self._job, f"Computing the request at seq {seq}", delay_ms=500)

    def _done(self, seq: int, res: dict):
        self._job = None
        self.result = res
        self.shown_seq = seq
        req = res.get("request") or {}
        msgs = req.get("messages") or []
        tools = req.get("tools")
        ntools = len(tools) if isinstance(tools, list) else (tools if isinstance(tools, str) else 0)
        cfg = {k: v for k, v in req.items() if k not in ("messages", "system", "tools", "sessionId")}
        self.status.setText(f"Request at the dispatch boundary seq {res.get('boundary')} "
                            f"(asked for seq {seq}; computed in {res.get('elapsed', 0) * 1000:.0f} ms)")
        self.summary.setText(f"header from seq {res.get('headerSeq')} · {len(msgs)} messages · tools: {ntools} · "
                             f"system: {_system_note(req)} · config: "
                             + json.dumps(cfg, ensure_ascii=False)[:300])
        ordered = {}
        for k in ("provider", "model"):
            if k in req:
                ordered[k] = req[k]
        ordered.update(cfg)
        for k in ("system", "tools", "messages", "sessionId"):
            if k in req:
                ordered[k] = req[k]
        self.tree_model.set_value(ordered)
        for r in range(self.tree_model.rowCount()):
            ix = self.tree_model.index(r, 0)
            if self.tree_model.node(ix).key == "messages":
                self.tree.expand(ix)
        self.detail.setPlainText(json.dumps(cfg, ensure_ascii=False, indent=2))
        self.copy_btn.setEnabled(True)
        self.computed.emit(seq)

    def _fail(self, seq: int, msg: str):
        self._job = None
        self._want = None
        self.status.setText(f"No request for seq {seq}: {msg}")
        self.failed.emit(seq, msg)

    def _on_node(self, cur, prev):
        if not cur.isValid():
            return
        ix = cur.sibling(cur.row(), 0)
        v = self.tree_model.value_at(ix)
        path = self.tree_model.path_of(ix)
        text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, indent=2)
        if len(text) > 500_000:
            text = text[:500_000] + "\n… (truncated for display; Copy request JSON has everything)"
        self.detail.setPlainText(f"{path}\n\n{text}")

    def _copy(self):
        if self.result is not None:
            QApplication.clipboard().setText(json.dumps(self.result.get("request"), ensure_ascii=False, indent=2))


def _system_note(req: dict) -> str:
    """v0–v2 requests carry ``system``; v3+ carry the live system message(s) in ``messages``."""
    if req.get("system"):
        return "yes"
    n = sum(1 for m in req.get("messages") or [] if isinstance(m, dict) and m.get("role") == "system")
    return f"{n} system message{'s' if n != 1 else ''}" if n else "no"
