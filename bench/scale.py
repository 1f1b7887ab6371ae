#!/usr/bin/env python3
"""Speed at scale (issue 15): each measured row with its reference from the same run, and the ratio.

    python bench/scale.py [--sizes 100MB,1GB,4GB] [--formats v0,v4] [--zstd] [--index-only] [--sessions 10000]
                          [--runs 3] [--inspect SIZE] [--request] [--rows page,fork,request,...] [--data DIR]

Every figure is the median of ``--runs`` fresh processes (2 shared cores: single runs lie); each command's
CPU time (user + system, GNU time) and peak RSS are printed beside it.  Logs above 1 GB are a 1 GB synth base
extended by re-sequenced copies of its body (``bench/bigfile.py``: about a minute per GB, once).
``--rows`` picks the row groups (index, page, fork, inspect, messages, request, list).
Rows (target in brackets):
  index        ``session-lens index F`` on an empty cache: in-process seconds; reference warm ``cat F``
               [>= 0.35x of cat]; also the exact envelope scan it replaces.  ``--formats``: generated v0
               and/or v4 logs; ``--zstd``: also the zstd-framed file, reference ``zstd -dc F > /dev/null``;
               ``--index-only``: only these rows
  index warm   the same on the saved index (fresh process) [instant]
  page         ``session-lens page F --before MIDDLE`` fresh process, index and surface index saved [<= 0.5 s];
               first open (surface index built) and, as reference, the page with only the seq index saved
               (the surface status folded from the whole log, as before it was cached); ``--page-only``: these rows;
               ``--cold`` (root): also once after ``echo 3 > /proc/sys/vm/drop_caches`` (log, caches, modules cold)
  fork         ``session-lens fork F`` at the end, fresh process, index saved; reference ``cp F X && sync``
               [>= 0.8x of cp && sync]
  list         ``session-lens list HOME`` of a 10,000-session home (one per ``--formats``); reference ``find`` + ``head -1`` of
               every session [<= 1 s]
  inspect      (--inspect SIZE) ``session-lens inspect F`` MB/s of wall and of CPU time [>= 100 MB/s], against a
               plain ``json.loads`` of every line (fresh interpreter, same run), peak RSS [<= 250 MB]; messages too
  request      (--request) ``session-lens request F --at SEQ`` near the end, first and saved [<= 1 s, 250 MB]
Generated inputs live in bench/data (git-ignored); the cache of every run is a temporary folder.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from run import ensure, parse_size  # noqa: E402

CLI = [sys.executable, "-m", "app"]


def wall(cmd, env=None, shell=False) -> tuple:
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, shell=shell)
    dt = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(f"{cmd}: exit {r.returncode}: {r.stderr[-2000:]}")
    return dt, r.stdout


def timed(cmd, env=None) -> dict:
    """Wall seconds, CPU seconds (user + system of the command and its children) and peak RSS (MB) of one
    command, from GNU time; ``out``: its standard output."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as f:
        dt, out = wall(["/usr/bin/time", "-o", f.name, "-f", "%U %S %M"] + cmd, env)
        u, s_, m = f.read().strip().splitlines()[-1].split()
        return {"wall": dt, "cpu": float(u) + float(s_), "rss": int(m) / 1024, "out": out}


def med_timed(rs: list) -> dict:
    """Median wall and CPU, the largest peak RSS of several runs."""
    return {"wall": med([r["wall"] for r in rs]), "cpu": med([r["cpu"] for r in rs]), "rss": max(r["rss"] for r in rs)}


def last_attempt_seq(path: Path) -> int:
    """The seq of the last assistant message (an attempt) in the last 8 MB of a plain log."""
    import re
    with open(path, "rb") as f:
        f.seek(max(0, path.stat().st_size - (8 << 20)))
        tail = f.read()
    seqs = re.findall(rb'"type":"assistant/message","seq":(\d+)', tail)
    assert seqs, path
    return int(seqs[-1])


def med(xs):
    return statistics.median(xs)


def cli_env(cache: str) -> dict:
    """The command's environment: its own cache folder; byte-code caching on (as installed:
    with PYTHONDONTWRITEBYTECODE every process compiles every module, ~0.1-0.3 s)."""
    env = {**os.environ, "SESSION_LENS_CACHE_DIR": cache, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def cat_s(path: Path, runs: int) -> float:
    wall(f"cat '{path}' > /dev/null", shell=True)             # warm the page cache (not through a pipe to us)
    return med([wall(f"cat '{path}' > /dev/null", shell=True)[0] for _ in range(runs)])


def cpu_of(cmd: str) -> float:
    """CPU seconds (user + system) of a shell command and its children (``getrusage``: microseconds;
    ``os.times`` counts clock ticks of 10 ms, too coarse for ``cat`` of 100 MB)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, shell=True, check=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def zstd_s(path: Path, runs: int) -> float:
    wall(f"zstd -qdc '{path}' > /dev/null", shell=True)
    return med([wall(f"zstd -qdc '{path}' > /dev/null", shell=True)[0] for _ in range(runs)])


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def exact_scan_s(path: Path) -> float:
    code = (f"import sys,time;sys.path.insert(0,{str(REPO)!r});from app.store.faces import open_reader as o;"
            f"r=o({str(path)!r});t=time.perf_counter();r.build_index_exact();print(time.perf_counter()-t)")
    return float(wall([sys.executable, "-c", code])[1])


def row(name, value, unit, ref=None, ref_name="", ratio=None, target="", cpu=None, rss=None):
    out = {"row": name, "value": round(value, 4), "unit": unit}
    if cpu is not None:
        out["cpuSeconds"] = round(cpu, 3)
    if rss is not None:
        out["peakRssMB"] = round(rss, 1)
    if ref is not None:
        out.update(reference=round(ref, 4), referenceName=ref_name)
    if ratio is not None:
        out["ratio"] = round(ratio, 3)
    out["target"] = target
    print(json.dumps(out), flush=True)
    return out


def drop_caches() -> bool:
    """Empty the page cache (root only; slows every other process briefly): False when not allowed."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def bench_page(path: Path, runs: int, env: dict, cache: str, label: str, cold: bool = False) -> list:
    """page --before the middle seq: first open, then saved (median of ``runs`` fresh processes); reference:
    the same page with the surface index removed before each run (every page folds the whole log)."""
    wall(CLI + ["index", str(path)], env)
    events = json.loads(wall(CLI + ["index", str(path), "--json"], env)[1])["events"]
    page = CLI + ["page", str(path), "--before", str(events // 2), "--json"]
    idx_s = med([json.loads(wall(CLI + ["index", str(path), "--json"], env)[1])["seconds"] for _ in range(runs)])
    proc = med_timed([timed(CLI + ["index", str(path), "--json"], env) for _ in range(runs)])
    first = timed(page, env)
    pg = med_timed([timed(page, env) for _ in range(runs)])
    cold_t = timed(page, env) if cold and drop_caches() else None
    ref = []
    for _ in range(max(1, runs - 1)):
        for f in Path(cache, "index").glob("*.surface"):
            f.unlink()
        ref.append(timed(page, env))
    r = med_timed(ref)
    return [row(f"index {label} saved: fresh process (in-process {idx_s:.3f} s)", proc["wall"], "s", target="(floor)",
                cpu=proc["cpu"], rss=proc["rss"]),
            row(f"page --before middle {label}, first open (surface index built)", first["wall"], "s", target="(once)",
                cpu=first["cpu"], rss=first["rss"]),
            row(f"page --before middle {label} (fresh process, index saved)", pg["wall"], "s", r["wall"],
                "page with the seq index only s", r["wall"] / pg["wall"], "<= 0.5 s", cpu=pg["cpu"], rss=pg["rss"]),
            row(f"page --before middle {label}, reference: seq index only", r["wall"], "s", target="(before)",
                cpu=r["cpu"], rss=r["rss"])] + \
        ([row(f"page --before middle {label} (index saved, page cache dropped)", cold_t["wall"], "s", target="<= 0.5 s",
              cpu=cold_t["cpu"], rss=cold_t["rss"])] if cold_t is not None else [])


def bench_index(path: Path, runs: int, label: str, ref: float, ref_name: str, ref_cmd: str) -> list:
    """index on an empty cache (each run its own empty cache folder), then warm; the exact scan.
    Besides wall time, CPU time against the reference's CPU time (``ref_cmd``): on 2 cores shared
    by other work the wall clock mostly measures the queue."""
    mb = path.stat().st_size / 1e6
    cold, warm, tc = [], [], []
    for _ in range(runs):
        d = tempfile.mkdtemp(prefix="sl-cache-")
        try:
            tc.append(timed(CLI + ["index", str(path), "--json"], cli_env(d)))
            cold.append(json.loads(tc[-1]["out"]))
            warm.append(json.loads(wall(CLI + ["index", str(path), "--json"], cli_env(d))[1]))
        finally:
            shutil.rmtree(d, ignore_errors=True)
    assert all(not c["cached"] for c in cold) and all(w["cached"] for w in warm)
    ix = med([c["seconds"] for c in cold])
    out = [row(f"index {label} (empty cache)", mb / ix, "MB/s", mb / ref, ref_name + " MB/s", ref / ix,
               ">= 0.35x " + ref_name)]
    if path.stat().st_size <= 1 << 30:              # the exact scan of a bigger log takes minutes per GB
        ex = med([exact_scan_s(path) for _ in range(max(1, runs - 1))])
        out.append(row(f"index {label} exact envelope scan (before)", mb / ex, "MB/s", mb / ref, ref_name + " MB/s",
                       ref / ex, "(reference)"))
    out.append(row(f"index {label} saved (fresh process)", med([w["seconds"] for w in warm]), "s", target="instant"))
    ref_cpu = med([cpu_of(ref_cmd) for _ in range(runs)])
    cpu = med([c["cpuSeconds"] for c in cold])
    out.append(row(f"index {label} (empty cache), CPU time", mb / cpu, "MB/s", mb / max(ref_cpu, 1e-3),
                   ref_name + " MB/s of CPU", max(ref_cpu, 1e-3) / cpu, ">= 0.35x " + ref_name))
    t = med_timed(tc)
    out.append(row(f"index {label} (empty cache), fresh process", t["wall"], "s", ref, ref_name + " s",
                   ref / t["wall"], ">= 0.35x " + ref_name, cpu=t["cpu"], rss=t["rss"]))
    return out


ROWS = ("index", "page", "fork", "inspect", "messages", "request")


def bench_file(path: Path, runs: int, rows: set, fmt: str = "v0", cold: bool = False) -> list:
    """The rows named in ``rows`` (see ``ROWS``) for one log."""
    size = path.stat().st_size
    mb = size / 1e6
    label = f"{mb:.0f} MB {fmt}"
    out = []
    cat = cat_s(path, runs)
    if "index" in rows:
        out += bench_index(path, runs, label, cat, "warm cat", f"cat '{path}' > /dev/null")
    if not rows - {"index"}:
        return out
    cache = tempfile.mkdtemp(prefix="sl-cache-")
    try:
        env = cli_env(cache)
        if "page" in rows:
            out += bench_page(path, runs, env, cache, label, cold)
        else:
            wall(CLI + ["index", str(path)], env)
        if "fork" in rows and shutil.disk_usage(path.parent).free < size + (25 << 30):
            print(f"fork {label}: skipped, less than 25 GB free beyond a copy", flush=True)
        elif "fork" in rows:                     # fork at the end vs cp && sync
            cps, forks = [], []
            for _i in range(runs):
                d = Path(tempfile.mkdtemp(prefix="sl-fork-", dir=path.parent))
                try:
                    cps.append(timed(["sh", "-c", f"cp '{path}' '{d}/copy' && sync"]))
                    os.unlink(d / "copy")
                    forks.append(timed(CLI + ["fork", str(path), "--out", str(d / "out"), "--json"], env))
                finally:
                    shutil.rmtree(d, ignore_errors=True)
            cp, fk = med_timed(cps), med_timed(forks)
            out.append(row(f"fork at the end {label} (fresh process, index saved)", fk["wall"], "s", cp["wall"],
                           "cp && sync s", cp["wall"] / fk["wall"], ">= 0.8x cp && sync", cpu=fk["cpu"], rss=fk["rss"]))
            out.append(row(f"fork at the end {label}, reference cp && sync", cp["wall"], "s", target="(reference)",
                           cpu=cp["cpu"], rss=cp["rss"]))
        if "inspect" in rows:
            out += bench_inspect(path, runs, env, label)
        if "messages" in rows:
            t = timed(CLI + ["messages", str(path), "--json"], env)
            out.append(row(f"messages {label}", mb / t["wall"], "MB/s", target="linear time", cpu=t["cpu"], rss=t["rss"]))
            out.append(row(f"messages {label} peak RSS", t["rss"], "MB", target="<= 250 MB"))
        if "request" in rows:
            seq = last_attempt_seq(path)
            req = CLI + ["request", str(path), "--at", str(seq), "--json"]
            t0 = timed(req, env)
            out.append(row(f"request at {seq} near the end {label}, first (checkpoints built)", t0["wall"], "s",
                           target="(once per log)", cpu=t0["cpu"], rss=t0["rss"]))
            t = med_timed([timed(req, env) for _ in range(runs)])
            out.append(row(f"request near the end {label} (fresh process, checkpoints saved)", t["wall"], "s",
                           target="<= 1 s", cpu=t["cpu"], rss=t["rss"]))
            out.append(row(f"request near the end {label} peak RSS", max(t0["rss"], t["rss"]), "MB",
                           target="<= 250 MB"))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return out


NAIVE = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    for line in f:\n        json.loads(line)\n"


def bench_inspect(path: Path, runs: int, env: dict, label: str) -> list:
    """``session-lens inspect F --json`` (fresh process, median of ``runs``) against the reference of the issue,
    measured in the same run: a plain ``json.loads`` of every line (a fresh interpreter too).  MB/s of wall
    and of CPU (user + system) time, and the ratios (candidate speed / reference speed)."""
    mb = path.stat().st_size / 1e6
    ins, ref = [], []
    for _ in range(runs):                       # interleaved: both see the same load
        ref.append(timed([sys.executable, "-c", NAIVE, str(path)], env))
        ins.append(timed(CLI + ["inspect", str(path), "--json"], env))
    t, r = med_timed(ins), med_timed(ref)
    return [row(f"inspect {label} (fresh process)", mb / t["wall"], "MB/s", mb / r["wall"], "json.loads per line MB/s",
                r["wall"] / t["wall"], ">= 100 MB/s", cpu=t["cpu"], rss=t["rss"]),
            row(f"inspect {label}, CPU time", mb / t["cpu"], "MB/s", mb / r["cpu"], "json.loads per line MB/s of CPU",
                r["cpu"] / t["cpu"], ">= 100 MB/s"),
            row(f"inspect {label} peak RSS", t["rss"], "MB", target="<= 250 MB")]


def make_home(root: Path, n: int, version: int = 0) -> Path:
    """A Harness home with ``n`` small sessions (20 distinct generated logs, re-identified), format
    ``version``, last modified long ago (a session written in the last 15 s is "live": the list asks
    its writer's state)."""
    home = root / (f"home-{n}" if not version else f"home-{n}-v{version}")
    done = home / ".complete"
    past = 1780315200.0
    if done.exists():
        if done.read_text() != "past":
            for f in (home / "sessions").rglob("session*"):
                os.utime(f, (past, past))
            done.write_text("past")
        return home
    shutil.rmtree(home, ignore_errors=True)
    from app.store.layout import session_path
    from app.tools.synth import SessionSynth, write_jsonl
    protos = []
    for k in range(20):
        p = root / (f"proto-{k}.jsonl" if not version else f"proto-{k}-v{version}.jsonl")
        if not p.exists():
            write_jsonl(str(p), SessionSynth(seed=100 + k, version=version), turns=2 + k % 4)
        head, rest = p.read_bytes().split(b"\n", 1)
        protos.append((json.loads(head), rest))
    for i in range(n):
        hdr, rest = protos[i % len(protos)]
        sid = f"session-{i:05d}-{hdr['id'][:8]}"
        h = dict(hdr, id=sid, cwd=f"/home/dev/project-{i % 37}")
        path = Path(session_path(str(home / "sessions"), sid, h["cwd"], False))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(json.dumps(h, separators=(",", ":")).encode() + b"\n" + rest)
        os.utime(path, (past, past))
    done.write_text("past")
    return home


def bench_list(home: Path, n: int, runs: int, fmt: str = "v0") -> list:
    ref = med([wall(f"find '{home}/sessions' -name 'session.jsonl*' -exec head -qn1 {{}} + > /dev/null",
                    shell=True)[0] for _ in range(runs)])
    cache = tempfile.mkdtemp(prefix="sl-cache-")
    try:
        env = cli_env(cache)
        first = wall(CLI + ["list", str(home), "--json"], env)
        got = json.loads(first[1])
        assert len(got["sessions"]) == n, len(got["sessions"])
        titled = sum(1 for s in got["sessions"] if s["title"])
        t = med([wall(CLI + ["list", str(home), "--json"], env)[0] for _ in range(runs)])
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return [row(f"list {n}-session home {fmt} (first run)", first[0], "s", ref, "find + head -1 s", ref / first[0],
                "<= 1 s"),
            row(f"list {n}-session home {fmt} ({titled} titled)", t, "s", ref, "find + head -1 s", ref / t, "<= 1 s")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100MB,1GB", help="generated log sizes; above 1 GB the log is a 1 GB synth "
                    "base extended by re-sequenced copies of its body (bench/bigfile.py)")
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", default=str(REPO / "bench" / "data"))
    ap.add_argument("--inspect", default="0", help="also inspect logs up to this size (e.g. 100MB)")
    ap.add_argument("--request", action="store_true")
    ap.add_argument("--page-only", action="store_true", help="only the page rows (and no session list)")
    ap.add_argument("--cold", action="store_true", help="page: also once with the page cache dropped (root)")
    ap.add_argument("--formats", default="v0", help="generated format versions, e.g. v0,v4 (the home's too)")
    ap.add_argument("--zstd", action="store_true", help="also index the zstd-framed file (reference zstd -dc)")
    ap.add_argument("--index-only", action="store_true", help="only the index rows (and no session list)")
    ap.add_argument("--rows", default="", help="only these rows: " + ",".join(ROWS + ("list",)) + " (default: "
                    "index,page,fork,list, with inspect and messages under --inspect SIZE, request with --request)")
    a = ap.parse_args()
    data = Path(a.data)
    if a.rows:
        rows = set(a.rows.split(","))
        bad = rows - set(ROWS) - {"list"}
        if bad:
            raise SystemExit(f"unknown rows: {sorted(bad)}")
    elif a.page_only or a.index_only:
        rows = {"page"} if a.page_only else {"index"}
    else:
        rows = {"index", "page", "fork", "list"} | ({"request"} if a.request else set())
    out = []
    print("load:", load(), flush=True)
    for s in [x for x in a.sizes.split(",") if x]:
        for fmt in [f for f in a.formats.split(",") if f]:
            if not rows - {"list"}:
                break
            name = f"session-{s}.jsonl" if fmt == "v0" else f"session-{s}-{fmt}.jsonl"
            p = ensure(data / name, parse_size(s), False, int(fmt.lstrip("v")))
            want = set(rows)
            if not a.rows and not (a.inspect != "0" and p.stat().st_size <= parse_size(a.inspect)):
                want -= {"inspect", "messages"}
            elif not a.rows:
                want |= {"inspect", "messages"}
            out += bench_file(p, a.runs, want - {"list"}, fmt, a.cold)
            if a.zstd:
                z = ensure(data / (name + ".zstd"), parse_size(s), True, int(fmt.lstrip("v")))
                out += bench_index(z, a.runs, f"{z.stat().st_size / 1e6:.0f} MB {fmt} zstd", zstd_s(z, a.runs),
                                   "zstd -dc", f"zstd -qdc '{z}' > /dev/null")
    if a.sessions and "list" in rows:
        for fmt in [f for f in a.formats.split(",") if f]:
            out += bench_list(make_home(data, a.sessions, int(fmt.lstrip("v"))), a.sessions, a.runs, fmt)
    print("load:", load(), flush=True)
    print()
    print(f"{'row':64} {'value':>10} {'unit':5} {'CPU s':>8} {'RSS MB':>7} {'reference':>10} {'ratio':>7}  target")
    for r in out:
        ref = f"{r['reference']:10.3f}" if "reference" in r else " " * 10
        ratio = f"{r['ratio']:7.3f}" if "ratio" in r else " " * 7
        cpu = f"{r['cpuSeconds']:8.2f}" if "cpuSeconds" in r else " " * 8
        rss = f"{r['peakRssMB']:7.0f}" if "peakRssMB" in r else " " * 7
        print(f"{r['row']:64} {r['value']:10.3f} {r['unit']:5} {cpu} {rss} {ref} {ratio}  {r['target']}")


if __name__ == "__main__":
    main()
