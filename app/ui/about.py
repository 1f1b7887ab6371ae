"""The About dialog, and the versions it lists (also written into crash logs).

    show_about(parent)                      # Help > About Session Lens
"""
from __future__ import annotations

import platform
import sys
from typing import Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

APP_NAME = "Session Lens"
APP_SLUG = "session-lens"


# --------------------------------------------------------------------------- versions

def _dist_version(dist: str, module: Optional[str] = None) -> str:
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:
        pass
    if module:
        try:
            import importlib
            mod = importlib.import_module(module)
            v = getattr(mod, "__version__", None)
            if v:
                return str(v)
        except Exception:
            pass
    return "not installed"


def versions() -> dict:
    """Name -> version of Session Lens and what it runs on (for About and crash logs)."""
    from PySide6 import QtCore
    import PySide6
    from .. import __version__
    out = {
        APP_NAME: __version__,
        "Python": platform.python_version(),
        "PySide6": getattr(PySide6, "__version__", "?"),
        "Qt": QtCore.qVersion(),
        "msgspec": _dist_version("msgspec", "msgspec"),
        "qasync": _dist_version("qasync", "qasync"),
        "platformdirs": _dist_version("platformdirs", "platformdirs"),
    }
    from ..log.source.zstdlib import BACKPORT, MODULE_NAME
    out["zstd"] = MODULE_NAME if MODULE_NAME != BACKPORT else f"{BACKPORT} {_dist_version(BACKPORT)}"
    libc = platform.libc_ver()
    out["System"] = " ".join(x for x in (platform.system(), platform.release(), platform.machine(),
                                         "-".join(libc) if libc[0] else "") if x)
    app = QGuiApplication.instance()
    if app is not None:
        out["Qt platform"] = QGuiApplication.platformName()
    out["Build"] = "packaged (PyInstaller)" if getattr(sys, "frozen", False) else "from source"
    return out


def versions_text() -> str:
    v = versions()
    width = max(len(k) for k in v)
    return "\n".join(f"{k:<{width}}  {val}" for k, val in v.items())


# --------------------------------------------------------------------------- about

class AboutDialog(QDialog):
    def __init__(self, parent: Optional[QWidget] = None):
        super().__init__(parent)
        self.setWindowTitle(f"About {APP_NAME}")
        lay = QVBoxLayout(self)
        title = QLabel(f"{APP_NAME} {versions()[APP_NAME]}")
        f = title.font()
        f.setPointSizeF(f.pointSizeF() * 1.4)
        f.setBold(True)
        title.setFont(f)
        lay.addWidget(title)
        lay.addWidget(QLabel("A desktop history browser for AI-agent session logs (dsh stores)."))
        self.details = QPlainTextEdit(versions_text())
        self.details.setReadOnly(True)
        self.details.setObjectName("aboutVersions")
        fm = self.details.fontMetrics()
        self.details.setMinimumSize(fm.horizontalAdvance("x" * 60), fm.lineSpacing() * 12)
        from PySide6.QtGui import QFontDatabase
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        lay.addWidget(self.details)
        bb = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        copy = bb.addButton("Copy versions", QDialogButtonBox.ButtonRole.ActionRole)
        copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.details.toPlainText()))
        bb.rejected.connect(self.reject)
        bb.accepted.connect(self.accept)
        lay.addWidget(bb)


def show_about(parent: Optional[QWidget] = None) -> AboutDialog:
    dlg = AboutDialog(parent)
    dlg.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose, True)
    dlg.open()
    return dlg
