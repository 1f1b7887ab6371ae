"""The history delegate's pixmaps and documents stay within a few screens' bytes (issue 36).

Before, the row pixmaps were bounded by a fixed 32 MB (six to ten viewports of the window; the
figure the bench found held after a scroll) and the documents by count (400, ~9 MB): scrolling a
few pages filled both whatever the window's size.  Now (``app/ui/history/paintcache.py``) the
pixmaps are bounded by ``PIX_SCREENS`` viewports of pixels and the documents by ``DOC_SCREENS``
viewports' worth of bytes (never fewer than ``MIN_DOCS``); the warmer renders no row past the
pixmap budget, and a row blitted from its pixmap needs no document.

In the real window on a generated log of many pages: scrolling up through six pages, the caches
are sampled at every scroll step; they never pass their budgets, and once the view is idle every
row on screen is still drawn from a pixmap (scrolling stays a blit; a row too long to render in
one idle slice is left to the paint, as before).  On the old code (main at
fd1fe00) the same scroll held 4 to 6 times the pixmap budget."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint

from app.tools.synth import SessionSynth, write_jsonl
from app.ui.history.delegate import row_of
from app.ui.history.warm import WARM_BUDGET_S
from app.ui.history.paintcache import MIN_DOCS, PIX_SCREENS, doc_budget, pixmap_bytes

from test_parked_selection import _scroll_until
from test_ui_history import WAIT, make_window, open_and_wait  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    path = tmp_path_factory.mktemp("paintcache") / "session.jsonl"
    write_jsonl(str(path), SessionSynth(seed=11), turns=60)
    return str(path)


def _on_screen(v) -> list:
    """(row, rect, selected) of the rows the viewport shows."""
    out = []
    m, vh = v.hmodel(), v.viewport().height()
    top = v.indexAt(QPoint(8, 2))
    r = top.row() if top.isValid() else m.rowCount()
    while r < m.rowCount():
        ix = m.index(r, 0)
        rect = v.visualRect(ix)
        if rect.top() >= vh:
            break
        out.append((row_of(ix), rect, v.selectionModel().isSelected(ix)))
        r += 1
    return out


def test_row_pixmaps_and_documents_stay_within_a_few_screens(qtbot, make_window, log):  # noqa: F811
    win = make_window(page_size=20)
    h = open_and_wait(qtbot, win, log)
    v, d = win.view, win.view.delegate
    vp = v.viewport()
    screen = pixmap_bytes(vp.width(), vp.height(), vp.devicePixelRatioF())
    w = h.window
    peak = {"pix": 0, "docs": 0, "n_docs": 0}

    def sample() -> None:
        held = d.pixmaps
        peak["pix"] = max(peak["pix"], held.bytes)
        if len(d.docs) > MIN_DOCS:
            peak["docs"] = max(peak["docs"], d.docs.bytes)
        peak["n_docs"] = max(peak["n_docs"], len(d.docs))

    def done() -> bool:
        sample()
        return w.older_read >= 6 or not h.has_more
    assert _scroll_until(qtbot, win, h, done, steps=1200)
    qtbot.waitUntil(lambda: v.settled() and not h.loading and not v.warmer.timer.isActive(), timeout=WAIT)
    sample()
    assert w.older_read >= 6, "the log has fewer pages than the scroll needs"
    assert len(d.pixmaps) > 0
    assert peak["pix"] <= PIX_SCREENS * screen, (
        f"pixmaps held up to {peak['pix'] / screen:.1f} screens ({peak['pix'] >> 10} KB), budget {PIX_SCREENS}")
    assert peak["docs"] <= doc_budget(vp), f"documents held up to {peak['docs'] >> 10} KB ({peak['n_docs']} of them)"
    # the screen is still drawn from pixmaps once idle (a scroll step blits, as before)
    shown = _on_screen(v)
    assert shown
    # (a row too long to render in one idle slice is left to the paint, as before: warm.py)
    missing = [(rect.top(), rect.height()) for row, rect, sel in shown
               if not d.has_pixmap(row, rect, sel) and d.px_cost * rect.height() <= 2 * WARM_BUDGET_S]
    assert not missing, f"rows on screen (top, height) with no pixmap: {missing}"
