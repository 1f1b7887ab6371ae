"""Issue 19, the frame: menus and toolbar, session list, window title, inspector summary,
safe Markdown (no HTML, no resource loads, links only after a confirmation), Copy as
Markdown, fonts, window geometry, and a widget walk over hostile transcripts."""
from __future__ import annotations

import json

import pytest

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFont, QFontDatabase, QFontMetrics, QTextDocument
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import (QApplication, QLabel, QTextBrowser,
                               QTextEdit, QWidget)

from conftest import fixture

RETRY = "examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl"
UNKNOWN = "examples/headless-agent/tests/semantic-checkpoint-snapshots/tool-outcome-unknown/session.expected.jsonl"
FORK_DIR = "examples/acp-agent/tests/snapshots/subagent-fork-in-process"
WAIT = 120000  # a limit on waiting for a condition, not on speed: a loaded 2-core machine runs 4x slower

HOSTILE_MD = """# Plan <b>bold?</b>

Some **strong** and *soft* words, `inline code` and a [safe link](https://example.com/docs).
A [script link](javascript:alert(1)) and a [local file](file:///etc/passwd).

![tracker](https://tracker.example/pixel.png)
![local](file:///etc/hostname)
<img src="file:///etc/hostname"> <script>alert(1)</script> <a href="https://evil.example">html link</a>

- first item
- second with <i>tags</i>
  - nested

1. one
2. two

| tool | calls |
|------|-------|
| read | 3 |
| write | 1 |

```python
print("<b>not bold</b>")
```

> quoted <u>text</u>
"""


def open_and_wait(qtbot, win, path):
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(path))
    qtbot.waitUntil(lambda: not win.history.loading, timeout=WAIT)
    return win.history


def hostile_session(tmp_path, text: str = HOSTILE_MD):
    """The retry fixture with its assistant message text replaced by ``text``."""
    out = []
    for line in fixture(RETRY).read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d.get("type") == "assistant/message":
            for b in d["data"]["message"]["content"]:
                if b.get("type") == "text":
                    b["text"] = text
        if d.get("type") == "user/message":
            for b in d["data"]["content"]:
                if b.get("type") == "text":
                    b["text"] = "<h1>user html</h1> **not markdown in user rows either?** ![x](file:///etc/hostname)"
        out.append(json.dumps(d, ensure_ascii=False))
    p = tmp_path / "hostile" / "session.jsonl"
    p.parent.mkdir(parents=True)
    p.write_text("\n".join(out) + "\n", encoding="utf-8")
    return p


def assistant_row(h):
    return next(r for r in h.rows if r.kind == "assistant")


# --------------------------------------------------------------------------- Markdown

def test_markdown_parse_keeps_html_as_text_and_never_makes_images():
    from app.ui.history.markdown import link_allowed, parse
    blocks = parse(HOSTILE_MD)
    kinds = [b.kind for b in blocks]
    for k in ("heading", "para", "bullet", "table", "code"):
        assert k in kinds
    assert any(b.quote == 1 for b in blocks)                                 # the block quote
    text = " ".join(s.text for b in blocks for s in b.spans)
    assert "<b>bold?</b>" in text and "<script>alert(1)</script>" in text     # literal characters
    assert "[image: tracker]" in text and "[image: local]" in text
    hrefs = [s.href for b in blocks for s in b.spans if s.href]
    assert hrefs == ["https://example.com/docs", "javascript:alert(1)", "file:///etc/passwd"]
    assert [link_allowed(h) for h in hrefs] == [True, False, False]
    table = next(b for b in blocks if b.kind == "table")
    assert table.rows == [["tool", "calls"], ["read", "3"], ["write", "1"]]
    code = next(b for b in blocks if b.kind == "code")
    assert code.lang == "python" and code.lines == ['print("<b>not bold</b>")']


class _Spy(QTextDocument):
    loads: list = []

    def loadResource(self, kind, url):        # noqa: N802
        _Spy.loads.append(url.toString())
        return None


def test_markdown_row_document_loads_nothing_and_holds_no_html(qtbot, win, tmp_path, monkeypatch):
    from app.ui.history import delegate as dg
    monkeypatch.setattr(dg, "QTextDocument", _Spy)          # every row document records resource loads
    _Spy.loads = []
    win.frame_actions.act_markdown.setChecked(True)
    h = open_and_wait(qtbot, win, hostile_session(tmp_path))
    row = assistant_row(h)
    idx = h.index(h.row_index(row), 0)
    win.view.scrollTo(idx)
    win.view.viewport().repaint()
    doc = win.view.delegate.document(row, idx)
    assert isinstance(doc, _Spy)
    plain = doc.toPlainText()
    assert "<script>alert(1)</script>" in plain and "<b>bold?</b>" in plain and '<img src="file:///etc/hostname">' in plain
    assert "[image: tracker]" in plain and "**" not in plain.split("not markdown")[0]
    # headings, emphasis, code and the table were drawn, not left as syntax
    assert "# Plan" not in plain and "| tool" not in plain and "```" not in plain
    assert "tool │ calls" in plain
    # no image object anywhere, links only as anchors with their target as data
    anchors = []
    b = doc.begin()
    while b.isValid():
        it = b.begin()
        while not it.atEnd():
            f = it.fragment().charFormat()
            assert not f.isImageFormat()
            if f.isAnchor():
                anchors.append(f.anchorHref())
            it += 1
        b = b.next()
    assert anchors == ["https://example.com/docs", "javascript:alert(1)", "file:///etc/passwd"]
    assert _Spy.loads == [], "a transcript made the document load a resource"
    control = _Spy()                           # the spy does see loads (a document given HTML would load)
    control.setHtml('<img src="file:///etc/hostname">')
    control.size()
    assert _Spy.loads, "control: an <img> in HTML is loaded"
    _Spy.loads = []
    # raw toggle: the text as written
    win.frame_actions.act_markdown.setChecked(False)
    raw = win.view.delegate.document(row, idx).toPlainText()
    assert "# Plan <b>bold?</b>" in raw and "| tool | calls |" in raw and "![tracker](" in raw
    assert _Spy.loads == []


@pytest.mark.slow
def test_links_open_only_after_confirmation_showing_the_target(qtbot, win, tmp_path):
    fa = win.frame_actions
    asked, opened = [], []
    fa.opener = lambda url: opened.append(url.toString())
    fa.confirm = lambda parent, href: asked.append(href) or False      # the user says no
    win.frame_actions.act_markdown.setChecked(True)
    h = open_and_wait(qtbot, win, hostile_session(tmp_path))
    row = assistant_row(h)
    r = h.row_index(row)
    idx = h.index(r, 0)
    win.view.scrollTo(idx, win.view.ScrollHint.PositionAtTop)
    QApplication.processEvents()
    # find the safe link's place in the painted row and click it
    doc = win.view.delegate.document(row, idx)
    cur = doc.find("safe link")
    assert not cur.isNull()
    rect = doc.documentLayout().blockBoundingRect(cur.block())
    line = cur.block().layout().lineForTextPosition(cur.position() - cur.block().position())
    x = line.cursorToX(cur.position() - cur.block().position() - 2)
    from app.ui.history.delegate import MARGIN_X, PAD_X, STRIPE
    vr = win.view.visualRect(idx)
    pad, margin = win.view.delegate.row_pads(row)
    pos = QPoint(int(vr.left() + MARGIN_X + STRIPE + PAD_X + x[0] if isinstance(x, tuple) else
                     vr.left() + MARGIN_X + STRIPE + PAD_X + x),
                 int(vr.top() + margin + pad + rect.top() + line.y() + line.height() / 2))
    assert win.view.delegate.anchor_at(idx, pos) == "https://example.com/docs"
    qtbot.mouseClick(win.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert asked == ["https://example.com/docs"] and opened == []
    fa.confirm = lambda parent, href: asked.append(href) or True        # now yes
    qtbot.mouseClick(win.view.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    assert opened == ["https://example.com/docs"]
    # a non-web target is refused by the real dialog without opening anything
    from app.ui import frame_actions
    from PySide6.QtWidgets import QMessageBox
    seen = []

    def fake_exec(box):
        seen.append((box.text(), box.textFormat()))
        return QMessageBox.StandardButton.Close
    orig = QMessageBox.exec
    QMessageBox.exec = fake_exec
    try:
        assert frame_actions.confirm_link(win, "javascript:alert(1)") is False
    finally:
        QMessageBox.exec = orig
    assert "javascript:alert(1)" in seen[0][0] and seen[0][1] == Qt.TextFormat.PlainText


# --------------------------------------------------------------------------- the widget walk

def _rich_text_leaks(root: QWidget, needles: list) -> list:
    """Widgets showing a needle (text only a log contains) as rich text."""
    bad = []
    for w in [root] + root.findChildren(QWidget):
        if isinstance(w, QLabel):
            t = w.text()
            rich = w.textFormat() == Qt.TextFormat.RichText or (
                w.textFormat() == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(t))
            if rich and any(n in t for n in needles):
                bad.append(f"QLabel {w.objectName()}: {t[:80]}")
        elif isinstance(w, (QTextEdit, QTextBrowser)):
            html = w.toHtml()
            if any(n in w.toPlainText() for n in needles) and w.acceptRichText():
                bad.append(f"{type(w).__name__} {w.objectName()} accepts rich text")
            if "<script" in html or "<img" in html.replace("&lt;img", ""):
                bad.append(f"{type(w).__name__} {w.objectName()}: markup in the document")
        tip = w.toolTip()
        if tip and GuiQt.mightBeRichText(tip) and any(n in tip for n in needles):
            bad.append(f"tooltip of {type(w).__name__} {w.objectName()}: {tip[:80]}")
    return bad


def test_widget_walk_no_log_text_as_rich_text(qtbot, win, tmp_path):
    win.frame_actions.act_markdown.setChecked(True)
    h = open_and_wait(qtbot, win, hostile_session(tmp_path))
    needles = ["<script>alert(1)</script>", "<h1>user html</h1>", "<b>bold?</b>"]
    for r in range(h.rowCount()):               # every row through the inspector
        win.select_row(r)
        assert not _rich_text_leaks(win, needles)
    win.view.clearSelection()
    win.view.setCurrentIndex(h.index(-1, 0))
    win.show_request_tab()
    assert not _rich_text_leaks(win, needles)


@pytest.mark.slow
def test_session_list_tooltip_is_plain_text(qtbot, win, tmp_path):
    p = hostile_session(tmp_path)
    lines = p.read_text(encoding="utf-8").splitlines()
    hdr = json.loads(lines[0])
    hdr["cwd"] = "/work/<b>proj</b>"
    p.write_text("\n".join([json.dumps(hdr)] + lines[1:]) + "\n", encoding="utf-8")
    open_and_wait(qtbot, win, p.parent.parent)
    m = win.sessions.model
    tip = m.data(m.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    doc = QTextDocument()
    doc.setHtml(tip) if GuiQt.mightBeRichText(tip) else doc.setPlainText(tip)
    assert "/work/<b>proj</b>" in doc.toPlainText(), "the tooltip shows the characters, not bold text"


# --------------------------------------------------------------------------- frame

def test_menus_toolbar_toggles_and_shortcuts_dialog(qtbot, win):
    names = [a.text().replace("&", "") for a in win.menuBar().actions()]
    assert names == ["File", "Edit", "View", "Go", "Tools", "Help"]
    edit = [a.text().replace("&", "") for a in win.menu("Edit").actions() if a.text()]
    assert edit[:3] == ["Copy", "Copy as Markdown", "Find…"]
    assert win.menu("Go") is win.menu("Go"), "one menu per name"
    go = [a.text().replace("&", "") for a in win.menu("Go").actions() if a.text()]
    assert "Start of log" in go and "End of log" in go and "Previous turn" in go
    # toggles: checkable buttons with a fixed text and an icon
    for act in (win.act_physical, win.act_attempts):
        assert act.isCheckable() and not act.icon().isNull()
        t = act.text()
        act.setChecked(True)        # (no session open: the toggles are disabled, issue 35 item 13)
        assert act.isChecked() and act.text() == t
        act.setChecked(False)
    tb = win.toolbar
    assert tb.toolButtonStyle() == Qt.ToolButtonStyle.ToolButtonTextBesideIcon
    assert all(not a.icon().isNull() for a in tb.actions() if a.text() and not a.isSeparator())
    # theme and font size
    win.frame_actions.set_theme("dark")
    assert win.theme.dark and win.frame_actions.theme_actions["dark"].isChecked()
    win.frame_actions.set_theme("light")
    size = win.view.font().pointSizeF()
    win.frame_actions.act_bigger.trigger()
    assert win.view.font().pointSizeF() == size + 1 and win.inspector.font().pointSizeF() == size + 1
    win.frame_actions.act_font_reset.trigger()
    # Help › Keyboard shortcuts lists the window's shortcuts
    d = win.frame_actions.show_shortcuts()
    rows = {(d.table.item(i, 0).text(), d.table.item(i, 1).text()) for i in range(d.table.rowCount())}
    assert ("Ctrl+Shift+P", "Physical tail") in rows and ("F1", "Keyboard shortcuts") in rows
    assert any(k == "Ctrl+Shift+C" for k, _ in rows)
    d.close()


def test_row_menu_has_fork_and_show_request(qtbot, win):
    open_and_wait(qtbot, win, fixture(RETRY))
    labels = [a.text() for a in win.view.actions() if a.property("contextMenu")]
    assert "Fork from here" in labels and "Show request" in [x.replace("&", "") for x in labels]
    tools = [a.text().replace("&", "") for a in win.menu("Tools").actions()]
    assert "Show request" in tools and "Fork from here" in tools
    r = next(i for i, row in enumerate(win.history.rows) if row.kind == "assistant")
    win.select_row(r)
    win.frame_actions.act_request.trigger()
    assert win.tabs.currentWidget() is win.request_view


def test_copy_as_markdown_of_a_message_and_of_rows(qtbot, win, tmp_path):
    h = open_and_wait(qtbot, win, hostile_session(tmp_path, "Here is `x` and a fence:\n```\ncode\n```"))
    r = next(i for i, row in enumerate(h.rows) if row.kind == "assistant")
    win.select_row(r)
    text = win.frame_actions.copy_markdown()
    assert text.startswith("### Assistant") and "```\ncode\n```" in text
    assert QApplication.clipboard().text() == text
    # a selection of rows, oldest first; a tool card's text is fenced longer than its backticks
    win.view.selectAll()
    text = win.frame_actions.copy_markdown()
    assert text.index("### User") < text.index("### Assistant")
    assert "Copied" in win.statusBar().currentMessage()
    from app.ui.markdown_copy import fence
    assert fence("a ``` b").startswith("````\n")


@pytest.mark.slow
def test_session_list_columns_and_window_title(qtbot, win):
    open_and_wait(qtbot, win, fixture(FORK_DIR))
    m = win.sessions.model
    headers = [m.headerData(c, Qt.Orientation.Horizontal) for c in range(m.columnCount())]
    assert headers == ["Session", "Updated", "Project", "Format"]
    ix = m.index(0, 0)
    assert m.data(m.index(0, 3)) == "v0"
    assert m.data(m.index(0, 1)) not in (None, "", "—")
    assert win.sessions.tree.textElideMode() == Qt.TextElideMode.ElideMiddle
    title = win.windowTitle()
    assert title.endswith(" · Session Lens") and "{{" not in title
    # a template id never reaches the title
    open_and_wait(qtbot, win, fixture(UNKNOWN))
    assert "{{" not in win.windowTitle() and "tool-outcome-unknown" in win.windowTitle()
    assert "{{" not in m.label(m.info_at(ix if ix.isValid() else m.index(0, 0)))


def test_inspector_summary_when_nothing_is_selected(qtbot, win):
    open_and_wait(qtbot, win, fixture(RETRY))
    qtbot.waitUntil(lambda: "tokens:" in win.inspector.raw.toPlainText(), timeout=WAIT)
    text = win.inspector.raw.toPlainText()
    assert "Session summary" in win.inspector.title.text()
    assert "events:" in text and "turns:" in text and "problems:" in text
    win.select_row(0)
    assert "Session summary" not in win.inspector.title.text()


def test_fonts_resolve_emoji_and_cjk(qtbot, win):
    """Noto emoji and CJK come with the set-up: the font database finds a face for each."""
    fams = QFontDatabase.families()
    for ch in ("😀", "🚀", "漢", "한", "の"):
        have = [f for f in fams if QFontMetrics(QFont(f)).inFontUcs4(ord(ch))]
        assert have, f"no installed font has a glyph for {ch!r}"
    assert "Noto Color Emoji" in fams and any("CJK" in f for f in fams)


def test_window_geometry_is_remembered(qtbot, tmp_path, monkeypatch):
    from app.ui.main_window import MainWindow
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "cfg"))
    w = MainWindow(page_size=20, theme_mode="light")
    qtbot.addWidget(w)
    w.show()   # (the offscreen screen is 800 x 600: restoreGeometry keeps a window inside it)
    w.resize(790, 470)
    QApplication.processEvents()
    size = (w.width(), w.height())                     # (its minimum width may exceed 790)
    w.close()
    saved = json.loads((tmp_path / "cfg" / "settings.json").read_text())
    assert isinstance(saved["windowGeometry"], str)          # Qt's saveGeometry, base64
    w2 = MainWindow(page_size=20, theme_mode="light")
    qtbot.addWidget(w2)
    assert (w2.width(), w2.height()) == size
    # maximized is kept (the four numbers of before lost it), and so is the size to restore to
    w2.show()
    w2.showMaximized()
    qtbot.waitUntil(w2.isMaximized, timeout=30_000)
    w2.close()
    w3 = MainWindow(page_size=20, theme_mode="light")
    qtbot.addWidget(w3)
    w3.show()
    qtbot.waitUntil(w3.isMaximized, timeout=30_000)
    w3.showNormal()
    qtbot.waitUntil(lambda: (w3.width(), w3.height()) == size, timeout=30_000)
    w3.shutdown()


def test_window_geometry_of_an_older_settings_file_is_read(qtbot, tmp_path, monkeypatch):
    from app.ui.main_window import MainWindow
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "settings.json").write_text(json.dumps({"geometry": [10, 20, 1011, 708]}))
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(cfg))
    w = MainWindow(page_size=20, theme_mode="light")
    qtbot.addWidget(w)
    assert (w.width(), w.height()) == (1011, 708)
    w.shutdown()


@pytest.mark.slow
def test_first_run_tour_three_hints_once(qtbot, tmp_path, monkeypatch):
    from app.ui.main_window import MainWindow
    from app.ui.tour import HINTS
    monkeypatch.delenv("SESSION_LENS_NO_TOUR")
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "cfg"))
    w = MainWindow(page_size=20, theme_mode="light")
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    open_and_wait(qtbot, w, fixture(RETRY))
    t = w.tour
    assert t is not None and t.isVisible() and len(HINTS) == 3
    seen = []
    for _ in range(3):
        seen.append(t.title.text())
        assert t.body.textFormat() == Qt.TextFormat.PlainText
        t.next.click()
    assert seen == [h[0] for h in HINTS] and w.tour is None
    w.shutdown()
    # remembered: the next window (and the next session) shows no tour
    w2 = MainWindow(page_size=20, theme_mode="light")
    qtbot.addWidget(w2)
    w2.show()
    open_and_wait(qtbot, w2, fixture(RETRY))
    assert w2.tour is None
    w2.shutdown()
    # dismissible at the first hint
    monkeypatch.setenv("SESSION_LENS_CONFIG_DIR", str(tmp_path / "cfg2"))
    w3 = MainWindow(page_size=20, theme_mode="light")
    qtbot.addWidget(w3)
    w3.show()
    open_and_wait(qtbot, w3, fixture(RETRY))
    w3.tour.skip.click()
    assert w3.tour is None and json.loads((tmp_path / "cfg2" / "settings.json").read_text())["tourSeen"] is True
    w3.shutdown()


@pytest.mark.slow
def test_sqlite_sessions_show_titles_and_dates(qtbot, win, tmp_path):
    from app.store.sqlite_writer import jsonl_to_sqlite
    db = tmp_path / "store.db"
    for rel in (RETRY, "examples/acp-agent/tests/snapshots/session-sandbox-root/session.jsonl"):
        jsonl_to_sqlite(fixture(rel), str(db))
    before = db.stat().st_mtime_ns
    open_and_wait(qtbot, win, db)
    m = win.sessions.model
    qtbot.waitUntil(lambda: len(m.titles) == 2, timeout=WAIT)
    rows = [[m.data(m.index(r, c)) for c in range(4)] for r in range(m.rowCount())]
    # (the open session may carry its follower's writer state in front: "● live · title")
    titles = {r[0].split(" · ")[-1] for r in rows}
    assert "This prompt first receives an" in titles and "Use the write tool (NOT" in titles
    # the newest event's time, not the shared store file's mtime
    assert len({r[1] for r in rows}) == 2, "each session its own date (the store file's mtime is shared)"
    assert all(r[3] == "v0 SQLite" for r in rows)
    assert "{{" not in win.windowTitle() and "store.db" in win.windowTitle()
    assert db.stat().st_mtime_ns == before, "listing a store never changes it"


def test_file_dialog_follows_the_platform_and_remembers_the_folder(qtbot, win, monkeypatch):
    from app.ui.app import platform_theme
    assert platform_theme({"QT_QPA_PLATFORMTHEME": "kde"}) is None                      # the user's choice
    assert platform_theme({"FLATPAK_ID": "x", "XDG_CURRENT_DESKTOP": "GNOME"}) == "xdgdesktopportal"
    assert platform_theme({"XDG_CURRENT_DESKTOP": "ubuntu:GNOME"}) == "gtk3"
    assert platform_theme({"XDG_CURRENT_DESKTOP": "KDE", "DBUS_SESSION_BUS_ADDRESS": "unix:x"}) == "xdgdesktopportal"
    assert platform_theme({}) is None
    # the dialogs are the platform's (no DontUseNativeDialog) and start where the last store was
    from PySide6.QtWidgets import QFileDialog
    calls = []

    def fake_open(*args, **kw):               # (parent, caption, directory, filter)
        calls.append((args[2], kw.get("options")))
        return "", ""
    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(fake_open))
    open_and_wait(qtbot, win, fixture(RETRY))
    win.store_path = None
    win.open_file_dialog()
    assert calls[-1][0] == str(fixture(RETRY).parent)
    assert calls[-1][1] is None or not (calls[-1][1] & QFileDialog.Option.DontUseNativeDialog)
