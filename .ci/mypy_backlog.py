#!/usr/bin/env python3
"""Hold the MYPY BACKLOG in pyproject.toml to "only shrinks" (make check runs this after mypy).

Runs mypy once more with the backlog override removed and fails when a listed module has no errors
left (delete its line, so it stays clean from then on). Prints each listed module's current count.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    cfg = tomllib.loads(text)
    backlog = next(o["module"] for o in cfg["tool"]["mypy"]["overrides"] if o.get("ignore_errors"))
    without = re.sub(r"# MYPY BACKLOG.*?ignore_errors = true\n", "", text, flags=re.S)
    if without == text:
        print("mypy_backlog: no MYPY BACKLOG block found in pyproject.toml", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        conf = Path(tmp) / "pyproject.toml"
        conf.write_text(without, encoding="utf-8")
        r = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(conf),
                            "--cache-dir", str(ROOT / ".mypy_cache" / "backlog")],
                           cwd=ROOT, capture_output=True, text=True)
    counts: Counter[str] = Counter()
    for line in r.stdout.splitlines():
        m = re.match(r"(app/\S+?)\.py:\d+: error:", line)
        if m:
            mod = m.group(1).replace("/", ".").removesuffix(".__init__")
            counts[mod] += 1
    clean = [m for m in backlog if counts[m] == 0]
    print(f"mypy backlog: {len(backlog)} modules, {sum(counts[m] for m in backlog)} errors")
    if clean:
        print("mypy backlog: these pass now; delete their lines from the MYPY BACKLOG in pyproject.toml:",
              ", ".join(clean), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
