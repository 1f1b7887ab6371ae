"""The layers of docs/architecture.md, checked on the source text (``ast``; nothing is imported).

- ``app.log`` (pure core) imports no ``app.store``, ``app.presenters``, ``app.ui``, ``app.cli`` and no Qt;
- ``app.store`` and ``app.presenters`` import no ``app.ui``, ``app.cli`` and no Qt;
- a view model (see :func:`is_view_model`) reaches no ``QtWidgets``, directly or through other ``app`` modules.

Imports inside functions count like top-level ones: a lazy import is still a dependency.
``test_checker_*`` feed the checker small bad trees to show that it does fail.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

QT = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "qasync")
RULES = {                          # layer -> forbidden module prefixes
    "app.log": ("app.store", "app.presenters", "app.ui", "app.cli") + QT,
    "app.store": ("app.ui", "app.cli") + QT,
    "app.presenters": ("app.ui", "app.cli") + QT,
}
# Modules of app.ui that hold what the widgets show: they may use QtCore (item models, signals), never
# QtWidgets. Besides these names, any app.ui module named *model, *models, rows, data or sides is one.
VIEW_MODELS = {"app.ui.live", "app.ui.workers", "app.ui.recent",
               # app/ui/history: RowWindow and what feeds it (delegate, view and controller are the widget side)
               "app.ui.history.window", "app.ui.history.pages", "app.ui.history.cards", "app.ui.history.live_feed",
               "app.ui.history.seq_index"}
_VM_NAME = re.compile(r"(.*_)?models?|rows|row_window|data|sides")


def is_view_model(module: str) -> bool:
    return module.startswith("app.ui.") and (module in VIEW_MODELS or bool(_VM_NAME.fullmatch(module.rsplit(".", 1)[1])))


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(root: Path, path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in ``path``, at any depth (functions, try blocks)."""
    mod = _module_name(root, path)
    package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.append((node.lineno, target))
            # `from pkg import sub` may name a submodule: record pkg.sub too (a no-op when sub is a plain name)
            out += [(node.lineno, f"{target}.{a.name}") for a in node.names if a.name != "*"]
    return out


def _hits(name: str, prefixes) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def violations(root: Path) -> list[str]:
    """Every layering violation of the ``app`` package under ``root`` (``root/app/...``)."""
    files = {_module_name(root, p): p for p in sorted((root / "app").rglob("*.py"))}
    graph = {m: imports_of(root, p) for m, p in files.items()}
    out = []
    for mod, imps in graph.items():
        for layer, banned in RULES.items():
            if mod == layer or mod.startswith(layer + "."):
                bad = {}                        # one message per import statement (its first banned name)
                for line, name in imps:
                    if _hits(name, banned):
                        bad.setdefault(line, name)
                out += [f"{files[mod].relative_to(root)}:{line}: {layer} imports {name}" for line, name in bad.items()]
    for mod in graph:
        if not is_view_model(mod):
            continue
        seen, stack = {mod: [mod]}, [mod]       # depth-first over app modules, keeping one path for the message
        while stack:
            cur = stack.pop()
            for _line, name in graph[cur]:
                if _hits(name, ("PySide6.QtWidgets", "PyQt5.QtWidgets", "PyQt6.QtWidgets")):
                    out.append(f"{files[mod].relative_to(root)}: view model reaches QtWidgets via "
                               + " -> ".join(seen[cur]))
                    stack = []                  # one message per view model
                    break
                if name in graph and name not in seen:
                    seen[name] = seen[cur] + [name]
                    stack.append(name)
    return sorted(set(out))


def test_layers_hold():
    assert violations(REPO) == []


def test_view_models_are_found():
    names = {_module_name(REPO, p) for p in (REPO / "app" / "ui").rglob("*.py")}
    vms = {n for n in names if is_view_model(n)}
    assert {"app.ui.history.rows", "app.ui.history.model", "app.ui.history.window", "app.ui.session_model",
            "app.ui.json_model", "app.ui.audit.data", "app.ui.audit.sides"} <= vms
    assert not {"app.ui.main_window", "app.ui.history.view", "app.ui.history.delegate"} & vms


# --------------------------------------------------------------------------- the checker itself

def _tree(tmp_path: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    for d in [tmp_path / "app", *(p for p in (tmp_path / "app").rglob("*") if p.is_dir())]:
        (d / "__init__.py").touch()
    return tmp_path


def test_checker_accepts_a_clean_tree(tmp_path):
    root = _tree(tmp_path, {"app/log/core.py": "import json\nfrom .other import x\n",
                            "app/log/other.py": "x = 1\n",
                            "app/store/s.py": "from ..log.core import json\n",
                            "app/ui/rows.py": "from PySide6.QtCore import QObject\nfrom ..log import core\n",
                            "app/ui/view.py": "from PySide6.QtWidgets import QWidget\nfrom .rows import QObject\n"})
    assert violations(root) == []


def test_checker_fails_on_a_lazy_store_import_in_the_core(tmp_path):
    root = _tree(tmp_path, {"app/log/core.py": "def f():\n    from ..store.discovery import discover\n",
                            "app/store/discovery.py": "def discover(): pass\n"})
    v = violations(root)
    assert len(v) == 1 and "app/log/core.py:2: app.log imports app.store.discovery" in v[0]


def test_checker_fails_on_qt_in_the_core_and_store(tmp_path):
    root = _tree(tmp_path, {"app/log/a.py": "import PySide6.QtCore\n",
                            "app/store/b.py": "try:\n    from PySide6 import QtGui\nexcept ImportError:\n    pass\n",
                            "app/store/c.py": "from app.ui import main_window\n"})
    v = violations(root)
    assert any("app/log/a.py:1: app.log imports PySide6.QtCore" in x for x in v)
    assert any("app/store/b.py:2: app.store imports PySide6" in x for x in v)
    assert any("app/store/c.py:1: app.store imports app.ui" in x for x in v)


def test_checker_fails_on_a_view_model_reaching_widgets_through_a_helper(tmp_path):
    root = _tree(tmp_path, {"app/ui/audit/data.py": "from .diff_view import sides\n",
                            "app/ui/audit/diff_view.py": "from PySide6.QtWidgets import QWidget\ndef sides(): pass\n"})
    v = violations(root)
    assert len(v) == 1 and "view model reaches QtWidgets via app.ui.audit.data -> app.ui.audit.diff_view" in v[0]
