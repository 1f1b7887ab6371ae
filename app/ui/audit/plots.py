"""Bar charts drawn with QPainter (no plotting dependency).

:class:`BarChart` takes plain data: category labels and one or more named series; bars
are stacked (``stacked=True``) or grouped.  :class:`StatsPlots` lays out the charts of a
:func:`app.log.query.stats.compute_stats` result: tokens per step, latency per step, tokens
per turn and tool calls by name/outcome.  All labels are drawn as plain text.
"""
from __future__ import annotations

from typing import Optional
from collections.abc import Sequence

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QGridLayout, QSizePolicy, QToolTip, QWidget

PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2", "#edc948", "#9c755f"]


def nice_axis(v: float, ticks: int = 4) -> tuple:
    """(axis maximum, tick step, tick count): round steps of 1, 2 or 5 x 10^k, max >= v."""
    import math
    if v <= 0:
        return 1.0, 0.25, 4
    raw = v / ticks
    e = 10 ** math.floor(math.log10(raw))
    step = next(m * e for m in (1, 2, 5, 10) if m * e >= raw)
    if v <= 4 and step < 1:          # small counts: integer ticks
        step = 1.0
    n = max(1, math.ceil(v / step - 1e-9))
    return step * n, step, n


def fmt_num(v: float) -> str:
    if v >= 1_000_000:
        return f"{v / 1_000_000:.1f}M"
    if v >= 10_000:
        return f"{v / 1000:.0f}k"
    if v >= 1000:
        return f"{v / 1000:.1f}k"
    return f"{v:g}" if v != int(v) else str(int(v))


class BarChart(QWidget):
    def __init__(self, title: str = "", labels: Sequence[str] = (), series: Optional[dict] = None,
                 stacked: bool = True, unit: str = "", parent=None):
        super().__init__(parent)
        self.title = title
        self.unit = unit
        self.stacked = stacked
        self.labels: list = []
        self.series: dict = {}
        self.colors: dict = {}
        self._bars: list = []          # (QRectF, tooltip)
        self.setMinimumSize(260, 180)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMouseTracking(True)
        self.set_data(labels, series or {})

    def set_data(self, labels: Sequence[str], series: dict, colors: Optional[dict] = None) -> None:
        self.labels = [str(x) for x in labels]
        self.series = {str(k): [float(v or 0) for v in vals] for k, vals in series.items()}
        self.missing = {str(k): {i for i, v in enumerate(vals) if v is None} for k, vals in series.items()}
        self.colors = {k: QColor((colors or {}).get(k, PALETTE[i % len(PALETTE)])) for i, k in enumerate(self.series)}
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(420, 240)

    def max_value(self) -> float:
        if not self.labels or not self.series:
            return 0.0
        if self.stacked:
            return max(sum(vals[i] if i < len(vals) else 0 for vals in self.series.values())
                       for i in range(len(self.labels)))
        return max((max(vals) if vals else 0) for vals in self.series.values())

    def paintEvent(self, _ev) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        fg = pal.color(pal.ColorRole.WindowText)
        dim = QColor(fg)
        dim.setAlpha(110)
        grid = QColor(fg)
        grid.setAlpha(35)
        p.fillRect(self.rect(), pal.color(pal.ColorRole.Base))
        f = QFont(self.font())
        fm = QFontMetrics(f)
        tf = QFont(f)
        tf.setBold(True)
        p.setFont(tf)
        p.setPen(fg)
        p.drawText(QRectF(8, 4, self.width() - 16, fm.height() + 4), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, self.title)
        p.setFont(f)
        if len(self.series) > 1 or self.stacked:
            self._paint_legend(p, fm, fg)
        top = 2 * fm.height() + 12
        vmax, vstep, nt = nice_axis(self.max_value())
        left = 10 + max(fm.horizontalAdvance(fmt_num(vstep * i) + self.unit) for i in range(nt + 1))
        bottom = self.height() - fm.height() - 10
        right = self.width() - 12
        plot = QRectF(left, top, max(10, right - left), max(10, bottom - top))
        self._bars = []
        # grid and y labels
        for i in range(nt + 1):
            v = vstep * i
            y = plot.bottom() - plot.height() * i / nt
            p.setPen(QPen(grid, 1))
            p.drawLine(int(plot.left()), int(y), int(plot.right()), int(y))
            p.setPen(dim)
            p.drawText(QRectF(0, y - fm.height() / 2, left - 4, fm.height()), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                       fmt_num(v) + self.unit)
        n = len(self.labels)
        if n == 0 or not self.series:
            p.setPen(dim)
            p.drawText(plot, Qt.AlignmentFlag.AlignCenter, "no data")
            p.end()
            return
        slot = plot.width() / n
        bw = max(2.0, min(48.0, slot * 0.7))
        names = list(self.series)
        step_every = max(1, int((fm.horizontalAdvance("00.00") + 6) // max(1.0, slot)) + 1)
        for i, lab in enumerate(self.labels):
            cx = plot.left() + slot * (i + 0.5)
            if self.stacked:
                self._paint_stack(p, fm, dim, plot, vmax, i, lab, cx, bw, slot)
            else:
                gw = bw / len(names)
                for j, name in enumerate(names):
                    vals = self.series[name]
                    v = vals[i] if i < len(vals) else 0
                    h = plot.height() * v / vmax if v > 0 else 0
                    r = QRectF(cx - bw / 2 + j * gw, plot.bottom() - h, gw, h)
                    p.fillRect(r, self.colors[name])
                    self._bars.append((r, f"{lab} {name}: {fmt_num(v)}{self.unit}"))
                    if i in self.missing.get(name, ()):
                        p.setPen(dim)
                        p.drawText(QRectF(r.center().x() - slot / 2, plot.bottom() - fm.height() - 2, slot,
                                          fm.height()), Qt.AlignmentFlag.AlignCenter, "n/a")
                        self._bars.append((QRectF(r.x(), plot.bottom() - fm.height(), max(gw, 8), fm.height()),
                                           f"{lab} {name}: unknown"))
                    elif v > 0 and gw >= 14:
                        p.setPen(dim)
                        p.drawText(QRectF(r.center().x() - slot / 2, r.top() - fm.height() - 1, slot, fm.height()),
                                   Qt.AlignmentFlag.AlignCenter, fmt_num(v))
            if i % step_every == 0:
                p.setPen(fg)
                p.drawText(QRectF(cx - slot * step_every / 2, plot.bottom() + 3, slot * step_every, fm.height()),
                           Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop, fm.elidedText(lab, Qt.TextElideMode.ElideRight, int(slot * step_every)))
        p.setPen(QPen(dim, 1))
        p.drawLine(int(plot.left()), int(plot.bottom()), int(plot.right()), int(plot.bottom()))
        p.end()

    def _paint_legend(self, p: QPainter, fm: QFontMetrics, fg: QColor) -> None:
        """The series' names and colours, right-aligned on the title line."""
        x = self.width() - 12
        for name in reversed(list(self.series)):
            w = fm.horizontalAdvance(name) + 4
            x -= w
            p.setPen(fg)
            p.drawText(QRectF(x, 4, w + 4, fm.height() + 4), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, name)
            x -= 14
            p.fillRect(QRectF(x, 4 + (fm.height() + 4 - 10) / 2, 10, 10), self.colors[name])
            x -= 10

    def _paint_stack(self, p: QPainter, fm: QFontMetrics, dim: QColor, plot: QRectF, vmax: float, i: int, lab: str,
                     cx: float, bw: float, slot: float) -> None:
        """Label ``i``'s bar of stacked series, its total above it when the bar is wide enough."""
        y = plot.bottom()
        total = 0.0
        for name in self.series:
            vals = self.series[name]
            v = vals[i] if i < len(vals) else 0
            if v <= 0:
                continue
            h = plot.height() * v / vmax
            r = QRectF(cx - bw / 2, y - h, bw, h)
            p.fillRect(r, self.colors[name])
            self._bars.append((r, f"{lab} {name}: {fmt_num(v)}{self.unit}"))
            y -= h
            total += v
        if total > 0 and bw >= 14:
            p.setPen(dim)
            p.drawText(QRectF(cx - slot / 2, y - fm.height() - 1, slot, fm.height()), Qt.AlignmentFlag.AlignCenter,
                       fmt_num(total))

    def mouseMoveEvent(self, ev) -> None:
        pos = ev.position()
        for r, tip in self._bars:
            if r.adjusted(-1, -1, 1, 1).contains(pos):
                QToolTip.showText(ev.globalPosition().toPoint(), tip, self)
                return
        QToolTip.hideText()


TOKEN_SERIES = (("input", "input"), ("output", "output"), ("cacheRead", "cache read"), ("reasoning", "reasoning"))


class StatsPlots(QWidget):
    """Tokens per step, latency per step, tokens per turn, tool calls by name and outcome."""

    def __init__(self, stats: Optional[dict] = None, parent=None):
        super().__init__(parent)
        g = QGridLayout(self)
        g.setContentsMargins(6, 6, 6, 6)
        g.setSpacing(8)
        self.tokens_step = BarChart("Tokens per step")
        self.latency_step = BarChart("Latency per step (to finish chunk)", stacked=False, unit=" ms")
        self.tokens_turn = BarChart("Tokens per turn")
        self.tools = BarChart("Tool calls by name and outcome")
        self.attempts = BarChart("Attempts, failures and retries per step", stacked=False)
        g.addWidget(self.tokens_step, 0, 0)
        g.addWidget(self.latency_step, 0, 1)
        g.addWidget(self.tokens_turn, 1, 0)
        g.addWidget(self.tools, 1, 1)
        g.addWidget(self.attempts, 2, 0, 1, 2)
        if stats is not None:
            self.set_stats(stats)

    def set_stats(self, stats: dict) -> None:
        steps = stats.get("steps", [])
        labels = [f"{s.get('turn')}.{s.get('step')}" for s in steps]
        self.tokens_step.set_data(labels, {name: [s["tokens"][k] for s in steps] for k, name in TOKEN_SERIES})
        self.latency_step.set_data(labels, {"latency": [s["latencyMs"] for s in steps]})
        turns = stats.get("turns", [])
        self.tokens_turn.set_data([f"turn {t['turn']}" for t in turns],
                                  {name: [t["tokens"][k] for t in turns] for k, name in TOKEN_SERIES})
        outcomes = stats.get("totals", {}).get("toolOutcomes", {})
        calls = stats.get("totals", {}).get("toolCalls", {})
        names = sorted(set(calls) | set(outcomes))
        kinds = sorted({oc for v in outcomes.values() for oc in v}, key=lambda k: (k != "ok", k))
        series = {k: [outcomes.get(n, {}).get(k, 0) for n in names] for k in kinds}
        pending = [max(0, calls.get(n, 0) - sum(outcomes.get(n, {}).values())) for n in names]
        if any(pending):
            series["no result"] = pending
        colors = {k: ("#59a14f" if k == "ok" else "#bab0ac" if k == "no result" else "#e15759") for k in series}
        self.tools.set_data(names, series, colors)
        self.attempts.set_data(labels, {"committed/other": [s["attempts"] - s["failedAttempts"] for s in steps],
                                        "failed": [s["failedAttempts"] for s in steps],
                                        "retries": [s["retries"] for s in steps]},
                               {"committed/other": "#4e79a7", "failed": "#e15759", "retries": "#edc948"})
