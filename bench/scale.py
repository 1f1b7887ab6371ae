#!/usr/bin/env python3
"""Speed at scale (issue 15): each measured row with its reference from the same run, and the ratio.

    python bench/scale.py [--sizes 100MB,1GB] [--formats v0,v4] [--zstd] [--index-only] [--sessions 10000]
                          [--runs 3] [--inspect SIZE] [--request] [--data DIR]

Every figure is the median of ``--runs`` fresh processes (2 shared cores: single runs lie).
Rows (target in brackets):
  index        ``session-lens index F`` on an empty cache: in-process seconds; reference warm ``cat F``
               [>= 0.35x of cat]; also the exact envelope scan it replaces.  ``--formats``: generated v0
               and/or v4 logs; ``--zstd``: also the zstd-framed file, reference ``zstd -dc F > /dev/null``;
               ``--index-only``: only these rows
  index warm   the same on the saved index (fresh process) [instant]
  page         ``session-lens page F --before MIDDLE`` fresh process, index and surface index saved [<= 0.5 s];
               first open (surface index built) and, as reference, the page with only the seq index saved
               (the surface status folded from the whole log, as before it was cached); ``--page-only``: these rows
  fork         ``session-lens fork F`` at the end, fresh process, index saved; reference ``cp F X && sync``
               [>= 0.8x of cp && sync]
  list         ``session-lens list HOME`` of a 10,000-session home; reference ``find`` + ``head -1`` of
               every session [<= 1 s]
  inspect      (--inspect SIZE) ``session-lens inspect F`` MB/s [>= 100 MB/s], peak RSS [<= 250 MB]; messages too
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


def wall_rss(cmd, env=None) -> tuple:
    """(seconds, peak RSS MB) of one command (GNU time's %M)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as f:
        dt, _ = wall(["/usr/bin/time", "-o", f.name, "-f", "%M"] + cmd, env)
        return dt, int(f.read().strip().splitlines()[-1]) / 1024


def med(xs):
    return statistics.median(xs)


def cli_env(cache: str) -> dict:
    """The command's environment: its own cache folder; byte-code caching on (as installed:
    with PYTHONDONTWRITEBYTECODE every process compiles every module, ~0.1-0.3 s)."""
    env = {**os.environ, "SESSION_LENS_CACHE_DIR": cache, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def cat_s(path: Path, runs: int) -> float:
    wall(["cat", str(path)], shell=False)                       # warm the page cache
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


def row(name, value, unit, ref=None, ref_name="", ratio=None, target=""):
    out = {"row": name, "value": round(value, 4), "unit": unit}
    if ref is not None:
        out.update(reference=round(ref, 4), referenceName=ref_name)
    if ratio is not None:
        out["ratio"] = round(ratio, 3)
    out["target"] = target
    print(json.dumps(out), flush=True)
    return out


def bench_page(path: Path, runs: int, env: dict, cache: str, label: str) -> list:
    """page --before the middle seq: first open, then saved (median of ``runs`` fresh processes); reference:
    the same page with the surface index removed before each run (every page folds the whole log)."""
    wall(CLI + ["index", str(path)], env)
    events = json.loads(wall(CLI + ["index", str(path), "--json"], env)[1])["events"]
    page = CLI + ["page", str(path), "--before", str(events // 2), "--json"]
    idx_s = med([json.loads(wall(CLI + ["index", str(path), "--json"], env)[1])["seconds"] for _ in range(runs)])
    proc = med([wall(CLI + ["index", str(path), "--json"], env)[0] for _ in range(runs)])
    first = wall(page, env)[0]
    pg = med([wall(page, env)[0] for _ in range(runs)])
    ref = []
    for _ in range(max(1, runs - 1)):
        for f in Path(cache, "index").glob("*.surface"):
            f.unlink()
        ref.append(wall(page, env)[0])
    r = med(ref)
    return [row(f"index {label} saved: fresh process (in-process {idx_s:.3f} s)", proc, "s", target="(floor)"),
            row(f"page --before middle {label}, first open (surface index built)", first, "s", target="(once)"),
            row(f"page --before middle {label} (fresh process, index saved)", pg, "s", r,
                "page with the seq index only s", r / pg, "<= 0.5 s")]


def bench_index(path: Path, runs: int, label: str, ref: float, ref_name: str, ref_cmd: str) -> list:
    """index on an empty cache (each run its own empty cache folder), then warm; the exact scan.
    Besides wall time, CPU time against the reference's CPU time (``ref_cmd``): on 2 cores shared
    by other work the wall clock mostly measures the queue."""
    mb = path.stat().st_size / 1e6
    cold, warm = [], []
    for _ in range(runs):
        d = tempfile.mkdtemp(prefix="sl-cache-")
        try:
            cold.append(json.loads(wall(CLI + ["index", str(path), "--json"], cli_env(d))[1]))
            warm.append(json.loads(wall(CLI + ["index", str(path), "--json"], cli_env(d))[1]))
        finally:
            shutil.rmtree(d, ignore_errors=True)
    assert all(not c["cached"] for c in cold) and all(w["cached"] for w in warm)
    ix = med([c["seconds"] for c in cold])
    out = [row(f"index {label} (empty cache)", mb / ix, "MB/s", mb / ref, ref_name + " MB/s", ref / ix,
               ">= 0.35x " + ref_name)]
    ex = med([exact_scan_s(path) for _ in range(max(1, runs - 1))])
    out.append(row(f"index {label} exact envelope scan (before)", mb / ex, "MB/s", mb / ref, ref_name + " MB/s",
                   ref / ex, "(reference)"))
    out.append(row(f"index {label} saved (fresh process)", med([w["seconds"] for w in warm]), "s", target="instant"))
    ref_cpu = med([cpu_of(ref_cmd) for _ in range(runs)])
    cpu = med([c["cpuSeconds"] for c in cold])
    out.append(row(f"index {label} (empty cache), CPU time", mb / cpu, "MB/s", mb / max(ref_cpu, 1e-3),
                   ref_name + " MB/s of CPU", max(ref_cpu, 1e-3) / cpu, ">= 0.35x " + ref_name))
    return out


def bench_file(path: Path, runs: int, do_inspect: bool, do_request: bool, page_only: bool = False,
               fmt: str = "v0", index_only: bool = False) -> list:
    size = path.stat().st_size
    mb = size / 1e6
    label = f"{mb:.0f} MB {fmt}"
    out = []
    if page_only:
        cache = tempfile.mkdtemp(prefix="sl-cache-")
        try:
            cat_s(path, 1)
            return bench_page(path, runs, cli_env(cache), cache, label)
        finally:
            shutil.rmtree(cache, ignore_errors=True)
    cat = cat_s(path, runs)
    out += bench_index(path, runs, label, cat, "warm cat", f"cat '{path}' > /dev/null")
    if index_only:
        return out
    cache = tempfile.mkdtemp(prefix="sl-cache-")
    try:
        env = cli_env(cache)
        out += bench_page(path, runs, env, cache, label)
        # fork at the end vs cp && sync
        cps, forks = [], []
        for _i in range(runs):
            d = Path(tempfile.mkdtemp(prefix="sl-fork-", dir=path.parent))
            try:
                cps.append(wall(f"cp '{path}' '{d}/copy' && sync", shell=True)[0])
                os.unlink(d / "copy")
                forks.append(wall(CLI + ["fork", str(path), "--out", str(d / "out"), "--json"], env)[0])
            finally:
                shutil.rmtree(d, ignore_errors=True)
        cp, fk = med(cps), med(forks)
        out.append(row(f"fork at the end {label} (fresh process, index saved)", fk, "s", cp, "cp && sync s",
                       cp / fk, ">= 0.8x cp && sync"))
        if do_inspect and size <= do_inspect:
            t, rss = wall_rss(CLI + ["inspect", str(path), "--json"], env)
            out.append(row(f"inspect {label}", mb / t, "MB/s", target=">= 100 MB/s"))
            out.append(row(f"inspect {label} peak RSS", rss, "MB", target="<= 250 MB"))
            t, rss = wall_rss(CLI + ["messages", str(path), "--json"], env)
            out.append(row(f"messages {label}", mb / t, "MB/s", target="linear time"))
            out.append(row(f"messages {label} peak RSS", rss, "MB", target="<= 250 MB"))
        if do_request:
            from app.log.reader import LogReader
            r = LogReader.open(str(path))
            seq = max(s for s, t in r.build_index().marks() if t == "assistant/message")
            req = CLI + ["request", str(path), "--at", str(seq), "--json"]
            t0, rss0 = wall_rss(req, env)
            out.append(row(f"request near the end {label}, first (checkpoints built)", t0, "s",
                           target="(once per log)"))
            runs_ = [wall_rss(req, env) for _ in range(runs)]
            out.append(row(f"request near the end {label} (fresh process, checkpoints saved)",
                           med([x[0] for x in runs_]), "s", target="<= 1 s"))
            out.append(row(f"request near the end {label} peak RSS", max(rss0, max(x[1] for x in runs_)), "MB",
                           target="<= 250 MB"))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return out


def make_home(root: Path, n: int) -> Path:
    """A Harness home with ``n`` small sessions (20 distinct generated logs, re-identified)."""
    home = root / f"home-{n}"
    done = home / ".complete"
    if done.exists():
        return home
    shutil.rmtree(home, ignore_errors=True)
    from app.store.layout import session_path
    from app.tools.synth import SessionSynth, write_jsonl
    protos = []
    for k in range(20):
        p = root / f"proto-{k}.jsonl"
        if not p.exists():
            write_jsonl(str(p), SessionSynth(seed=100 + k), turns=2 + k % 4)
        head, rest = p.read_bytes().split(b"\n", 1)
        protos.append((json.loads(head), rest))
    for i in range(n):
        hdr, rest = protos[i % len(protos)]
        sid = f"session-{i:05d}-{hdr['id'][:8]}"
        h = dict(hdr, id=sid, cwd=f"/home/dev/project-{i % 37}")
        path = Path(session_path(str(home / "sessions"), sid, h["cwd"], False))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(json.dumps(h, separators=(",", ":")).encode() + b"\n" + rest)
    done.write_text("ok")
    return home


def bench_list(home: Path, n: int, runs: int) -> list:
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
    return [row(f"list {n}-session home (first run)", first[0], "s", ref, "find + head -1 s", ref / first[0],
                "<= 1 s"),
            row(f"list {n}-session home ({titled} titled)", t, "s", ref, "find + head -1 s", ref / t, "<= 1 s")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100MB,1GB")
    ap.add_argument("--sessions", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--data", default=str(REPO / "bench" / "data"))
    ap.add_argument("--inspect", default="0", help="also inspect logs up to this size (e.g. 100MB)")
    ap.add_argument("--request", action="store_true")
    ap.add_argument("--page-only", action="store_true", help="only the page rows (and no session list)")
    ap.add_argument("--formats", default="v0", help="generated format versions, e.g. v0,v4")
    ap.add_argument("--zstd", action="store_true", help="also index the zstd-framed file (reference zstd -dc)")
    ap.add_argument("--index-only", action="store_true", help="only the index rows (and no session list)")
    a = ap.parse_args()
    data = Path(a.data)
    rows = []
    print("load:", load(), flush=True)
    for s in [x for x in a.sizes.split(",") if x]:
        for fmt in [f for f in a.formats.split(",") if f]:
            name = f"session-{s}.jsonl" if fmt == "v0" else f"session-{s}-{fmt}.jsonl"
            p = ensure(data / name, parse_size(s), False, int(fmt.lstrip("v")))
            rows += bench_file(p, a.runs, parse_size(a.inspect) if a.inspect != "0" else 0, a.request, a.page_only,
                               fmt, a.index_only)
            if a.zstd:
                z = ensure(data / (name + ".zstd"), parse_size(s), True, int(fmt.lstrip("v")))
                rows += bench_index(z, a.runs, f"{z.stat().st_size / 1e6:.0f} MB {fmt} zstd", zstd_s(z, a.runs),
                                    "zstd -dc", f"zstd -qdc '{z}' > /dev/null")
    if a.sessions and not a.page_only and not a.index_only:
        rows += bench_list(make_home(data, a.sessions), a.sessions, a.runs)
    print("load:", load(), flush=True)
    print()
    print(f"{'row':58} {'value':>10} {'unit':6} {'reference':>10} {'ratio':>7}  target")
    for r in rows:
        ref = f"{r['reference']:10.3f}" if "reference" in r else " " * 10
        ratio = f"{r['ratio']:7.3f}" if "ratio" in r else " " * 7
        print(f"{r['row']:58} {r['value']:10.3f} {r['unit']:6} {ref} {ratio}  {r['target']}")


if __name__ == "__main__":
    main()
