"""*Errors only* on a long log (issue 29: <= 300 ms on the whole log): what the window's worker does once the
outline says where each error row is stored (:func:`app.ui.history.sparse.sparse_job`), beside references
measured in the same run.

    python bench/errors_only_bench.py [--size MB] [--runs N] [--rounds K] [--log PATH] [--before CHECKOUT] [--exact]
                                      [--no-pages]

Figures (wall and CPU seconds, medians of ``--runs``; each code measured in a fresh child process with the
window's GC settings, ``app.ui.app.configure_runtime``):

* *first errors on screen*: the newest errors' page handed to the window (``job.partial``; code without it:
  the whole page);
* *the whole errors' page*: every error read, decoded and built into rows (the worker's whole body);
* *rows read and decoded*: :func:`~app.ui.history.sparse.sparse_page` alone.

``--rounds K``: K children of each code, alternated (this code, the other, ...), the figures their medians
(on a shared machine one child can be slowed down as a whole).

References: ``--before CHECKOUT`` runs the same child with another checkout's code (e.g. ``git archive COMMIT | tar
-x -C DIR`` and ``packaging/build_native.py`` there); ``--exact``: this code with its rows read the exact way
(``sparse.LEAN`` off: every payload decoded when the page is built, as before the lazy rows), alternated too;
unless ``--no-pages``, what the window did before the outline's list: older pages read from the tail down to
the oldest error.

The log is generated (v4 with compactions, many errors, some close together) unless ``--log``; the seq index
and the outline are built first and cached (``SESSION_LENS_CACHE_DIR``; the background pass, not timed here).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = 50


def _code(path: str) -> None:
    sys.path.insert(0, path)


def measure(path: str, runs: int, exact: bool = False) -> dict:
    """The child: medians of the three figures with this process's code (``sys.path[0]``; ``exact``: its rows
    read the exact way)."""
    import gc
    from app.store.faces import open_reader
    from app.store.indexcache import cached_index
    from app.store.outline_cache import cached_outline
    from app.ui.history import sparse
    if exact:
        sparse.LEAN = False
    gc.set_threshold(2_000, 5, 50)              # (the window's: app.ui.app.configure_runtime)
    r = open_reader(path)
    cached_index(r)
    ol, _status = cached_outline(r)
    seqs = sorted(s for t in ol.turns for s in t.error_seqs)
    where = {s: w for t in ol.turns for s, w in zip(t.error_seqs, t.error_rows)}
    r.tail_page(PAGE)
    gc.freeze()                                 # (the window freezes its loaded pages: workers.freeze_heap)
    first: list[float] = []

    class Job:
        class partial:                          # (the Qt job's partial signal)
            @staticmethod
            def emit(_lp: object) -> None:
                first.append(time.perf_counter())

        @staticmethod
        def check() -> None:
            return None
    out: dict[str, list[float]] = {k: [] for k in ("first", "job", "job_cpu", "page", "page_cpu")}
    for _ in range(runs):
        first.clear()
        t, c = time.perf_counter(), time.process_time()
        sparse.sparse_job(Job(), r, seqs, where, False, False)
        end, cpu = time.perf_counter(), time.process_time() - c
        out["first"].append((first[0] if first else end) - t)
        out["job"].append(end - t)
        out["job_cpu"].append(cpu)
        t, c = time.perf_counter(), time.process_time()
        sparse.sparse_page(r, seqs, where=where)
        out["page"].append(time.perf_counter() - t)
        out["page_cpu"].append(time.process_time() - c)
        gc.collect()
    res: dict = {k: statistics.median(v) for k, v in out.items()}
    res.update(errors=len(seqs), events=ol.events, load=os.getloadavg()[0])
    return res


def child(code: str, path: str, runs: int, exact: bool = False) -> dict:
    got = subprocess.run([sys.executable, __file__, "--measure", "--code", code, "--log", path, "--runs", str(runs)]
                         + (["--exact"] if exact else []), capture_output=True, text=True, cwd=code)
    if got.returncode:
        raise RuntimeError(got.stderr[-2000:])
    return json.loads(got.stdout.strip().splitlines()[-1])


def _medians(res: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in res) if isinstance(res[0][k], float) else res[0][k] for k in res[0]}


def pages_down(path: str, oldest: int) -> tuple[float, int]:
    from app.store.faces import open_reader
    t = time.perf_counter()
    r = open_reader(path)
    r.build_index()
    p = r.tail_page(PAGE)
    n = 1
    while p.has_more and (p.base_seq is None or p.base_seq > oldest):
        p = r.page_before(p, PAGE)
        n += 1
    return time.perf_counter() - t, n


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--size", type=float, default=20.0, help="MB of generated log (default 20)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=1, help="children of each code, alternated (medians)")
    ap.add_argument("--log")
    ap.add_argument("--before", help="another checkout: the same figures with its code, in the same run")
    ap.add_argument("--exact", action="store_true", help="this code with the rows read the exact way (sparse.LEAN off)")
    ap.add_argument("--no-pages", action="store_true", help="leave out the pages-down reference")
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--code", default=str(REPO), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    _code(a.code)
    if a.measure:
        print(json.dumps(measure(a.log, a.runs, a.exact)))
        return 0
    from app.store.faces import open_reader
    from app.store.indexcache import cached_index
    from app.store.outline_cache import cached_outline
    from app.tools.synth import SessionSynth, write_jsonl
    with tempfile.TemporaryDirectory() as tmp:
        if not a.log:
            os.environ["SESSION_LENS_CACHE_DIR"] = os.path.join(tmp, "cache")
        path = a.log or os.path.join(tmp, "session.jsonl")
        if not a.log:
            write_jsonl(path, SessionSynth(seed=29, version=4, context_window=24_000, p_tool_error=0.1),
                        target_bytes=int(a.size * 1e6))
        r = open_reader(path)
        cached_index(r)
        ol, status = cached_outline(r)            # (the background pass's product; a hit with --log once built)
        oldest = min((s for t in ol.turns for s in t.error_seqs), default=None)
        if oldest is None:
            print("no errors in the log")
            return 1
        nows, refs, exacts = [], [], []
        for _ in range(max(1, a.rounds)):
            nows.append(child(str(REPO), path, a.runs))
            if a.before:
                refs.append(child(a.before, path, a.runs))
            if a.exact:
                exacts.append(child(str(REPO), path, a.runs, exact=True))
        now = _medians(nows)
        ref = _medians(refs) if refs else None
        ex = _medians(exacts) if exacts else None
        print(f"log {os.path.getsize(path) / 1e6:.1f} MB, {now['events']:,} events, {now['errors']:,} errors "
              f"(outline {status}); medians of {a.runs} x {a.rounds} children; wall s (CPU s); load {os.getloadavg()[0]:.1f} at the end")
        for key, what in (("first", "first errors on screen"), ("job", "the whole errors' page"),
                          ("page", "rows read and decoded")):
            cpu = f" ({now[key + '_cpu']:.3f})" if key + "_cpu" in now else ""
            line = f"{what:<28} {now[key]:7.3f}{cpu:<9}"
            if ref is not None:
                rcpu = f" ({ref[key + '_cpu']:.3f})" if key + "_cpu" in ref else ""
                line += f"  before {ref[key]:7.3f}{rcpu:<9} ratio {ref[key] / max(now[key], 1e-6):5.1f}x"
            if ex is not None:
                line += f"  exact {ex[key]:7.3f}" + (f" ({ex[key + '_cpu']:.3f})" if key + "_cpu" in ex else "") + \
                    f" ratio {ex[key] / max(now[key], 1e-6):5.1f}x"
            print(line + ("   target <= 0.3 s" if key != "page" else ""))
        print(f"child load: {now['load']:.1f}" + (f", before's {ref['load']:.1f}" if ref else "") +
              (f", exact's {ex['load']:.1f}" if ex else ""))
        if not a.no_pages:
            w, n = pages_down(path, oldest)
            print(f"before the outline's list: pages down to the oldest error ({n} pages of {PAGE} messages, seq "
                  f"index included) {w:7.3f} s; ratio {w / max(now['job'], 1e-6):.0f}x the whole errors' page")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
