"""Painting history rows: one QTextDocument per row, built with QTextCursor.insertText.

Transcript text is only ever *inserted as text* (no setHtml, no markup parsing), so a
row holding ``<script>`` or ``<b>`` shows those characters literally.  Documents are
cached per (row, width, theme, search state); the list view stays virtualized (the
delegate paints rows, there is no widget per row).
"""
from __future__ import annotations

import time
import weakref
from typing import Optional

from ...textutil import CLIP_HINT
from ...log.query.textview import fold_spans
from ..plaintext import clean, isolate
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import (QAbstractTextDocumentLayout, QColor, QFont, QFontDatabase, QPainter, QPalette, QPen, QPixmap,
                           QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument, QTextOption)
from PySide6.QtWidgets import QStyle, QStyledItemDelegate

from . import markdown as md
from .paintcache import MIN_DOCS, ByteLRU, PixmapCache, doc_budget, doc_bytes, pixmap_bytes
from .rows import Content, Row
from .row_kind import CARD_KINDS, RowKind
from ..theme import Theme

PAD_X = 12
PAD_Y = 7
MARGIN_X = 8
MARGIN_Y = 3
STRIPE = 4

ACCENT = {
    RowKind.USER: "accent_user", RowKind.ASSISTANT: "accent_assistant", RowKind.TOOL_CALL: "accent_tool",
    RowKind.TOOL_RESULT: "accent_result", RowKind.STREAMING: "accent_assistant", RowKind.ATTEMPT_FAILED: "accent_error",
    RowKind.ATTEMPT_OPEN: "accent_error", RowKind.BAD: "accent_error", RowKind.NOTICE: "warn",
    RowKind.COMPACTION: "boundary",
}
PILL = {"synth": ("synth_bg", "synth_fg"), "hidden": ("hidden_bg", "hidden_fg"), "bad": ("bad_bg", "bad_fg"),
        "dropped": ("bad_bg", "bad_fg"), "legacy": ("mono_bg", "dim"), "warn": ("synth_bg", "synth_fg"),
        "card": ("mono_bg", "dim"), "shadow": ("hidden_bg", "hidden_fg"), "surface": ("mono_bg", "dim")}
PIXMAP_MAX_HEIGHT = 1600  # rows up to this tall (or two viewports) are painted from a cached pixmap
SIZES_MAX = 1200          # row heights kept (the exposed rows and those warmed around them); beyond,
                          # those of rows the model no longer exposes are forgotten (issue 36)
SHADOW_OPACITY = 0.55     # a row the model no longer sees (shadowed by a replacement) is drawn dimmed


def mono_font(size_pt: Optional[float] = None) -> QFont:
    f = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if size_pt:
        f.setPointSizeF(size_pt)
    return f


def row_of(index):
    """The Row of an index, read from the model directly.

    (Not ``index.data(role)``: in PySide6 6.12 a Python model answering None through
    ``QModelIndex.data`` called from Python over-releases None, crashing at exit.)
    """
    if not index.isValid():
        return None
    return index.model().row_at(index.row())


def _put(cur: QTextCursor, text: str, fmt: QTextCharFormat) -> None:
    """Log text into a row's document: control characters as visible pictures (never raw)."""
    cur.insertText(clean(text), fmt)


class DocBuilder:
    """Content -> QTextDocument (text inserted as text, never parsed as markup)."""

    def __init__(self, theme: Theme, font: QFont, markdown: bool = False):
        self.theme = theme
        self.markdown = markdown          # message text drawn from a Markdown parse (never as HTML)
        self.font = QFont(font)
        base = self.font.pointSizeF() if self.font.pointSizeF() > 0 else 10.0
        self.small = max(7.0, base - 1.5)
        self.mono = mono_font(max(7.5, base - 1.0))

    def fmt(self, color: str, bold=False, italic=False, size=None, mono=False, bg: Optional[str] = None):
        f = QTextCharFormat()
        if mono:
            f.setFont(self.mono)
        f.setForeground(QColor(getattr(self.theme, color, color)))
        if bold:
            f.setFontWeight(QFont.Weight.Bold)
        if italic:
            f.setFontItalic(True)
        if size:
            f.setFontPointSize(size)
        if bg:
            f.setBackground(QColor(getattr(self.theme, bg, bg)))
        return f

    def new_doc(self, width: float) -> QTextDocument:
        doc = QTextDocument()
        doc.setDocumentMargin(0)
        doc.setDefaultFont(self.font)
        opt = QTextOption()
        opt.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        doc.setDefaultTextOption(opt)
        doc.setUndoRedoEnabled(False)
        doc.setTextWidth(max(60.0, width))
        return doc

    def build(self, c: Content, kind: RowKind, width: float, search: str = "", current: bool = False) -> QTextDocument:
        doc = self.new_doc(width)
        cur = QTextCursor(doc)
        self.header(cur, c, kind)
        for b in c.blocks:
            self.block(cur, b)
        if search:
            self.highlight(doc, search, current)
        return doc

    def header(self, cur: QTextCursor, c: Content, kind: RowKind):
        accent = ACCENT.get(kind, "dim")
        if c.status == "error":
            accent = "err"
        if kind == RowKind.TURN_START:
            _put(cur, isolate(c.title), self.fmt("fg", bold=True, size=self.font.pointSizeF() + 1))
        elif kind in (RowKind.STEP_START, RowKind.STEP_END, RowKind.TURN_END):
            col = "err" if c.status == "error" else ("ok" if c.status == "ok" else "boundary")
            _put(cur, isolate(c.title), self.fmt(col, bold=kind == RowKind.TURN_END, size=self.small))
        else:
            _put(cur, c.badge, self.fmt(accent, bold=True, size=self.small))
            _put(cur, "  ", self.fmt("fg"))
            _put(cur, isolate(c.title), self.fmt("fg", bold=kind != RowKind.EVENT))
        for text, pk in c.pills:
            bg, fg = PILL.get(pk, ("mono_bg", "dim"))
            _put(cur, "  ", self.fmt("fg", size=self.small))
            f = self.fmt(fg, bold=True, size=self.small, bg=bg)
            if pk == "shadow" and c.link is not None:
                # a link to the replacement: an anchor in the character format (no markup parsed)
                f.setAnchor(True)
                f.setAnchorHref(f"seq:{int(c.link)}")
                f.setFontUnderline(True)
            _put(cur, f"\u2009{text}\u2009", f)
        if c.status in ("ok", "error", "running") and kind in CARD_KINDS:
            sym = {"ok": "✓", "error": "✗", "running": "…"}[c.status]
            col = {"ok": "ok", "error": "err", "running": "warn"}[c.status]
            _put(cur, "  " + sym, self.fmt(col, bold=True))
        if c.meta:
            _put(cur, "    " + c.meta, self.fmt("dim", size=self.small))

    def _new_block(self, cur: QTextCursor, bg: Optional[str] = None, indent: float = 0, top: float = 3):
        bf = QTextBlockFormat()
        bf.setTopMargin(top)
        if bg:
            bf.setBackground(QColor(getattr(self.theme, bg)))
        if indent:
            bf.setLeftMargin(indent)
        cur.insertBlock(bf)

    def block(self, cur: QTextCursor, b):
        if b.label:
            self._new_block(cur, top=5)
            _put(cur, b.label, self.fmt("dim", bold=True, size=self.small))
        style = b.style
        if style in ("mono", "diff"):
            for i, line in enumerate(b.text.rstrip("\n").split("\n")):
                self._new_block(cur, bg="mono_bg", indent=4, top=2 if i == 0 else 0)
                col = "fg"
                if style == "diff":
                    if line.startswith("+") and not line.startswith("+++"):
                        col = "diff_add"
                    elif line.startswith("-") and not line.startswith("---"):
                        col = "diff_del"
                    elif line.startswith("@@"):
                        col = "dim"
                if line.startswith("… ") and CLIP_HINT in line:
                    col = "dim"
                _put(cur, line or " ", self.fmt(col, mono=True))
            return
        if style == "text" and self.markdown:
            self.markdown_text(cur, b.text)
            return
        self._new_block(cur, top=4 if style in ("text", "reasoning") else 2)
        f = {
            "text": lambda: self.fmt("fg"),
            "heading": lambda: self.fmt("fg", bold=True),
            "reasoning": lambda: self.fmt("dim", italic=True),
            "dim": lambda: self.fmt("dim", size=self.small),
            "error": lambda: self.fmt("err", bold=True),
            "usage": lambda: self.fmt("dim", size=self.small),
            "note": lambda: self.fmt("warn", italic=True, size=self.small),
        }.get(style, lambda: self.fmt("fg"))()
        _put(cur, b.text, f)

    # ------------------------------------------------------------------ Markdown (parsed, drawn as text)
    def _spans(self, cur: QTextCursor, spans: list, base: str = "fg", size=None, bold=False, italic=False):
        for sp in spans:
            if sp.href:
                f = self.fmt("link", bold=bold or sp.bold, italic=italic or sp.italic, size=size)
                f.setFontUnderline(True)
                f.setAnchor(True)
                f.setAnchorHref(sp.href)             # data only: the view asks before opening it
                f.setToolTip(sp.href)
            else:
                f = self.fmt(base, bold=bold or sp.bold, italic=italic or sp.italic, size=size, mono=sp.code,
                             bg="mono_bg" if sp.code else None)
            if sp.strike:
                f.setFontStrikeOut(True)
            _put(cur, sp.text, f)

    def _md_block(self, cur: QTextCursor, mb, top: float, bg: Optional[str] = None, extra: float = 0) -> None:
        """A new block for a Markdown block: indented by its list depth and quote depth, with one
        quote bar per quote level."""
        self._new_block(cur, bg=bg, indent=14 * mb.level + 12 * mb.quote + extra, top=top)
        if mb.quote:
            cur.insertText("│ " * mb.quote, self.fmt("dim"))

    def markdown_text(self, cur: QTextCursor, text: str):
        base = self.font.pointSizeF() if self.font.pointSizeF() > 0 else 10.0
        body, _, last = text.rpartition("\n")
        note = last if body and last.startswith("… ") and CLIP_HINT in last else ""
        self._markdown_blocks(cur, body if note else text, base)
        if note:                       # the clip note is not part of the message (a table would take it as a row)
            self._new_block(cur, top=2)
            _put(cur, note, self.fmt("dim"))

    def _markdown_blocks(self, cur: QTextCursor, text: str, base: float) -> None:
        for mb in md.parse(text):
            k = mb.kind
            tone, slant = ("dim", True) if mb.quote else ("fg", False)
            if k == "heading":
                self._md_block(cur, mb, top=6)
                self._spans(cur, mb.spans, size=base + max(0, 4 - mb.level) * 1.5, bold=True)
            elif k == "para":
                self._md_block(cur, mb, top=4 if not mb.level else 2, extra=10 if mb.level else 0)
                self._spans(cur, mb.spans, base=tone, italic=slant)
            elif k == "bullet":
                self._md_block(cur, mb, top=1)
                _put(cur, mb.marker + " ", self.fmt("dim", bold=True))
                self._spans(cur, mb.spans, base=tone, italic=slant)
            elif k in ("code", "html"):
                for i, line in enumerate(mb.lines or [""]):
                    self._md_block(cur, mb, bg="mono_bg" if k == "code" else None, top=3 if i == 0 else 0, extra=4)
                    _put(cur, line or " ", self.fmt("fg" if k == "code" else "dim", mono=True))
            elif k == "table":
                n = max(len(r) for r in mb.rows)
                rows = [r + [""] * (n - len(r)) for r in mb.rows]
                widths = [min(40, max(len(r[c]) for r in rows)) for c in range(n)]
                for i, r in enumerate(rows):
                    self._md_block(cur, mb, bg="mono_bg", top=3 if i == 0 else 0, extra=4)
                    line = " │ ".join(c[:40].ljust(widths[j]) for j, c in enumerate(r))
                    _put(cur, line, self.fmt("fg", mono=True, bold=i == 0))
                    if i == 0:
                        self._md_block(cur, mb, bg="mono_bg", top=0, extra=4)
                        _put(cur, "─┼─".join("─" * w for w in widths), self.fmt("boundary", mono=True))
            elif k == "rule":
                self._md_block(cur, mb, top=4)
                _put(cur, "─" * 24, self.fmt("dim"))

    def highlight(self, doc: QTextDocument, term: str, current: bool):
        fmt = QTextCharFormat()
        fmt.setBackground(QColor(self.theme.current_match_bg if current else self.theme.match_bg))
        fmt.setForeground(QColor(self.theme.match_fg))
        cur = QTextCursor(doc)
        # casefolded spans (core): "strasse" highlights "straße" whole, as the row matched it
        for a, b in fold_spans(doc.toPlainText(), term, 200, utf16=True):
            cur.setPosition(a)
            cur.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
            cur.mergeCharFormat(fmt)


class HistoryDelegate(QStyledItemDelegate):
    """Paints a Row: background by kind, accent stripe, its document; no editors."""

    def __init__(self, view, theme: Theme):
        super().__init__(view)
        self.view = view
        self.theme = theme
        self._vp = view.viewport()
        # documents and pixmaps bounded by bytes of a few screens (paintcache.py, issue 36)
        self.docs = ByteLRU(lambda: doc_budget(self._vp), MIN_DOCS)   # doc key -> QTextDocument
        self._sizes: dict = {}              # id(row) -> (weakref to row, version, width, QSize): a weak
                                            # reference, so a dropped page's rows (and events) are freed
        self.pixmaps = PixmapCache(self._vp)     # pixmap key (_pix_key) -> (weakref to row, QPixmap)
        self._vw = self._vp.width()
        self.markdown = False
        self.builder = DocBuilder(theme, view.font())
        self.first_paint_cb = None
        self.exposed = None                 # the paint event's rect (QRect), set by the view
        self.missed = 0                     # rows drawn directly (no pixmap yet) since the view last looked
        self.px_cost = 4e-6                 # seconds to render a pixel of row height into a pixmap (measured)
        self.render_whole = True            # a row wholly exposed is rendered into its pixmap as it is painted
                                            # (not for a first paint: drawn directly, pixmaps in idle time)

    def set_theme(self, theme: Theme):
        self.theme = theme
        self.builder = DocBuilder(theme, self.view.font(), self.markdown)
        self.docs.clear()
        self._sizes.clear()

    def set_markdown(self, on: bool):
        self.markdown = bool(on)
        self.builder = DocBuilder(self.theme, self.view.font(), self.markdown)
        self.clear_cache()

    def anchor_at(self, index, pos) -> str:
        """The link target under view position ``pos`` in row ``index`` ('' if none)."""
        row = row_of(index)
        if row is None:
            return ""
        pad, margin = self.row_pads(row)
        rect = self.view.visualRect(index)
        x = pos.x() - (rect.left() + MARGIN_X + STRIPE + PAD_X)
        y = pos.y() - (rect.top() + margin + pad)
        doc = self.document(row, index)
        return doc.documentLayout().anchorAt(QPointF(x, y)) or ""

    def clear_cache(self):
        self.docs.clear()
        self._sizes.clear()
        self.pixmaps.clear()

    def content_width(self) -> float:
        return max(120, self._vw - 2 * MARGIN_X - 2 * PAD_X - STRIPE)

    def row_pads(self, row: Row) -> tuple[int, int]:
        if row.is_boundary:
            return 3, 2 if row.kind != RowKind.TURN_START else 8
        return PAD_Y, MARGIN_Y

    def _match(self, row: Row, index=None) -> tuple[str, bool]:
        """(the find term if the row matches it else '', the row is the current match)."""
        model = self.view.model()
        term = getattr(model, "find_term", "")
        if not term or term not in row.search_text():
            return "", False
        i = index.row() if index is not None else model.row_index(row)
        return term, getattr(model, "current_match_row", None) == i

    def document(self, row: Row, index=None) -> QTextDocument:
        term, current = self._match(row, index)
        width = self.content_width()
        key = (id(row), row.key, row.version, int(width), self.theme.generation, term, current)
        doc = self.docs.get(key)
        if doc is not None:
            return doc
        doc = self.builder.build(row.content(), row.kind, width, term, current)
        doc.size()                          # laid out now (its bytes are counted laid out)
        return self.docs.put(key, doc, doc_bytes(doc))

    def sizeHint(self, option, index) -> QSize:
        """Row height, cached per row (QListView asks for every row at each layout, so the
        hit path is kept minimal; search highlights never change heights)."""
        try:
            row: Row = self._model_rows()[index.row()]
        except (IndexError, TypeError):
            return QSize(self._vw, 20)
        return self.row_size(row, index)

    def row_size(self, row: Row, index=None) -> QSize:
        """The row's height at the current width (its document built and cached on a miss)."""
        e = self._sizes.get(id(row))
        if e is not None and e[0]() is row and e[1] == row.version and e[2] == self._vw:
            return e[3]
        doc = self.document(row, index)
        pad, margin = self.row_pads(row)
        size = QSize(self._vw, int(doc.size().height() + 0.999) + 2 * pad + 2 * margin)
        self._sizes[id(row)] = (weakref.ref(row), row.version, self._vw, size)
        if len(self._sizes) > SIZES_MAX:
            self._prune_sizes(row)
        return size

    def _prune_sizes(self, row: Row) -> None:
        """Forget the heights of rows the model does not expose (``row`` just sized is kept)."""
        try:
            keep = {id(r) for r in self._model_rows()}
        except (AttributeError, TypeError):
            keep = set()
        keep.add(id(row))
        self._sizes = {k: e for k, e in self._sizes.items() if k in keep}

    def has_size(self, row: Row) -> bool:
        e = self._sizes.get(id(row))
        return e is not None and e[0]() is row and e[1] == row.version and e[2] == self._vw

    def warm(self, rows, budget_s: float) -> int:
        """Build the documents and heights of ``rows`` (loaded rows about to be exposed) until
        ``budget_s`` seconds are spent: idle-time work that a later layout then finds cached.
        Returns how many rows were done (all of them: ``len(rows)``)."""
        end = time.perf_counter() + budget_s
        for k, row in enumerate(rows):
            if time.perf_counter() > end:
                return k
            self.row_size(row)
        return len(rows)

    def _model_rows(self):
        return self.view.model().rows

    def viewport_resized(self, width: int) -> None:
        self._vw = width
        self.pixmaps.shrink()               # (budgets follow the viewport's size)
        self.docs.shrink()

    def _pix_key(self, row: Row, index, selected: bool, w: int, h: int) -> Optional[tuple]:
        """The pixmap cache key of a row drawn ``w`` x ``h`` (None: too tall to keep as a pixmap):
        what its document's key holds, and the selection and size."""
        if h > max(PIXMAP_MAX_HEIGHT, 2 * self._vp.height()) or w <= 0 or h <= 0:
            return None
        term, current = self._match(row, index)
        return (id(row), row.key, row.version, self.theme.generation, term, current, selected, w, h)

    def pixmap_bytes(self, rect) -> int:
        """The bytes of a row pixmap at ``rect``'s size (0: too tall to keep one)."""
        if rect.height() > max(PIXMAP_MAX_HEIGHT, 2 * self._vp.height()):
            return 0
        return pixmap_bytes(rect.width(), rect.height(), self._vp.devicePixelRatioF())

    def has_pixmap(self, row: Row, rect, selected: bool) -> bool:
        """The row is blitted from a rendered pixmap at ``rect``'s size (or is too tall for one)."""
        key = self._pix_key(row, None, selected, rect.width(), rect.height())
        return key is None or self.pixmaps.pixmap(key, row) is not None

    def render_pixmap(self, row: Row, rect, selected: bool) -> float:
        """Render the row into its cached pixmap (idle time: the view's warm step); returns the
        seconds it took (0: nothing to do)."""
        key = self._pix_key(row, None, selected, rect.width(), rect.height())
        if key is None or self.pixmaps.pixmap(key, row) is not None:
            return 0.0
        t0 = time.perf_counter()
        doc = self.document(row)
        self._render(key, row, doc, rect, selected)
        dt = time.perf_counter() - t0
        # what a pixel of row height costs to render (the warm step's estimate), smoothed
        self.px_cost = 0.8 * self.px_cost + 0.2 * dt / max(1, rect.height())
        return dt

    def _render(self, key: tuple, row: Row, doc: QTextDocument, rect, selected: bool) -> QPixmap:
        dpr = self._vp.devicePixelRatioF()
        pm = QPixmap(int(rect.width() * dpr + 0.5), int(rect.height() * dpr + 0.5))
        pm.setDevicePixelRatio(dpr)
        pm.fill(self._vp.palette().color(self._vp.backgroundRole()))
        p = QPainter(pm)
        self._paint_row(p, QRectF(0, 0, rect.width(), rect.height()), row, doc, selected)
        p.end()
        self.pixmaps.put(key, (weakref.ref(row), pm), pm.width() * pm.height() * 4)   # (the row weakly: its id
        return pm                                                                   # is checked on a hit)

    def paint(self, painter: QPainter, option, index) -> None:
        """A row rendered into a pixmap (in idle time, by the view's warm step; kept while it
        stays the same: same document, size and selection) is blitted: scrolling repaints thin
        strips of the same rows many times, and the antialiased cards and the text layout then
        cost nothing.  A row without one is drawn directly, clipped to the exposed strip
        (``exposed``, set by the view per paint event): a first paint costs what it shows."""
        row: Row = row_of(index)
        if row is None:
            return
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        rect = option.rect
        key = self._pix_key(row, index, selected, rect.width(), rect.height())
        got = self.pixmaps.pixmap(key, row) if key is not None else None
        if got is None and key is not None and self.render_whole and (self.exposed is None or self.exposed.contains(rect)):
            got = self._render(key, row, self.document(row, index), rect, selected)   # all of it is drawn anyway
        if got is not None:
            painter.drawPixmap(rect.topLeft(), got)     # (no document needed: it may be long evicted)
        else:
            self._paint_row(painter, QRectF(rect), row, self.document(row, index), selected, self.exposed)
            if key is not None:
                self.missed += 1
        if self.first_paint_cb is not None:
            cb, self.first_paint_cb = self.first_paint_cb, None
            cb()

    def _paint_row(self, painter: QPainter, rect: QRectF, row: Row, doc: QTextDocument, selected: bool,
                   exposed=None) -> None:
        th = self.theme
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        if row.surface and row.surface.get("surface") == "shadowed":
            painter.setOpacity(SHADOW_OPACITY)
        pad, margin = self.row_pads(row)
        r = rect.adjusted(MARGIN_X, margin, -MARGIN_X, -margin)
        if row.is_boundary:
            if selected:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor(th.selected_bg))
                painter.drawRoundedRect(r, 4, 4)
            if row.kind == RowKind.TURN_START:
                painter.setPen(QPen(QColor(th.boundary), 1))
                y = r.top() + 1
                painter.drawLine(QPointF(r.left(), y), QPointF(r.right(), y))
            if "synthesized" in row.marks:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor(th.synth_bg))
                painter.drawRoundedRect(r, 4, 4)
        else:
            bg = th.row_bg
            if row.kind == RowKind.USER:
                bg = th.user_bg
            elif row.is_card:
                bg = th.card_bg
            elif row.kind == RowKind.BAD or "dropped" in row.marks:
                bg = th.bad_bg
            elif "synthesized" in row.marks:
                bg = th.synth_bg
            elif "hidden" in row.marks:
                bg = th.hidden_bg
            elif row.kind in (RowKind.EVENT, RowKind.NOTICE):
                bg = th.base
            painter.setBrush(QColor(th.selected_bg if selected else bg))
            border = th.selected if selected else (th.bad_fg if row.kind == RowKind.BAD else th.card_border)
            pen = QPen(QColor(border), 2 if selected or row.kind == RowKind.BAD else 1)
            if "synthesized" in row.marks and not selected:
                pen.setStyle(Qt.PenStyle.DashLine)
                pen.setColor(QColor(th.synth_fg))
            if row.kind in (RowKind.EVENT, RowKind.NOTICE) and not selected:
                pen = QPen(Qt.PenStyle.NoPen)
            painter.setPen(pen)
            painter.drawRoundedRect(r, 5, 5)
            accent = ACCENT.get(row.kind)
            if accent:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor(getattr(th, accent)))
                painter.drawRoundedRect(QRectF(r.left(), r.top(), STRIPE, r.height()), 2, 2)
        painter.translate(r.left() + STRIPE + PAD_X, r.top() + pad)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.palette.setColor(QPalette.ColorRole.Text, QColor(th.fg))
        clip = QRectF(0, 0, doc.textWidth() + 2, r.height())
        if exposed is not None:          # only the blocks in the exposed strip are drawn
            clip = clip.intersected(QRectF(exposed).translated(-(r.left() + STRIPE + PAD_X), -(r.top() + pad)))
        ctx.clip = clip
        painter.setClipRect(clip)
        doc.documentLayout().draw(painter, ctx)
        painter.restore()
