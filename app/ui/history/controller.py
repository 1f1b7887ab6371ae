"""The history controller: search, go-to (a seq, a turn) and selection over model + view.

Navigation may need rows that are not loaded yet: it then asks the model for older pages
(within a page budget) and continues when they are installed (``olderInstalled``); a seq
still not loaded is read by index in a worker (``HistoryModel.fetch_event``).  The
controller owns no widgets: the window gives it the list view, the event inspector and a
``message(text, ms)`` callback for the status bar; the search bar reads ``searchStatus``.
"""
from __future__ import annotations

from typing import Optional
from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QObject, QPoint, Signal

from .model import HistoryModel

GOTO_PAGE_BUDGET = 40        # older pages fetched to reach a linked seq before falling back to event_at
SEARCH_PAGE_BUDGET = 40      # older pages fetched per search step


class HistoryController(QObject):
    seqSelected = Signal(int)         # a goto_seq finished (row selected or event shown)
    findMoved = Signal(object)      # row index of the current match (None: no match)
    searchStatus = Signal(str)        # "2/14 in loaded rows", "searching older pages…"
    rowSelected = Signal()            # the current row (or its focus seq) changed

    def __init__(self, model: HistoryModel, view, inspector, message: Callable[..., None], parent=None):
        super().__init__(parent)
        self.model = model
        self.view = view
        self.inspector = inspector
        self.message = message
        self.focus_seq: Optional[int] = None
        self._pending_goto: Optional[tuple] = None       # (seq, pages_left)
        self._pending_find: Optional[tuple] = None       # (forward, pages_left)
        self._pending_turn: Optional[tuple] = None
        self._pending_jump: Optional[int] = None         # seq a jump page is being read for
        self._start_wanted = False
        model.olderInstalled.connect(self._on_older)
        model.jumped.connect(self._on_jumped)
        model.eventFetched.connect(self._on_event_fetched)
        self._find_auto = False                          # the first match of a new term is still to select
        self._own_find = False                           # the find bar's term came through apply_find
        model.match_pass.firstMatch.connect(self._on_first_match)
        model.match_pass.progress.connect(self._on_match_progress)
        model.match_pass.finished.connect(self._on_matched)
        view.selectionModel().currentChanged.connect(self._on_current_row)

    def close_pending(self) -> None:
        self._pending_goto = None
        self._pending_find = None
        self._pending_turn = None
        self._pending_jump = None

    def _on_older(self, _n: int) -> None:
        if self._pending_goto is not None:
            seq, left = self._pending_goto
            self._pending_goto = None
            self._goto(seq, left - 1)
        if self._pending_find is not None:
            fwd, left = self._pending_find
            self._pending_find = None
            self._find_step(fwd, left - 1)
        if self._pending_turn is not None:
            d, left = self._pending_turn
            self._pending_turn = None
            self._goto_turn(d, left - 1)

    # ------------------------------------------------------------------ selection
    def _on_current_row(self, cur: QModelIndex, prev: QModelIndex) -> None:
        row = self.view.current_row()
        f = self.focus_seq
        keep = (row is not None and f is not None and row.first_seq is not None
                and row.first_seq <= f <= max(row.seq or 0, row.last_seq or 0))
        self.focus_seq = f if keep else None
        self.inspector.show_row(row, self.focus_seq)
        self.rowSelected.emit()

    def refresh_inspector(self) -> None:
        row = self.view.current_row()
        if row is not None:
            self.inspector.show_row(row, self.focus_seq)

    def _from_selection(self) -> None:
        """Navigation starts from the selected row: one scrolled out of the view (parked) is
        brought back first (the window moves there), as the arrow keys do."""
        parking = getattr(self.view, "parking", None)
        if parking is not None and parking.row is not None:
            parking.bring_back()

    def current_row_index(self) -> Optional[int]:
        ix = self.view.currentIndex()
        if ix.isValid():
            return ix.row()
        top = self.view.indexAt(QPoint(8, 4))
        return top.row() if top.isValid() else None

    def select_row(self, r: int, focus_seq: Optional[int] = None) -> None:
        self.focus_seq = focus_seq
        ix = self.model.index(r, 0)
        self.view.setCurrentIndex(ix)
        self.view.scrollTo(ix, self.view.ScrollHint.PositionAtCenter)
        if focus_seq is not None:
            self.inspector.show_row(self.model.row_at(r), focus_seq)

    # ------------------------------------------------------------------ go to a seq
    def goto_seq(self, seq: int) -> None:
        """Select the row showing ``seq`` (fetch older pages as needed, else event_at)."""
        self._goto(int(seq), GOTO_PAGE_BUDGET)

    def _goto(self, seq: int, budget: int) -> None:
        h = self.model
        r = h.row_for_seq(seq)
        if r is not None:
            self.select_row(r, seq)
            self.seqSelected.emit(seq)
            return
        ev = h.event_for_seq(seq)
        if ev is not None:
            a = h.hidden_attempt_of(seq)
            note = ("in a hidden failed attempt — View › Hidden attempts (Ctrl+Shift+A) shows its row" if a
                    else "no row in this face")
            near = h.jumps.near_row(seq)
            if near is not None:            # the list shows where it is (the nearest row after it), unselected:
                self.view.scrollTo(self.model.index(near, 0), self.view.ScrollHint.PositionAtCenter)
            self.focus_seq = None           # no other row framed, its status and trace never beside this event
            self.view.setCurrentIndex(QModelIndex())
            self.inspector.show_row(None, seq, ev, note=note)
            self.message(f"seq {seq}: {note}", 6000)
            self.seqSelected.emit(seq)
            return
        if h.jumps.jump_to(seq):             # read the page around it directly (seq index)
            self._pending_jump = seq
            self.message(f"Reading the page around seq {seq} …")
            return
        base = h.base_seq
        if base is not None and seq < base and h.has_more and budget > 0:
            self._pending_goto = (seq, budget)
            self.message(f"Loading older pages to reach seq {seq} …")
            if not h.request_older() and not h.loading:
                self._pending_goto = None
                h.fetch_event(seq)
            return
        self.message(f"seq {seq} is not loaded: reading it by index …", 4000)
        h.fetch_event(seq)

    def _on_jumped(self, seq: int) -> None:
        if self._pending_jump != seq:
            return
        self._pending_jump = None
        if seq == 0 and self._start_wanted:
            self._start_wanted = False
            if self.model.rowCount():
                self.select_row(0)
                self.view.scrollToTop()
            self.seqSelected.emit(0)
            return
        self._goto(seq, 0)

    # ------------------------------------------------------------------ start / end
    def goto_start(self) -> None:
        """The true start of the log (read directly once the seq index is built)."""
        h = self.model
        if h.jumps.show_start():
            self._pending_jump = 0
            self._start_wanted = True
            self.message("Reading the start of the log …")
            return
        if not h.has_more:
            if h.rowCount():
                self.select_row(0)
                self.view.scrollToTop()
            return
        self._goto(0, 10_000)           # no index yet: walk older pages

    def goto_end(self) -> None:
        h = self.model
        h.show_tail()
        if h.rowCount():
            self.select_row(h.rowCount() - 1)
            self.view.scrollToBottom()

    def _on_event_fetched(self, seq: int, ev) -> None:
        if ev is None:
            self.message(f"seq {seq} is not in this log", 6000)
        else:
            self.inspector.show_row(None, seq, ev, note="not loaded in the list; read by index")
        self.seqSelected.emit(seq)

    # ------------------------------------------------------------------ turns
    def goto_turn(self, direction: int) -> None:
        self._goto_turn(direction, GOTO_PAGE_BUDGET)

    def _select_turn(self, r: int) -> None:
        self.select_row(r)
        self.view.scrollTo(self.model.index(r, 0), self.view.ScrollHint.PositionAtTop)

    def _goto_turn(self, direction: int, budget: int) -> None:
        h = self.model
        self._from_selection()
        turns = h.turn_rows()
        cur = self.current_row_index()
        if cur is None:
            cur = h.rowCount()
        if direction < 0:
            cands = [t for t in turns if t < cur]
            r = cands[-1] if cands else h.turn_beyond(False)
            if r is not None:
                self._select_turn(r)
                return
            if h.pages and h.pages[0].page.has_more and budget > 0:
                self._pending_turn = (direction, budget)
                h.request_older()
                return
            if h.rowCount():
                self.select_row(0)
        else:
            cands = [t for t in turns if t > cur]
            r = cands[0] if cands else h.turn_beyond(True)
            if r is not None:
                self._select_turn(r)
                return
            h.show_tail()
            if h.rowCount():
                self.select_row(h.rowCount() - 1)

    # ------------------------------------------------------------------ search
    def apply_find(self, term: str) -> None:
        """A new term: highlight it and jump to the newest match at or above the current row.
        The exposed rows are checked in slices (:class:`~app.ui.history.match_pass.MatchPass`,
        from the current row upwards): the first match found is selected after its slice, the
        count grows as the check goes on."""
        self._find_auto = self._own_find = bool(term)
        self.model.set_find(term, sliced=True, start_row=self.current_row_index())
        self.view.viewport().update()
        if not term:
            self.searchStatus.emit("")
            return
        if not self.model.match_pass.running:       # nothing to check (or the same term)
            self._on_matched(len(self.model.matches))
        else:
            self.update_find_status()

    def _on_first_match(self, r: int) -> None:
        if self._find_auto:
            self._find_auto = False
            self._set_match(r)

    def _on_match_progress(self, _n: int, _checked: int) -> None:
        if self._own_find and self.model.find_term:
            self.update_find_status()

    def _on_matched(self, _n: int) -> None:
        if not self._own_find:
            return
        if not self._find_auto:
            self.update_find_status()
            return
        self._find_auto = False
        m = self.model.matches
        if m:
            cur = self.current_row_index()
            start = (cur + 1) if cur is not None else self.model.rowCount()
            older = [i for i in m if i < start]
            self._set_match(older[-1] if older else m[-1])
        else:
            # nothing in the rows on screen: look through the other loaded rows, then older pages
            self.update_find_status()
            self._find_step(False, SEARCH_PAGE_BUDGET)

    def update_find_status(self) -> None:
        m = self.model.matches
        if self.model.match_pass.running:
            self.searchStatus.emit(f"{len(m)} so far, checking the loaded rows…")
            return
        cur = self.model.current_match_row
        pos = f"{m.index(cur) + 1}/" if cur in m else ""
        more = " (older pages not searched yet)" if self.model.has_more else ""
        self.searchStatus.emit(f"{pos}{len(m)} in loaded rows{more}" if m else f"no match in loaded rows{more}")

    def _set_match(self, r: Optional[int]) -> None:
        self.model.set_current_match(r)
        if r is not None:
            self.select_row(r)
        self.update_find_status()
        self.findMoved.emit(r)

    def search_step(self, forward: bool) -> None:
        self._find_step(forward, SEARCH_PAGE_BUDGET)

    def _find_step(self, forward: bool, budget: int) -> None:
        h = self.model
        if not h.find_term:
            return
        start = h.current_match_row if h.current_match_row is not None else self.current_row_index()
        if start is None:
            start = h.rowCount()
        r = h.find(start, forward)
        if r is not None:
            self._set_match(r)
            return
        if not forward and h.pages and h.pages[0].page.has_more and budget > 0:
            self._pending_find = (forward, budget)
            self.searchStatus.emit("searching older pages…")
            if not h.request_older():
                self._pending_find = None if not h.loading else self._pending_find
            return
        if forward:
            where = " (newest reached)"
        elif h.has_more:      # the page budget ran out: say so, the same way as the find bar
            where = " in the pages searched (older pages not searched yet: press Enter to go on)"
        else:
            where = " (start of log reached)"
        self.message("No more matches" + where, 4000)
        self.update_find_status()
        self.findMoved.emit(h.current_match_row)
