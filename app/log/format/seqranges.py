"""Lists of seqs as people read them: runs as ranges ("735–1050"), long lists summarised.

A replacement chain of 130 seqs or a message citing 120 chunk seqs used to be printed in full
(a dozen lines per row).  :func:`seq_runs` groups a list into runs of consecutive seqs (repeats
dropped), :func:`seqs_text` writes them short, with the count when some are left out.
"""
from __future__ import annotations

from collections.abc import Iterable


def seq_runs(xs: Iterable[object]) -> list[tuple[int, int]]:
    """Runs of consecutive integer seqs, in the given order; a repeated seq is one seq."""
    runs: list[list[int]] = []
    seen: set[int] = set()
    for x in xs:
        if not isinstance(x, int) or isinstance(x, bool) or x in seen:
            continue
        seen.add(x)
        if runs and x == runs[-1][1] + 1:
            runs[-1][1] = x
        else:
            runs.append([x, x])
    return [(a, b) for a, b in runs]


def run_text(run: tuple[int, int]) -> str:
    a, b = run
    return f"{a}" if a == b else f"{a}–{b}"      # (seqs are names: no thousands separators)


def seqs_text(xs: Iterable[object], max_runs: int = 4) -> str:
    """``"735–1050"``, ``"4, 9, 12–14"``; past ``max_runs`` runs: the first ones, "…", the last
    one and how many seqs there are (``"2600, 3612, … 179398 (131 seqs)"``)."""
    runs = seq_runs(xs)
    if len(runs) <= max_runs:
        return ", ".join(map(run_text, runs))
    n = sum(b - a + 1 for a, b in runs)
    head = ", ".join(map(run_text, runs[:max(1, max_runs - 1)]))
    return f"{head}, … {run_text(runs[-1])} ({n:,} seqs)"
