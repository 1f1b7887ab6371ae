"""No reaching into another object's private members across modules (issue 34, item 4), checked on the
source text with ``ast`` like the layering test.

In a module of ``app``, an access ``X._name`` (one leading underscore, not a dunder) where ``X`` is not
``self``, ``cls`` or ``super()`` is a violation unless the module itself defines ``_name`` (a method, a
``self._name`` attribute, a class or module name, a parameter): then it is an object of its own kind.  A
``from M import _name`` of another module's private name is one too.  The standard library's and
namedtuple's underscore API (``os._exit`` after a fork, ``_replace``) is allowed by name.

What the checker found when it was written, and was not fixed then, is listed in :data:`KNOWN` by file and expression,
with the reason; a new violation fails ``test_no_new_private_access``, and an entry that no longer occurs fails
``test_the_known_list_is_current`` (so the list only shrinks). Fixed when the test was added: ``store._read``
(``SqliteStore.read``), ``reader._backward_items`` / ``_token_for_seq`` (public now), the write to
``tracker._hidden_count`` (a weak map in ``app/ui/history/pages.py``), the CLI's ``_reader`` and ``_cfg_path``
(``session_reader``, ``cfg_session_path``) and the window's ``_first_paint_marked``. Later: the reader's split-row
decode and scan totals the exports used (``decode_split_row``, ``physical_total``, ``progress_of``), ``Segment._abs``
(``text_pos``) and the reader's legacy-row probe (``app/log/index/rowprobe.py``). Then (renames only): a file source's
read primitives (``pread``, ``fd``, ``find_newline``, ``oversized_segment``), the index cache's helpers the timeline
and outline caches share (``source_identity``, ``file_source_of``, ``keyed_hasher``, ``DIGEST_SIZE``,
``cache_size_limit``, ``tail_hash``, ``write_parts_atomic``), the fast index's scan tables and heap switch the fork's
legacy-row scan uses (``scan_rows``, ``SCAN_TYPES``, ..., ``heap_steady``), ``versions.DATA_TYPE``,
``analysis.dedupe_problems``, ``export_transcript.message_blocks``, the window's ``history_column``,
``update_request``, ``on_tail``, the welcome's ``explicit_home``, ``HistoryActions.apply_find``,
``GoActions.job_group``; the export's ``hashlib._Hash`` is a protocol. Then the history pages' job functions
(``counted_page``, ``loaded_page``, ``older_job``, ``open_split_job``, ``range_job``, ``live_job``, ``surface_job``,
``event_at_job``, ``seq_index_job``); the row window's lookups the shed uses (``all_pos``, ``all_key``, ``seq_rows``,
``seq_firsts``, ``rows_of``, ``seq_rows_of``, ``set_window``); the history model's steps its split modules drive
(``apply_changes``, ``job_group``, ``set_loading``, ``page_error``, ``shed_pages``, ``index_of_ordinal``); the history
controller's ``update_find_status`` and the delegate's ``row_pads``; the surface fold's step state
(``empty_assistant``, ``step_mark``), the checkpoints' ``segments_from``, the surface's ``compaction_ref``, the
reader's ``cached_surface_index`` and the attempt tracker's ``open_attempts``. Nothing is known now: the list is
empty, and stays so.
"""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# the standard library's and namedtuple's underscore API, used as documented
ALLOWED_NAMES = {"_exit", "_replace", "_asdict", "_fields", "_make", "_VersionAction", "_parser"}

KNOWN: dict[tuple[str, str], str] = {}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _owned(tree: ast.AST) -> set[str]:
    """The private names a module defines itself (methods, classes, self/cls attributes, names, parameters)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            out.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
    return {n for n in out if _private(n)}


def accesses(root: Path) -> dict[tuple[str, str], int]:
    """(file, expression) -> first line, for every private access across modules under ``root/app``."""
    out: dict[tuple[str, str], int] = {}
    for p in sorted((root / "app").rglob("*.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"), str(p))
        own = _owned(tree)
        rel = str(p.relative_to(root))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                v = node.value
                if isinstance(v, ast.Name) and v.id in ("self", "cls"):
                    continue
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "super":
                    continue
                if node.attr in own or node.attr in ALLOWED_NAMES:
                    continue
                out.setdefault((rel, ast.unparse(node)), node.lineno)
            elif isinstance(node, ast.ImportFrom):
                for a in node.names:
                    if _private(a.name) and a.name not in own and a.name not in ALLOWED_NAMES:
                        out.setdefault((rel, f"from {'.' * node.level}{node.module or ''} import {a.name}"), node.lineno)
    return out


def test_no_new_private_access():
    new = {k: line for k, line in accesses(REPO).items() if k not in KNOWN}
    assert new == {}, "\n".join(f"{f}:{line}: {e}" for (f, e), line in sorted(new.items()))


def test_the_known_list_is_current():
    found = accesses(REPO)
    assert [k for k in KNOWN if k not in found] == []


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text, encoding="utf-8")
    return tmp_path


def test_checker_finds_reads_writes_and_imports_of_private_members(tmp_path):
    root = _tree(tmp_path, {
        "app/store/s.py": "class S:\n    def _read(self): pass\n    def same(self, other): return other._read()\n",
        "app/ui/w.py": ("from ..store.s import _helper\n"
                        "def f(store, tracker):\n    store._read()\n    tracker._count = 1\n    import os\n"
                        "    os._exit(0)\n    return super()._x\n"),
    })
    got = set(accesses(root))
    assert got == {("app/ui/w.py", "store._read"), ("app/ui/w.py", "tracker._count"),
                   ("app/ui/w.py", "from ..store.s import _helper")}
