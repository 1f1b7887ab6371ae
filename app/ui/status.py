"""The window's status bar and how errors are worded.

* :class:`StatusBar`: temporary messages go to an eliding label of their own (left, takes
  the free width), so they never run into the permanent counters on the right and are
  never cut mid-word: a message that does not fit ends in "…" and is whole in the tooltip.
* :func:`humane_error`: a worker's error text (``"ValueError: …"``) as a sentence for people
  (``summary``) plus the original text for "Details" (``details``).  No Python exception
  names reach the status bar or the banner.
* :func:`banner_lines`, :func:`empty_state_text`: what the banner and the empty state say;
  :func:`ensure_menu`: the menu bar's menus in one order (File, Edit, View, Go, Tools, Help).
"""
from __future__ import annotations

import re
from typing import Optional

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QLabel, QMenu, QSizePolicy, QStatusBar

# "SomeError: text", "pkg.mod.SomeError: text", or just "SomeError"
_EXC = re.compile(r"^\s*((?:[A-Za-z_][\w]*\.)*([A-Z][A-Za-z0-9_]*(?:Error|Exception|Warning|Exit|Interrupt|Changed)))"
                  r"(?::\s*(.*))?$", re.S)

_PLAIN = {
    "FileNotFoundError": "The file is not there any more",
    "IsADirectoryError": "This is a folder, not a session file",
    "NotADirectoryError": "A part of the path is not a folder",
    "PermissionError": "No permission to read it",
    "UnicodeDecodeError": "It is not UTF-8 text",
    "MemoryError": "Not enough memory to read it",
    "TimeoutError": "It took too long to answer",
    "SourceChanged": "The file changed while it was being read",
    "OpenError": "It cannot be opened as a session log",
    "DatabaseError": "The SQLite database cannot be read",
    "OperationalError": "The SQLite database cannot be read",
    "ZstdError": "The zstd data is damaged",
    "EOFError": "The file ends too early",
}


def humane_error(msg: str) -> tuple[str, str]:
    """(summary without Python names, details as given)."""
    text = str(msg or "").strip()
    parts = []
    rest = text
    # a chain like "error: OpenError: ValueError: bad" loses every exception name
    for _ in range(4):
        if rest.lower().startswith("error:"):
            rest = rest[6:].strip()
        m = _EXC.match(rest)
        if not m:
            break
        name = m.group(2)
        parts.append(name)
        rest = (m.group(3) or "").strip()
    if not parts:
        return (text or "Something went wrong"), text
    rest = re.sub(r"^\[Errno \d+\]\s*", "", rest)
    lead = next((_PLAIN[p] for p in parts if p in _PLAIN), None)
    summary = rest or lead or "Something went wrong"     # the message itself says it best
    summary = summary[:1].upper() + summary[1:]
    return summary, text


def strip_exception_names(text: str) -> str:
    """``"Cannot open x: ValueError: bad"`` -> ``"Cannot open x: Bad"`` (any position)."""
    out = []
    for piece in re.split(r"(?<=:)\s+(?=(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Changed)\b)", str(text)):
        s, _ = humane_error(piece) if _EXC.match(piece) else (piece, piece)
        out.append(s)
    return " ".join(out)


class ElidingLabel(QLabel):
    """A plain-text label that elides at the right instead of clipping (full text: tooltip)."""

    def __init__(self, text: str = "", parent=None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._full = ""
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(40)
        self.set_full_text(text)

    def full_text(self) -> str:
        return self._full

    def set_full_text(self, text: str) -> None:
        self._full = str(text or "")
        self._elide()

    def shown_text(self) -> str:
        return super().text()

    def _elide(self) -> None:
        w = max(10, self.width() - 4)
        one_line = " ".join(self._full.split("\n"))
        shown = self.fontMetrics().elidedText(one_line, Qt.TextElideMode.ElideRight, w)
        QLabel.setText(self, shown)
        self.setToolTip(self._full if shown != one_line else "")

    def resizeEvent(self, e):
        super().resizeEvent(e)
        self._elide()


class StatusLabel(QLabel):
    """A permanent status-bar label that never widens the window: it asks for its text's width
    but may be given as little as :attr:`MIN_WIDTH`, and then draws its text elided ("…") while
    ``text()`` stays whole (shown in the tooltip when the caller set none)."""
    MIN_WIDTH = 48

    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)

    def minimumSizeHint(self):                                          # noqa: N802 (Qt name)
        hint = super().minimumSizeHint()
        hint.setWidth(min(hint.width(), self.MIN_WIDTH))
        return hint

    def elided(self) -> bool:
        return self.fontMetrics().horizontalAdvance(self.text()) > self.contentsRect().width()

    def paintEvent(self, e):                                             # noqa: N802
        if not self.elided():
            return super().paintEvent(e)
        from PySide6.QtGui import QPainter
        r = self.contentsRect()
        shown = self.fontMetrics().elidedText(" ".join(self.text().split("\n")), Qt.TextElideMode.ElideRight,
                                              r.width())
        p = QPainter(self)
        self.style().drawItemText(p, r, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                                  self.palette(), self.isEnabled(), shown, self.foregroundRole())
        p.end()

    def event(self, e):
        from PySide6.QtCore import QEvent
        if e.type() == QEvent.Type.ToolTip and not self.toolTip() and self.elided():
            from PySide6.QtWidgets import QToolTip
            QToolTip.showText(e.globalPos(), self.text(), self)
            return True
        return super().event(e)


class StatusBar(QStatusBar):
    """Temporary messages in their own eliding label, left of the permanent widgets."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.message_label = ElidingLabel("")
        self.message_label.setObjectName("statusMessage")
        self.addWidget(self.message_label, 1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.clearMessage)

    def showMessage(self, text: str, timeout: Optional[int] = 0) -> None:       # noqa: N802 (Qt name)
        self.message_label.set_full_text(strip_exception_names(text))
        if timeout:
            self._timer.start(int(timeout))
        else:
            self._timer.stop()

    def clearMessage(self) -> None:                                   # noqa: N802
        self._timer.stop()
        self.message_label.set_full_text("")

    def currentMessage(self) -> str:                                  # noqa: N802
        return self.message_label.full_text()


def count_text(n: int, one: str, many: Optional[str] = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def banner_lines(history, go_actions=None) -> tuple:
    """(lines, fatal) the banner says for the face on screen (with the Go menu's problem count
    once the outline pass counted them)."""
    r = history.reader
    probs = [p for p in (r.problems if r else [])]
    st = history.pages[-1].page if history.pages else None
    lines = []
    fatal = r.fatal if r else None
    if fatal:
        lines.append(f"This log is not valid: {fatal}. Its stored rows are shown as read.")
    if st is not None and st.tail:
        n = len(st.closure or [])
        writing = history.live_state in ("live", "idle")
        live_face = getattr(getattr(history, "window", None), "live", None) is True
        if n and not history.physical and live_face:
            pass            # the live face: the open turn is drawn in flight, nothing is closed
        elif n and not history.physical:
            if writing:
                lines.append(f"The writer is still in this turn: the {count_text(n, 'closure row')} at the end "
                             "(marked) are what a repair would add if it stopped now." if n != 1 else
                             "The writer is still in this turn: the closure row at the end (marked) is what a "
                             "repair would add if it stopped now.")
            else:
                lines.append(f"The last turn is open: {count_text(n, 'closure row')} "
                             f"{'is' if n == 1 else 'are'} synthesized in memory "
                             "(marked). Switch to the physical tail to see only stored rows.")
        elif n:
            if writing:
                lines.append("The writer is still in this turn. Physical tail: only the stored rows are shown.")
            else:
                lines.append(f"The last turn is open (the writer stopped mid-turn). Physical tail: only the "
                             f"stored rows are shown; the logical tail adds {count_text(n, 'closure row')}.")
        if st.dropped:
            k = len(st.dropped)
            lines.append(f"{count_text(k, 'stored row')} at the tail {'is' if k == 1 else 'are'} torn or unreadable; "
                         f"a repair would truncate {'it' if k == 1 else 'them'} (shown in the physical tail).")
    outline = getattr(go_actions, "outline", None) if go_actions is not None else None
    if outline is not None and getattr(outline, "refusals", None):      # dsh's verdict (app.log.index.verdict)
        from ..log.index.verdict import refusal_summary
        lines.insert(0, refusal_summary(outline.refusals) + ". Session Lens still shows every row that reads.")
    nprob = go_actions.problem_count() if go_actions is not None else None
    if nprob:                                   # every problem of the log (outline pass): count, panel
        codes: dict = {}
        for p in go_actions.outline.problems:
            codes[p.code] = codes.get(p.code, 0) + 1
        top = ", ".join(f"{k} ×{v}" if v > 1 else k for k, v in sorted(codes.items(), key=lambda x: -x[1])[:4])
        lines.append(f"{nprob:,} problem{'s' if nprob != 1 else ''} in this log ({top}): "
                     "click here (or Ctrl+Shift+R) for the Problems panel: each one with its line, byte offset "
                     "and a jump.")
    else:
        others = [str(p) for p in probs if not p.fatal][:3]
        if others:
            lines.append("Problems: " + "; ".join(others))
    return lines, fatal


def status_texts(s: dict) -> tuple[str, str, str]:
    """(counters, their tooltip, face label) of the status bar for the model's ``stats()``: one
    count of stored events, the closure rows counted apart in the face label."""
    stored = s["storedEvents"]
    total = s["indexedEvents"]
    if s["wholeLog"]:
        total = stored        # the whole log is loaded (an index counting a seq gap's missing seqs says more)
    parts = [count_text(s["rows"], "row")]
    parts.append(f"{stored:,} of {total:,} events loaded" if total is not None else
                 f"{count_text(stored, 'event')} loaded")
    if s["hiddenAttempts"]:
        parts.append(count_text(s["hiddenAttempts"], "hidden attempt") + (" (shown)" if s["showAttempts"] else ""))
    if s["matches"]:
        parts.append(count_text(s["matches"], "match", "matches"))
    if s["loading"]:
        parts.append("loading…")
    tip = [f"{count_text(s['pages'], 'page')} loaded",
           f"older rows from seq {s['baseSeq']}" if s["hasMore"] else
           "the whole log is loaded" if s["wholeLog"] else "no older rows to load"]
    if s["closure"]:
        tip.append(f"{count_text(s['closure'], 'closure row')} synthesized in memory (not counted as stored)")
    face = s["face"]
    extra = ""
    if face == "logical" and s["closure"] and not s.get("liveFace"):
        extra = f" (+{s['closure']} synthesized)"
    if face == "physical" and s["dropped"]:
        extra = f" ({s['dropped']} bad/torn tail rows)"
    return " · ".join(parts), "\n".join(tip), f"face: {face}{extra} · format: {s['format'] or '?'}"


def empty_state_text(reader) -> str:
    from .history.rows import fmt_datetime
    hdr = getattr(reader, "header", None)
    when = fmt_datetime(getattr(hdr, "createdAt", None))
    cwd = getattr(hdr, "cwd", None)
    cwd = None if cwd and "{{" in cwd else cwd          # a template placeholder is no place
    return "\n".join(["This session has no events yet.", "",
                      "Only its header was written" + (f" ({when})" if when else "") + ": the session was created"
                      + (f" in {cwd}" if cwd else "") + " but no turn was ever logged, or the writer has not "
                      "written its first turn yet.", "", "If it is still being written, rows appear here as they arrive."])


MENU_ORDER = ("File", "Edit", "View", "Go", "Tools", "Help")


def ensure_menu(bar, name: str) -> QMenu:
    """The menu bar's ``name`` menu, created on first use in MENU_ORDER (objectName ``<name>Menu``)."""
    key = f"{name.lower()}Menu"
    for m in bar.findChildren(QMenu, key, Qt.FindChildOption.FindDirectChildrenOnly):
        return m
    m = QMenu(f"&{name}", bar)
    m.setObjectName(key)
    order = list(MENU_ORDER)
    later = order[order.index(name) + 1:] if name in order else []
    before = None
    for a in bar.actions():
        sub = a.menu()
        if sub is not None and sub.objectName()[:-4].capitalize() in later:
            before = a
            break
    if before is not None:
        bar.insertMenu(before, m)
    else:
        bar.addMenu(m)
    return m



def error_details_box(parent, text: str, details: str):
    from PySide6.QtWidgets import QMessageBox
    box = QMessageBox(QMessageBox.Icon.Warning, "Error details", text, QMessageBox.StandardButton.Close, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setDetailedText(details)
    box.setObjectName("errorDetails")
    box.open()
    return box
