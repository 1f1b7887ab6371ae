"""Replay in the window (issue 30): a time scrubber over the open session.

:class:`ReplayActions` (a controller of the main window, after the pattern of the others) adds:

* the **scrubber bar** above the history (View › Time scrubber; it also appears with the first
  Alt+Left): a slider over the seqs with a tick at each turn start;
* keys: **Alt+Left/Right** the previous/next step (an assistant message or turn boundary),
  **Alt+Shift+Left/Right** the previous/next turn start, **Alt+End** back to now;
* while scrubbed to N: the rows after N hidden; each loaded row's surface status as it stood at N
  (a row shadowed later is current again); the truth chip "As of seq N · turn T · time"; the
  Request tab showing the exact request at the last dispatch boundary at or before N in the open
  step; the inspector summary led by the title, todos and modes as of N;
* a **Model view** tab: the messages the model would see at N, each linked to its row;
* a **What changed** tab: the diff between a position A (by default the previous position) and N.

Answers come from :class:`app.ui.replay_model.ReplayModel` (workers, coalesced, stale answers
dropped): nothing here reads a file.
"""
from __future__ import annotations

from typing import Any, Optional

from PySide6.QtCore import QCoreApplication, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence

from .history.row_kind import RowKind
from .history.rows import fmt_datetime
from .replay_model import ReplayModel
from .replay_panes import ModelViewPane, ReplayBar, WhatChangedPane, nearest

KEYS = {"step_back": "Alt+Left", "step_fwd": "Alt+Right", "turn_back": "Alt+Shift+Left",
        "turn_fwd": "Alt+Shift+Right", "now": "Alt+End"}


def chip_text(st: dict[str, Any]) -> str:
    when = fmt_datetime(st.get("time")) if isinstance(st.get("time"), (int, float)) else ""
    turn = f"turn {st['turn']}" if st.get("turn") is not None else "before the first turn"
    return (f"As of seq {st['seq']:,} · {turn}" + (f" · {when}" if when else "")
            + " — rows after it are hidden; each row's status as it stood then (Alt+End: now)")


def summary_lines(st: dict[str, Any]) -> list[str]:
    """The inspector summary's lead while scrubbed (plain text)."""
    lines = [f"As of seq {st['seq']:,}" + (f" (turn {st['turn']}" + (f", step {st['step']}" if st.get('step') is not None
                                                                     else "") + ")" if st.get("turn") is not None else ""),
             f"title: {st['title'] if st.get('title') is not None else '(none yet)'}"]
    modes = st.get("modes") or {}
    lines.append("modes: " + (", ".join(f"{k} {v}" for k, v in modes.items()) if modes else "(none logged yet)"))
    todos = st.get("todos") or []
    lines.append(f"todos: {len(todos)}" if todos else "todos: (none yet)")
    for t in todos[:12]:
        if isinstance(t, dict):
            lines.append(f"  [{t.get('status')}] {t.get('content')}")
    h = st.get("header") or {}
    lines.append(f"model: {h.get('provider')}/{h.get('model')} · {len(h.get('tools') or [])} tools")
    lines.append(f"messages in the model's view: {len(st.get('messages') or [])}")
    pend = st.get("pendingToolCalls") or []
    lines.append(f"pending tool calls: {len(pend)}" + (f" ({', '.join(map(str, pend[:5]))})" if pend else ""))
    kids = st.get("children") or []
    if kids:
        lines.append(f"children started: {len(kids)}")
    return lines + ["", "— the whole session (now) —", ""]


def not_yet(row: Any, n: int) -> bool:
    """A row not written yet at seq ``n``: its event comes after it (an assistant row: its message, not
    its first chunk), or a compaction group whose bracket closes after it."""
    s = row.seq if row.seq is not None else row.first_seq
    if s is not None and s > n:
        return True
    return row.kind == RowKind.COMPACTION and isinstance(row.last_seq, int) and row.last_seq > n


class ReplayActions(QObject):
    def __init__(self, win) -> None:
        super().__init__(win)
        self.win = win
        self.model = ReplayModel(win.jobs, self)
        self.position: Optional[int] = None          # None: now (not scrubbed)
        self.pinned_from: Optional[int] = None        # What changed: A set by hand (else the previous position)
        self._prev: Optional[int] = None
        self._pending: Optional[tuple[str, int]] = None
        self._pending_seq: Optional[int] = None
        self._stale = False                           # the log grew (live): the next scrub reloads the context
        self._swapped: list[tuple[Any, Any, Any]] = []    # (row, its status, the as-of status shown)
        self._hidden_from: Optional[int] = None
        self.answer: Optional[dict[str, Any]] = None
        self._base_summary = ""                       # the inspector summary of the whole session
        self._shown_summary: Optional[str] = None     # what this controller last put there
        self.bar = ReplayBar()
        self.bar.hide()
        win.history_column.insertWidget(1, self.bar)
        self.model_pane = ModelViewPane()
        self.changed_pane = WhatChangedPane()
        win.tabs.addTab(self.model_pane, "Model view")
        win.tabs.addTab(self.changed_pane, "What changed")
        # four tabs: the bar scrolls rather than widening the inspector (the history keeps its width)
        win.tabs.setUsesScrollButtons(True)
        win.tabs.setElideMode(Qt.TextElideMode.ElideNone)       # (whole names; arrows when narrow)
        self._build_actions()
        m = self.model
        m.ready.connect(self._on_ready)
        m.answered.connect(self._on_answer)
        m.failed.connect(lambda msg: win.statusBar().showMessage(f"Replay: {msg}", 8000))
        self.bar.moved.connect(self.scrub_to)
        self.bar.now.connect(self.back_to_now)
        self.model_pane.goto.connect(win.goto_seq)
        self.changed_pane.changed_from.connect(self._on_from)
        win.sessionLoaded.connect(self._on_session)
        h = win.history
        h.modelReset.connect(self._reapply)
        h.rowsInserted.connect(self._reapply)
        h.changesApplied.connect(self._reapply)
        h.liveAppended.connect(self._on_grown)
        h.statsChanged.connect(self._chip)
        h.faceChanged.connect(self._chip)
        win.tabs.currentChanged.connect(self._on_tab)
        win.history_actions.controller.rowSelected.connect(self._request)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.model.reset)          # (the replay child ends with the app)
        sr = getattr(win.frame_actions, "summary_refresh", None)
        if sr is not None:
            sr.refreshed.connect(self._summary)

    def _build_actions(self) -> None:
        win = self.win
        self.act_bar = QAction("Time scrubber (replay)", win)
        self.act_bar.setCheckable(True)
        self.act_bar.setShortcut(QKeySequence("Ctrl+Alt+T"))
        self.act_bar.toggled.connect(self.set_bar_visible)
        self.acts: dict[str, QAction] = {}
        texts = {"step_back": "Replay: previous step", "step_fwd": "Replay: next step",
                 "turn_back": "Replay: previous turn", "turn_fwd": "Replay: next turn", "now": "Replay: back to now"}
        slots = {"step_back": lambda: self.step("step", -1), "step_fwd": lambda: self.step("step", 1),
                 "turn_back": lambda: self.step("turn", -1), "turn_fwd": lambda: self.step("turn", 1),
                 "now": self.back_to_now}
        gm = win.menu("Go")
        gm.addSeparator()
        gm.addAction(self.act_bar)
        for k, text in texts.items():
            a = QAction(text, win)
            a.setShortcut(QKeySequence(KEYS[k]))
            a.triggered.connect(slots[k])
            win.addAction(a)
            gm.addAction(a)
            self.acts[k] = a
        win.addAction(self.act_bar)

    # ------------------------------------------------------------------ session
    def _on_session(self) -> None:
        h = self.win.history
        key = (h.path, h.session_id) if h.path else None
        if key != self.model.key:
            self._leave()
            if self.bar.isVisible():
                self.model.open(h.path, h.session_id)
            else:
                self.model.reset()

    def _on_grown(self, *_) -> None:
        self._stale = True

    def _ensure_model(self) -> bool:
        """The session's replay context is loaded (else it is being loaded: False)."""
        h = self.win.history
        if h.path is None:
            return False
        if self._stale and self.position is None:      # grown since: the range and caches are read again
            self._stale = False
            self.model.reset()
        if self.model.key != (h.path, h.session_id):
            self.model.open(h.path, h.session_id)
        return self.model.ctx is not None

    def _on_ready(self) -> None:
        ctx = self.model.ctx
        assert ctx is not None
        self.bar.set_range(ctx.last, ctx.turns)
        self.changed_pane.set_range(ctx.last)
        self.bar.set_position(self.position if self.position is not None else ctx.last)
        if self._pending is not None:
            kind, d = self._pending
            self._pending = None
            self.step(kind, d)
        elif self._pending_seq is not None:
            seq, self._pending_seq = self._pending_seq, None
            self.scrub_to(seq)

    def set_bar_visible(self, on: bool) -> None:
        if self.act_bar.isChecked() != on:
            self.act_bar.setChecked(on)
            return
        self.bar.setVisible(on)
        if on:
            self._ensure_model()
        else:
            self.back_to_now()

    # ------------------------------------------------------------------ moving
    def step(self, kind: str, direction: int) -> None:
        """Alt+Left/Right (``kind`` "step"), Alt+Shift+Left/Right ("turn")."""
        if not self.bar.isVisible():
            self.set_bar_visible(True)
        if not self._ensure_model():
            self._pending = (kind, direction)
            return
        ctx = self.model.ctx
        assert ctx is not None
        cur = self.position if self.position is not None else ctx.last
        marks = ctx.turns if kind == "turn" else (ctx.steps or list(range(ctx.last + 1)))
        to = nearest(marks, cur, direction)
        if to is None:
            to = 0 if direction < 0 else ctx.last
        self.scrub_to(to)

    def scrub_to(self, seq: int) -> None:
        if not self._ensure_model():
            self._pending_seq = int(seq)               # (asked again once the context is loaded)
            return
        ctx = self.model.ctx
        assert ctx is not None
        seq = max(0, min(int(seq), ctx.last))
        self._prev = self.position if self.position is not None else ctx.last
        self.position = seq
        self.bar.set_position(seq)
        if self.pinned_from is None:
            self.changed_pane.set_from(self._prev)
        # (the rows, the chip and the panes follow when the answer comes: a drag relays out nothing)
        self.model.request(seq, self._from())

    def _from(self) -> Optional[int]:
        """The What changed tab's position A, while that tab is shown (else no diff is computed)."""
        if self.win.tabs.currentWidget() is not self.changed_pane:
            return None
        return self.pinned_from if self.pinned_from is not None else self._prev

    def _on_tab(self, *_) -> None:
        if self.position is not None and self.win.tabs.currentWidget() is self.changed_pane:
            self.model.request(self.position, self._from())
        self._request()

    def _on_from(self, seq: int) -> None:
        self.pinned_from = seq
        if self.position is not None:
            self.model.request(self.position, seq)

    def back_to_now(self) -> None:
        """Alt+End: the whole log again (the end, or the live tail)."""
        ctx = self.model.ctx
        if ctx is not None:
            self.bar.set_position(ctx.last)
        self._leave()

    def _leave(self) -> None:
        was = self.position is not None
        self.position = self.answer = None
        self.pinned_from = self._prev = None
        self._apply_rows()
        self.model_pane.clear_state()
        self._shown_summary = None
        if was:
            self.win.truth_actions.update()
            self.win.frame_actions.update_summary()
            self.win.update_request()

    # ------------------------------------------------------------------ answers
    def _on_answer(self, st: dict[str, Any]) -> None:
        if self.position is None or st["seq"] != self.position:
            return
        self.answer = st
        self._apply_rows()
        self._chip()
        self.model_pane.show_state(st)
        if st.get("diffFrom") is not None or "diff" in st:
            self.changed_pane.show_diff(st)
        self._summary()
        self._request()

    def _chip(self, *_) -> None:
        if self.position is None:
            return
        chip = self.win.truth_actions.chip
        chip.setText(chip_text(self.answer) if self.answer is not None else f"As of seq {self.position:,} — computing…")
        chip.show()

    def _summary(self) -> None:
        st = self.answer
        insp = self.win.inspector
        if st is None or self.position is None:
            return
        if insp.summary != self._shown_summary:           # (the summary was refreshed meanwhile)
            self._base_summary = insp.summary
        text = "\n".join(summary_lines(st)) + self._base_summary
        self._shown_summary = text
        insp.set_summary(text)

    def _request(self, *_) -> None:
        win = self.win
        st = self.answer
        if st is None or self.position is None or win.tabs.currentWidget() is not win.request_view:
            return
        b = st.get("requestBoundary")
        if b is None:
            win.request_view.clear(f"As of seq {st['seq']:,}: no model dispatch in an open step (the request shown "
                                   "while scrubbed is the one sent at the last dispatch boundary at or before the "
                                   "position, in its open step).")
            return
        win.request_view.compute(win.history.path, win.history.session_id, b)

    # ------------------------------------------------------------------ rows
    def _reapply(self, *_) -> None:
        if self.position is not None or self._swapped or self._hidden_from is not None:
            self._apply_rows()

    def _apply_rows(self) -> None:
        """Hide the rows after the position answered, show each loaded row's status as of it (undone at now)."""
        from ..log.fold.asof import trim_status       # (first used here: not on the way to the first paint)
        h, view = self.win.history, self.win.view
        n = self.answer["seq"] if self.position is not None and self.answer is not None else None   # (as shown)
        for row, orig, mine in self._swapped:          # back to the whole log's statuses first
            if row.surface is mine:
                row.surface = orig
                row.touch()
        changed = {id(r) for r, _o, _m in self._swapped}
        self._swapped = []
        for i, row in enumerate(h.rows):
            hide = n is not None and not_yet(row, n)
            if view.isRowHidden(i) != hide:
                view.setRowHidden(i, hide)
            st = row.surface
            if n is not None and not hide and st and st.get("surface") == "shadowed":
                mine = trim_status(st, n)
                if mine != st:
                    row.surface = mine
                    row.touch()
                    self._swapped.append((row, st, mine))
                    changed.add(id(row))
        self._hidden_from = n
        if changed:
            for i, row in enumerate(h.rows):
                if id(row) in changed:
                    h.dataChanged.emit(h.index(i, 0), h.index(i, 0))
            view.scheduleDelayedItemsLayout()
