"""The README says what the app does today: its shortcut table is the window's own list (Help › Keyboard
shortcuts), and its screenshot examples write outside the checkout (a clone stays clean)."""
from __future__ import annotations

import re

from conftest import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")


def _shortcut_table() -> list[tuple[str, str, str]]:
    start = README.index("| keys | action | where |")
    rows = []
    for line in README[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        keys, action, where = (c.strip() for c in line.strip("|").split("|"))
        rows.append((keys.strip("`"), action, where))
    return rows


def test_the_shortcut_table_is_the_windows_list(win):
    from app.ui.frame_actions import shortcut_rows
    table = _shortcut_table()
    assert table == [tuple(r) for r in shortcut_rows(win)], "\n".join(
        f"| `{k}` | {a} | {w} |" for k, a, w in shortcut_rows(win))
    assert ("Ctrl+Alt+F", "Fork from here", "Tools") in table


def test_screenshot_examples_write_outside_the_checkout():
    docs = README + (REPO_ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    outs = re.findall(r"--screenshot[ =](\S+?)[\"`\s]", docs)
    assert outs
    for out in outs:
        placeholder = out.rstrip("]").upper() == out.rstrip("]") or out.startswith("OUT")
        assert out.startswith(("/tmp/", "$TMPDIR", '"$TMPDIR')) or placeholder, out
