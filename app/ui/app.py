"""Entry point of the desktop app (qasync event loop over Qt).

``run_gui(path, …)`` opens ``path`` (Harness home, project folder, session file) or the
demo store; with ``screenshot`` it waits until the tail page is installed (and an
optional ``select`` seq is shown), saves a PNG of the window and exits; ``wait_index``
also waits for the seq index of the open session and prints how it was built.

Diagnostics (app.store.diagnostics): faulthandler writes a fatal report, and warnings and errors go
to a rotating log, both in the user log folder; the next start offers the last fatal report
(app.ui.fatal_report).  The crash handler (app.ui.crash) is installed for the whole GUI run, from source
(``python -m app``, ``make run``) as in the packaged binary: an unexpected exception in a
Qt slot, a thread or an asyncio task writes a crash log and shows a dialog.
``SESSION_LENS_CRASH_TEST=1`` raises once from a Qt timer after start-up (to check that).
"""
from __future__ import annotations

import asyncio
import os
import sys
from typing import Optional

os.environ.setdefault("QT_API", "pyside6")

from PySide6.QtCore import QTimer  # noqa: E402  (PySide6 before qasync)
from PySide6.QtWidgets import QApplication  # noqa: E402

SCREENSHOT_TIMEOUT_S = 120.0
OUTLINE_WAIT_S = 30.0                 # (a screenshot waits this long for the whole-log pass)
SWITCH_INTERVAL_S = 0.0002


def configure_runtime() -> None:
    """Interpreter settings for a UI with Python worker threads.

    The UI thread re-enters Python for every paint/size callback; while a worker decodes
    pages it must win the GIL each time, and CPython makes a waiting thread wait up to the
    switch interval (5 ms by default) - per callback.  0.2 ms keeps frames short at a
    small cost to worker throughput (measured with bench/ui_bench.py).  The cyclic GC runs
    less often for old objects (loaded pages are moved out of its reach with gc.freeze, see
    workers.freeze_heap) and in smaller middle-generation steps (5 young collections, not
    20): a generation-1 collection in a worker held the GIL for 10-14 ms."""
    import gc
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    gc.set_threshold(2_000, 5, 50)
    from .memory import limit_arenas
    limit_arenas()           # worker threads share two malloc arenas (issue 36: idle per-thread heaps)


PORTAL_DESKTOPS = ("KDE", "LXQT", "DEEPIN", "BUDGIE", "HYPRLAND", "SWAY", "WLROOTS")
GTK_DESKTOPS = ("GNOME", "UNITY", "XFCE", "CINNAMON", "MATE", "PANTHEON", "X-CINNAMON")


def platform_theme(env) -> Optional[str]:
    """Qt platform theme giving the desktop's own file dialogs: the user's choice when set;
    the XDG portal when sandboxed (Flatpak, Snap) or on desktops whose native dialogs the
    bundled Qt cannot load (KDE, LXQt, tiling Wayland compositors: the portal serves their
    dialog); GTK on GNOME-like desktops.  None: leave Qt's default (no desktop at all)."""
    if env.get("QT_QPA_PLATFORMTHEME"):
        return None
    if env.get("FLATPAK_ID") or env.get("SNAP"):
        return "xdgdesktopportal"
    desk = env.get("XDG_CURRENT_DESKTOP", "").upper().split(":")
    if any(d in GTK_DESKTOPS for d in desk):
        return "gtk3"
    if env.get("DBUS_SESSION_BUS_ADDRESS") and any(d in PORTAL_DESKTOPS for d in desk):
        return "xdgdesktopportal"
    return None


def make_app(argv=None) -> QApplication:
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        app = existing
    else:
        theme = platform_theme(os.environ)
        if theme:
            os.environ["QT_QPA_PLATFORMTHEME"] = theme       # read when the application starts
        app = QApplication(list(argv or sys.argv[:1]))
    app.setApplicationName("Session Lens")
    app.setOrganizationName("session-lens")
    app.setStyle("Fusion")
    return app


def parse_size(text: Optional[str]) -> Optional[tuple[int, int]]:
    if not text:
        return None
    w, _, h = text.lower().partition("x")
    return max(320, int(w)), max(240, int(h))


async def _wait_signal(signals, timeout: float):
    """Wait for the first of ``signals`` to fire (returns its args) or the timeout (None)."""
    loop = asyncio.get_event_loop()
    fut = loop.create_future()

    def fire(*args):
        if not fut.done():
            fut.set_result(args)
    # (no disconnect afterwards: disconnecting a Python closure from a Qt signal trips a
    # PySide6 refcount bug at exit; a fired-after-done callback is a no-op)
    for s in signals:
        s.connect(fire)
    try:
        return await asyncio.wait_for(fut, timeout)
    except TimeoutError:
        return None


async def _settle(app, ms: int = 150):
    for _ in range(3):
        app.processEvents()
        await asyncio.sleep(ms / 3000)


def steady_exposure(win) -> None:
    """Older loaded rows slide into the list a whole chunk at a time (a screenshot): the window's
    usual exposure builds as many row documents as fit in a time budget per loop turn, so how many
    rows the list held when the window settled (the status bar's "N rows") varied from run to run
    with the machine's load (57, 59 or 62 of the demo's 70)."""
    model = win.history
    warm = model.prepare_rows
    if warm is not None:
        model.prepare_rows = lambda rows, _budget: warm(rows, float("inf"))


async def _until_settled(app, win, timeout: float) -> bool:
    """Run the loop until the history view is settled (no page read, older-row fill, stick-to-bottom
    or newer-row check pending) and no page job runs; False when ``timeout`` s passed first."""
    loop = asyncio.get_event_loop()
    end = loop.time() + timeout
    while not (win.view.settled() and not win.history.loading):
        if loop.time() > end:
            return False
        app.processEvents()
        await asyncio.sleep(0.01)
    return True


def _crash_test() -> None:
    raise RuntimeError("SESSION_LENS_CRASH_TEST: deliberate crash from a Qt slot")


async def _wait_index(win, timeout: float) -> int:
    """Wait until the open session's seq index is built; print one line saying how (0) or why not (1)."""
    h = win.history
    loop = asyncio.get_event_loop()
    end = loop.time() + timeout
    while h.index_state not in ("ready", "failed") and loop.time() < end:
        await asyncio.sleep(0.02)
    s = h.stats()
    if h.index_state != "ready":
        print(f"session-lens gui: index {h.index_state} (mode {h.index_mode})", file=sys.stderr)
        return 1
    print(f"index: ready, mode {h.index_mode}, {s['indexedEvents']} events, {h.index_elapsed * 1000:.0f} ms")
    return 0


async def _wait_outline(win, timeout: float) -> None:
    """Wait (at most ``timeout`` s) for the whole-log pass, so a screenshot shows what it adds to the
    banner (dsh's refusal, the problem count); a pass still running then is left running."""
    ga = getattr(win, "go_actions", None)
    job = getattr(ga, "outline_job", None)
    if ga is not None and ga.outline is None and job is not None and not job.finished:
        await _wait_signal([ga.outlineReady, job.failed], timeout)


_first_paint_marked: set[int] = set()       # id() of the windows already marked (one per process)


def _mark_first_paint(win) -> None:
    """``SESSION_LENS_MARK_FIRST_PAINT=1`` (bench/launch.py): paint the window with its first tail page
    now and print the wall-clock time of that and the process's CPU time so far, once."""
    if id(win) in _first_paint_marked:
        return
    _first_paint_marked.add(id(win))
    win.repaint()
    import time
    print(f"first-paint {time.time():.6f} {time.process_time():.4f}", flush=True)   # wall clock, CPU so far


async def _main(app, crash, path, screenshot, physical, attempts, select, size, page_size, theme, request,
                wait_index=False):
    crash.attach_loop(asyncio.get_event_loop())
    if os.environ.get("SESSION_LENS_CRASH_TEST"):
        QTimer.singleShot(0, _crash_test)
    from .main_window import MainWindow, demo_available
    if theme == "auto":                       # View › Theme, as chosen last time
        from . import settings
        saved = settings.load().get("theme")
        theme = saved if saved in ("auto", "light", "dark") else theme
    win = MainWindow(page_size=page_size, theme_mode=theme)
    if screenshot:
        win.frame_actions.tour_enabled = False
        steady_exposure(win)
    if size:
        win.resize(*size)
    win.act_physical.setChecked(bool(physical))
    win.act_attempts.setChecked(bool(attempts))
    win.show()
    offered = None
    if not screenshot and not os.environ.get("SESSION_LENS_NO_CRASH_DIALOG"):
        from .fatal_report import offer_fatal_reports       # the previous run's fatal crash, once
        offered = asyncio.ensure_future(offer_fatal_reports(win))
    done = asyncio.get_event_loop().create_future()

    def last_closed() -> None:
        if not done.done():
            done.set_result(0)
    app.lastWindowClosed.connect(last_closed)
    waiters = [win.sessionLoaded, win.storeFailed]
    if os.environ.get("SESSION_LENS_MARK_FIRST_PAINT"):
        win.sessionLoaded.connect(lambda: _mark_first_paint(win))
    if path:
        QTimer.singleShot(0, lambda: win.open_store(path))
    else:
        QTimer.singleShot(0, win.open_default)
    if screenshot:
        rc = 0
        if path or demo_available():
            got = await _wait_signal(waiters, SCREENSHOT_TIMEOUT_S)
            if got is None:
                print("session-lens gui: timed out waiting for the tail page", file=sys.stderr)
                rc = 1
            elif wait_index:
                rc = max(rc, await _wait_index(win, SCREENSHOT_TIMEOUT_S))
            if got is not None:
                await _wait_outline(win, OUTLINE_WAIT_S)
        await _settle(app)
        if select is not None and rc == 0:
            QTimer.singleShot(0, lambda: win.goto_seq(int(select)))
            if await _wait_signal([win.seqSelected], SCREENSHOT_TIMEOUT_S) is None:
                print(f"session-lens gui: timed out selecting seq {select}", file=sys.stderr)
                rc = 1
            if request:
                win.show_request_tab()
                if win.request_view.busy():          # (a row with no request to compute: the tab says why)
                    await _wait_signal([win.request_view.computed, win.request_view.failed], SCREENSHOT_TIMEOUT_S)
        await _settle(app, 300)
        if not await _until_settled(app, win, SCREENSHOT_TIMEOUT_S):
            print("session-lens gui: timed out waiting for the history to settle", file=sys.stderr)
            rc = 1
        img = win.grab()
        ok = img.save(screenshot)
        win.shutdown()
        win.close()
        if not ok:
            print(f"session-lens gui: could not write {screenshot}", file=sys.stderr)
            return 1
        print(screenshot)
        return rc
    rc = await done
    if offered is not None and not offered.done():
        offered.cancel()
    win.shutdown()
    return rc


def run_gui(path: Optional[str] = None, screenshot: Optional[str] = None, physical: bool = False,
            attempts: bool = False, select: Optional[int] = None, size: Optional[str] = None,
            page_size: int = 50, theme: str = "auto", request: bool = False, wait_index: bool = False) -> int:
    os.environ.setdefault("LANG", "C.UTF-8")
    configure_runtime()
    from ..store import diagnostics
    diagnostics.setup("window")          # faulthandler and the rotating log (workers: childproc.worker_main)
    app = make_app()
    app.setQuitOnLastWindowClosed(False)
    from .crash import install_crash_handler
    crash = install_crash_handler(app)
    import qasync  # noqa: F401  (after PySide6)
    probe = os.environ.get("SESSION_LENS_PROBE")      # a measuring run (app.ui.probe; package-test)
    try:
        if probe:
            from .probe import run_probe
            return int(qasync.run(run_probe(app, probe, path)) or 0)
        return int(qasync.run(_main(app, crash, path, screenshot, physical, attempts, select, parse_size(size),
                                    page_size, theme, request, wait_index)) or 0)
    except Exception:
        crash.show_dialog = False          # the loop is gone: log it, then let the traceback through
        exc_type, exc, tb = sys.exc_info()
        crash.handle(exc_type, exc, tb, where="event loop")
        raise
    finally:
        crash.uninstall()


if __name__ == "__main__":
    sys.exit(run_gui(sys.argv[1] if len(sys.argv) > 1 else None))
