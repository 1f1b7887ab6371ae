"""Entry point of the packaged ``session-lens`` binary (PyInstaller).

Same as ``python -m app``, plus what a launcher passes: the desktop entry runs
``session-lens %F`` (one or more file paths, no subcommand), so a first argument that is
not a subcommand or an option is opened in the GUI.  ``gui`` opens one store; extra paths
are reported and ignored.
"""
import os
import sys


def route(argv):
    from app.cli.main import COMMANDS, _load_plugins
    _load_plugins()
    if not argv or argv[0].startswith("-") or argv[0] in COMMANDS:
        return argv
    # %F passes the files first; the gui opens one store, the other paths are reported and skipped
    i = 1
    while i < len(argv) and not argv[i].startswith("-"):
        i += 1
    if i > 1:
        print(f"session-lens: opening {argv[0]}; ignoring {i - 1} more path(s)", file=sys.stderr)
    return ["gui", argv[0], *argv[i:]]


def install_crash_reports():
    """The GUI reports unexpected exceptions (crash dialog + log under user_log_dir) instead of vanishing.

    SESSION_LENS_CRASH_TEST=1 raises once from a Qt timer after start-up (package_test.sh checks the log)."""
    from app.ui import first_run
    first_run.install_crash_handler()
    if os.environ.get("SESSION_LENS_CRASH_TEST"):
        import app.ui.app as ui_app
        make_app = ui_app.make_app

        def make_app_then_crash(*a, **k):
            qapp = make_app(*a, **k)
            from PySide6.QtCore import QTimer

            def boom():
                raise RuntimeError("SESSION_LENS_CRASH_TEST: deliberate crash from a Qt slot")
            QTimer.singleShot(0, boom)
            return qapp
        ui_app.make_app = make_app_then_crash


def main():
    from app.store.indexer import CHILD_FLAG
    if sys.argv[1:2] == [CHILD_FLAG]:          # the GUI's index scan runs in a child process
        from app.store.indexer import child_main
        return child_main(sys.argv[2:])
    os.environ.setdefault("LANG", "C.UTF-8")
    os.environ.setdefault("QT_API", "pyside6")
    from app.cli.main import main as cli_main
    argv = route(sys.argv[1:])
    if not argv or argv[0] == "gui" or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        install_crash_reports()
    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
