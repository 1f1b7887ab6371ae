"""Name the truths in the window (issue 16): which contract each view shows, and the views that
compare them.

:class:`TruthActions` (a controller of the main window, after the pattern of the others):

* a **truth chip** above the history ("Showing: Logical history (crash closed in memory)")
  and one on the Request tab ("Exact request at seq N"), from :data:`app.log.fold.tails.TRUTHS`;
* Help › **What each view shows** (the legend, :func:`app.log.fold.tails.legend`);
* View › **Logical vs physical tails (side by side)** (:class:`TailsDialog`, rows from
  :func:`app.log.fold.tails.align_tails` computed in a worker);
* the **surface "why"** of the selected row in the inspector: its status in words, and the
  trace (replacement chain, compaction bracket, the requests it was part of) computed by
  :func:`app.log.query.trace.trace_event` in a worker, with links to the seqs;
* clicks in the history: a shadowed row's "go to replacement" pill jumps to the replacement, a
  compaction row expands / collapses;
* View › **Session lineage** (:class:`LineageDialog`): ancestors outward and descendants at any
  depth across the store's project folders (:func:`app.store.lineage.lineage`, in a worker);
* the **live status** in the status bar: the last append, events and bytes since the previous
  batch, and the write-behind note (:data:`app.log.fold.inflight.WRITE_BEHIND_NOTE`).

Every log-derived string goes into a plain-text label; rich-text labels are built from
integers and fixed strings only.
"""
from __future__ import annotations

import time
from typing import Any, Optional

from PySide6.QtCore import QEvent, QObject, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QAction, QColor
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QHeaderView, QLabel, QTableWidget, QTableWidgetItem,
                               QTreeWidget, QTreeWidgetItem, QVBoxLayout)

from ..log.fold.inflight import WRITE_BEHIND_NOTE
from ..log.fold.surface import describe_surface
from ..log.fold.tails import TRUTHS, legend, truth_label
from .history.row_kind import RowKind
from .plaintext import clean_line

# --------------------------------------------------------------------------- pure helpers


def history_truth(stats: dict) -> tuple[str, str]:
    """(name, what it shows) of the history list in its current face."""
    if stats.get("face") == "physical":
        key = "physical"
    elif stats.get("liveFace") and stats.get("live") in ("live", "idle", None, "waiting", "loading"):
        key = "live"
    elif stats.get("closure"):
        key = "logical"
    elif stats.get("showAttempts"):
        key = "audit"
    else:
        key = "user"
    name, what = TRUTHS[key]
    return name, what


def chip_text(stats: dict) -> str:
    name, what = history_truth(stats)
    return f"Showing: {name} — {what}. Dimmed rows are not in the Model's view (replaced by compaction)."


def _kb(n: Any) -> str:
    if not isinstance(n, int):
        return "? bytes"
    return f"{n:,} bytes" if n < 10_000 else f"{n / 1024:,.1f} KB"


def live_status_text(state: Optional[str], batch: Optional[dict], now: Optional[float] = None,
                     facts: Optional[dict] = None) -> str:
    """The live status line: last append, the previous batch's size, what the writer's state goes
    by (``facts``: the follower's lock verdict, growth seen, the rule's waits) and the write-behind note."""
    if state not in ("live", "idle"):
        return ""
    now = time.time() if now is None else now
    parts = ["● writer live" if state == "live" else "◌ writer idle (inside a turn)"]
    at = batch.get("at") if batch else None
    if batch:
        if isinstance(at, (int, float)):
            parts.append(f"last append {time.strftime('%H:%M:%S', time.localtime(at))} "
                         f"({max(0, int(now - at))} s ago)")
        ev = batch.get("events")
        parts.append(f"+{ev} event{'s' if ev != 1 else ''}, {_kb(batch.get('bytes'))} since the previous batch")
    why = writer_why(state, facts, at, now)
    if why:
        parts.append(why)
    parts.append("the file lags the writer (write-behind)")
    return " · ".join(parts)


def writer_why(state: str, facts: Optional[dict], at: Optional[float], now: float) -> str:
    """Why the writer is judged ``state`` and what would change it (app.store.watch.writer_verdict;
    its waits come from the follower, i.e. IDLE_AFTER_S / CRASH_AFTER_S)."""
    from ..store.watch import CRASH_AFTER_S, IDLE_AFTER_S
    facts = facts or {}
    if facts.get("lock") is True:
        return "session.lock held: the writer is alive, however long it is quiet"
    idle_after = float(facts.get("idleAfter") or IDLE_AFTER_S)
    crash_after = float(facts.get("crashAfter") or CRASH_AFTER_S)
    grew = facts.get("grewAt")
    grew = grew if isinstance(grew, (int, float)) else at
    quiet = max(0, int(now - grew)) if isinstance(grew, (int, float)) else None
    if state == "live":
        seen = f"growing (last growth {quiet} s ago)" if quiet is not None else "growing"
        return (f"{seen}; no session.lock to ask: judged by growth, idle after {idle_after:g} s "
                "without growth")
    # idle: only a writer without session.lock, seen growing, is ever idle
    gone = f"no growth for {quiet} s" if quiet is not None else "no growth"
    left = f" (in {max(0, int(crash_after - quiet))} s)" if quiet is not None else ""
    return (f"{gone}; no session.lock to ask; the open turn is closed after {crash_after:g} s without "
            f"growth{left}")


def trace_lines(tr: dict) -> list[tuple[str, list]]:
    """The inspector's "why": [(sentence, [seq links])] from a trace_event answer."""
    out: list = []
    st = tr.get("surface")
    chain = tr.get("replacementChain") or []
    if st == "shadowed":
        out.append((f"Not in the model's view since seq {chain[0]}.", []))
        out.append(("Replacement chain:", chain))
    elif st == "current":
        out.append(("In the model's view now.", []))
    else:
        out.append(("Log only: not part of any request as a message.", []))
    if tr.get("replacedEventSeqs"):
        out.append(("Replaces:", list(tr["replacedEventSeqs"])))
    comp = tr.get("compaction")
    if comp:
        seqs = [s for s in (comp.get("startSeq"), comp.get("summarySeq"), comp.get("replacementSeq"),
                            comp.get("endSeq")) if isinstance(s, int)]
        out.append(("Compaction bracket (start, summary, replacement, end):", seqs))
    req = tr.get("requests") or {}
    n = req.get("count", 0)
    b = req.get("boundaries") or []
    if n:
        more = " (first ones)" if req.get("capped") else ""
        out.append((f"Part of {n} request{'s' if n != 1 else ''} (of {req.get('dispatches', 0)} dispatches){more}:", b))
    else:
        out.append(("Sent in no request as a message.", []))
    if tr.get("derivedEventSeqs"):
        out.append(("Cited by:", list(tr["derivedEventSeqs"])[:50]))
    return out


def _trace_job(job, path: str, session_id: Optional[str], seq: int, build: bool = True) -> Optional[dict]:
    # from the saved seq index, checkpoints' bookkeeping and surface index (issue 36: nothing of the whole
    # log held); cancelled (a newer row selected, the session closed) between segments and while a child
    # builds them.  ``build`` False: None when not saved yet (the window's pass will: no second pass)
    from ..store.trace_points import window_trace
    return window_trace(path, session_id, seq, cancelled=job, check=job.check, build=build)


def _tails_job(job, path: str, session_id: Optional[str], limit: int) -> list:
    from ..log.fold.tails import align_tails
    from ..store.faces import open_reader
    r = open_reader(path, session_id)
    try:
        page = r.tail_page(limit)
        job.check()
        return align_tails(page)
    finally:
        r.close()


def _side_text(it: Any) -> str:
    if it is None:
        return ""
    t = getattr(it, "type", None)
    if t is not None:
        d = it.data if isinstance(it.data, dict) else {}
        extra = ""
        if t == "turn/end":
            r = d.get("reason")
            extra = f" ({r.get('kind') if isinstance(r, dict) else r})"
        elif t == "assistant/chunk":
            c = d.get("chunk")
            extra = f" ({c.get('type')})" if isinstance(c, dict) else ""
        elif t in ("tool/call", "tool/result") and d.get("name"):
            extra = f" ({d.get('name')})"
        return f"{t}{extra}"
    return f"{getattr(it, 'kind', 'bad')} row: {getattr(it, 'reason', '')}"


GUTTER = {"synthesized": "＋ synth", "torn": "✂ torn", "malformed": "✗ bad", "bad": "✗ bad", "dropped": "− drop"}


def _lineage_job(job, path: str) -> dict:
    """Ancestors and descendants of a session over its whole store, with display titles."""
    from ..store.lineage import display_title, lineage
    lin = lineage(path)
    nodes = [lin["target"], *lin.get("ancestors", [])]

    def walk(ns):
        for n in ns:
            nodes.append(n)
            walk(n.get("children", []))
    walk(lin.get("descendants", []))
    titles = {}
    for n in nodes:
        job.check()
        try:
            titles[n["path"]] = display_title(n["path"])
        except Exception:
            titles[n["path"]] = None
    lin["titles"] = titles
    lin["seeds"] = {n["path"]: _seed_cell(job, n) for n in nodes}
    return lin


def _seed_cell(job, n: dict) -> str:
    """The seed length column: the header's ``seedLength`` (v0/v1); for v2+ (no such key) the seq of
    the child's ``session/end-seed`` marker, read from the log's head; "none" for an unseeded child."""
    sl = n.get("seedLength")
    if isinstance(sl, int):
        return f"{sl:,}"
    if not n.get("parentSession"):
        return ""
    from ..store.faces import open_reader
    try:
        r = open_reader(n["path"], None)
    except Exception:
        return "?"
    try:
        if r.fatal or r.header is None:
            return "?"
        if not r.header.to_dict().get("isSeeded"):
            return f"none ({n.get('origin')})" if n.get("origin") else "none"
        for k, ev in enumerate(r.iter_events(logical=False)):
            if not k & 1023:
                job.check()
            if ev.type == "session/end-seed":
                return f"{ev.seq:,}"
        return "?"
    except Exception as e:
        if type(e).__name__ == "Cancelled":
            raise
        return "?"
    finally:
        r.close()


# --------------------------------------------------------------------------- dialogs

class LineageDialog(QDialog):
    """The session's lineage: ancestors (outward), the session, its descendants at any depth.
    Double-click a session to open it."""

    def __init__(self, win, path: str):
        super().__init__(win)
        self.win = win
        self.lineage: Optional[dict] = None
        self.setWindowTitle("Session lineage")
        self.resize(820, 420)
        lay = QVBoxLayout(self)
        self.status = QLabel("Reading the store's headers…")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        lay.addWidget(self.status)
        self.tree = QTreeWidget()
        self.tree.setObjectName("lineageTree")
        self.tree.setHeaderLabels(["Session", "Title", "Seed length", "Folder"])
        self.tree.itemDoubleClicked.connect(self._open)
        lay.addWidget(self.tree, 1)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)
        win.jobs.submit(_lineage_job, path, name="lineage", group=f"lineage-{id(self)}", on_done=self.set_lineage,
                        on_error=lambda m: self.status.setText(f"No lineage: {m}"))

    def _item(self, parent, n: dict, titles: dict, mark: str = "") -> QTreeWidgetItem:
        import os
        sl = n.get("seedLength")
        seed = (self.lineage or {}).get("seeds", {}).get(n.get("path"))
        path = str(n.get("path") or "")
        it = QTreeWidgetItem([clean_line(mark + str(n.get("id"))), clean_line(titles.get(n.get("path")) or ""),
                              seed if seed is not None else ("" if sl is None else str(sl)),
                              os.path.basename(os.path.dirname(os.path.dirname(path)))])
        it.setData(0, Qt.ItemDataRole.UserRole, n.get("path"))
        for c in range(4):
            it.setToolTip(c, path)                # the whole file path, whatever the column shows
        if parent is None:
            self.tree.addTopLevelItem(it)
        else:
            parent.addChild(it)
        return it

    def set_lineage(self, lin: dict) -> None:
        self.lineage = lin
        titles = lin.get("titles", {})
        parent = None
        for a in reversed(lin.get("ancestors", [])):            # the root first
            parent = self._item(parent, a, titles)
        me = self._item(parent, lin["target"], titles, "▶ ")

        def walk(item, ns):
            for n in ns:
                walk(self._item(item, n, titles), n.get("children", []))
        walk(me, lin.get("descendants", []))
        self.tree.expandAll()
        self._fit_columns()
        depth = len(lin.get("ancestors", []))
        self.status.setText(f"{depth} ancestor{'s' if depth != 1 else ''} · "
                            f"{self.count(lin.get('descendants', []))} descendant(s), any depth"
                            + ("" if lin.get("complete", True) else " · some ancestors are not in this store"))

    def _fit_columns(self) -> None:
        """Every column as wide as its content; the dialog widened to show them all (up to the
        screen), the title column eliding first when the screen is too narrow."""
        t = self.tree
        for c in range(4):
            t.resizeColumnToContents(c)
        need = sum(t.columnWidth(c) for c in range(4)) + t.verticalScrollBar().sizeHint().width() + 8
        spare = need - t.viewport().width()
        if spare > 0:
            screen = self.screen().availableGeometry().width() if self.screen() is not None else need + self.width()
            self.resize(min(self.width() + spare, int(screen * 0.95)), self.height())
        over = need - t.viewport().width() - max(0, self.width() - t.width())
        if over > 0:                               # still too narrow: the title gives way (elided, tooltip)
            t.setColumnWidth(1, max(120, t.columnWidth(1) - over))

    @staticmethod
    def count(ns: list) -> int:
        return sum(1 + LineageDialog.count(n.get("children", [])) for n in ns)

    def _open(self, item, _col):
        path = item.data(0, Qt.ItemDataRole.UserRole)
        if path:
            from ..store.lineage import store_root
            self.win.open_store(store_root(path), remember=False, select_path=path)


class TailsDialog(QDialog):
    """Logical vs physical tails, two aligned columns keyed by seq, marks in the gutters."""

    def __init__(self, jobs, path: str, session_id: Optional[str], title: str = "", limit: int = 200, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Logical vs physical tails — " + (title or "session"))
        self.resize(980, 620)
        self.rows: list = []
        lay = QVBoxLayout(self)
        head = QLabel(f"Left: {TRUTHS['physical'][0]} — {TRUTHS['physical'][1]}.\n"
                      f"Right: {TRUTHS['logical'][0]} — {TRUTHS['logical'][1]}.\n"
                      "One line per seq; the gutters mark synthesized (not on disk), torn, unreadable "
                      "and dropped (a repair truncates it) rows.")
        head.setTextFormat(Qt.TextFormat.PlainText)
        head.setWordWrap(True)
        lay.addWidget(head)
        self.status = QLabel("Reading the tail…")
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        lay.addWidget(self.status)
        self.table = QTableWidget(0, 5)
        self.table.setObjectName("tailsTable")
        self.table.setHorizontalHeaderLabels(["", "Everything on disk", "seq", "Logical history", ""])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        h = self.table.horizontalHeader()
        for c, mode in enumerate((QHeaderView.ResizeMode.Fixed, QHeaderView.ResizeMode.Stretch,
                                  QHeaderView.ResizeMode.Fixed, QHeaderView.ResizeMode.Stretch,
                                  QHeaderView.ResizeMode.Fixed)):
            h.setSectionResizeMode(c, mode)
        fm = self.fontMetrics()
        for c, sample in ((0, "✂ torn  "), (2, " 0000000 "), (4, "＋ synth  ")):
            self.table.setColumnWidth(c, fm.horizontalAdvance(sample) + 12)
        lay.addWidget(self.table, 1)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)
        self.job = jobs.submit(_tails_job, path, session_id, limit, name="tails", group=f"tails-{id(self)}",
                               on_done=self.set_rows, on_error=lambda m: self.status.setText(f"Cannot read: {m}"))

    def set_rows(self, rows: list) -> None:
        self.rows = rows
        t = self.table
        t.setRowCount(len(rows))
        marked = 0
        for i, r in enumerate(rows):
            pm, lm = r.marks.get("physical"), r.marks.get("logical")
            cells = [GUTTER.get(pm, pm or ""), _side_text(r.physical), "" if r.seq is None else str(r.seq),
                     _side_text(r.logical), GUTTER.get(lm, lm or "")]
            for c, text in enumerate(cells):
                it = QTableWidgetItem(clean_line(text))             # plain text items, controls as pictures
                if (c in (0, 1) and pm) or (c in (3, 4) and lm):
                    it.setBackground(QColor("#fde2c4") if (lm == "synthesized" and c >= 3) else QColor("#f8d0d0"))
                    it.setForeground(QColor("#222222"))
                t.setItem(i, c, it)
            marked += bool(pm or lm)
        self.status.setText(f"{len(rows)} rows of the tail page · {marked} marked")
        if rows:
            t.scrollToBottom()


class LegendDialog(QDialog):
    """Help › What each view shows."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWindowTitle("What each view shows")
        self.resize(760, 440)
        lay = QVBoxLayout(self)
        intro = QLabel("A session log answers several questions; every view says which one it answers.")
        intro.setTextFormat(Qt.TextFormat.PlainText)
        lay.addWidget(intro)
        items = legend()
        t = QTableWidget(len(items), 2)
        t.setObjectName("legendTable")
        t.setHorizontalHeaderLabels(["View", "What it shows"])
        t.verticalHeader().hide()
        t.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        t.setWordWrap(True)
        for i, (name, what) in enumerate(items):
            t.setItem(i, 0, QTableWidgetItem(name))
            t.setItem(i, 1, QTableWidgetItem(what))
        t.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        t.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        t.resizeRowsToContents()
        lay.addWidget(t, 1)
        self.table = t
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        bb.rejected.connect(self.reject)
        lay.addWidget(bb)


# --------------------------------------------------------------------------- the controller

_REQUEST_CHIP_IDLE = truth_label("request").replace("seq N", "the selected dispatch")


class TruthActions(QObject):
    _why_waiting: Optional[int] = None      # a row whose trace waits for the whole-log pass
    trace_result: Optional[dict] = None     # the trace of the row shown in the "why"

    def __init__(self, win):
        super().__init__(win)
        self.win = win
        self._why_seq: Optional[int] = None
        self._why_expanded: set = set()         # "all ›" clicked in the why (for the row shown)
        self.dialogs: dict = {}             # kind -> the open dialog of that kind (one at a time)
        # the chip above the history
        self.chip = QLabel("")
        self.chip.setObjectName("truthChip")
        self.chip.setTextFormat(Qt.TextFormat.PlainText)
        self.chip.setWordWrap(True)
        self.chip.setContentsMargins(8, 3, 8, 3)
        self.chip.setStyleSheet("QLabel#truthChip { font-size: 90%; border-bottom: 1px solid palette(mid); }")
        win.history_column.insertWidget(0, self.chip)
        self.chip.hide()
        # the chip on the Request tab
        self.request_chip = QLabel(_REQUEST_CHIP_IDLE)
        self.request_chip.setObjectName("requestTruthChip")
        self.request_chip.setTextFormat(Qt.TextFormat.PlainText)
        self.request_chip.setStyleSheet("QLabel#requestTruthChip { font-weight: bold; }")
        self.request_chip.setWordWrap(True)      # one long line would widen the inspector for good (its minimum)
        rl = win.request_view.layout()
        rl.insertWidget(0, self.request_chip)
        win.request_view.computed.connect(self._on_request)
        win.request_view.cleared.connect(lambda: self.request_chip.setText(_REQUEST_CHIP_IDLE))
        win.request_view.failed.connect(lambda *_: self.request_chip.setText(_REQUEST_CHIP_IDLE))
        # the "why" in the inspector (links are integers only)
        self.why = QLabel("")
        self.why.setObjectName("surfaceWhy")
        self.why.setTextFormat(Qt.TextFormat.RichText)
        self.why.setWordWrap(True)
        self.why.setTextInteractionFlags(Qt.TextInteractionFlag.LinksAccessibleByMouse |
                                         Qt.TextInteractionFlag.LinksAccessibleByKeyboard)
        self.why.linkActivated.connect(self._on_link)
        self.why_status = QLabel("")
        self.why_status.setObjectName("surfaceStatus")
        self.why_status.setTextFormat(Qt.TextFormat.PlainText)
        self.why_status.setWordWrap(True)
        il = win.inspector.layout()
        il.insertWidget(2, self.why_status)
        il.insertWidget(3, self.why)
        self.why.hide()
        self.why_status.hide()
        self._why_wait = QTimer(self, interval=250)
        self._why_wait.timeout.connect(self._after_pass)
        # live status in the status bar
        from .status import StatusLabel
        self.live_label = StatusLabel("")       # elided: a long live line never widens the window
        self.live_label.setObjectName("liveStatus")
        self.live_label.setMaximumWidth(520)     # the counters and the face keep their words beside it
        self.live_label.setTextFormat(Qt.TextFormat.PlainText)
        self.live_label.setToolTip("While a writer is live: " + WRITE_BEHIND_NOTE)
        win.statusBar().addPermanentWidget(self.live_label)
        self._tick = QTimer(self)                 # "last append (N s ago)" counts on between batches
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._refresh_live)
        # menus
        self.act_tails = self._action("Logical vs physical tails (side by side)…", self.show_tails)
        self.act_tails.setEnabled(False)
        self.act_lineage = self._action("Session lineage…", self.show_lineage)
        self.act_lineage.setEnabled(False)
        vm = getattr(win.history_actions, "view_menu", None)
        if vm is not None:
            vm.addSeparator()
            vm.addAction(self.act_tails)
            vm.addAction(self.act_lineage)
        self.act_legend = self._action("What each view shows…", self.show_legend)
        hm = getattr(win, "help_menu", None)
        if hm is not None:
            first = hm.actions()[0] if hm.actions() else None
            hm.insertAction(first, self.act_legend)
        # signals
        h = win.history
        h.statsChanged.connect(self.update)
        h.faceChanged.connect(self.update)
        h.faceChanged.connect(win.update_banner)        # the live face comes and goes with the writer
        win.view.selectionModel().currentChanged.connect(self._on_current)
        h.modelReset.connect(self._on_current)
        win.view.viewport().installEventFilter(self)
        self.update()

    def _action(self, text: str, slot) -> QAction:
        act = QAction(text, self.win)
        act.triggered.connect(slot)
        return act

    # ------------------------------------------------------------------ chips, status
    def update(self, *_):
        win = self.win
        has = win.history.path is not None
        self.act_tails.setEnabled(has)
        self.act_lineage.setEnabled(has and win.history.session_id is None)
        if not has:
            self.chip.hide()
            self.live_label.setText("")
            self._tick.stop()
            return
        s = win.history.stats()
        self.chip.setText(chip_text(s))
        self.chip.show()
        self._refresh_live(s)

    def _refresh_live(self, s: Optional[dict] = None) -> None:
        """The live line, again each second while it is shown (its "N s ago" ticks)."""
        win = self.win
        if s is None:
            s = win.history.stats() if win.history.path is not None else {}
        # only once the writer is shown live (its lock, or growth seen): a recent file time alone is no writer
        feed = win.history.feed
        text = live_status_text(s.get("live"), feed.last_batch, facts=feed.facts) if s.get("liveFace") else ""
        self.live_label.setText(text)
        if text and not self._tick.isActive():
            self._tick.start()
        elif not text:
            self._tick.stop()

    def _on_request(self, seq: int):
        self.request_chip.setText(f"{truth_label('request', seq)} — {TRUTHS['request'][1]}")

    # ------------------------------------------------------------------ the why
    def _on_current(self, *_):
        row = self.win.view.current_row()
        st = getattr(row, "surface", None) if row is not None else None
        if row is None or row.event is None or row.kind == RowKind.COMPACTION or not st:
            self.why_status.hide()
            self.why.hide()
            self._why_seq = None
            return
        self.why_status.setText("Surface: " + describe_surface(st))
        self.why_status.show()
        if st.get("surface") == "log-only" and not st.get("why"):
            self.why.hide()
            self._why_seq = None
            return
        seq = row.seq
        if seq == self._why_seq:
            return
        self._why_seq = seq
        self.why.setText("<i>tracing…</i>")
        self.why.show()
        self._submit_trace(seq, build=not self._pass_running())

    def _pass_running(self) -> bool:
        """The whole-log pass of the open session (outline, checkpoints, surface index) still runs."""
        job = getattr(getattr(self.win, "go_actions", None), "outline_job", None)
        return job is not None and not job.finished and not job.cancelled

    def _submit_trace(self, seq: int, build: bool) -> None:
        h = self.win.history
        self.win.jobs.submit(_trace_job, h.path, h.session_id, seq, build, name="trace-why", group=f"why-{id(self)}",
                             on_done=lambda tr, s=seq: self._show_trace(s, tr),
                             on_error=lambda msg, s=seq: self._trace_failed(s, msg))

    def _after_pass(self) -> None:
        """(every 250 ms while a trace waits) Once the pass has ended, the waiting row is traced."""
        if self._pass_running():
            return
        self._why_wait.stop()
        seq, self._why_waiting = self._why_waiting, None
        if seq is not None and seq == self._why_seq:
            self._submit_trace(seq, build=True)

    def _show_trace(self, seq: int, tr: Optional[dict]):
        if seq != self._why_seq:
            return
        if tr is None:                     # (the pass has not saved what the trace reads yet: after it)
            self._why_waiting = seq
            self.why.setText("<i>tracing… (after the whole-log pass)</i>")
            self._why_wait.start()
            return
        self.trace_result = tr
        self._why_expanded = set()
        self._render_why(seq)

    def _render_why(self, seq: int) -> None:
        """The trace's sentences with their seqs as links: runs as ranges, long lists summarised
        with "all ›" (``more:k``) showing the whole list."""
        from .inspector import seq_links_html
        parts = []
        for k, (sentence, seqs) in enumerate(trace_lines(self.trace_result or {})):
            ints = [int(s) for s in seqs if isinstance(s, int)]
            links = seq_links_html(ints, f"w{k}" in self._why_expanded, f"w{k}") if ints else ""
            esc = sentence.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            parts.append(f"{esc} {links}".strip())
        self.why.setText(f"<b>Why</b> (trace of seq {int(seq)}):<br>" + "<br>".join(parts))

    def _trace_failed(self, seq: int, msg: str):
        if seq == self._why_seq:
            self.why.setText("<i>no trace for this row</i>")

    def _on_link(self, href: str):
        if href.startswith("more:") and self._why_seq is not None:
            self._why_expanded.add(href[5:])
            self._render_why(self._why_seq)
            return
        if href.startswith("seq:"):
            try:
                self.win.history_actions.goto_seq(int(href[4:]))
            except ValueError:
                pass

    # ------------------------------------------------------------------ clicks in the history
    def link_at(self, pos) -> Optional[str]:
        view = self.win.view
        ix = view.indexAt(pos)
        if not ix.isValid():
            return None
        row = view.hmodel().row_at(ix.row()) if hasattr(view, "hmodel") else None
        if row is None:
            return None
        if row.kind == RowKind.COMPACTION:
            return f"compaction:{ix.row()}"
        from .history import delegate as dl
        d = view.delegate
        pad, margin = d.row_pads(row)
        r = QRectF(view.visualRect(ix)).adjusted(dl.MARGIN_X, margin, -dl.MARGIN_X, -margin)
        p = QPointF(pos) - QPointF(r.left() + dl.STRIPE + dl.PAD_X, r.top() + pad)
        doc = d.document(row, ix)
        href = doc.documentLayout().anchorAt(p)
        return href or None

    def eventFilter(self, obj, e):
        if e.type() == QEvent.Type.MouseButtonRelease and e.button() == Qt.MouseButton.LeftButton:
            href = self.link_at(e.position().toPoint())
            if href and self.activate(href):
                return False
        return False

    def activate(self, href: str) -> bool:
        h = self.win.history
        if href.startswith("seq:"):
            self.win.history_actions.goto_seq(int(href[4:]))
            return True
        if href.startswith("compaction:"):
            row = h.row_at(int(href.split(":", 1)[1]))
            if row is not None and row.group:
                h.toggle_compaction(row.group["compactionId"])
                return True
        return False

    # ------------------------------------------------------------------ dialogs
    def show_tails(self) -> Optional[TailsDialog]:
        h = self.win.history
        if h.path is None:
            return None
        title = getattr(self.win.session, "title", "") or ""
        return self._show("tails", TailsDialog(self.win.jobs, h.path, h.session_id, str(title), parent=self.win))

    def show_lineage(self) -> Optional[LineageDialog]:
        h = self.win.history
        if h.path is None or h.session_id is not None:
            return None
        return self._show("lineage", LineageDialog(self.win, h.path))

    def show_legend(self) -> LegendDialog:
        return self._show("legend", LegendDialog(self.win))

    def _show(self, kind: str, d: Any) -> Any:
        """Show a dialog, closing the one of the same kind shown before."""
        old = self.dialogs.get(kind)
        if old is not None:
            old.close()
        self.dialogs[kind] = d
        d.show()
        return d
