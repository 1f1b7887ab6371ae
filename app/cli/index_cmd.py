"""``session-lens index PATH [--all]``: build (or reuse) the persistent seq index of a log; with ``--all``
also the work the window does ahead: the fold checkpoints, the surface index and the outline (turns,
errors, problems) of the whole log, all cached beside the index (the window then has them at once)."""
from __future__ import annotations

import time
from typing import Any

from .main import COMMANDS, cfg_session_path, session_reader, emit


def _cfg_index(p):
    cfg_session_path(p)
    p.add_argument("--all", action="store_true",
                   help="also the fold checkpoints, the surface index and the outline (turns, errors, problems)")


def _ahead(r, progress) -> dict[str, Any]:
    """Checkpoints, surface index and outline of ``r`` (the missing ones built by one read of the log):
    status of each, the outline's counts and the seconds of the whole."""
    from ..store.ahead_cache import cached_ahead
    t = time.perf_counter()
    ol, st = cached_ahead(r, progress)
    errors = sum(len(x.error_seqs) for x in ol.turns)
    return {"checkpoints": {"status": st["checkpoints"]}, "surface": {"status": st["surface"]},
            "outline": {"status": st["outline"], "turns": len(ol.turns), "errors": errors, "problems": len(ol.problems)},
            "pass": st["pass"], "seconds": round(time.perf_counter() - t, 6)}


def _run_index(args):
    from ..store.indexcache import index_summary
    from .progress import cli_progress
    r = session_reader(args)
    with cli_progress(args, "index") as progress:
        obj: dict[str, Any] = dict(index_summary(r, progress))
    if args.all:
        with cli_progress(args, "checkpoints, surface index, outline") as progress:
            obj["ahead"] = _ahead(r, progress)

    def text():
        how = {"hit": "cached", "extended": "cached, extended", "built": "built and cached",
               "uncached": "built (not cached)"}[obj["status"]]
        line = (f"{obj['events']} events, {obj['turns']} turns, {obj['bytes']} bytes: {how} "
                f"in {obj['seconds']:.3f} s")
        a = obj.get("ahead")
        if a:
            o = a["outline"]
            line += (f"\ncheckpoints {a['checkpoints']['status']}, surface index {a['surface']['status']}, "
                     f"outline {o['status']}: {o['turns']} turns, {o['errors']} errors, {o['problems']} problems; "
                     f"{a['seconds']:.3f} s (one read of the log: {a['pass']:.3f} s)")
        return line
    emit(args, obj, text)


COMMANDS["index"] = ("build or reuse the persistent seq index of a session (user cache folder); --all: also "
                     "the checkpoints, surface index and outline", _cfg_index, _run_index)
