"""The history list, split by job (model, view, delegate and controller kept apart).

  rows.py        display rows from core pages (attempt collapsing, content, plain text); no Qt
  cards.py       tool call/result cards of a row (presenter views or the generic card); no Qt
  pages.py       a loaded page, its rows per face, and the page/index/live worker bodies; no Qt
  window.py      RowWindow: loaded rows, the exposed window, paging, live merge, face switch,
                 match positions; returns change records; no Qt (tests/test_row_window.py)
  compaction.py  surface statuses of a page's rows, compaction groups folded into one row; no Qt
  window_truth.py  RowWindow's mixin: set_surface, toggle_compaction, set_live (live face); no Qt
  model_truth.py   HistoryModel's mixin: the surface index job, compaction toggles, the live face
  model.py       HistoryModel: the thin QAbstractListModel applying the window's records,
                 page jobs, faces, signals (QtCore only)
  live_feed.py   LiveFeed: live rows from the LiveFollower, grown pages in the ``live`` job group
  seq_index.py   SeqIndex: the seq index build and event_at for rows not loaded (workers)
  delegate.py    row painting (QTextDocument built with insertText only; Markdown from markdown.py)
  markdown.py    a small Markdown reader returning plain data (no HTML, images as text); no Qt
  view.py        HistoryView: QListView with scroll anchoring, older/newer loading, copy, menu
  controller.py  HistoryController: search, go-to (seq, turn) and selection over model + view

Import the modules themselves (``from app.ui.history.model import HistoryModel``): this
package file imports nothing, so the Qt-free modules load without Qt.
"""
