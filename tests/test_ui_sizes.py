"""No module in app/ui over 700 lines and no class over 400 lines (a class that grows past
that does several jobs: split it, as the history model and the main window were)."""
from __future__ import annotations

import ast
from pathlib import Path

UI = Path(__file__).resolve().parents[1] / "app" / "ui"
MAX_MODULE_LINES = 700
MAX_CLASS_LINES = 400


def test_ui_modules_and_classes_stay_small():
    too_big = []
    files = sorted(UI.rglob("*.py"))
    assert len(files) > 20
    for p in files:
        src = p.read_text(encoding="utf-8")
        n = len(src.splitlines())
        if n > MAX_MODULE_LINES:
            too_big.append(f"{p.relative_to(UI)}: {n} lines")
        for node in ast.walk(ast.parse(src)):
            if isinstance(node, ast.ClassDef):
                size = node.end_lineno - node.lineno + 1
                if size > MAX_CLASS_LINES:
                    too_big.append(f"{p.relative_to(UI)}: class {node.name}: {size} lines")
    assert not too_big, too_big
