"""Jumps and view filters of the history model: a page read around any seq through the seq index, newer
pages after a jump, the true start of the log (``HistoryModel.jump_to`` and friends).

Page bounds come from the seq index's marks (``pages.range_around``/``bound_after``); the
page is read in the model's ``pages`` job group (``pages.range_job``, serial with the older
pages on the same reader) and installed by :class:`~app.ui.history.window.RowWindow`
(``install_range``, ``add_older_page`` when it touches the loaded pages, ``add_newer_page``).
"""
from __future__ import annotations

from typing import Optional
from collections.abc import Sequence

from PySide6.QtCore import QObject

from ..workers import freeze_heap
from .pages import LoadedPage, range_job, bound_after, range_around
from .shed import shed_newer, shed_older
from .window import FIRST_ROWS


class PageJumps(QObject):
    def __init__(self, model):
        super().__init__(model)
        self.model = model
        # seqs a row filter must reach (the outline's error seqs for *Errors only*): while the filter is on,
        # older pages are read, one after another, until the oldest of them is loaded
        self.wanted_seqs: Sequence[int] = []
        self._paging = False
        self._sparse: Optional[LoadedPage] = None   # the page of the errors' segments (sparse.py) while *Errors only* is on
        self._sparse_asked = False
        self.wanted_where: dict = {}
        model.olderInstalled.connect(lambda _n: self._page_on())

    def can_jump(self) -> bool:
        """Pages can be read around any seq (the seq index is built, seqs in order)."""
        m = self.model
        return m.reader is not None and m.seq_index is not None and m.seq_index.monotonic

    def jump_to(self, seq: int) -> bool:
        """Load the page holding ``seq`` directly (page bounds from the seq index), without
        reading the pages in between; ``jumped`` is emitted once it is installed.  A seq in
        the pages ending the log puts the window back on them.  False: no index yet, or the
        seq is loaded already (the caller selects it)."""
        m = self.model
        w = m.window
        if not self.can_jump():
            return False
        if w.seq_ordinal(seq) is not None or seq in w.events:
            return False
        tb = w.tail_base_seq
        if w.has_newer and tb is not None and seq >= tb:
            m.apply_changes(w.jump_to_tail())
            freeze_heap()
            m.statsChanged.emit()
            m.jumped.emit(seq)
            return True
        lo, hi = range_around(m.seq_index, seq, m.page_size)
        first, _last = w.loaded_range()
        if w.attached and first is not None and (hi is None or hi >= first):
            hi = first                 # reaches the loaded pages: read only what is older (contiguous)
            contiguous = True
        else:
            contiguous = False
            if tb is not None and (hi is None or hi > tb):
                hi = tb
        m.set_loading(True)
        m.jobs.submit(range_job, m.reader, lo, hi, m.physical, m.show_attempts,
                      m.window.expanded, m.window.sindex, serial=True, name="jump-page", group=m.job_group("pages"),
                      on_done=lambda lp: self._install_jump(lp, seq, contiguous), on_error=m.page_error)
        return True

    def _install_jump(self, lp: LoadedPage, seq: int, contiguous: bool) -> None:
        m = self.model
        m.set_loading(False)
        if contiguous:
            if lp.page.items:
                m.apply_changes(m.window.add_older_page(lp))
                m.shed_pages(shed_newer)
                ordinal = m.window.seq_ordinal(seq)
                if ordinal is not None:
                    m.show_around(ordinal - m.window.origin)
        else:
            m.apply_changes(m.window.install_range(lp, seq))
            m.after_paint(self._fill)
        freeze_heap()
        m.statsChanged.emit()
        m.jumped.emit(seq)

    def _fill(self) -> None:
        """After a jump's first paint (PAINT_ROWS rows): a first window of FIRST_ROWS rows, newer
        rows below, then older ones above (the view keeps its place)."""
        m = self.model
        w = m.window
        want = FIRST_ROWS - len(w.rows)
        if want > 0 and w.bottom:
            c, changes = w.expose_newer(want)
            m.apply_changes(changes)
            want -= c
        if want > 0 and w.hidden:
            m.apply_changes(w.expose_older(want)[1])
        m.statsChanged.emit()

    def fetch_newer(self) -> bool:
        """After a jump: read the page after the newest loaded one (up to the pages ending the
        log, which then join the window)."""
        m = self.model
        w = m.window
        if not w.has_newer or m.loading or not self.can_jump():
            return False
        _first, last = w.loaded_range()
        tb = w.tail_base_seq
        if last is None or tb is None or last + 1 >= tb:
            m.apply_changes(w.attach_tail())
            m.request_newer()
            m.statsChanged.emit()
            return True
        hi = bound_after(m.seq_index, last, m.page_size)
        if hi is None or hi > tb:
            hi = tb
        m.set_loading(True)
        m.jobs.submit(range_job, m.reader, last + 1, hi, m.physical, m.show_attempts,
                      m.window.expanded, m.window.sindex, serial=True, name="newer-page", group=m.job_group("pages"),
                      on_done=self._install_newer, on_error=m.page_error)
        return True

    def _install_newer(self, lp: LoadedPage) -> None:
        m = self.model
        m.set_loading(False)
        m.apply_changes(m.window.add_newer_page(lp))
        m.shed_pages(shed_older)
        freeze_heap()
        m.request_newer()
        m.statsChanged.emit()

    def show_start(self) -> bool:
        """The true start of the log (a jump when it is not loaded)."""
        m = self.model
        w = m.window
        if not w.has_more:
            if w.hidden:
                m.show_around(0)
            return False
        return self.jump_to(0) if self.can_jump() else False


    def to_tail(self) -> bool:
        """After a jump: the window on the pages that end the log again (False: it is there)."""
        m = self.model
        if not m.window.has_newer:
            return False
        m.apply_changes(m.window.jump_to_tail())
        freeze_heap()
        m.statsChanged.emit()
        return True

    def set_filter(self, hidden_kinds=frozenset(), errors_only: bool = False) -> None:
        """View filters (``navigation.FILTERS`` categories hidden, or errors only).  *Errors only* covers
        the whole log: with the outline's error seqs known (:meth:`set_wanted`), the pages down to the
        oldest error are read in turn (the filter shows each as it comes); with the seq index, only the
        pages that hold errors are read (:mod:`app.ui.history.sparse`), which leave the window when it is off."""
        m = self.model
        if not errors_only:
            self._drop_sparse()
        changes = m.window.set_filter(hidden_kinds, errors_only)
        if changes:
            m.apply_changes(changes)
            m.statsChanged.emit()
        self._paging = bool(errors_only)
        self._page_on()

    def set_wanted(self, seqs: Sequence[int], where: Optional[dict] = None) -> None:
        """The seqs the *Errors only* filter must reach (the whole log's errors, sorted: the outline's array,
        kept as it is; ``where``: seq -> (pos, offset, line) of its stored row, when the outline knows it)."""
        self.wanted_seqs = seqs
        self.wanted_where = where or {}
        if not seqs:                       # (another session: its errors' page is read afresh)
            self._sparse, self._sparse_asked = None, False
        self._page_on()

    def paging_done(self) -> bool:
        """Every wanted seq is in the loaded pages (or no older page is left)."""
        m = self.model
        if not self.wanted_seqs or m.reader is None:
            return True
        first, _last = m.window.loaded_range()
        return first is None or first <= self.wanted_seqs[0] or not m.has_more

    def _page_on(self) -> None:
        """One more older page while the filter still misses a wanted seq (called again once it is in)."""
        m = self.model
        if not self._paging or not m.window.errors_only or self.paging_done() or m.loading:
            return
        if self.can_jump() and not self._sparse_asked:
            self._load_sparse()
            return
        m.request_older()

    def _load_sparse(self) -> None:
        """Read only the index segments holding the wanted seqs older than the pages ending the log."""
        from .sparse import sparse_job
        m = self.model
        w = m.window
        newest = w.pages[-1] if w.attached and w.pages else None
        tb = newest.page.base_seq if newest is not None else w.tail_base_seq
        seqs = [s for s in self.wanted_seqs if tb is None or s < tb]
        m.set_loading(True)
        self._sparse_asked = True         # (not again while the filter is on)
        m.jobs.submit(sparse_job, m.reader, seqs, self.wanted_where, m.physical, m.show_attempts, w.expanded,
                      w.sindex,
                      serial=True, name="error-pages", group=m.job_group("pages"),
                      on_done=self._install_sparse, on_error=self._sparse_error, on_partial=self._install_newest)

    def _sparse_error(self, msg: str) -> None:
        self._sparse_asked = False
        m = self.model
        m.page_error(msg)

    def _install_newest(self, lp: LoadedPage) -> None:
        """The newest errors' page first (sparse.NEWEST): the whole errors' page replaces it when read."""
        self._install_sparse(lp, done=False)

    def _install_sparse(self, lp: LoadedPage, done: bool = True) -> None:
        """The errors' page above the pages that end the log (the window stays attached to the log's end)."""
        m = self.model
        w = m.window
        m.set_loading(not done)
        if not w.errors_only:
            self._sparse_asked = False
            return
        self._sparse = lp
        changes = w.install_range(lp) + w.attach_tail()
        m.apply_changes(changes)
        if done:                          # (the summary's whole-log pass once, for the whole errors' page)
            freeze_heap()
            m.statsChanged.emit()

    def _drop_sparse(self) -> None:
        """*Errors only* off: the errors' page leaves; the window is on the pages that end the log again."""
        m = self.model
        w = m.window
        lp, self._sparse, self._sparse_asked = self._sparse, None, False
        if lp is None or not any(p is lp for p in w.pages):
            return
        if w.attached:
            w.tail_pages = [p for p in w.pages if p is not lp]
        if w.tail_pages:
            m.apply_changes(w.jump_to_tail())
            freeze_heap()

    def near_row(self, seq: int):
        """Exposed row of the first loaded row starting after ``seq`` (else the last before it):
        where an event without a row of its own (a hidden attempt, a filtered row) sits."""
        m = self.model
        return m.index_of_ordinal(m.window.near_ordinal(seq), True)
