"""The process's zstd module, from one place: the standard library's ``compression.zstd`` (Python
3.14+), else ``backports.zstd`` (what ``pyproject.toml`` installs below 3.14).  The two have the same
API (the backport is the standard library module, published for older Pythons), so every caller
writes ``from app.log.source.zstdlib import zstd`` and works on both.

``MODULE_NAME`` names the module in use (for ``doctor`` and About); ``native_library_path`` gives the
file of its C extension, whose libzstd symbols :mod:`.zstdframes` calls through ``ctypes``.
"""
from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Optional

STDLIB = "compression.zstd"
BACKPORT = "backports.zstd"
# the C extension behind each module (the standard library's is the top-level ``_zstd``)
_NATIVE = {STDLIB: "_zstd", BACKPORT: "backports.zstd._zstd"}


class ZstdUnavailable(ImportError):
    """Neither ``compression.zstd`` nor ``backports.zstd`` imports here."""


def load() -> tuple[ModuleType, str]:
    """(the zstd module, its name): ``compression.zstd`` where it imports, else ``backports.zstd``."""
    errors = []
    for name in (STDLIB, BACKPORT):
        try:
            return importlib.import_module(name), name
        except ImportError as e:
            errors.append(f"{name}: {type(e).__name__}")
    raise ZstdUnavailable("no zstd module (" + "; ".join(errors) + "); below Python 3.14 install "
                          "backports.zstd")


if TYPE_CHECKING:        # the two modules share one API; the backport's stubs type it on every Python
    from backports import zstd as zstd
    MODULE_NAME: str
else:
    zstd, MODULE_NAME = load()


def native_library_path(name: Optional[str] = None) -> Optional[str]:
    """The file of the C extension of the zstd module ``name`` (default: the one in use), or None."""
    try:
        ext = importlib.import_module(_NATIVE[name or MODULE_NAME])
    except (ImportError, KeyError):
        return None
    path = getattr(ext, "__file__", None)
    return path if isinstance(path, str) else None
