"""View models of the find panels (QtCore only, no widgets): whole-log search results, the
outline (one row per turn) and the problems of the log.

All three are flat ``QAbstractTableModel``/``QAbstractListModel`` over lists the core built in
a worker (:func:`app.log.query.find.find` hits, :func:`app.log.query.outline.build_outline`); a view
asks only for the rows it shows (uniform row heights), so a 1 GB log's 30,000 turns or
100,000 hits cost nothing until scrolled to.  Transcript text is shown as plain one-line text.
Each row knows the seq to jump to (``SEQ_ROLE``).
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Callable

from PySide6.QtCore import QAbstractListModel, QAbstractTableModel, QModelIndex, Qt, QTimer

from .find_hits import CompactHits
from .plaintext import clean_line

SEQ_ROLE = Qt.ItemDataRole.UserRole + 1
PENDING = "…"                      # a hit's snippet while it is being made


def one_line(text: str, limit: int = 240) -> str:
    """Plain one-line text (newline and tab -> spaces, other controls -> visible pictures), clipped."""
    s = clean_line(text)
    return s if len(s) <= limit else s[:limit - 1] + "…"


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else ("es" if word.endswith("ch") else "s"))


class _ItemsTableModel(QAbstractTableModel):
    """A flat table over a list the core built: one item a row, ``HEADERS`` the columns."""
    HEADERS: tuple[str, ...] = ()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.items: list = []

    def set_items(self, items: list) -> None:
        self.beginResetModel()
        self.items = list(items)
        self.endResetModel()

    def item(self, index: QModelIndex) -> Any:
        """The item of ``index``'s row (None for an invalid index or one out of range)."""
        if not index.isValid() or not (0 <= index.row() < len(self.items)):
            return None
        return self.items[index.row()]

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.items)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(self.HEADERS):
            return self.HEADERS[section]
        return None


class FindResultsModel(_ItemsTableModel):
    """Hits of a whole-log search (seq, turn, kind, snippet), appended as they stream in."""
    HEADERS = ("seq", "turn", "kind", "match")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.items: Any = CompactHits()      # (issue 36: columns, not one object a hit)
        # the snippets of the hits shown, made when first shown (a hit of the text hits comes without one):
        # ``snippets_wanted(rows)`` is called once per event-loop turn with the rows asked for since; the
        # snippets come back through :meth:`set_snippets`
        self.snippets_wanted: Optional[Callable[[list[int]], None]] = None
        self._asked: set[int] = set()
        self._want: list[int] = []
        self._want_timer = QTimer(self)
        self._want_timer.setSingleShot(True)
        self._want_timer.setInterval(0)
        self._want_timer.timeout.connect(self._ask_now)

    @property
    def hits(self) -> Any:
        return self.items

    def set_items(self, items) -> None:
        self.beginResetModel()
        self.items = CompactHits(items)
        self._asked.clear()
        self._want = []
        self.endResetModel()

    def _ask(self, row: int) -> None:
        if row not in self._asked:
            self._asked.add(row)
            self._want.append(row)
            self._want_timer.start()

    def _ask_now(self) -> None:
        rows, self._want = self._want, []
        if rows and self.snippets_wanted is not None:
            self.snippets_wanted(rows)

    def set_snippets(self, items: Any, made: list) -> None:
        """The snippets made for rows of ``items`` (the hits they were asked for: dropped if another search's)."""
        if items is not self.items or not made:
            return
        self.items.set_snippets(made)
        rows = [i for i, _s, _p in made]
        self.dataChanged.emit(self.index(min(rows), 3), self.index(max(rows), 3))

    def clear(self) -> None:
        self.set_items([])

    def append(self, hits: list) -> None:
        if not hits:
            return
        n = len(self.items)
        self.beginInsertRows(QModelIndex(), n, n + len(hits) - 1)
        self.items.extend(hits)
        self.endInsertRows()

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        h = self.item(index)
        if h is None:
            return None
        c = index.column()
        if c == 3 and h.row is not None and role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            self._ask(index.row())               # (its snippet made in a worker: shown when it comes)
            return PENDING if role == Qt.ItemDataRole.DisplayRole else None
        if role == Qt.ItemDataRole.DisplayRole:
            if c == 0:
                return str(h.seq)
            if c == 1:
                return "" if h.turn is None else str(h.turn)
            if c == 2:
                return one_line(h.kind + (f" · {h.tool}" if h.tool else ""))
            if c == 3:
                return one_line(h.snippet) + (f"   (+{h.matches - 1} more here)" if h.matches > 1 else "")
        if role == SEQ_ROLE:
            return h.seq
        if role == Qt.ItemDataRole.ToolTipRole and c == 3:
            return one_line(h.snippet, 400)
        if role == Qt.ItemDataRole.TextAlignmentRole and c in (0, 1):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def row_for_seq(self, seq: int, forward: bool) -> Optional[int]:
        """Index of the first hit after (forward) or the last before ``seq`` (hits are oldest first)."""
        from .history.navigation import neighbour_index
        return neighbour_index(self.items.seqs, seq, forward)


def search_wording(n: int, complete: bool, cancelled: bool, turns: Optional[int], done: int = 0,
                   total: int = 0, limit_hit: bool = False) -> str:
    """What was searched, exactly: "12 matches in 3,261 turns", "no match in the whole log"."""
    where = f"{turns:,} turn{'s' if turns != 1 else ''}" if turns is not None else "the whole log"
    if complete:
        return f"no match in {where}" if n == 0 else f"{_count(n, 'match')} in {where}"
    pct = f"{100 * done / total:.0f}%" if total else "part"
    if limit_hit:
        return f"first {_count(n, 'match')} (limit reached at {pct} of the log)"
    if cancelled:
        return (f"cancelled: no match in the first {pct} of the log" if n == 0
                else f"cancelled: {_count(n, 'match')} in the first {pct} of the log")
    return f"{_count(n, 'match')} so far, {pct} of the log searched…"


class OutlineModel(QAbstractListModel):
    """One row per turn of the log: number, first line of the prompt, steps, tools, markers."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.turns: list = []

    def set_turns(self, turns) -> None:
        self.beginResetModel()
        self.turns = turns if hasattr(turns, "first_seqs") else list(turns)   # (packed: outline_turns)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.turns)

    @staticmethod
    def label(t) -> str:
        marks = {"error": "⚠ error", "retry": "↻ retry", "interrupted": "⏹ interrupted", "open": "… open"}
        tools = ", ".join(one_line(f"{k}×{v}" if v > 1 else k, 60) for k, v in list(t.tools.items())[:4])
        if len(t.tools) > 4:
            tools += ", …"
        head = f"Turn {t.turn}: {one_line(t.prompt, 120) or '(no prompt)'}"
        tail = [_count(t.steps, "step")]
        if tools:
            tail.append(tools)
        tail += [marks[m] for m in t.markers if m in marks]
        return head + "\n    " + " · ".join(tail)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not (0 <= index.row() < len(self.turns)):
            return None
        t = self.turns[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self.label(t)
        if role == SEQ_ROLE:
            return t.first_seq
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"seq {t.first_seq}–{t.last_seq}" + (f" · ended: {t.end}" if t.end else " · open")
        return None

    def row_for_seq(self, seq: int) -> Optional[int]:
        import bisect
        firsts = getattr(self.turns, "first_seqs", None)
        i = bisect.bisect_right(firsts if firsts is not None else [t.first_seq for t in self.turns], seq) - 1
        return i if i >= 0 else None


class ProblemsModel(_ItemsTableModel):
    """Every problem of the log: code, line, byte offset, seq, message."""
    HEADERS = ("problem", "line", "offset", "seq", "details")

    @property
    def problems(self) -> list:
        return self.items

    def set_problems(self, problems: list) -> None:
        self.set_items(problems)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        p = self.item(index)
        if p is None:
            return None
        c = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            v = (one_line(p.code), p.line, p.offset, p.seq, one_line(p.message, 400))[c]
            return "" if v is None else (f"{v:,}" if c == 2 and isinstance(v, int) else str(v))
        if role == SEQ_ROLE:
            return p.seq
        if role == Qt.ItemDataRole.ToolTipRole:
            return one_line(str(p), 600)
        return None
