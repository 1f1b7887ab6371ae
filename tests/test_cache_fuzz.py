"""A campaign over the caches (issue 28, item 8): mutants of a sound ``.idx`` file (flips, truncations,
garbage, forged marks re-signed, meta of other types) and hostile cache files (links, FIFOs, huge
files): every answer equals the one built from the log, and a fork equals an uncached fork.  ``make
fuzz`` (bench/fuzz.py) runs more of it."""
from __future__ import annotations

import os
import random
import time
from pathlib import Path

from app.log.fold.fork import ForkError
from app.log.index.reader import LogReader
from app.store import indexcache
from app.store.forking import fork
from app.store.indexcache import cached_checkpoints, cached_index
from app.store.surface_cache import cached_surface
from app.tools import hostile
from app.tools.synth import SessionSynth, write_jsonl


def _same(a, b) -> bool:
    return (a.events, a.last, a.contiguous_through, list(a.mark_seq), list(a.mark_code)) == \
        (b.events, b.last, b.contiguous_through, list(b.mark_seq), list(b.mark_code))


def _fork_result(path: Path, at: int, out: Path) -> tuple:
    try:
        res = fork(LogReader.open(str(path)), at, out_store=str(out), child_id="c")
    except ForkError as e:
        return ("refused", e.code)
    r = LogReader.open(res["child"])
    return ("child", res["seedLength"], [(e.seq, e.type) for e in r.iter_events()][:res["seedLength"]])


def run_cache_campaign(tmp: Path, n_logs: int, n_mutants: int, seed: int = 28) -> dict:
    """Mutants of the caches of ``n_logs`` generated logs; -> counts (asserts on the way)."""
    rng = random.Random(seed)
    t0, runs = time.monotonic(), 0
    for j in range(n_logs):
        p = tmp / f"log{j}" / "session.jsonl"
        write_jsonl(str(p), SessionSynth(seed=seed + j), target_bytes=rng.choice([150_000, 400_000]))
        r = LogReader.open(str(p))
        fresh = LogReader.open(str(p)).build_index()
        ends = [s for s, t in fresh.marks(-1, fresh.last) if t == "turn/end"]
        at = ends[rng.randrange(len(ends) // 2, len(ends))]
        os.environ["SESSION_LENS_INDEX_CACHE"] = "0"
        try:
            want_fork = _fork_result(p, at, tmp / f"want{j}")
        finally:
            del os.environ["SESSION_LENS_INDEX_CACHE"]
        cached_index(r), cached_checkpoints(r), cached_surface(r)
        f = indexcache.cache_file(indexcache.source_identity(r.source), indexcache.cache_root())
        sound = f.read_bytes()
        for name, blob in hostile.cache_mutants(sound, seed + j, n_mutants):
            f.write_bytes(blob)
            idx, _status = cached_index(LogReader.open(str(p)))
            # (a mutant signed with the key, as by someone who can read it, is a hint the fork checks)
            assert _same(idx, fresh) or name.startswith("forged"), name
            f.write_bytes(blob)
            got = _fork_result(p, at, tmp / f"got{j}-{name}")
            assert got == want_fork, name
            runs += 2
        for kind in ("dev-zero-link", "fifo", "huge-sparse", "symlink-to-real"):
            for suffix in (".idx", ".folds", ".surface"):
                g = f.with_suffix(suffix)
                if not g.exists() and not g.is_symlink():
                    cached_index(r), cached_checkpoints(r), cached_surface(r)
                hostile.hostile_cache_file(str(g), kind)
                fn = {".idx": cached_index, ".folds": cached_checkpoints, ".surface": cached_surface}[suffix]
                assert fn(LogReader.open(str(p)))[1] == "built", (kind, suffix)
                runs += 1
    return {"logs": n_logs, "runs": runs, "seconds": round(time.monotonic() - t0, 1)}


def test_cache_campaign(tmp_path):
    stats = run_cache_campaign(tmp_path, n_logs=2, n_mutants=10)
    assert stats["runs"] >= 2 * (2 * 8 + 12)
