"""The timeline's answers of this tree and of another checkout, side by side (issue 31): for every fixture of
``../shared/fixtures/dsh`` and ``dsh-next`` and the logs given, the spans (in log order), turns and totals of each
code, computed in one child process per code (each with its own ``app`` and native module), compared by a hash of
their JSON.  Prints the files whose answers differ (none: "same") and the number of spans of each big log.

    .venv/bin/python bench/timeline_same.py --against=/work/wt/base [LOG ...]
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_ONE = r'''
import glob, hashlib, json, os, sys
sys.path.insert(0, sys.argv[1])
os.environ["SESSION_LENS_SCAN_INPROC"] = "1"
from app.store.faces import open_reader
from app.log.query.timeline import timeline
from app.log.query.timeline_summary import in_log_order, summarize
prices = {"deepseek-*": {"input": 0.28, "cacheRead": 0.028, "output": 0.42}}
root = sys.argv[2]
files = sorted(glob.glob(root + "/dsh/**/*.jsonl", recursive=True)) + \
    sorted(glob.glob(root + "/dsh-next/**/*.jsonl", recursive=True)) + sys.argv[3:]
for f in files:
    r = open_reader(f)
    if r.fatal:
        print(f, "fatal", "-")
        continue
    out = summarize(in_log_order(timeline(r)), prices, ordered=True)
    blob = json.dumps([out["spans"], out["turns"], out["totals"]]).encode()
    print(f, len(out["spans"]), hashlib.sha256(blob).hexdigest()[:16], flush=True)
'''


def answers(code: str, fixtures: str, logs: list[str]) -> dict[str, tuple[str, str]]:
    out = subprocess.run([sys.executable, "-c", _ONE, code, fixtures, *logs], check=True, capture_output=True,
                         text=True, cwd=code).stdout
    return {f: (n, h) for f, n, h in (line.rsplit(" ", 2) for line in out.splitlines())}


def main(argv: list[str]) -> None:
    other = next(a.split("=", 1)[1] for a in argv if a.startswith("--against="))
    logs = [str(Path(a).resolve()) for a in argv if not a.startswith("--")]
    here = str(Path(__file__).resolve().parents[1])
    fixtures = str(Path(here).parent / "shared" / "fixtures")
    new, old = answers(here, fixtures, logs), answers(other, fixtures, logs)
    differ = [f for f in new if new[f] != old.get(f)]
    print(f"{len(new)} files; new: {here}, old: {other}")
    for f in logs:
        print(f"  {f}: {new[f][0]} spans")
    print("same" if not differ and new.keys() == old.keys() else "DIFFER:\n  " + "\n  ".join(differ))


if __name__ == "__main__":
    main(sys.argv[1:])
