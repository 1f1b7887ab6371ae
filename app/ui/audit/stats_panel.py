"""Stats panel: per-step table and totals of :func:`app.log.query.stats.compute_stats` (plain data)."""
from __future__ import annotations

from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from ..plaintext import clean_line

COLUMNS = ("step", "input", "output", "cache read", "reasoning", "latency", "attempts", "failed", "retries",
           "tool calls", "tool outcomes", "errors")


def _num(v) -> QTableWidgetItem:
    it = QTableWidgetItem("" if v is None else str(v))
    it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    if isinstance(v, (int, float)):
        it.setData(Qt.ItemDataRole.UserRole, v)
    return it


def step_row(s: dict) -> list:
    tk = s["tokens"]
    lat = f"{s['latencyMs']} ms" if s.get("latencyMs") is not None else "?"
    tools = ", ".join(f"{n}×{c}" for n, c in sorted(s.get("toolCalls", {}).items()))
    outs = ", ".join(f"{n}: " + " ".join(f"{k}×{c}" for k, c in sorted(v.items()))
                     for n, v in sorted(s.get("toolOutcomes", {}).items()))
    return [f"{s.get('turn')}.{s.get('step')}", tk["input"], tk["output"], tk["cacheRead"], tk["reasoning"], lat,
            s["attempts"], s["failedAttempts"], s["retries"], tools, outs, ", ".join(s.get("errors", []))]


class StatsPanel(QWidget):
    def __init__(self, stats: Optional[dict] = None, parent=None):
        super().__init__(parent)
        v = QVBoxLayout(self)
        v.setContentsMargins(8, 8, 8, 8)
        self.totals = QLabel()
        self.totals.setTextFormat(Qt.TextFormat.PlainText)
        self.totals.setWordWrap(True)
        v.addWidget(self.totals)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        v.addWidget(self.table, 1)
        if stats is not None:
            self.set_stats(stats)

    def set_stats(self, stats: dict) -> None:
        steps = stats.get("steps", [])
        self.table.setRowCount(len(steps))
        for r, s in enumerate(steps):
            for c, val in enumerate(step_row(s)):
                it = _num(val) if isinstance(val, (int, float)) else QTableWidgetItem(clean_line(val))
                if s.get("latencyNote") and COLUMNS[c] == "latency":
                    it.setToolTip(s["latencyNote"])
                self.table.setItem(r, c, it)
        self.totals.setText(totals_text(stats.get("totals", {})))


def _count(n: int, one: str, many: str = "") -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def totals_text(t: dict) -> str:
    """The line above the stats table: counts with their right number, the unknown latencies
    only when there are some."""
    tk = t.get("tokens", {})
    parts = [_count(t.get("turns", 0), "turn"), _count(t.get("steps", 0), "step"),
             _count(t.get("attempts", 0), "attempt") + f" ({t.get('failedAttempts', 0):,} failed)",
             _count(t.get("retries", 0), "retry", "retries"),
             f"tokens in {tk.get('input', 0):,} / out {tk.get('output', 0):,} / cache read {tk.get('cacheRead', 0):,}"
             f" / reasoning {tk.get('reasoning', 0):,}",
             _count(sum(t.get("toolCalls", {}).values()), "tool call")]
    unknown = t.get("latencyUnknown", 0)
    if unknown:
        parts.append(f"latency unknown for {_count(unknown, 'step')} (times in the log are not monotonic)")
    return " · ".join(parts)
