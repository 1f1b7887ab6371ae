#!/usr/bin/env python3
"""The session list and the fork at scale (issue 15), each row with its reference from the same run.

    python bench/list_fork_bench.py [--sessions 10000] [--fork-size 1GB] [--runs 3] [--no-list] [--no-fork]
                                    [--frames 64|dsh] [--before /work/main] [--no-warm] [--data DIR]

Rows (target in brackets):
  list   ``session-lens list HOME --json`` of a generated home of ``--sessions`` sessions, a mix of v0 and v4,
         raw JSONL and zstd (a quarter each), on an empty title cache (first run), with the cache saved, and
         ``list --exact-titles`` on that cache (the provisional titles' middles read, decision 0016); each
         row says how many titles are provisional; reference ``find`` + ``head -c 512`` of every session
         file [<= 1 s]
  fork   ``session-lens fork F --json`` at the end, fresh process, index saved, for a v0 synth log, a v0 log
         with legacy-shape rows (stored converted) in about half its segments, and a v4 log; reference
         ``cp F X && sync`` [>= 0.8x of cp && sync]
Every figure is the median of ``--runs`` fresh processes; ``uptime`` is printed first and last.  Each row
has a CPU twin: user + system time of the command and its children (``os.times``), against the
reference's; on a shared machine the wall clock mostly measures the run queue.
Generated inputs live in bench/data (git-ignored); every run's cache is a temporary folder.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from run import ensure, parse_size  # noqa: E402

from scale import CLI, cli_env, row, wall  # noqa: E402  (one copy of the bench plumbing)


# --------------------------------------------------------------------------- the home

def _proto(root: Path, k: int, version: int, zstd: bool, frames: str = "64") -> tuple:
    """(header dict, body bytes) of one generated prototype; zstd bodies are whole frames: of 64 rows
    each (``frames="64"``), or dsh's layout (``"dsh"``: one frame per write batch, 1-3 rows each, as
    dsh's write-behind batches of a streamed turn are)."""
    import random

    from app.tools.synth import SessionSynth, write_jsonl
    p = root / f"proto-v{version}-{k}.jsonl"
    if not p.exists():
        write_jsonl(str(p), SessionSynth(seed=300 + k, version=version), turns=2 + k % 4)
    head, rest = p.read_bytes().split(b"\n", 1)
    if zstd:
        from app.log.source.zstdframes import encode_frame
        body = rest.split(b"\n")[:-1]
        cuts, at, rng = [], 0, random.Random(k)
        while at < len(body):
            cuts.append((at, at + (64 if frames == "64" else rng.randint(1, 3))))
            at = cuts[-1][1]
        rest = b"".join(encode_frame(b"\n".join(body[a:b]) + b"\n") for a, b in cuts)
    return json.loads(head), rest


PAST = 1780315200.0                  # 2026-06-01: sessions last written long ago (a fresh one is "live":
#                                      the list asks its writer's state, a cost no old home has)


def make_mixed_home(root: Path, n: int, frames: str = "64") -> Path:
    """A Harness home of ``n`` small sessions: v0 and v4, raw JSONL and zstd, a quarter each
    (40 generated logs re-identified), all last modified on ``PAST``; zstd frames as ``_proto``'s."""
    home = root / (f"mixed-home-{n}" + ("" if frames == "64" else f"-{frames}-frames"))
    if (home / ".complete").exists():
        if (home / ".complete").read_text() != "past":
            for f in (home / "sessions").rglob("session*"):
                os.utime(f, (PAST, PAST))
            (home / ".complete").write_text("past")
        return home
    shutil.rmtree(home, ignore_errors=True)
    from app.log.source.zstdframes import encode_frame
    from app.store.layout import session_path
    kinds = [(0, False), (4, False), (0, True), (4, True)]
    protos = {kz: [_proto(root, k, kz[0], kz[1], frames) for k in range(10)] for kz in kinds}
    for i in range(n):
        version, zst = kinds[i % 4]
        hdr, rest = protos[(version, zst)][(i // 4) % 10]
        sid = f"session-{i:05d}-{hdr['id'][:8]}"
        h = dict(hdr, id=sid, cwd=f"/home/dev/project-{i % 37}")
        line = json.dumps(h, separators=(",", ":")).encode() + b"\n"
        path = Path(session_path(str(home / "sessions"), sid, h["cwd"], zst, version))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes((encode_frame(line) if zst else line) + rest)
        os.utime(path, (PAST, PAST))
    (home / ".complete").write_text("past")
    return home


def cpu_wall(cmd, env=None, shell=False) -> tuple:
    """(wall s, CPU s of the command and its children, stdout)."""
    t0 = os.times()
    dt, out = wall(cmd, env, shell=shell)
    t1 = os.times()
    return dt, (t1.children_user + t1.children_system) - (t0.children_user + t0.children_system), out


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def bench_list(home: Path, n: int, runs: int, before: str = "", label: str = "mixed home",
               no_warm: bool = False) -> list:
    """``list --json`` of ``home``, first run (empty cache) and cached, beside find + head, medians of
    ``runs``; ``before``: another checkout (its own .venv) timed alternately in the same minutes."""
    find = f"find '{home}/sessions' -name 'session*.jsonl*' -exec head -qc 512 {{}} + > /dev/null"
    wall(find, shell=True)
    sides = [("branch", CLI, False)]
    if before:
        sides.append(("before", f"cd '{before}' && '{before}/.venv/bin/python' -m app", True))
    res: dict = {name: ([], [], []) for name, _c, _s in sides}
    refs, titled, loads, provisional = [], {}, [_loadavg()], {}
    for _ in range(runs):
        refs.append(cpu_wall(find, shell=True))
        for name, cmd, shell in sides:
            cache = tempfile.mkdtemp(prefix="sl-cache-")
            try:
                env = cli_env(cache)
                argv = f"{cmd} list '{home}' --json" if shell else CLI + ["list", str(home), "--json"]
                dt, cpu, out = cpu_wall(argv, env, shell=shell)
                got = json.loads(out)
                assert len(got["sessions"]) == n, len(got["sessions"])
                titled[name] = sum(1 for s in got["sessions"] if s["title"])
                provisional[name] = sum(1 for s in got["sessions"] if s.get("titleExact") is False)
                res[name][0].append((dt, cpu))
                if not no_warm:
                    res[name][1].append(cpu_wall(argv, env, shell=shell)[:2])
                    exact = argv + " --exact-titles" if shell else argv + ["--exact-titles"]
                    if name == "branch":
                        dt, cpu, out = cpu_wall(exact, env, shell=shell)
                        got = json.loads(out)
                        provisional["exact"] = sum(1 for s in got["sessions"] if s.get("titleExact") is False)
                        res[name][2].append((dt, cpu))
            finally:
                shutil.rmtree(cache, ignore_errors=True)
        loads.append(_loadavg())
    print("list: load average (1/5/15 min) before each round and after:", " | ".join(loads), flush=True)
    ref, ref_cpu = statistics.median(r[0] for r in refs), statistics.median(r[1] for r in refs)
    rows = []
    for name, _c, _s in sides:
        firsts, warm, exact = res[name]
        f, fc = statistics.median(x[0] for x in firsts), statistics.median(x[1] for x in firsts)
        tag = "" if name == "branch" else f"[{name}] "
        rows += [row(f"{tag}list {n} {label}, first run ({titled[name]} titled, {provisional[name]} provis.)", f,
                     "s", ref, "find + head s", ref / f, "<= 1 s"),
                 row(f"{tag}list {n} {label}, first run, CPU", fc, "s", ref_cpu, "find + head CPU s",
                     ref_cpu / fc, "(process + workers)")]
        if warm:
            w, wc = statistics.median(x[0] for x in warm), statistics.median(x[1] for x in warm)
            rows += [row(f"{tag}list {n} {label}, titles cached", w, "s", ref, "find + head s", ref / w,
                         "<= 1 s"),
                     row(f"{tag}list {n} {label}, titles cached, CPU", wc, "s", ref_cpu,
                         "find + head CPU s", ref_cpu / wc, "")]
        if exact:
            e, ec = statistics.median(x[0] for x in exact), statistics.median(x[1] for x in exact)
            rows += [row(f"{tag}list {n} {label}, --exact-titles after it ({provisional['exact']} provis.)", e, "s",
                         ref, "find + head s", ref / e, "(middles read)"),
                     row(f"{tag}list {n} {label}, --exact-titles, CPU", ec, "s", ref_cpu, "find + head CPU s",
                         ref_cpu / ec, "")]
    return rows


# --------------------------------------------------------------------------- fork

def legacy_log(src: Path, dst: Path) -> Path:
    """``src`` with one legacy-shape row (a turn/end whose reason is the string ``"aborted"``,
    spec §1.7: a fork stores it converted) in every other ~2 MB stretch."""
    if dst.exists():
        return dst
    step, at, done = 2 << 20, 0, set()
    with open(src, "rb") as f, open(dst, "wb") as o:
        for line in f:
            k = at // step
            if k % 2 == 0 and k not in done and line.startswith(b'{"type":"turn/end"'):
                obj = json.loads(line)
                obj["data"]["reason"] = "aborted"
                line = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
                done.add(k)
            o.write(line)
            at += len(line)
    return dst


def bench_fork(path: Path, runs: int, label: str) -> list:
    cache = tempfile.mkdtemp(prefix="sl-cache-")
    try:
        env = cli_env(cache)
        wall(CLI + ["index", str(path)], env)
        cps, forks = [], []
        res = {}
        for _ in range(runs):
            d = Path(tempfile.mkdtemp(prefix="sl-fork-", dir=path.parent))
            try:
                cps.append(cpu_wall(f"cp '{path}' '{d}/copy' && sync", shell=True)[:2])
                os.unlink(d / "copy")
                dt, cpu, out = cpu_wall(CLI + ["fork", str(path), "--out", str(d / "out"), "--json"], env)
                forks.append((dt, cpu))
                res = json.loads(out)
            finally:
                shutil.rmtree(d, ignore_errors=True)
        cp, fk = statistics.median(x[0] for x in cps), statistics.median(x[0] for x in forks)
        cpc, fkc = statistics.median(x[1] for x in cps), statistics.median(x[1] for x in forks)
        return [row(f"fork at the end {label} ({res.get('verified', '')[:40]})", fk, "s", cp, "cp && sync s",
                    cp / fk, ">= 0.8x cp && sync"),
                row(f"fork at the end {label}, CPU", fkc, "s", cpc, "cp && sync CPU s", cpc / fkc, "")]
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--fork-size", default="1GB")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", default=str(REPO / "bench" / "data"))
    ap.add_argument("--no-list", action="store_true")
    ap.add_argument("--no-fork", action="store_true")
    ap.add_argument("--frames", default="64", choices=["64", "dsh"],
                    help="zstd frames of the list's home: 64 rows each, or dsh's per-write-batch layout (1-3 rows)")
    ap.add_argument("--before", default="", help="another checkout (with its .venv) whose list is timed alternately")
    ap.add_argument("--no-warm", action="store_true", help="list: the first run only (no cached run)")
    a = ap.parse_args()
    data = Path(a.data)
    data.mkdir(parents=True, exist_ok=True)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), flush=True)
    rows = []
    if not a.no_list:
        label = "mixed" + ("" if a.frames == "64" else f", {a.frames} frames")
        rows += bench_list(make_mixed_home(data, a.sessions, a.frames), a.sessions, a.runs, a.before, label,
                           a.no_warm)
    if not a.no_fork:
        s = a.fork_size
        v0 = ensure(data / f"session-{s}.jsonl", parse_size(s), False)
        rows += bench_fork(v0, a.runs, f"v0 {s}")
        rows += bench_fork(legacy_log(v0, data / f"session-{s}-legacy.jsonl"), a.runs, f"v0 {s} legacy rows")
        v4 = ensure(data / f"session-{s}.v4.jsonl", parse_size(s), False, version=4)
        rows += bench_fork(v4, a.runs, f"v4 {s}")
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"\n{'row':64} {'value':>9} {'unit':5} {'reference':>9} {'ratio':>7}  target")
    for r in rows:
        ref = f"{r['reference']:9.3f}" if "reference" in r else " " * 9
        ratio = f"{r['ratio']:7.3f}" if "ratio" in r else " " * 7
        print(f"{r['row'][:64]:64} {r['value']:9.3f} {r['unit']:5} {ref} {ratio}  {r['target']}")


if __name__ == "__main__":
    main()
