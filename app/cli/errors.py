"""The command line's errors: one hierarchy, each class carrying its exit code (README, *Command line*).

| exit | meaning | raised as |
|---|---|---|
| 0 | done (problems that still let a log open are listed in ``problems``) | — |
| 1 | the command ran but did not get what it waited for (a screenshot that timed out) | returned by the command |
| 2 | refused input or usage: a missing or special file, a log or store that cannot be opened, a bad option, a write that failed | :class:`CliError` and its subclasses but :class:`InternalError`; the core's and the store's errors in :func:`expected_errors` |
| 3 | internal error (a bug): anything else | :class:`InternalError`, any other exception |
| 130 | interrupted (Ctrl+C) | ``KeyboardInterrupt`` |

The core and the store know nothing of the command line, so their errors are matched here **by class**
(:func:`expected_errors`), never by name: renaming one of them breaks the import below, not an exit code.
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_REFUSED = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """An error the command line reports in one line on stderr, exiting with ``exit_code``."""
    exit_code = EXIT_REFUSED


class UsageError(CliError):
    """The arguments do not make a command (argparse's own errors exit 2 too)."""


class InputError(CliError):
    """A path, log or store that cannot be used as asked (missing, special, unreadable, refused)."""


class WriteError(CliError):
    """A write (fork, export, simulate) that was refused or failed; nothing half-written is left."""


class InternalError(CliError):
    """A bug: reported as ``internal error`` (``SESSION_LENS_DEBUG=1`` shows the traceback)."""
    exit_code = EXIT_INTERNAL


def expected_errors() -> tuple[type[BaseException], ...]:
    """The core's and the store's errors that mean refused input or a failed write (exit 2), by class."""
    import sqlite3

    from ..log.fold.fork import ForkError
    from ..log.source.sources import SourceChanged
    from ..store.faces import OpenError
    from ..store.fork_verify import ForkVerifyError
    from ..store.publish import PublishError
    from ..store.sqlite_schema import StoreError
    from ..store.writer import WriterError
    return (OpenError, StoreError, SourceChanged, PublishError, WriterError, ForkVerifyError, ForkError,
            sqlite3.DatabaseError, OverflowError, FileNotFoundError, ValueError, OSError)


def exit_code_of(e: BaseException) -> int:
    """The exit code the command line gives for ``e``."""
    if isinstance(e, CliError):
        return e.exit_code
    if isinstance(e, KeyboardInterrupt):
        return EXIT_INTERRUPTED
    if isinstance(e, expected_errors()):
        return EXIT_REFUSED
    return EXIT_INTERNAL
