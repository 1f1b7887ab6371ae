"""Paths to the shared dsh fixtures and small helpers for core tests."""
from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO.parent / "shared" / "fixtures" / "dsh"


class WorkerJob:
    """What a worker body (``app.ui.history.pages._open_job`` …) sees of its job when a test calls
    it directly, outside the job runner: never cancelled, progress ignored."""
    name = "test"
    cancelled = False

    def check(self):
        pass

    def report(self, *progress):
        pass


def fixture(rel: str) -> Path:
    p = FIXTURES / rel
    assert p.exists(), f"missing fixture {p}"
    return p


def session_files(base: Path = FIXTURES) -> list[Path]:
    """Every fixture file under ``base`` whose first line is a session header (stores, not event streams)."""
    out = []
    for p in sorted(base.rglob("*.jsonl")):
        with open(p, "rb") as f:
            first = f.readline()
        try:
            if json.loads(first).get("type") == "session":
                out.append(p)
        except ValueError:
            pass
    return out


def manifest_counts() -> dict:
    """rel path -> (rows, events) from the corpus MANIFEST table."""
    text = (FIXTURES / "MANIFEST.md").read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"^\| `([^`]+)` \| (\d+) \| (\d+) \| (\d+) \|", text, re.M):
        out[m.group(1)] = (int(m.group(3)), int(m.group(4)))
    return out


def rel(p: Path) -> str:
    return str(p.relative_to(FIXTURES))


def raw_rows(p: Path) -> list[dict]:
    """The stored rows after the header, as JSON objects (fixtures are all valid JSON)."""
    lines = p.read_bytes().split(b"\n")
    return [json.loads(l) for l in lines[1:] if l.strip()]


def write_log(path, rows, header=None, session_id: str = "s0", trailing: bool = True) -> Path:
    """A minimal v0 session file built by a test: ``rows`` are dicts (JSON-encoded compactly)
    or bytes (written as is); the header defaults to a top-level v0 header."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    hdr = header if header is not None else {"type": "session", "version": 0, "id": session_id,
                                             "createdAt": 1, "delegationDepth": 0}
    lines = [json.dumps(hdr, separators=(",", ":")).encode()]
    for r in rows:
        lines.append(r if isinstance(r, bytes) else json.dumps(r, separators=(",", ":")).encode())
    path.write_bytes(b"\n".join(lines) + (b"\n" if trailing else b""))
    return path


def ev(seq: int, typ: str, data, **extra) -> dict:
    """One v0 event row."""
    return {"type": typ, "seq": seq, "time": 1000 + seq, "data": data, **extra}


def fast_sample(cases: list, keep: int = 1, every: int = 0, spread: int = 0) -> list:
    """``cases`` as pytest params where only a sample runs in ``make test-fast``: the first ``keep``,
    with ``every`` each ``every``-th, with ``spread`` that many spread evenly over the list (the last
    one included); the rest are marked slow (the full suite runs them all)."""
    import pytest
    cases = list(cases)
    n = len(cases)
    picks = {round(k * (n - 1) / (spread - 1)) for k in range(spread)} if spread > 1 else set()
    out = []
    for i, c in enumerate(cases):
        fast = i < keep or (every and i % every == 0) or i in picks
        values = c if isinstance(c, tuple) else (c,)
        out.append(pytest.param(*values, marks=() if fast else pytest.mark.slow))
    return out
