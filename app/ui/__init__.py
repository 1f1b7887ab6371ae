"""Session Lens desktop UI (PySide6).

Data flows files -> core (app.log / app.store / app.presenters, no Qt) -> view models
(QtCore only) -> widgets.

View models and helpers (no widgets):
  rows.py           display rows from core pages (attempt collapsing, cards, plain text)
  history_model.py  QAbstractListModel over history pages: tail page, older pages
                    (canFetchMore/fetchMore), faces, hidden attempts, search, sliding window
  session_model.py  lineage tree of a store + filter proxy; discover/title jobs
  json_model.py     lazy JSON tree model (request inspector)
  workers.py        QThreadPool jobs with queued signals; GC freeze helpers
  theme.py          light/dark colours following QStyleHints.colorScheme
  recent.py         recent stores (platformdirs config dir)
  qtcompat.py       PySide6 6.12 / CPython 3.11 None/True/False refcount work-around
Widgets:
  history_delegate.py  row painting (QTextDocument built with insertText only)
  history_view.py      QListView: scroll anchoring, older/newer loading, copy, menu
  inspector.py         event inspector (seq, links, presenter view, raw JSON)
  request_view.py      request inspector (request_at in a worker)
  session_list.py      session panel (filter box + tree)
  main_window.py       window, menus, search, navigation, drops, status bar
  fork_action.py       "Fork from here" (eligibility, preview, fork in a worker)
  audit_action.py      Tools menu (audit window, Trace this row), File > Export (exports in workers)
  audit/               audit window: trace panel, side-by-side diffs, QPainter plots, stats;
                       audit/data.py computes what it shows without widgets (in a worker)
  app.py               qasync entry point, screenshot mode
"""
from .qtcompat import keep_none_alive as _keep_none_alive

_keep_none_alive()
