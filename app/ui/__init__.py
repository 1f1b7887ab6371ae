"""Session Lens desktop UI (PySide6).

Data flows files -> core (app.log / app.store / app.presenters, no Qt) -> view models
(QtCore only) -> widgets.

View models and helpers (no widgets):
  history/          the history list, model / view / delegate / controller kept apart (see its
                    __init__): window.py (RowWindow, Qt-free: paging, sliding window, live merge,
                    faces, matches; returns change records), model.py (thin QAbstractListModel),
                    pages.py + rows.py + cards.py (Qt-free rows), live_feed.py, seq_index.py
  session_model.py  lineage tree of a store + filter proxy; discover/title jobs
  json_model.py     lazy JSON tree model (request inspector)
  workers.py        job runner: QThreadPool jobs, named groups (a new job cancels the old one),
                    queued signals to the UI thread, unhandled errors to the crash handler
  theme.py          light/dark colours following QStyleHints.colorScheme
  recent.py         recent stores (platformdirs config dir)
  settings.py       window preferences (theme, text size, Markdown, geometry, tour seen)
  summary.py        the inspector's session summary (nothing selected): loaded figures (per-page
                    tallies) and the whole log's (seq index, outline)
  summary_refresh.py  keeps that summary in step with what is loaded (coalesced refresh)
  markdown_copy.py  Copy as Markdown of rows
  status.py         status bar (eliding messages), error wording, banner text, ensure_menu
  qtcompat.py       PySide6 6.12 / CPython 3.11 None/True/False refcount work-around
Widgets:
  history/delegate.py, history/view.py, history/controller.py
                       row painting; QListView (scroll anchoring, older/newer loading, copy,
                       menu); search, go-to and selection over model + view
  inspector.py         event inspector (seq, links, presenter view, raw JSON)
  request_view.py      request inspector (request_at in a worker)
  session_list.py      session panel (filter box + tree)
  main_window.py       the frame: layout, status bar, banner, theme, Help menu, and its controllers:
  file_actions.py        File menu, welcome page, stores and sessions, recent, drops
  history_actions.py     View menu, search bar, faces (navigation: history/controller.py)
  live_actions.py        follower state, writer states of the listed sessions
  fork_action.py         "Fork from here" (eligibility, preview, fork in a worker)
  frame_actions.py       Edit / View (theme, text size, Markdown) / Go / Help › Keyboard shortcuts,
                         Show request, toolbar icons, link confirmation, geometry, summary
  tour.py              first-run tour (three hints, once; beside the history's top, Esc ends it)
  audit_action.py        Tools menu (audit window, Trace this row), File > Export (exports in workers)
  audit/               audit window: trace panel, side-by-side diffs, QPainter plots, stats;
                       audit/data.py computes what it shows without widgets (in a worker)
  welcome.py           first-run welcome view (find_harness_home is its Qt-free part)
  about.py             About dialog, versions
  crash.py             crash handler: log file + dialog for unexpected exceptions and job errors
  app.py               qasync entry point, screenshot mode
"""
from .qtcompat import keep_none_alive as _keep_none_alive

_keep_none_alive()
