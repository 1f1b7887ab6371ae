"""Run-time hook of the packaged binary, in place of PyInstaller's ``pyi_rth_pyside6``.

PyInstaller's hook imports ``PySide6.QtCore`` at every start of the binary, only to register an embedded
qt.conf that the PySide6 wheel's QtCore registers by itself (relative to the bundled ``PySide6/Qt``) when the
window imports it.  That import cost every start which never needs Qt - each worker process (index, find,
outline, titles, full-text: the same binary, ``--session-lens-worker KIND``), ``--version``, the CLI - the Qt
import (~150 ms on a quiet machine, several times that under load).  This hook sets the same search paths and
imports nothing.
"""
import os
import sys

_qt = os.path.join(sys._MEIPASS, "PySide6", "Qt")        # noqa: SLF001  (PyInstaller's bundle folder)
os.environ["QT_PLUGIN_PATH"] = os.path.join(_qt, "plugins")
os.environ["QML2_IMPORT_PATH"] = os.path.join(_qt, "qml")
