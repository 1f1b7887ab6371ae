"""Screenshot driver (run under Xvfb): the main window with the audit window opened from it.

    xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/python tests/shot_audit_from_main.py SESSION SEQ OUT.png

Opens SESSION in the main window, selects the row of SEQ, triggers Tools > Audit session…
(the log decodes in a worker), waits for the audit window, places it over the lower right
of the main window and grabs the whole screen (both windows as the X server shows them).
Prints one JSON line: what was shown.
"""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import app.ui  # noqa: E402,F401  (PySide6 refcount work-around first)
from PySide6.QtCore import QEventLoop, QPoint, QTimer  # noqa: E402
from PySide6.QtGui import QGuiApplication, QPainter, QPixmap  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402


def wait(signal, ms: int = 20000) -> bool:
    loop = QEventLoop()
    fired = []
    signal.connect(lambda *a: (fired.append(a), loop.quit()))
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    return bool(fired)


def settle(ms: int = 300) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def main(argv) -> int:
    session, seq, out = argv[1], int(argv[2]), argv[3]
    tab = argv[4] if len(argv) > 4 else "trace"
    import tempfile
    os.environ.setdefault("SESSION_LENS_CONFIG_DIR", tempfile.mkdtemp(prefix="session-lens-shot-"))   # no recent.json
    qapp = QApplication.instance() or QApplication(["session-lens"])
    from app.ui.main_window import MainWindow
    w = MainWindow(page_size=200, theme_mode="light")
    w.move(0, 0)
    w.resize(1400, 860)
    w.show()
    w.open_store(session)
    if not wait(w.sessionLoaded):
        print("session did not load", file=sys.stderr)
        return 1
    row = next((i for i, r in enumerate(w.history.rows) if r.seq == seq), None)
    if row is None:
        print(f"no row with seq {seq}", file=sys.stderr)
        return 1
    w.select_row(row)
    aa = w.audit_action
    aa.act_audit.trigger()
    aw = aa.window
    loading_page = aw.stack.currentIndex() == 0
    if not wait(aa.opened):
        print("audit window did not load", file=sys.stderr)
        return 1
    aw.select_tab(tab)
    aw.resize(1000, 640)
    aw.move(590, 350)
    aw.raise_()
    aw.activateWindow()
    settle(600)
    screen = QGuiApplication.primaryScreen()
    pix = screen.grabWindow(0)
    if pix.isNull() or pix.toImage().pixelColor(5, 5) == pix.toImage().pixelColor(1595, 5) == \
            pix.toImage().pixelColor(800, 500):
        # no usable root-window grab: compose the two windows where they stand
        pix = QPixmap(screen.size())
        pix.fill()
        p = QPainter(pix)
        p.drawPixmap(w.frameGeometry().topLeft(), w.grab())
        p.drawPixmap(aw.frameGeometry().topLeft() + QPoint(0, 0), aw.grab())
        p.end()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if not pix.save(out, "PNG"):
        print(f"could not write {out}", file=sys.stderr)
        return 1
    print(json.dumps({"screenshot": out, "size": [pix.width(), pix.height()], "loadingPageShown": loading_page,
                      "traceEvent": aw.trace_panel.fields["event"].text(), "tab": tab,
                      "status": w.statusBar().currentMessage(), "auditTitle": aw.windowTitle()}))
    w.shutdown()
    qapp.processEvents()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
