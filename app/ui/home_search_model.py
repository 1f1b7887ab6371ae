"""View model of the home search results (no widgets): a two-level tree, one top row per
session (title, date, match count) and under it one row per hit (seq, kind, snippet).

Snippets are log text: they stay plain text.  The matched words are given as character
ranges (``MARKS_ROLE``) for the delegate to draw; newlines and other control characters are
replaced one for one by spaces so the ranges stay valid.
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Optional

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt

AnyIndex = QModelIndex | QPersistentModelIndex

HIT_ROLE = Qt.ItemDataRole.UserRole + 1        # SearchHit (hit rows)
GROUP_ROLE = Qt.ItemDataRole.UserRole + 2      # SessionGroup (session rows)
LABEL_ROLE = Qt.ItemDataRole.UserRole + 3      # "seq 42 · tool-output · bash" / session title
SNIPPET_ROLE = Qt.ItemDataRole.UserRole + 4    # plain snippet text (hit rows)
MARKS_ROLE = Qt.ItemDataRole.UserRole + 5      # [(start, end)] of the matched words in SNIPPET_ROLE

_GROUP = 0xFFFFFFFF                            # internal id of a session row


def _flat(s: str) -> str:
    """One line of plain text, same length (control characters become spaces)."""
    return "".join(" " if (ord(c) < 32 or 0x7F <= ord(c) < 0xA0 or c in "\u2028\u2029") else c for c in s)


def fmt_date(ms) -> str:
    if not isinstance(ms, (int, float)) or isinstance(ms, bool):
        return ""
    try:
        return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):
        return ""


def plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n:,} {word}"
    return f"{n:,} {word}{'es' if word.endswith(('ch', 's')) else 's'}"


def hit_label(hit) -> str:
    parts = [f"seq {hit.seq}", hit.kind]
    if hit.tool:
        parts.append(_flat(hit.tool)[:40])
    return " · ".join(parts)


def group_title(g) -> str:
    return _flat(g.title or g.session or g.key)[:200]


def index_status(indexed: Optional[int], behind: Optional[int], building: Optional[tuple] = None,
                 problems: int = 0, state: str = "done") -> str:
    """The line under the search box: build progress, or how many sessions are indexed and behind
    (``state``: the index build's, :meth:`app.store.fulltext.FullTextIndex.build_state`)."""
    if building is not None:
        done, total = building
        return f"indexing {done:,}/{total:,} sessions…" if total else "indexing…"
    if state == "interrupted":
        left = f": {plural(behind, 'session')} not indexed (searched by a scan)" if behind else ""
        return f"the index build did not finish{left}"
    if state == "running":
        return "the index is being built (by another Session Lens)" + (
            f": {plural(behind, 'session')} not indexed yet" if behind else "")
    parts = []
    if not indexed and behind:               # never indexed: not "0 indexed, N behind"
        parts.append(f"{plural(behind, 'session')} not indexed yet")
    else:
        if indexed is not None:
            parts.append(f"{plural(indexed, 'session')} indexed")
        if behind:
            parts.append(f"index is {plural(behind, 'session')} behind")
    if problems:
        parts.append(f"{plural(problems, 'session')} unreadable")
    return " · ".join(parts)


def coverage(res) -> str:
    """What the index did not answer, for the line under the results (empty: it answered all)."""
    pending = getattr(res, "unindexed", None) or []
    build = getattr(res, "build", "done")
    if not pending:
        return "" if build == "done" else "the index build did not finish: some sessions may be missing"
    n = len(pending)
    why = {"running": "being indexed", "interrupted": "not indexed (the index build did not finish)",
           "never": "not indexed yet"}.get(build, "changed since the index was updated")
    if getattr(res, "partial", False):
        return f"{plural(n, 'session')} {why}: scanning them… {res.scanned:,}/{n:,}"
    return f"{plural(n, 'session')} {why}: searched by a scan"


class HomeSearchModel(QAbstractItemModel):
    """Results of one query, grouped by session (most matches first, as the index ranks them)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.query = ""
        self.result = None
        self.groups: list = []        # [(SessionGroup, [SearchHit])]
        self.total = 0

    # ------------------------------------------------------------------ contents
    def set_result(self, query: str, result) -> None:
        self.beginResetModel()
        self.query = query
        self.result = result
        by_key: dict = {}
        for h in result.hits:
            by_key.setdefault(h.session_key, []).append(h)
        groups = []
        for g in result.sessions:
            hits = sorted(by_key.pop(g.key, []), key=lambda h: h.seq)
            groups.append((g, hits))
        self.groups = groups
        self.total = result.total
        self.endResetModel()

    def clear(self) -> None:
        self.beginResetModel()
        self.query = ""
        self.result = None
        self.groups = []
        self.total = 0
        self.endResetModel()

    def summary(self) -> str:
        if self.result is None:
            return ""
        n, s = self.total, self.result.session_total or len(self.groups)
        if not n:
            return f"no match for {_flat(self.query)[:60]!r}"
        shown = sum(len(h) for _, h in self.groups)
        more = f" (best {shown:,} shown)" if shown < n else ""
        took = f" in {self.result.seconds * 1000:.0f} ms" if self.result.seconds else ""
        if getattr(self.result, "partial", False):
            took = " so far"
        fb = " (scan: no FTS5)" if self.result.fallback else ""
        about = "" if getattr(self.result, "total_exact", True) else "about "
        where = plural(s, "session")
        if not getattr(self.result, "sessions_exact", True) and s < n:
            where = f"{s:,}+ sessions"          # counted lazily: the sessions of the hits shown
        line = f"{about}{plural(n, 'match')} in {where}{more}{took}{fb}"
        cov = coverage(self.result)
        return f"{line}\n{cov}" if cov else line

    def hit_at(self, index: QModelIndex):
        if not index.isValid() or index.internalId() == _GROUP:
            return None
        return self.groups[index.internalId()][1][index.row()]

    def group_at(self, index: QModelIndex):
        if not index.isValid():
            return None
        if index.internalId() == _GROUP:
            return self.groups[index.row()][0]
        return self.groups[index.internalId()][0]

    def first_hit_index(self) -> QModelIndex:
        for gi, (_g, hits) in enumerate(self.groups):
            if hits:
                return self.index(0, 0, self.index(gi, 0))
        return QModelIndex()

    def index_of_hit(self, key: str, seq: int, kind: str) -> QModelIndex:
        """The row of the hit (session key, seq, kind), or an invalid index (streamed answers keep
        the user's selection across the model's resets)."""
        for gi, (g, hits) in enumerate(self.groups):
            if g.key == key:
                for r, h in enumerate(hits):
                    if h.seq == seq and h.kind == kind:
                        return self.index(r, 0, self.index(gi, 0))
        return QModelIndex()

    # ------------------------------------------------------------------ QAbstractItemModel
    def index(self, row: int, column: int = 0, parent: AnyIndex = QModelIndex()) -> QModelIndex:
        if column != 0 or row < 0:
            return QModelIndex()
        if not parent.isValid():
            if row < len(self.groups):
                return self.createIndex(row, 0, _GROUP)
            return QModelIndex()
        if parent.internalId() != _GROUP:
            return QModelIndex()
        g = parent.row()
        if g < len(self.groups) and row < len(self.groups[g][1]):
            return self.createIndex(row, 0, g)
        return QModelIndex()

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:   # type: ignore[override]
        if not index.isValid() or index.internalId() == _GROUP:
            return QModelIndex()
        return self.createIndex(index.internalId(), 0, _GROUP)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:
        if not parent.isValid():
            return len(self.groups)
        if parent.column() != 0 or parent.internalId() != _GROUP:
            return 0
        return len(self.groups[parent.row()][1])

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:
        return 1

    def hasChildren(self, parent: AnyIndex = QModelIndex()) -> bool:
        return self.rowCount(parent) > 0

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if index.internalId() == _GROUP:
            g, hits = self.groups[index.row()]
            if role in (Qt.ItemDataRole.DisplayRole, LABEL_ROLE):
                date = fmt_date(g.created)
                extra = f"  ({len(hits)} shown)" if len(hits) < g.count else ""
                return f"{group_title(g)}  —  {date + '  —  ' if date else ''}{plural(g.count, 'match')}{extra}"
            if role == Qt.ItemDataRole.ToolTipRole:
                return _flat(f"{g.session}\n{g.path}")
            if role == GROUP_ROLE:
                return g
            return None
        hit = self.groups[index.internalId()][1][index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{hit_label(hit)}  {_flat(hit.text)}"
        if role == LABEL_ROLE:
            return hit_label(hit)
        if role == SNIPPET_ROLE:
            return _flat(hit.text)
        if role == MARKS_ROLE:
            return list(hit.marks)
        if role == HIT_ROLE:
            return hit
        if role == Qt.ItemDataRole.ToolTipRole:
            when = fmt_date(hit.time)
            return f"seq {hit.seq}" + (f", turn {hit.turn}" if hit.turn is not None else "") + \
                (f", {when}" if when else "")
        return None
