"""The history model's find part (one session: docs/glossary.md): the find bar's term, its matches and the
current match.

Mixed into :class:`~app.ui.history.model.HistoryModel` (its window, :class:`MatchPass`, signals);
no widgets.  The matching is the window's (:mod:`app.ui.history.window`); the find bar's check
over the exposed rows runs in slices (:mod:`app.ui.history.match_pass`).
"""
from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import Qt

from ...log.query.textview import fold_case

MATCH_ROLE = Qt.ItemDataRole.UserRole + 4


class FindModel:
    # provided by HistoryModel (declared for the type checker)
    window: Any
    match_pass: Any
    findChanged: Any
    dataChanged: Any
    index_of_ordinal: Any
    index_of: Any

    def set_find(self, term: str, sliced: bool = False, start_row: Optional[int] = None) -> None:
        """A new search term (folded as the core folds it).  ``sliced`` (the find bar): the exposed
        rows are checked a few at a time on later loop turns (:class:`MatchPass`: ``matches``
        grow, ``matchPass.finished`` when complete; ``start_row``: the current row, checked
        upwards from there first); else all at once, now."""
        # no dataChanged over every row: QListView would re-lay out the whole window (heights
        # never change with a search); the delegate reads the term when it paints, so views
        # only repaint (findChanged)
        w = self.window
        folded = fold_case(term or "")
        if folded == w.find_term:
            if not sliced:
                self.match_pass.finish()
            return
        self.match_pass.cancel()
        if not sliced or not folded:
            if w.set_find(term):
                self.findChanged.emit()
            return
        w.find_term = folded
        w.current_match_row = None
        self.match_pass.start(w, folded, start_row)
        self.findChanged.emit()

    def find(self, from_row: Optional[int], forward: bool) -> Optional[int]:
        """Next match after (forward) or before ``from_row``: in the window, then in the
        loaded rows outside it (the window moves there); None: read older pages. No wrap."""
        self.match_pass.finish()
        row, ordinal = self.window.find(from_row, forward)
        return row if row is not None else self.index_of_ordinal(ordinal, True)

    def turn_beyond(self, forward: bool) -> Optional[int]:
        """The nearest turn start outside the window (the window moves there)."""
        return self.index_of_ordinal(self.window.turn_beyond(forward), True)

    def set_current_match(self, row: Optional[int]) -> None:
        if row is not None and self.match_pass.running and row not in self.window.matches:
            self.match_pass.finish()             # (the current match is one of ``matches``)
        for r in self.window.set_current_match(row):
            ix = self.index_of(r)
            self.dataChanged.emit(ix, ix, [MATCH_ROLE])
        self.findChanged.emit()
