"""Draw the Session Lens app icon with QPainter and export the PNG sizes plus an SVG.

    QT_QPA_PLATFORM=offscreen .venv/bin/python packaging/make_icons.py [OUT_DIR]

Writes OUT_DIR/hicolor/<N>x<N>/apps/io.sessionlens.SessionLens.png for N in SIZES and
OUT_DIR/hicolor/scalable/apps/io.sessionlens.SessionLens.svg (default OUT_DIR: resources/icons).
The PNGs and the SVG come from the same geometry (a 512-unit canvas): a rounded tile, log
lines, and a lens over them.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

APP_ID = "io.sessionlens.SessionLens"
SIZES = (16, 32, 48, 64, 128, 256, 512)

# geometry on a 512 x 512 canvas
TILE = (32, 32, 448, 448, 96)                      # x, y, w, h, corner radius
GRAD = ("#2b5876", "#4e4376")                      # top-left -> bottom-right
LINES = [(96, 120, 280, 30), (96, 184, 210, 30), (96, 248, 250, 30), (96, 312, 150, 30)]
LINE_COLOUR = "#e8eef5"
LENS = (296, 296, 112, 36)                         # cx, cy, r, stroke width
LENS_FILL = "#ffffff"
LENS_FILL_ALPHA = 0.22
HANDLE = (378, 378, 446, 446, 52)                  # x1, y1, x2, y2, width
HANDLE_COLOUR = "#f5b942"


def svg() -> str:
    x, y, w, h, r = TILE
    cx, cy, lr, lw = LENS
    hx1, hy1, hx2, hy2, hw = HANDLE
    bars = "\n".join(f'  <rect x="{bx}" y="{by}" width="{bw}" height="{bh}" rx="{bh / 2:g}" fill="{LINE_COLOUR}"/>'
                     for bx, by, bw, bh in LINES)
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="512" height="512" viewBox="0 0 512 512">
  <defs>
    <linearGradient id="g" x1="{x}" y1="{y}" x2="{x + w}" y2="{y + h}" gradientUnits="userSpaceOnUse">
      <stop offset="0" stop-color="{GRAD[0]}"/>
      <stop offset="1" stop-color="{GRAD[1]}"/>
    </linearGradient>
  </defs>
  <rect x="{x}" y="{y}" width="{w}" height="{h}" rx="{r}" fill="url(#g)"/>
{bars}
  <line x1="{hx1}" y1="{hy1}" x2="{hx2}" y2="{hy2}" stroke="{HANDLE_COLOUR}" stroke-width="{hw}" stroke-linecap="round"/>
  <circle cx="{cx}" cy="{cy}" r="{lr}" fill="{LENS_FILL}" fill-opacity="{LENS_FILL_ALPHA}" stroke="#ffffff" stroke-width="{lw}"/>
</svg>
"""


def render(size: int):
    from PySide6.QtCore import QPointF, QRectF, Qt
    from PySide6.QtGui import QBrush, QColor, QImage, QLinearGradient, QPainter, QPen

    img = QImage(size, size, QImage.Format_ARGB32_Premultiplied)
    img.fill(Qt.transparent)
    p = QPainter(img)
    p.setRenderHint(QPainter.Antialiasing, True)
    p.scale(size / 512.0, size / 512.0)
    x, y, w, h, r = TILE
    g = QLinearGradient(QPointF(x, y), QPointF(x + w, y + h))
    g.setColorAt(0, QColor(GRAD[0]))
    g.setColorAt(1, QColor(GRAD[1]))
    p.setPen(Qt.NoPen)
    p.setBrush(QBrush(g))
    p.drawRoundedRect(QRectF(x, y, w, h), r, r)
    p.setBrush(QColor(LINE_COLOUR))
    for bx, by, bw, bh in LINES:
        p.drawRoundedRect(QRectF(bx, by, bw, bh), bh / 2, bh / 2)
    hx1, hy1, hx2, hy2, hw = HANDLE
    p.setPen(QPen(QColor(HANDLE_COLOUR), hw, Qt.SolidLine, Qt.RoundCap))
    p.drawLine(QPointF(hx1, hy1), QPointF(hx2, hy2))
    cx, cy, lr, lw = LENS
    fill = QColor(LENS_FILL)
    fill.setAlphaF(LENS_FILL_ALPHA)
    p.setBrush(fill)
    p.setPen(QPen(QColor("#ffffff"), lw))
    p.drawEllipse(QPointF(cx, cy), lr, lr)
    p.end()
    return img


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = Path(argv[0] if argv else Path(__file__).resolve().parents[1] / "resources" / "icons")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication
    app = QGuiApplication.instance() or QGuiApplication([])  # noqa: F841 (fonts/pixmaps need it)
    for n in SIZES:
        d = out / "hicolor" / f"{n}x{n}" / "apps"
        d.mkdir(parents=True, exist_ok=True)
        if not render(n).save(str(d / f"{APP_ID}.png"), "PNG"):
            print(f"make_icons: cannot write {d}", file=sys.stderr)
            return 1
    d = out / "hicolor" / "scalable" / "apps"
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{APP_ID}.svg").write_text(svg(), encoding="utf-8")
    print(f"make_icons: {len(SIZES)} PNGs and 1 SVG in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
