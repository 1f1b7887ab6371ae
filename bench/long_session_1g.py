"""Issue 29's table "Numbers that hold on the big log", measured headless on a generated v4 log with compactions
(the project's own generator, app/tools/synth.py), each figure beside its reference measured in the same run.

    python bench/long_session_1g.py [--size MB] [--dir /tmp/sl-1g] [--runs N] [--only ROW,ROW] [--gen-only]
                                    [--code CHECKOUT] [--old CHECKOUT]

The log (``session-<MB>MB.v4.jsonl``) and its zstd form (``.jsonl.zstd``: frame 1 the header line, one frame per
write batch, as dsh writes it) are generated once, together, and kept under ``--dir``.  Every measured operation
runs in a fresh child process (``python -c``) with its own empty cache folder (``SESSION_LENS_CACHE_DIR``) unless
the row says "after the pass"; the child reports the operation's wall time (start-up and imports left out) and
its peak RSS.  Figures are medians of ``--runs``; the machine load is printed with each row.

Rows (``--only``): find, zstd, page, pass, f8, request, errors, export.
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

PY = sys.executable
CODE = [str(REPO)]               # the checkout whose code the children run (--code: another one, e.g. main's)
OLD: list[str] = []              # (--old) a checkout the find row also runs, each child right after the new one
ROWS = ("find", "zstd", "page", "pass", "f8", "request", "errors", "export")


# --------------------------------------------------------------------------- the log, generated once

def generate(folder: str, mb: float) -> tuple[str, str]:
    """(jsonl, zstd) of ~``mb`` MB under ``folder`` (kept: a second run reuses them)."""
    from app.log.source.zstdframes import encode_frame
    from app.tools.synth import SessionSynth, batches
    os.makedirs(folder, exist_ok=True)
    base = os.path.join(folder, f"session-{int(mb)}MB.v4")
    jsonl, zst, done = base + ".jsonl", base + ".jsonl.zstd", base + ".done"
    if os.path.exists(done):
        return jsonl, zst
    t = time.perf_counter()
    stats: dict = {}
    synth = SessionSynth(seed=29, version=4, context_window=24_000)      # compactions, as real dsh writes
    with open(jsonl + ".tmp", "wb") as fj, open(zst + ".tmp", "wb") as fz:
        plain: list[bytes] = []
        frames: list[bytes] = []
        for lines in batches(synth, target_bytes=int(mb * 1e6), stats=stats):
            text = b"".join(lines)
            plain.append(text)
            frames.append(encode_frame(text))
            if len(plain) >= 512:
                fj.write(b"".join(plain))
                fz.write(b"".join(frames))
                plain, frames = [], []
        fj.write(b"".join(plain))
        fz.write(b"".join(frames))
    os.replace(jsonl + ".tmp", jsonl)
    os.replace(zst + ".tmp", zst)
    stats.update(seconds=round(time.perf_counter() - t, 1), zstdBytes=os.path.getsize(zst))
    Path(done).write_text(json.dumps(stats))
    return jsonl, zst


# --------------------------------------------------------------------------- the child: one operation, timed

_CHILD = r"""
import bisect, json, os, resource, sys, time
sys.path.insert(0, sys.argv[1])
mode, path, arg = sys.argv[2], sys.argv[3], sys.argv[4]
from app.store.faces import open_reader
out = {}
if mode == "find":
    from app.log.query.find import FindOptions, find
    r = open_reader(path)
    t, c = time.perf_counter(), time.process_time()
    n, first = 0, None
    for h in find(r, FindOptions(arg)):
        if first is None:
            first = time.perf_counter() - t
        n += 1
    out = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "first": first, "hits": n}
elif mode == "index":
    r = open_reader(path)
    t, c = time.perf_counter(), time.process_time()
    idx = r.build_index()
    out = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "events": idx.events}
elif mode == "page":
    import contextlib, io
    from app.cli.main import main
    t, c = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(io.StringIO()) as got:
        rc = main(["page", path, "--json", *arg.split()])
    out = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c, "rc": rc,
           "surface": json.loads(got.getvalue()).get("surfaceStatus", "ready (no field)")}
elif mode == "tailpage":
    t = time.perf_counter()
    r = open_reader(path)
    p = r.tail_page(50)
    out = {"wall": time.perf_counter() - t, "events": len(p.events)}
elif mode == "pass":
    from app.store.indexcache import cached_index
    from app.store.ahead_cache import cached_ahead
    r = open_reader(path)
    t = time.perf_counter()
    cached_index(r)
    t1, c = time.perf_counter(), time.process_time()
    ol, st = cached_ahead(r)
    out = {"index": t1 - t, "wall": time.perf_counter() - t1, "cpu": time.process_time() - c, "status": st,
           "errors": sum(len(x.error_seqs) for x in ol.turns)}
else:                                      # after the pass: the caches are warm
    from app.store.indexcache import cached_index
    from app.store.ahead_cache import cached_ahead
    t = time.perf_counter()
    r = open_reader(path)
    cached_index(r)
    ol, st = cached_ahead(r)
    out["load"] = time.perf_counter() - t
    errs = sorted(s for x in ol.turns for s in x.error_seqs)
    if mode == "f8":
        times = []
        last = r.index.last
        for k in range(int(arg)):
            at = (k * 7919 * 131) % max(last, 1)
            t = time.perf_counter()
            i = bisect.bisect_right(errs, at)
            seq = errs[i % len(errs)]
            page = r.page_before(seq + 1, 50)
            times.append(time.perf_counter() - t)
            assert any(e.seq == seq for e in page.events), seq
        times.sort()
        out.update(wall=times[len(times) // 2], worst=times[-1], errors=len(errs))
    elif mode == "request":
        from app.log.fold import checkpoints
        from app.store.indexcache import cached_checkpoints
        cps = cached_checkpoints(r)[0]
        t = time.perf_counter()
        obj = checkpoints.request_at(r, int(arg), cps)
        out.update(wall=time.perf_counter() - t, messages=len(obj.get("messages") or ()))
    elif mode == "errors":
        from app.ui.history.sparse import sparse_page
        where = {s: w for x in ol.turns for s, w in zip(x.error_seqs, x.error_rows)}
        r.tail_page(50)
        t = time.perf_counter()
        page = sparse_page(r, errs, where=where)
        out.update(wall=time.perf_counter() - t, errors=len(errs))
    elif mode == "export":
        from app.store.export import export
        t, c = time.perf_counter(), time.process_time()
        export(r, "html", arg, redact=True)
        out.update(wall=time.perf_counter() - t, cpu=time.process_time() - c, out=os.path.getsize(arg))
out["rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps(out))
"""


def child(mode: str, path: str, arg: str = "", cache: str | None = None, code: str | None = None) -> dict:
    env = dict(os.environ)
    code = code or CODE[0]
    with tempfile.TemporaryDirectory(prefix="sl-cache-") as fresh:      # (never beside the shared logs)
        env["SESSION_LENS_CACHE_DIR"] = cache or fresh
        got = subprocess.run([PY, "-c", _CHILD, code, mode, path, arg], capture_output=True, text=True,
                             env=env, cwd=code)
    if got.returncode:
        raise RuntimeError(f"{mode} {arg}: {got.stderr[-2000:]}")
    return json.loads(got.stdout.strip().splitlines()[-1])


def timed(argv: list[str], out: str = os.devnull) -> float:
    return timed_cpu(argv, out)[0]


def timed_cpu(argv: list[str], out: str = os.devnull) -> tuple[float, float]:
    """(wall, user+system CPU) of a command."""
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with open(out, "wb") as f:
        subprocess.run(argv, stdout=f, check=False)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t, ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime


def med(xs: list[float]) -> float:
    return statistics.median(xs)


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def line(name: str, got: float, ref: float, ref_name: str, target: str, unit: str = "s") -> None:
    ratio = got / ref if ref else float("inf")
    print(f"| {name} | {got:.3f} {unit} | {ref_name} {ref:.3f} {unit} | {ratio:.1f}x | {target} | {load()} |",
          flush=True)


# --------------------------------------------------------------------------- the rows

def words(path: str) -> dict[str, str]:
    """rare / common / non-ASCII / quoted words of the log: the rarest candidate that occurs at all; the
    generator's only non-ASCII text is the em dash (é, ✓, → are in its pools but never drawn)."""
    def count(w: str) -> int:
        got = subprocess.run(["rg", "-c", "-F", w, path], capture_output=True, text=True)
        return int(got.stdout.strip() or 0)
    rare = min((w for w in ("subagent", "summarize", "step by step", "verbatim", "UnicodeDecodeError")
                if count(w) > 0), key=count)
    return {"rare": rare, "common": "the", "non-ASCII": "—", "quote": '"tests'}


def row_find(path: str, runs: int) -> None:
    for kind, w in words(path).items():
        got, old = [], []
        for _ in range(runs):            # (--old: the other checkout's child right after each, the same load)
            got.append(child("find", path, w))
            if OLD:
                old.append(child("find", path, w, code=OLD[0]))
        rgs = [timed_cpu(["rg", "-c", "-F", w, path]) for _ in range(runs)]
        rg, rg_cpu = med([x[0] for x in rgs]), med([x[1] for x in rgs])
        rgi = med([timed(["rg", "-c", "-i", "-F", w, path]) for _ in range(runs)])
        g, cpu = med([x["wall"] for x in got]), med([x["cpu"] for x in got])
        first = med([x["first"] if x["first"] is not None else x["wall"] for x in got])
        line(f"find {kind} {w!r} ({got[0]['hits']:,} hits)", g, rg, "rg -c", "<= 5x")
        print(f"|   (CPU {cpu:.3f} s against rg's {rg_cpu:.3f} s: {cpu / max(rg_cpu, 1e-3):.1f}x; rg -c -i {rgi:.3f} s; "
              f"first hit {first:.3f} s, target <= 1 s; peak RSS {med([x['rss'] for x in got]) / 1e6:.0f} MB) |",
              flush=True)
        if old:
            og, ocpu = med([x["wall"] for x in old]), med([x["cpu"] for x in old])
            print(f"|   (--old {OLD[0]}: {og:.3f} s, {og / rg:.1f}x rg; CPU {ocpu:.3f} s, "
                  f"{ocpu / max(rg_cpu, 1e-3):.1f}x rg's; {old[0]['hits']:,} hits; new/old wall {g / og:.2f}, "
                  f"CPU {cpu / ocpu:.2f}) |", flush=True)


def row_zstd(zst: str, jsonl: str, runs: int) -> None:
    got = [child("index", zst) for _ in range(runs)]
    refs = [timed_cpu(["zstd", "-dcq", zst]) for _ in range(runs)]
    plain = med([child("index", jsonl)["wall"] for _ in range(runs)])
    cpu, ref_cpu = med([x["cpu"] for x in got]), med([x[1] for x in refs])
    line("seq index of the .zstd", med([x["wall"] for x in got]), med([x[0] for x in refs]), "zstd -dc", "<= 2x")
    print(f"|   (CPU {cpu:.3f} s against zstd's {ref_cpu:.3f} s: {cpu / max(ref_cpu, 1e-3):.1f}x; "
          f"the JSONL's seq index {plain:.3f} s) |", flush=True)


def row_page(jsonl: str, zst: str, runs: int) -> None:
    for p in (jsonl, zst):
        got = [child("page", p) for _ in range(runs)]
        api = med([child("tailpage", p)["wall"] for _ in range(runs)])
        warm_cache = tempfile.mkdtemp(prefix="sl-cache-")      # (never beside the shared logs)
        child("pass", p, cache=warm_cache)
        warm = med([child("page", p, cache=warm_cache)["wall"] for _ in range(runs)])
        shutil.rmtree(warm_cache, ignore_errors=True)
        line(f"page (tail) fresh cache, {os.path.basename(p)}", med([x["wall"] for x in got]), warm,
             "warm cache", "<= 2 s")
        print(f"|   (CPU {med([x['cpu'] for x in got]):.3f} s; reader tail_page alone {api:.3f} s; "
              f"peak RSS {med([x['rss'] for x in got]) / 1e6:.0f} MB; row statuses {got[0]['surface']}) |", flush=True)
        try:                   # (--wait: the statuses folded, as the page did before it could leave them pending)
            waited = [child("page", p, "--wait") for _ in range(runs)]
        except RuntimeError:   # (--code: a checkout without --wait, whose page always waits)
            waited = got
        print(f"|   (page --wait, fresh cache: {med([x['wall'] for x in waited]):.3f} s wall, "
              f"{med([x['cpu'] for x in waited]):.3f} s CPU; row statuses {waited[0]['surface']}) |", flush=True)


def row_after_pass(jsonl: str, runs: int, only: set[str]) -> None:
    cache = tempfile.mkdtemp(prefix="sl-cache-")            # (never beside the shared logs)
    try:
        passes = [child("pass", jsonl, cache=cache if k == 0 else None) for k in range(runs)]
        if "pass" in only:
            idx = [child("index", jsonl) for _ in range(runs)]
            line("background pass (one read)", med([x["wall"] for x in passes]), med([x["wall"] for x in idx]),
                 "seq index", "<= 2x")
            print(f"|   (CPU {med([x['cpu'] for x in passes]):.3f} s against the seq index's "
                  f"{med([x['cpu'] for x in idx]):.3f} s) |", flush=True)
        if "f8" in only:
            got = [child("f8", jsonl, "21", cache=cache) for _ in range(runs)]
            print(f"| F8 after the pass (median of 21 jumps; {got[0]['errors']} errors) | "
                  f"{med([x['wall'] for x in got]):.3f} s | worst {max(x['worst'] for x in got):.3f} s; "
                  f"cached load {med([x['load'] for x in got]):.3f} s | | <= 0.1 s | {load()} |", flush=True)
        if "request" in only:
            for seq in request_seqs(jsonl):
                got = [child("request", jsonl, str(seq), cache=cache) for _ in range(runs)]
                print(f"| request at seq {seq} after the pass | {med([x['wall'] for x in got]):.3f} s | "
                      f"peak RSS {max(x['rss'] for x in got) / 1e6:.0f} MB; cached load "
                      f"{med([x['load'] for x in got]):.3f} s | | <= 1 s, <= 250 MB | {load()} |", flush=True)
        if "errors" in only:
            got = [child("errors", jsonl, cache=cache) for _ in range(runs)]
            print(f"| Errors only, the whole log ({got[0]['errors']} errors) | {med([x['wall'] for x in got]):.3f} s "
                  f"| | | <= 0.3 s | {load()} |", flush=True)
        if "export" in only:
            got = []
            for k in range(runs):                   # (an export never overwrites: a new file each run)
                out = os.path.join(cache, f"out-{k}.html")
                got.append(child("export", jsonl, out, cache=cache))
                for f in (out, out + ".sha256", out + ".redaction.json"):
                    if os.path.exists(f):
                        os.unlink(f)
            cat = med([timed(["cat", jsonl]) for _ in range(runs)])
            mb = os.path.getsize(jsonl) / 1e6
            w = med([x["wall"] for x in got])
            print(f"| redacted HTML export | {mb / w:.1f} MB/s ({w:.1f} s) | cat {mb / cat:.0f} MB/s | "
                  f"{w / cat:.0f}x the time | >= 20 MB/s | {load()} |", flush=True)
            c = med([x["cpu"] for x in got])
            print(f"|   (CPU {c:.1f} s: {mb / c:.1f} MB/s; peak RSS {max(x['rss'] for x in got) / 1e6:.0f} MB, the "
                  f"index and outline caches loaded before the export included) |", flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def request_seqs(path: str, n: int = 3) -> list[int]:
    """Seqs of ``assistant/message`` rows at ~1/6, 1/2 and 5/6 of the log (a request answers at its message)."""
    size = os.path.getsize(path)
    out = []
    with open(path, "rb") as f:
        for k in range(n):
            f.seek(size * (2 * k + 1) // (2 * n))
            f.readline()
            for raw in f:
                if b'"assistant/message"' in raw:
                    row = json.loads(raw)
                    if isinstance(row, dict) and isinstance(row.get("seq"), int):
                        out.append(row["seq"])
                        break
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=float, default=1000.0, help="MB of generated log (default 1000)")
    ap.add_argument("--dir", default="/tmp/sl-1g", help="where the generated logs are kept")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default=",".join(ROWS))
    ap.add_argument("--gen-only", action="store_true")
    ap.add_argument("--code", help="run the measured operations with another checkout's code (its native module built)")
    ap.add_argument("--old", help="the find row: also run this checkout's code, alternating with the new (same load)")
    a = ap.parse_args(argv)
    if a.code:
        CODE[0] = os.path.abspath(a.code)
    if a.old:
        OLD.append(os.path.abspath(a.old))
    t = time.perf_counter()
    jsonl, zst = generate(a.dir, a.size)
    print(f"log {jsonl} {os.path.getsize(jsonl) / 1e6:.0f} MB, zstd {os.path.getsize(zst) / 1e6:.0f} MB "
          f"({time.perf_counter() - t:.1f} s)", flush=True)
    if a.gen_only:
        return 0
    only = set(a.only.split(","))
    print(f"medians of {a.runs}; {load()} at the start; each operation in a fresh child, its own wall time; "
          f"code: {CODE[0]}")
    print("| operation | figure | reference (same run) | ratio | target | load |\n|---|---|---|---|---|---|")
    if "find" in only:
        row_find(jsonl, a.runs)
    if "zstd" in only:
        row_zstd(zst, jsonl, a.runs)
    if "page" in only:
        row_page(jsonl, zst, a.runs)
    if only & {"pass", "f8", "request", "errors", "export"}:
        row_after_pass(jsonl, a.runs, only)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
