"""The main toolbar fits the window: no action ends up in the toolbar's "»" overflow menu at
the widths people use (down to about 1,000 px).

Two means, both kept out of the menus (they keep their full, descriptive texts):

* short toolbar labels (``QAction.setIconText``) for the actions whose menu text is long, and a
  tooltip that names the action in full, with its shortcut;
* when the buttons with their labels are wider than the toolbar, the least needed ones show
  their icon only (their tooltip still names them), in the order given: first the open
  buttons (also in the File menu and on the welcome page), then the turn arrows.  The switches
  the tour explains (the two faces, Show request) and Fork keep their labels.

Only when even that does not fit (a window far narrower than 1,000 px) does Qt's overflow
button take the last actions.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QToolBar, QToolButton


def action_keys(act: QAction) -> list[str]:
    """The action's shortcuts as the user reads them (the first is its main one)."""
    return [k.toString(QKeySequence.SequenceFormat.NativeText) for k in act.shortcuts() if not k.isEmpty()]


def menu_text(act: QAction) -> str:
    """The action's menu text without its mnemonic and trailing ellipsis."""
    return act.text().replace("&", "").rstrip("…")


def tooltip(text: str, act: QAction) -> str:
    """``text`` with the action's shortcut, as the toolbar shows it: "Open a session file (Ctrl+O)"."""
    keys = action_keys(act)
    return f"{text} ({keys[0]})" if keys else text


def label(act: QAction, short: str, tip: str = "") -> None:
    """The toolbar's label of ``act`` (the menu keeps its text) and its tooltip (default: the menu's text)."""
    act.setIconText(short)
    act.setToolTip(tooltip(tip or menu_text(act), act))


class ToolbarFit(QObject):
    """Keeps ``toolbar``'s buttons inside it: the ``compact`` groups of actions (least needed
    first; a pair such as the two open buttons changes together) lose their labels, one group
    after the other, while the labelled buttons would not fit."""

    def __init__(self, toolbar: QToolBar, compact: list):
        super().__init__(toolbar)
        self.toolbar = toolbar
        self.compact = [list(g) for g in compact]
        self.compacted = 0              # how many groups of ``compact`` show their icons only
        toolbar.installEventFilter(self)
        self.fit()

    def needed_width(self) -> int:
        """The width the toolbar's items take side by side (what its layout would ask for)."""
        tb = self.toolbar
        lay = tb.layout()
        items = [tb.widgetForAction(a) for a in tb.actions() if a.isVisible()]
        widths = [w.sizeHint().width() for w in items if w is not None]
        handle = tb.style().pixelMetric(tb.style().PixelMetric.PM_ToolBarHandleExtent) if tb.isMovable() else 0
        if lay is None:
            return handle + sum(widths)
        m = lay.contentsMargins()
        return m.left() + m.right() + handle + sum(widths) + lay.spacing() * max(0, len(widths) - 1)

    def _set(self, n: int) -> None:
        for i, group in enumerate(self.compact):
            for a in group:
                btn = self.toolbar.widgetForAction(a)
                if isinstance(btn, QToolButton):
                    btn.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly if i < n
                                           else self.toolbar.toolButtonStyle())
        self.compacted = n

    def fit(self) -> None:
        """Labels back on every button, then off the ``compact`` groups in turn until the row fits."""
        avail = self.toolbar.width()
        n = 0
        self._set(0)
        while n < len(self.compact) and self.needed_width() > avail:
            n += 1
            self._set(n)

    def eventFilter(self, obj, e) -> bool:
        if obj is self.toolbar and e.type() == QEvent.Type.Resize:
            self.fit()
        return False
