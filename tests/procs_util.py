"""Helpers the tests share about processes (Linux /proc)."""
from __future__ import annotations

import os
from pathlib import Path


def child_pids() -> list[int]:
    """Process ids of this process's children (every thread's ``children`` list)."""
    out: list[int] = []
    for f in Path(f"/proc/{os.getpid()}/task").glob("*/children"):
        try:
            out += [int(x) for x in f.read_text().split()]
        except OSError:                  # (that thread ended meanwhile)
            pass
    return out
