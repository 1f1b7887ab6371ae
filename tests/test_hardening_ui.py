"""Class 5 (issue 14): log text reaches Qt only as plain text; bidi text is isolated.

A real log made hostile by our own generator (markup, links, local images, RTL override,
control characters in titles, user texts and the cwd) is opened in the window; then the
whole widget tree, every tooltip and the item models are walked."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import Qt as QtGui_Qt  # noqa: F401
from PySide6.QtWidgets import QAbstractItemView, QLabel, QWidget

from app.tools.hostile import HOSTILE_TEXTS, MARK, hostile_session
from conftest import fixture

RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower


@pytest.fixture(autouse=True)
def _config_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "config"))


def _might_be_rich(text: str) -> bool:
    from PySide6.QtGui import Qt as G
    return bool(G.mightBeRichText(text))


def _live_markup(text: str) -> bool:
    """Log markup that Qt would render: the raw tags of our hostile texts, not escaped."""
    return MARK in text and any(t in text for t in ("<b>", "<a href", "<img", "<i>", "<script>")) \
        and _might_be_rich(text)


def _model_strings(view):
    m = view.model()
    if m is None:
        return
    stack = [QModelIndex()]
    seen = 0
    while stack and seen < 5000:
        parent = stack.pop()
        for r in range(m.rowCount(parent)):
            try:
                cols = m.columnCount(parent)
            except TypeError:           # list models keep columnCount private
                cols = 1
            for c in range(max(1, cols)):
                ix = m.index(r, c, parent)
                seen += 1
                for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
                    v = m.data(ix, role)
                    if isinstance(v, str):
                        yield role, v
            stack.append(m.index(r, 0, parent))


def test_hostile_log_text_is_never_rich_text(qtbot, win, tmp_path):
    src = fixture(RETRY).read_text().splitlines()
    d = tmp_path / "store"
    d.mkdir()
    (d / "session.jsonl").write_bytes(hostile_session(src))
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(d))
    m = win.sessions.model
    qtbot.waitUntil(lambda: bool(m.titles), timeout=WAIT)
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):      # reopen: the title is known now
        win.open_session(m.info_at(m.index(0, 0)))
    # select every history row in turn so the inspector shows log text too
    lv = win.view
    hm = lv.model()
    for r in range(0, hm.rowCount(), max(1, hm.rowCount() // 15)):
        lv.setCurrentIndex(hm.index(r, 0))
        qtbot.wait(5)
    problems = []
    widgets = [win] + win.findChildren(QWidget)
    shown_mark = False
    for w in widgets:
        tip = w.toolTip()
        if _live_markup(tip):
            problems.append(f"tooltip of {type(w).__name__} {w.objectName()!r}: {tip[:80]!r}")
        if isinstance(w, QLabel):
            t = w.text()
            shown_mark |= MARK in t
            if w.textFormat() != Qt.TextFormat.PlainText and _live_markup(t):
                problems.append(f"label {w.objectName()!r} renders {t[:80]!r}")
        if isinstance(w, QAbstractItemView):
            for role, v in _model_strings(w):
                shown_mark |= MARK in v
                if role == Qt.ItemDataRole.ToolTipRole and _live_markup(v):
                    problems.append(f"item tooltip in {type(w).__name__}: {v[:80]!r}")
                if any(ch in v for ch in "\x1b\x07\x00\x9b"):
                    problems.append(f"control character shown in {type(w).__name__}: {v[:60]!r}")
    title = win.windowTitle()
    assert MARK in title                                  # the hostile title is shown …
    assert not any(ch in title for ch in "\x1b\x07\x00")
    assert "\u2068" in title and "\u2069" in title        # … isolated from " — Session Lens"
    assert shown_mark, "the walk saw the hostile text (else it proves nothing)"
    assert not problems, "\n".join(problems)
    # the session row: its RTL-override title is isolated from the badge text beside it
    label = m.label(m.info_at(m.index(0, 0)))
    assert "\u202e" in label and label.index("\u2068") < label.index("\u202e") < label.index("\u2069")
    # the session list's tooltip (cwd holds markup and a newline) is escaped
    tip = m.data(m.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert "&lt;b&gt;" in tip and "<b>" not in tip


def test_plaintext_helper_units():
    from app.ui.plaintext import clean, isolate, tooltip
    for t in HOSTILE_TEXTS:
        tip = tooltip(t)
        assert "<b>" not in tip and "<img" not in tip and "<a " not in tip
        assert not any(ord(c) < 32 and c not in "\n\t" for c in clean(t))
        assert not any(0x80 <= ord(c) < 0xA0 for c in clean(t))
    assert isolate("plain ascii") == "plain ascii"
    assert isolate("\u202eabc") == "\u2068\u202eabc\u2069"


def test_window_refuses_special_files_without_blocking(qtbot, win, tmp_path):
    import os
    import time
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    link = tmp_path / "z.jsonl"
    link.symlink_to("/dev/zero")
    for p in (fifo, link):
        t0 = time.monotonic()
        win.open_store(str(p))
        qtbot.waitUntil(lambda: "regular file" in win.statusBar().currentMessage()
                        or "regular file" in win.banner.text()
                        or "regular file" in getattr(getattr(win, "welcome", None), "notice", win.banner).text(),
                        timeout=WAIT)
        assert time.monotonic() - t0 < 10
