"""Build the demo Harness home shipped in resources/demo from real dsh fixture sessions.

    python -m app.tools.make_demo [FIXTURES_DIR] [OUT]

Rows are copied byte-for-byte; only header lines with snapshot placeholders get a real id,
cwd and createdAt (so the demo lists like a user's home).  It contains tool rounds, a failed
and retried attempt, an aborted turn, a crashed open tail, a subagent with lineage, a zstd
session and a fork made by Session Lens itself.
"""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from ..log.reader import LogReader
from ..store.forking import fork
from ..store.layout import session_path

PICKS = [
    # (fixture, new id (None: keep), title hint)
    ("examples/acp-agent/tests/snapshots/workspace-edit/session.jsonl", "demo-workspace-edit"),
    ("examples/acp-agent/tests/snapshots/empty-response-retry/session.jsonl", "demo-retry"),
    ("examples/acp-agent/tests/snapshots/cancel-tool-calls/session.jsonl", "demo-aborted"),
    ("examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl", "demo-parallel"),
    ("examples/headless-agent/tests/snapshots/compaction-recovery/session.jsonl", "demo-compaction"),
    ("examples/acp-agent/tests/snapshots/todo-write/session.jsonl", "demo-todo"),
    ("apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl", "demo-long-goal"),
    ("examples/acp-agent/tests/snapshots/subagent-fork-in-process/session.jsonl", None),
    ("examples/acp-agent/tests/snapshots/subagent-fork-in-process/session.1.jsonl", None),
]
CRASH = ("examples/headless-agent/tests/semantic-checkpoint-snapshots/tool-outcome-unknown/session.expected.jsonl",
         "demo-crashed", 6)        # keep header + seq 0..4: a tool call with no result, turn open
CWD = "/home/dev/demo-project"
T0 = 1796200000000


def _header(line: bytes, new_id, k: int) -> bytes:
    h = json.loads(line)
    if new_id:
        h["id"] = new_id
    if not isinstance(h.get("cwd"), str) or "{{" in h.get("cwd", "{{"):
        h["cwd"] = CWD
    if not h.get("createdAt"):
        h["createdAt"] = T0 + k * 3_600_000
    h.setdefault("delegationDepth", 0)
    return json.dumps(h, separators=(",", ":")).encode()


def build(fixtures: Path, out: Path) -> None:
    root = out / "sessions"
    if out.exists():
        shutil.rmtree(out)
    root.mkdir(parents=True)
    picks = list(PICKS)
    for k, (rel, new_id) in enumerate(picks):
        lines = (fixtures / rel).read_bytes().split(b"\n")
        head = _header(lines[0], new_id, k)
        h = json.loads(head)
        dst = Path(session_path(str(root), h["id"], h.get("cwd"), compressed=False))
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(b"\n".join([head] + lines[1:]))
    rel, new_id, keep = CRASH
    lines = (fixtures / rel).read_bytes().split(b"\n")
    head = _header(lines[0], new_id, 20)
    dst = Path(session_path(str(root), new_id, CWD, compressed=False))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(b"\n".join([head] + lines[1:keep]) + b"\n")
    # a zstd copy of one session (default compression of the dsh product bundle)
    try:
        from ..store.writer import write_session
        src = Path(session_path(str(root), "demo-parallel", CWD, compressed=False))
        lines = src.read_bytes().rstrip(b"\n").split(b"\n")
        h = json.loads(lines[0])
        h["id"] = "demo-zstd"
        body = lines[1:]
        batches = [body[i:i + 8] for i in range(0, len(body), 8)]
        write_session(session_path(str(root), "demo-zstd", CWD, compressed=True), h, batches, fmt="zstd")
    except ImportError:
        pass
    # a fork made by Session Lens: from the first completed turn of the long goal session
    parent = LogReader.open(session_path(str(root), "demo-long-goal", CWD, compressed=False))
    anchor = next(e.seq for e in parent.events() if e.type == "assistant/message")
    fork(parent, anchor, child_id="demo-long-goal-fork")


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    repo = Path(__file__).resolve().parents[2]
    fixtures = Path(argv[0]) if argv else repo.parent / "shared" / "fixtures" / "dsh"
    out = Path(argv[1]) if len(argv) > 1 else repo / "resources" / "demo"
    build(fixtures, out)
    print(f"demo store written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
