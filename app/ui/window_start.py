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
        win.split.setSizes(SPLIT_SIZES)
        win.stack.currentChanged.connect(self._size_split)
        win.split.installEventFilter(self)

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
        sizes = self.win.split.sizes()
        total = sum(sizes)
        if total > 0 and len(sizes) == 3 and sizes[1] < MIN_HISTORY_SHARE * total:
            self._fit_split()

    def _fit_split(self) -> None:
        split = self.win.split
        total = sum(split.sizes()) or split.width()
        sizes = [total * w / sum(SPLIT_SIZES) for w in SPLIT_SIZES]
        # the history column holds the find bar: it gets the bar's minimum width now (from the
        # list, then the inspector, down to their own minimum), so that opening the bar does not
        # widen the column (every row wrapped again)
        ha = getattr(self.win, "history_actions", None)
        need = ha.search_bar.minimumSizeHint().width() - sizes[1] if ha is not None else 0
        for i in (0, 2):
            take = max(0, min(need, sizes[i] - split.widget(i).minimumSizeHint().width()))
            sizes[i] -= take
            sizes[1] += take
            need -= take
        split.setSizes([max(1, round(x)) for x in sizes])
