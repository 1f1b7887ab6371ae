"""Event inspector: the selected row's seq, links, presenter view and raw JSON.

Raw JSON is pretty-printed from the row's stored bytes (a packed row shows the stored
packed row and the expanded member).  All transcript text is plain text: the only
rich-text label holds links this module generates from integers.
"""
from __future__ import annotations

import json
from typing import Optional

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QTextEdit, QVBoxLayout, QWidget

from .history.delegate import DocBuilder, mono_font
from ..log.format.versions import replace_bounds
from ..textutil import pretty_json
from .history.lazyviews import shown_view
from .history.rows import Block, Content, Row, RowKind
from .theme import Theme

MAX_RAW_DISPLAY = 400_000


def pretty_raw(raw: bytes) -> str:
    """Stored row bytes pretty-printed (or as text when they are not JSON)."""
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.dumps(json.loads(text), ensure_ascii=False, indent=2, allow_nan=False)
    except ValueError:       # (not JSON; or 1e999, a 5000-digit integer: shown as stored, issue 27)
        return text


def view_content(view: dict) -> Content:
    """A presenter view, unabridged, for the inspector."""
    blocks = []
    if isinstance(view.get("fallback"), str) and view.get("fallback"):
        blocks.append(Block("note", f"generic card because: {view['fallback']}"))
    for k in ("summary", "status", "command", "exitCode", "path", "query", "agent"):
        if view.get(k) is not None and view.get(k) != "":
            blocks.append(Block("mono" if k == "command" else "text", str(view[k]), label=k))
    if isinstance(view.get("items"), list) and view["items"]:
        blocks.append(Block("mono", pretty_json(view["items"]), label="items"))
    for s in view.get("sections") or []:
        if isinstance(s, dict):
            style = "diff" if s.get("lang") == "diff" else ("mono" if s.get("mono") else "text")
            blocks.append(Block(style, str(s.get("text", "")), label=str(s.get("label") or "section")))
    badge = f"{view.get('for', '?').upper()} VIEW"
    title = f"{view.get('card', '?')} card · {view.get('tool', '')} · {view.get('title', '')}".strip(" ·")
    pills = [("fallback: generic card", "warn")] if view.get("fallback") else []
    return Content(badge=badge, title=title, blocks=blocks, pills=pills)


def seq_links_html(seqs: list, expanded: bool = False, key: str = "", max_runs: int = 4) -> str:
    """Seqs as links, runs as ranges ("735–1050"); past ``max_runs`` runs (unless ``expanded``)
    the first runs, "…", the last, the count and an "all ›" link (``more:<key>``).  Built from
    integers and ``key`` (a fixed string of ours) only."""
    from html import escape

    from ..log.format.seqranges import seq_runs
    runs = seq_runs(seqs)

    def link(s: int) -> str:
        return f'<a href="seq:{int(s)}">{int(s)}</a>'

    def run(r: tuple) -> str:
        return link(r[0]) if r[0] == r[1] else f"{link(r[0])}–{link(r[1])}"
    if expanded or len(runs) <= max_runs:
        shown = runs[:5000]
        more = f" … (+{len(runs) - len(shown):,} runs)" if len(runs) > len(shown) else ""
        return ", ".join(map(run, shown)) + more
    n = sum(b - a + 1 for a, b in runs)
    head = ", ".join(map(run, runs[:max_runs - 1]))
    return f'{head}, … {run(runs[-1])} ({n:,} seqs) <a href="more:{escape(key, quote=True)}">all ›</a>'


def _set_text(label: QLabel, text: str) -> None:
    """A label of the inspector's heading shows only with a text: an empty one would leave an
    empty band (its line height and the layout's spacing) above the JSON."""
    label.setText(text)
    label.setVisible(bool(text))


class EventInspector(QWidget):
    seqLinkActivated = Signal(int)

    def __init__(self, theme: Theme, parent=None):
        super().__init__(parent)
        self.theme = theme
        self.row: Optional[Row] = None
        self.focus_seq: Optional[int] = None
        self.shown_event = None
        self.expanded: set = set()        # link groups shown whole ("all ›" clicked) for this row
        self._link_groups: list = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 6, 6, 6)
        self.title = QLabel("No row selected")
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        self.title.setWordWrap(True)
        f = self.title.font()
        f.setBold(True)
        self.title.setFont(f)
        lay.addWidget(self.title)
        self.where = QLabel("")
        self.where.setTextFormat(Qt.TextFormat.PlainText)
        self.where.setWordWrap(True)
        lay.addWidget(self.where)
        # links: rich text, but built only from integers (never transcript text)
        self.links = QLabel("")
        self.links.setTextFormat(Qt.TextFormat.RichText)
        self.links.setWordWrap(True)
        self.links.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse |
                                           Qt.TextInteractionFlag.LinksAccessibleByKeyboard)
        self.links.linkActivated.connect(self._on_link)
        lay.addWidget(self.links)
        self.where.hide()                  # (shown with a text: _set_text)
        self.links.hide()
        split = QSplitter(Qt.Orientation.Vertical)
        self.view_box = QTextEdit()
        self.view_box.setReadOnly(True)
        self.view_box.setAcceptRichText(False)
        self.view_box.setObjectName("presenterView")
        split.addWidget(self.view_box)
        self.raw = QPlainTextEdit()
        self.raw.setReadOnly(True)
        self.raw.setObjectName("rawJson")
        self.raw.setFont(mono_font())
        self.raw.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        split.addWidget(self.raw)
        split.setSizes([220, 400])
        split.setStretchFactor(0, 0)          # a taller or shorter panel changes the JSON's height, not the card's
        split.setStretchFactor(1, 1)
        lay.addWidget(split, 1)
        self.split = split
        self._fitting = False
        self.view_box.hide()
        self.link_seqs: list = []

    def set_theme(self, theme: Theme):
        self.theme = theme
        if self.row is not None or self.shown_event is not None:
            self.show_row(self.row, self.focus_seq, self.shown_event)

    summary = ""          # the session summary shown while no row is selected (plain text)

    def set_summary(self, text: str) -> None:
        self.summary = text or ""
        if self.row is None and self.shown_event is None:
            self.clear()

    def clear(self):
        self.row = None
        self.shown_event = None
        self.focus_seq = None
        self.title.setText("No row selected")
        _set_text(self.where, "")
        _set_text(self.links, "")
        self.link_seqs = []
        self.view_box.clear()
        self.view_box.hide()
        self.raw.setPlainText(self.summary)
        if self.summary:
            self.title.setText("Session summary (no row selected)")

    def _on_link(self, href: str):
        if href.startswith("more:"):
            self.expanded.add(href[5:])
            self._set_links(self._link_groups)
            return
        if href.startswith("seq:"):
            try:
                self.seqLinkActivated.emit(int(href[4:]))
            except ValueError:
                pass

    def _set_links(self, groups: list):
        """groups: [(label, [seq…])] (labels are fixed strings of this module).  Runs of seqs are
        ranges; a long list is summarised, the whole of it one click away ("all ›")."""
        parts = []
        self.link_seqs = []
        self._link_groups = groups
        for label, seqs in groups:
            seqs = [int(s) for s in seqs if isinstance(s, int)]
            if not seqs:
                continue
            self.link_seqs.extend(seqs)
            parts.append(f"{label}: {seq_links_html(seqs, label in self.expanded, label)}")
        _set_text(self.links, "<br>".join(parts))

    def show_row(self, row: Optional[Row], focus_seq: Optional[int] = None, event=None, note: str = ""):
        """Show ``row`` (or, for a seq with no row, ``event``); ``focus_seq`` picks a member."""
        if row is not self.row or event is not self.shown_event:
            self.expanded = set()
        self.row, self.focus_seq, self.shown_event = row, focus_seq, event
        ev = event
        if ev is None and row is not None:
            ev = row.event
            if focus_seq is not None and row.chunks and focus_seq != row.seq:
                for c in row.chunks:
                    if c.seq == focus_seq:
                        ev = c
                        break
        if row is not None and row.bad is not None:
            b = row.bad
            self.title.setText(f"{b.kind} row — not an event")
            at = [f"line {b.line}" if b.line else None, f"byte {b.offset}" if b.offset is not None and b.offset >= 0 else None]
            _set_text(self.where, " · ".join(w for w in at if w) + f"\n{b.reason}")
            self._set_links([])
            self.view_box.hide()
            self._set_raw(b.raw.decode("utf-8", errors="replace"))
            return
        if ev is None:
            self.clear()
            return
        self.title.setText(f"{ev.type} · seq {ev.seq}" + (f"  ({note})" if note else ""))
        where = []
        if ev.synthesized:
            where.append("synthesized by the logical closure — not on disk")
        else:
            if ev.line:
                where.append(f"line {ev.line}")
            if ev.offset is not None and ev.offset >= 0:
                where.append(f"byte {ev.offset}")
            if ev.packed:
                where.append(f"packed {ev.packed} row, member {ev.member}")
        if ev.legacy:
            where.append(f"legacy shape converted in memory: {ev.legacy}")
        if not ev.known:
            where.append("unknown event type")
        if row is not None and "dropped" in row.marks:
            where.append("a repair would truncate this row")
        if row is not None and row.attempt is not None:
            a = row.attempt
            where.append(f"attempt seq {a.first_seq}–{a.last_seq}: {a.status}"
                         + (f" — {a.failure_reason()}" if a.failed else ""))
        _set_text(self.where, " · ".join(where))
        groups = []
        if ev.source_event_seqs:
            groups.append(("sourceEventSeqs", list(ev.source_event_seqs)))
        if ev.is_replace:
            groups.append(("replaces", list(replace_bounds(ev.surface_op))))   # v0–v2 start/end, v3+ startSeq/endSeq
        if row is not None and row.call is not None and ev is row.event:
            groups.append(("tool call", [row.call.seq]))
        if row is not None and row.chunks and (row.kind != RowKind.ASSISTANT or ev is row.event):
            seqs = [c.seq for c in row.chunks]
            groups.append(("chunks", seqs))
        if row is not None and row.attempt is not None and getattr(row.attempt, "retry_seq", None) is not None:
            groups.append(("retry", [row.attempt.retry_seq]))
        self._set_links(groups)
        view = shown_view(row) if (row is not None and ev is row.event) else None
        if isinstance(view, dict):
            builder = DocBuilder(self.theme, self.view_box.font())
            doc = builder.build(view_content(view), RowKind.TOOL_CALL if view.get("for") == "call" else RowKind.TOOL_RESULT,
                          max(200, self.view_box.viewport().width() - 8))
            doc.setParent(self.view_box)
            self.view_box.setDocument(doc)
            self.view_box.show()
            # as tall as the card (again when the width changes: the card's height changes)
            doc.documentLayout().documentSizeChanged.connect(self._fit_view)
            self._fit_view()
        else:
            self.view_box.hide()
        if ev.synthesized or not ev.raw:
            self._set_raw("// synthesized (not stored): the logical event\n" + pretty_json(ev.envelope()))
        elif ev.packed:
            self._set_raw(f"// stored row (packed {ev.packed}; this event is member {ev.member})\n"
                          + pretty_raw(ev.raw) + "\n\n// expanded logical event\n" + pretty_json(ev.envelope()))
        else:
            self._set_raw(pretty_raw(ev.raw))

    def _fit_view(self, *_) -> None:
        """The presenter view as tall as its card (at most half the panel, at least 3 lines):
        a short card leaves no empty band above the JSON, a long one scrolls.  The card is
        measured at the view's width without a scroll bar (the width it has when it fits): a
        scroll bar that came and went would change the card's height under the measure."""
        vb = self.view_box
        total = sum(self.split.sizes())
        if self._fitting or total <= 0 or not vb.isVisible():
            return
        self._fitting = True
        try:
            vb.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
            want = int(vb.document().size().height() + 0.999) + 2 * vb.frameWidth() + 6   # (a little air below)
            cap = max(220, total // 2)
            if want > cap:
                want = cap
                vb.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
            want = max(3 * vb.fontMetrics().lineSpacing(), want)
            self.split.setSizes([want, max(0, total - want)])
        finally:
            self._fitting = False

    def _set_raw(self, text: str):
        if len(text) > MAX_RAW_DISPLAY:
            text = text[:MAX_RAW_DISPLAY] + f"\n… ({len(text) - MAX_RAW_DISPLAY:,} more characters; Copy raw JSON row has all)"
        self.raw.setPlainText(text)
