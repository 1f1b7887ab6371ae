"""Build the demo Harness home shipped in resources/demo, reproducibly, from real dsh logs.

    python -m app.tools.make_demo [FIXTURES_ROOT] [OUT]

FIXTURES_ROOT is the folder holding ``dsh`` (v0 corpus) and ``dsh-next`` (v2–v4 corpus);
default ``../shared/fixtures``.  The home has the real layout
``sessions/<project-key>/<session id>/<generation file>`` and shows every capability on the
formats dsh writes today:

- v4 (what current dsh writes): most sessions as ``session.v4.jsonl.zstd``, some as plain
  ``session.v4.jsonl``.  Real dsh logs (dsh-next) give tool rounds, a failed attempt retried
  after an image offload, subagents with lineage, a user-cancelled turn, compaction with a
  shadowed message, developer/system messages in the exact request.  Where no real log shows a
  capability the generator (:mod:`app.tools.synth`, version 4) adds it: a long multi-page
  session, a crashed open tail, retried model calls; and Session Lens itself forks the long
  session (a v4 child, :mod:`app.store.forking`).
- Older homes: a session folder with an older generation beside the newest (v0 ``session.jsonl``
  + ``session.v4.jsonl`` of the same synthesized session; dsh's own v2 + v3 of ``plain-turn``),
  v3 sessions (the ``preview-*`` home files), and a few v0 sessions kept as legacy
  (``demo-long-goal`` with its Session Lens fork, ``demo-todo``, ``demo-zstd``, ``demo-crashed``).

Today's dsh opens every session here (``dshWouldRefuse`` false; ``tests/test_demo_store.py``) but one:
v4 rows get the message sources the newest dsh writes (:func:`current_sources`: no retired
``{kind: "plugin"}``), and v0/v2 rows open their step before the request header and the first
message (:func:`step_first`), as dsh's own v0 snapshots do, so its v2->v3 migration takes them.
``demo-refused-by-dsh`` is kept on purpose to show a refusal: an early-v4 log as dsh wrote it.

Stored rows of files with full envelopes are copied byte for byte.  dsh's snapshot fixtures are
envelope-free and normalized: they get ``seq`` (row index - 1) and a real ``time`` (following
their streams' real clocks where they have them), a real id, cwd and createdAt, and the
snapshot placeholders (``{{session:1}}``, ``{{message:N}}``, ``{{system}}``, ``{{tools}}``,
``{{cwd}}`` …) are replaced by real values.  Forks and the generator are pinned to fixed
clocks and seeds, so two builds are byte-identical.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
import types
from pathlib import Path
from unittest import mock

from ..log.index.reader import LogReader
from ..log.source.zstdframes import encode_session
from ..store import forking
from ..store.discovery import session_info
from ..store.layout import session_path
from .synth import SessionSynth, batches

CWD = "/home/dev/demo-project"
T0 = 1796200000000                 # 2026-12-01: createdAt of the normalized sessions (+ k hours)
HOUR = 3_600_000
NEXT = "dsh-next"
REFUSED = "demo-refused-by-dsh"     # the one demo session the newest dsh refuses, on purpose
V0 = "dsh"

SYSTEM = ("You are DeepSeek Harness, a coding agent working in the user's project. Use the tools to read, "
          "edit and run code; keep answers short and say what you changed.")
# the tool names a current dsh lists in request headers (as in dsh-next's advanced/session.v4.jsonl)
TOOLS = ["bash", "create_goal", "edit", "exit_plan_mode", "get_goal", "glob", "grep", "interrupt_agent",
         "job_kill", "job_list", "job_output", "list_agents", "read", "read_image", "send_message", "skill",
         "subagent", "subagent_fork", "todo_write", "update_goal", "web_fetch", "web_search", "workflow", "write"]

_P = "0217po+deepseek-harness@"
_H = "Hebilicious+deepseek-harness@4934042113/snapshots/"
_Z = "zsagi1368+deepseek-harness-zDSH@"
_VFS = "packages/experimental/webworker-runtime/tests/fixtures/vfs-example/home/sessions/--dsh-workspace--/"
_SUITE = "packages/test-support/session-snapshot/tests/fixtures/suite/"

# Normalized dsh snapshot logs: (fixture under dsh-next, placeholder ids -> demo ids, generation file name)
SNAPSHOTS = [
    (_P + "f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl",
     {"session:1": "demo-v4-tool-turn"}, "session.v4.jsonl.zstd"),
    (_P + "321a6fa740/snapshots/acp/image-compaction/session.v4.jsonl",
     {"session:1": "demo-v4-image-compaction"}, "session.v4.jsonl.zstd"),
    (_P + "f4a32dbd0a/scripts/snapshots/python-sdk-single-exe/advanced/session.v4.jsonl",
     {"parent": "demo-v4-advanced", "child-1": "demo-v4-advanced-child-1", "child-2": "demo-v4-advanced-child-2"},
     "session.v4.jsonl.zstd"),
    (_P + "bf29247fad/scripts/snapshots/python-sdk-single-exe/advanced/session.1.v4.jsonl",
     {"parent": "demo-v4-advanced", "child-1": "demo-v4-advanced-child-1"}, "session.v4.jsonl.zstd"),
    (_P + "60f2b1a2c9/scripts/snapshots/python-sdk-single-exe/advanced/session.2.v4.jsonl",
     {"parent": "demo-v4-advanced", "child-2": "demo-v4-advanced-child-2"}, "session.v4.jsonl.zstd"),
    (_H + "acp/cancel-tool-calls/session.v4.jsonl", {"session:1": "demo-v4-cancel"}, "session.v4.jsonl.zstd"),
    (_H + "session/dynamic-tool-prompt-updates/session.v4.jsonl", {"session:1": "demo-v4-developer"},
     "session.v4.jsonl"),
    (_P + "321a6fa740/snapshots/session/compaction-output-reserve/session.v4.jsonl",
     {"session:1": "demo-v4-compaction"}, "session.v4.jsonl"),
    (_P + "507e0e6dfe/snapshots/session/team-targets/session.v3.jsonl",
     {"session:1": "demo-v3-team-targets"}, "session.v3.jsonl"),
    # one session in two generations, as dsh migrated it (v2 stays beside the v3 it wrote)
    (_Z + "30f71de5f3/" + _SUITE + "plain-turn/session.v2.jsonl", {"session:1": "demo-plain-turn"},
     "session.v2.jsonl"),
    (_Z + "d128b28263/" + _SUITE + "plain-turn/session.v3.jsonl", {"session:1": "demo-plain-turn"},
     "session.v3.jsonl"),
    # the one session deliberately kept as dsh refuses it: an early-v4 log as written (its system message
    # still has the retired {kind: "plugin"} source; the window shows the "newest dsh refuses this" banner)
    (_P + "f4a32dbd0a/snapshots/session/tool-call-turn/session.v4.jsonl", {"session:1": REFUSED},
     "session.v4.jsonl"),
]
# Real home files with full envelopes: copied byte for byte into their own project folder (their v2 twins
# are left out: they put the user message before the first step, which dsh's v2->v3 migration refuses)
HOME_FILES = [
    _Z + "30f71de5f3/" + _VFS + "preview-showcase/session.v3.jsonl",
    _Z + "a18d8a996c/" + _VFS + "preview-follow-up-builder/session.v3.jsonl",
    _Z + "d128b28263/" + _VFS + "preview-architecture-review/session.v3.jsonl",
]
# v0 sessions kept as legacy (dsh 0.1.0-0.1.1 homes): (fixture under dsh, id, file, rows kept, createdAt
# when neither the header nor the events have a real clock)
LEGACY = [
    ("examples/acp-agent/tests/snapshots/todo-write/session.jsonl", "demo-todo", "session.jsonl", None, T0),
    ("apps/web/tests/snapshots/goal-multi-turn-actions/session.jsonl", "demo-long-goal", "session.jsonl", None, T0),
    ("examples/acp-agent/tests/snapshots/parallel-tool-calls/session.jsonl", "demo-zstd", "session.jsonl.zstd",
     None, T0),
    # a v0 crash: header + seq 0..4 of dsh's checkpoint snapshot (a tool call with no result, turn open)
    ("examples/headless-agent/tests/semantic-checkpoint-snapshots/tool-outcome-unknown/session.expected.jsonl",
     "demo-crashed", "session.jsonl", 6, T0 + 20 * HOUR),
]

_PLACEHOLDER = re.compile(r"\{\{([A-Za-z0-9:_-]+)\}\}")
# dsh's rename of retired plugin message sources (spec-versions §4.4); a plugin name not listed becomes its own
# direct kind, as the newest dsh writes it (dsh-next 0217po@60f2b1a2c9 advanced child: `serial-created-fixture`)
_RENAMED = {"compact": "compact-checkpoint", "tools-code-mode": "ptc-mode", "tools-ptc": "ptc-mode",
            "dsh-compaction-basic": "compact-basic"}
_SURFACE = {"user/message", "assistant/message", "tool/result", "system/message"}


def current_sources(o):
    """A v4 row as the newest dsh writes it: every retired ``{kind: "plugin", plugin: P}`` message source gets
    its direct kind (the other keys kept in place); ``@deepseek-ai/dsh-system-prompt`` is ``system-prompt``
    on a system message, ``runtime-context`` on any other."""
    if isinstance(o, list):
        return [current_sources(v) for v in o]
    if not isinstance(o, dict):
        return o
    out = {k: current_sources(v) for k, v in o.items()}
    src = out.get("source")
    if isinstance(src, dict) and src.get("kind") == "plugin" and isinstance(src.get("plugin"), str):
        p = src["plugin"]
        kind = (("system-prompt" if out.get("role") == "system" else "runtime-context")
                if p == "@deepseek-ai/dsh-system-prompt" else _RENAMED.get(p, p))
        out["source"] = {"kind": kind, **{k: v for k, v in src.items() if k not in ("kind", "plugin")}}
    return out


def step_first(rows: list) -> list:
    """Rows (dicts, in order) with each turn's first ``step/start`` moved up to right after its
    ``turn/start`` when a request header or a surface row came before it: dsh's v2->v3 migration (which
    the newest dsh runs on v0-v2 logs) refuses a surface row before the first step and a prompt set outside
    a step; dsh's own v0 snapshots write the step first."""
    out = list(rows)
    for i, r in enumerate(out):
        if r.get("type") != "turn/start":
            continue
        for j in range(i + 1, len(out)):
            t = out[j].get("type")
            if t in ("turn/start", "step/start"):
                if t == "step/start" and any(x.get("type") in _SURFACE or x.get("type") == "request/header"
                                             for x in out[i + 1:j]):
                    out.insert(i + 1, out.pop(j))
                break
    return out


def _stream_end(data) -> int:
    """The latest real clock (ms) of the embedded stream records in ``data``, else 0."""
    best = 0
    for rec in (data.get("stream") if isinstance(data, dict) else None) or []:
        t0 = rec.get("time0") if isinstance(rec, dict) else None
        if isinstance(t0, int) and t0 >= 10 ** 12:
            best = max(best, t0 + sum(d for d in rec.get("dt") or [] if isinstance(d, int)))
    return best


def _real_times(data, t: int) -> None:
    """Snapshot streams with a zeroed clock (``time0`` 0) get the row's time."""
    for rec in (data.get("stream") if isinstance(data, dict) else None) or []:
        if isinstance(rec, dict) and isinstance(rec.get("time0"), int) and rec["time0"] < 10 ** 12:
            rec["time0"] = t


def _replace(o, ids: dict, sid: str):
    if isinstance(o, dict):
        return {k: _replace(v, ids, sid) for k, v in o.items()}
    if isinstance(o, list):
        return [_replace(v, ids, sid) for v in o]
    if isinstance(o, str) and "{{" in o:
        if o == "{{tools}}":
            return list(TOOLS)
        if o == "{{system}}":
            return SYSTEM

        def one(m):
            name = m.group(1)
            if name in ids:
                return ids[name]
            if name == "cwd":
                return CWD
            if name == "system":
                return SYSTEM
            kind, _, n = name.partition(":")
            kind = {"message": "msg", "id": "compaction"}.get(kind, kind)
            return f"{sid}-{kind}-{n}" if n else f"{sid}-{kind}"
        return _PLACEHOLDER.sub(one, o)
    return o


def normalize(lines: list, ids: dict, created_at: int, born: dict) -> tuple[dict, list]:
    """An envelope-free snapshot log -> (header, [row dicts]) with seq/time and real values.

    ``born``: child id -> creation time, filled from the parent's ``subagent/catalog`` rows (whose
    zeroed ``childCreatedAt`` gets the catalog row's time) and used as the child's createdAt."""
    header = json.loads(lines[0])
    sid = _replace(header["id"], ids, "demo")
    created_at = born.get(sid, created_at)
    header = _replace(header, ids, sid)
    rows = [_replace(json.loads(x), ids, sid) for x in lines[1:] if x.strip()]
    if header.get("version") in (0, 1, 2):
        rows = step_first(rows)
    elif header.get("version") == 4 and sid != REFUSED:
        rows = current_sources(rows)
    real = [t for r in rows if (t := _stream_end(r.get("data")))]
    t = min(real) - 2_000 if real else created_at + 1_000
    if not isinstance(header.get("createdAt"), int) or header["createdAt"] < 10 ** 12 or header["createdAt"] > t:
        header["createdAt"] = min(created_at, t - 1_000)
    for i, r in enumerate(rows):
        end = _stream_end(r.get("data"))
        t = max(t + 40, end)
        _real_times(r.get("data"), t)
        r.pop("seq", None)
        r.pop("time", None)
        r["seq"] = i
        r["time"] = t
        d = r.get("data")
        if r["type"] == "subagent/catalog" and isinstance(d, dict) and d.get("childCreatedAt") == 0:
            d["childCreatedAt"] = born[d.get("childId")] = t - 300
    return header, rows


def _dump(o) -> bytes:
    return json.dumps(o, ensure_ascii=False, separators=(",", ":")).encode()


def _write(path: Path, header_line: bytes, row_batches: list) -> None:
    """A plain or zstd session file (one zstd frame per batch, the header its own frame)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.endswith(".zstd"):
        path.write_bytes(encode_session(header_line, [b"".join(b) for b in row_batches if b]))
    else:
        path.write_bytes(header_line + b"".join(line for b in row_batches for line in b))


def _session_file(root: Path, header: dict, name: str) -> Path:
    d = Path(session_path(str(root), header["id"], header.get("cwd"), compressed=False)).parent
    return d / name


def _synth(root: Path, synth: SessionSynth, name: str, **kw) -> Path:
    """A generated session (v0 or v4) as ``name`` in its session folder."""
    out = list(batches(synth, **kw))
    path = _session_file(root, synth.header(), name)
    _write(path, out[0][0], out[1:])
    return path


def _fork(parent_path: Path, nth_message: int, child_id: str, now: int, home: Path) -> Path:
    """A fork made by Session Lens (in the parent's format) after the parent's nth assistant message, into
    ``home`` (named: a fork of the shipped demo would otherwise go to the user's demo fork store)."""
    parent = LogReader.open(str(parent_path))
    anchors = [e.seq for e in parent.events() if e.type == "assistant/message"]
    with mock.patch.object(forking, "time", types.SimpleNamespace(time=lambda: now / 1000)):
        res = forking.fork(parent, anchors[nth_message], out_store=str(home), child_id=child_id)
    return Path(res["child"])


def _created(h: dict, first_row: bytes, fallback: int) -> None:
    """A v0 snapshot header with createdAt 0 is created just before its first event (or at
    ``fallback`` when its events have no real clock either)."""
    if not h.get("createdAt"):
        t = json.loads(first_row).get("time")
        h["createdAt"] = t - 2_000 if isinstance(t, int) and t >= 10 ** 12 else fallback
    h.setdefault("delegationDepth", 0)


def _step_first_v0(lines: list) -> list:
    """Stored v0 rows (bytes) shaped by :func:`step_first`; a row that moves gets its new seq (the others
    keep their bytes)."""
    rows = [json.loads(x) for x in lines]
    moved = step_first(rows)
    out = []
    for i, (x, r) in enumerate(zip(lines, rows)):
        m = moved[i]
        if m is r:
            out.append(x)
        else:
            out.append(_dump({**m, "seq": r["seq"]}))
    return out


def build(fixtures: Path, out: Path) -> None:
    root = out / "sessions"
    if out.exists():
        shutil.rmtree(out)
    root.mkdir(parents=True)
    # dsh's own v2-v4 snapshot logs, normalized
    born: dict = {}
    for k, (rel, ids, name) in enumerate(SNAPSHOTS):
        lines = (fixtures / NEXT / rel).read_bytes().decode("utf-8").split("\n")
        header, rows = normalize(lines, ids, T0 + k * HOUR, born)
        header["cwd"] = CWD if header.get("cwd") in (None, "/rec/plain-cwd") else header["cwd"]
        body = [_dump(r) + b"\n" for r in rows]
        per_turn, cur = [], []
        for r, line in zip(rows, body):          # one zstd frame per turn (dsh writes batch frames)
            cur.append(line)
            if r["type"] in ("turn/end", "step/end"):
                per_turn.append(cur)
                cur = []
        per_turn.append(cur)
        _write(_session_file(root, header, name), _dump(header) + b"\n", per_turn)
    # real home files (full envelopes) byte for byte
    for rel in HOME_FILES:
        src = fixtures / NEXT / rel
        dst = root / "--dsh-workspace--" / src.parent.name / src.name
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.write_bytes(src.read_bytes())
    # generated v4 where no real log shows it
    # (the long session overflows its context window: compaction recovery as dsh writes it in v4)
    long_synth = SessionSynth(41, "demo-v4-long", CWD, T0 - 30 * 24 * HOUR, version=4, result_scale=0.25)
    long_path = _synth(root, long_synth, "session.v4.jsonl.zstd", turns=250, batch_events=(24, 160))
    _synth(root, SessionSynth(12, "demo-v4-crashed", CWD, T0 + 20 * HOUR, version=4, p_retry=0.5),
           "session.v4.jsonl.zstd", turns=4, crash=True, batch_events=(4, 24))
    # an older generation beside the newest: the same session as v0 and as v4 (dsh migrates on open)
    for v, name in ((0, "session.jsonl"), (4, "session.v4.jsonl")):
        _synth(root, SessionSynth(23, "demo-migrated", CWD, T0 - 2 * 24 * HOUR, version=v, p_retry=0.35,
                                result_scale=0.3),
               name, turns=6, batch_events=(4, 24))
    # a fork made by Session Lens, in v4 (zstd like its parent), after the long session's 5th answer
    _fork(long_path, 4, "demo-v4-long-fork", T0 + 22 * HOUR, out)
    # v0 legacy sessions
    for rel, sid, name, keep, fallback in LEGACY:
        rows0 = (fixtures / V0 / rel).read_bytes().rstrip(b"\n").split(b"\n")
        h = json.loads(rows0[0])
        h["id"], h["cwd"] = sid, CWD
        _created(h, rows0[1], fallback)
        body = [x + b"\n" for x in _step_first_v0(rows0[1:keep])]
        _write(_session_file(root, h, name), _dump(h) + b"\n", [body[i:i + 8] for i in range(0, len(body), 8)])
    _fork(_session_file(root, {"id": "demo-long-goal", "cwd": CWD}, "session.jsonl"), 0, "demo-long-goal-fork",
          T0 - 60 * 24 * HOUR, out)
    # modification times an hour after creation (a fresh build must not list open tails as live
    # writers; a git checkout has its own times)
    for f in sorted(root.rglob("session*.jsonl*")):
        info = session_info(str(f))
        created = info.created_at if info is not None else None
        t = (created if isinstance(created, int) else T0) / 1000 + 3600
        os.utime(f, (t, t))


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    repo = Path(__file__).resolve().parents[2]
    fixtures = Path(argv[0]) if argv else repo.parent / "shared" / "fixtures"
    out = Path(argv[1]) if len(argv) > 1 else repo / "resources" / "demo"
    build(fixtures, out)
    print(f"demo store written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
