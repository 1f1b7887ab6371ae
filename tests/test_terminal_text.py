"""Terminal and window text (issue 28, item 6): bidi controls never reach the terminal raw, one-line
fields (ids, titles, paths) never hold a line break, and the window's item views show a visible
picture (␛) for a control character, never the character."""
from __future__ import annotations

import json

import pytest

from app.tools.hostile import ESC_TOOL, FORGED_LINE, hostile_names_session
from conftest import fixture
from test_hardening import cli

TOOLS = "examples/jsonrpc-agent/tests/snapshots/persistent-tools/session.jsonl"
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"


@pytest.fixture
def hostile_log(tmp_path):
    d = tmp_path / "store"
    d.mkdir()
    p = d / "session.jsonl"
    p.write_bytes(hostile_names_session(fixture(TOOLS).read_bytes()))
    return p


def _raw_controls(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in text if c in BIDI or (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]


@pytest.mark.parametrize("cmd", ["list", "inspect", "messages"])
def test_cli_text_holds_no_bidi_or_control_and_no_forged_line(hostile_log, cmd):
    target = hostile_log.parent if cmd == "list" else hostile_log
    r = cli(cmd, target)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode("utf-8")
    assert not _raw_controls(out), _raw_controls(out)[:5]
    assert FORGED_LINE not in out.splitlines()            # the id's newline did not start a line
    if cmd == "list":
        lines = out.splitlines()
        assert len(lines) == 3                            # the heading, the session, its path
        assert lines[1].lstrip().startswith("hostile-id␤")
    if cmd == "inspect":
        line = next(ln for ln in out.splitlines() if ln.strip().startswith("id:"))
        assert "hostile-id␤" in line and "\\u202e" in line
        title = next(ln for ln in out.splitlines() if ln.strip().startswith("title:"))
        assert "\\u202eevil title␛[2J" in title


@pytest.mark.parametrize("cmd", ["list", "inspect", "messages"])
def test_cli_json_escapes_bidi_and_keeps_the_values(hostile_log, cmd):
    target = hostile_log.parent if cmd == "list" else hostile_log
    r = cli(cmd, target, "--json")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode("utf-8")
    assert not _raw_controls(out.replace("\n", "")), _raw_controls(out)[:5]
    obj = json.loads(out)
    if cmd == "list":
        assert obj["sessions"][0]["id"].endswith("/etc/passwd\u202e")    # the value itself, escaped in JSON
    if cmd == "inspect":
        assert obj["title"] == "\u202eevil title\x1b[2J"


def test_window_item_views_show_pictures_not_controls(qtbot, win, hostile_log):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QAbstractItemView

    from app.log.query.outline import build_outline
    from app.log.query.stats import compute_stats
    from app.store.faces import open_reader
    from app.ui.audit.stats_panel import StatsPanel
    from app.ui.find_models import OutlineModel
    from test_hardening_ui import WAIT, _model_strings
    with qtbot.waitSignal(win.sessionLoaded, timeout=WAIT):
        win.open_store(str(hostile_log.parent))
    seen, bad = [], []
    # the history (its model, and the documents its delegate paints)
    hm = win.view.model()
    for r in range(hm.rowCount()):
        ix = hm.index(r, 0)
        doc = win.view.delegate.document(hm.row_at(r), ix)
        for text in (hm.data(ix), doc.toPlainText()):
            seen.append(text)
    # every item view of the window
    for w in win.findChildren(QAbstractItemView):
        seen += [v for _role, v in _model_strings(w)]
    # the outline and the audit's stats table, from the same log
    r = open_reader(str(hostile_log))
    om = OutlineModel()
    om.set_turns(build_outline(r).turns)
    seen += [om.data(om.index(i, 0)) for i in range(om.rowCount())]
    panel = StatsPanel(compute_stats(open_reader(str(hostile_log))))
    t = panel.table
    seen += [t.item(i, j).text() for i in range(t.rowCount()) for j in range(t.columnCount()) if t.item(i, j)]
    for text in seen:
        if any(c in text for c in "\x1b\x07\x00\x9b"):
            bad.append(text[:80])
    assert not bad, bad[:5]
    # the inspector's summary and the session list's tooltip: the id is one line
    from PySide6.QtWidgets import QPlainTextEdit, QTextEdit
    texts = [w.toPlainText() for k in (QPlainTextEdit, QTextEdit) for w in win.findChildren(k)]
    sm = win.sessions.model
    texts.append(sm.data(sm.index(0, 0), Qt.ItemDataRole.ToolTipRole).replace("<br>", "\n"))
    ids = [ln for t in texts for ln in t.splitlines() if "hostile-id" in ln]
    assert ids and all(FORGED_LINE not in t.splitlines() for t in texts), ids
    pictured = [s for s in seen if "␛]0;pwned␇␛[31mtool" in s]
    assert pictured, "no view showed the tool name (else this proves nothing)"
    assert ESC_TOOL not in "".join(seen)
