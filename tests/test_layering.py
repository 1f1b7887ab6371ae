"""The layers of docs/architecture.md, checked on the source text (``ast``; nothing is imported).

Every rule the architecture states is one entry of :data:`RULES`, checked by ``test_rule[NAME]``
(the doc's table names that test beside each rule):

- ``textutil-imports-nothing-of-ours``: ``app/textutil.py`` imports nothing of ``app``;
- ``log-is-pure``: ``app.log`` imports nothing of ours outside ``app.log`` (``app.textutil`` excepted), no
  Qt, and of the third-party world only ``msgspec`` and zstd (``backports.zstd``; ``mypy_extensions`` for types);
- ``store-imports-only-log``: ``app.store`` imports of ours only ``app.log`` and ``app.textutil`` (and the
  package's ``__version__``), no Qt;
- ``presenters-import-only-log``: the same for ``app.presenters``;
- ``view-models-use-qtcore-only``: a view model (see :func:`is_view_model`) imports of Qt only ``QtCore``, and
  reaches neither ``QtWidgets`` nor ``QtGui`` through other ``app`` modules;
- ``ui-imports-no-cli``: ``app.ui`` imports nothing of ``app.cli``;
- ``tools-use-no-qt``: ``app.tools`` imports no Qt, ``app.ui`` or ``app.cli``;
- ``cli-starts-qt-only-in-gui-and-audit``: a CLI module other than ``gui_cmd`` and ``audit_cmd`` reaches no
  Qt, directly or through ``app`` modules (a package's ``__init__`` counts: it runs on import).

Imports inside functions count like top-level ones: a lazy import is still a dependency.
``test_checker_*`` feed the checker small bad trees to show that each rule does fail.
"""
from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

QT = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "qasync")
# Modules of app.ui that hold what the widgets show: they may use QtCore (item models, signals), never
# QtWidgets or QtGui. Besides these names, any app.ui module named *model, *models, rows, data or sides is one.
VIEW_MODELS = {"app.ui.live", "app.ui.workers", "app.ui.recent",
               # app/ui/history: RowWindow and what feeds it (delegate, view and controller are the widget side)
               "app.ui.history.window", "app.ui.history.pages", "app.ui.history.cards", "app.ui.history.live_feed",
               "app.ui.history.seq_index"}
_VM_NAME = re.compile(r"(.*_)?models?|rows|row_window|data|sides")
LOG_THIRD_PARTY = {"msgspec", "backports", "mypy_extensions", "typing_extensions"}   # (zstd: app/log/source/zstdlib.py)
CLI_WITH_QT = {"app.cli.gui_cmd", "app.cli.audit_cmd"}
VERSION = {"app", "app.__version__"}                               # `from .. import __version__`


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


def _under(name: str, *prefixes: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _third_party(name: str) -> bool:
    top = name.split(".", 1)[0]
    return bool(top) and top != "app" and top not in sys.stdlib_module_names


def _only_ours(*allowed: str) -> Callable[[str], bool]:
    """Forbidden: any module of ours outside ``allowed`` (the package version excepted), and Qt."""
    return lambda n: (_under(n, "app") and not _under(n, *allowed) and n not in VERSION) or _under(n, *QT)


# name -> (the modules it applies to, the imported names it forbids); direct imports
DIRECT: dict[str, tuple[Callable[[str], bool], Callable[[str], bool]]] = {
    "textutil-imports-nothing-of-ours": (lambda m: m == "app.textutil", lambda n: _under(n, "app")),
    "log-is-pure": (lambda m: _under(m, "app.log"),
                    lambda n: _only_ours("app.log", "app.textutil")(n)
                    or (_third_party(n) and n.split(".", 1)[0] not in LOG_THIRD_PARTY)),
    "store-imports-only-log": (lambda m: _under(m, "app.store"), _only_ours("app.log", "app.textutil", "app.store")),
    "presenters-import-only-log": (lambda m: _under(m, "app.presenters"),
                                   _only_ours("app.log", "app.textutil", "app.presenters")),
    "view-models-use-qtcore-only": (is_view_model,
                                    lambda n: _under(n, *QT) and not _under(n, "PySide6.QtCore") and n != "PySide6"),
    "ui-imports-no-cli": (lambda m: _under(m, "app.ui"), lambda n: _under(n, "app.cli")),
    "tools-use-no-qt": (lambda m: _under(m, "app.tools"), lambda n: _under(n, *QT, "app.ui", "app.cli")),
}
# name -> (the modules it applies to, what they may not reach through other app modules, its label, whether
# a package's __init__ counts: for the CLI it does (it runs on import: the process loads Qt); for a view model
# the rule is about its code, so a package that also holds widgets (app/ui/audit) does not make it one)
REACH: dict[str, tuple[Callable[[str], bool], tuple[str, ...], str, bool]] = {
    "view-models-use-qtcore-only": (is_view_model, ("PySide6.QtWidgets", "PyQt5.QtWidgets", "PyQt6.QtWidgets",
                                                    "PySide6.QtGui", "PyQt5.QtGui", "PyQt6.QtGui"), "QtWidgets/QtGui",
                                    False),
    "cli-starts-qt-only-in-gui-and-audit": (lambda m: _under(m, "app.cli") and m not in CLI_WITH_QT, QT, "Qt", True),
}
RULE_NAMES = sorted(set(DIRECT) | set(REACH))


def _graph(root: Path) -> tuple[dict[str, Path], dict[str, list[tuple[int, str]]]]:
    files = {_module_name(root, p): p for p in sorted((root / "app").rglob("*.py"))}
    return files, {m: imports_of(root, p) for m, p in files.items()}


def _with_packages(name: str, graph: dict, packages: bool) -> list[str]:
    """``name`` (when it is an app module) and, with ``packages``, the packages above it (their
    ``__init__`` runs when it is imported)."""
    parts = name.split(".")
    names = [".".join(parts[:i]) for i in range(1, len(parts) + 1)] if packages else [name]
    return [n for n in names if n in graph]


def _reach(mod: str, banned: tuple[str, ...], graph: dict, packages: bool) -> list[str]:
    """The path of app modules from ``mod`` to an import of ``banned`` ([] when there is none)."""
    seen, stack = {mod: [mod]}, [mod]       # depth-first over app modules, keeping one path for the message
    while stack:
        cur = stack.pop()
        for _line, name in graph[cur]:
            if _under(name, *banned):
                return seen[cur] + [name]
            for nxt in _with_packages(name, graph, packages):
                if nxt not in seen:
                    seen[nxt] = seen[cur] + [nxt]
                    stack.append(nxt)
    return []


def violations(root: Path, rule: str | None = None) -> list[str]:
    """Every violation of ``rule`` (every rule when None) in the ``app`` package under ``root``."""
    files, graph = _graph(root)
    out = []
    for name, (applies, forbids) in DIRECT.items():
        if rule not in (None, name):
            continue
        for mod, imps in graph.items():
            if applies(mod):
                bad: dict[int, str] = {}        # one message per import statement (its first forbidden name)
                for line, imported in imps:
                    if forbids(imported):
                        bad.setdefault(line, imported)
                out += [f"{files[mod].relative_to(root)}:{line}: [{name}] {mod} imports {imp}" for line, imp in bad.items()]
    for name, (applies, banned, label, packages) in REACH.items():
        if rule not in (None, name):
            continue
        for mod in graph:
            if applies(mod):
                path = _reach(mod, banned, graph, packages)
                if len(path) > 2:              # (a direct import is the direct rule's message)
                    out.append(f"{files[mod].relative_to(root)}: [{name}] reaches {label} via " + " -> ".join(path))
    return sorted(set(out))


@pytest.mark.parametrize("rule", RULE_NAMES)
def test_rule(rule):
    assert violations(REPO, rule) == []


def test_the_architecture_doc_names_the_test_of_each_rule():
    doc = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [r for r in RULE_NAMES if f"test_layering.py::test_rule[{r}]" not in doc]
    assert missing == []


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
    root = _tree(tmp_path, {"app/log/core.py": "import json\nimport msgspec\nfrom .other import x\n",
                            "app/log/other.py": "x = 1\n",
                            "app/store/s.py": "from ..log.core import json\nfrom .. import __version__\n",
                            "app/ui/rows.py": "from PySide6.QtCore import QObject\nfrom ..log import core\n",
                            "app/ui/view.py": "from PySide6.QtWidgets import QWidget\nfrom .rows import QObject\n",
                            "app/cli/gui_cmd.py": "def run():\n    from ..ui import view\n",
                            "app/cli/list_cmd.py": "from ..store import s\n"})
    assert violations(root) == []


def test_checker_fails_on_a_lazy_store_import_in_the_core(tmp_path):
    root = _tree(tmp_path, {"app/log/core.py": "def f():\n    from ..store.discovery import discover\n",
                            "app/store/discovery.py": "def discover(): pass\n"})
    v = violations(root)
    assert len(v) == 1 and "app/log/core.py:2: [log-is-pure] app.log.core imports app.store.discovery" in v[0]


def test_checker_fails_on_qt_in_the_core_and_store(tmp_path):
    root = _tree(tmp_path, {"app/log/a.py": "import PySide6.QtCore\n",
                            "app/store/b.py": "try:\n    from PySide6 import QtGui\nexcept ImportError:\n    pass\n",
                            "app/store/c.py": "from app.ui import main_window\n"})
    v = violations(root)
    assert any("app/log/a.py:1: [log-is-pure] app.log.a imports PySide6.QtCore" in x for x in v)
    assert any("app/store/b.py:2: [store-imports-only-log] app.store.b imports PySide6" in x for x in v)
    assert any("app/store/c.py:1: [store-imports-only-log] app.store.c imports app.ui" in x for x in v)


def test_checker_fails_on_each_rule(tmp_path):
    root = _tree(tmp_path, {"app/textutil.py": "from .log import model\n",
                            "app/log/model.py": "import platformdirs\n",
                            "app/store/s.py": "from ..presenters import registry\n",
                            "app/presenters/registry.py": "from ..store import s\n",
                            "app/ui/session_model.py": "from PySide6.QtGui import QFont\n",
                            "app/ui/view.py": "from ..cli import main\n",
                            "app/tools/synth.py": "def f():\n    import PySide6.QtCore\n",
                            "app/cli/main.py": "x = 1\n",
                            "app/cli/doctor_cmd.py": "from ..ui import recent\n",
                            "app/ui/recent.py": "x = 1\n",
                            "app/ui/__init__.py": "from PySide6 import QtCore\n"})
    v = "\n".join(violations(root))
    for rule in RULE_NAMES:
        assert f"[{rule}]" in v, rule
    assert "app.textutil imports app.log" in v and "app.log.model imports platformdirs" in v
    assert "[cli-starts-qt-only-in-gui-and-audit] reaches Qt via app.cli.doctor_cmd -> app.ui -> PySide6" in v


def test_checker_fails_on_a_view_model_reaching_widgets_through_a_helper(tmp_path):
    root = _tree(tmp_path, {"app/ui/audit/data.py": "from .diff_view import sides\n",
                            "app/ui/audit/diff_view.py": "from PySide6.QtWidgets import QWidget\ndef sides(): pass\n"})
    v = violations(root)
    assert len(v) == 1 and ("[view-models-use-qtcore-only] reaches QtWidgets/QtGui via app.ui.audit.data -> "
                            "app.ui.audit.diff_view -> PySide6.QtWidgets") in v[0]
