"""Check (issue 31): ``session-lens timeline PATH --json`` of this tree is byte for byte that of a reference tree
(default ``/work/main``) on every shared fixture, every session of the demo store and two generated logs (v0, v4), computed (empty cache) and
then from the cache (each tree with its own cache folder); so are the plain text and ``--turn 1``.  Not a test: it needs the other tree; run it by hand.

    .venv/bin/python bench/timeline_same.py [REF_TREE=/work/main] [FIXTURE_ROOTS...]

Prints one line per file that differs and a count; exit status 1 when any differs.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
ROOTS = [Path("/work/shared/fixtures/dsh"), Path("/work/shared/fixtures/dsh-next"), HERE / "resources" / "demo"]

# run in each tree: every path's ``timeline --json`` twice (built, then from the cache) -> {path: [sha x 4, characters, ok]}
CHILD = r"""
import contextlib, hashlib, io, json, sys
from app.cli.main import main
out = {}
for p in json.load(sys.stdin):
    got = []
    for extra in (["--json"], ["--json"], [], ["--turn", "1"]):
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
                rc = main(["timeline", p, *extra])
        except SystemExit as e:
            rc = e.code
        except Exception as e:                  # (the same failure in both trees is the same answer)
            rc = f"raised {type(e).__name__}"
        got.append(hashlib.sha256(f"{rc}\n{buf.getvalue()}".encode()).hexdigest())
        if extra == ["--json"]:
            size, ok = len(buf.getvalue()), rc == 0
    out[p] = got + [size, ok]
json.dump(out, sys.stdout)
"""


def sessions(roots: list[Path]) -> list[str]:
    return sorted(str(p) for r in roots for p in r.rglob("*") if p.is_file()
                  and (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.zstd")))


def run_tree(tree: Path, paths: list[str]) -> dict[str, list[str]]:
    with tempfile.TemporaryDirectory(prefix="tlsame-") as cache:
        env = dict(os.environ, SESSION_LENS_CACHE_DIR=cache, SESSION_LENS_CONFIG_DIR=cache, PYTHONPATH=str(tree),
                   QT_QPA_PLATFORM="offscreen")
        got = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(paths), capture_output=True, text=True,
                             cwd=tree, env=env, check=True)
    out: dict[str, list[str]] = json.loads(got.stdout)
    return out


def main(argv: list[str]) -> int:
    ref = Path(argv[0]) if argv else Path("/work/main")
    roots = [Path(a) for a in argv[1:]] or ROOTS
    gen = tempfile.mkdtemp(prefix="tlsame-logs-")          # (and two generated logs, v0 and v4, with retries)
    sys.path.insert(0, str(HERE))
    from app.tools.synth import SessionSynth, write_jsonl
    for version in (0, 4):
        write_jsonl(f"{gen}/v{version}/session.jsonl", SessionSynth(7, version=version, p_retry=0.2),
                    target_bytes=3_000_000)
    paths = sessions(roots) + sessions([Path(gen)])
    try:
        mine, theirs = run_tree(HERE, paths), run_tree(ref, paths)
    finally:
        shutil.rmtree(gen, ignore_errors=True)
    bad = [p for p in paths if mine[p] != theirs[p]]
    ok = sum(1 for p in paths if mine[p][5])
    size = sum(mine[p][4] for p in paths)
    for p in bad:
        print(f"differs: {p} (--json built {mine[p][0] == theirs[p][0]}, cached {mine[p][1] == theirs[p][1]}; "
              f"text {mine[p][2] == theirs[p][2]}, --turn 1 {mine[p][3] == theirs[p][3]})")
    digest = hashlib.sha256(json.dumps(mine, sort_keys=True).encode()).hexdigest()[:12]
    print(f"{len(paths) - len(bad)} of {len(paths)} sessions: timeline --json (computed and from the cache), the "
          f"text and --turn 1 the same as {ref}; {ok} answered (exit 0), {size:,} characters of JSON each time; outputs digest {digest}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
