"""What the main window does around opening a session, for its first paint (issue 15): work that
waits for the first rows to be painted, and the splitter's sizes once the window has its size.

* :meth:`WindowStart.after_first_paint`: background jobs that would share the interpreter with the
  tail page's worker (session titles, the home index's count) start once the session being opened
  has painted its first rows (or failed, or ``AFTER_PAINT_MAX_MS`` passed).
* The splitter (session list, history, inspector) gets ``SPLIT_SIZES`` scaled to its width when the
  main page is first shown: sizes set while it was hidden, before the window had its size, are not
  kept (the extra width went all to the history column, cramping the session list's titles).  One
  session file is listed too, as one row with its title (a store or a file: the same columns).
  The history column gets at least the find bar's minimum width (opening the bar re-wraps no row).
"""
from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, QTimer

SPLIT_SIZES = [440, 620, 340]  # session list, history, inspector at 1,400 px (the list needs room for a
                               # title beside its three columns), scaled to the window's width
AFTER_PAINT_MAX_MS = 1500      # after_first_paint work waits at most this long for the first rows
INSPECTOR_FLOOR = 250          # a dock beside the splitter takes the inspector down to this width, no further
MIN_HISTORY_SHARE = 0.35       # the splitter narrower than this share for the history: sized again (SPLIT_SIZES)


class WindowStart(QObject):
    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self._todo: list[Callable[[], object]] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(AFTER_PAINT_MAX_MS)
        self._timer.timeout.connect(self.run)
        win.view.rowsPainted.connect(self.run)
        win.history.opened.connect(self.run)
        win.history.opened.connect(lambda: win.frame_actions.update_summary())   # the whole first page is in
        win.history.openFailed.connect(lambda _m: self.run())
        self._split_sized = False
        self._last: list = []              # the splitter's sizes as last set (by us or by a drag)
        self._wanted: list = []            # the sizes before a dock took some width (given back to them)
        win.split.setSizes(SPLIT_SIZES)
        win.stack.currentChanged.connect(self._size_split)
        win.split.installEventFilter(self)
        win.split.splitterMoved.connect(self._dragged)
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(400)
        self._save_timer.timeout.connect(self._save_split)

    # ------------------------------------------------------------------ after the first paint
    def after_first_paint(self, fn: Callable[[], object]) -> None:
        """Run ``fn`` once the session being opened is painted; now when none is opening."""
        h = self.win.history
        if h.path is None or h.open_error is not None or h.tail_painted:
            fn()
            return
        self._todo.append(fn)
        if not self._timer.isActive():
            self._timer.start()

    def cancel(self) -> None:
        """Another store is opening (or the window closes): what waited is dropped."""
        self._timer.stop()
        self._todo = []

    def run(self) -> None:
        self._timer.stop()
        todo, self._todo = self._todo, []
        for fn in todo:
            fn()

    # ------------------------------------------------------------------ the splitter
    def _size_split(self, index: int) -> None:
        win = self.win
        if self._split_sized or win.stack.widget(index) is not win.split:
            return
        self._split_sized = True
        win.split.resize(win.stack.size())        # before its first layout and paint (no re-wrap after)
        self._fit_split()

    def eventFilter(self, obj, e) -> bool:
        """The splitter lost width (a dock opened beside it, the window shrank): its side panels
        keep their widths and the history alone would shrink, to a sliver; past
        MIN_HISTORY_SHARE the three columns are sized again in SPLIT_SIZES' proportions."""
        if obj is self.win.split and e.type() == QEvent.Type.Resize and self._split_sized:
            QTimer.singleShot(0, self, self._keep_history_wide)      # after the splitter's own resize
        return False

    def _keep_history_wide(self) -> None:
        split = self.win.split
        sizes = split.sizes()
        total = sum(sizes)
        if total <= 0 or len(sizes) != 3:
            return
        if len(self._last) == 3 and sum(self._last) != total:
            self._share_change(self._last, total)
            sizes = split.sizes()
        if sizes[1] < MIN_HISTORY_SHARE * total:
            self._fit_split()
        self._last = split.sizes()

    def _share_change(self, last: list, total: int) -> None:
        """The splitter lost width (a dock opened beside it) or got it back: the session list gives
        it first (down to its minimum), then the inspector (down to INSPECTOR_FLOOR), then the
        history; width coming back returns to them up to their widths before.

        The sizes are worked out from the widths before the first loss (``_wanted``) and the width
        there is now, never step by step from the last sizes: a dock that is wide for a moment (its
        progress pane, a drag of its edge) and then narrower gives the history back what it took."""
        if total < sum(last) and not self._wanted:
            self._wanted = list(last)
        want = self._wanted or list(last)
        self.win.split.setSizes(self._shared(want, total))
        if total >= sum(want):
            self._wanted = []

    def _shared(self, want: list, total: int) -> list:
        """``want`` (list, history, inspector) fitted to ``total``: the list gives first, then the
        inspector, then the history; more than ``want`` goes to the history."""
        split = self.win.split
        lst, hist, insp = want
        short = sum(want) - total
        if short > 0:
            take = min(short, max(0, lst - split.widget(0).minimumSizeHint().width()))
            lst -= take
            short -= take
            take = min(short, max(0, insp - max(INSPECTOR_FLOOR, split.widget(2).minimumSizeHint().width())))
            insp -= take
            short -= take
        hist -= short
        return [max(1, lst), max(1, hist), max(1, insp)]

    # ------------------------------------------------------------------ the user's split, remembered
    def _dragged(self, *_) -> None:
        self._last = self.win.split.sizes()
        self._wanted = []
        self._save_timer.start()

    def _save_split(self) -> None:
        from . import settings
        sizes = self.win.split.sizes()
        if len(sizes) == 3 and all(x > 0 for x in sizes):
            settings.update(split=sizes)

    @staticmethod
    def _saved_split() -> list:
        from . import settings
        got = settings.load().get("split")
        if isinstance(got, list) and len(got) == 3 and all(isinstance(x, int) and x > 0 for x in got):
            return list(got)
        return SPLIT_SIZES

    def _fit_split(self) -> None:
        split = self.win.split
        total = sum(split.sizes()) or split.width()
        want = self._saved_split()                # the user's last split (proportions), else ours
        sizes = [total * w / sum(want) for w in want]
        # the history column holds the find bar: it gets the bar's minimum width now (from the
        # list, then the inspector, down to their own minimum), so that opening the bar does not
        # widen the column (every row wrapped again)
        ha = getattr(self.win, "history_actions", None)
        need = ha.find_bar.minimumSizeHint().width() - sizes[1] if ha is not None else 0
        for i in (0, 2):
            take = max(0, min(need, sizes[i] - split.widget(i).minimumSizeHint().width()))
            sizes[i] -= take
            sizes[1] += take
            need -= take
        split.setSizes([max(1, round(x)) for x in sizes])
        self._last = split.sizes()
