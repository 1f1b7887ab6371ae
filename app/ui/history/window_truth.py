"""The row window's part for issue 16 (pure: no Qt, no I/O): surface statuses, compaction
groups and the live face, mixed into :class:`~app.ui.history.window.RowWindow`.

* :meth:`TruthWindow.set_surface` — the log's surface index arrived (built in its own worker
  after the first paint): every loaded row gets its status, compactions fold.
* :meth:`TruthWindow.toggle_compaction` — a compaction row expands into its underlying rows
  (or collapses), with exact change records.
* :meth:`TruthWindow.set_live` — the writer came (the open turn in flight, no closure) or went
  (the crash closure).
* :meth:`TruthWindow._refresh_surface` — a live replacement shadows rows of older pages.
"""
from __future__ import annotations

from typing import Any, Optional

from .compaction import page_groups, page_surface_of, toggled
from .pages import LoadedPage
from .rows import Row
from .row_kind import RowKind


def _records():
    from . import window as w     # the change records live with the window (imported when used)
    return w


class TruthWindow:
    """Mixin: uses the RowWindow's pages, rows, window bookkeeping and ``set_face``."""
    pages: list
    rows: list
    all_rows: list
    events: dict
    hidden: int
    bottom: int
    physical: bool
    show_attempts: bool
    expanded: set
    live: Optional[bool]
    sindex: Any
    _n_replaced: int
    _apply_rows: Any             # RowWindow's methods (declared for the type checker)
    row_index: Any
    set_face: Any

    def _clear_truth(self) -> None:
        self.sindex = None                       # the log's SurfaceIndex once built (set_surface)
        self._n_replaced = 0                     # replacements the surface index held at the last refresh
        self.expanded = set()                    # compactionIds shown expanded (shared with the pages)
        self.live = None                         # the writer: True live (the live face), False gone, None unknown

    def _refresh_surface(self, new: list) -> list:
        """A live replacement (a compaction while the session is open) shadows rows of pages
        loaded before it: their statuses are taken again (rare: only when the index gained a
        replacement), and the exposed rows whose status changed are repainted."""
        sindex = self.sindex
        if sindex is None:
            return []
        n = len(sindex.fold.replaced)
        if n == self._n_replaced:
            return []
        self._n_replaced = n
        changed: list = []
        for lp in self.pages[:-len(new)]:
            surf = page_surface_of(sindex, lp.page)
            if surf == lp.surface:
                continue
            lp.surface = surf
            changed.extend(self._restatus(lp, surf))
        return self._repaint(changed)

    # ------------------------------------------------------------------ compactions, live face
    def _adopt(self, lp: LoadedPage) -> None:
        """A page built in a worker takes this window's expanded set and live face."""
        if lp.expanded is not self.expanded:
            lp.expanded = self.expanded
            if lp.compactions:
                lp.faces.clear()
        if self.sindex is not None and lp.sindex is not self.sindex:
            self._feed(lp.events.values())
            lp.sindex = self.sindex
            lp.surface = page_surface_of(self.sindex, lp.page)
            lp.compactions = page_groups(self.sindex, lp.page)
            lp.faces.clear()
        if self.live is not None and lp.page.tail and lp.live != self.live:
            lp.live = self.live
            lp.faces.clear()
            lp.trackers.clear()

    def _feed(self, events) -> None:
        """Stored events newer than the index's snapshot (loaded meanwhile) go into it, in order."""
        idx = self.sindex
        newer = sorted((e for e in events if not e.synthesized and e.seq > idx.last_seq), key=lambda e: e.seq)
        idx.feed(newer)

    def set_surface(self, sindex) -> list:
        """The surface index is ready: every loaded row gets its status, compactions fold.  Rows
        whose status changed are repainted; a page with a compaction is rebuilt (one reset that
        keeps the first seq shown at the top)."""
        self.sindex = sindex
        self._feed(self.events.values())
        self._n_replaced = len(sindex.fold.replaced)
        regroup = False
        changed: list = []
        for lp in self.pages:
            lp.sindex = sindex
            surf = page_surface_of(sindex, lp.page)
            groups = page_groups(sindex, lp.page)
            lp.surface = surf
            if groups != lp.compactions:
                lp.compactions = groups
                lp.faces.clear()
                regroup = True
                continue
            changed.extend(self._restatus(lp, surf))
        if regroup:
            return self.set_face(self.physical, self.show_attempts)
        return self._repaint(changed)

    @staticmethod
    def _restatus(lp: LoadedPage, surf: dict) -> list:
        out = []
        for pr in lp.faces.values():
            for r in pr.rows:
                if r.kind == RowKind.COMPACTION:
                    continue
                st = surf.get(r.seq) if r.event is not None and not r.synthesized else None
                if st != r.surface:
                    r.surface = st
                    r.touch()
                    out.append(r)
        return out

    def _repaint(self, rows: list) -> list:
        out = []
        for r in dict.fromkeys(rows):
            i = self.row_index(r)
            if i is not None:
                out.append(_records().Changed(i, (r,)))
        return out

    def group_row(self, cid) -> Optional[Row]:
        for r in self.all_rows:
            if r.kind == RowKind.COMPACTION and r.group and r.group.get("compactionId") == cid:
                return r
        return None

    def toggle_compaction(self, cid) -> list:
        """Expand (or collapse) one compaction: its underlying rows are inserted after (removed
        from after) its row; the rest of the window stays where it is."""
        head = self.group_row(cid)
        at = self.row_index(head) if head is not None else None
        old_rows = list(self.rows)
        toggled(self.expanded, cid)
        for lp in self.pages:
            if cid in lp.compactions:
                lp.faces.clear()
        self._apply_rows(hidden=self.hidden, bottom=self.bottom)
        if at is None:
            return [_records().RESET]
        # the rows outside the bracket are the same objects: one removal and one insertion
        new_rows = self.rows
        n, m = len(old_rows), len(new_rows)
        p = 0
        while p < min(n, m) and old_rows[p] is new_rows[p]:
            p += 1
        q = 0
        while q < min(n, m) - p and old_rows[n - 1 - q] is new_rows[m - 1 - q]:
            q += 1
        out: list = []
        if head is not None and p > at and new_rows[at] is head:
            out.append(_records().Changed(at, (head,)))            # its own text changes (▸ / ▾)
        if n - q > p:
            out.append(_records().Removed(p, n - q - p))
        if m - q > p:
            out.append(_records().Inserted(p, tuple(new_rows[p:m - q])))
        return out

    def set_live(self, on: Optional[bool]) -> list:
        """The writer came (True: the open turn in flight) or went (False: the crash closure)."""
        if self.live == on:
            return []
        self.live = on
        touched = False
        for lp in self.pages:
            if lp.page.tail and lp.live != on:
                lp.live = on
                lp.faces.clear()
                lp.trackers.clear()
                touched = True
        if not touched:
            return []
        return self.set_face(self.physical, self.show_attempts)

