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


def main():
    from app.store.childproc import WORKER_FLAG, worker_main
    if sys.argv[1:2] == [WORKER_FLAG]:         # every worker process runs this binary (one launcher)
        return worker_main(sys.argv[2:])
    os.environ.setdefault("LANG", "C.UTF-8")
    os.environ.setdefault("QT_API", "pyside6")
    from app.cli.main import main as cli_main
    # the GUI installs the crash handler itself (app.ui.app.run_gui), as when run from source
    return cli_main(route(sys.argv[1:]))


if __name__ == "__main__":
    sys.exit(main())
