"""A first word that is neither a command nor a path on disk: a typo, not a folder to open.

``session-lens doctr`` used to start the window on a path that does not exist.  Now it prints the
usage with the nearest command and exits 2 (argparse's convention for a usage error).
"""
from __future__ import annotations

import difflib
import os
import sys


def nearest(word: str, commands) -> str | None:
    """The registered command closest to ``word`` (None when nothing is close)."""
    names = sorted(commands)
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.5)
    if close:
        return close[0]
    starts = [n for n in names if n.startswith(word[:3])] if len(word) >= 3 else []
    return starts[0] if starts else None


def refuse_unknown(parser, word: str, commands) -> int | None:
    """2 after printing the usage when ``word`` is neither a command nor an existing path; else None."""
    if not word or word.startswith("-") or word in commands or os.path.lexists(word):
        return None
    from .termtext import term_safe
    parser.print_usage(sys.stderr)
    hint = nearest(word, commands)
    line = f"session-lens: '{word}' is neither a command nor a path"
    line += f"; did you mean '{hint}'?" if hint else f"; commands: {', '.join(sorted(commands))}"
    sys.stderr.write(term_safe(line) + "\n")
    return 2
