"""The Timeline dock's two drawings, painted with QPainter (decision 0019): the waterfall and the context meter.

Each draws through one ``render(painter, w, h)``, so the screen, a PNG (QImage) and an SVG
(QSvgGenerator, :mod:`PySide6.QtSvg`) get the same picture.  Only the bars in view are visited
(:meth:`app.ui.timeline_model.Layout.visible`: bisect per row), and bars narrower than a pixel are
merged, so a log of a million spans paints in the time of its visible pixels.  Tooltips are plain text
(:func:`app.ui.plaintext.tooltip`).
"""
from __future__ import annotations

import os
import tempfile
from typing import Any, Optional

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QToolTip, QWidget

from .plaintext import clean, tooltip
from .theme import Theme
from .timeline_model import Bar, Layout, fmt_clock, fmt_ms, tip

LEFT = 92                  # row labels
TOP = 22                   # axis labels
ROW_H = 16
KIND_COLOR = {"turn": "accent_user", "step": "boundary", "attempt": "accent_assistant", "retry-wait": "warn",
              "tool": "accent_tool", "compaction": "accent_event", "approval": "link", "subagent": "accent_result"}


class Waterfall(QWidget):
    """Turns, steps, attempts, retries, tool calls, compactions, approvals and subagents as bars.

    Wheel: zoom around the pointer; drag: pan; double-click: fit.  A click on a bar emits
    :attr:`barClicked` with its seq; :meth:`highlight_seq` outlines the bar of a selected row."""
    barClicked = Signal(int)
    viewChanged = Signal()

    def __init__(self, theme: Theme, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.theme = theme
        self.lay: Optional[Layout] = None
        self.v0, self.v1 = 0.0, 1.0
        self.selected: Optional[Bar] = None
        self._drag: Optional[tuple[float, float, float]] = None
        self._moved = False
        self.setMouseTracking(True)
        self.setMinimumHeight(TOP + ROW_H * 6)

    def sizeHint(self) -> QSize:
        n = len(self.lay.rows) if self.lay else 11
        return QSize(800, TOP + ROW_H * n + 8)

    def set_layout(self, lay: Optional[Layout]) -> None:
        self.lay = lay
        self.selected = None
        self.fit()
        self.updateGeometry()

    def fit(self) -> None:
        if self.lay is not None:
            lo, hi = self.lay.extent
            self.v0, self.v1 = lo, max(hi, lo + 1)
        self.viewChanged.emit()
        self.update()

    def zoom(self, factor: float, at: Optional[float] = None) -> None:
        """Zoom by ``factor`` (> 1: in) around axis position ``at`` (the middle by default)."""
        if self.lay is None:
            return
        at = (self.v0 + self.v1) / 2 if at is None else at
        span = max((self.v1 - self.v0) / factor, 1e-3)
        lo, hi = self.lay.extent
        frac = (at - self.v0) / max(self.v1 - self.v0, 1e-9)
        self.v0 = at - span * frac
        self.v1 = self.v0 + span
        if self.v1 - self.v0 >= hi - lo:
            self.v0, self.v1 = lo, max(hi, lo + 1)
        self.viewChanged.emit()
        self.update()

    def zoom_to(self, x0: float, x1: float, margin: float = 0.05) -> None:
        """Show axis range [x0, x1] (and a margin on both sides)."""
        pad = max((x1 - x0) * margin, 1.0)
        self.v0, self.v1 = x0 - pad, max(x1 + pad, x0 + pad + 1.0)
        self.viewChanged.emit()
        self.update()

    # ---------------------------------------------------------------- geometry
    def _plot_w(self, w: float) -> float:
        return max(1.0, w - LEFT - 8)

    def x_of(self, v: float, w: float) -> float:
        return LEFT + (v - self.v0) / max(self.v1 - self.v0, 1e-9) * self._plot_w(w)

    def v_of(self, x: float, w: float) -> float:
        return self.v0 + (x - LEFT) / self._plot_w(w) * (self.v1 - self.v0)

    def bar_rect(self, b: Bar, w: Optional[float] = None) -> QRectF:
        w = self.width() if w is None else w
        x0, x1 = self.x_of(b.x0, w), self.x_of(b.x1, w)
        return QRectF(x0, TOP + b.row * ROW_H + 2, max(x1 - x0, 2.0), ROW_H - 4)

    def bar_at(self, x: float, y: float) -> Optional[Bar]:
        if self.lay is None or x < LEFT:
            return None
        row = int((y - TOP) // ROW_H)
        if not 0 <= row < len(self.lay.rows):
            return None
        slop = 3 * (self.v1 - self.v0) / self._plot_w(self.width())
        return self.lay.bar_at(row, self.v_of(x, self.width()), slop)

    # ---------------------------------------------------------------- selection
    def highlight_seq(self, seq: Optional[int]) -> Optional[Bar]:
        """Outline the bar of the row at ``seq`` (scrolled into view when outside it)."""
        b = self.lay.bar_of_seq(seq) if self.lay is not None and seq is not None else None
        self.selected = b
        if b is not None and (b.x1 < self.v0 or b.x0 > self.v1):
            span = self.v1 - self.v0
            self.v0 = (b.x0 + b.x1) / 2 - span / 2
            self.v1 = self.v0 + span
            self.viewChanged.emit()
        self.update()
        return b

    # ---------------------------------------------------------------- painting
    def paintEvent(self, _e: Any) -> None:
        p = QPainter(self)
        self.render_to(p, self.width(), self.height())
        p.end()

    def render_to(self, p: QPainter, w: float, h: float) -> None:
        th = self.theme
        p.fillRect(QRectF(0, 0, w, h), th.color("base"))
        lay = self.lay
        if lay is None:
            p.setPen(th.color("dim"))
            p.drawText(QRectF(0, 0, w, h), Qt.AlignmentFlag.AlignCenter, "No timeline yet")
            return
        p.setPen(th.color("dim"))
        for r, name in enumerate(lay.rows):
            if name:
                p.drawText(QRectF(4, TOP + r * ROW_H, LEFT - 8, ROW_H), Qt.AlignmentFlag.AlignVCenter, name)
        p.save()
        p.setClipRect(QRectF(LEFT - 4, 0, w - LEFT + 4, h))     # (bars reaching left of the view stop at the labels)
        self._axis(p, w, h)
        for r in range(len(lay.rows)):
            self._row(p, r, w)
        if self.selected is not None:
            p.setPen(QPen(th.color("selected"), 2))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(self.bar_rect(self.selected, w).adjusted(-2, -2, 2, 2))
        p.restore()

    def _axis(self, p: QPainter, w: float, h: float) -> None:
        th = self.theme
        lay = self.lay
        assert lay is not None
        grid = QColor(th.boundary)
        grid.setAlpha(90)
        last = -1e9
        marks = [x_v for x_v, _turn, _gap in lay.turn_marks if self.v0 <= x_v <= self.v1]
        dense = len(marks) * 20 > w - LEFT             # (more than one turn per 20 px: ticks on the axis only)
        p.setPen(QPen(grid, 1, Qt.PenStyle.SolidLine if dense else Qt.PenStyle.DashLine))
        for x_v in marks:
            x = self.x_of(x_v, w)
            if x - last >= 3:                          # (turn boundaries closer than that: one mark)
                p.drawLine(QPointF(x, TOP - 4), QPointF(x, TOP if dense else h))
                last = x
        p.setPen(th.color("dim"))
        span = self.v1 - self.v0
        unit = "active time"
        if lay.axis == "seq":
            text = f"seq {self.v0:,.0f} – {self.v1:,.0f}  (view {span:,.0f} seqs)"
        else:
            text = f"{unit} {fmt_clock(self.v0)} – {fmt_clock(self.v1)}  (view {fmt_ms(span)}; turns placed " \
                   "end to end, the time between them left out)"
        p.drawText(QRectF(LEFT, 2, w - LEFT - 8, TOP - 4), Qt.AlignmentFlag.AlignLeft, text)

    def _dense_row(self, p: QPainter, r: int, w: float, lo: int, hi: int) -> None:
        """More bars than pixels: one rectangle per pixel column where bars start (to the furthest end among
        them), red when any of them is bad; no labels, no marks."""
        lay = self.lay
        assert lay is not None
        th = self.theme
        pw = int(self._plot_w(w))
        edges = [self.v_of(LEFT + c, w) for c in range(pw + 1)]
        kind = lay.by_row[r][lo].kind
        normal, bad = th.color(KIND_COLOR.get(kind, "accent_event")), th.color("err")
        y = TOP + r * ROW_H + 2
        for c, end, any_bad in lay.columns(r, lo, hi, edges):
            x1 = self.x_of(end, w)
            p.fillRect(QRectF(LEFT + c, y, max(x1 - LEFT - c, 1.0), ROW_H - 4), bad if any_bad else normal)

    def _row(self, p: QPainter, r: int, w: float) -> None:
        lay = self.lay
        assert lay is not None
        th = self.theme
        lo, hi = lay.visible_range(r, self.v0, self.v1)
        if hi - lo > 2 * self._plot_w(w):
            self._dense_row(p, r, w, lo, hi)
            return
        last_px = -1
        p.setPen(Qt.PenStyle.NoPen)
        for b in lay.by_row.get(r, [])[lo:hi]:
            rect = self.bar_rect(b, w)
            px = int(rect.right())
            if px <= last_px and rect.width() <= 2 and not b.bad:
                continue                     # (many bars in one pixel column: one is enough)
            last_px = px
            color = th.color("err" if b.bad else KIND_COLOR.get(b.kind, "accent_event"))
            if b.unknown:
                color.setAlpha(110)
            p.setBrush(color)
            p.drawRect(rect)
            if b.kind == "retry-wait" or b.bad:       # retries and errors: a mark above the bar
                p.setBrush(th.color("err" if b.bad else "warn"))
                top = rect.top() - 1
                p.drawPolygon([QPointF(rect.left() - 3, top - 4), QPointF(rect.left() + 3, top - 4),
                               QPointF(rect.left(), top + 1)])
                p.setPen(Qt.PenStyle.NoPen)
            if rect.width() > 40:
                p.setPen(th.color("base"))
                p.drawText(rect.adjusted(3, 0, -2, 0), Qt.AlignmentFlag.AlignVCenter,
                           p.fontMetrics().elidedText(clean(b.span["label"]), Qt.TextElideMode.ElideRight,
                                                      int(rect.width() - 5)))
                p.setPen(Qt.PenStyle.NoPen)

    # ---------------------------------------------------------------- input
    def wheelEvent(self, e: Any) -> None:
        d = e.angleDelta().y()
        if d:
            self.zoom(1.25 if d > 0 else 0.8, self.v_of(e.position().x(), self.width()))
        e.accept()

    def mousePressEvent(self, e: Any) -> None:
        if e.button() == Qt.MouseButton.LeftButton:
            self._drag = (e.position().x(), self.v0, self.v1)
            self._moved = False

    def mouseMoveEvent(self, e: Any) -> None:
        if self._drag is not None and e.buttons() & Qt.MouseButton.LeftButton:
            x0, v0, v1 = self._drag
            dx = e.position().x() - x0
            if abs(dx) > 3:
                self._moved = True
                dv = dx / self._plot_w(self.width()) * (v1 - v0)
                self.v0, self.v1 = v0 - dv, v1 - dv
                self.viewChanged.emit()
                self.update()
            return
        b = self.bar_at(e.position().x(), e.position().y())
        if b is not None:
            QToolTip.showText(e.globalPosition().toPoint(), tooltip(tip(b.span)), self)
        else:
            QToolTip.hideText()

    def mouseReleaseEvent(self, e: Any) -> None:
        if e.button() != Qt.MouseButton.LeftButton:
            return
        moved, self._drag = self._moved, None
        if moved:
            return
        b = self.bar_at(e.position().x(), e.position().y())
        if b is not None:
            self.selected = b
            self.update()
            self.barClicked.emit(b.seq)

    def mouseDoubleClickEvent(self, _e: Any) -> None:
        self.fit()


class ContextMeter(QWidget):
    """Prompt tokens of every request (input + cache read + cache write), the model's context window as a
    line, compactions as marks."""

    def __init__(self, theme: Theme, parent: Optional[QWidget] = None) -> None:
        super().__init__(parent)
        self.theme = theme
        self.points: list[dict[str, Any]] = []
        self.compactions: list[dict[str, Any]] = []
        self.setMinimumHeight(90)
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(800, 140)

    def set_data(self, points: list[dict[str, Any]], compactions: list[dict[str, Any]]) -> None:
        self.points, self.compactions = points, compactions
        self.update()

    def _scale(self) -> tuple[float, bool]:
        """(top of the y axis, whether the context window is on it): the window when the prompts reach a
        quarter of it, else the prompts alone (the window is then named off scale, above)."""
        top = max([p["prompt"] for p in self.points] + [1])
        window = max([p["contextWindow"] or 0 for p in self.points] + [0])
        if window and top * 4 >= window:
            return max(top, window) * 1.08, True
        return top * 1.15, not window

    def paintEvent(self, _e: Any) -> None:
        p = QPainter(self)
        self.render_to(p, self.width(), self.height())
        p.end()

    def render_to(self, p: QPainter, w: float, h: float) -> None:
        th = self.theme
        p.fillRect(QRectF(0, 0, w, h), th.color("base"))
        pts = self.points
        p.setPen(th.color("dim"))
        if not pts:
            p.drawText(QRectF(0, 0, w, h), Qt.AlignmentFlag.AlignCenter, "No token counts in this log")
            return
        top, bottom = 18.0, h - 6.0
        pw = max(1.0, w - LEFT - 8)
        ymax, window_shown = self._scale()

        def X(i: float) -> float:
            return LEFT + (i + 0.5) / len(pts) * pw

        def Y(v: float) -> float:
            return bottom - v / ymax * (bottom - top)
        windows = {q["contextWindow"] for q in pts if q["contextWindow"]}
        p.drawText(QRectF(4, 0, w - 8, top), Qt.AlignmentFlag.AlignLeft,
                   f"context: prompt tokens of {len(pts):,} requests (max {max(q['prompt'] for q in pts):,})"
                   + (f"; window {', '.join(f'{x:,}' for x in sorted(windows))}" if windows else
                      "; context window not logged")
                   + (" (from the settings: not logged)" if any(q.get("windowFrom") == "settings" for q in pts) else "")
                   + ("" if window_shown else " (off scale, above)"))
        p.drawText(QRectF(4, top, LEFT - 8, 16), Qt.AlignmentFlag.AlignLeft, f"{ymax:,.0f}")
        p.drawText(QRectF(4, bottom - 16, LEFT - 8, 16), Qt.AlignmentFlag.AlignLeft, "0")
        bw = max(1.0, pw / len(pts) - 1)
        col = th.color("accent_assistant")
        step = max(1, int(len(pts) / pw))            # (more requests than pixels: every step-th)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(col)
        for i in range(0, len(pts), step):
            q = pts[i]
            y = Y(q["prompt"])
            p.drawRect(QRectF(X(i) - bw / 2, y, bw, bottom - y))
        p.setPen(QPen(th.color("err"), 1.5))         # the context window (per request: it may change)
        for i in range(0, len(pts), step):
            cw = pts[i]["contextWindow"]
            if cw and window_shown:
                p.drawLine(QPointF(X(i) - bw / 2 - 0.5, Y(cw)), QPointF(X(i) + bw / 2 + 0.5, Y(cw)))
        seqs = [q["seq"] for q in pts]
        from bisect import bisect_left
        p.setPen(QPen(th.color("warn"), 2, Qt.PenStyle.DashLine))
        for c in self.compactions:
            i = bisect_left(seqs, c["seq"])
            x = X(i - 0.5)
            p.drawLine(QPointF(x, top), QPointF(x, bottom))

    def mouseMoveEvent(self, e: Any) -> None:
        pts = self.points
        if not pts or e.position().x() < LEFT:
            return
        i = int((e.position().x() - LEFT) / max(1.0, self.width() - LEFT - 8) * len(pts))
        if 0 <= i < len(pts):
            q = pts[i]
            QToolTip.showText(e.globalPosition().toPoint(), tooltip(
                f"request at seq {q['seq']} (turn {q['turn']})\nprompt {q['prompt']:,} tokens "
                f"(cache read {q['cacheRead']:,})\ncontext window {q['contextWindow'] or 'not logged'}\n"
                f"model {q['model']}"), self)


def export_picture(widget: Any, path: str, width: int = 1600, height: Optional[int] = None) -> str:
    """Write ``widget``'s drawing (its ``render_to``) to ``path`` as PNG or SVG (by the suffix), atomically
    (a temporary file in the same folder, then a rename).  -> the path written."""
    h = height or widget.sizeHint().height()             # (the drawing's own height, not the dock's)
    svg = path.lower().endswith(".svg")
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=".svg" if svg else ".png", dir=d)
    os.close(fd)
    try:
        if svg:
            from PySide6.QtSvg import QSvgGenerator
            gen = QSvgGenerator()
            gen.setFileName(tmp)
            gen.setSize(QSize(width, h))
            gen.setViewBox(QRectF(0, 0, width, h))
            gen.setTitle("Session Lens timeline")
            p = QPainter(gen)
            widget.render_to(p, width, h)
            p.end()
        else:
            img = QImage(width, h, QImage.Format.Format_ARGB32)
            p = QPainter(img)
            p.setRenderHint(QPainter.RenderHint.Antialiasing)
            widget.render_to(p, width, h)
            p.end()
            if not img.save(tmp):           # (PNG: the temporary file's suffix)
                raise OSError(f"could not write {path}")
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)           # (mkstemp makes it 0600: an export gets the user's usual mode)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
